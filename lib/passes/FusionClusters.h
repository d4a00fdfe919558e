// The clusters that tile ops will form (ops joined by local tiles run as one task)
// and the dependency graph between them, kept while expand-tiles emits ops, so it
// can refuse a fusion that would make a cluster wait on its own results through
// GM (no schedule could run it). Internal to lib/passes.
#pragma once

#include <cstdint>
#include <vector>

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include "ptoc/ir/Operation.h"

namespace ptoc::passes {

/// Union-find over the tile ops emitted so far (an op joins the clusters of its
/// local data operands, as partition will join them), with an edge from the
/// cluster of every dependency operand's definer. Each cluster has a level that
/// strictly increases along edges, so a reachability query only searches the
/// clusters whose level lies between the two ends, and gives up (answering "yes",
/// which only ever refuses a fusion) after kSearchBudget clusters.
class FusionClusters {
public:
  static constexpr size_t kSearchBudget = 512;

  /// Registers a newly emitted tile op: joins its local data operands' clusters and
  /// adds an edge from each dependency operand's cluster.
  void add(const ir::Operation &op);
  /// Whether the task of local tile `from` reaches the task of `to` through GM (a
  /// path of dependencies through other tasks), so an op reading both would make
  /// a task wait on itself: `from` must then be read through GM. Values that are
  /// not registered tile results never do.
  bool reachesThroughGm(const ir::Value *from, const ir::Value *to);
  /// Whether a copy_out of `tile` waiting on the ops `deps` would close a cycle:
  /// the tile's cluster reaches one of theirs.
  bool waitWouldCycle(const ir::Value *tile, llvm::ArrayRef<const ir::Operation *> deps);

private:
  int64_t clusterOf(const ir::Value *v);
  uint32_t find(uint32_t x);
  void unite(uint32_t a, uint32_t b);
  void addEdge(uint32_t from, uint32_t to);
  void raise(uint32_t c, int64_t level);
  /// Whether a path of edges leads from cluster `from` to cluster `to` (roots,
  /// distinct); true also when the search budget runs out.
  bool reaches(uint32_t from, uint32_t to);

  llvm::DenseMap<const ir::Operation *, uint32_t> node_;
  std::vector<uint32_t> parent_;
  std::vector<int64_t> level_;
  std::vector<llvm::SmallVector<uint32_t, 2>> succ_;
  bool cyclic_ = false; ///< a cycle slipped in: every query answers yes
  // Scratch for searches.
  std::vector<uint32_t> seen_;
  uint32_t stamp_ = 0;
  std::vector<uint32_t> stack_;
};

} // namespace ptoc::passes
