// The element rules of the index ops (topk, topk_indices, gather), shared by the
// reference evaluator and the tile kernels so both select and index exactly alike:
// topk's order (NaN, ties) and how an index element is read and checked; and the
// identity a reduction folds from. Internal to lib/runtime.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <type_traits>
#include <limits>
#include <vector>

#include "ptoc/ir/OpDef.h"

namespace ptoc::runtime {

/// The identity of reduction `code`'s fold: -inf for amax, +inf for amin, 0 for sum
/// and mean. A fold starts from it, and the elements beyond a window's valid part
/// count as it (so they change nothing).
inline double foldIdentity(ir::OpCode code) {
  if (code == ir::OpCode::Amax) return -std::numeric_limits<double>::infinity();
  if (code == ir::OpCode::Amin) return std::numeric_limits<double>::infinity();
  return 0.0;
}

/// Whether value `a` ranks above `b` in topk's order: the larger first, or the smaller
/// when !largest, with NaN above every number (as torch.topk orders it: first for the
/// largest, last for the smallest). Equal values (NaN with NaN, -0 with +0) rank
/// neither way.
template <class T> bool topkAbove(T a, T b, bool largest) {
  if constexpr (std::is_floating_point_v<T>) {
    bool na = std::isnan(a), nb = std::isnan(b);
    if (na || nb) return largest ? na && !nb : nb && !na;
  }
  return largest ? a > b : a < b;
}

/// The positions of the k elements topk selects from a row of n elements
/// (`at(j)` reads element j), in order: by topkAbove, equal values by lower
/// position (a stable order). `order` is scratch of at least n entries.
template <class At>
void selectTopK(int64_t n, int64_t k, bool largest, At at, std::vector<int64_t> &order) {
  order.resize(size_t(n));
  std::iota(order.begin(), order.end(), int64_t(0));
  std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int64_t i, int64_t j) {
    auto a = at(i), b = at(j);
    if (topkAbove(a, b, largest)) return true;
    if (topkAbove(b, a, largest)) return false;
    return i < j;
  });
}

/// An index element of any integer type (held as T) as a position along a dimension
/// of `size`; false when it is outside [0, size).
template <class T> bool readIndex(T raw, int64_t size, int64_t &out) {
  if constexpr (std::is_floating_point_v<T>) {
    if (!(raw >= 0 && raw < double(size))) return false;
  }
  out = static_cast<int64_t>(raw);
  return out >= 0 && out < size;
}

} // namespace ptoc::runtime
