// The two kinds of AI core on an Ascend-style die: cube (AIC) and vector (AIV).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace ptoc::target {

/// Which core kind runs an operation. `None` for ops that move no data by themselves
/// (function returns) or that are decided later.
enum class CoreKind : uint8_t { None, AIC, AIV };

constexpr std::string_view coreKindName(CoreKind k) {
  switch (k) {
  case CoreKind::AIC: return "aic";
  case CoreKind::AIV: return "aiv";
  case CoreKind::None: return "none";
  }
  return "none";
}

inline std::optional<CoreKind> parseCoreKind(std::string_view s) {
  if (s == "aic") return CoreKind::AIC;
  if (s == "aiv") return CoreKind::AIV;
  if (s == "none") return CoreKind::None;
  return std::nullopt;
}

} // namespace ptoc::target
