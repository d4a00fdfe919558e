// KernelTemplates: the measured kernel families as tensor-level ptoc functions, so a
// measurement file can say "matmul 256x512x1024 with this cube tile" instead of
// carrying IR.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace ptoc::calibrate {

/// C[m, n] = A[m, k] @ B[k, n], row-major, with a cube tile
/// ([mL0, mL1], [kL0, kL1], [nL0, nL1]). With a core grid gm x gn, C is cut into
/// gm x gn blocks and (in a plain kernel, whose k-th task runs on core k mod cores)
/// core i * gn + j computes block (i, j) tile by tile, rows of tiles outermost, as
/// hand-written kernels that give each core its own block of C do; without one the
/// tiles of C are the tasks in row-major order.
struct MatmulKernel {
  int64_t m = 0, n = 0, k = 0;
  std::string dtype = "f16";    ///< of A and B
  std::string outDtype = "f32"; ///< of C
  std::array<std::array<int64_t, 2>, 3> cubeTile{};
  std::array<int64_t, 2> coreGrid{0, 0}; ///< {gm, gn}; {0, 0} = none
};

/// y = x / sqrt(mean(x^2 over the last axis) + eps) * weight, weight of the last axis.
struct RmsNormKernel {
  std::vector<int64_t> shape;   ///< of x (rank >= 2)
  std::vector<int64_t> vecTile; ///< of every op (rank of x); whole rows
  std::string dtype = "f32";
  double eps = 1e-6;
};

/// The function @matmul; with a core grid, "" when the grid's blocks are not whole
/// tiles (`why` says which dimension does not divide).
std::string matmulText(const MatmulKernel &k, std::string *why = nullptr);
/// The function @rmsnorm.
std::string rmsNormText(const RmsNormKernel &k);

} // namespace ptoc::calibrate
