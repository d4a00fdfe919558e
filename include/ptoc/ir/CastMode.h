// How a cast rounds and how it treats values outside the target integer range: the
// `mode` and `saturate` attributes of the cast op, and the scalar conversion they
// define (shared by the constant folder, the reference evaluator and the executor).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "ptoc/ir/DType.h"

namespace ptoc::ir {

/// Rounding of a cast whose exact result the target type cannot hold (PyPTO's
/// CastMode without CAST_NONE, which is the absence of the attribute).
enum class CastMode : uint8_t {
  Rint,  ///< to nearest, ties to even
  Round, ///< to nearest, ties away from zero
  Floor, ///< toward -inf
  Ceil,  ///< toward +inf
  Trunc, ///< toward zero
  Odd,   ///< an inexact result takes whichever neighbour has an odd last digit
};

inline constexpr CastMode kAllCastModes[] = {CastMode::Rint,  CastMode::Round, CastMode::Floor,
                                             CastMode::Ceil,  CastMode::Trunc, CastMode::Odd};

/// The attribute spelling: rint, round, floor, ceil, trunc, odd.
std::string_view castModeName(CastMode m);
std::optional<CastMode> parseCastMode(std::string_view name);
/// "rint, round, floor, ceil, trunc, odd", for error messages.
std::string_view castModeNamesText();

/// The mode a cast without a `mode` attribute uses: trunc from a float to an integer
/// type, rint otherwise (PyPTO's defaults).
constexpr CastMode defaultCastMode(DType from, DType to) {
  return isFloat(from) && isInteger(to) ? CastMode::Trunc : CastMode::Rint;
}

/// Rounds a real `v` to an integral value with `m`.
double roundIntegral(double v, CastMode m);

/// Rounds `v` (a finite or infinite double, or NaN) to the float type `t` with `m`:
/// the two neighbours of `v` in `t` (an infinity beyond the largest finite value) are
/// found exactly, and `m` picks one. NaN stays NaN.
double roundToFloat(double v, DType t, CastMode m);

/// Brings an integral value `r` (a double, any magnitude) into integer type `t`:
/// saturating clamps it to the range; wrapping keeps its low bits (two's complement,
/// as the hardware's truncating conversion). bool takes nonzero as 1 either way.
/// ±inf saturates even when wrapping (it has no low bits); the caller maps NaN to 0.
double fitInteger(double r, DType t, bool saturate);

/// The value `v` of type `from` cast to `to` with `m` and `saturate` (see
/// docs/ir.md "cast"): float -> int rounds with `m` then fits (NaN: 0, bool: nonzero
/// is 1); int or float -> float rounds with `m` (int sources are exact only within
/// +-2^53 through a double); int -> int fits. Exact for every float source.
double castValue(double v, DType from, DType to, CastMode m, bool saturate);

} // namespace ptoc::ir
