#include "ptoc/passes/StaggeredKOrder.h"

namespace ptoc::passes {

int64_t staggeredFirstKStep(int64_t tile, int64_t steps) {
  if (steps <= 1 || tile < 0) return 0;
  // frac(tile * phi) in 32-bit fixed point: 2654435769 = floor(2^32 * phi).
  constexpr uint64_t kPhi32 = 2654435769u;
  uint64_t frac = (static_cast<uint64_t>(tile) * kPhi32) & 0xFFFFFFFFu;
  return static_cast<int64_t>((frac * static_cast<uint64_t>(steps)) >> 32);
}

} // namespace ptoc::passes
