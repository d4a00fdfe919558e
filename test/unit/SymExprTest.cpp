// Unit tests for ir::SymExpr (docs/ir.md, "Loops"): the text form's precedence and
// round trip, evaluation with Python's floor division and modulo, errors naming the
// column or the operation, interval bounds over index ranges and when they are exact.
#include <catch2/catch.hpp>

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "ptoc/ir/SymExpr.h"

using Catch::Matchers::Contains;
using ptoc::ir::SymBinding;
using ptoc::ir::SymExpr;

namespace {

SymExpr parse(const std::string &text) {
  absl::StatusOr<SymExpr> e = SymExpr::parse(text);
  INFO(text << ": " << e.status().message());
  REQUIRE(e.ok());
  return *std::move(e);
}

std::string parseError(const std::string &text) {
  absl::StatusOr<SymExpr> e = SymExpr::parse(text);
  INFO(text);
  REQUIRE_FALSE(e.ok());
  return std::string(e.status().message());
}

int64_t eval(const std::string &text, std::vector<SymBinding> bindings = {}) {
  absl::StatusOr<int64_t> v = parse(text).evaluate(bindings);
  INFO(text << ": " << v.status().message());
  REQUIRE(v.ok());
  return *v;
}

std::string evalError(const std::string &text, std::vector<SymBinding> bindings = {}) {
  absl::StatusOr<int64_t> v = parse(text).evaluate(bindings);
  INFO(text);
  REQUIRE_FALSE(v.ok());
  return std::string(v.status().message());
}

using Range = std::pair<int64_t, int64_t>;

Range bounds(const std::string &text, std::vector<SymBinding> bindings) {
  std::optional<Range> b = parse(text).bounds(bindings);
  INFO(text);
  REQUIRE(b.has_value());
  return *b;
}

/// The smallest and largest value of `text` over every point of the box, by
/// evaluating each one (the reference bounds() must enclose, and match when exact).
Range bruteForce(const std::string &text, const std::vector<SymBinding> &box) {
  SymExpr e = parse(text);
  Range r{std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()};
  std::vector<SymBinding> point = box;
  std::function<void(size_t)> walk = [&](size_t d) {
    if (d == box.size()) {
      absl::StatusOr<int64_t> v = e.evaluate(point);
      REQUIRE(v.ok());
      r.first = std::min(r.first, *v);
      r.second = std::max(r.second, *v);
      return;
    }
    for (int64_t x = box[d].lo; x <= box[d].hi; ++x) {
      point[d].lo = point[d].hi = x;
      walk(d + 1);
    }
  };
  walk(0);
  return r;
}

} // namespace

TEST_CASE("SymExpr prints with the parentheses precedence needs and parses back",
          "[ir][symexpr]") {
  struct Case {
    const char *in, *printed;
  };
  const Case cases[] = {
      {"i", "i"},
      {"42", "42"},
      {"i*64+8", "i * 64 + 8"},
      {"(i + 1) * 64", "(i + 1) * 64"},
      {"i + (j + k)", "i + (j + k)"},
      {"(i + j) + k", "i + j + k"},
      {"i - (j - k)", "i - (j - k)"},
      {"i - j - k", "i - j - k"},
      {"i - (j + k)", "i - (j + k)"},
      {"i * (j * k)", "i * (j * k)"},
      {"i // (j * 2)", "i // (j * 2)"},
      {"(i // 2) * 3", "i // 2 * 3"},
      {"i % 4 + b.x_1", "i % 4 + b.x_1"},
      {"-i", "-i"},
      {"-(i + 1)", "-(i + 1)"},
      {"--i", "--i"},
      {"i * -j", "i * -j"},
      {"i - -3", "i - -3"},
      {"min(i, 7)", "min(i, 7)"},
      {"max( i*2 ,  j+1 )", "max(i * 2, j + 1)"},
      {"min(max(i, 0), n - 1) // 2", "min(max(i, 0), n - 1) // 2"},
      {"2 * min(i + 1, 8)", "2 * min(i + 1, 8)"},
      {"  i  ", "i"},
      {"min", "min"}, // a name when no '(' follows
  };
  for (const Case &c : cases) {
    INFO(c.in);
    SymExpr e = parse(c.in);
    CHECK(e.str() == c.printed);
    CHECK(parse(e.str()).str() == c.printed);
  }
  // A constant built in C++ may be negative: it prints parenthesised so that it
  // reads back as the same value in any position.
  CHECK(SymExpr::constant(-5).str() == "(-5)");
  CHECK(SymExpr::constant(-5).isConstant());
  CHECK(SymExpr::constant(-5).constantValue() == -5);
  CHECK(parse(SymExpr::constant(-5).str()).evaluate({}).value() == -5);
  CHECK_FALSE(parse("i + 1").isConstant());
  CHECK(parse("17").isConstant());
  CHECK(parse("i * j + i - k").names() == std::vector<std::string>{"i", "j", "k"});
  CHECK(parse("3 * 4").names().empty());
}

TEST_CASE("SymExpr evaluates with the usual precedence and Python's floor semantics",
          "[ir][symexpr]") {
  CHECK(eval("2 + 3 * 4") == 14);
  CHECK(eval("(2 + 3) * 4") == 20);
  CHECK(eval("10 - 4 - 3") == 3);
  CHECK(eval("100 // 10 // 3") == 3);
  CHECK(eval("-2 * 3") == -6);
  CHECK(eval("-(2 + 3)") == -5);
  CHECK(eval("--4") == 4);
  CHECK(eval("min(3, -2)") == -2);
  CHECK(eval("max(3, -2)") == 3);
  // Python: 7 // 2 == 3, -7 // 2 == -4, 7 // -2 == -4, -7 // -2 == 3;
  //         7 % 3 == 1, -7 % 3 == 2, 7 % -3 == -2, -7 % -3 == -1.
  CHECK(eval("7 // 2") == 3);
  CHECK(eval("-7 // 2") == -4);
  CHECK(eval("7 // -2") == -4);
  CHECK(eval("-7 // -2") == 3);
  CHECK(eval("-8 // 2") == -4);
  CHECK(eval("7 % 3") == 1);
  CHECK(eval("-7 % 3") == 2);
  CHECK(eval("7 % -3") == -2);
  CHECK(eval("-7 % -3") == -1);
  CHECK(eval("-6 % 3") == 0);
  // a == (a // b) * b + a % b for every sign combination.
  for (int64_t a = -9; a <= 9; ++a)
    for (int64_t b : {-4, -3, -1, 1, 2, 5}) {
      std::vector<SymBinding> ab{{"a", a, a}, {"b", b, b}};
      INFO(a << ", " << b);
      int64_t q = eval("a // b", ab), r = eval("a % b", ab);
      CHECK(q * b + r == a);
      CHECK((r == 0 || (r < 0) == (b < 0))); // the remainder takes the divisor's sign
      CHECK((b > 0 ? r < b : r > b));
    }
  // Names take the `lo` of their binding; the first binding of a name wins.
  CHECK(eval("i * 64 + j", {{"i", 3, 3}, {"j", 5, 5}}) == 197);
  CHECK(eval("i", {{"i", 2, 2}, {"i", 9, 9}}) == 2);
}

TEST_CASE("SymExpr errors name the column, the unbound name, the division or the overflow",
          "[ir][symexpr]") {
  CHECK_THAT(parseError(""), Contains("expected a number, a name") && Contains("column 1"));
  CHECK_THAT(parseError("i +"), Contains("bad expression 'i +'") && Contains("column 4"));
  CHECK_THAT(parseError("i / 2"), Contains("expected an operator or the end at column 3"));
  CHECK_THAT(parseError("(i + 1"), Contains("expected ')' at column 7"));
  CHECK_THAT(parseError("min(i 2)"), Contains("expected ',' between the two arguments of min"));
  CHECK_THAT(parseError("max(i, 2"), Contains("expected ')' at column 9"));
  CHECK_THAT(parseError("i ** 2"), Contains("column 4"));
  CHECK_THAT(parseError("2i"), Contains("column 2"));
  CHECK_THAT(parseError("i + $"), Contains("column 5"));
  CHECK_THAT(parseError("99999999999999999999"), Contains("does not fit in 64 bits"));
  CHECK(eval("9223372036854775807") == std::numeric_limits<int64_t>::max());

  CHECK_THAT(evalError("i + j", {{"i", 0, 0}}),
             Contains("'i + j' names 'j', which is not a loop index in scope"));
  CHECK_THAT(evalError("i // (j - 1)", {{"i", 4, 4}, {"j", 1, 1}}),
             Contains("'i // (j - 1)' divides by zero"));
  CHECK_THAT(evalError("i % 0", {{"i", 4, 4}}), Contains("divides by zero"));
  CHECK_THAT(evalError("9223372036854775807 + 1"), Contains("overflows 64 bits"));
  CHECK_THAT(evalError("-9223372036854775807 - 2"), Contains("overflows 64 bits"));
  CHECK_THAT(evalError("4611686018427387904 * 2"), Contains("overflows 64 bits"));
  // INT64_MIN // -1 and -INT64_MIN do not fit either.
  CHECK_THAT(evalError("(-9223372036854775807 - 1) // -1"), Contains("overflows 64 bits"));
  CHECK_THAT(evalError("-(-9223372036854775807 - 1)"), Contains("overflows 64 bits"));
  CHECK(eval("-9223372036854775807 - 1") == std::numeric_limits<int64_t>::min());
}

TEST_CASE("SymExpr bounds enclose every value over the ranges, exactly when they say so",
          "[ir][symexpr]") {
  const std::vector<SymBinding> box{{"i", 0, 7}, {"j", -3, 4}, {"k", 2, 5}};
  // Affine in distinct names: exact, at the corners.
  CHECK(bounds("i * 64 + 8", box) == Range{8, 456});
  CHECK(bounds("i - j", box) == Range{-4, 10});
  CHECK(bounds("-2 * j + 3", box) == Range{-5, 9});
  CHECK(bounds("i // 2", box) == Range{0, 3});
  CHECK(bounds("j // 2", box) == Range{-2, 2});
  CHECK(bounds("j // -2", box) == Range{-2, 1});
  CHECK(bounds("min(i, 3) + max(j, 0)", box) == Range{0, 7});
  CHECK(bounds("7", box) == Range{7, 7});
  // Products of two ranges: the extreme corner products.
  CHECK(bounds("i * j", box) == Range{-21, 28});
  CHECK(bounds("j * k", box) == Range{-15, 20});
  // Modulo by a constant: the input's range when already reduced, else [0, b-1] (or
  // [-(|b|-1), 0] for a negative divisor).
  CHECK(bounds("i % 8", box) == Range{0, 7});
  CHECK(bounds("i % 3", box) == Range{0, 2});
  CHECK(bounds("k % 16", box) == Range{2, 5});
  CHECK(bounds("j % 4", box) == Range{0, 3});
  CHECK(bounds("i % -3", box) == Range{-2, 0});
  CHECK(bounds("i % k", box) == Range{0, 4});
  // Division by a range that does not contain zero.
  CHECK(bounds("i // k", box) == Range{0, 3});
  // No answer: an unbound name, a divisor range containing zero, beyond 64 bits.
  CHECK_FALSE(parse("i + n").bounds(box).has_value());
  CHECK_FALSE(parse("i // j").bounds(box).has_value());
  CHECK_FALSE(parse("i % j").bounds(box).has_value());
  CHECK_FALSE(parse("i * 9223372036854775807 * 2").bounds(box).has_value());

  struct Case {
    const char *text;
    bool exact;
  };
  const Case cases[] = {
      {"i * 64 + 8", true},  {"i - j", true},         {"-2 * j + 3", true},
      {"j // 2", true},      {"min(i, 3)", true},     {"max(i, j) + k", true},
      {"i // 2 * 3", true},  {"7", true},             {"i * j", false},
      {"i - i", false},      {"i + i", false},        {"i % 3", false},
      {"7 % 3 + i", true},   {"12 // k", false},      {"i // k", false},
      {"min(i, j - i)", false},
  };
  for (const Case &c : cases) {
    INFO(c.text);
    SymExpr e = parse(c.text);
    CHECK(e.boundsAreExact() == c.exact);
    // Every enclosure holds; an exact one is attained.
    Range b = bounds(c.text, box), brute = bruteForce(c.text, box);
    CHECK(b.first <= brute.first);
    CHECK(b.second >= brute.second);
    if (c.exact) CHECK(b == brute);
  }
  // A name repeated is only an enclosure: i - i is always 0.
  CHECK(bounds("i - i", box) == Range{-7, 7});
  CHECK(bruteForce("i - i", box) == Range{0, 0});
}

// Regression: bounds() of a constant `%` gave [0, b-1] while boundsAreExact() claimed
// exactness, so `7 % 3 + i` was "exactly" [0, 9] instead of [1, 8] (the verifier
// would call a window out of range that never is).
TEST_CASE("SymExpr bounds of a modulo of constants are its value", "[ir][symexpr]") {
  const std::vector<SymBinding> box{{"i", 0, 7}};
  CHECK(parse("7 % 3 + i").boundsAreExact());
  CHECK(bounds("7 % 3 + i", box) == Range{1, 8});
  CHECK(bounds("-7 % 3", box) == Range{2, 2});
  CHECK(bounds("7 % -3", box) == Range{-2, -2});
}

// Regression: bounds() divided INT64_MIN by -1 in 64 bits (a SIGFPE that killed
// ptoc-opt on a loop starting at INT64_MIN with an offset `b // -1`), and took
// std::abs of an INT64_MIN divisor.
TEST_CASE("SymExpr bounds at the edges of 64 bits give up instead of trapping",
          "[ir][symexpr]") {
  const int64_t kMin = std::numeric_limits<int64_t>::min();
  const int64_t kMax = std::numeric_limits<int64_t>::max();
  const std::vector<SymBinding> low{{"b", kMin, kMin + 5}}, high{{"b", kMax - 5, kMax}};
  CHECK_FALSE(parse("b // -1").bounds(low).has_value()); // -INT64_MIN does not fit
  CHECK(bounds("b // -1", high) == Range{-kMax, -(kMax - 5)});
  CHECK(bounds("b // 2", low) == Range{kMin / 2, kMin / 2 + 2});
  // A negative divisor range reaching INT64_MIN: [-(2^63 - 1), 0].
  CHECK(bounds("3 % b", low) == Range{kMin + 1, 0});
  CHECK(bounds("b % 8", low) == Range{0, 7});
}
