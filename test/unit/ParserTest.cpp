// Tests of the IR text parser: round trips, exact error positions, robustness.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "ptoc/ir/Context.h"
#include "ptoc/ir/Parser.h"
#include "ptoc/ir/Printer.h"

using namespace ptoc::ir;

namespace {

// A module in canonical printed form: print(parse(kRich)) must reproduce it byte for
// byte. It covers every attribute kind, tile types in several memory spaces, rank-0
// types, a multi-result function, named and numeric values, forward references and a
// quoted function name.
const char *const kRich = R"IR(func @rich(%x: tensor<256x4096xf32>, %w: tile<64x64xf16, l0a>, %s: tensor<f32>, %arg3: tile<16x32xi8, ub>) -> (tensor<256x4096xf32>, tensor<f32>) {
  %0 = add %x, %x {vec_tile = [1, 4096]} : tensor<256x4096xf32>
  %1 = mul %2, %0 : tensor<256x4096xf32>
  %2 = exp %0 {vec_tile = [1, 4096]} : tensor<256x4096xf32>
  %c = full {big = 9223372036854775807, dtype = bf16, empty = [], flag = true, neg = -42, off = false, small = -9223372036854775808, value = -1.5e-07} : tensor<f32>
  %f = full {exp = 1e+20, nan_v = nan, ninf = -inf, pinf = inf, tiny = 1e-07, whole = 1.0, zero = -0.0} : tensor<f32>
  %str = full {"key with space" = "a \"quoted\"\n\ttab \\ back \x01 ☃", text = "plain"} : tensor<f32>
  %nest = full {cube_tile = {m = [128, 128], k = [64, 256], n = [256, 256]}, mixed = [1, 2.5, "s", f32, [3, 4], [], {z = 1, a = [true]}], nested = [[[1]], [[2.0]]]} : tile<16x16xf32, l0c>
  %m, %m_1 = max %2, %1 : tensor<256x4096xf32>, tensor<256x4096xf32>
  %3 = sum %m {axes = [1], keepdim = true} : tensor<256x1xf32>
  return %m_1, %c
}

func @second(%arg0: tile<16x16xbf16, gm>) -> tile<16x16xbf16, gm> {
  %0 = neg %arg0 : tile<16x16xbf16, gm>
  return %0
}

func @"odd name"() {
  return
}
)IR";

/// Parses `text` expecting success (and no diagnostics).
std::unique_ptr<Module> parseOk(Context &ctx, llvm::StringRef text,
                                llvm::StringRef file = "test.pto", ParseOptions opts = {}) {
  DiagnosticCollector diags(ctx.diag());
  std::unique_ptr<Module> m = parseModule(text, file, ctx, opts);
  INFO(diags.errorText());
  REQUIRE(m);
  REQUIRE(diags.diagnostics().empty());
  return m;
}

/// Parses `text` expecting failure with exactly one error; returns that error.
Diagnostic parseFails(llvm::StringRef text, ParseOptions opts = {}) {
  Context ctx;
  DiagnosticCollector diags(ctx.diag());
  std::unique_ptr<Module> m = parseModule(text, "err.pto", ctx, opts);
  INFO(text.str());
  REQUIRE_FALSE(m);
  REQUIRE(diags.diagnostics().size() == 1);
  REQUIRE(diags.diagnostics()[0].severity == Severity::Error);
  return diags.diagnostics()[0];
}

Operation &nthOp(Func &f, unsigned n) {
  auto it = f.ops().begin();
  for (unsigned i = 0; i < n; ++i) ++it;
  return *it;
}

} // namespace

TEST_CASE("parser: rich module prints back byte for byte", "[parser]") {
  Context ctx;
  auto m = parseOk(ctx, kRich);
  CHECK(toString(*m) == kRich);
  // And the reprint is stable through another parse.
  Context ctx2;
  auto m2 = parseOk(ctx2, toString(*m));
  CHECK(toString(*m2) == kRich);
}

TEST_CASE("parser: rich module has the right structure", "[parser]") {
  Context ctx;
  auto m = parseOk(ctx, kRich);
  REQUIRE(m->numFuncs() == 3);
  Func &f = *m->lookup("rich");
  REQUIRE(m->lookup("odd name") != nullptr);
  CHECK(m->lookup("odd name")->numOps() == 1);

  SECTION("types") {
    REQUIRE(f.numArgs() == 4);
    CHECK(f.arg(0)->type() == ctx.tensorType(DType::F32, {256, 4096}));
    CHECK(f.arg(1)->type().isTile());
    CHECK(f.arg(1)->type().space() == MemSpace::L0A);
    CHECK(f.arg(1)->type().dtype() == DType::F16);
    CHECK(f.arg(2)->type().rank() == 0);
    CHECK(f.arg(3)->type() == ctx.tileType(DType::I8, {16, 32}, MemSpace::UB));
    REQUIRE(f.resultTypes().size() == 2);
    CHECK(f.resultTypes()[1] == ctx.tensorType(DType::F32, {}));
    CHECK(m->lookup("odd name")->resultTypes().empty());
  }

  SECTION("names: non-numeric names become hints, numeric ones do not") {
    CHECK(f.arg(0)->nameHint().str() == "x");
    CHECK(f.arg(3)->nameHint().str() == "arg3");
    CHECK_FALSE(nthOp(f, 0).result()->nameHint());
    CHECK(nthOp(f, 3).result()->nameHint().str() == "c");
    CHECK(nthOp(f, 7).result(1)->nameHint().str() == "m_1");
  }

  SECTION("forward references resolve to the later definition") {
    Operation &mul = nthOp(f, 1);
    Operation &exp = nthOp(f, 2);
    CHECK(mul.name() == "mul");
    CHECK(mul.operand(0) == exp.result());
    CHECK(mul.operand(1) == nthOp(f, 0).result());
    CHECK(exp.result()->hasOneUse() == false); // used by mul and max
    CHECK(exp.result()->numUses() == 2);
    Operation *ret = f.returnOp();
    REQUIRE(ret);
    CHECK(ret->operand(0) == nthOp(f, 7).result(1));
    CHECK(ret->operand(1) == nthOp(f, 3).result());
  }

  SECTION("scalar attributes keep their kinds") {
    Operation &c = nthOp(f, 3);
    CHECK(c.attr("big").getInt() == std::numeric_limits<int64_t>::max());
    CHECK(c.attr("small").getInt() == std::numeric_limits<int64_t>::min());
    CHECK(c.attr("neg").getInt() == -42);
    CHECK(c.attr("empty").isIntArray());
    CHECK(c.attr("empty").getIntArray().empty());
    CHECK(c.attr("flag").getBool());
    CHECK_FALSE(c.attr("off").getBool());
    CHECK(c.attr("dtype").isDType());
    CHECK(c.attr("dtype").getDType() == DType::BF16);
    CHECK(c.attr("value").isFloat());
    CHECK(c.attr("value").getFloat() == -1.5e-7);

    Operation &fl = nthOp(f, 4);
    CHECK(fl.attr("whole").isFloat()); // `1.0` is a Float, not an Int
    CHECK(fl.attr("whole").getFloat() == 1.0);
    CHECK(fl.attr("exp").isFloat());
    CHECK(fl.attr("exp").getFloat() == 1e20);
    CHECK(std::isnan(fl.attr("nan_v").getFloat()));
    CHECK(fl.attr("ninf").getFloat() == -std::numeric_limits<double>::infinity());
    CHECK(fl.attr("pinf").getFloat() == std::numeric_limits<double>::infinity());
    CHECK(fl.attr("tiny").getFloat() == 1e-7);
    CHECK(std::signbit(fl.attr("zero").getFloat()));
  }

  SECTION("strings are unescaped, keys may be quoted") {
    Operation &s = nthOp(f, 5);
    CHECK(s.attr("key with space").getString() ==
          "a \"quoted\"\n\ttab \\ back \x01 \xe2\x98\x83");
    CHECK(s.attr("text").getString() == "plain");
  }

  SECTION("nested dictionaries keep their order; arrays keep element kinds") {
    Operation &n = nthOp(f, 6);
    CHECK(n.resultType() == ctx.tileType(DType::F32, {16, 16}, MemSpace::L0C));
    Attribute cube = n.attr("cube_tile");
    REQUIRE(cube.isDict());
    REQUIRE(cube.getDict().size() == 3);
    CHECK(cube.getDict()[0].name.str() == "m");
    CHECK(cube.getDict()[1].name.str() == "k");
    CHECK(cube.getDict()[2].name.str() == "n");
    CHECK(cube.lookup("k").getIntArray() == llvm::ArrayRef<int64_t>({64, 256}));

    Attribute mixed = n.attr("mixed");
    REQUIRE(mixed.isArray());
    llvm::ArrayRef<Attribute> e = mixed.getArray();
    REQUIRE(e.size() == 7);
    CHECK(e[0].isInt());
    CHECK(e[1].isFloat());
    CHECK(e[2].isString());
    CHECK(e[3].isDType());
    CHECK(e[4].isIntArray());
    CHECK(e[5].isIntArray());
    CHECK(e[5].getIntArray().empty());
    REQUIRE(e[6].isDict());
    CHECK(e[6].getDict()[0].name.str() == "z");
    CHECK(e[6].getDict()[1].name.str() == "a");
    CHECK(e[6].lookup("a").isArray()); // [true] is not all-int

    Attribute nested = n.attr("nested");
    REQUIRE(nested.isArray());
    CHECK(nested.getArray()[0].getArray()[0].isIntArray());
    CHECK(nested.getArray()[1].getArray()[0].isArray());
  }

  SECTION("op attribute dictionaries are sorted") {
    Operation &c = nthOp(f, 3);
    llvm::ArrayRef<NamedAttr> attrs = c.attrs();
    for (size_t i = 1; i < attrs.size(); ++i) CHECK(attrs[i - 1].name < attrs[i].name);
  }
}

TEST_CASE("parser: non-canonical input prints canonically and stably", "[parser]") {
  const char *text = R"IR(
// a comment before the function
func @g( %a : tensor<4x8xf32> ,%b: tensor<4x8xf32>)->tensor<4x8xf32>{ // trailing comment
  %sum=add %a,%b{zeta=1,alpha=[ ],mid={y=2.50,x=1E3}}:tensor<4x8xf32>
  %7 = exp %sum : tensor< 4x8xf32 >
  %99 = neg %7 : tensor<4x8xf32>


  return %99
}
func @h(%0: tensor<f32>) -> () {
  return
}
)IR";
  const char *expected = R"IR(func @g(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %sum = add %a, %b {alpha = [], mid = {y = 2.5, x = 1000.0}, zeta = 1} : tensor<4x8xf32>
  %0 = exp %sum : tensor<4x8xf32>
  %1 = neg %0 : tensor<4x8xf32>
  return %1
}

func @h(%arg0: tensor<f32>) {
  return
}
)IR";
  Context ctx;
  auto m = parseOk(ctx, text);
  std::string printed = toString(*m);
  CHECK(printed == expected);
  auto m2 = parseOk(ctx, printed);
  CHECK(toString(*m2) == printed);
}

TEST_CASE("parser: locations", "[parser]") {
  const char *text = "func @f(%x: tensor<8xf32>) -> tensor<8xf32> {\n"
                     "  %0 = exp %x : tensor<8xf32>\n"
                     "    %1 = neg %0 : tensor<8xf32> loc(\"orig.py\":42:7)\n"
                     "  return %1\n"
                     "}\n";
  SECTION("each op is at its first token; loc(...) overrides") {
    Context ctx;
    auto m = parseOk(ctx, text, "a.pto");
    Func &f = m->func(0);
    CHECK(f.loc().str() == "a.pto:1:1");
    CHECK(nthOp(f, 0).loc().str() == "a.pto:2:3");
    CHECK(nthOp(f, 1).loc().str() == "orig.py:42:7");
    CHECK(nthOp(f, 2).loc().str() == "a.pto:4:3");
  }
  SECTION("firstLine offsets lines of the text, not explicit locs") {
    Context ctx;
    ParseOptions opts;
    opts.firstLine = 100;
    auto m = parseOk(ctx, text, "a.pto", opts);
    Func &f = m->func(0);
    CHECK(f.loc().str() == "a.pto:100:1");
    CHECK(nthOp(f, 0).loc().str() == "a.pto:101:3");
    CHECK(nthOp(f, 1).loc().str() == "orig.py:42:7");
  }
  SECTION("printed locations survive a reparse under another file name") {
    Context ctx;
    PrintOptions withLocs;
    withLocs.printLocations = true;
    auto m = parseOk(ctx, text, "a \"b\".pto");
    std::string printed = toString(*m, withLocs);
    CHECK(printed ==
          "func @f(%x: tensor<8xf32>) -> tensor<8xf32> loc(\"a \\\"b\\\".pto\":1:1) {\n"
          "  %0 = exp %x : tensor<8xf32> loc(\"a \\\"b\\\".pto\":2:3)\n"
          "  %1 = neg %0 : tensor<8xf32> loc(\"orig.py\":42:7)\n"
          "  return %1 loc(\"a \\\"b\\\".pto\":4:3)\n"
          "}\n");
    auto m2 = parseOk(ctx, printed, "elsewhere.pto");
    CHECK(toString(*m2, withLocs) == printed);
    CHECK(m2->func(0).loc().fileName() == "a \"b\".pto");
    // Without locations the output does not depend on them.
    CHECK(toString(*m2) == toString(*m));
  }
}

TEST_CASE("parser: errors are reported once, at the offending token", "[parser]") {
  struct Case {
    const char *text;
    unsigned line, col;
    const char *message;
  };
  const std::string deep = "func @f() {\n  %0 = full {v = " + std::string(100000, '[');
  const Case cases[] = {
      {"func @f(%x {", 1, 12, "expected ':' after argument name, found '{'"},
      {"func @f(%x: foo) {", 1, 13, "expected type, found 'foo'"},
      {"func @f(%x: tensor<4xf64>) {", 1, 22,
       "unknown element type 'f64' (expected one of f32, f16, bf16, i8, i32, i64, bool, i16, "
       "u8, u16, u32, u64)"},
      {"func @f() {\n  %0 = full {s = \"abc} : tensor<f32>\n}", 2, 18, "unterminated string"},
      {"func @f() {\n  return\n", 3, 1,
       "unexpected end of file: expected '}' to close function '@f'"},
      {"func @f() {\n  %0 = full {v = 99999999999999999999} : tensor<f32>\n}", 2, 18,
       "integer out of range"},
      {"func @f() {\n  # comment\n}", 2, 3, "invalid character '#'"},
      {"func @f(%x: tensor<4x0xf32>) {", 1, 22, "dimension must be positive, found 0"},
      {"func @f(%x: tensor<4x-3xf32>) {", 1, 22, "dimension must be positive, found -3"},
      {"func @f(%x: tensor<8xf32>) {\n  %0 = ad %x, %x : tensor<8xf32>\n}", 2, 8,
       "unknown operation 'ad'; did you mean 'add'?"},
      {"func @f() {\n  %0 = frobnicate : tensor<8xf32>\n}", 2, 8,
       "unknown operation 'frobnicate' (see docs/ir.md"},
      {"func @f(%x: tensor<8xf32>) {\n  %0 = exp %x : tensor<8xf32>\n  return %foo\n}", 3, 10,
       "use of undefined value '%foo'"},
      {"func @f(%x: tensor<8xf32>) {\n  %x = exp %x : tensor<8xf32>\n}", 2, 3,
       "redefinition of value '%x' (first defined at err.pto:1:9)"},
      {"func @f(%x: tensor<8xf32>) {\n  %a, %a = exp %x : tensor<8xf32>, tensor<8xf32>\n}", 2, 7,
       "redefinition of value '%a' (first defined at err.pto:2:3)"},
      {"func @f(%x: tensor<8xf32>) {\n  %0 = sum %x {axes = [0], axes = [0]} : tensor<1xf32>\n}",
       2, 28, "duplicate attribute 'axes'"},
      {"func @f() {\n  return\n}\n\nfunc @f() {\n  return\n}\n", 5, 6,
       "redefinition of function '@f' (first defined at err.pto:1:6)"},
      {"func @f(%x: tensor<8xf32>) {\n  %0, %1 = exp %x : tensor<8xf32>\n}", 2, 19,
       "names 2 result(s) but lists 1 result type(s)"},
      {"func @f(%x: tensor<8xf32>) {\n  %0 = exp %x\n  return %0\n}", 3, 3,
       "expected ':' and the result type(s) of 'exp', found 'return'"},
      {"func @f(%x: tile<8xf32, hbm>) {", 1, 25,
       "unknown memory space 'hbm' (expected gm, ub, l1, l0a, l0b or l0c)"},
      {"func @f(%x: tensor<8xf32, ub>) {", 1, 25,
       "expected '>' to close the tensor type, found ','"},
      {"func @f(%x: tensor<8f32>) {", 1, 21, "expected 'x' after dimension 8, found 'f'"},
      {"func @f() {\n  %0 = full {s = \"a\\qb\"} : tensor<f32>\n}", 2, 20,
       "invalid escape sequence '\\q' in string"},
      {deep.c_str(), 2, 18 + 63, "attributes nest too deeply (more than 64 levels)"},
      {"func @f(%x: tensor<99999999999999999999xf32>) {", 1, 20, "integer out of range"},
      {"func @f(%x: tensor<4294967296x4294967296xf32>) {", 1, 13, "type is too large"},
      {"  %0 = exp %x", 1, 3, "expected 'func', found '%0'"},
      {"func @f() {\n  return\nfunc @g() {\n}", 3, 1,
       "expected '}' to close function '@f' before the next 'func'"},
      {"func @f() loc(\"x\":1) {\n}", 1, 20, "expected ':' in loc(\"file\":line:col), found ')'"},
      {"func @f() {\n  %0 = full {v = 1e999} : tensor<f32>\n}", 2, 18,
       "floating-point literal out of range"},
      {"func @f() {\n  %0 = full {v = bogus} : tensor<f32>\n}", 2, 18,
       "expected attribute value, found 'bogus'"},
      {"func @f() {\n  %0 = full {v = 1 : tensor<f32>\n}", 2, 20,
       "expected ',' or '}' in attribute dictionary, found ':'"},
      {"func @f(%x: tensor<8xf32>) {\n  return %x,\n}", 3, 1,
       "expected operand name after ',', found '}'"},
      {"func @f() {\n  % = exp\n}", 2, 3, "expected a value name after '%'"},
      {"func @f(%x: tensor<8xf32>) -> tensor<8xf32> {\n  return %x\n} }", 3, 3,
       "expected 'func', found '}'"},
  };
  for (const Case &c : cases) {
    Diagnostic d = parseFails(c.text);
    INFO("input: " << llvm::StringRef(c.text).take_front(200).str());
    INFO("got: " << d.str());
    CHECK(d.loc.fileName() == "err.pto");
    CHECK(d.loc.line == c.line);
    CHECK(d.loc.col == c.col);
    CHECK_THAT(d.message, Catch::Contains(c.message));
  }
}

TEST_CASE("parser: error lines honour firstLine", "[parser]") {
  ParseOptions opts;
  opts.firstLine = 50;
  Diagnostic d = parseFails("func @f() {\n  %0 = full {v = bogus} : tensor<f32>\n}", opts);
  CHECK(d.loc.line == 51);
  CHECK(d.loc.col == 18);
}

TEST_CASE("parser: parseModuleOrError returns the diagnostic as a status", "[parser]") {
  Context ctx;
  auto bad = parseModuleOrError("func @f(%x {", "s.pto", ctx);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(bad.status().message()) ==
        "s.pto:1:12: error: expected ':' after argument name, found '{'");
  // The collector was scoped to the call: nothing leaks into later diagnostics.
  DiagnosticCollector later(ctx.diag());
  auto good = parseModuleOrError("func @f() {\n  return\n}\n", "s.pto", ctx);
  REQUIRE(good.ok());
  CHECK((*good)->numFuncs() == 1);
  CHECK(later.diagnostics().empty());
}

TEST_CASE("parser: forward references and self references", "[parser]") {
  Context ctx;
  SECTION("named forward reference") {
    auto m = parseOk(ctx, "func @f(%x: tensor<8xf32>) -> tensor<8xf32> {\n"
                          "  %a = add %b, %b : tensor<8xf32>\n"
                          "  %b = exp %x : tensor<8xf32>\n"
                          "  return %a\n"
                          "}\n");
    Func &f = m->func(0);
    CHECK(nthOp(f, 0).operand(0) == nthOp(f, 1).result());
    CHECK(nthOp(f, 0).operand(1) == nthOp(f, 1).result());
    CHECK(nthOp(f, 1).result()->numUses() == 2);
  }
  SECTION("a use of the op's own result parses (the verifier rejects the cycle)") {
    auto m = parseOk(ctx, "func @f() {\n  %a = neg %a : tensor<8xf32>\n  return\n}\n");
    Operation &op = nthOp(m->func(0), 0);
    CHECK(op.operand(0) == op.result());
  }
  SECTION("names are per function") {
    Diagnostic d = parseFails("func @f(%x: tensor<8xf32>) {\n  %y = exp %x : tensor<8xf32>\n"
                              "  return\n}\nfunc @g() {\n  return %y\n}\n");
    CHECK(d.loc.line == 6);
    CHECK(d.loc.col == 10);
    CHECK_THAT(d.message, Catch::Contains("use of undefined value '%y'"));
  }
  SECTION("numeric names with leading zeros are distinct names") {
    auto m = parseOk(ctx, "func @f(%x: tensor<8xf32>) {\n  %07 = exp %x : tensor<8xf32>\n"
                          "  %7 = neg %07 : tensor<8xf32>\n  return %7\n}\n");
    Func &f = m->func(0);
    CHECK(nthOp(f, 1).operand(0) == nthOp(f, 0).result());
    CHECK(nthOp(f, 2).operand(0) == nthOp(f, 1).result());
    CHECK_FALSE(nthOp(f, 0).result()->nameHint());
  }
  SECTION("large numeric names") {
    auto m = parseOk(ctx, "func @f(%x: tensor<8xf32>) {\n"
                          "  %99999999999999999999999 = exp %x : tensor<8xf32>\n"
                          "  %4000000 = neg %99999999999999999999999 : tensor<8xf32>\n"
                          "  return %4000000\n}\n");
    Func &f = m->func(0);
    CHECK(nthOp(f, 1).operand(0) == nthOp(f, 0).result());
    CHECK(nthOp(f, 2).operand(0) == nthOp(f, 1).result());
  }
}

TEST_CASE("parser: pathological inputs neither crash nor hang", "[parser]") {
  SECTION("100k nested brackets") {
    std::string s = "func @f() {\n  %0 = full {v = " + std::string(100000, '[') +
                    std::string(100000, ']') + "} : tensor<f32>\n  return\n}\n";
    Diagnostic d = parseFails(s);
    CHECK_THAT(d.message, Catch::Contains("nest too deeply"));
  }
  SECTION("nesting right at the limit is accepted") {
    // The op dictionary is level 1, so 63 brackets make 64 levels.
    std::string s = "func @f() {\n  %0 = full {v = " + std::string(63, '[') + "1" +
                    std::string(63, ']') + "} : tensor<f32>\n  return\n}\n";
    Context ctx;
    auto m = parseOk(ctx, s);
    CHECK(toString(*m).find(std::string(63, '[') + "1]") != std::string::npos);
  }
  SECTION("a dictionary with many keys, one duplicated at the end") {
    std::string s = "func @f() {\n  %0 = full {";
    for (int i = 0; i < 5000; ++i) s += "k" + std::to_string(i) + " = " + std::to_string(i) + ", ";
    s += "k17 = 1} : tensor<f32>\n  return\n}\n";
    Diagnostic d = parseFails(s);
    CHECK_THAT(d.message, Catch::Contains("duplicate attribute 'k17'"));
    CHECK(d.loc.line == 2);
  }
  SECTION("random bytes") {
    std::mt19937 rng(7);
    for (int i = 0; i < 200; ++i) {
      std::string s(1 + rng() % 300, ' ');
      for (char &c : s) c = static_cast<char>(rng() & 0xff);
      if (i % 2) s = "func @f() {\n" + s;
      parseFails(s);
    }
  }
  SECTION("empty input is an empty module") {
    Context ctx;
    auto m = parseOk(ctx, "  // nothing here\n");
    CHECK(m->numFuncs() == 0);
    CHECK(toString(*m).empty());
  }
}

TEST_CASE("parser: every prefix of a valid module fails cleanly or parses", "[parser]") {
  std::string text = kRich;
  int failures = 0;
  for (size_t n = 0; n <= text.size(); ++n) {
    Context ctx;
    DiagnosticCollector diags(ctx.diag());
    auto m = parseModule(llvm::StringRef(text).take_front(n), "prefix.pto", ctx);
    if (m) {
      // Only prefixes that end between functions can be complete modules.
      REQUIRE(diags.diagnostics().empty());
    } else {
      ++failures;
      REQUIRE(diags.diagnostics().size() == 1);
    }
  }
  CHECK(failures > static_cast<int>(text.size()) - 10);
}

TEST_CASE("parser: mutation fuzzing", "[parser]") {
  const std::string base = kRich;
  const char interesting[] = "{}[]()<>%@,:=-\"\\x0123456789 \n/#.eEaf_";
  std::mt19937 rng(20240611);
  int parsed = 0, failed = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    std::string text = base;
    int mutations = 1 + static_cast<int>(rng() % 3);
    for (int k = 0; k < mutations && !text.empty(); ++k) {
      size_t pos = rng() % text.size();
      switch (rng() % 4) {
      case 0: text.resize(pos); break;
      case 1:
        text[pos] = rng() % 3 == 0 ? static_cast<char>(rng() & 0xff)
                                   : interesting[rng() % (sizeof(interesting) - 1)];
        break;
      case 2: {
        size_t len = std::min<size_t>(1 + rng() % 60, text.size() - pos);
        size_t at = rng() % (text.size() + 1);
        text.insert(at, text.substr(pos, len));
        break;
      }
      case 3: text.erase(pos, 1 + rng() % 20); break;
      }
    }
    Context ctx;
    DiagnosticCollector diags(ctx.diag());
    auto m = parseModule(text, "fuzz.pto", ctx);
    if (!m) {
      ++failed;
      if (diags.diagnostics().size() != 1 || !diags.diagnostics()[0].loc.isKnown()) {
        INFO(text);
        INFO(diags.errorText());
        FAIL("a failed parse must report exactly one located error");
      }
      continue;
    }
    ++parsed;
    if (!diags.diagnostics().empty()) {
      INFO(text);
      FAIL("a successful parse reported diagnostics");
    }
    // Whatever parsed must print, and the print must be a fixed point.
    std::string printed = toString(*m);
    auto m2 = parseModule(printed, "fuzz2.pto", ctx);
    if (!m2 || toString(*m2) != printed) {
      INFO(text);
      INFO(printed);
      FAIL("print(parse(print(x))) != print(x)");
    }
  }
  CHECK(parsed > 50);
  CHECK(failed > 1000);
}
