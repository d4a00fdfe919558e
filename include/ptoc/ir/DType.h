// Element types of ptoc tensors and tiles: names, sizes, integer ranges, and value
// rounding.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace ptoc::ir {

/// Element type of a tensor or tile. New types are appended: a type's value enters
/// structural hashes, which key the knowledge bank's records.
enum class DType : uint8_t { F32, F16, BF16, I8, I32, I64, Bool, I16, U8, U16, U32, U64 };

inline constexpr DType kAllDTypes[] = {DType::F32, DType::F16, DType::BF16, DType::I8,
                                      DType::I32, DType::I64, DType::Bool, DType::I16,
                                      DType::U8,  DType::U16, DType::U32, DType::U64};

/// Size of one element in bytes (bool: one byte holding 0 or 1).
constexpr unsigned elementSize(DType t) {
  switch (t) {
  case DType::F32: return 4;
  case DType::F16: return 2;
  case DType::BF16: return 2;
  case DType::I8: return 1;
  case DType::I32: return 4;
  case DType::I64: return 8;
  case DType::Bool: return 1;
  case DType::I16: return 2;
  case DType::U8: return 1;
  case DType::U16: return 2;
  case DType::U32: return 4;
  case DType::U64: return 8;
  }
  return 0;
}

constexpr bool isFloat(DType t) {
  return t == DType::F32 || t == DType::F16 || t == DType::BF16;
}
/// Integer types, bool included (it holds 0 or 1).
constexpr bool isInteger(DType t) { return !isFloat(t); }
constexpr bool isUnsigned(DType t) {
  return t == DType::Bool || t == DType::U8 || t == DType::U16 || t == DType::U32 ||
         t == DType::U64;
}
/// Whether an operand of type `t` may hold indices (gather's index tensor): any
/// integer type. Index handling goes through this and runtime::readIndex, so a new
/// integer type needs no change per op.
constexpr bool isIndexDType(DType t) { return isInteger(t); }

/// The smallest and the largest value of an integer type (bool: 0 and 1).
constexpr int64_t intMin(DType t) {
  if (isUnsigned(t)) return 0;
  switch (t) {
  case DType::I8: return INT8_MIN;
  case DType::I16: return INT16_MIN;
  case DType::I32: return INT32_MIN;
  default: return INT64_MIN;
  }
}
constexpr uint64_t intMax(DType t) {
  switch (t) {
  case DType::Bool: return 1;
  case DType::I8: return INT8_MAX;
  case DType::U8: return UINT8_MAX;
  case DType::I16: return INT16_MAX;
  case DType::U16: return UINT16_MAX;
  case DType::I32: return INT32_MAX;
  case DType::U32: return UINT32_MAX;
  case DType::I64: return INT64_MAX;
  default: return UINT64_MAX;
  }
}

/// The text spelling used by the IR: f32, f16, bf16, i8, i16, i32, i64, u8, u16, u32,
/// u64, bool.
std::string_view dtypeName(DType t);

/// Parses a text spelling; nullopt if it is not one.
std::optional<DType> parseDType(std::string_view name);

/// Every spelling, comma-separated, for error messages ("f32, f16, ...").
std::string_view dtypeNamesText();

/// Rounds `v` to the nearest value representable in `t`, as a default cast would:
/// round-to-nearest-even for floats; for integers NaN becomes 0, then truncation
/// toward zero and saturation to the type's range; for bool any nonzero value
/// (NaN included) is 1, as numpy and torch convert. Integers beyond 2^53 in
/// magnitude are not all doubles: this rounding is exact only within +-2^53.
double roundToDType(double v, DType t);

} // namespace ptoc::ir
