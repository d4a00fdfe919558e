// CompileStats: what compilation made of a function — subgraphs per core kind, the
// isomorphism groups (hash orders) with their sizes, and the merge passes' decisions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ptoc/passes/PassManager.h"
#include "ptoc/target/CoreKind.h"

namespace ptoc::ir {
class Func;
}
namespace ptoc::target {
struct DeviceSpec;
}

namespace ptoc::session {

/// One group of isomorphic subgraphs (one leaf program after codegen).
struct GroupStats {
  std::string key;            ///< `func<F>_<order>`, the key of `*_setting` maps
  int64_t hashOrder = -1;     ///< the `<order>` part
  /// The `<F>` part: the root function's position in its module (analysis::hashOrderKey).
  unsigned funcIndex = 0;
  target::CoreKind core = target::CoreKind::None;
  int64_t size = 0;           ///< members (tasks)
  int64_t cycles = 0;         ///< estimated cycles of its largest member
  int64_t copyInBytes = 0;    ///< GM bytes its largest member copies in
};

struct CompileStats {
  /// Zero until the function is partitioned.
  int64_t subgraphs = 0, aicSubgraphs = 0, aivSubgraphs = 0;
  /// Tile ops after expand-tiles (0 before).
  int64_t tileOps = 0;
  /// By hash order (a module with loops: each root function's in turn; the key says
  /// which function).
  std::vector<GroupStats> groups;
  /// A module with loops: its root functions (loop bodies and segments), each compiled
  /// once; 0 without loops.
  int64_t rootFunctions = 0;
  /// Every statistic of every pass that ran, in pipeline order: the merge passes'
  /// `merged` and `refused-<reason>` counts are its merge decisions.
  std::vector<passes::PassStatisticValue> passStatistics;

  /// The value of `pass`'s statistic `name` (summed if the pass ran twice), 0 if none.
  uint64_t statistic(llvm::StringRef pass, llvm::StringRef name) const;
};

/// Adds the subgraph table of partitioned `func` (index `funcIndex` in its module) to
/// `stats` (its groups after those already there: a module with loops adds every root
/// function's); leaves it untouched for an unpartitioned function.
void collectSubgraphStats(ir::Func &func, unsigned funcIndex, const target::DeviceSpec &device,
                          CompileStats &stats);

} // namespace ptoc::session
