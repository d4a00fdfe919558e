// How a plain kernel (Ascend C, CATLASS, PTO-ISA) runs its tasks: no AICPU scheduler.
// Every core starts at once and takes its blocks in a fixed round-robin, as such
// kernels loop `for (b = blockIdx; b < blocks; b += blockDim)`: the k-th task of a core
// kind runs on core k mod (cores of that kind), in program order, each after the
// core's per-block prologue. Loops: a task starts only once its stitch is open
// (StitchGate): the stitches still act as barriers with ready times, as if a control
// thread fed the kernel.
#pragma once

#include <cstdint>
#include <vector>

#include "CoreModel.h"
#include "EventQueue.h"
#include "SimProgram.h"
#include "StitchGate.h"
#include "ptoc/runtime/RunRecord.h"
#include "ptoc/target/DeviceSpec.h"

namespace ptoc::runtime::sim {

class PlainScheduler {
public:
  PlainScheduler(const SimProgram &program, const target::DeviceSpec &device, CoreModel &cores,
                 EventQueue &events, RunRecord &record);

  /// Every core starts its first task at `begin` (the end of the kernel's start-up).
  void start(double begin);
  /// The TaskEnd event of `core`.
  void onTaskEnd(int core, double now);
  /// The StitchOpen event of stitch `k`.
  void onStitchOpen(int k, double now);
  /// Tasks not yet finished.
  int64_t unfinished() const { return unfinished_; }
  /// The latest task end so far.
  double lastEnd() const { return lastEnd_; }

private:
  /// Starts the core's next task if the core is free and that task is ready.
  void tryStart(int core, double now);
  /// Opens the stitches due now: their tasks without pending predecessors become
  /// ready; true if any stitch opened.
  bool openDueStitches(double now);

  const SimProgram &program_;
  CoreModel &cores_;
  RunRecord &record_;
  const double prologue_;
  int numAic_;
  std::vector<std::vector<int>> tasks_; ///< per global core: its tasks in program order
  std::vector<size_t> next_;            ///< per core: its next task in tasks_
  std::vector<int> running_;            ///< per core: the running task, or -1
  std::vector<int> coreOf_;             ///< per task
  std::vector<int32_t> predLeft_;
  int64_t unfinished_ = 0;
  double lastEnd_ = 0;
  StitchGate gate_;
};

} // namespace ptoc::runtime::sim
