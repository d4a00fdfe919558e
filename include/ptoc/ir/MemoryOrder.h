// The memory order of the tile level (docs/ir.md, "Memory order"): which earlier
// accesses of a GM region a copy_in or copy_out must wait for. Declared once here;
// expand-tiles uses it to choose dependency operands and the verifier to check them.
#pragma once

#include <cstdint>
#include <vector>

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include "ptoc/ir/Region.h"
#include "ptoc/ir/Value.h"

namespace ptoc::ir {

class Operation;

/// A region of a GM tensor's memory: the tensor's root (a function argument or a
/// `gm_tensor`), the region in the root's coordinates, and its linear element
/// range in the root. A region read through a `reshape` alias is its bounding box
/// in the reshape's base, with the linear range keeping it exact there.
struct GmRegion {
  const Value *root = nullptr;
  Box box;
  LinearRange range;
};

/// Maps region `box` of GM tensor `tensor` (an argument, a `gm_tensor`, or a tensor
/// `view`/`reshape` alias of one) to its root. Returns a region with a null root
/// when `tensor` is none of those.
GmRegion resolveGmRegion(const Value *tensor, const Box &box);

/// Whether two regions of one root share an element.
bool overlaps(const GmRegion &a, const GmRegion &b);

/// The live accesses of GM memory, in program order. A read must wait for the live
/// writes that overlap it; a write for the live reads and writes that overlap it.
/// A write supersedes the parts of the live accesses it covers (they are ordered
/// before it, so anything that later conflicts with them conflicts with it), which
/// keeps the set small: waiting on the writes that cover a region is waiting on
/// everything before them. Each root keeps a grid index of its accesses, so a
/// query costs about the number of accesses it meets.
class MemoryOrder {
public:
  /// Appends the live accesses an access of `region` (a write when `write`) must
  /// wait for, each once, in the order they were recorded.
  void conflicts(const GmRegion &region, bool write, llvm::SmallVectorImpl<const Operation *> &out);
  /// Records `op`'s access of `region`, which waits for everything conflicts()
  /// returned; a write first supersedes what it covers.
  void record(const Operation *op, const GmRegion &region, bool write);
  /// Appends the parts of `region` that no recorded write covers (disjoint boxes).
  void unwritten(const GmRegion &region, llvm::SmallVectorImpl<Box> &out);
  /// Number of live accesses of `root` (for tests and statistics).
  size_t numLive(const Value *root) const;

private:
  struct Entry {
    const Operation *op = nullptr;
    uint64_t seq = 0; ///< program order: the record() call that made it
    bool dead = false;
    LinearRange range;
    Box box;                         ///< what it accessed
    llvm::SmallVector<Box, 1> parts; ///< what no later write has covered yet
    mutable uint32_t stamp = 0;      ///< the last query that visited it
  };
  /// The live accesses of one kind (reads or writes) of one root, on a grid.
  struct Index {
    std::vector<Entry> entries;
    Dims cell; ///< grid cell size per dimension
    llvm::DenseMap<uint64_t, llvm::SmallVector<uint32_t, 4>> cells;
    std::vector<uint32_t> wide; ///< entries too big for the grid: always checked
    size_t live = 0, dead = 0;
  };
  /// Reads and writes apart: a read looks only at the writes, however many reads
  /// of a tensor nobody writes pile up.
  struct Root {
    Index writes, reads;
  };

  template <typename Visit> void visit(Index &index, const Box &box, Visit &&f);
  void add(Index &index, uint32_t e);
  void rebuild(Index &index);
  void supersede(Index &index, const Box &written);
  void insert(Index &index, const Operation *op, const GmRegion &region);

  llvm::DenseMap<const Value *, Root> roots_;
  uint32_t stamp_ = 0;
  uint64_t seq_ = 0;
  std::vector<std::pair<uint64_t, const Operation *>> found_; ///< scratch for a query
};

} // namespace ptoc::ir
