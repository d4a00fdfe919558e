// The timeline model every report reads: which task ran on which core, when, in which
// group, after which others, and what the source could not say. Producers: a ptoc
// simulation's RunRecord (timelineOf), ptoc's own swimlane trace and PyPTO's device
// traces ("Machine View", "Worker View"; TraceReader.h). The analysis (TraceAnalysis.h)
// computes the run summary and everything `ptoc prof` shows from it alone.
// docs/profiling.md "Timelines" describes each family.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "ptoc/codegen/Program.h"
#include "ptoc/runtime/RunRecord.h"

namespace ptoc::profile {

/// Where a timeline came from.
enum class TimelineFamily : uint8_t {
  PtocRun,     ///< a ptoc simulation's RunRecord
  PtocTrace,   ///< merged_swimlane.json written by ptoc (runtime_debug_mode 1 or 2)
  MachineView, ///< PyPTO's "Machine View" merged_swimlane.json of a device run
  WorkerView,  ///< PyPTO-3's "Worker View" merged_swimlane of a device run
};

/// "ptoc-run", "ptoc-trace", "pypto-machine-view", "pypto-worker-view".
llvm::StringRef familyName(TimelineFamily family);

/// What a source carries. An analysis or a verdict that needs a fact the source lacks
/// is left out (null in the JSON) instead of being computed from a stand-in.
struct TimelineCarries {
  bool commonClock = true;  ///< all lanes share one clock (Worker View: each core its own)
  bool edges = false;       ///< dependency edges between tasks
  bool readyTimes = false;  ///< when each task became ready (recorded, or from the edges)
  bool readyFromEdges = false; ///< ready times derived from the edges, not recorded
  bool bytes = false;       ///< bytes each task moved
  /// How long each task's GM reads stalled beyond their paths' rates (TimelineTask::
  /// readStall; ptoc's simulations, traces written since it was recorded)
  bool readStalls = false;
  bool bound = false;       ///< the roofline bound and head overhead (simulations)
  bool schedMode = false;   ///< which AICPU scheduler mode ran (simulations)
  bool deviceCores = false; ///< the device's core counts (else: the lanes seen)
  bool hashOrders = false;  ///< ptoc's hash orders (group keys func<F>_<order>)
  bool pipes = false;       ///< per-pipe instructions (runtime_debug_mode=2)
  bool blockSplit = false;  ///< kernel vs setup time of each block (Worker View)
  bool controlNodes = false;///< a lane of control nodes whose times are placed, not measured
};

/// What a lane holds.
enum class LaneKind : uint8_t { Aic, Aiv, Control };

/// "AIC", "AIV", "control".
llvm::StringRef laneKindLabel(LaneKind kind);

/// The core label of a group with tasks of both kinds (a Worker View task whose blocks
/// ran on AIC and AIV cores).
inline constexpr llvm::StringLiteral kBothKindsLabel = "AIC+AIV";

/// The core label of a group that runs where `a` and `b` say: "AIC" and "AIV" (or
/// either with "AIC+AIV") give "AIC+AIV"; equal labels give that label.
std::string mergedCoreLabel(llvm::StringRef a, llvm::StringRef b);

/// One lane: a core, or the control lane of a Machine View.
struct TimelineLane {
  std::string name;          ///< as the source names it: "AIV_17", "Fake Core_0"
  LaneKind kind = LaneKind::Aiv;
  int core = -1;             ///< 0-based index within its kind (-1: the control lane)
  /// Ticks added to the lane's times to draw it (Worker View: every core's clock has
  /// its own origin, so lanes are aligned at their first block). 0 elsewhere.
  double drawShift = 0;
};

/// One group of tasks running the same code: ptoc's isomorphism group (hash order),
/// PyPTO's leaf hash, or a Worker View task's blocks.
struct TimelineGroup {
  std::string key;           ///< func<F>_<order> (ptoc), the leaf hash (Machine View), r1t0 (Worker View)
  int hashOrder = -1;        ///< ptoc only
  std::string core;          ///< "AIC", "AIV" (or "AIC+AIV" for a Worker View task on both)
  std::string leafHash;      ///< ptoc's structural hash or PyPTO's leafHash
  std::string rootHash;      ///< PyPTO's rootHash (the root function: a loop body's own)
  int groupSize = 0;         ///< ptoc: subgraphs in the group
  /// ptoc: its leaf runs single-buffered for lack of room (Leaf::noRoomToDoubleBuffer)
  bool singleBuffered = false;
};

/// One task (a ptoc call, a PyPTO task, or one block of a Worker View task), or a
/// control node (on the control lane, group -1, no core time).
struct TimelineTask {
  int lane = -1;
  int group = -1;
  double start = 0, dur = 0; ///< ticks (Timeline::toUs)
  /// When it became ready, if the source says (ticks).
  std::optional<double> ready;
  std::optional<double> dispatch;
  int thread = -1, subgraph = -1, leaf = -1;
  int64_t bytesIn = 0, bytesOut = 0, l2HitBytes = 0;
  /// Ticks its GM reads streamed beyond their paths' own rates (runtime::TaskRecord::
  /// readStallCycles); 0 unless carries.readStalls.
  double readStall = 0;
  /// Of readStall: hits that waited for a fill another core had started.
  double fillWait = 0;
  /// The loop iteration it belongs to (index into TimelineLoops::instances), or -1.
  int instance = -1;
  double end() const { return start + dur; }
};

/// A loop body (ptoc: Program::bodies): a root function compiled once.
struct TimelineBody {
  std::string name;          ///< the function's name
  std::string hash;          ///< its structural hash (PyPTO's rootHash analogue)
};

/// One iteration of a body.
struct TimelineInstance {
  int body = -1;             ///< index into TimelineLoops::bodies
  std::string loop;          ///< the loop's name
  int64_t iteration = 0;
};

/// A run of a program with loops (ptoc; docs/runtime.md "Loops"): its bodies and
/// iterations, and what the AICPU control thread cost (ticks).
struct TimelineLoops {
  std::vector<TimelineBody> bodies;
  std::vector<TimelineInstance> instances;
  int stitches = 0;
  /// The control thread's busy time (building every stitch).
  double controlBusy = 0;
  /// No task on any core because the next stitch was not built yet.
  double controlWait = 0;
  /// Built stitches waiting at the barrier for the last tasks of the one before.
  double barrierWait = 0;
  /// Iterations of a parallel loop in flight (device_sched_parallelism); 0 without
  /// parallel loops. `parallelismDerived`: ptoc chose it (the option was 0).
  int parallelism = 0;
  bool parallelismDerived = false;
  /// Workspace recycling (codegen::Program::workspacePools and the fields after it):
  /// pools of the iterations' own intermediates, each pool's bytes, and how often an
  /// iteration started its pool over inside a stitch; 0 without such intermediates.
  int workspacePools = 0;
  int64_t workspacePoolBytes = 0;
  int64_t workspaceWraps = 0;
};

/// A Worker View block's kernel and local setup time (ticks).
struct BlockTime {
  double kernel = 0, setup = 0;
};

/// One pipe instruction (runtime_debug_mode=2).
struct TimelinePipe {
  int task = -1;             ///< index into Timeline::tasks (-1: not said)
  LaneKind kind = LaneKind::Aiv; ///< the core it ran on
  int core = -1;
  std::string pipe;          ///< "MTE2", "VEC", ...
  bool transfer = false;     ///< MTE2 / MTE1 / MTE3 / FIXPIPE
  double start = 0, dur = 0; ///< ticks
  int64_t bytes = 0;
  double end() const { return start + dur; }
};

/// Run-level numbers only a simulation knows (carries.bound).
struct TimelineBound {
  double simulatedUs = 0, headUs = 0, boundUs = 0, ratio = 0;
  std::string limiter;
  double cubeUs = 0, vectorUs = 0, hbmUs = 0;
  int64_t compulsoryHbmBytes = 0;
};

/// Bytes moved by the whole run, when the source has totals of its own (a RunRecord;
/// a ptoc trace's summary.json). Copy-in / copy-out totals missing: summed over tasks.
struct TimelineTraffic {
  std::optional<int64_t> copyIn, copyOut;
  int64_t hbmRead = 0, hbmWrite = 0, l2Hit = 0, l2Miss = 0;
};

/// A run as a timeline.
struct Timeline {
  TimelineFamily family = TimelineFamily::PtocRun;
  TimelineCarries carries;
  std::string source;        ///< the file read ("" for a RunRecord)
  std::string func, device;  ///< "" when the source does not say
  std::optional<int> schedMode;
  double clockMHz = 0;       ///< 0 when unknown
  /// Ticks per microsecond: the clock in MHz for a RunRecord (ticks are cycles), 1 for
  /// traces (ticks are microseconds). Every sum is taken in ticks, then converted once.
  double ticksPerUs = 1;
  /// The source's time of tick 0 in microseconds (device traces are rebased to their
  /// first event; ptoc's count from the kernel launch, 0).
  double originUs = 0;
  int aicCores = 0, aivCores = 0, schedulerThreads = 0;
  /// Core names are "<kind>_<base + index>": ptoc numbers each kind from 0, PyPTO
  /// numbers blocks across both kinds from 1 (AIC_1.., then AIV_<aic + 1>..).
  int aicNameBase = 0, aivNameBase = 0;
  /// Where the run's time counts from and to (ticks): ptoc, the end of the head and
  /// the makespan; device traces, the first start and last end of a real task.
  double runStart = 0, runEnd = 0;
  std::optional<TimelineBound> bound;
  std::optional<TimelineTraffic> traffic;
  std::string runSummaryPath; ///< summary.json that filled bound terms and traffic, or ""

  std::vector<TimelineLane> lanes;
  std::vector<TimelineGroup> groups;
  std::vector<TimelineTask> tasks;
  /// The source's task names (PyPTO: "0-1-53"), parallel to tasks; empty for ptoc,
  /// whose tasks are their calls.
  std::vector<std::string> taskNames;
  /// Worker View: each block's kernel and setup, parallel to tasks; empty elsewhere.
  std::vector<BlockTime> blockTimes;
  std::vector<TimelinePipe> pipes;
  /// Dependency edges, grouped by consumer: predecessors of task t are
  /// preds[predStart[t] .. predStart[t + 1]). writeOrder[i] marks edge i as keeping
  /// writes of one GM region in order (ptoc).
  std::vector<int> predStart;
  std::vector<int> preds;
  std::vector<char> writeOrder;
  /// What the reader inferred or tolerated, one sentence each (shown with the analysis).
  std::vector<std::string> notes;
  /// Loops: set for a ptoc run (or trace) of a program with loops.
  std::optional<TimelineLoops> loops;

  double toUs(double ticks) const { return ticks / ticksPerUs; }
  /// The source's name of `task`, or "".
  const std::string &nameOf(int task) const {
    static const std::string kNone;
    return taskNames.empty() ? kNone : taskNames[task];
  }
  llvm::ArrayRef<int> predsOf(int task) const {
    if (predStart.empty()) return {};
    return llvm::ArrayRef<int>(preds).slice(predStart[task], predStart[task + 1] - predStart[task]);
  }
  bool isWriteOrderEdge(int task, size_t k) const {
    return !writeOrder.empty() && writeOrder[predStart[task] + k];
  }
  int64_t edges() const { return static_cast<int64_t>(preds.size()); }
  int coresOf(LaneKind kind) const {
    return kind == LaneKind::Aic ? aicCores : kind == LaneKind::Aiv ? aivCores : 0;
  }
  /// "AIV_17": the name of a core of `kind` with 0-based `index`, as the source numbers it.
  std::string coreName(LaneKind kind, int index) const;
  bool isControl(int task) const { return lanes[tasks[task].lane].kind == LaneKind::Control; }
};

/// Builds the dependency lists from (consumer, producer, write-order) triples in the
/// order given per consumer; used by every producer.
struct EdgeList {
  struct Edge {
    int consumer, producer;
    bool writeOrder;
  };
  std::vector<Edge> edges;
  void add(int consumer, int producer, bool writeOrder = false) {
    edges.push_back({consumer, producer, writeOrder});
  }
  /// Fills timeline.predStart / preds / writeOrder (stable per consumer).
  void moveInto(Timeline &timeline);
};

/// Every task of `timeline` in a topological order of its edges; a cycle (a hand-made
/// trace, or a device trace's misplaced control nodes) is broken at its
/// earliest-starting task, which goes first as if its predecessors there were done.
std::vector<int> topologicalOrder(const Timeline &timeline);

/// Per task, when the measured work it stands for ended (ticks): a task on a core, its
/// own end; a control node (whose time is placed, not measured), the latest such end
/// among its predecessors, or -infinity when none ran on a core. `order` is
/// topologicalOrder(timeline).
std::vector<double> measuredEnds(const Timeline &timeline, const std::vector<int> &order);

/// The timeline of `record`, a run of `program`: one task per call (index = call), one
/// lane per core of the device, groups by hash order with the program's group keys.
/// Errors: an InternalError when the record does not belong to the program.
absl::StatusOr<Timeline> timelineOf(const codegen::Program &program,
                                    const runtime::RunRecord &record);

} // namespace ptoc::profile
