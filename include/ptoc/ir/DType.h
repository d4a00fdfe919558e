// Element types of ptoc tensors and tiles: names, sizes, and value rounding.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace ptoc::ir {

/// Element type of a tensor or tile.
enum class DType : uint8_t { F32, F16, BF16, I8, I32 };

inline constexpr DType kAllDTypes[] = {DType::F32, DType::F16, DType::BF16, DType::I8,
                                      DType::I32};

/// Size of one element in bytes.
constexpr unsigned elementSize(DType t) {
  switch (t) {
  case DType::F32: return 4;
  case DType::F16: return 2;
  case DType::BF16: return 2;
  case DType::I8: return 1;
  case DType::I32: return 4;
  }
  return 0;
}

constexpr bool isFloat(DType t) {
  return t == DType::F32 || t == DType::F16 || t == DType::BF16;
}
constexpr bool isInteger(DType t) { return !isFloat(t); }
/// Whether an operand of type `t` may hold indices (gather's index tensor): any
/// integer type. Index handling goes through this and runtime::readIndex, so a new
/// integer type needs no change per op.
constexpr bool isIndexDType(DType t) { return isInteger(t); }

/// The text spelling used by the IR: f32, f16, bf16, i8, i32.
std::string_view dtypeName(DType t);

/// Parses a text spelling; nullopt if it is not one.
std::optional<DType> parseDType(std::string_view name);

/// Rounds `v` to the nearest value representable in `t` (round-to-nearest-even for
/// floats, saturating truncation toward zero for integers, as a cast would).
double roundToDType(double v, DType t);

} // namespace ptoc::ir
