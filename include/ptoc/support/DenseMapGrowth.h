// DenseMapGrowth: growing an llvm::DenseMap so that running out of host memory leaves
// it whole. DenseMap's own growth is not exception safe: it records the new bucket
// count before it allocates the buckets, so when the allocation throws std::bad_alloc
// the map describes buckets it does not have, and destroying it while the exception
// unwinds (or later) frees garbage (docs/reliability.md, "Host memory").
#pragma once

#include <algorithm>
#include <cstddef>
#include <utility>

#include "llvm/ADT/DenseMap.h"

namespace ptoc::support {

/// Makes room in `map` for one more entry, so that inserting it never makes the map
/// grow itself: when the next entry would reach DenseMap's load limit (3/4 of the
/// buckets), a map with twice the buckets is built first (if that allocation fails,
/// its constructor throws and `map` is untouched), the entries move over and the maps
/// are swapped. Call it before each insertion into a map that grows with the input.
/// For maps that are only inserted into: erasing leaves tombstones, which DenseMap
/// clears by rehashing in place, and that growth this does not prevent.
template <typename K, typename V, typename KeyInfo, typename Bucket>
void reserveOneMore(llvm::DenseMap<K, V, KeyInfo, Bucket> &map) {
  size_t buckets = map.getMemorySize() / sizeof(Bucket);
  // DenseMap grows when an insert would make entries * 4 >= buckets * 3.
  if ((map.size() + 1) * 4 < buckets * 3) return;
  // Twice the buckets (64 at least), as DenseMap's own growth: reserving for N entries
  // allocates the power of two above N * 4 / 3 + 1.
  size_t target = std::max<size_t>(2 * buckets, 64);
  llvm::DenseMap<K, V, KeyInfo, Bucket> bigger(unsigned(target * 3 / 4 - 1));
  for (auto &entry : map) bigger.try_emplace(std::move(entry.first), std::move(entry.second));
  map.swap(bigger);
}

} // namespace ptoc::support
