// The AICPU control thread's expansion of loops: a LoopProgram instantiated, iteration
// by iteration, into the flat Program the simulator and the executor run
// (docs/runtime.md, "Loops").
#pragma once

#include "absl/status/statusor.h"
#include "ptoc/codegen/LoopProgram.h"
#include "ptoc/codegen/Program.h"
#include "ptoc/runtime/SchedParallelism.h"
#include "ptoc/runtime/TensorRef.h"
#include "ptoc/target/DeviceSpec.h"

namespace ptoc::runtime {

/// PyPTO's default stitch_function_max_num.
inline constexpr int kDefaultStitchMaxNum = 128;
/// Its documented range.
inline constexpr int kMinStitchMaxNum = 1, kMaxStitchMaxNum = 1024;
/// Root-function iterations per stitch inside an iteration of a parallel loop: PyPTO's
/// hard maximum (its runtime ignores stitch_function_max_num there), so an iteration is
/// normally one stitch.
inline constexpr int kParallelStitchMaxNum = 1024;
/// Instantiates every iteration of every loop of `lp`: each iteration of a body is a
/// copy of its compiled Program's calls, their regions rebased onto the windows the
/// iteration's offsets select (bodies' own workspaces are private to the iteration).
/// Iterations are ordered among themselves by the memory they share: a read waits for
/// the earlier writes it overlaps, a write for the earlier reads and writes it
/// overlaps; inside one iteration a body reads its windows before it writes them
/// (an accumulator's read-modify-write). Then stitches are assigned
/// (assignStitches). Errors name the loop, the iteration and the window (an offset out
/// of range, a bound that does not evaluate).
/// `args`: the kernel's inputs, which the control thread reads values of tensors from
/// (`t[i, j]` in a bound or an offset; LoopProgram::readsTensors); an error names a read
/// without them, or out of the tensor's range.
absl::StatusOr<codegen::Program> expandLoops(const codegen::LoopProgram &lp,
                                             const target::DeviceSpec &device,
                                             int stitchMaxNum = kDefaultStitchMaxNum,
                                             int parallelism = kDefaultSchedParallelism,
                                             llvm::ArrayRef<ConstTensorRef> args = {});

/// Groups an expanded program's iterations into stitches, in order, and computes when
/// the control thread has built each one: per iteration control_iteration_cycles plus
/// control_task_cycles per task, per stitch control_stitch_cycles (the device's
/// scheduler section). Outside parallel loops a stitch holds up to `stitchMaxNum`
/// iterations. Entering, leaving or moving to the next iteration of a parallel loop
/// (Instance::parallelRun / parallelIteration) starts a new stitch, and inside one a
/// stitch holds up to kParallelStitchMaxNum iterations. With parallel loops it fills
/// Program::stitchWaitFor: the first stitch of iteration j of a run waits for the last
/// stitch of iteration j - `parallelism` (for j < parallelism: for the last stitch
/// before the run), every other stitch for the one before it (docs/runtime.md
/// "Parallel loops"). `parallelism` kAutoSchedParallelism is automaticSchedParallelism
/// of the program; the value used is kept in Program::schedParallelism. Last, the
/// iterations' own intermediates are placed in recycled workspace memory
/// (recycleWorkspaces, after forgetWorkspaces takes out an earlier placement). A
/// program without loops is left as it is. Errors: either option out of its range.
absl::Status assignStitches(codegen::Program &program, const target::DeviceSpec &device,
                            int stitchMaxNum, int parallelism = kDefaultSchedParallelism);

} // namespace ptoc::runtime
