// Rectangular regions of tensors and tiles (an offset and a size per dimension):
// overlap, containment, difference, and the linear element ranges that regions
// read through a reshape are reasoned about with. Shared by the verifier's memory
// order check and expand-tiles.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

namespace ptoc::ir {

using Dims = llvm::SmallVector<int64_t, 4>;

/// A rectangular region: per dimension an offset and a (positive) size.
struct Box {
  Dims off, size;

  Box() = default;
  Box(llvm::ArrayRef<int64_t> offsets, llvm::ArrayRef<int64_t> sizes)
      : off(offsets.begin(), offsets.end()), size(sizes.begin(), sizes.end()) {}
  /// The whole of a tensor of `shape`.
  static Box whole(llvm::ArrayRef<int64_t> shape);

  unsigned rank() const { return static_cast<unsigned>(off.size()); }
  int64_t end(unsigned d) const { return off[d] + size[d]; }
  /// Number of elements (saturating at INT64_MAX).
  int64_t volume() const;
  /// `[0:4, 8:16]`: per dimension the half-open range it covers.
  std::string str() const;
  friend bool operator==(const Box &, const Box &) = default;
};

/// Whether the regions share an element (both of one rank).
bool overlaps(const Box &a, const Box &b);
/// Whether every element of `inner` lies in `outer`.
bool contains(const Box &outer, const Box &inner);
/// The common part of two overlapping regions.
Box intersection(const Box &a, const Box &b);
/// Appends the parts of `a` outside `b`: disjoint boxes, at most two per dimension.
void subtract(const Box &a, const Box &b, llvm::SmallVectorImpl<Box> &out);

/// A closed range [first, last] of row-major element indices.
struct LinearRange {
  int64_t first = 0, last = -1;
  bool meets(const LinearRange &o) const { return first <= o.last && o.first <= last; }
};
/// Row-major linear index of `coords` in `shape`.
int64_t ravel(llvm::ArrayRef<int64_t> coords, llvm::ArrayRef<int64_t> shape);
/// The first and last linear element indices of `b` in `shape`.
LinearRange linearRange(const Box &b, llvm::ArrayRef<int64_t> shape);
/// The smallest box of `shape` holding every element whose linear index lies in
/// `range`: fixed leading coordinates, a range in the first dim where the two ends
/// differ, full extent after it.
Box boundingBox(LinearRange range, llvm::ArrayRef<int64_t> shape);

} // namespace ptoc::ir
