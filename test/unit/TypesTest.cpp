// Types, dtypes, attributes and their uniquing.
#include <catch2/catch.hpp>

#include <cmath>

#include "ptoc/ir/Context.h"
#include "ptoc/ir/OpDef.h"

using namespace ptoc::ir;

TEST_CASE("dtype sizes, names and parsing", "[types]") {
  CHECK(elementSize(DType::F32) == 4);
  CHECK(elementSize(DType::F16) == 2);
  CHECK(elementSize(DType::BF16) == 2);
  CHECK(elementSize(DType::I8) == 1);
  CHECK(elementSize(DType::I32) == 4);
  for (DType t : kAllDTypes) CHECK(parseDType(dtypeName(t)) == t);
  CHECK_FALSE(parseDType("f64").has_value());
  CHECK(isFloat(DType::BF16));
  CHECK(isInteger(DType::I8));
}

TEST_CASE("values round to the element type", "[types]") {
  CHECK(roundToDType(1.0 / 3.0, DType::F32) == static_cast<double>(1.0f / 3.0f));
  // f16 has 10 mantissa bits: 1 + 2^-11 rounds to even (1.0), 1 + 3*2^-11 up.
  CHECK(roundToDType(1.0 + std::ldexp(1.0, -11), DType::F16) == 1.0);
  CHECK(roundToDType(1.0 + 3 * std::ldexp(1.0, -11), DType::F16) == 1.0 + std::ldexp(1.0, -9));
  CHECK(roundToDType(65504.0, DType::F16) == 65504.0);
  CHECK(std::isinf(roundToDType(70000.0, DType::F16)));
  CHECK(roundToDType(std::ldexp(1.0, -24), DType::F16) == std::ldexp(1.0, -24)); // subnormal
  // bf16 keeps 7 mantissa bits.
  CHECK(roundToDType(1.0 + std::ldexp(1.0, -8), DType::BF16) == 1.0);
  CHECK(roundToDType(3.9, DType::I32) == 3.0);
  CHECK(roundToDType(-3.9, DType::I32) == -3.0);
  CHECK(roundToDType(300.0, DType::I8) == 127.0);
  CHECK(roundToDType(-300.0, DType::I8) == -128.0);
}

TEST_CASE("types are uniqued and print in the text form", "[types]") {
  Context ctx;
  Type a = ctx.tensorType(DType::F32, {64, 512});
  Type b = ctx.tensorType(DType::F32, {64, 512});
  Type c = ctx.tensorType(DType::F16, {64, 512});
  Type t = ctx.tileType(DType::F16, {16, 16}, MemSpace::L0A);
  CHECK(a == b);
  CHECK(a != c);
  CHECK(a.str() == "tensor<64x512xf32>");
  CHECK(t.str() == "tile<16x16xf16, l0a>");
  CHECK(ctx.tensorType(DType::I8, {}).str() == "tensor<i8>");
  CHECK(a.numElements() == 64 * 512);
  CHECK(a.sizeInBytes() == 64 * 512 * 4);
  CHECK(ctx.withDType(a, DType::F16) == c);
  CHECK(ctx.withShape(t, {32, 16}).space() == MemSpace::L0A);
  CHECK(a.contentHash() == b.contentHash());
  CHECK(a.contentHash() != c.contentHash());
  // The content hash does not depend on the context (stable across processes).
  Context other;
  CHECK(other.tensorType(DType::F32, {64, 512}).contentHash() == a.contentHash());
  for (MemSpace s : {MemSpace::GM, MemSpace::UB, MemSpace::L1, MemSpace::L0A, MemSpace::L0B,
                     MemSpace::L0C})
    CHECK(parseMemSpace(memSpaceName(s)) == s);
}

TEST_CASE("attributes are uniqued by content", "[types]") {
  Context ctx;
  CHECK(ctx.intAttr(3) == ctx.intAttr(3));
  CHECK(ctx.intAttr(3) != ctx.floatAttr(3.0));
  CHECK(ctx.floatAttr(0.0) != ctx.floatAttr(-0.0));
  CHECK(ctx.floatAttr(std::nan("")) == ctx.floatAttr(std::nan("")));
  CHECK(ctx.stringAttr("a\"b") == ctx.stringAttr("a\"b"));
  CHECK(ctx.intArrayAttr({1, 2}) == ctx.arrayAttr({ctx.intAttr(1), ctx.intAttr(2)}));
  CHECK(ctx.arrayAttr({ctx.intAttr(1), ctx.intAttr(2)}).isIntArray());
  Attribute mixed = ctx.arrayAttr({ctx.intAttr(1), ctx.floatAttr(2.5)});
  CHECK(mixed.isArray());
  CHECK(mixed.str() == "[1, 2.5]");

  NamedAttr b{ctx.id("b"), ctx.intAttr(1)}, a{ctx.id("a"), ctx.boolAttr(true)};
  Attribute sorted = ctx.dictAttr({b, a}, /*sortByName=*/true);
  Attribute kept = ctx.dictAttr({b, a}, /*sortByName=*/false);
  CHECK(sorted.str() == "{a = true, b = 1}");
  CHECK(kept.str() == "{b = 1, a = true}");
  CHECK(sorted == ctx.dictAttr({a, b}, true));
  CHECK(sorted.lookup("b") == ctx.intAttr(1));
  CHECK_FALSE(sorted.lookup("c"));
  CHECK(ctx.dictAttr({{ctx.id("odd key"), ctx.intAttr(1)}}, true).str() == "{\"odd key\" = 1}");
}

TEST_CASE("attribute text form", "[types]") {
  Context ctx;
  CHECK(ctx.floatAttr(1.0).str() == "1.0");
  CHECK(ctx.floatAttr(0.1).str() == "0.1");
  CHECK(ctx.floatAttr(1e-7).str() == "1e-07");
  CHECK(ctx.floatAttr(-INFINITY).str() == "-inf");
  CHECK(ctx.floatAttr(std::nan("")).str() == "nan");
  CHECK(ctx.intAttr(-5).str() == "-5");
  CHECK(ctx.dtypeAttr(DType::BF16).str() == "bf16");
  CHECK(ctx.stringAttr("x\n\"").str() == "\"x\\n\\\"\"");
  CHECK(ctx.intArrayAttr({}).str() == "[]");
}

TEST_CASE("identifiers and locations are interned", "[types]") {
  Context ctx;
  CHECK(ctx.id("vec_tile") == ctx.id("vec_tile"));
  CHECK(ctx.id("a") != ctx.id("b"));
  Location l = ctx.loc("model.py", 12, 5);
  CHECK(l.str() == "model.py:12:5");
  CHECK(Location().str() == "<unknown>");
  CHECK(l == ctx.loc("model.py", 12, 5));
}

TEST_CASE("numpy broadcasting of shapes", "[types]") {
  using V = llvm::SmallVector<int64_t, 4>;
  CHECK(*broadcastShapes({256, 4096}, {256, 1}) == V{256, 4096});
  CHECK(*broadcastShapes({4096}, {256, 1}) == V{256, 4096});
  CHECK(*broadcastShapes({2, 1, 8}, {3, 1}) == V{2, 3, 8});
  CHECK(*broadcastShapes({}, {3}) == V{3});
  CHECK_FALSE(broadcastShapes({4, 3}, {4}).has_value());
}

TEST_CASE("every op in Ops.def is registered exactly once", "[types]") {
  const OpRegistry &r = OpRegistry::get();
  CHECK(r.all().size() == kNumOpCodes);
  for (const OpDef &d : r.all()) {
    CHECK(r.lookup(d.name) == &d);
    CHECK(d.inferType != nullptr);
    if (d.cls == OpClass::ElementwiseUnary) CHECK(d.unaryFn != nullptr);
    if (d.cls == OpClass::ElementwiseBinary) CHECK(d.binaryFn != nullptr);
  }
  CHECK(r.lookup("nope") == nullptr);
  CHECK(r.def(OpCode::Matmul).core == ptoc::target::CoreKind::AIC);
  CHECK(r.def(OpCode::Exp).core == ptoc::target::CoreKind::AIV);
  CHECK(r.def(OpCode::Matmul).tile == TileKind::Cube);
  CHECK(r.def(OpCode::Gelu).unaryFn(0.0) == 0.0);
  CHECK(r.def(OpCode::Sigmoid).unaryFn(0.0) == 0.5);
}
