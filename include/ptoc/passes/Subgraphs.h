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
#include "ptoc/target/CoreKind.h"

namespace ptoc::passes {

/// One subgraph: its ops (in body order) and what the table records about it.
struct Subgraph {
  int64_t id = -1;
  target::CoreKind core = target::CoreKind::None;
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

/// Structural hash of a set of ops: op kinds, attributes other than tile offsets
/// and `sg`, result types, and how the ops use each other's results. Tiles of one
/// op at different offsets hash equally. Stable across runs and platforms.
uint64_t structuralHash(llvm::ArrayRef<ir::Operation *> ops);

/// The subgraphs of one function and the DAG between them (an edge p -> c when a
/// copy_in of c waits on a copy_out token of p). Built from the ops' `sg`
/// attributes; merges update both the ops and the DAG.
class SubgraphGraph {
public:
  /// Reads the `sg` attribute of every tile op of `f`.
  static SubgraphGraph fromFunc(ir::Func &f, const CostModel &cost);

  ir::Func &func() const { return *func_; }
  /// Live subgraphs in id order.
  std::vector<Subgraph *> subgraphs();
  Subgraph *find(int64_t id);
  llvm::ArrayRef<int64_t> producers(int64_t id) const;
  llvm::ArrayRef<int64_t> consumers(int64_t id) const;

  /// Whether merging `a` and `b` would create a cycle: a path between them through
  /// a third subgraph.
  bool mergeCreatesCycle(int64_t a, int64_t b) const;
  /// Moves every op of `from` into `into` (their `sg` becomes `into`) and updates
  /// the DAG; `from` disappears.
  void merge(int64_t into, int64_t from);

  /// Recomputes every subgraph's hash, hash order, group size, cycles and copy-in
  /// bytes (deterministic: hash orders number groups by first appearance in id
  /// order).
  void summarise();
  /// Isomorphism groups: hash order -> member ids (ascending), after summarise().
  std::vector<std::vector<int64_t>> groups() const;

  /// Renumbers ids densely in order of each subgraph's first op, rewrites every
  /// op's `sg`, and replaces the function's `subgraph` ops (at the start of the
  /// body) with the current table. Calls summarise() first.
  void writeTable();

private:
  ir::Func *func_ = nullptr;
  const CostModel *cost_ = nullptr;
  std::vector<Subgraph> subgraphs_; // index = id; merged-away entries have no ops
  std::vector<std::vector<int64_t>> producers_, consumers_;
};

/// Why a merge happened or did not. Every merge pass records one per decision.
enum class MergeVerdict : uint8_t {
  Merged,
  RefusedParallelism, ///< would leave fewer subgraphs than the parallelism floor
  RefusedCopyInCap,   ///< merged copy-in bytes would exceed mg_copyin_upper_bound
  RefusedL1Capacity,  ///< merged L1 footprint would exceed the device's L1
  RefusedScope,       ///< one side is in an sg_scope
  RefusedCycleBound,  ///< merged estimated cycles would exceed pg_upper_bound
  RefusedCycle,       ///< the merge would create a dependency cycle
  RefusedCoreKind,    ///< AIC and AIV subgraphs never merge
  RefusedFuel,        ///< the merge fuel ran out (bisection)
};

/// Name used in logs and statistics: "merged", "parallelism-floor", "copy-in-cap",
/// "l1-capacity", "scope", "cycle-bound", "would-create-cycle", "core-kind", "fuel".
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
  uint64_t count(MergeVerdict v) const { return counts_[static_cast<unsigned>(v)]; }

private:
  std::string pass_;
  llvm::raw_ostream *debug_;
  int64_t fuel_;
  int64_t merged_ = 0;
  uint64_t counts_[9] = {};
};

} // namespace ptoc::passes
