// GraphBuilder: shape inference, broadcasting, tile-shape scopes and error messages.
#include <catch2/catch.hpp>

#include <cmath>

#include "ptoc/ir/GraphBuilder.h"
#include "ptoc/ir/Printer.h"
#include "ptoc/ir/TileShape.h"
#include "ptoc/ir/Verifier.h"
#include "ptoc/target/DeviceSpec.h"

using namespace ptoc::ir;

namespace {

std::string msg(const absl::Status &s) { return std::string(s.message()); }

} // namespace

TEST_CASE("builder builds softmax with inferred shapes and scoped tiles", "[builder]") {
  Context ctx;
  Module m(ctx);
  GraphBuilder b(m);
  auto f = b.beginFunc("softmax", {ctx.tensorType(DType::F32, {256, 4096})}, {"x"});
  REQUIRE(f.ok());
  b.setVecTile({1, 4096});
  Value *x = b.arg(0);
  Value *mx = *b.reduce(OpCode::Amax, x, {-1}, /*keepdim=*/true);
  CHECK(mx->type() == ctx.tensorType(DType::F32, {256, 1}));
  Value *e = *b.unary(OpCode::Exp, *b.binary(OpCode::Sub, x, mx));
  Value *s = *b.reduce(OpCode::Sum, e, {1}, true);
  Value *y = *b.binary(OpCode::Div, e, s);
  CHECK(y->type() == x->type());
  REQUIRE(b.endFunc({y}).ok());
  REQUIRE(succeeded(verify(m)));
  std::string text = toString(m);
  CHECK(text.find("%0 = amax %x {axes = [1], keepdim = true, vec_tile = [1, 4096]} : "
                  "tensor<256x1xf32>") != std::string::npos);
  CHECK(text.find("return %4") != std::string::npos);
  CHECK((*f)->resultTypes().size() == 1);
}

TEST_CASE("builder infers every op class", "[builder]") {
  Context ctx;
  Module m(ctx);
  GraphBuilder b(m);
  auto f32 = [&](std::initializer_list<int64_t> s) { return ctx.tensorType(DType::F32, s); };
  REQUIRE(b.beginFunc("ops", {f32({2, 3, 4}), f32({4, 5}), f32({3, 1})}).ok());
  Value *x = b.arg(0), *w = b.arg(1), *c = b.arg(2);

  SECTION("matmul with batch broadcast and transposes") {
    // Options set field by field: designated initializers that leave fields out make
    // GCC warn (-Wmissing-field-initializers) although every field has a default.
    MatmulOptions transposeA, transposeB, transposeBToF32;
    transposeA.transposeA = true;
    transposeB.transposeB = true;
    transposeBToF32.transposeB = true;
    transposeBToF32.outDType = DType::F32;
    CHECK((*b.matmul(x, w))->type() == f32({2, 3, 5}));
    CHECK((*b.matmul(w, w, transposeA))->type() == f32({5, 5}));
    CHECK((*b.matmul(w, w, transposeB))->type() == f32({4, 4}));
    auto bad = b.matmul(w, w);
    REQUIRE_FALSE(bad.ok());
    CHECK_THAT(msg(bad.status()), Catch::Contains("'matmul' op contraction sizes differ"));
    Value *h = *b.cast(w, DType::F16);
    CHECK((*b.matmul(h, h, transposeBToF32))->type() == f32({4, 4}));
  }
  SECTION("broadcasting binary ops") {
    CHECK((*b.binary(OpCode::Add, x, c))->type() == f32({2, 3, 4}));
    auto bad = b.binary(OpCode::Mul, x, w);
    REQUIRE_FALSE(bad.ok());
    CHECK_THAT(msg(bad.status()), Catch::Contains("cannot broadcast tensor<2x3x4xf32> with "
                                                  "tensor<4x5xf32>"));
    auto mixed = b.binary(OpCode::Add, x, *b.cast(x, DType::F16));
    REQUIRE_FALSE(mixed.ok());
    CHECK_THAT(msg(mixed.status()), Catch::Contains("insert a cast"));
  }
  SECTION("reductions") {
    CHECK((*b.reduce(OpCode::Sum, x, {0, 2}, false))->type() == f32({3}));
    CHECK((*b.reduce(OpCode::Mean, x, {-1}, true))->type() == f32({2, 3, 1}));
    auto bad = b.reduce(OpCode::Amax, x, {3}, false);
    REQUIRE_FALSE(bad.ok());
    CHECK_THAT(msg(bad.status()), Catch::Contains("out of range"));
    auto twice = b.reduce(OpCode::Amax, x, {1, -2}, false);
    REQUIRE_FALSE(twice.ok());
    CHECK_THAT(msg(twice.status()), Catch::Contains("listed twice"));
  }
  SECTION("layout ops") {
    CHECK((*b.reshape(x, {6, 4}))->type() == f32({6, 4}));
    CHECK_FALSE(b.reshape(x, {5, 5}).ok());
    CHECK((*b.transpose(x, 0, -1))->type() == f32({4, 3, 2}));
    CHECK((*b.permute(x, {1, 2, 0}))->type() == f32({3, 4, 2}));
    CHECK_FALSE(b.permute(x, {0, 0, 1}).ok());
    CHECK((*b.view(x, {1, 0, 2}, {1, 3, 2}))->type() == f32({1, 3, 2}));
    auto oob = b.view(x, {1, 0, 3}, {1, 3, 2});
    REQUIRE_FALSE(oob.ok());
    CHECK_THAT(msg(oob.status()), Catch::Contains("outside tensor<2x3x4xf32>"));
    Value *part = *b.view(x, {0, 0, 0}, {1, 3, 4});
    CHECK((*b.assemble(x, part, {1, 0, 0}))->type() == x->type());
    CHECK_FALSE(b.assemble(x, part, {2, 0, 0}).ok());
    CHECK((*b.concat({x, x, part}, 0))->type() == f32({5, 3, 4}));
    CHECK_FALSE(b.concat({x, w}, 0).ok());
  }
  SECTION("constants and casts") {
    Value *k = *b.full({3, 1}, 0.5, DType::F16);
    CHECK(k->type() == ctx.tensorType(DType::F16, {3, 1}));
    CHECK(k->definingOp()->attr("value") == ctx.floatAttr(0.5));
    CHECK((*b.full({2}, 7, DType::I32))->definingOp()->attr("value") == ctx.intAttr(7));
    CHECK_FALSE(b.full({2}, 0.5, DType::I8).ok());
    CHECK_FALSE(b.full({0}, 1, DType::F32).ok());
    CHECK((*b.cast(x, DType::BF16))->type().dtype() == DType::BF16);
    auto exp = b.unary(OpCode::Exp, *b.cast(x, DType::I32));
    REQUIRE_FALSE(exp.ok());
    CHECK_THAT(msg(exp.status()), Catch::Contains("needs a floating-point operand"));
  }
  // A failed op leaves nothing behind: the function still verifies.
  REQUIRE(b.endFunc({x}).ok());
  CHECK(succeeded(verify(m)));
}

TEST_CASE("builder errors name the op and the current location", "[builder]") {
  Context ctx;
  Module m(ctx);
  GraphBuilder b(m);
  REQUIRE(b.beginFunc("f", {ctx.tensorType(DType::F32, {4, 8})}).ok());
  b.setLocation(ctx.loc("model.py", 17, 9));
  auto r = b.binary(OpCode::Add, b.arg(0), *b.reduce(OpCode::Sum, b.arg(0), {0}, false));
  REQUIRE(r.ok()); // [4,8] + [8] broadcasts
  auto bad = b.binary(OpCode::Add, b.arg(0), *b.reduce(OpCode::Sum, b.arg(0), {1}, false));
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(msg(bad.status()), Catch::StartsWith("model.py:17:9: error: 'add' op cannot "
                                                  "broadcast"));
  CHECK(m.func(0).ops().back().code() == OpCode::Sum); // the failed add was not kept
}

TEST_CASE("tile scopes apply to the following ops of their kind", "[builder]") {
  Context ctx;
  Module m(ctx);
  GraphBuilder b(m);
  REQUIRE(b.beginFunc("f", {ctx.tensorType(DType::F16, {128, 256}),
                            ctx.tensorType(DType::F16, {256, 128})})
              .ok());
  Value *plain = *b.unary(OpCode::Exp, b.arg(0));
  CHECK_FALSE(plain->definingOp()->attr("vec_tile"));
  b.setVecTile({64, 128});
  b.setCubeTile(CubeTile{{64, 128}, {64, 128}, {64, 128}});
  b.setScope(3);
  Value *e = *b.unary(OpCode::Exp, b.arg(0));
  Value *mm = *b.matmul(b.arg(0), b.arg(1));
  CHECK(e->definingOp()->attr("vec_tile") == ctx.intArrayAttr({64, 128}));
  CHECK_FALSE(e->definingOp()->attr("cube_tile"));
  CHECK(mm->definingOp()->attr("cube_tile").str() ==
        "{m = [64, 128], k = [64, 128], n = [64, 128]}");
  CHECK_FALSE(mm->definingOp()->attr("vec_tile"));
  CHECK(e->definingOp()->attr("sg_scope") == ctx.intAttr(3));

  auto saved = b.settings();
  b.setVecTile({32, 64});
  b.setScope(-1);
  Value *e2 = *b.unary(OpCode::Exp, b.arg(0));
  CHECK(e2->definingOp()->attr("vec_tile") == ctx.intArrayAttr({32, 64}));
  CHECK_FALSE(e2->definingOp()->attr("sg_scope"));
  b.restore(saved);
  CHECK((*b.unary(OpCode::Exp, b.arg(0)))->definingOp()->attr("vec_tile") ==
        ctx.intArrayAttr({64, 128}));

  // Explicit attributes override the scope.
  Value *e3 = *b.create(OpCode::Exp, {b.arg(0)}, {{ctx.id("vec_tile"), ctx.intArrayAttr({16, 64})}});
  CHECK(e3->definingOp()->attr("vec_tile") == ctx.intArrayAttr({16, 64}));
}

TEST_CASE("a view or reshape of another rank takes the tile when it adapts", "[builder]") {
  // Regression: the tile set for rank-2 tensors was left off a rank-1 view or
  // reshape, so returning (or writing out) the row x[3] failed with "no vec_tile".
  Context ctx;
  Module m(ctx);
  GraphBuilder b(m);
  REQUIRE(b.beginFunc("f", {ctx.tensorType(DType::F32, {16, 64})}).ok());
  b.setVecTile({8, 64});
  Value *row = *b.view(b.arg(0), {3, 0}, {1, 64});
  Value *flat = *b.reshape(row, {64});
  Value *all = *b.reshape(b.arg(0), {1024});
  CHECK(row->definingOp()->attr("vec_tile") == ctx.intArrayAttr({8, 64}));
  CHECK(flat->definingOp()->attr("vec_tile") == ctx.intArrayAttr({8, 64}));
  CHECK(all->definingOp()->attr("vec_tile") == ctx.intArrayAttr({8, 64}));
  CHECK(*adaptVecTile({8, 64}, {64}) == llvm::SmallVector<int64_t, 4>{64});
  // A shorter tile whose missing leading dim is not 1 does not adapt: no tile.
  Value *cube = *b.reshape(b.arg(0), {4, 4, 64});
  CHECK_FALSE(cube->definingOp()->attr("vec_tile"));
}

TEST_CASE("builder checks tile shapes as ops are created", "[builder]") {
  Context ctx;
  Module m(ctx);
  auto tiny = ptoc::target::DeviceSpec::preset("tiny");
  REQUIRE(tiny.ok());
  GraphBuilder b(m, &*tiny);
  REQUIRE(b.beginFunc("f", {ctx.tensorType(DType::F32, {512, 512})}).ok());
  b.setVecTile({64, 10}); // 40 bytes: not a multiple of 32, which only a copy refuses
  auto misaligned = b.concat({b.arg(0), b.arg(0)}, 1);
  REQUIRE_FALSE(misaligned.ok());
  CHECK_THAT(msg(misaligned.status()), Catch::Contains("'concat' op vec_tile"));
  CHECK_THAT(msg(misaligned.status()), Catch::Contains("32 bytes"));
  CHECK(b.unary(OpCode::Exp, b.arg(0)).ok()); // its rows are padded
  b.setVecTile({256, 512}); // 512 KiB per buffer: far over tiny's UB
  auto big = b.unary(OpCode::Exp, b.arg(0));
  REQUIRE_FALSE(big.ok());
  CHECK_THAT(msg(big.status()), Catch::Contains("UB"));
  // One tile for the whole result is split by expand-tiles instead (splitWholeVecTile).
  b.setVecTile({512, 512});
  CHECK(b.unary(OpCode::Exp, b.arg(0)).ok());
  b.setVecTile({8, 64});
  CHECK(b.unary(OpCode::Exp, b.arg(0)).ok());
}

TEST_CASE("builder rejects misuse without crashing", "[builder]") {
  Context ctx;
  Module m(ctx);
  GraphBuilder b(m);
  CHECK_FALSE(b.unary(OpCode::Exp, nullptr).ok()); // no function yet
  REQUIRE(b.beginFunc("f", {ctx.tensorType(DType::F32, {8})}).ok());
  CHECK_FALSE(b.unary(OpCode::Exp, nullptr).ok());
  CHECK_FALSE(b.unary(OpCode::Add, b.arg(0)).ok());
  CHECK_FALSE(b.binary(OpCode::Exp, b.arg(0), b.arg(0)).ok());
  CHECK_FALSE(b.reduce(OpCode::Add, b.arg(0), {0}, false).ok());
  CHECK_FALSE(b.create(OpCode::Return, {b.arg(0)}).ok());
  CHECK_FALSE(b.create(OpCode::Add, {b.arg(0)}).ok());
  CHECK_FALSE(b.cast(nullptr, DType::F16).ok());
  REQUIRE(b.endFunc({b.arg(0)}).ok());
  CHECK_FALSE(b.beginFunc("f", {}).ok()); // duplicate name
  CHECK_FALSE(b.beginFunc("g", {ctx.tileType(DType::F32, {8}, MemSpace::UB)}).ok());
}

// Issue 14: values and shapes from Python reach the builder unchecked by the parser.
// A double outside int64 was converted to int64 for an integer `full` (undefined
// behaviour, then a misleading "floating-point literal 2147483647.0" message), and a
// shape whose size in bytes overflows made a type whose size was undefined.
TEST_CASE("builder checks full values and shape sizes without overflow", "[builder]") {
  Context ctx;
  Module m(ctx);
  GraphBuilder b(m);
  CHECK_THAT(msg(b.beginFunc("big", {ctx.tensorType(DType::F32, {int64_t(1) << 40,
                                                                   int64_t(1) << 40})})
                     .status()),
             Catch::Contains("argument 0 of '@big': a tensor of shape "
                             "1099511627776x1099511627776 is too large: its size in bytes does "
                             "not fit in 64 bits"));
  REQUIRE(b.beginFunc("f", {ctx.tensorType(DType::F32, {8})}).ok());
  CHECK_THAT(msg(b.full({2}, 1e300, DType::I32).status()),
             Catch::Contains("'full' op value 1e+300 is out of range for the element type i32"));
  CHECK_THAT(msg(b.full({2}, 3e9, DType::I32).status()),
             Catch::Contains("value 3e+09 is out of range for the element type i32"));
  CHECK_THAT(msg(b.full({2}, std::nan(""), DType::I8).status()),
             Catch::Contains("value nan is not a number of the integer element type i8"));
  CHECK_THAT(msg(b.full({2}, -HUGE_VAL, DType::I32).status()),
             Catch::Contains("value -inf is out of range"));
  CHECK((*b.full({2}, -2147483648.0, DType::I32))->definingOp()->attr("value") ==
        ctx.intAttr(-2147483648LL));
  CHECK_THAT(msg(b.full({int64_t(1) << 62, 4}, 0, DType::F32).status()),
             Catch::Contains("is too large: its size in bytes does not fit in 64 bits"));
  CHECK_THAT(msg(b.reshape(b.arg(0), {int64_t(1) << 62, 8}).status()),
             Catch::Contains("'reshape' op a tensor of shape"));
  CHECK_THAT(msg(b.view(b.arg(0), {0}, {int64_t(1) << 62}).status()),
             Catch::Contains("'view' op"));
}
