// The inside of the cores: each core runs its task's pipe program. Every pipe runs its
// instructions in order, concurrently with the other pipes; an instruction starts when
// its pipe is free and the instructions it depends on have ended. A GM read frees its
// pipe when its data has streamed, before the access latency has passed.
#pragma once

#include <vector>

#include "EventQueue.h"
#include "MemorySystem.h"
#include "RegionTable.h"
#include "SimProgram.h"
#include "ptoc/runtime/RunRecord.h"

namespace ptoc::runtime::sim {

/// Times the pipe programs of the tasks running on all cores.
///
/// Compute and MTE1 instructions touch nothing shared, so their times are fixed as soon
/// as their inputs' end times are known, without an event. GM transfers (MTE2, FIXPIPE,
/// MTE3) share HBM, L2 and the L2's contents, so each is timed by an event at its start,
/// in simulated-time order. When the last instruction's end is known a TaskEnd event is
/// posted for it.
class CoreModel {
public:
  CoreModel(const SimProgram &program, const RegionTable &regions, MemorySystem &memory,
            EventQueue &events, RunRecord &record, bool recordPipes, int numCores,
            double syncCycles);

  /// Starts `task` on `core` at `now` (the core must be free); its instructions may
  /// start `prologue` cycles later (a plain kernel's per-block prologue).
  void startTask(int core, int task, double now, double prologue = 0);
  /// The TransferStart event of instruction `instr` (within its leaf) on `core`.
  void onTransferStart(int core, int instr, double now);
  /// The task running on `core` (-1 if none).
  int task(int core) const { return cores_[core].task; }
  /// Marks `core` free after its TaskEnd.
  void finishTask(int core) { cores_[core].task = -1; }

private:
  struct CoreState {
    int task = -1;
    int base = 0;       ///< global index of the leaf's first instruction
    int left = 0;       ///< instructions whose end is not yet known
    double endMax = 0;  ///< latest end so far
  };

  /// Times instruction `i` of `core` whose inputs are all known; `start` is its start.
  void launch(int core, int i, double start, double now);
  /// Instruction `i` runs [start, end) and frees its pipe at `pipeFree` (<= end):
  /// release its successors.
  void finish(int core, int i, double start, double pipeFree, double end);
  /// Launches every instruction released onto the work list.
  void drain(int core, double now);

  const SimProgram &program_;
  const RegionTable &regions_;
  MemorySystem &memory_;
  EventQueue &events_;
  RunRecord &record_;
  bool recordPipes_;
  double sync_; ///< latency of a dependency between two pipes
  std::vector<CoreState> cores_;
  // Per core, per instruction of the running leaf (stride maxLeafInstrs).
  std::vector<int32_t> remaining_;
  std::vector<double> earliest_;
  std::vector<int> work_; ///< released instructions to launch (shared: one event at a time)
};

} // namespace ptoc::runtime::sim
