// The rules `l1-reuse-merge` decides by: how many cube subgraphs may share one
// anchor, and how many L1 and copy-in bytes a (merged) subgraph needs. Exposed so
// unit tests, and later the tuner, apply exactly the rules the pass applies.
#pragma once

#include <cstdint>

#include "llvm/ADT/ArrayRef.h"

#include "ptoc/ir/Operation.h"
#include "ptoc/passes/Passes.h"

namespace ptoc::passes {

/// The automatic merge count for an isomorphism group of `groupSize` AIC
/// subgraphs on a device with `aicCores` cube cores: floor(groupSize / (2 *
/// aicCores)), at least 1 (1 means "no merge"). After merging, the group still
/// has at least two tasks per cube core, so L1 reuse never starves the cores
/// (PyPTO's rule, REFERENCE.md "L1 reuse").
int64_t l1ReuseAutomaticCount(int64_t groupSize, int64_t aicCores);

/// Where a group's merge count comes from (for the debug log).
enum class L1ReuseCountSource : uint8_t { Off, Automatic, SettingKey, SettingDefault };

struct L1ReuseCount {
  int64_t count = 1; ///< members per anchor, the anchor included; 1 = no merge
  L1ReuseCountSource source = L1ReuseCountSource::Off;
};

/// The merge count of isomorphism group `hashOrder` (of `groupSize` subgraphs):
/// mode 0 -> 1; mode 1 -> automatic; mode 2 -> `setting[hashOrder]`, else
/// `setting[-1]`, else automatic (an exact key beats the default, which beats
/// automatic).
L1ReuseCount l1ReuseMergeCount(const L1ReuseMergeOptions &options, int64_t hashOrder,
                               int64_t groupSize, int64_t aicCores);

/// The L1 footprint of a subgraph's ops (or of two subgraphs' ops taken
/// together): the summed byte size of its `copy_in`s to `l1`, counting once the
/// copy_ins that `l1-reuse-merge` deduplicates (same source value, offsets and tile
/// type, and the same set of tokens). Deliberately conservative: every L1 tile is
/// counted as resident at the same time, so a merge allowed by this rule never
/// exceeds L1, whatever order the tiles are used in.
int64_t l1FootprintBytes(llvm::ArrayRef<ir::Operation *> ops);

/// The copy-in bytes of a subgraph's ops after the same deduplication (every
/// `copy_in`, to l1 or ub): what `mg-copyin-upper-bound` is compared against.
int64_t dedupedCopyInBytes(llvm::ArrayRef<ir::Operation *> ops);

} // namespace ptoc::passes
