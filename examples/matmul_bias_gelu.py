#!/usr/bin/env python3
"""A fused linear layer with activation, y = gelu(x W + bias), through @ptoc.jit.

x [256, 512] and W [512, 1024] are fp16; the cube cores accumulate x W in fp32,
the vector cores add the fp32 bias row (broadcast over the rows), apply the exact
gelu 0.5 h (1 + erf(h / sqrt 2)) and cast the result to fp16. The matmul result
reaches the vector cores through GM (as on A2/A3), so the swimlane shows the cube
tasks feeding the vector tasks. The example checks y against numpy, prints the run
summary and, with --debug-mode >= 1, the path of the swimlane trace.

    PYTHONPATH=build/python /usr/bin/python3 examples/matmul_bias_gelu.py [--debug-mode N] [--device NAME]
"""

import math
import sys

import numpy as np

import ptoc
from example_support import check, parse_args, report

TOKENS, IN_FEATURES, OUT_FEATURES = 256, 512, 1024

# a2: 128x128 output tiles (2 x 8 = 16 cube tasks) with 64-deep L0 steps over a
# 256-deep L1 K tile; 8x1024 vector tiles (32 KiB of f32, 32 vector tasks).
# "tiny": 64x64 output tiles, 2x512 vector tiles (4 KiB).
TILES = {
    "default": {"cube": ([128, 128], [64, 256], [128, 128]), "vec": (8, OUT_FEATURES)},
    "tiny": {"cube": ([64, 64], [32, 128], [64, 64]), "vec": (2, 512)},
}


def make_linear_gelu(device, debug_mode, derived_tiles=False):
    """derived_tiles: set no tile shapes (the compiler derives them, docs/passes.md)."""
    tiles = None if derived_tiles else TILES.get(device, TILES["default"])

    @ptoc.jit(device=device, debug_options={"runtime_debug_mode": debug_mode})
    def linear_gelu(x: ptoc.Tensor([TOKENS, IN_FEATURES], ptoc.DT_FP16),
                    w: ptoc.Tensor([IN_FEATURES, OUT_FEATURES], ptoc.DT_FP16),
                    bias: ptoc.Tensor([OUT_FEATURES], ptoc.DT_FP32)):
        if tiles:
            ptoc.set_cube_tile_shapes(*tiles["cube"])
        h = ptoc.matmul(x, w, out_dtype=ptoc.DT_FP32)
        if tiles:
            ptoc.set_vec_tile_shapes(*tiles["vec"])
        return ptoc.gelu(h + bias).cast(ptoc.DT_FP16)

    return linear_gelu


def reference(x, w, bias):
    h = x.astype(np.float64) @ w.astype(np.float64) + bias
    return 0.5 * h * (1.0 + np.vectorize(math.erf)(h / math.sqrt(2.0)))


def main():
    args = parse_args(__doc__)

    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, (TOKENS, IN_FEATURES)).astype(np.float16)
    # Scaled so that x W has unit-ish variance: gelu sees both signs.
    w = (rng.uniform(-1, 1, (IN_FEATURES, OUT_FEATURES)) * math.sqrt(3.0 / IN_FEATURES) * 3
         ).astype(np.float16)
    bias = rng.uniform(-0.5, 0.5, OUT_FEATURES).astype(np.float32)

    linear_gelu = make_linear_gelu(args.device, args.debug_mode, args.derived_tiles)
    y = linear_gelu(x, w, bias)

    # fp32 until the final cast: the output carries fp16 rounding (2^-11 relative).
    ok = check("matmul_bias_gelu", y, reference(x, w, bias), rtol=2e-3, atol=1e-3)
    return report(linear_gelu, ok, args.debug_mode)


if __name__ == "__main__":
    sys.exit(main())
