#!/usr/bin/env python3
"""An MLP block, Y = gelu(X W1) W2, through @ptoc.jit.

X [256, 512], W1 [512, 1024] and W2 [1024, 512] are fp16, as in examples/mlp.pto.
The first matmul accumulates in fp32, the vector cores apply the exact gelu and
cast the hidden activation back to fp16 (the cube cores take fp16 operands), and
the second matmul accumulates in fp32 again. The two matmuls and the vector stage
form one kernel: each hidden tile flows cube -> vector -> cube through GM (mostly
L2). The example checks Y against numpy, prints the run summary and, with
--debug-mode >= 1, the path of the swimlane trace.

    PYTHONPATH=build/python /usr/bin/python3 examples/mlp.py [--debug-mode N] [--device NAME]
        [--derived-tiles]
"""

import math
import sys

import numpy as np

import ptoc
from example_support import check, parse_args, report

TOKENS, MODEL, HIDDEN = 256, 512, 1024

# a2: both matmuls in 128x128 output tiles (L0 128x64x128, K in 256-deep L1 steps:
# 16 + 8 cube tasks; examples/mlp.pto's 128x256 tiles make only 8 + 4 and run
# about 15% slower), 16x1024 vector tiles (64 KiB of f32) for gelu + cast.
# "tiny": 64x64 output tiles and 2x512 vector tiles.
TILES = {
    "default": {"cube": ([128, 128], [64, 256], [128, 128]), "vec": (16, HIDDEN)},
    "tiny": {"cube": ([64, 64], [32, 128], [64, 64]), "vec": (2, 512)},
}


def make_mlp(device, debug_mode, derived_tiles=False):
    """derived_tiles: set no tile shapes (the compiler derives them, docs/passes.md)."""
    tiles = None if derived_tiles else TILES.get(device, TILES["default"])

    @ptoc.jit(device=device, debug_options={"runtime_debug_mode": debug_mode})
    def mlp(x: ptoc.Tensor([TOKENS, MODEL], ptoc.DT_FP16),
            w1: ptoc.Tensor([MODEL, HIDDEN], ptoc.DT_FP16),
            w2: ptoc.Tensor([HIDDEN, MODEL], ptoc.DT_FP16)):
        if tiles:
            ptoc.set_cube_tile_shapes(*tiles["cube"])
        h = ptoc.matmul(x, w1, out_dtype=ptoc.DT_FP32)     # [TOKENS, HIDDEN] f32
        if tiles:
            ptoc.set_vec_tile_shapes(*tiles["vec"])
        g = ptoc.cast(ptoc.gelu(h), ptoc.DT_FP16)           # fp16 operand for the cube
        return ptoc.matmul(g, w2, out_dtype=ptoc.DT_FP32)   # [TOKENS, MODEL] f32

    return mlp


def reference(x, w1, w2):
    """The same computation in numpy, rounding the hidden activation to fp16 where
    the kernel does (so the comparison measures the kernel, not that rounding)."""
    h = x.astype(np.float32) @ w1.astype(np.float32)
    g = 0.5 * h * (1.0 + np.vectorize(math.erf)(h / math.sqrt(2.0)))
    return g.astype(np.float16).astype(np.float64) @ w2.astype(np.float64)


def main():
    args = parse_args(__doc__)

    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, (TOKENS, MODEL)).astype(np.float16)
    # Weights scaled like a trained layer's (unit-ish variance of x W1).
    w1 = (rng.uniform(-1, 1, (MODEL, HIDDEN)) * math.sqrt(9.0 / MODEL)).astype(np.float16)
    w2 = (rng.uniform(-1, 1, (HIDDEN, MODEL)) * math.sqrt(3.0 / HIDDEN)).astype(np.float16)

    mlp = make_mlp(args.device, args.debug_mode, args.derived_tiles)
    y = mlp(x, w1, w2)

    # The hidden activation is rounded to fp16 in both; a value near a rounding
    # boundary may round the other way (one fp16 ulp of one of 1024 terms).
    ok = check("mlp", y, reference(x, w1, w2), rtol=1e-3, atol=1e-3)
    return report(mlp, ok, args.debug_mode)


if __name__ == "__main__":
    sys.exit(main())
