// The run summary: where the time of a run went (end-to-end time against the roofline
// bound, per-core-kind utilisation and idle, bytes moved, per-group task times, the
// longest tasks, the critical path) and bottleneck verdicts naming the knob to try.
// Computed from a Timeline by the analysis (TraceAnalysis.h), so a simulation's
// summary.json and `ptoc prof` on any trace share every definition. Rendered as an
// aligned text table (summary.txt) and as JSON with stable keys (summary.json);
// docs/outputs.md documents both.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "ptoc/codegen/Program.h"
#include "ptoc/passes/DerivedTile.h"
#include "ptoc/profile/Timeline.h"
#include "ptoc/runtime/RunRecord.h"

namespace ptoc::profile {

/// Thresholds of the verdicts and sizes of the lists (REFERENCE.md "Profiling rules
/// of thumb"). Defaults here, in one place.
struct SummaryOptions {
  /// A core kind idle for more than this share of its active window (first task
  /// start to last task end of that kind, times its cores) has a problem:
  /// wave_imbalance when a part-filled last wave explains that much, scheduling_gaps
  /// when the idle beyond it still exceeds this share.
  double idleShare = 0.10;
  /// memory_bound fires when transfers take more than this share of transfer +
  /// compute time and the run is not near the roofline.
  double transferShare = 0.5;
  /// near_roofline (a good verdict) fires when the span ratio (bound / simulated,
  /// both without the head overhead) reaches this.
  double fineRatio = 0.8;
  /// How many of the longest tasks to list.
  int topTasks = 10;
  /// control_bound fires when, in a run with loops, every core sat idle waiting for the
  /// control thread to build the next stitch for more than this share of the span (the
  /// same 10% as the idle rules above).
  double controlWaitShare = 0.10;
  /// control_bound also fires, and comes first among the verdicts, when the control
  /// thread was busy for at least this share of the span: it builds every task before
  /// the task can run, so its busy time bounds the span from below, and the other
  /// verdicts' remedies cannot take the run under it.
  double controlBusyShare = 0.8;
  /// port_bound fires when a core kind's tasks spent at least this share of their busy
  /// time with reads streaming slower than their pipes allow (read stalls), and the run
  /// is not near the roofline.
  double readStallShare = 0.3;
  /// port_bound suggests running tiles that share an operand on one core when at least
  /// this share of the stalls were waits for fills other cores had started.
  double fillWaitShare = 0.25;
};

/// One core kind (AIC or AIV).
struct CoreKindSummary {
  std::string kind;          ///< "AIC" / "AIV"
  int cores = 0;             ///< cores of this kind on the device
  int tasks = 0;             ///< tasks that ran on them
  int coresUsed = 0;         ///< cores that ran at least one task
  double busyUs = 0;         ///< sum of task durations
  double idleUs = 0;         ///< cores x span - busy (span: makespan after the head)
  double utilization = 0;    ///< busy / (cores x span)
  double windowUs = 0;       ///< active window: first task start to last task end
  double windowIdleShare = 0;///< 1 - busy / (cores x window)
  /// Rounds of tasks if all took one time: ceil(tasks / cores), summed over the
  /// dependent phases (one phase when no task of the kind waits for another).
  int waves = 0;
  /// 1 - tasks / (waves x cores): the idle part-filled waves cause on their own.
  double waveIdleShare = 0;
  /// Dependent phases: the longest chain of tasks of this kind where each waits
  /// (directly or through others) for the one before; 0 without tasks.
  int phases = 0;
  std::vector<int> phaseTasks; ///< tasks per phase
  /// Idle inside the active window while the core's next task was not ready yet
  /// (waiting for predecessors); known only when the timeline has ready times.
  std::optional<double> windowDepIdleUs;
  /// How long the tasks' GM reads streamed beyond their paths' own rates, summed
  /// (TimelineTask::readStall), and the bytes they read that missed L2; known only
  /// when the timeline carries read stalls.
  std::optional<double> readStallUs;
  /// Of readStallUs: hits that waited for a fill another core had started.
  double fillWaitUs = 0;
  int64_t l2MissBytes = 0;
  /// Busy time of its tasks on the critical path (0 without one).
  double criticalBusyUs = 0;
};

/// One isomorphism group (all calls of leaves with one hash order).
struct GroupSummary {
  int hashOrder = -1;        ///< -1 for PyPTO groups
  /// func<F>_<hashOrder> (Program::groupKey), the key of the *_setting options; a
  /// PyPTO trace's leaf hash
  std::string key;
  std::string core;          ///< "AIC" / "AIV"
  std::string hash;          ///< structural hash of its leaf
  std::string rootHash;      ///< PyPTO's root function hash ("" for ptoc)
  int groupSize = 0;         ///< subgraphs in the group, from the leaf
  /// Its leaf runs single-buffered: double buffering was on but a local buffer had no
  /// room for a second copy (ptoc only; the summary names these groups).
  bool singleBuffered = false;
  int tasks = 0;
  int coresUsed = 0;
  double minUs = 0, avgUs = 0, maxUs = 0, totalUs = 0;
  double firstStartUs = 0;   ///< its earliest task's start (not in the JSON)
  /// Its tasks' read stalls summed (CoreKindSummary::readStallUs; 0 when the timeline
  /// does not carry them; not in the JSON)
  double readStallUs = 0, fillWaitUs = 0;
};

/// One task, for the longest-tasks list.
struct TaskSummary {
  int call = -1;             ///< index of the task in its timeline (ptoc: the call)
  int subgraph = -1;
  int hashOrder = -1;
  std::string group;         ///< its group's key
  std::string name;          ///< the source's task name (PyPTO), else ""
  std::string core;          ///< "AIC_3"
  /// From the kernel launch (the head included); without a clock common to the cores
  /// (Worker View), from the first block on its core.
  double startUs = 0;
  double durationUs = 0;
};

/// The chain that ends the run: from the last-finishing task, repeatedly the
/// predecessor that finished last, back to a task without predecessors.
struct CriticalPath {
  std::vector<int> calls;    ///< in execution order
  double startUs = 0;        ///< start of its first task, from the kernel launch
  double endUs = 0;          ///< end of its last task
  double lengthUs = 0;       ///< endUs - startUs
  double busyUs = 0;         ///< sum of its task durations
  double waitUs = 0;         ///< lengthUs - busyUs: dependency resolution, dispatch, queueing
  /// Hash orders on the path in order of first appearance, with their task counts.
  std::vector<std::pair<int, int>> hashOrders;
  /// The same groups by key ("control" for control nodes), parallel to hashOrders.
  std::vector<std::string> groupKeys;
  /// The group key of each task on the path, in order (parallel to calls).
  std::vector<std::string> stepKeys;
  int controlNodes = 0;      ///< control nodes on the path (Machine View)
  /// Edges of the path along which a task overwrites what its predecessor wrote or
  /// read in GM (an in-place update chain: read-modify-writes of one region).
  int writeOrderEdges = 0;
};

/// One loop body of a run with loops: its iterations' tasks.
struct BodySummary {
  std::string name;          ///< the body's function name
  std::string hash;          ///< its structural hash
  int iterations = 0;        ///< iterations that ran a task
  int tasks = 0;
  double busyUs = 0;         ///< sum of its task durations
  /// Time at least one of its tasks ran (the union of their intervals).
  double activeUs = 0;
  double spanShare = 0;      ///< activeUs / the run's span
};

/// A run with loops: its bodies and the AICPU control thread (docs/runtime.md "Loops").
struct LoopSummary {
  std::vector<BodySummary> bodies; ///< in Program::bodies order (bodies without tasks left out)
  /// The program's root functions (bodies and segments, with or without tasks): with
  /// more than one, advice names a group by its `func<F>_<order>` key (a plain hash
  /// order would set that group of every root function). Not in the JSON.
  int rootFunctions = 0;
  int tasksOutsideBodies = 0;      ///< tasks of no loop iteration
  int stitches = 0;
  double controlBusyUs = 0;  ///< the control thread building every stitch
  /// Every core idle because the next stitch was not built yet, and its share of the span.
  double controlWaitUs = 0, controlWaitShare = 0;
  /// Built stitches waiting at the barrier for the last tasks of the stitch before.
  double barrierWaitUs = 0, barrierWaitShare = 0;
  /// Iterations of a parallel loop that may run at once (device_sched_parallelism;
  /// 0: the program has no parallel loop), and whether ptoc derived it.
  int parallelism = 0;
  bool parallelismDerived = false;
  /// Workspace recycling (TimelineLoops): pools, bytes per pool, restarts in stitches.
  int workspacePools = 0;
  int64_t workspacePoolBytes = 0;
  int64_t workspaceWraps = 0;
};

/// A bottleneck verdict: what the numbers say and what to try.
struct Verdict {
  /// The summary's: under_parallelised, wave_imbalance, scheduling_gaps, memory_bound,
  /// port_bound, near_roofline, control_bound (loops); the analysis adds scheduler_bound,
  /// missing_double_buffer and, for a Worker View, setup_overhead and block_imbalance
  /// (docs/profiling.md "verdict rules").
  std::string rule;
  std::string severity;      ///< "warn" (a bottleneck) or "ok"
  std::string scope;         ///< "AIC", "AIV" or "run"
  std::string finding;       ///< one sentence with the numbers
  std::string knob;          ///< the option or call to try
  std::vector<std::pair<std::string, double>> evidence; ///< named numbers behind it
};

/// Everything summary.txt and summary.json show.
struct Summary {
  TimelineFamily family = TimelineFamily::PtocRun;
  /// What the timeline carried: numbers it could not give are null in the JSON.
  TimelineCarries carries;
  std::string func, device;
  int schedMode = 0;
  double clockMHz = 0;
  int tasks = 0;
  int64_t edges = 0;
  double simulatedUs = 0;    ///< head + last task end (simulations)
  double headUs = 0;
  /// simulatedUs - headUs; a device trace's first task start to last task end
  double spanUs = 0;
  double boundUs = 0;
  std::string limiter;       ///< cube / vector / hbm
  double cubeBoundUs = 0, vectorBoundUs = 0, hbmBoundUs = 0;
  int64_t compulsoryHbmBytes = 0;
  double ratio = 0;          ///< bound / simulated (1 = at the roofline)
  /// (bound - head) / (simulated - head): the ratio over what tuning can change; with
  /// a long head overhead `ratio` looks good even when the tasks are slow.
  double spanRatio = 0;
  std::vector<CoreKindSummary> coreKinds; ///< AIC then AIV
  int64_t copyInBytes = 0, copyOutBytes = 0;
  int64_t hbmReadBytes = 0, hbmWriteBytes = 0;
  int64_t l2HitBytes = 0, l2MissBytes = 0;
  double l2HitRate = 0;
  bool hasPipes = false;     ///< pipe-level records were available
  double transferPipeUs = 0, computePipeUs = 0; ///< summed over cores (pipe records only)
  std::vector<GroupSummary> groups;       ///< by hash order (PyPTO: by first appearance)
  std::vector<TaskSummary> topTasks;      ///< longest first
  CriticalPath criticalPath;
  std::vector<Verdict> verdicts;
  /// Set for a run of a program with loops (the timeline's loops).
  std::optional<LoopSummary> loops;
  /// The tile shapes the compile derived for ops the user gave none (default-tiles), in
  /// the order derived. summarize() leaves it empty (a timeline does not know how its
  /// program was compiled); the session fills it for its runs.
  std::vector<passes::DerivedTile> derivedTiles;
};

/// The line under the groups table naming the groups whose leaves run single-buffered
/// for lack of room (GroupSummary::singleBuffered), with the fix; "" when none do.
std::string singleBufferedNote(const Summary &s);

/// The "tiles:" line of summary.txt: the derived tile shapes, each with its op count
/// and rule (at most kDerivedTilesListed, then how many more); "" when none.
std::string derivedTilesText(const Summary &s);
/// How many derived tiles the "tiles:" line names (summary.json lists them all).
inline constexpr size_t kDerivedTilesListed = 4;

/// The critical path as runs of one group, in order: "func0_2 x3" for three tasks of
/// it in a row ("control x1" for a control node).
std::vector<std::string> criticalPathSteps(const CriticalPath &path);

/// The "steps:" line under the critical path of summary.txt and `ptoc prof`: its runs
/// of one group in order (criticalPathSteps), the middle elided when there are more
/// than kPathStepsListed (the JSON's and `ptoc prof diff`'s lists are whole); "" for
/// an empty path.
std::string criticalPathStepsText(const CriticalPath &path);
/// How many runs the "steps:" line names at most.
inline constexpr size_t kPathStepsListed = 12;

/// The "loops" section of summary.txt (shared with `ptoc prof`'s text); "" without
/// loops.
std::string loopsText(const Summary &s);

/// Computes the summary of `record`, a run of `program`: the analysis of its timeline
/// (timelineOf) without the bubble and per-pipe detail, in time linear in tasks and
/// edges (plus sorting). Errors: an InternalError when the record does not belong to
/// the program.
absl::StatusOr<Summary> summarize(const codegen::Program &program,
                                  const runtime::RunRecord &record,
                                  const SummaryOptions &options = {});

/// The verdicts alone, from a computed summary (summarize already fills them).
std::vector<Verdict> verdicts(const Summary &summary, const SummaryOptions &options = {});

/// Human-readable aligned tables. The first line reads e.g.
/// "simulated 123.4 us (bound 98.7 us, 80% of roofline, limited by hbm)".
std::string summaryText(const Summary &summary);

/// JSON with the stable keys documented in docs/outputs.md.
std::string summaryJson(const Summary &summary);

} // namespace ptoc::profile
