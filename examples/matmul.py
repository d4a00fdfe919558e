#!/usr/bin/env python3
"""C = A B with fp16 inputs and an fp32 result through @ptoc.jit.

1024x1024x1024, as in examples/matmul.pto. The cube cores multiply fp16 tiles and
accumulate in fp32 (out_dtype=ptoc.DT_FP32 keeps that precision in the result).
Cube tile on a2: L0 128x64x256 inside L1 128x256x256 (the A and B L0 tiles fit
L0A/L0B double-buffered, the 128x256 fp32 accumulator fits L0C, and both L1 tiles
fit L1 double-buffered); 8x4 = 32 output tiles for 24 cube cores. The example checks
C against numpy, prints the run summary and, with --debug-mode >= 1, the path of the
swimlane trace.

    PYTHONPATH=build/python /usr/bin/python3 examples/matmul.py [--debug-mode N] [--device NAME]
        [--derived-tiles]
"""

import sys

import numpy as np

import ptoc
from example_support import check, parse_args, report

M = K = N = 1024

# set_cube_tile_shapes([mL0, mL1], [kL0, kL1], [nL0, nL1]) per device; "tiny" has
# 16 KiB L0A/L0B, 32 KiB L0C and 64 KiB L1.
CUBE_TILE = {"default": ([128, 128], [64, 256], [256, 256]),
             "tiny": ([64, 64], [32, 128], [64, 64])}


def make_matmul(device, debug_mode, derived_tiles=False):
    """derived_tiles: set no tile shape (the compiler derives one, docs/passes.md)."""
    tile = None if derived_tiles else CUBE_TILE.get(device, CUBE_TILE["default"])

    @ptoc.jit(device=device, debug_options={"runtime_debug_mode": debug_mode})
    def matmul(a: ptoc.Tensor([M, K], ptoc.DT_FP16), b: ptoc.Tensor([K, N], ptoc.DT_FP16)):
        if tile:
            ptoc.set_cube_tile_shapes(*tile)
        return ptoc.matmul(a, b, out_dtype=ptoc.DT_FP32)

    return matmul


def main():
    args = parse_args(__doc__)

    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (M, K)).astype(np.float16)
    b = rng.uniform(-1, 1, (K, N)).astype(np.float16)

    matmul = make_matmul(args.device, args.debug_mode, args.derived_tiles)
    c = matmul(a, b)

    # fp16 products are exact in fp32; only the order of the fp32 sums over K = 1024
    # differs from the float64 reference (|C| is about 10 here).
    want = a.astype(np.float64) @ b.astype(np.float64)
    ok = check("matmul", c, want, rtol=1e-4, atol=1e-3)
    return report(matmul, ok, args.debug_mode)


if __name__ == "__main__":
    sys.exit(main())
