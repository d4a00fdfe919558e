// Rectangular regions: overlap, containment, difference and linear ranges.
#include "ptoc/ir/Region.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"

namespace ptoc::ir {

Box Box::whole(llvm::ArrayRef<int64_t> shape) {
  Box b;
  b.off.assign(shape.size(), 0);
  b.size.assign(shape.begin(), shape.end());
  return b;
}

int64_t Box::volume() const {
  int64_t v = 1;
  for (int64_t s : size) {
    if (s != 0 && v > std::numeric_limits<int64_t>::max() / s)
      return std::numeric_limits<int64_t>::max();
    v *= s;
  }
  return v;
}

std::string Box::str() const {
  std::string s = "[";
  for (unsigned d = 0; d < rank(); ++d)
    absl::StrAppend(&s, d ? ", " : "", off[d], ":", off[d] + size[d]);
  return s + "]";
}

bool overlaps(const Box &a, const Box &b) {
  for (unsigned d = 0; d < a.rank(); ++d)
    if (a.off[d] >= b.end(d) || b.off[d] >= a.end(d)) return false;
  return true;
}

bool contains(const Box &outer, const Box &inner) {
  for (unsigned d = 0; d < outer.rank(); ++d)
    if (inner.off[d] < outer.off[d] || inner.end(d) > outer.end(d)) return false;
  return true;
}

Box intersection(const Box &a, const Box &b) {
  Box r;
  for (unsigned d = 0; d < a.rank(); ++d) {
    int64_t lo = std::max(a.off[d], b.off[d]), hi = std::min(a.end(d), b.end(d));
    r.off.push_back(lo);
    r.size.push_back(hi - lo);
  }
  return r;
}

void subtract(const Box &a, const Box &b, llvm::SmallVectorImpl<Box> &out) {
  if (!overlaps(a, b)) {
    out.push_back(a);
    return;
  }
  // Peel slabs off `rest` dimension by dimension: what lies before and after `b`
  // along d, within the part of `a` not yet peeled.
  Box rest = a;
  for (unsigned d = 0; d < a.rank(); ++d) {
    int64_t lo = std::max(rest.off[d], b.off[d]), hi = std::min(rest.end(d), b.end(d));
    if (lo > rest.off[d]) {
      Box p = rest;
      p.size[d] = lo - rest.off[d];
      out.push_back(std::move(p));
    }
    if (hi < rest.end(d)) {
      Box p = rest;
      p.off[d] = hi;
      p.size[d] = rest.end(d) - hi;
      out.push_back(std::move(p));
    }
    rest.off[d] = lo;
    rest.size[d] = hi - lo;
  }
}

int64_t ravel(llvm::ArrayRef<int64_t> coords, llvm::ArrayRef<int64_t> shape) {
  int64_t index = 0;
  for (size_t d = 0; d < shape.size(); ++d) index = index * shape[d] + coords[d];
  return index;
}

LinearRange linearRange(const Box &b, llvm::ArrayRef<int64_t> shape) {
  Dims last(b.off.begin(), b.off.end());
  for (size_t d = 0; d < last.size(); ++d) last[d] += b.size[d] - 1;
  return {ravel(b.off, shape), ravel(last, shape)};
}

Box boundingBox(LinearRange range, llvm::ArrayRef<int64_t> shape) {
  size_t r = shape.size();
  Dims cf(r), cl(r);
  int64_t first = range.first, last = range.last;
  for (int d = int(r) - 1; d >= 0; --d) {
    cf[d] = first % shape[d];
    first /= shape[d];
    cl[d] = last % shape[d];
    last /= shape[d];
  }
  Box b;
  bool differ = false;
  for (size_t d = 0; d < r; ++d) {
    if (differ) {
      b.off.push_back(0);
      b.size.push_back(shape[d]);
    } else {
      b.off.push_back(cf[d]);
      b.size.push_back(cl[d] - cf[d] + 1);
      differ = cf[d] != cl[d];
    }
  }
  return b;
}

} // namespace ptoc::ir
