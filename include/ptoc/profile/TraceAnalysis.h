// The trace analysis behind `ptoc prof`: loads a merged_swimlane.json written by ptoc
// (or a run folder holding one) and computes where the time went — end-to-end time
// against the bound, per core kind utilisation, the per-group table, bubbles per core
// (waiting for the scheduler vs for predecessors), the critical path, the longest
// tasks, the per-pipe view (runtime_debug_mode=2) and bottleneck verdicts naming the
// knob to try. Rendered as text and as analysis.json (keys in docs/profiling.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "llvm/ADT/StringRef.h"
#include "ptoc/profile/Summary.h"

namespace ptoc::profile {

/// File name of the analysis, written beside the trace.
inline constexpr const char *kAnalysisFile = "analysis.json";

/// One task ('X' event with cat "task") of a loaded trace.
struct TraceTask {
  int64_t call = -1;
  int subgraph = -1, leaf = -1, hashOrder = -1, groupSize = 0;
  std::string leafHash;
  std::string kind;          ///< "AIC" / "AIV" (from the lane's process name)
  int coreIndex = -1;        ///< from the lane name "AIV_17"
  double startUs = 0, durUs = 0, readyUs = 0, dispatchUs = 0;
  int thread = -1;           ///< AICPU scheduler thread that dispatched it
  int64_t bytesIn = 0, bytesOut = 0, l2HitBytes = 0;
  std::vector<int64_t> preds; ///< calls of its predecessors, from the flow events
  double endUs() const { return startUs + durUs; }
  /// "AIV_17"
  std::string core() const;
};

/// One pipe instruction ('X' event with cat "pipe", runtime_debug_mode=2).
struct TracePipe {
  std::string kind;          ///< "AIC" / "AIV"
  int coreIndex = -1;
  std::string pipe;          ///< "MTE2", "VEC", ... (from the lane name "AIV_3 MTE2")
  int64_t task = -1;         ///< call of the task it belongs to
  double startUs = 0, durUs = 0;
  int64_t bytes = 0;
  double endUs() const { return startUs + durUs; }
};

/// What the analysis reads from a trace: otherData and the task, flow and pipe events.
struct TraceData {
  std::string path;          ///< the merged_swimlane.json read
  std::string func, device, limiter;
  int schedMode = 0;
  double clockMHz = 0;
  int aicCores = 0, aivCores = 0, schedulerThreads = 0;
  double simulatedUs = 0, boundUs = 0, headUs = 0, ratio = 0;
  int64_t edges = 0;         ///< flow pairs (dependency edges) found
  std::vector<TraceTask> tasks; ///< indexed by call
  std::vector<TracePipe> pipes;
  /// From summary.json beside the trace when it describes the same run (func and
  /// simulated_us agree): the bound's terms and the HBM / L2 traffic, which the trace
  /// does not carry. Without it these stay zero and memory_bound can only be judged
  /// from pipe lanes.
  std::string runSummaryPath; ///< empty: no summary.json used
  double cubeBoundUs = 0, vectorBoundUs = 0, hbmBoundUs = 0;
  int64_t compulsoryHbmBytes = 0, hbmReadBytes = 0, hbmWriteBytes = 0;
  int64_t l2HitBytes = 0, l2MissBytes = 0;
};

/// Reads and validates a trace. `path` is a merged_swimlane.json or a run folder
/// holding one. Errors (InvalidArgument / NotFound) name the file and what is wrong
/// and where (line and column for bad JSON, event index and key for bad events);
/// never crashes on malformed or truncated input.
absl::StatusOr<TraceData> loadTrace(llvm::StringRef path);
/// The same from the trace's text; `name` is used in messages.
absl::StatusOr<TraceData> parseTrace(llvm::StringRef json, llvm::StringRef name);

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

/// Everything `ptoc prof` prints and analysis.json holds.
struct Analysis {
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
};

/// Analyses a loaded trace.
Analysis analyze(const TraceData &trace, const AnalysisOptions &options = {});

/// Aligned text tables in the style of summary.txt.
std::string analysisText(const Analysis &analysis);

/// analysis.json: stable keys documented in docs/profiling.md.
std::string analysisJson(const Analysis &analysis);

} // namespace ptoc::profile
