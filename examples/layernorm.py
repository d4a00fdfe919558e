#!/usr/bin/env python3
"""LayerNorm over the last dimension of a 256x1024 fp32 tensor through @ptoc.jit:

    y = (x - mean(x)) / sqrt(var(x) + eps) * weight + bias

with a per-column weight and bias ([1024], broadcast over the rows) and eps passed as
a Python float: a non-array argument is a compile-time constant (part of the
kernel's cache key). One 8x1024 vector tile covers whole rows, so the two
reductions are not split. The example checks y against numpy, prints the run
summary and, with --debug-mode >= 1, the path of the swimlane trace.

    PYTHONPATH=build/python /usr/bin/python3 examples/layernorm.py [--debug-mode N] [--device NAME]
"""

import sys

import numpy as np

import ptoc
from example_support import check, parse_args, report

ROWS, HIDDEN = 256, 1024
EPS = 1e-5

# 8 whole rows per tile (32 KiB of f32); "tiny" (32 KiB UB) takes 1 row per tile.
VEC_TILE = {"default": (8, HIDDEN), "tiny": (1, HIDDEN)}


def make_layernorm(device, debug_mode, derived_tiles=False):
    """derived_tiles: set no tile shape (the compiler derives one, docs/passes.md)."""
    tile = None if derived_tiles else VEC_TILE.get(device, VEC_TILE["default"])

    @ptoc.jit(device=device, debug_options={"runtime_debug_mode": debug_mode})
    def layernorm(x, weight, bias, eps):
        if tile:
            ptoc.set_vec_tile_shapes(*tile)
        centered = x - ptoc.mean(x, dim=-1, keepdim=True)
        var = ptoc.mean(centered * centered, dim=-1, keepdim=True)
        return centered * ptoc.rsqrt(var + eps) * weight + bias

    return layernorm


def reference(x, weight, bias, eps):
    x64 = x.astype(np.float64)
    centered = x64 - x64.mean(axis=-1, keepdims=True)
    var = (centered * centered).mean(axis=-1, keepdims=True)
    return centered / np.sqrt(var + eps) * weight + bias


def main():
    args = parse_args(__doc__)

    rng = np.random.default_rng(0)
    x = rng.normal(0.5, 2.0, (ROWS, HIDDEN)).astype(np.float32)
    weight = rng.uniform(0.5, 1.5, HIDDEN).astype(np.float32)
    bias = rng.uniform(-0.5, 0.5, HIDDEN).astype(np.float32)

    layernorm = make_layernorm(args.device, args.debug_mode, args.derived_tiles)
    y = layernorm(x, weight, bias, EPS)

    # fp32 throughout; the reference is float64, so the budget covers the f32 sums
    # over 1024 elements and rsqrt.
    ok = check("layernorm", y, reference(x, weight, bias, EPS), rtol=1e-4, atol=1e-5)
    return report(layernorm, ok, args.debug_mode)


if __name__ == "__main__":
    sys.exit(main())
