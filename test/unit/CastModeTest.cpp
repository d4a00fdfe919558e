// Integer dtypes' ranges and the cast conversion of every rounding mode and
// saturation setting (ir::castValue and its parts), against hand-derived values.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "ptoc/ir/CastMode.h"

using namespace ptoc::ir;

TEST_CASE("new dtypes: sizes, names, ranges", "[types][cast]") {
  CHECK(elementSize(DType::I64) == 8);
  CHECK(elementSize(DType::Bool) == 1);
  CHECK(elementSize(DType::I16) == 2);
  CHECK(elementSize(DType::U8) == 1);
  CHECK(elementSize(DType::U16) == 2);
  CHECK(elementSize(DType::U32) == 4);
  CHECK(elementSize(DType::U64) == 8);
  CHECK(dtypeName(DType::Bool) == "bool");
  CHECK(dtypeName(DType::U64) == "u64");
  CHECK(parseDType("i16") == DType::I16);
  // The first five keep their values: they enter structural hashes (bank keys).
  CHECK(static_cast<int>(DType::I32) == 4);
  CHECK(static_cast<int>(DType::U64) == 11);
  CHECK(intMin(DType::I16) == -32768);
  CHECK(intMax(DType::U16) == 65535);
  CHECK(intMin(DType::U64) == 0);
  CHECK(intMax(DType::U64) == std::numeric_limits<uint64_t>::max());
  CHECK(intMax(DType::Bool) == 1);
  CHECK(isUnsigned(DType::U8));
  CHECK_FALSE(isUnsigned(DType::I64));
  CHECK(dtypeNamesText() == "f32, f16, bf16, i8, i32, i64, bool, i16, u8, u16, u32, u64");
}

TEST_CASE("default rounding to the new integer types", "[types][cast]") {
  CHECK(roundToDType(-1.0, DType::U8) == 0.0);
  CHECK(roundToDType(300.0, DType::U8) == 255.0);
  CHECK(roundToDType(40000.0, DType::I16) == 32767.0);
  CHECK(roundToDType(-7.9, DType::I64) == -7.0);
  CHECK(roundToDType(0.25, DType::Bool) == 1.0); // nonzero is true
  CHECK(roundToDType(-2.0, DType::Bool) == 1.0);
  CHECK(roundToDType(0.0, DType::Bool) == 0.0);
  CHECK(roundToDType(std::nan(""), DType::Bool) == 1.0);
  CHECK(roundToDType(std::nan(""), DType::U32) == 0.0);
}

TEST_CASE("cast mode names", "[cast]") {
  for (CastMode m : kAllCastModes) CHECK(parseCastMode(castModeName(m)) == m);
  CHECK_FALSE(parseCastMode("nearest").has_value());
  CHECK(castModeNamesText() == "rint, round, floor, ceil, trunc, odd");
  CHECK(defaultCastMode(DType::F32, DType::I32) == CastMode::Trunc);
  CHECK(defaultCastMode(DType::F32, DType::F16) == CastMode::Rint);
  CHECK(defaultCastMode(DType::I32, DType::F32) == CastMode::Rint);
}

TEST_CASE("float to integer: each mode", "[cast]") {
  struct Case {
    double v;
    double rint, round, floor, ceil, trunc, odd;
  };
  const Case cases[] = {
      {2.5, 2, 3, 2, 3, 2, 3},     {-2.5, -2, -3, -3, -2, -2, -3}, {3.5, 4, 4, 3, 4, 3, 3},
      {2.25, 2, 2, 2, 3, 2, 3},    {-0.75, -1, -1, -1, 0, 0, -1},  {4.0, 4, 4, 4, 4, 4, 4},
  };
  for (const Case &c : cases) {
    INFO("v = " << c.v);
    CHECK(castValue(c.v, DType::F32, DType::I32, CastMode::Rint, true) == c.rint);
    CHECK(castValue(c.v, DType::F32, DType::I32, CastMode::Round, true) == c.round);
    CHECK(castValue(c.v, DType::F32, DType::I32, CastMode::Floor, true) == c.floor);
    CHECK(castValue(c.v, DType::F32, DType::I32, CastMode::Ceil, true) == c.ceil);
    CHECK(castValue(c.v, DType::F32, DType::I32, CastMode::Trunc, true) == c.trunc);
    CHECK(castValue(c.v, DType::F32, DType::I32, CastMode::Odd, true) == c.odd);
  }
  CHECK(castValue(std::nan(""), DType::F32, DType::I16, CastMode::Round, false) == 0.0);
}

TEST_CASE("saturating and wrapping integer results", "[cast]") {
  // PyPTO's documented example: f16 300, -300 to i8 give 127, -128 saturating and
  // 44, -44 wrapping (300 = 256 + 44).
  CHECK(castValue(300.0, DType::F16, DType::I8, CastMode::Trunc, true) == 127.0);
  CHECK(castValue(-300.0, DType::F16, DType::I8, CastMode::Trunc, true) == -128.0);
  CHECK(castValue(300.0, DType::F16, DType::I8, CastMode::Trunc, false) == 44.0);
  CHECK(castValue(-300.0, DType::F16, DType::I8, CastMode::Trunc, false) == -44.0);
  CHECK(castValue(200.0, DType::I32, DType::I8, CastMode::Rint, false) == -56.0);
  CHECK(castValue(-1.0, DType::I32, DType::U16, CastMode::Rint, false) == 65535.0);
  CHECK(castValue(-1.0, DType::I32, DType::U16, CastMode::Rint, true) == 0.0);
  CHECK(castValue(70000.0, DType::I32, DType::U16, CastMode::Rint, false) == 70000.0 - 65536.0);
  // 2^64 + 2^12 wraps to 2^12 in u64 and i64; infinity saturates even when wrapping.
  double big = std::ldexp(1.0, 64) + 4096.0;
  CHECK(castValue(big, DType::F32, DType::U64, CastMode::Trunc, false) == 4096.0);
  CHECK(castValue(big, DType::F32, DType::I64, CastMode::Trunc, false) == 4096.0);
  double inf = std::numeric_limits<double>::infinity();
  CHECK(castValue(inf, DType::F32, DType::I8, CastMode::Trunc, false) == 127.0);
  CHECK(castValue(-inf, DType::F32, DType::I8, CastMode::Trunc, false) == -128.0);
  // bool is nonzero either way.
  CHECK(castValue(256.0, DType::I32, DType::Bool, CastMode::Rint, false) == 1.0);
  CHECK(castValue(0.0, DType::F32, DType::Bool, CastMode::Rint, false) == 0.0);
}

TEST_CASE("float to narrower float: each mode", "[cast]") {
  // f16 has 10 mantissa bits: between 1 and 2 its spacing is 2^-10.
  double ulp = std::ldexp(1.0, -10);
  double x = 1.0 + ulp / 4;         // nearer to 1
  double half = 1.0 + ulp / 2;      // a tie between 1 and 1 + ulp (1 is even)
  CHECK(roundToFloat(x, DType::F16, CastMode::Rint) == 1.0);
  CHECK(roundToFloat(x, DType::F16, CastMode::Ceil) == 1.0 + ulp);
  CHECK(roundToFloat(x, DType::F16, CastMode::Floor) == 1.0);
  CHECK(roundToFloat(-x, DType::F16, CastMode::Floor) == -1.0 - ulp);
  CHECK(roundToFloat(-x, DType::F16, CastMode::Trunc) == -1.0);
  CHECK(roundToFloat(half, DType::F16, CastMode::Rint) == 1.0);
  CHECK(roundToFloat(half, DType::F16, CastMode::Round) == 1.0 + ulp);
  CHECK(roundToFloat(x, DType::F16, CastMode::Odd) == 1.0 + ulp); // 1.0's last bit is 0
  CHECK(roundToFloat(1.0 + ulp + ulp / 4, DType::F16, CastMode::Odd) == 1.0 + ulp);
  CHECK(roundToFloat(1.0, DType::F16, CastMode::Odd) == 1.0); // exact stays
  // Beyond the largest f16 (65504): toward-zero modes stop at it, others overflow.
  CHECK(roundToFloat(70000.0, DType::F16, CastMode::Trunc) == 65504.0);
  CHECK(roundToFloat(70000.0, DType::F16, CastMode::Floor) == 65504.0);
  CHECK(std::isinf(roundToFloat(70000.0, DType::F16, CastMode::Ceil)));
  CHECK(roundToFloat(-70000.0, DType::F16, CastMode::Ceil) == -65504.0);
  CHECK(std::isinf(roundToFloat(70000.0, DType::F16, CastMode::Round)));
  CHECK(roundToFloat(65519.0, DType::F16, CastMode::Ceil) == std::numeric_limits<double>::infinity());
  // Subnormals: f16's smallest is 2^-24.
  double tiny = std::ldexp(1.0, -24);
  CHECK(roundToFloat(tiny * 0.25, DType::F16, CastMode::Ceil) == tiny);
  CHECK(roundToFloat(tiny * 0.25, DType::F16, CastMode::Floor) == 0.0);
  // bf16 (7 mantissa bits) and f32.
  CHECK(roundToFloat(1.0 + std::ldexp(1.0, -9), DType::BF16, CastMode::Ceil) == 1.0 + std::ldexp(1.0, -7));
  CHECK(roundToFloat(1.0 + std::ldexp(1.0, -30), DType::F32, CastMode::Ceil) == 1.0 + std::ldexp(1.0, -23));
  CHECK(std::isnan(roundToFloat(std::nan(""), DType::F16, CastMode::Floor)));
}

TEST_CASE("integer to float: modes on inexact values", "[cast]") {
  // 2^24 + 1 is between the f32 values 2^24 and 2^24 + 2.
  double v = 16777217.0;
  CHECK(castValue(v, DType::I32, DType::F32, CastMode::Rint, true) == 16777216.0);
  CHECK(castValue(v, DType::I32, DType::F32, CastMode::Ceil, true) == 16777218.0);
  CHECK(castValue(v, DType::I32, DType::F32, CastMode::Round, true) == 16777218.0);
  CHECK(castValue(v, DType::I32, DType::F32, CastMode::Odd, true) == 16777218.0);
  CHECK(castValue(-v, DType::I32, DType::F32, CastMode::Floor, true) == -16777218.0);
}

TEST_CASE("ties-away rounding near the largest f16 stays finite", "[cast]") {
  // Regression: 65510 is nearer 65504 than the next step (65536 = overflow), so
  // round (ties away) must give 65504, not infinity.
  CHECK(roundToFloat(65510.0, DType::F16, CastMode::Round) == 65504.0);
  CHECK(std::isinf(roundToFloat(65520.0, DType::F16, CastMode::Round)));
  CHECK(roundToFloat(65520.0, DType::F16, CastMode::Odd) == 65504.0);
}
