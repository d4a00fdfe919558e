// RunRecord: what happened in one simulated run — per task, per pipe instruction (in
// pipe-level mode), ready-queue depths, totals and the roofline bound. The runtime
// returns it; lib/profile turns it into traces and summaries (the runtime never
// writes files). Times are in device cycles counted from the kernel launch (so the
// head overhead comes first and the first task starts after it); `clockMHz` converts
// (us = cycles / MHz).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ptoc/codegen/Program.h"
#include "ptoc/target/CoreKind.h"

namespace ptoc::runtime {

/// How a kernel is launched, which decides what it pays before its first task
/// (docs/runtime.md "Launch").
enum class KernelKind : uint8_t {
  /// ptoc's own kernels, as PyPTO runs them: AICPU scheduler threads dispatch the
  /// tasks, after the head (DeviceSpec::launchOverheadUs).
  Aicpu,
  /// A plain kernel (Ascend C, CATLASS, PTO-ISA): every core starts at once and runs
  /// its tasks back to back without a scheduler, after the kernel's own start-up
  /// (DeviceSpec::plainKernelStartUs, plainCubeKernelStartUs when it starts cube
  /// cores), which is part of its kernel time; each core runs a prologue before each
  /// task (DeviceSpec::plainBlockCycles).
  Plain,
};
/// "aicpu" or "plain".
const char *kernelKindName(KernelKind kind);

/// The physical limit of a run: no schedule can beat it.
struct RooflineBound {
  double cubeCycles = 0;     ///< total cube FLOPs / (AIC count x per-core peak)
  double vectorCycles = 0;   ///< total vector work / (AIV count x per-core width)
  /// The compulsory HBM bytes at the device's HBM bandwidth or, when that is slower,
  /// the compulsory reads through the HBM ports of the cores that read them
  /// (portCycles).
  double hbmCycles = 0;
  /// The slowest of: compulsory bytes only AIC tasks read / (AIC count x
  /// core_hbm_bytes_per_cycle), the same for AIV, and all compulsory reads / (both
  /// counts x the rate): a byte's first read misses L2 and comes through the reading
  /// core's own port.
  double portCycles = 0;
  int64_t hbmBytes = 0;      ///< compulsory HBM bytes: inputs read once, results written once
  double headCycles = 0;     ///< the launch head, before the kernel time (aicpu kind)
  double startCycles = 0;    ///< start-up inside the kernel time, before any task (plain kind)
  /// head + start + max(cube, vector, hbm).
  double totalCycles() const;
  /// "cube", "vector" or "hbm": the term that sets the bound.
  const char *limiter() const;
};

/// One task (one call of the execute graph).
struct TaskRecord {
  int call = -1;
  target::CoreKind core = target::CoreKind::AIV;
  int coreIndex = -1;        ///< within its kind: AIC_0.., AIV_0..
  int thread = -1;           ///< the AICPU scheduler thread that dispatched it
  double readyCycle = 0;     ///< all predecessors completed (as seen by the scheduler)
  double dispatchCycle = 0;  ///< the scheduler posted it to the core
  double startCycle = 0;     ///< the core began it
  double endCycle = 0;       ///< the core finished it
  int64_t bytesIn = 0, bytesOut = 0;
  int64_t l2HitBytes = 0;    ///< of bytesIn, served by L2
  /// How much longer its GM reads streamed than their paths' own rates allow: reads
  /// that missed L2 and came through the core's own HBM port, hits on data another
  /// core was still fetching, HBM or L2 bandwidth taken by other cores, write-backs an
  /// insertion waited for. Summed over the task's reads (they may overlap compute).
  double readStallCycles = 0;
  /// Of readStallCycles: hits that waited for a fill another core had started (several
  /// cores reading the same data at once all go at the pace of the one miss).
  double fillWaitCycles = 0;
  /// Loops (docs/runtime.md): the stitch it was submitted in (Call::stitch, 0 without
  /// loops) and the loop iteration it belongs to (Call::instance: an index into
  /// Program::instances, -1 without loops).
  int stitch = 0;
  int instance = -1;
};

/// One stitch of a program with loops: when the AICPU control thread had built it,
/// when the stitch before it finished, and when its tasks could start.
struct StitchRecord {
  /// The control thread had built it: head + Program::stitchReadyCycles[k].
  double readyCycle = 0;
  /// Every task of the stitch before it had ended (the end of the head for stitch 0).
  double barrierCycle = 0;
  /// Its tasks could start from here: max(readyCycle, barrierCycle).
  double openCycle = 0;
  int tasks = 0;             ///< calls in the stitch
  /// Every core sat idle because the stitch was not built yet: readyCycle -
  /// barrierCycle when positive (all earlier tasks had ended, no later one may start).
  double controlWaitCycles() const { return readyCycle > barrierCycle ? readyCycle - barrierCycle : 0; }
  /// It was built but waited at the barrier for the last tasks of the stitch before:
  /// barrierCycle - readyCycle when positive (0 for stitch 0).
  double barrierWaitCycles() const {
    return barrierCycle > readyCycle ? barrierCycle - readyCycle : 0;
  }
};

/// One pipe instruction of one task (recorded with pipe-level tracing only).
struct PipeRecord {
  int task = -1;             ///< index into RunRecord::tasks (== call)
  codegen::Pipe pipe = codegen::Pipe::Vec;
  int instr = -1;            ///< index into the leaf's instrs
  /// The pipe is busy with it over [startCycle, endCycle).
  double startCycle = 0, endCycle = 0;
  /// Its result is usable from here (>= endCycle): a GM read's data arrives an access
  /// latency after its last byte left the pipe; for other instructions == endCycle.
  double readyCycle = 0;
  int64_t bytes = 0;
};

/// Ready-queue depth of one core kind after a change.
struct QueueSample {
  double cycle = 0;
  target::CoreKind core = target::CoreKind::AIV;
  int depth = 0;
};

/// Everything one run produced.
struct RunRecord {
  std::string device;        ///< DeviceSpec::name
  double clockMHz = 1800;
  int aicCores = 0, aivCores = 0, schedulerThreads = 0;
  int schedMode = 0;
  KernelKind kernelKind = KernelKind::Aicpu;
  double makespanCycles = 0; ///< the last task's end (from launch, head overhead included)
  RooflineBound bound;
  std::vector<TaskRecord> tasks;   ///< index: call
  std::vector<PipeRecord> pipes;   ///< pipe-level mode only
  std::vector<QueueSample> queue;
  /// Busy cycles per core (index: AIC cores then AIV cores).
  std::vector<double> coreBusyCycles;
  int64_t hbmReadBytes = 0, hbmWriteBytes = 0;
  int64_t l2ReadHitBytes = 0, l2ReadMissBytes = 0;
  int64_t copyInBytes = 0, copyOutBytes = 0;
  /// Loops (docs/runtime.md "Loops"): one record per stitch, in order; empty for a
  /// program without loops (Program::stitchReadyCycles empty).
  std::vector<StitchRecord> stitches;
  /// The control thread's busy time: the last stitch's ready time after the head
  /// (Program::stitchReadyCycles.back()); 0 without loops.
  double controlBusyCycles = 0;
  /// controlWaitCycles: the sum over the stitches of StitchRecord::controlWaitCycles
  /// (time with no task on any core because the next stitch was not built yet).
  /// barrierWaitCycles: what built stitches waiting for the last tasks of the one before
  /// cost, as whole-device idle time: per stitch, the window from when it was built or
  /// the stitch before opened (whichever is later; windows never overlap) to its
  /// barrier, times the share of the cores (of the kinds the program uses) the tail
  /// left idle. At most the span. 0 without loops.
  double controlWaitCycles = 0, barrierWaitCycles = 0;

  double toUs(double cycles) const { return cycles / clockMHz; }
  double simulatedUs() const { return toUs(makespanCycles); }
  /// The kernel time: the span after the launch head (what a device profiler reports).
  double kernelUs() const { return toUs(makespanCycles - bound.headCycles); }
  double boundUs() const { return toUs(bound.totalCycles()); }
  /// Busy time / (cores x span after the head), per core kind; 0 without cores.
  double utilization(target::CoreKind kind) const;
  double l2HitRate() const;  ///< hit bytes / read bytes (0 when nothing was read)
};

} // namespace ptoc::runtime
