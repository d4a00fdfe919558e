// Element type names and rounding of scalar values to an element type.
#include "ptoc/ir/DType.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

namespace ptoc::ir {

std::string_view dtypeName(DType t) {
  switch (t) {
  case DType::F32: return "f32";
  case DType::F16: return "f16";
  case DType::BF16: return "bf16";
  case DType::I8: return "i8";
  case DType::I32: return "i32";
  case DType::I64: return "i64";
  case DType::Bool: return "bool";
  case DType::I16: return "i16";
  case DType::U8: return "u8";
  case DType::U16: return "u16";
  case DType::U32: return "u32";
  case DType::U64: return "u64";
  }
  return "?";
}

std::string_view dtypeNamesText() {
  static const std::string text = [] {
    std::string s;
    for (DType t : kAllDTypes) {
      if (!s.empty()) s += ", ";
      s += dtypeName(t);
    }
    return s;
  }();
  return text;
}

std::optional<DType> parseDType(std::string_view name) {
  for (DType t : kAllDTypes)
    if (dtypeName(t) == name) return t;
  return std::nullopt;
}

namespace {

// Rounds a float to `mantBits` explicit mantissa bits with exponent range of
// (bias, minExp), round-to-nearest-even, handling subnormals and overflow to inf.
double roundFloat(double v, int mantBits, int maxExp, int minNormalExp) {
  if (std::isnan(v) || std::isinf(v) || v == 0) return v;
  int exp;
  std::frexp(v, &exp); // v = m * 2^exp, 0.5 <= |m| < 1
  int e = exp - 1;     // v = 1.f * 2^e
  if (e > maxExp) return std::copysign(std::numeric_limits<double>::infinity(), v);
  int shift = (e < minNormalExp ? minNormalExp : e) - mantBits;
  double scaled = std::ldexp(v, -shift);
  double r = std::nearbyint(scaled); // ties-to-even under the default rounding mode
  double out = std::ldexp(r, shift);
  int outExp;
  std::frexp(out, &outExp);
  if (outExp - 1 > maxExp) return std::copysign(std::numeric_limits<double>::infinity(), v);
  return out;
}

} // namespace

double roundToDType(double v, DType t) {
  switch (t) {
  case DType::F32: return static_cast<double>(static_cast<float>(v));
  case DType::F16: return roundFloat(v, 10, 15, -14);
  case DType::BF16: return roundFloat(static_cast<float>(v), 7, 127, -126);
  case DType::Bool: return v != 0 || std::isnan(v) ? 1.0 : 0.0;
  default: {
    if (std::isnan(v)) return 0;
    // The bounds as doubles: 2^63 - 1 and 2^64 - 1 round up to 2^63 and 2^64, which
    // HostTensor::set clamps when it stores them.
    double lo = static_cast<double>(intMin(t)), hi = static_cast<double>(intMax(t));
    double r = std::trunc(v);
    return r < lo ? lo : (r > hi ? hi : r);
  }
  }
}

} // namespace ptoc::ir
