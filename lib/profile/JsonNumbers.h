// Internal to lib/profile: writing numbers into llvm::json::OStream with a fixed
// number of decimals. OStream prints doubles with 17 significant digits
// ("12.300000000000001"), which bloats a million-event trace and makes summaries
// unreadable; these helpers print exactly what was meant.
#pragma once

#include <cmath>
#include <cstdint>

#include "absl/strings/str_format.h"
#include "llvm/Support/JSON.h"

namespace ptoc::profile {

/// Nanoseconds as microseconds with exactly three decimals ("12.345"): the trace's
/// timestamp unit, exact for every integer nanosecond.
inline void writeNsAsUs(llvm::json::OStream &json, int64_t ns) {
  json.rawValue([&](llvm::raw_ostream &os) {
    if (ns < 0) {
      os << '-';
      ns = -ns;
    }
    os << absl::StrFormat("%d.%03d", ns / 1000, ns % 1000);
  });
}

/// `value` rounded to `decimals` decimals, trailing zeros dropped ("0.25", "3");
/// null when it is not finite (JSON has no NaN or infinity).
inline void writeFixed(llvm::json::OStream &json, double value, int decimals) {
  if (!std::isfinite(value)) {
    json.value(nullptr);
    return;
  }
  std::string text = absl::StrFormat("%.*f", decimals, value);
  if (text.find('.') != std::string::npos) {
    while (text.back() == '0') text.pop_back();
    if (text.back() == '.') text.pop_back();
  }
  if (text == "-0") text = "0";
  json.rawValue(text);
}

/// Decimals for times in microseconds (nanosecond resolution) and for ratios.
inline constexpr int kUsDecimals = 3;
inline constexpr int kRatioDecimals = 4;

} // namespace ptoc::profile
