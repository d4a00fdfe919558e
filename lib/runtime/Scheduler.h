// The AICPU scheduler: scheduler threads that each own a slice of the AIC and AIV
// cores, dispatch ready tasks to them (a running and a pending slot per core) and
// handle their completions, under one of four policies (device_sched_mode 0-3).
#pragma once

#include <cstdint>
#include <vector>

#include "CoreModel.h"
#include "EventQueue.h"
#include "SimProgram.h"
#include "StitchGate.h"
#include "TaskDeque.h"
#include "ptoc/runtime/RunRecord.h"
#include "ptoc/target/DeviceSpec.h"

namespace ptoc::runtime::sim {

/// Scheduler policy bits: mode 1 = affinity, 2 = fair, 3 = both, 0 = neither.
inline constexpr int kAffinityBit = 1, kFairBit = 2;

/// The AICPU scheduler threads.
///
/// Each thread is a sequential server. Its actions, in priority order when it is free:
///  1. dispatch a ready task to one of its idle cores (dispatch_cycles);
///  2. handle the oldest completion of one of its cores (completion_cycles, plus
///     dependency_resolve_cycles when the finished task has successors); successors
///     whose last predecessor this was become ready when the action ends;
///  3. pre-post a ready task into a free pending slot of one of its cores
///     (dispatch_cycles), on the core whose running task started first.
/// Which ready tasks a thread may take, and where a readied task goes, is the policy:
///  - mode 0: one shared FIFO queue per core kind;
///  - mode 1 (affinity): shared LIFO queues; a task readied by a completion goes
///    straight to the readying thread while it has free slots of that kind;
///  - mode 2 (fair): per-thread FIFO queues; readied tasks go to the readying thread,
///    initial ones round-robin; a thread with an idle core and an empty queue takes the
///    oldest task of the thread with the most queued tasks it cannot dispatch right now
///    (all of them while that thread is busy, else those beyond its idle cores:
///    hand-over); in the tail (unfinished tasks of a kind <= cores of that kind) a
///    readied task goes to the thread with room on an idle core that has dispatched the
///    fewest tasks;
///  - mode 3: 1 and 2 (per-thread LIFO queues, direct sending, hand-over, tail rule).
/// Loops: a task is ready only once its stitch is open (StitchGate); the tasks of a
/// stitch that are ready when it opens are placed like the initial tasks of a run.
class Scheduler {
public:
  Scheduler(const SimProgram &program, const target::DeviceSpec &device, int mode,
            CoreModel &cores, EventQueue &events, RunRecord &record);

  /// Readies the tasks without predecessors at `head` (the end of the kernel head) and
  /// lets every thread pick its first action (loops: those of stitch 0, once it opens).
  void start(double head);
  /// The StitchOpen event of stitch `k`.
  void onStitchOpen(int k, double now);
  /// The ThreadActionEnd event of `thread`.
  void onActionEnd(int thread, double now);
  /// The TaskEnd event of `core`.
  void onTaskEnd(int core, double now);
  /// Tasks not yet finished.
  int64_t unfinished() const { return unfinished_[kAic] + unfinished_[kAiv]; }
  /// The latest task end so far.
  double lastEnd() const { return lastEnd_; }

private:
  enum class Action : uint8_t { None, Dispatch, Completion };
  struct Thread {
    bool busy = false;
    Action action = Action::None;
    int task = -1, core = -1;
    bool readies = false; ///< Completion: the finished task has successors
    TaskDeque completions;
    int64_t dispatched = 0;
    int coreBegin[2] = {0, 0}, coreEnd[2] = {0, 0}; ///< global core indices
    int idle[2] = {0, 0};     ///< cores with no running, pending or incoming task
    int freeSlots[2] = {0, 0};
  };

  int kindOfCore(int core) const { return core < numCores_[kAic] ? kAic : kAiv; }
  int used(int core) const {
    return (running_[core] >= 0) + (pending_[core] >= 0) + incoming_[core];
  }
  void leave(int core); ///< subtract the core's slot counts from its owner
  void enter(int core); ///< add them back after a change
  TaskDeque &own(int t, int k) { return own_[t * 2 + k]; }
  TaskDeque &direct(int t, int k) { return direct_[t * 2 + k]; }
  bool tail(int k) const { return unfinished_[k] <= numCores_[k]; }

  void pickNext(int t, double now);
  void wakeIdleThreads(double now);
  /// A ready task of kind `k` thread `t` may dispatch (-1 if none). `forIdleCore`:
  /// hand-over is allowed (fair modes).
  int take(int t, int k, bool forIdleCore);
  int steal(int t, int k);
  /// Thread `t` has a task of kind `k` it may take without hand-over.
  bool hasQueued(int t, int k);
  /// `task` became ready at `now`, readied by thread `t` (-1: initially ready).
  void publish(int t, int task, double now);
  int balanceTarget(int t, int k);
  void beginDispatch(int t, int task, int core, double now);
  void beginCompletion(int t, double now);
  void endDispatch(int t, double now);
  bool endCompletion(int t, double now);
  void startOnCore(int core, int task, double now);
  void sampleQueue(int k, double now);
  /// Opens the stitches due now, placing their ready tasks; true if it placed any.
  bool openDueStitches(double now);
  /// Places tasks that became ready together at `now` without a readying thread (the
  /// run's first tasks, a stitch's at its opening), in program order.
  void placeInitial(const std::vector<int> &initial, double now);

  const SimProgram &program_;
  const int mode_;
  const double dispatchCycles_, completionCycles_, resolveCycles_;
  CoreModel &cores_;
  EventQueue &events_;
  RunRecord &record_;
  int numThreads_;
  int numCores_[2];
  std::vector<Thread> threads_;
  // Per core (global index: AIC cores, then AIV cores).
  std::vector<int> running_, pending_, owner_;
  std::vector<int8_t> incoming_;
  std::vector<double> slotStart_; ///< when the running (or incoming) task started / starts
  // Ready queues.
  TaskDeque shared_[2];
  std::vector<TaskDeque> own_, direct_;
  int64_t readyCount_[2] = {0, 0};
  int64_t lastSample_[2] = {-1, -1};
  std::vector<int32_t> predLeft_;
  int64_t unfinished_[2] = {0, 0};
  double lastEnd_ = 0;
  StitchGate gate_;
};

} // namespace ptoc::runtime::sim
