// The cube's FIXPIPE epilogue: what a matmul applies to its accumulator on the way
// from L0C to GM (PyPTO's matmul extend_params 'scale' and 'relu_type').
#pragma once

#include <optional>

#include "ptoc/ir/Attribute.h"
#include "ptoc/ir/DType.h"

namespace ptoc::ir {

class Operation;

/// A matmul's (or its L0C copy_out's) epilogue: an optional per-tensor scale
/// (dequantisation of an i32 accumulator to f16/bf16) and an optional ReLU.
struct FixpipeEpilogue {
  std::optional<double> scale; ///< the `scale` attribute as written
  bool relu = false;           ///< the `relu` attribute

  /// The epilogue of an op's `scale` / `relu` attributes (none when absent).
  static FixpipeEpilogue of(const Operation &op);
  static FixpipeEpilogue of(Attribute attrs);
  bool empty() const { return !scale && !relu; }

  /// The scale the FIXPIPE multiplies by: the f32 value of `scale` with only its
  /// sign, 8 exponent bits and the top 10 mantissa bits kept (the rest cleared),
  /// as PyPTO documents for 'scale'.
  static float effectiveScale(double scale);

  /// One accumulator element `acc` (an f32 or i32 value) written as `out`: converted
  /// to f32 (round to nearest even), times effectiveScale in f32 when scaled, then
  /// max(x, 0) for relu, then rounded to `out`.
  double apply(double acc, DType out) const;
};

} // namespace ptoc::ir
