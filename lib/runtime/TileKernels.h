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

/// Rounds every value of a float tile to `dtype` (f16/bf16: nearest-even via
/// Eigen::half/bfloat16; f32: no-op).
void roundFloatTile(float *data, int64_t n, ir::DType dtype);

} // namespace ptoc::runtime::exec
