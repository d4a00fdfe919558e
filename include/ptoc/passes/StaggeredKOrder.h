// The order of a matmul output tile's K steps (expand-tiles, option cube-k-stagger).
//
// Output tiles that run at once on different cube cores and read the same operand
// (every tile of a column of B, or of a row of A) would, stepping K from 0, ask for
// the same slab at the same moment: one core's read misses L2 and the others wait
// for that fill, at the pace of one core's HBM port. Staggered, tile t starts its
// K loop at step floor(frac(t * phi) * steps), phi = (sqrt(5) - 1) / 2 (a Weyl
// sequence: consecutive tiles, which the scheduler starts together, start about
// 0.62 * steps apart, and any run of tiles spreads over the steps evenly), and
// wraps around, so each slab is fetched once by one core and found in L2 by the
// others. The accumulation then adds the K slabs in that order. Only whole kL1
// steps rotate: a shorter last step (a K tail) stays last in every tile, so the
// tiles' tasks keep one shape and one isomorphism group.
#pragma once

#include <cstdint>

namespace ptoc::passes {

/// The K step output tile `tile` (its index in the matmul's row-major tile grid)
/// starts at, of `steps` steps (0 when steps <= 1). Deterministic, in [0, steps).
int64_t staggeredFirstKStep(int64_t tile, int64_t steps);

} // namespace ptoc::passes
