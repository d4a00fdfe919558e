// Tests of the IR printer: exact text of IR built through the API, value naming,
// locations, and stability through the parser.
#include <catch2/catch.hpp>

#include <string>

#include "llvm/Support/raw_ostream.h"

#include "ptoc/ir/Context.h"
#include "ptoc/ir/Parser.h"
#include "ptoc/ir/Printer.h"

using namespace ptoc::ir;

namespace {

/// print(parse(text)) for a text the printer emitted; must reproduce `text`.
std::string reprint(const std::string &text, const PrintOptions &opts = {}) {
  Context ctx;
  DiagnosticCollector diags(ctx.diag());
  auto m = parseModule(text, "reprint.pto", ctx);
  INFO(text);
  INFO(diags.errorText());
  REQUIRE(m);
  return toString(*m, opts);
}

struct Builder {
  Context ctx;
  Module module{ctx};

  Attribute ints(llvm::ArrayRef<int64_t> v) { return ctx.intArrayAttr(v); }
  NamedAttr named(llvm::StringRef key, Attribute v) { return {ctx.id(key), v}; }
  Attribute dict(llvm::ArrayRef<NamedAttr> entries) { return ctx.dictAttr(entries, true); }
  Operation *op(Func &f, OpCode code, llvm::ArrayRef<Value *> operands,
                llvm::ArrayRef<Type> results, Attribute attrs = {}, Location loc = {}) {
    return f.createOp(ctx.opDef(code), operands, results, attrs, loc);
  }
};

} // namespace

TEST_CASE("printer: softmax prints exactly", "[printer]") {
  Builder b;
  Context &ctx = b.ctx;
  Type big = ctx.tensorType(DType::F32, {256, 4096});
  Type col = ctx.tensorType(DType::F32, {256, 1});
  Func &f = b.module.addFunc("softmax", {big}, {big}, Location{});
  Value *x = f.arg(0);
  x->setNameHint(ctx.id("x"));
  Attribute vec = b.ints({1, 4096});
  Attribute reduce = b.dict({b.named("vec_tile", vec), b.named("keepdim", ctx.boolAttr(true)),
                             b.named("axes", b.ints({1}))});
  Attribute elementwise = b.dict({b.named("vec_tile", vec)});
  Value *amax = b.op(f, OpCode::Amax, {x}, {col}, reduce)->result();
  Value *sub = b.op(f, OpCode::Sub, {x, amax}, {big}, elementwise)->result();
  Value *exp = b.op(f, OpCode::Exp, {sub}, {big}, elementwise)->result();
  Value *sum = b.op(f, OpCode::Sum, {exp}, {col}, reduce)->result();
  Value *div = b.op(f, OpCode::Div, {exp, sum}, {big}, elementwise)->result();
  b.op(f, OpCode::Return, {div}, {});

  const char *expected = R"IR(func @softmax(%x: tensor<256x4096xf32>) -> tensor<256x4096xf32> {
  %0 = amax %x {axes = [1], keepdim = true, vec_tile = [1, 4096]} : tensor<256x1xf32>
  %1 = sub %x, %0 {vec_tile = [1, 4096]} : tensor<256x4096xf32>
  %2 = exp %1 {vec_tile = [1, 4096]} : tensor<256x4096xf32>
  %3 = sum %2 {axes = [1], keepdim = true, vec_tile = [1, 4096]} : tensor<256x1xf32>
  %4 = div %2, %3 {vec_tile = [1, 4096]} : tensor<256x4096xf32>
  return %4
}
)IR";
  CHECK(toString(b.module) == expected);
  CHECK(toString(f) == expected);
  CHECK(reprint(expected) == expected);

  SECTION("printModule and printFunc write the same text to a stream") {
    std::string s1, s2;
    llvm::raw_string_ostream os1(s1), os2(s2);
    printModule(b.module, os1);
    printFunc(f, os2);
    CHECK(os1.str() == expected);
    CHECK(os2.str() == expected);
  }
  SECTION("opToString prints one line with the function's names") {
    CHECK(opToString(*sub->definingOp()) == "%1 = sub %x, %0 {vec_tile = [1, 4096]} : "
                                            "tensor<256x4096xf32>");
    CHECK(opToString(*f.returnOp()) == "return %4");
  }
}

TEST_CASE("printer: function headers and module layout", "[printer]") {
  Builder b;
  Context &ctx = b.ctx;
  Type scalar = ctx.tensorType(DType::F32, {});
  Type tile = ctx.tileType(DType::BF16, {16, 32}, MemSpace::L1);
  Type i8 = ctx.tensorType(DType::I8, {3, 5, 7});

  Func &none = b.module.addFunc("none", {}, {}, Location{});
  b.op(none, OpCode::Return, {}, {});
  Func &one = b.module.addFunc("one", {scalar}, {scalar}, Location{});
  b.op(one, OpCode::Return, {one.arg(0)}, {});
  Func &two = b.module.addFunc("two", {tile, i8}, {tile, i8}, Location{});
  b.op(two, OpCode::Return, {two.arg(0), two.arg(1)}, {});

  const char *expected = "func @none() {\n"
                         "  return\n"
                         "}\n"
                         "\n"
                         "func @one(%arg0: tensor<f32>) -> tensor<f32> {\n"
                         "  return %arg0\n"
                         "}\n"
                         "\n"
                         "func @two(%arg0: tile<16x32xbf16, l1>, %arg1: tensor<3x5x7xi8>) -> "
                         "(tile<16x32xbf16, l1>, tensor<3x5x7xi8>) {\n"
                         "  return %arg0, %arg1\n"
                         "}\n";
  CHECK(toString(b.module) == expected);
  CHECK(reprint(expected) == expected);
  CHECK(toString(one) == "func @one(%arg0: tensor<f32>) -> tensor<f32> {\n  return %arg0\n}\n");
}

TEST_CASE("printer: value naming", "[printer]") {
  Builder b;
  Context &ctx = b.ctx;
  Type t = ctx.tensorType(DType::F32, {8});

  SECTION("hint collisions get the first free suffix; generated names avoid hints") {
    Func &f = b.module.addFunc("f", {t, t, t}, {}, Location{});
    f.arg(1)->setNameHint(ctx.id("x"));
    // arg0 and arg2 have no hint; a result is hinted "arg2", so arg 2 must move aside.
    Value *a = b.op(f, OpCode::Exp, {f.arg(1)}, {t})->result();
    a->setNameHint(ctx.id("x")); // collides with the argument
    Value *c = b.op(f, OpCode::Neg, {a}, {t})->result();
    c->setNameHint(ctx.id("x_1")); // a hint that the collision suffix must not take
    Value *d = b.op(f, OpCode::Abs, {c}, {t})->result();
    d->setNameHint(ctx.id("x"));
    Value *e = b.op(f, OpCode::Exp, {d}, {t})->result(); // unnamed -> %0
    Value *g = b.op(f, OpCode::Neg, {e}, {t})->result();
    g->setNameHint(ctx.id("arg2"));
    Value *h = b.op(f, OpCode::Neg, {g}, {t})->result(); // unnamed -> %1
    b.op(f, OpCode::Return, {f.arg(0), f.arg(2), h}, {});

    const char *expected = "func @f(%arg0: tensor<8xf32>, %x: tensor<8xf32>, %arg2_1: tensor<8xf32>) {\n"
                           "  %x_2 = exp %x : tensor<8xf32>\n"
                           "  %x_1 = neg %x_2 : tensor<8xf32>\n"
                           "  %x_3 = abs %x_1 : tensor<8xf32>\n"
                           "  %0 = exp %x_3 : tensor<8xf32>\n"
                           "  %arg2 = neg %0 : tensor<8xf32>\n"
                           "  %1 = neg %arg2 : tensor<8xf32>\n"
                           "  return %arg0, %arg2_1, %1\n"
                           "}\n";
    CHECK(toString(f) == expected);
    CHECK(reprint(expected) == expected);
    CHECK(opToString(*c->definingOp()) == "%x_1 = neg %x_2 : tensor<8xf32>");
  }

  SECTION("hints that are not valid names are made valid; numeric hints are dropped") {
    Func &f = b.module.addFunc("f", {t}, {}, Location{});
    f.arg(0)->setNameHint(ctx.id("input tensor"));
    Value *a = b.op(f, OpCode::Exp, {f.arg(0)}, {t})->result();
    a->setNameHint(ctx.id("7"));
    Value *c = b.op(f, OpCode::Neg, {a}, {t})->result();
    c->setNameHint(ctx.id("3d-out"));
    Value *d = b.op(f, OpCode::Neg, {c}, {t})->result();
    d->setNameHint(ctx.id(""));
    b.op(f, OpCode::Return, {d}, {});
    const char *expected = "func @f(%input_tensor: tensor<8xf32>) {\n"
                           "  %0 = exp %input_tensor : tensor<8xf32>\n"
                           "  %_3d_out = neg %0 : tensor<8xf32>\n"
                           "  %1 = neg %_3d_out : tensor<8xf32>\n"
                           "  return %1\n"
                           "}\n";
    CHECK(toString(f) == expected);
    CHECK(reprint(expected) == expected);
  }

  SECTION("names restart in every function") {
    Func &f = b.module.addFunc("f", {t}, {t}, Location{});
    Value *a = b.op(f, OpCode::Exp, {f.arg(0)}, {t})->result();
    b.op(f, OpCode::Return, {a}, {});
    Func &g = b.module.addFunc("g", {t}, {t}, Location{});
    Value *c = b.op(g, OpCode::Neg, {g.arg(0)}, {t})->result();
    b.op(g, OpCode::Return, {c}, {});
    std::string s = toString(b.module);
    CHECK(s == "func @f(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
               "  %0 = exp %arg0 : tensor<8xf32>\n"
               "  return %0\n"
               "}\n\n"
               "func @g(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
               "  %0 = neg %arg0 : tensor<8xf32>\n"
               "  return %0\n"
               "}\n");
  }

  SECTION("a function name that is not an identifier is quoted") {
    Func &f = b.module.addFunc("my func", {}, {}, Location{});
    b.op(f, OpCode::Return, {}, {});
    std::string s = toString(f);
    CHECK(s == "func @\"my func\"() {\n  return\n}\n");
    CHECK(reprint(s) == s);
  }
}

TEST_CASE("printer: attributes", "[printer]") {
  Builder b;
  Context &ctx = b.ctx;
  Type t = ctx.tensorType(DType::F16, {4, 4});
  Func &f = b.module.addFunc("attrs", {}, {t}, Location{});
  Attribute cube = ctx.dictAttr({b.named("m", b.ints({128, 128})), b.named("k", b.ints({64, 256})),
                                 b.named("n", b.ints({256, 256}))},
                                /*sortByName=*/false);
  Attribute attrs = b.dict({
      b.named("cube_tile", cube),
      b.named("int", ctx.intAttr(1)),
      b.named("float", ctx.floatAttr(1.0)),
      b.named("small", ctx.floatAttr(1e-7)),
      b.named("neg", ctx.intAttr(-3)),
      b.named("ninf", ctx.floatAttr(-std::numeric_limits<double>::infinity())),
      b.named("nan", ctx.floatAttr(std::numeric_limits<double>::quiet_NaN())),
      b.named("str", ctx.stringAttr("tab\there \"q\" \\")),
      b.named("dt", ctx.dtypeAttr(DType::I32)),
      b.named("empty", ctx.arrayAttr({})),
      b.named("mixed", ctx.arrayAttr({ctx.intAttr(1), ctx.floatAttr(2.0)})),
      b.named("key-with-dash", ctx.boolAttr(false)),
  });
  Value *v = b.op(f, OpCode::Full, {}, {t}, attrs)->result();
  b.op(f, OpCode::Return, {v}, {});
  std::string expected =
      "func @attrs() -> tensor<4x4xf16> {\n"
      "  %0 = full {cube_tile = {m = [128, 128], k = [64, 256], n = [256, 256]}, dt = i32, "
      "empty = [], float = 1.0, int = 1, \"key-with-dash\" = false, mixed = [1, 2.0], nan = nan, "
      "neg = -3, ninf = -inf, small = 1e-07, str = \"tab\\there \\\"q\\\" \\\\\"} : "
      "tensor<4x4xf16>\n"
      "  return %0\n"
      "}\n";
  CHECK(toString(f) == expected);
  CHECK(reprint(expected) == expected);

  // The reparsed attributes are the same values (uniqued in the new context).
  Context ctx2;
  auto m2 = parseModule(expected, "a.pto", ctx2);
  REQUIRE(m2);
  Operation &full = m2->func(0).ops().front();
  CHECK(full.attr("int").isInt());
  CHECK(full.attr("float").isFloat());
  CHECK(full.attr("empty").isIntArray());
  CHECK(full.attr("mixed").isArray());
  CHECK(full.attr("str").getString() == "tab\there \"q\" \\");
  CHECK(full.attr("cube_tile").getDict()[0].name.str() == "m");
}

TEST_CASE("printer: locations", "[printer]") {
  Builder b;
  Context &ctx = b.ctx;
  Type t = ctx.tensorType(DType::F32, {8});
  Func &f = b.module.addFunc("f", {t}, {t}, ctx.loc("model.py", 10, 1));
  Value *a = b.op(f, OpCode::Exp, {f.arg(0)}, {t}, {}, ctx.loc("model.py", 11, 5))->result();
  Value *c = b.op(f, OpCode::Neg, {a}, {t}, {}, Location{})->result(); // unknown
  b.op(f, OpCode::Return, {c}, {}, {}, ctx.loc("dir/x\ty.py", 12, 3));

  PrintOptions withLocs;
  withLocs.printLocations = true;
  const char *expected = "func @f(%arg0: tensor<8xf32>) -> tensor<8xf32> loc(\"model.py\":10:1) {\n"
                         "  %0 = exp %arg0 : tensor<8xf32> loc(\"model.py\":11:5)\n"
                         "  %1 = neg %0 : tensor<8xf32>\n"
                         "  return %1 loc(\"dir/x\\ty.py\":12:3)\n"
                         "}\n";
  CHECK(toString(f, withLocs) == expected);
  CHECK(toString(f).find("loc(") == std::string::npos);

  // Explicit locations win over token positions when reparsed.
  Context ctx2;
  auto m2 = parseModule(expected, "other.pto", ctx2);
  REQUIRE(m2);
  Func &f2 = m2->func(0);
  CHECK(f2.loc().str() == "model.py:10:1");
  CHECK(f2.ops().front().loc().str() == "model.py:11:5");
  CHECK(std::next(f2.ops().begin())->loc().str() == "other.pto:3:3"); // no loc: its token
  CHECK(f2.returnOp()->loc().fileName() == "dir/x\ty.py");
}

TEST_CASE("printer: large functions stream in chunks and stay stable", "[printer]") {
  Builder b;
  Context &ctx = b.ctx;
  Type t = ctx.tensorType(DType::F32, {64, 512});
  Func &f = b.module.addFunc("chain", {t}, {t}, Location{});
  Attribute vec = b.dict({b.named("vec_tile", b.ints({64, 512}))});
  Value *v = f.arg(0);
  const int n = 30000;
  for (int i = 0; i < n; ++i) {
    v = b.op(f, i % 2 ? OpCode::Exp : OpCode::Add, i % 2 ? llvm::ArrayRef<Value *>{v}
                                                         : llvm::ArrayRef<Value *>{v, f.arg(0)},
             {t}, vec)
            ->result();
    if (i % 1000 == 7) v->setNameHint(ctx.id("h"));
  }
  b.op(f, OpCode::Return, {v}, {});

  std::string direct = toString(b.module);
  std::string streamed;
  {
    llvm::raw_string_ostream os(streamed);
    printModule(b.module, os); // > 1 MB: exercises the chunked flush
  }
  CHECK(direct.size() > (1u << 20));
  CHECK(streamed == direct);
  CHECK(direct.find("  %29969 = exp %29968 {vec_tile = [64, 512]} : tensor<64x512xf32>\n") !=
        std::string::npos);
  CHECK(direct.find("  %h_29 = exp") != std::string::npos);
  CHECK(reprint(direct) == direct);
}
