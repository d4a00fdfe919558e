// simulate(): validates the inputs, prepares the program (flattened program, region
// table, bound), builds the memory system, cores and scheduler, then runs the
// discrete-event loop (docs/runtime.md).
#include "ptoc/runtime/Simulator.h"

#include <algorithm>

#include "Bound.h"
#include "CoreModel.h"
#include "EventQueue.h"
#include "MemorySystem.h"
#include "PlainScheduler.h"
#include "PreparedState.h"
#include "RegionTable.h"
#include "Scheduler.h"
#include "SimProgram.h"
#include "absl/strings/str_cat.h"

namespace ptoc::runtime {

namespace {
absl::Status checkSchedMode(int mode) {
  if (mode >= kMinSchedMode && mode <= kMaxSchedMode) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "simulate: device_sched_mode ", mode,
      " is not a scheduler mode; valid modes: 0 (shared FIFO ready queue), 1 (L2 affinity), "
      "2 (fair across scheduler threads), 3 (L2 affinity and fair)"));
}
} // namespace

absl::StatusOr<RunRecord> simulate(const codegen::Program &program,
                                   const target::DeviceSpec &device, const SimOptions &options) {
  if (absl::Status mode = checkSchedMode(options.schedMode); !mode.ok()) return mode;
  absl::StatusOr<PreparedProgram> prepared = PreparedProgram::prepare(program, device);
  if (!prepared.ok()) return prepared.status();
  return simulate(*prepared, options);
}

absl::StatusOr<RunRecord> simulate(const PreparedProgram &prepared, const SimOptions &options) {
  if (absl::Status mode = checkSchedMode(options.schedMode); !mode.ok()) return mode;
  const sim::PreparedState &state = prepared.state();
  const target::DeviceSpec &device = state.device;
  const sim::SimProgram &sp = state.program;
  const sim::RegionTable &regions = state.regions;

  RunRecord rec;
  rec.device = device.name;
  rec.clockMHz = device.clockMHz;
  rec.aicCores = device.aicCores;
  rec.aivCores = device.aivCores;
  rec.schedulerThreads = device.scheduler.threads;
  rec.schedMode = options.schedMode;
  rec.kernelKind = options.kernelKind;
  rec.bound = state.bound;
  sim::setLaunch(rec.bound, device, options.kernelKind, sp.tasksOfKind[sim::kAic] > 0);
  const int numCalls = prepared.numCalls();
  rec.tasks.resize(numCalls);
  for (int c = 0; c < numCalls; ++c) {
    rec.tasks[c].call = c;
    rec.tasks[c].core = sp.callKind[c] == sim::kAic ? target::CoreKind::AIC : target::CoreKind::AIV;
    rec.tasks[c].stitch = sp.stitchOf(c);
    rec.tasks[c].instance = sp.instanceOf(c);
  }
  const int numCores = device.aicCores + device.aivCores;
  rec.coreBusyCycles.assign(numCores, 0.0);
  // Each task changes each kind's ready count at most twice.
  rec.queue.reserve(2 * static_cast<size_t>(numCalls) + 2);
  if (options.recordPipes) {
    size_t instrs = 0;
    for (int c = 0; c < numCalls; ++c)
      instrs += sp.leafBegin[sp.callLeaf[c] + 1] - sp.leafBegin[sp.callLeaf[c]];
    rec.pipes.reserve(instrs);
  }

  sim::EventQueue events;
  events.reserve(4 * static_cast<size_t>(numCores) + 64);
  sim::MemorySystem memory(device, regions);
  sim::CoreModel cores(sp, regions, memory, events, rec, options.recordPipes, numCores,
                       device.pipes.syncCycles);
  // The launch head (aicpu) or start-up (plain): the first task starts when it ends.
  const double head = rec.bound.headCycles + rec.bound.startCycles;
  double lastEnd = 0;
  int64_t unfinished = 0;
  if (options.kernelKind == KernelKind::Plain) {
    sim::PlainScheduler scheduler(sp, device, cores, events, rec);
    scheduler.start(head);
    while (!events.empty()) {
      sim::Event e = events.pop();
      if (e.kind() == sim::EventKind::TransferStart)
        cores.onTransferStart(static_cast<int>(e.a), static_cast<int>(e.b), e.time);
      else if (e.kind() == sim::EventKind::TaskEnd)
        scheduler.onTaskEnd(static_cast<int>(e.a), e.time);
      else if (e.kind() == sim::EventKind::StitchOpen)
        scheduler.onStitchOpen(static_cast<int>(e.a), e.time);
    }
    lastEnd = scheduler.lastEnd();
    unfinished = scheduler.unfinished();
  } else {
    sim::Scheduler scheduler(sp, device, options.schedMode, cores, events, rec);
    scheduler.start(head);
    while (!events.empty()) {
      sim::Event e = events.pop();
      switch (e.kind()) {
      case sim::EventKind::ThreadActionEnd:
        scheduler.onActionEnd(static_cast<int>(e.a), e.time);
        break;
      case sim::EventKind::TransferStart:
        cores.onTransferStart(static_cast<int>(e.a), static_cast<int>(e.b), e.time);
        break;
      case sim::EventKind::TaskEnd: scheduler.onTaskEnd(static_cast<int>(e.a), e.time); break;
      case sim::EventKind::StitchOpen:
        scheduler.onStitchOpen(static_cast<int>(e.a), e.time);
        break;
      }
    }
    lastEnd = scheduler.lastEnd();
    unfinished = scheduler.unfinished();
  }
  if (unfinished != 0)
    return absl::InternalError(absl::StrCat(
        "simulate: internal error (a bug in the simulator, not in the program): ", unfinished,
        " of ", numCalls, " tasks never finished"));

  rec.makespanCycles = std::max(head, lastEnd);
  if (sp.loops) {
    rec.controlBusyCycles = sp.stitchReady.back();
    // Stitch k was the next to open over [open(k - 1), open(k)) (from the head for
    // stitch 0): these windows never overlap. Within its window, the time it waited
    // for the control thread (its wait condition held, it was not built yet) and the
    // time it waited for its wait condition (built, stitches before it still running)
    // cost only the cores the running tasks left idle: each counts as its length times
    // the idle share of the cores of the kinds the program uses. Without parallel
    // loops nothing runs while a stitch waits for the control thread (share 1), and
    // only the tail of stitch k - 1 runs while it waits at the barrier.
    const size_t S = rec.stitches.size();
    std::vector<double> from(S, 0), until(S, 0), busy(S, 0);
    std::vector<uint8_t> control(S, 0);
    for (size_t k = 0; k < S; ++k) {
      const StitchRecord &st = rec.stitches[k];
      const double before = k == 0 ? head : rec.stitches[k - 1].openCycle;
      control[k] = st.readyCycle > st.barrierCycle;
      // The later of the two came last: the wait lasted from the earlier one.
      from[k] = std::max(before, std::min(st.readyCycle, st.barrierCycle));
      until[k] = std::max(from[k], std::max(st.readyCycle, st.barrierCycle));
    }
    bool usesAic = false, usesAiv = false;
    for (const TaskRecord &t : rec.tasks) {
      usesAic |= t.core == target::CoreKind::AIC;
      usesAiv |= t.core == target::CoreKind::AIV;
      // A task of stitch s runs after s opened: only windows after s's can hold it.
      size_t k = size_t(t.stitch) + 1;
      k = std::upper_bound(until.begin() + std::min(k, S), until.end(), t.startCycle) - until.begin();
      for (; k < S && from[k] < t.endCycle; ++k) {
        double overlap = std::min(t.endCycle, until[k]) - std::max(t.startCycle, from[k]);
        if (overlap > 0) busy[k] += overlap;
      }
    }
    double cores = (usesAic ? rec.aicCores : 0) + (usesAiv ? rec.aivCores : 0);
    for (size_t k = 0; k < S; ++k) {
      double idle = std::max(0.0, (until[k] - from[k]) - (cores > 0 ? busy[k] / cores : 0.0));
      (control[k] ? rec.controlWaitCycles : rec.barrierWaitCycles) += idle;
    }
  }
  rec.hbmReadBytes = memory.hbmReadBytes;
  rec.hbmWriteBytes = memory.hbmWriteBytes;
  rec.l2ReadHitBytes = memory.l2HitBytes;
  rec.l2ReadMissBytes = memory.l2MissBytes;
  for (const TaskRecord &t : rec.tasks) {
    rec.copyInBytes += t.bytesIn;
    rec.copyOutBytes += t.bytesOut;
  }
  return rec;
}

} // namespace ptoc::runtime
