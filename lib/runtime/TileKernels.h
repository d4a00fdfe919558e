// The numeric kernels of the executor: one planned compute op of a leaf (elementwise
// with broadcasting, cast, reductions, reshape, transpose, full, matmul) on local
// tiles, with the constant folder's semantics (lib/ir/OpRegistry.cpp scalar functions,
// ir::roundToDType): float tiles are computed in f32 and rounded to the op's dtype
// after every op; integer tiles (int64 storage) compute exactly in 128 bits and
// saturate to the dtype.
// Internal to lib/runtime.
#pragma once

#include <cstdint>

#include "LeafPlan.h"
#include "TileArena.h"

namespace ptoc::runtime::exec {

/// Runs op `i` of `plan` (any op but copy_in/copy_out, which move GM data) on the
/// tiles in `mem`. The plan has been checked, so this cannot fail.
void runComputeOp(const LeafPlan &plan, int i, TileMemory mem);

/// Runs reduction op `i` of `plan` on `xf` (a float tile) or `xi` (an integer tile)
/// of its operand's shape instead of its operand; mean divides by `count` (0: a
/// float mean is NaN, an integer one 0).
void runReductionOn(const LeafPlan &plan, int i, TileMemory mem, const float *xf,
                    const int64_t *xi, int64_t count);

/// Runs matmul op `i` of `plan` on the operand tiles `xf`, `yf` (float) or `xi`, `yi`
/// (integer) of its operands' shapes instead of its operands (its accumulator as
/// planned).
void runMatmulOn(const LeafPlan &plan, int i, TileMemory mem, const float *xf, const float *yf,
                 const int64_t *xi, const int64_t *yi);

/// The integer that reduction `code` (amax, amin, sum, mean) folds in without effect
/// for `dtype`: its smallest value for amax, its largest for amin, else 0.
int64_t intIdentity(ir::OpCode code, ir::DType dtype);

/// Rounds every value of a float tile to `dtype` (f16/bf16: nearest-even via
/// Eigen::half/bfloat16; f32: no-op).
void roundFloatTile(float *data, int64_t n, ir::DType dtype);

} // namespace ptoc::runtime::exec
