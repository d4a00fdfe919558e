// Workspace recycling (docs/runtime.md "Workspace recycling"): where the own
// intermediates of every loop iteration live, as PyPTO's runtime places a root
// function's inner tensors, and the dependencies that reusing that memory adds.
#pragma once

#include <cstdint>

#include "ptoc/codegen/Program.h"

namespace ptoc::runtime {

/// Each intermediate's place in a pool is aligned to this many bytes (PyPTO's
/// TENSOR_ADDR_ALIGNMENT, machine/utils/dynamic/dev_workspace.h).
inline constexpr int64_t kWorkspaceAlignment = 512;

/// Takes out what recycleWorkspaces added to `program`: the dependencies
/// (Program::workspaceReuseEdges) and the intermediates' places in the pools.
void forgetWorkspaces(codegen::Program &program);

/// Places the own intermediates of every iteration (Instance::workspace) in workspace
/// pools and adds the dependencies their reuse needs; stitches must be assigned
/// (Call::stitch). After forgetWorkspaces, so it can run again on a program whose
/// stitches were assigned anew.
///
/// - An iteration's workspace is its intermediates one after another, each at a
///   multiple of kWorkspaceAlignment.
/// - One pool per parallel slot: an iteration of a parallel loop uses slot j mod P
///   (`parallelism`, j its ordinal in its run of the loop), every other iteration
///   slot 0. A pool holds `stitchMaxNum` times the largest iteration's workspace
///   (PyPTO sizes it for stitch_function_max_num root functions).
/// - The iterations of a stitch take their slot's pool in order from its start: the
///   stitches that used the pool before have finished when this one opens (the
///   barrier, or the parallel slot's turn). An iteration that does not fit in what is
///   left starts over at the beginning and waits for the iterations of the stitch
///   whose bytes it takes: each of their calls without a successor in their iteration
///   precedes each of its calls without a predecessor in its own. Only inside a
///   parallel loop, where a stitch holds up to kParallelStitchMaxNum iterations, can a
///   stitch outgrow its pool.
void recycleWorkspaces(codegen::Program &program, int stitchMaxNum, int parallelism);

} // namespace ptoc::runtime
