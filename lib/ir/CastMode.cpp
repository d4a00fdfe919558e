// Cast rounding modes and saturation: names and the scalar conversion.
#include "ptoc/ir/CastMode.h"

#include <cmath>
#include <limits>
#include <string>

namespace ptoc::ir {

std::string_view castModeName(CastMode m) {
  switch (m) {
  case CastMode::Rint: return "rint";
  case CastMode::Round: return "round";
  case CastMode::Floor: return "floor";
  case CastMode::Ceil: return "ceil";
  case CastMode::Trunc: return "trunc";
  case CastMode::Odd: return "odd";
  }
  return "?";
}

std::optional<CastMode> parseCastMode(std::string_view name) {
  for (CastMode m : kAllCastModes)
    if (castModeName(m) == name) return m;
  return std::nullopt;
}

std::string_view castModeNamesText() {
  static const std::string text = [] {
    std::string s;
    for (CastMode m : kAllCastModes) {
      if (!s.empty()) s += ", ";
      s += castModeName(m);
    }
    return s;
  }();
  return text;
}

double roundIntegral(double v, CastMode m) {
  switch (m) {
  case CastMode::Rint: return std::nearbyint(v); // ties to even in the default mode
  case CastMode::Round: return std::round(v);
  case CastMode::Floor: return std::floor(v);
  case CastMode::Ceil: return std::ceil(v);
  case CastMode::Trunc: return std::trunc(v);
  case CastMode::Odd: {
    double t = std::trunc(v);
    if (t != v && std::fmod(t, 2.0) == 0) t += std::copysign(1.0, v);
    return t;
  }
  }
  return v;
}

namespace {

struct FloatFormat {
  int mantBits, maxExp, minNormalExp;
};

FloatFormat formatOf(DType t) {
  switch (t) {
  case DType::F16: return {10, 15, -14};
  case DType::BF16: return {7, 127, -126};
  default: return {23, 127, -126};
  }
}

} // namespace

double roundToFloat(double v, DType t, CastMode m) {
  // rint is the default rounding every other part of ptoc uses: one definition.
  if (m == CastMode::Rint) return roundToDType(v, t);
  if (std::isnan(v) || std::isinf(v) || v == 0) return v;
  FloatFormat f = formatOf(t);
  const double inf = std::numeric_limits<double>::infinity();
  double largest = std::ldexp(2.0 - std::ldexp(1.0, -f.mantBits), f.maxExp);
  // Whether m rounds a value of v's sign toward zero: a result beyond the largest finite
  // value is then that value, not infinity (odd too: the largest value's last bit is 1).
  bool towardZero = m == CastMode::Trunc || m == CastMode::Odd ||
                    (m == CastMode::Floor && v > 0) || (m == CastMode::Ceil && v < 0);
  int exp;
  std::frexp(v, &exp);
  int e = exp - 1;
  int shift = (e < f.minNormalExp ? f.minNormalExp : e) - f.mantBits;
  // v * 2^-shift has at most 53 significant bits: exact; its integral rounding is the
  // rounded significand.
  double out = std::ldexp(roundIntegral(std::ldexp(v, -shift), m), shift);
  if (std::fabs(out) > largest) return std::copysign(towardZero ? largest : inf, v);
  return out;
}

double fitInteger(double r, DType t, bool saturate) {
  if (t == DType::Bool) return r != 0 ? 1.0 : 0.0;
  if (saturate || std::isinf(r)) return roundToDType(r, t);
  double modulus = std::ldexp(1.0, int(elementSize(t)) * 8);
  double low = std::fmod(r, modulus); // exact
  if (low < 0) low += modulus;
  if (!isUnsigned(t) && low >= modulus / 2) low -= modulus;
  return low;
}

double castValue(double v, DType from, DType to, CastMode m, bool saturate) {
  if (isFloat(to)) return roundToFloat(v, to, m);
  if (to == DType::Bool) return v != 0 || std::isnan(v) ? 1.0 : 0.0;
  if (std::isnan(v)) return 0;
  return fitInteger(isFloat(from) ? roundIntegral(v, m) : v, to, saturate);
}

} // namespace ptoc::ir
