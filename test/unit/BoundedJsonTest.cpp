// Unit tests for support::parseJson: the depth and size limits (checked before the
// recursive parser runs), number range, and errors naming the source and position.
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <string>

#include "ptoc/support/BoundedJson.h"
#include "ptoc/support/TextPosition.h"

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using ptoc::support::JsonLimits;
using ptoc::support::kMaxJsonDepth;
using ptoc::support::parseJson;

namespace {

std::string errorOf(const std::string &text, const JsonLimits &limits = {}) {
  absl::StatusOr<llvm::json::Value> v = parseJson(text, "in.json", limits);
  REQUIRE_FALSE(v.ok());
  CHECK(v.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(v.status().message());
}

std::string nested(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

} // namespace

TEST_CASE("parseJson: deep nesting is an error, not a stack overflow", "[support]") {
  // The reproduction: 40,000 levels segfaulted every llvm::json reader.
  std::string msg = errorOf(nested(40000));
  CHECK_THAT(msg, StartsWith("in.json: JSON nested deeper than 64 levels at line 1 column 65"));
  CHECK_THAT(msg, Contains("check that this is the file you meant"));
  // The depth of ptoc's own files, as BoundedJson.h and docs/reliability.md state it.
  CHECK_THAT(msg, Contains("no ptoc file nests more than 5)"));
  // Far deeper than any stack: the scan is linear and never recurses.
  CHECK_THAT(errorOf(std::string(20'000'000, '{')), Contains("nested deeper than 64"));
  // Objects count as levels too, and the position is on the right line.
  std::string objects = "{\"a\":\n";
  for (int i = 0; i < kMaxJsonDepth; ++i) objects += "{\"a\":";
  CHECK_THAT(errorOf(objects), Contains("at line 2 column 316"));
}

TEST_CASE("parseJson: the depth limit is exact and brackets in strings do not count",
          "[support]") {
  CHECK(parseJson(nested(kMaxJsonDepth), "in.json").ok());
  CHECK_THAT(errorOf(nested(kMaxJsonDepth + 1)), Contains("nested deeper than 64"));
  std::string inString = "[\"" + std::string(1000, '[') + "\\\"" + std::string(1000, '{') + "\"]";
  absl::StatusOr<llvm::json::Value> v = parseJson(inString, "in.json");
  REQUIRE(v.ok());
  CHECK(v->getAsArray()->front().getAsString()->size() == 2001);
  // A caller may lower (or raise) the limit.
  CHECK_THAT(errorOf(nested(3), JsonLimits{2, ptoc::support::kMaxJsonBytes}),
             Contains("nested deeper than 2 levels at line 1 column 3"));
}

TEST_CASE("parseJson: the size limit", "[support]") {
  JsonLimits small{kMaxJsonDepth, 16};
  CHECK(parseJson("[1,2,3,4,5,6,7]", "in.json", small).ok()); // 15 bytes
  CHECK_THAT(errorOf("[1,2,3,4,5,6,7,8]", small),
             Contains("in.json: JSON text of 17 bytes is over the limit of 16 bytes"));
}

TEST_CASE("parseJson: syntax errors name the source, line and column", "[support]") {
  CHECK_THAT(errorOf("{\n  \"a\": 1,\n  \"b\" 2\n}"),
             StartsWith("in.json: invalid JSON at line 3 column 7: Expected : after object key"));
  // Without a source (the caller's message names the input) there is no prefix.
  absl::StatusOr<llvm::json::Value> v = parseJson("[1,", "");
  REQUIRE_FALSE(v.ok());
  CHECK_THAT(std::string(v.status().message()), StartsWith("invalid JSON at line 1 column"));
}

TEST_CASE("parseJson: integers beyond int64 are read as doubles, not clamped", "[support]") {
  // llvm::json alone reads 9223372036854775808 (2^63) as 9223372036854775807.
  absl::StatusOr<llvm::json::Value> v =
      parseJson("{\"a\": 9223372036854775808, \"b\": -9223372036854775809, "
                "\"c\": 100000000000000000000000, \"d\": 9223372036854775807, "
                "\"e\": -9223372036854775808, \"f\": 12}",
                "in.json");
  REQUIRE(v.ok());
  const llvm::json::Object &o = *v->getAsObject();
  CHECK_FALSE(ptoc::support::jsonInteger(o, "a"));
  CHECK(*o.getNumber("a") == 9223372036854775808.0);
  CHECK(*o.getNumber("b") == -9223372036854775808.0);
  CHECK(*o.getNumber("c") == 1e23);
  CHECK(*ptoc::support::jsonInteger(o, "d") == std::numeric_limits<int64_t>::max());
  CHECK(*ptoc::support::jsonInteger(o, "e") == std::numeric_limits<int64_t>::min());
  CHECK(*ptoc::support::jsonInteger(o, "f") == 12);
  // A syntax error after a wide integer is still reported at its original position.
  CHECK_THAT(errorOf("[99999999999999999999999, }"), Contains("at line 1 column 27"));
}

TEST_CASE("jsonInteger: exact integers only, 2^63 included", "[support]") {
  using ptoc::support::jsonInteger;
  CHECK(*jsonInteger(llvm::json::Value(3.0)) == 3);
  CHECK_FALSE(jsonInteger(llvm::json::Value(3.5)));
  CHECK_FALSE(jsonInteger(llvm::json::Value("3")));
  // llvm::json's getAsInteger converts the double 2^63 to int64 (undefined behaviour).
  CHECK_FALSE(jsonInteger(llvm::json::Value(9223372036854775808.0)));
  CHECK_FALSE(jsonInteger(llvm::json::Value(1e300)));
  CHECK(*jsonInteger(llvm::json::Value(-9223372036854775808.0)) ==
        std::numeric_limits<int64_t>::min());
  CHECK(*jsonInteger(llvm::json::Value(std::numeric_limits<int64_t>::max())) ==
        std::numeric_limits<int64_t>::max());
  CHECK_FALSE(jsonInteger(llvm::json::Object{}, "absent"));
}

TEST_CASE("parseJson: a number beyond the range of a double is an error", "[support]") {
  CHECK_THAT(errorOf("{\"a\": 1e999}"),
             Contains("in.json: number 1e999 at line 1 column 7 is beyond the range of a double"));
  CHECK_THAT(errorOf("[-" + std::string(400, '9') + ".5]"),
             Contains("number -99999999999999999999... at line 1 column 2"));
  // An integer too wide for a double (400 digits) is the same error, not infinity.
  CHECK_THAT(errorOf("[" + std::string(400, '9') + "]"),
             Contains("number 999999999999999999999... at line 1 column 2 is beyond"));
  absl::StatusOr<llvm::json::Value> tiny = parseJson("[1e-999, 1.5e308]", "in.json");
  REQUIRE(tiny.ok());
  CHECK(*(*tiny->getAsArray())[0].getAsNumber() == 0);
}

TEST_CASE("parseJson: numbers start where llvm::json starts them", "[support]") {
  // llvm::json reads '.5' and '+5' as numbers; the digits after the '.' are not an
  // integer of their own to widen (found by fuzz-device: an internal error).
  absl::StatusOr<llvm::json::Value> v =
      parseJson("{\"a\": .10000689467016682260, \"b\": +7, \"c\": true}", "in.json");
  REQUIRE(v.ok());
  const llvm::json::Object &o = *v->getAsObject();
  CHECK(*o.getNumber("a") == 0.10000689467016682260);
  CHECK(*ptoc::support::jsonInteger(o, "b") == 7);
  CHECK(*o.getBoolean("c"));
}

TEST_CASE("positionOf: 1-based line and column of a byte offset", "[support]") {
  llvm::StringRef text = "ab\ncd\n";
  CHECK(ptoc::support::positionOf(text, 0).line == 1);
  CHECK(ptoc::support::positionOf(text, 4).line == 2);
  CHECK(ptoc::support::positionOf(text, 4).column == 2);
  CHECK(ptoc::support::positionOf(text, 100).offset == 6); // clamped to the end
}
