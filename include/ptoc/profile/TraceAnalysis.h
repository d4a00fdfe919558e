// The analysis behind `ptoc prof` and the run summary: from one Timeline (a
// simulation's record, ptoc's trace or a PyPTO device trace, TraceReader.h) it
// computes where the time went — end-to-end time against the bound, per core kind
// utilisation, the per-group table, bubbles per core (waiting for the scheduler vs for
// predecessors), the critical path, the longest tasks, the per-pipe view
// (runtime_debug_mode=2), per-block kernel vs setup (Worker View) and bottleneck
// verdicts naming the knob to try, each only when the timeline carries what it needs.
// Rendered as text and as analysis.json (keys in docs/profiling.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "llvm/ADT/StringRef.h"
#include "ptoc/profile/Summary.h"
#include "ptoc/profile/Timeline.h"
#include "ptoc/profile/TraceReader.h"

namespace ptoc::profile {

/// File name of the analysis, written beside the trace.
inline constexpr const char *kAnalysisFile = "analysis.json";

/// An upper bound on the list sizes (topTasks, topWaits; `ptoc prof --top`): a list
/// longer than this is no longer a summary.
inline constexpr int kMaxTop = 100000;

/// Thresholds and list sizes; defaults in one place (docs/profiling.md "verdict rules").
struct AnalysisOptions {
  /// The rules shared with the run summary (idle, transfer share, near roofline) and
  /// the number of longest tasks listed (topTasks).
  SummaryOptions summary;
  /// How many tasks to list by scheduling wait (and cores by idle in the text).
  int topWaits = 10;
  /// scheduler_bound: a core kind's cores idle while their next task was already
  /// ready for more than this share of (cores used x span) ...
  double schedulerIdleShare = 0.10;
  /// ... and that idle exceeds the idle spent waiting for predecessors.
  /// missing_double_buffer: on a core kind whose transfer pipes take at least
  /// `doubleBufferTransferShare` of transfer + compute pipe time, transfers overlap
  /// compute for less than `doubleBufferOverlap` of the smaller of the two.
  double doubleBufferOverlap = 0.25;
  double doubleBufferTransferShare = 0.2;
  /// setup_overhead (Worker View): blocks spend more than this share of their time in
  /// local setup rather than in the kernel.
  double setupShare = 0.25;
  /// block_imbalance (Worker View): a task's slowest block's kernel takes more than
  /// this much longer than the mean of its blocks (0.2 = 20%).
  double blockImbalance = 0.2;
  /// Only the run summary's numbers (no bubble, pipe or block detail): what
  /// summarize() needs, cheaper on large runs.
  bool summaryOnly = false;
};

/// Per core: where its time went (see docs/profiling.md "bubble analysis").
struct CoreBubbles {
  std::string core;          ///< "AIV_3"
  std::string kind;
  int tasks = 0;
  double busyUs = 0;
  /// Idle while its next task was ready (ready, not yet started): scheduler latency
  /// or dispatch cost.
  double schedIdleUs = 0;
  /// Idle before its next task was ready (its predecessors had not finished).
  double depIdleUs = 0;
  /// Idle after its last task until the end of the run (all of the span for a core
  /// that ran nothing).
  double tailIdleUs = 0;
  /// Sum over its tasks of start - ready (includes time the core was busy).
  double schedWaitUs = 0;
};

/// One task, for the scheduling-wait list.
struct TaskWait {
  int64_t call = -1;
  int subgraph = -1, hashOrder = -1;
  std::string core;
  double readyUs = 0, startUs = 0;
  double schedWaitUs = 0;    ///< start - ready
  double depWaitUs = 0;      ///< ready - (previous task end on its core, or head end), >= 0
  std::string group;         ///< its group's key
  std::string name;          ///< the source's task name (PyPTO), else ""
};

/// Per core kind totals of the bubbles.
struct KindBubbles {
  std::string kind;
  double schedIdleUs = 0, depIdleUs = 0, tailIdleUs = 0, schedWaitUs = 0;
  int coresUsed = 0;
  double spanUs = 0;
};

/// One pipe of one core kind, summed over its cores.
struct PipeSummary {
  std::string kind, pipe;
  bool transfer = false;     ///< MTE2 / MTE1 / MTE3 / FIXPIPE
  int64_t events = 0;
  double busyUs = 0;
  double utilization = 0;    ///< busy / (cores x span)
  int64_t bytes = 0;
  double busyGBps = 0;       ///< bytes / busy: per-instruction bandwidth
  double spanGBps = 0;       ///< bytes / span: what the pipe moved over the run, all cores
};

/// Per core kind, from the pipe lanes.
struct PipeKindSummary {
  std::string kind;
  double transferUs = 0, computeUs = 0;
  double transferShare = 0;  ///< transfer / (transfer + compute)
  /// Time a transfer pipe and a compute pipe of the same core were both busy (union
  /// of the core's transfer intervals intersected with the union of its compute ones),
  /// summed over cores; share = overlap / min(transfer union, compute union).
  double overlapUs = 0, overlapShare = 0;
  double transferUnionUs = 0, computeUnionUs = 0;
};

/// The control lane of a Machine View: nodes of the graph the device log did not
/// record, drawn by PyPTO 1 us wide at placed (not measured) times.
struct ControlSummary {
  int nodes = 0;
  double spanWithControlUs = 0; ///< first to last event of any lane, control included
};

/// One root function (PyPTO's rootHash: a loop body is a root function of its own).
struct RootSummary {
  std::string rootHash;
  int tasks = 0, controlNodes = 0;
  double busyUs = 0;
};

/// The blocks of one Worker View task on one core kind: kernel vs setup and balance.
struct BlockSummary {
  std::string task;          ///< the task ("r1t0")
  std::string core;          ///< "AIC" / "AIV" / "AIC+AIV"
  int blocks = 0;
  double minKernelUs = 0, meanKernelUs = 0, maxKernelUs = 0;
  double kernelUs = 0, setupUs = 0; ///< summed over the blocks
  double setupShare = 0;     ///< setup / (kernel + setup)
  double imbalance = 0;      ///< max kernel / mean kernel - 1
  std::string slowestCore;   ///< the lane of the slowest block
};

/// Everything `ptoc prof` prints and analysis.json holds.
struct Analysis {
  TimelineFamily family = TimelineFamily::PtocTrace;
  std::string source;        ///< the trace analysed
  std::string runSummary;    ///< summary.json that filled the bound terms and traffic, or ""
  /// Numbers shared with the run summary (same definitions): cores, groups, top
  /// tasks, critical path. Fields the trace does not carry (bound terms, HBM bytes,
  /// L2) are zero.
  Summary summary;
  std::vector<double> groupShares; ///< per summary.groups: total / busy of all tasks
  double criticalPathShare = 0; ///< critical path length / span
  std::vector<KindBubbles> kindBubbles; ///< AIC then AIV
  std::vector<CoreBubbles> coreBubbles; ///< every core, AIC then AIV, by index
  std::vector<TaskWait> topWaits;       ///< longest scheduling wait first
  bool hasPipes = false;
  std::vector<PipeSummary> pipes;       ///< by kind, then pipe order
  std::vector<PipeKindSummary> pipeKinds;
  std::vector<Verdict> verdicts;        ///< the summary's rules, then the trace's own
  std::vector<std::string> notes;       ///< what the reader inferred (Timeline::notes)
  std::optional<ControlSummary> control;///< Machine View
  std::vector<RootSummary> roots;       ///< PyPTO: per root function
  std::vector<BlockSummary> blocks;     ///< Worker View
  bool hasBubbles = false;              ///< the timeline has one clock (not Worker View)
};

/// Analyses a timeline.
Analysis analyze(const Timeline &timeline, const AnalysisOptions &options = {});

/// Aligned text tables in the style of summary.txt.
std::string analysisText(const Analysis &analysis);

/// analysis.json: stable keys documented in docs/profiling.md.
std::string analysisJson(const Analysis &analysis);

} // namespace ptoc::profile
