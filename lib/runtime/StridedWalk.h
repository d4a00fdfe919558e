// Row-major walks over a multi-dimensional index space, tracking element offsets into
// several strided buffers at once; the executor's kernels and GM transfers use it for
// their outer loops (the innermost dimension is left to vectorised code).
// Internal to lib/runtime.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

namespace ptoc::runtime::exec {

/// Calls `f(offsets)` for every index of `sizes` in row-major order, where
/// offsets[j] = sum over d of index[d] * strides[j][d]. No dimensions: one call with
/// all offsets 0; a zero size: no calls.
template <size_t N, class F>
void walkStrided(llvm::ArrayRef<int64_t> sizes,
                 const std::array<llvm::ArrayRef<int64_t>, N> &strides, F &&f) {
  int64_t total = 1;
  for (int64_t s : sizes) total *= s;
  if (total == 0) return;
  std::array<int64_t, N> off{};
  int rank = static_cast<int>(sizes.size());
  if (rank == 1) {
    for (int64_t i = 0; i < sizes[0]; ++i) {
      for (size_t j = 0; j < N; ++j) off[j] = i * strides[j][0];
      f(off);
    }
    return;
  }
  llvm::SmallVector<int64_t, 8> index(rank, 0);
  for (int64_t k = 0; k < total; ++k) {
    f(off);
    for (int d = rank - 1; d >= 0; --d) {
      for (size_t j = 0; j < N; ++j) off[j] += strides[j][d];
      if (++index[d] < sizes[d]) break;
      for (size_t j = 0; j < N; ++j) off[j] -= strides[j][d] * sizes[d];
      index[d] = 0;
    }
  }
}

} // namespace ptoc::runtime::exec
