// The subgraph structure of a partitioned function: which tile ops form each
// subgraph, the dependency DAG between subgraphs, structural hashes and hash
// orders, and the `subgraph` table the partitioned IR prints. Shared by the
// partition pass and every merge pass.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/raw_ostream.h"

#include "ptoc/ir/Func.h"
#include "ptoc/passes/CostModel.h"
#include "ptoc/passes/Pass.h"
#include "ptoc/passes/PassOptions.h"
#include "ptoc/target/CoreKind.h"

namespace ptoc::passes {

/// One subgraph: its ops and what the table records about it.
struct Subgraph {
  int64_t id = -1;
  target::CoreKind core = target::CoreKind::None;
  /// In body order, except right after a merge (summarise() sorts them again).
  std::vector<ir::Operation *> ops;
  /// The sg_scope its ops share, or -1. A scoped subgraph merges with nothing.
  int64_t scope = -1;
  // Filled by SubgraphGraph::summarise():
  uint64_t hash = 0;       ///< structural hash (equal for isomorphic subgraphs)
  int64_t hashOrder = -1;  ///< isomorphism group number, by first appearance in id order
  int64_t groupSize = 0;   ///< members of its isomorphism group
  int64_t cycles = 0;      ///< CostModel estimate (sum over its ops)
  int64_t copyInBytes = 0; ///< bytes its copy_ins bring in from GM
};

/// How far a function has come, judged by its ops: `Partitioned` with a `subgraph`
/// table, `Tile` with tile ops, `Tensor` with whole-tensor compute ops, `Empty`
/// with nothing to run (only aliases, workspaces and the return).
enum class FuncLevel : uint8_t { Empty, Tensor, Tile, Partitioned };
FuncLevel funcLevel(const ir::Func &f);

/// The user-facing key of an isomorphism group: `func<F>_<order>`.
std::string hashOrderKey(unsigned funcIndex, int64_t hashOrder);

/// Structural hash of a set of ops (given with definers before users, e.g. in
/// body order): op kinds, attributes other than tile offsets, `sg` and
/// `sg_scope`, result types, the types of values read from outside the set, and
/// how the ops use each other's results. Dependency operands from outside the set
/// are left out (they order tasks, they are not code). Tiles of one op at
/// different offsets hash equally, and so do isomorphic sets whose ops come in
/// another (topological) order. Stable across runs and platforms (built on
/// ir/StableHash.h).
uint64_t structuralHash(llvm::ArrayRef<ir::Operation *> ops);

class MergeLog;

/// The subgraphs of one function and the DAG between them (an edge p -> c when an
/// op of c uses a result of an op of p, i.e. a copy_in of c waits on a copy_out
/// token of p). Built from the ops' `sg` attributes; merges update both the ops and
/// the DAG. Keeps a level per subgraph that strictly increases along every edge
/// (raised incrementally after a merge), so a cycle check only searches the
/// subgraphs whose level lies between the two: siblings of one level are checked
/// in O(1), and merging into a fan-in hub never walks the hub's other producers.
/// Not thread-safe (queries use internal scratch). While a graph is in use, its
/// ops' walk marks hold their body positions: start no other walk (Func::
/// reserveWalkMarks) on the function meanwhile.
class SubgraphGraph {
public:
  SubgraphGraph() = default;
  SubgraphGraph(SubgraphGraph &&) = default;
  SubgraphGraph &operator=(SubgraphGraph &&) = default;

  /// Reads the `sg` attribute of every tile op of `f`. Ids are renumbered densely
  /// in order of each subgraph's first op (what writeTable() produces, so a table
  /// written by a pass reads back with the same ids). A subgraph's scope is the
  /// `sg_scope` of its ops (-1 if none). A tile op without `sg` gets a subgraph of
  /// its own.
  static SubgraphGraph fromFunc(ir::Func &f, const CostModel &cost);
  /// Builds the graph of the given subgraphs (index = id; `ops` and `scope` set by
  /// the caller, `ops` in any order); `core` is taken from the first op. Every tile
  /// op of `f` should be in exactly one of them.
  static SubgraphGraph fromSubgraphs(ir::Func &f, const CostModel &cost,
                                     std::vector<Subgraph> subgraphs);

  ir::Func &func() const { return *func_; }
  /// Live subgraphs in id order.
  std::vector<Subgraph *> subgraphs();
  /// The live subgraph `id`, or null (unknown id, or merged away).
  Subgraph *find(int64_t id);
  const Subgraph *find(int64_t id) const;
  /// The live subgraph that `id` is now part of (`id` itself unless merged away).
  int64_t resolve(int64_t id) const;
  /// Number of live subgraphs.
  size_t numLive() const { return live_; }
  /// One more than the highest id ever used (live or merged away): the size of a
  /// table indexed by id.
  size_t idBound() const { return subgraphs_.size(); }
  /// Ids of the live producers / consumers of `id`, ascending (valid until the
  /// next merge).
  llvm::ArrayRef<int64_t> producers(int64_t id) const;
  llvm::ArrayRef<int64_t> consumers(int64_t id) const;
  /// -1 when the subgraph DAG is acyclic; otherwise a subgraph on a cycle (the
  /// partition is unschedulable: merge checks and merges must not be used).
  int64_t cycleMember() const { return cycleMember_; }

  /// Whether merging `a` and `b` would create a cycle: a path between them through
  /// a third subgraph. Searches only subgraphs whose level is between theirs, and
  /// at most kCycleSearchBudget of them: beyond that (two subgraphs far apart in
  /// the DAG) it answers true without proof, which only ever refuses a merge.
  bool mergeCreatesCycle(int64_t a, int64_t b) const;
  /// Whether the last mergeCreatesCycle() (or refused merge()) answered true
  /// because its search budget ran out, not because it found a path.
  bool lastCycleCheckGaveUp() const { return lastCheckGaveUp_; }
  /// Subgraphs a cycle check may visit before giving up (bounds each check, so
  /// a pass stays near-linear when it tries many far-apart pairs).
  static constexpr size_t kCycleSearchBudget = 512;
  /// The level of live subgraph `id`: it strictly increases along every edge, so
  /// subgraphs of one level never reach each other (merging them is always
  /// acyclic), and the level difference bounds the length of any path between two.
  int64_t level(int64_t id) const { return level_[id]; }
  /// Moves every op of `from` into `into` (their `sg` becomes `into` when the table
  /// is written) and updates the DAG; `from` disappears. Adds cycles and copy-in
  /// bytes (summarise() recomputes them exactly). Returns false, changing nothing,
  /// when the merge would create a cycle or either id is not live.
  bool merge(int64_t into, int64_t from);

  /// Recomputes the hash, cycles and copy-in bytes of every subgraph changed since
  /// the last call (merged, or new), sorts their ops into body order, and renumbers
  /// hash orders and group sizes (deterministic: hash orders number groups by first
  /// appearance in id order).
  void summarise();
  /// Isomorphism groups: hash order -> member ids (ascending), after summarise().
  const std::vector<std::vector<int64_t>> &groups() const { return groups_; }

  /// Renumbers ids densely in order of each subgraph's first op, summarises,
  /// rewrites every op's `sg`, and replaces the function's `subgraph` ops (at the
  /// start of the body) with the current table. Returns whether the IR changed.
  bool writeTable();

private:
  void build();
  void renumber();
  uint64_t hashSubgraph(const Subgraph &s) const;
  int64_t findRoot(int64_t id) const;
  llvm::ArrayRef<int64_t> compacted(std::vector<int64_t> &list, uint64_t &epoch,
                                    int64_t self) const;
  // Whether `target` (at a higher level) is reachable from `from` through another
  // subgraph; searches consumers below target's level only.
  bool reachesThroughOther(int64_t from, int64_t target) const;

  ir::Func *func_ = nullptr;
  const CostModel *cost_ = nullptr;
  std::vector<Subgraph> subgraphs_; // index = id; merged-away entries have no ops
  size_t live_ = 0;
  // Edge lists may name merged-away ids or repeat ids; producers()/consumers()
  // compact them on demand (when merges happened since the last compaction).
  mutable std::vector<std::vector<int64_t>> producers_, consumers_;
  mutable std::vector<uint64_t> producersEpoch_, consumersEpoch_;
  uint64_t mergeEpoch_ = 1;
  mutable std::vector<int64_t> parent_; // union-find over ids (merged-away -> into)
  std::vector<int64_t> level_;          // strictly increasing along every edge
  std::vector<uint8_t> dirty_;          // needs summarise(): 1 hash and costs, 2 also op order
  std::vector<int64_t> attrId_;         // the `sg` all its ops carry, or -1
  uint64_t posBase_ = 0;                // op walkMark = posBase_ + 1 + body position
  bool idsInBodyOrder_ = true;          // ids ascend with each subgraph's first op
  int64_t cycleMember_ = -1;
  std::vector<std::vector<int64_t>> groups_;
  mutable bool lastCheckGaveUp_ = false;
  mutable std::vector<uint32_t> visited_; // scratch for searches
  mutable uint32_t visitStamp_ = 0;
};

/// The detail a merge pass logs for a RefusedCycle verdict, after a refused
/// merge() or a true mergeCreatesCycle(): the path, or the exhausted search.
std::string cycleRefusalDetail(const SubgraphGraph &graph);

/// The automatic `pg_upper_bound` (estimated cycles) for a function whose subgraphs
/// total `totalCycles`: >= 1e7 -> 5e6; >= 2.9e5 -> 1.5e5; >= 5e4 -> 1e4; else 1536
/// (PyPTO's later partitioner, REFERENCE.md).
int64_t automaticUpperBound(int64_t totalCycles);

/// The automatic NBuffer merge count for an isomorphism group of `groupSize`
/// subgraphs with `cores` cores to fill: 1 (no merge) if groupSize <= cores; else
/// start at ceil(groupSize / cores) and decrease while ceil(groupSize / N) < cores,
/// so the group keeps at least `cores` subgraphs.
int64_t automaticNBuffer(int64_t groupSize, int64_t cores);

/// Where a group's NBuffer count came from (for the debug log).
enum class NBufferSource : uint8_t { Off, Automatic, SettingKey, SettingDefault };

struct NBufferChoice {
  int64_t n = 1; ///< members merged into one; 1 = no merge
  NBufferSource source = NBufferSource::Off;
};

/// The NBuffer count of group `hashOrder`: mode 0 -> 1; mode 1 -> automatic; mode 2
/// -> `setting[hashOrder]`, else `setting[-1]`, else automatic (an exact key beats
/// the default, which beats automatic).
NBufferChoice chooseNBuffer(int64_t mode, const IntMap &setting, int64_t hashOrder,
                            int64_t groupSize, int64_t cores);

/// What an NBuffer merge pass asks of nbufferMerge().
struct NBufferMergeRequest {
  target::CoreKind core;  ///< only groups of this core kind are merged
  int64_t mode = 0;       ///< 0 off, 1 automatic, 2 from `setting`
  IntMap setting;         ///< hash order -> N, -1 = default
  int64_t cores = 1;      ///< the parallelism the automatic N keeps
  /// mg_copyin_upper_bound: a chunk stops growing before its copy-in bytes would
  /// exceed this; -1 = no cap.
  int64_t copyInUpperBound = -1;
  /// UB capacity in bytes (AIV groups; -1 = no check). A merged leaf runs its
  /// members one after another and double buffers two of them (docs/codegen.md), so
  /// its UB footprint is estimated as twice one member's per-chain peak
  /// (localPeakBytes of the member's ops in LocalScheduler order; members of a group
  /// are isomorphic, so the group's first member stands for all). When that exceeds
  /// this, the group's merges are refused (RefusedUbCapacity). runNBufferMergePass
  /// sets it, `blockBytes` and `deviceName` from the device for AIV requests.
  int64_t ubCapacity = -1;
  int64_t blockBytes = 32;  ///< the device's local-buffer block (tile rows are padded to it)
  std::string deviceName = {}; ///< for the log
  unsigned funcIndex = 0; ///< for `func<F>_<order>` in the log
};

/// The pass object both NBuffer passes are: `argument` names it (statistics, logs),
/// `settingName` names its setting option in errors. Defined in NBufferMerge.cpp.
std::unique_ptr<Pass> createNBufferMergePassFor(llvm::StringRef argument,
                                                llvm::StringRef settingName,
                                                NBufferMergeRequest request, int64_t fuel);

/// The whole run of an NBuffer merge pass over `m` (both NBuffer passes are this
/// with another core kind): checks `request.setting` (keys >= -1, N >= 1; named
/// `settingName` in errors) and that every function with work is partitioned
/// ("run partition first"), then for each partitioned function merges with
/// nbufferMerge() (`request.funcIndex` is set per function) and rewrites its
/// table. `cores` < 0 in `request` means the device's count for its core kind.
PassResult runNBufferMergePass(ir::Module &m, const target::DeviceSpec &device,
                               llvm::StringRef settingName, NBufferMergeRequest request,
                               MergeLog &log);

/// The NBuffer merge shared by `nbuffer-merge` (AIV) and `cube-nbuffer-merge`
/// (AIC): for each isomorphism group of `request.core` subgraphs, in hash order,
/// chooses N and merges consecutive members (ascending id) in chunks of at most N
/// into the chunk's first member (the last chunk may be smaller). A merge is
/// refused for an sg_scope, a cycle or spent fuel, and recorded in `log`; a member
/// refused for a cycle (or after a scoped head) starts the next chunk, a scoped
/// member is skipped. `debug` (may be null) also gets one line per group. Calls
/// summarise() first; the caller writes the table. Returns the number of merges.
int64_t nbufferMerge(SubgraphGraph &graph, const NBufferMergeRequest &request, MergeLog &log,
                     llvm::raw_ostream *debug);

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
  /// Whether another merge may happen (fuel < 0 means unlimited). A merge pass
  /// asks before each merge and records RefusedFuel when it may not.
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

} // namespace ptoc::passes
