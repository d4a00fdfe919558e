// The rules every merge pass (partition, nbuffer-merge, cube-nbuffer-merge,
// l1-reuse-merge) decides by, declared once: how many members a group's merge takes
// (mode, setting, automatic count, and where the count came from), which refusal
// rules apply in which order, each decision with its reason, and the log that
// records them (docs/passes.md, "Merge rules").
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include "ptoc/analysis/Subgraphs.h"
#include "ptoc/passes/PassOptions.h"
#include "ptoc/target/CoreKind.h"
#include "ptoc/target/DeviceSpec.h"

namespace ptoc::passes {

// ---------------------------------------------------------------- merge counts

/// Where a group's merge count came from (printed in the pass's debug log).
enum class CountSource : uint8_t { Off, Automatic, SettingKey, SettingDefault };
/// "off", "automatic", "setting key", "setting default -1".
llvm::StringRef countSourceName(CountSource s);

/// How many subgraphs of a group merge into one (1 = no merge), and why.
struct MergeCount {
  int64_t n = 1;
  CountSource source = CountSource::Off;
  /// The setting entry it came from (SettingKey: `3` or `func1_3`; SettingDefault: -1).
  GroupKey key;
};

/// The one count rule of the `*_mode` / `*_setting` knobs, for group `hashOrder` of
/// the root function at position `funcIndex` of its module: mode 0 -> 1; mode 1 ->
/// `automatic`; mode 2 -> the setting's entry (lookupGroupSetting: `func<F>_<order>`,
/// else the plain hash order, else -1), else (or when that entry is kAutomaticCount)
/// `automatic`.
MergeCount chooseMergeCount(int64_t mode, const GroupSetting &setting, unsigned funcIndex,
                            int64_t hashOrder, int64_t automatic);

/// NBuffer merges' automatic count for a group of `groupSize` subgraphs with `cores`
/// cores to fill: 1 (no merge) if groupSize <= cores; else start at
/// ceil(groupSize / cores) and decrease while ceil(groupSize / N) < cores, so the
/// group keeps at least `cores` subgraphs.
int64_t automaticNBuffer(int64_t groupSize, int64_t cores);

/// The automatic N of a group that runs in a pipeline with the other core kind (a
/// member has a producer or consumer there, e.g. softmax rows between two matmuls).
/// Merging N members hides what double buffering hides, `hiddenCycles` per member
/// but the first (the serial member's cycles over its steady-state, pipelined
/// cycles, plus a dispatch), but a merged task waits for all N members' producers
/// and holds its consumers until all N are done: about N x `steadyCycles` of a
/// pipeline's fill and drain. A core runs groupSize / cores members, so its time is
/// about (groupSize / cores) x hiddenCycles / N + N x steadyCycles, least at
/// N = sqrt((groupSize / cores) x hiddenCycles / steadyCycles): that, rounded up, at
/// least 1 and at most automaticNBuffer (one wave).
int64_t pipelinedNBuffer(int64_t groupSize, int64_t cores, int64_t hiddenCycles,
                         int64_t steadyCycles);

/// A group of subgraphs of a loop body as the control thread's rule sees it.
struct BodyGroup {
  target::CoreKind core = target::CoreKind::None;
  int64_t size = 1;         ///< members (subgraphs) per iteration
  int64_t memberCycles = 0; ///< one member's steady-state cycles (its busiest pipe)
  /// Whether the rule may merge it; false: its `size` tasks stay as they are (a group
  /// of the other core kind that an earlier merge pass has already decided).
  bool mergeable = true;
};

/// The control thread's rule for a loop body (a function the AICPU control thread
/// instantiates per iteration, docs/runtime.md "Loops"). Per iteration the thread
/// spends `scheduler.control_iteration_cycles` and then builds the iteration's tasks
/// one after another, `scheduler.control_task_cycles` each, while the cores run them
/// side by side: the iteration's work keeps the cores of kind k busy for at least
/// W_k = (the sum of size x memberCycles over its groups of kind k) / (the device's
/// cores of kind k), so for at least W = max_k W_k. The thread does not bound the span
/// while it builds an iteration in at most that time:
///   control_iteration_cycles + control_task_cycles x (tasks per iteration) <= W.
/// Merging a group's members N at a time leaves ceil(size / N) tasks of it (a group
/// that is not `mergeable` keeps its size in tasks). Returns
/// the least task length tau (cycles) such that merging every group up to tau,
/// N = ceil(tau / memberCycles) (controlThreadNBuffer), meets the rule: 0 when the
/// unmerged body meets it, the longest group's size x memberCycles (every group one
/// task) when no tau does.
int64_t controlThreadTaskCycles(llvm::ArrayRef<BodyGroup> groups,
                                const target::DeviceSpec &device);

/// A loop-body group's N for the control thread's task length `taskCycles`
/// (controlThreadTaskCycles): n = ceil(taskCycles / memberCycles), at least 1, at most
/// `groupSize` (one task per group and iteration), then evened out: the same
/// ceil(groupSize / n) tasks with as few members each as that allows,
/// ceil(groupSize / ceil(groupSize / n)) (32 members at n = 13: 11, not 13 + 13 + 6).
int64_t controlThreadNBuffer(int64_t taskCycles, int64_t groupSize, int64_t memberCycles);

/// l1-reuse-merge's automatic count for a group of `groupSize` AIC subgraphs on a
/// device with `aicCores` cube cores: floor(groupSize / (2 * aicCores)), at least 1.
/// After merging, the group still has at least two tasks per cube core, so L1 reuse
/// never starves the cores (PyPTO's rule, REFERENCE.md "L1 reuse").
int64_t l1ReuseAutomaticCount(int64_t groupSize, int64_t aicCores);

/// partition's automatic `pg_upper_bound` (estimated cycles) for a function whose
/// subgraphs total `totalCycles`: >= 1e7 -> 5e6; >= 2.9e5 -> 1.5e5; >= 5e4 -> 1e4;
/// else 1536 (PyPTO's later partitioner, REFERENCE.md).
int64_t automaticUpperBound(int64_t totalCycles);

// ---------------------------------------------------------------- verdicts and the log

/// Why a merge happened or did not. Every merge pass records one per decision.
enum class MergeVerdict : uint8_t {
  Merged,
  RefusedParallelism, ///< would leave fewer subgraphs than the parallelism floor
  RefusedCopyInCap,   ///< merged copy-in bytes would exceed mg_copyin_upper_bound
  RefusedL1Capacity,  ///< merged L1 footprint would exceed the device's L1
  RefusedUbCapacity,  ///< merged UB footprint (double buffered) would exceed the device's UB
  RefusedScope,       ///< one side is in an sg_scope
  RefusedCycleBound,  ///< merged estimated cycles would exceed pg_upper_bound
  RefusedCycle,       ///< the merge would create a dependency cycle
  RefusedCoreKind,    ///< AIC and AIV subgraphs never merge
  RefusedFuel,        ///< the merge fuel ran out (bisection)
};

/// Name used in logs and statistics: "merged", "parallelism-floor", "copy-in-cap",
/// "l1-capacity", "ub-capacity", "scope", "cycle-bound", "would-create-cycle",
/// "core-kind", "fuel".
llvm::StringRef mergeVerdictName(MergeVerdict v);

/// Records merge decisions: counts per verdict (for pass statistics) and, when a
/// debug stream is given, one line per decision:
///   `<pass>: merge sg 3 <- sg 7: refused (cycle-bound): 2100 > 1536 cycles`.
class MergeLog {
public:
  MergeLog(llvm::StringRef pass, llvm::raw_ostream *debug, int64_t fuel)
      : pass_(pass.str()), debug_(debug), fuel_(fuel) {}
  /// Whether another merge may happen (fuel < 0 means unlimited).
  bool hasFuel() const { return fuel_ < 0 || merged_ < fuel_; }
  void record(int64_t into, int64_t from, MergeVerdict verdict, llvm::StringRef detail = "");
  /// Writes a free-form line (`<pass>: <text>`) to the debug stream, if any.
  void note(llvm::StringRef text);
  llvm::raw_ostream *debug() const { return debug_; }
  llvm::StringRef pass() const { return pass_; }
  uint64_t count(MergeVerdict v) const { return counts_[static_cast<unsigned>(v)]; }

private:
  std::string pass_;
  llvm::raw_ostream *debug_;
  int64_t fuel_;
  int64_t merged_ = 0;
  uint64_t counts_[10] = {};
};

/// The detail a merge pass logs for a RefusedCycle verdict, after a refused
/// merge() or a true mergeCreatesCycle(): the path found, or the search that ran out
/// (which proves nothing: the merge is refused to be safe).
std::string cycleRefusalDetail(const analysis::SubgraphGraph &graph);

// ---------------------------------------------------------------- the rules

/// One proposed merge of subgraph `from` into `into`, with the facts the rules
/// need. A fact a pass does not set is a rule that does not apply to it.
struct MergeProposal {
  const analysis::Subgraph &into, &from;
  /// Partition, groups of different sizes: the member counts of the two groups, the
  /// smaller group's total cycles, and the options they are held to.
  struct Groups {
    int64_t sizeInto, sizeFrom, smallerCycles, parallelLowerBound, lowerBound;
  };
  std::optional<Groups> groups = std::nullopt;
  /// Partition: the cycle bound (pg-upper-bound) the merged subgraph is held to.
  std::optional<int64_t> cycleBound = std::nullopt;
  /// mg-copyin-upper-bound (-1: no cap) and the bytes the merged subgraph would copy
  /// in: the two summed, or given (`copyInMerged`) when the merge removes duplicate
  /// copy_ins (l1-reuse-merge).
  int64_t copyInCap = -1;
  std::optional<int64_t> copyInMerged = std::nullopt;
  /// A local buffer the merged leaf would overflow: the verdict (UB or L1), the
  /// reason, already spelled out by the pass that measured it.
  struct Buffer {
    MergeVerdict verdict;
    std::string why;
  };
  std::optional<Buffer> bufferOverflow = std::nullopt;
};

/// Applies the refusal rules to a proposal, always in this order:
///  1. scope: either side is in an sg_scope (a scoped subgraph merges with nothing);
///  2. core kind: the two run on different core kinds;
///  3. parallelism floor: groups of different sizes, the smaller under
///     pg-parallel-lower-bound members and over pg-lower-bound cycles in total;
///  4. cycle bound: the merged estimated cycles over pg-upper-bound;
///  5. copy-in cap: the merged copy-in bytes over mg-copyin-upper-bound;
///  6. buffer capacity: the merged leaf over the device's UB or L1;
///  7. fuel: the merge-fuel is spent;
///  8. dependency cycle: merging would put the two on a cycle (SubgraphGraph::merge).
/// The first rule that refuses is the decision; it is recorded in the log with its
/// reason (and `consequence`, e.g. "; sg 3 starts the next chunk"), and so is a merge
/// (with `mergedDetail`).
class MergeRules {
public:
  MergeRules(analysis::SubgraphGraph &graph, MergeLog &log) : graph_(graph), log_(log) {}

  /// Rules 1-7 without merging or logging: the refusal with its reason, or Merged.
  MergeVerdict check(const MergeProposal &p, std::string &reason) const;
  /// Every rule; merges when none refuses. Returns the decision.
  MergeVerdict tryMerge(const MergeProposal &p, llvm::StringRef mergedDetail,
                        llvm::StringRef consequence = "");
  MergeLog &log() { return log_; }

private:
  analysis::SubgraphGraph &graph_;
  MergeLog &log_;
};

} // namespace ptoc::passes
