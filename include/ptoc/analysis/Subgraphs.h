// The subgraph structure of a partitioned function: which tile ops form each
// subgraph, the dependency DAG between subgraphs, structural hashes and hash
// orders, and the `subgraph` table the partitioned IR prints. Shared by the
// partition pass, every merge pass, codegen (which stamps group keys with
// hashOrderKey) and the session's compile statistics.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/raw_ostream.h"

#include "ptoc/analysis/CostModel.h"
#include "ptoc/ir/Func.h"
#include "ptoc/target/CoreKind.h"

namespace ptoc::analysis {

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
  /// Fresh merge bookkeeping for `n` ids, none merged: edge-list epochs, union-find,
  /// search marks (after build() and renumber()).
  void resetMergeScratch(size_t n);
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

} // namespace ptoc::analysis
