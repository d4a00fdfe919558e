// What `l1-reuse-merge` measures: how many L1 and copy-in bytes a (merged)
// subgraph needs (its merge count is MergeRules.h's l1ReuseAutomaticCount and
// chooseMergeCount). Exposed so unit tests, and later the tuner, apply exactly the
// rules the pass applies.
#pragma once

#include <cstdint>

#include "llvm/ADT/ArrayRef.h"

#include "ptoc/ir/Operation.h"
#include "ptoc/passes/Passes.h"

namespace ptoc::passes {

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
