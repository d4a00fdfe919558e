// The verifier on IR built directly (the text-level cases are lit tests).
#include <catch2/catch.hpp>

#include "ptoc/ir/Context.h"
#include "ptoc/ir/Module.h"
#include "ptoc/ir/Verifier.h"

using namespace ptoc::ir;

namespace {

struct Env {
  Context ctx;
  Module m{ctx};
  Type t = ctx.tensorType(DType::F32, {4, 8});
  Func &f = m.addFunc("f", {t}, {t}, ctx.loc("v.pto", 1, 1));

  Operation *op(OpCode code, std::initializer_list<Value *> operands, uint32_t line,
                Operation *before = nullptr, Attribute attrs = {}) {
    return f.createOp(ctx.opDef(code), operands, {t}, attrs, ctx.loc("v.pto", line, 3),
                      before);
  }
  Operation *ret(Value *v, uint32_t line) {
    return f.createOp(ctx.opDef(OpCode::Return), {v}, {}, {}, ctx.loc("v.pto", line, 3));
  }
  // Verifies and returns every diagnostic's text.
  std::vector<std::string> errors() {
    DiagnosticCollector c(ctx.diag());
    (void)verify(m);
    std::vector<std::string> out;
    for (const Diagnostic &d : c.diagnostics()) out.push_back(d.str());
    return out;
  }
};

} // namespace

TEST_CASE("a well-formed function verifies", "[verifier]") {
  Env e;
  Operation *a = e.op(OpCode::Exp, {e.f.arg(0)}, 2);
  e.ret(a->result(), 3);
  CHECK(e.errors().empty());
  CHECK(verifyOrError(e.m).ok());
}

TEST_CASE("use before definition is reported at the use", "[verifier]") {
  Env e;
  Operation *later = e.op(OpCode::Exp, {e.f.arg(0)}, 3);
  Operation *user = e.op(OpCode::Neg, {later->result()}, 2, /*before=*/later);
  e.ret(user->result(), 4);
  auto errs = e.errors();
  REQUIRE(errs.size() == 1);
  CHECK_THAT(errs[0], Catch::StartsWith("v.pto:2:3: error: 'neg' op uses operand 0 before "
                                        "its definition at v.pto:3:3"));
}

TEST_CASE("a cycle is reported once, naming its ops", "[verifier]") {
  Env e;
  Operation *a = e.op(OpCode::Exp, {e.f.arg(0)}, 2);
  Operation *b = e.op(OpCode::Neg, {a->result()}, 3);
  a->setOperand(0, b->result());
  e.ret(b->result(), 4);
  auto errs = e.errors();
  REQUIRE(errs.size() == 1);
  CHECK_THAT(errs[0], Catch::Contains("part of a dependency cycle"));
  CHECK_THAT(errs[0], Catch::Contains("'exp' at v.pto:2:3"));
  CHECK_THAT(errs[0], Catch::Contains("'neg' at v.pto:3:3"));
}

TEST_CASE("return rules", "[verifier]") {
  SECTION("missing return") {
    Env e;
    e.op(OpCode::Exp, {e.f.arg(0)}, 2);
    auto errs = e.errors();
    REQUIRE(errs.size() == 1);
    CHECK_THAT(errs[0], Catch::Contains("must be 'return'"));
  }
  SECTION("empty body") {
    Env e;
    auto errs = e.errors();
    REQUIRE(errs.size() == 1);
    CHECK_THAT(errs[0], Catch::Contains("empty body"));
  }
  SECTION("return not last") {
    Env e;
    e.ret(e.f.arg(0), 2);
    e.ret(e.f.arg(0), 3);
    auto errs = e.errors();
    REQUIRE(errs.size() == 1);
    CHECK_THAT(errs[0], Catch::Contains("v.pto:2:3: error: 'return' op must be the last"));
  }
  SECTION("wrong result type") {
    Env e;
    Operation *s = e.f.createOp(e.ctx.opDef(OpCode::Sum), {e.f.arg(0)},
                                {e.ctx.tensorType(DType::F32, {8})},
                                e.ctx.dictAttr({{e.ctx.id("axes"), e.ctx.intArrayAttr({0})}},
                                               true),
                                e.ctx.loc("v.pto", 2, 3));
    e.ret(s->result(), 3);
    auto errs = e.errors();
    REQUIRE(errs.size() == 1);
    CHECK_THAT(errs[0], Catch::Contains("operand 0 has type tensor<8xf32> but '@f' declares "
                                        "result 0 as tensor<4x8xf32>"));
  }
}

TEST_CASE("result types must match the type rule", "[verifier]") {
  Env e;
  Operation *a = e.f.createOp(e.ctx.opDef(OpCode::Exp), {e.f.arg(0)},
                              {e.ctx.tensorType(DType::F16, {4, 8})}, {},
                              e.ctx.loc("v.pto", 2, 3));
  e.ret(e.f.arg(0), 3);
  (void)a;
  auto errs = e.errors();
  REQUIRE(errs.size() == 1);
  CHECK_THAT(errs[0], Catch::Contains("'exp' op result type tensor<4x8xf16> does not match "
                                      "the type tensor<4x8xf32>"));
}

TEST_CASE("attributes are checked against the op's declaration", "[verifier]") {
  Env e;
  Attribute unknown = e.ctx.dictAttr({{e.ctx.id("axis"), e.ctx.intAttr(1)}}, true);
  Attribute wrongKind = e.ctx.dictAttr({{e.ctx.id("vec_tile"), e.ctx.intAttr(8)}}, true);
  Attribute cubeOnVec =
      e.ctx.dictAttr({{e.ctx.id("cube_tile"), e.ctx.intArrayAttr({16, 16})}}, true);
  e.op(OpCode::Exp, {e.f.arg(0)}, 2, nullptr, unknown);
  e.op(OpCode::Exp, {e.f.arg(0)}, 3, nullptr, wrongKind);
  e.op(OpCode::Exp, {e.f.arg(0)}, 4, nullptr, cubeOnVec);
  e.ret(e.f.arg(0), 5);
  auto errs = e.errors();
  REQUIRE(errs.size() == 3);
  CHECK_THAT(errs[0], Catch::Contains("has unknown attribute 'axis' (it accepts: vec_tile, "
                                      "sg_scope)"));
  CHECK_THAT(errs[1], Catch::Contains("attribute 'vec_tile' must be an integer array"));
  CHECK_THAT(errs[2], Catch::Contains("does not take 'cube_tile'; vector ops take 'vec_tile'"));
}

TEST_CASE("operands must come from the same function", "[verifier]") {
  Env e;
  Func &g = e.m.addFunc("g", {e.t}, {e.t}, e.ctx.loc("v.pto", 10, 1));
  e.op(OpCode::Exp, {g.arg(0)}, 2);
  e.ret(e.f.arg(0), 3);
  g.createOp(e.ctx.opDef(OpCode::Return), {g.arg(0)}, {}, {}, e.ctx.loc("v.pto", 11, 3));
  auto errs = e.errors();
  REQUIRE(errs.size() == 1);
  CHECK_THAT(errs[0], Catch::Contains("defined in another function"));
}

TEST_CASE("module-level rules", "[verifier]") {
  Env e;
  e.ret(e.f.arg(0), 2);
  Func &dup = e.m.addFunc("f", {e.t}, {e.t}, e.ctx.loc("v.pto", 5, 1));
  dup.createOp(e.ctx.opDef(OpCode::Return), {dup.arg(0)}, {}, {}, e.ctx.loc("v.pto", 6, 3));
  Func &tiles = e.m.addFunc("h", {e.ctx.tileType(DType::F32, {8}, MemSpace::UB)}, {},
                            e.ctx.loc("v.pto", 8, 1));
  tiles.createOp(e.ctx.opDef(OpCode::Return), {}, {}, {}, e.ctx.loc("v.pto", 9, 3));
  auto errs = e.errors();
  REQUIRE(errs.size() == 2);
  CHECK_THAT(errs[0], Catch::Contains("v.pto:5:1: error: redefinition of function '@f'"));
  CHECK_THAT(errs[1], Catch::Contains("function arguments must be tensors"));
}

TEST_CASE("verifyOp checks one op in isolation", "[verifier]") {
  Env e;
  Operation *bad = e.f.createOp(e.ctx.opDef(OpCode::Add), {e.f.arg(0)}, {e.t}, {},
                                e.ctx.loc("v.pto", 2, 3));
  DiagnosticCollector c(e.ctx.diag());
  CHECK(failed(verifyOp(*bad)));
  REQUIRE(c.diagnostics().size() == 1);
  CHECK_THAT(c.diagnostics()[0].message, Catch::Contains("'add' op expects 2 operands, got 1"));
}
