#!/usr/bin/env python3
"""RMSNorm over the last dimension of a 256x1024 fp16 tensor through @ptoc.jit:

    y = x / sqrt(mean(x^2) + eps) * weight

The activations come in and go out as fp16; the statistics are computed in fp32
(x is cast up first, the result cast back down at the end), as a kernel author
would do to keep the sum of squares from losing precision. The weight is an fp32
row ([1024], broadcast over the rows). One 8x1024 vector tile covers whole rows,
so the reduction is not split. The example checks y against numpy, prints the run
summary and, with --debug-mode >= 1, the path of the swimlane trace.

    PYTHONPATH=build/python /usr/bin/python3 examples/rmsnorm.py [--debug-mode N] [--device NAME]
        [--derived-tiles]
"""

import sys

import numpy as np

import ptoc
from example_support import check, parse_args, report

ROWS, HIDDEN = 256, 1024
EPS = 1e-6

# 8 whole rows per tile (32 KiB of f32); "tiny" (32 KiB UB) takes 1 row per tile.
VEC_TILE = {"default": (8, HIDDEN), "tiny": (1, HIDDEN)}


def make_rmsnorm(device, debug_mode, derived_tiles=False):
    """derived_tiles: set no tile shape (the compiler derives one, docs/passes.md)."""
    tile = None if derived_tiles else VEC_TILE.get(device, VEC_TILE["default"])

    @ptoc.jit(device=device, debug_options={"runtime_debug_mode": debug_mode})
    def rmsnorm(x: ptoc.Tensor([ROWS, HIDDEN], ptoc.DT_FP16),
                weight: ptoc.Tensor([HIDDEN], ptoc.DT_FP32),
                y: ptoc.Tensor([ROWS, HIDDEN], ptoc.DT_FP16)):
        if tile:
            ptoc.set_vec_tile_shapes(*tile)
        x32 = ptoc.cast(x, ptoc.DT_FP32)
        ms = ptoc.mean(x32 * x32, dim=-1, keepdim=True)          # [ROWS, 1]
        y[:] = x32 * ptoc.rsqrt(ms + EPS) * weight               # cast to fp16 on write

    return rmsnorm


def reference(x, weight, eps):
    x64 = x.astype(np.float64)
    return x64 / np.sqrt((x64 * x64).mean(axis=-1, keepdims=True) + eps) * weight


def main():
    args = parse_args(__doc__)

    rng = np.random.default_rng(0)
    x = rng.normal(0.0, 3.0, (ROWS, HIDDEN)).astype(np.float16)
    weight = rng.uniform(0.5, 1.5, HIDDEN).astype(np.float32)
    y = np.empty_like(x)

    rmsnorm = make_rmsnorm(args.device, args.debug_mode, args.derived_tiles)
    rmsnorm(x, weight, y)

    # The output is rounded to fp16 (relative step 2^-11 ~ 4.9e-4).
    ok = check("rmsnorm", y, reference(x, weight, EPS), rtol=1e-3, atol=1e-3)
    return report(rmsnorm, ok, args.debug_mode)


if __name__ == "__main__":
    sys.exit(main())
