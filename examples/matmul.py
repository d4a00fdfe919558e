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
"""

import argparse
import sys

import numpy as np

import ptoc

M = K = N = 1024

# set_cube_tile_shapes([mL0, mL1], [kL0, kL1], [nL0, nL1]) per device; "tiny" has
# 16 KiB L0A/L0B, 32 KiB L0C and 64 KiB L1.
CUBE_TILE = {"default": ([128, 128], [64, 256], [256, 256]),
             "tiny": ([64, 64], [32, 128], [64, 64])}


def make_matmul(device, debug_mode):
    tile = CUBE_TILE.get(device, CUBE_TILE["default"])

    @ptoc.jit(device=device, debug_options={"runtime_debug_mode": debug_mode})
    def matmul(a: ptoc.Tensor([M, K], ptoc.DT_FP16), b: ptoc.Tensor([K, N], ptoc.DT_FP16)):
        ptoc.set_cube_tile_shapes(*tile)
        return ptoc.matmul(a, b, out_dtype=ptoc.DT_FP32)

    return matmul


def check(name, got, want, rtol, atol):
    """Prints the max abs/rel error; False when an element is off tolerance
    (|got - want| > atol + rtol |want|, numpy.isclose's rule)."""
    got, want = got.astype(np.float64), want.astype(np.float64)
    err = np.abs(got - want)
    rel = err / np.maximum(np.abs(want), atol)  # relative error, floored at atol
    ok = bool(np.all(err <= atol + rtol * np.abs(want)))
    print(f"{name}: max abs err {err.max():.3e}, max rel err {rel.max():.3e} "
          f"(rtol {rtol:g}, atol {atol:g}): {'OK' if ok else 'MISMATCH'}")
    return ok


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--debug-mode", type=int, default=1, choices=(0, 1, 2),
                        help="runtime_debug_mode: 0 off, 1 swimlane + summary files, 2 pipe lanes")
    parser.add_argument("--device", default="a2", help="device preset or JSON file (default a2)")
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (M, K)).astype(np.float16)
    b = rng.uniform(-1, 1, (K, N)).astype(np.float16)

    matmul = make_matmul(args.device, args.debug_mode)
    c = matmul(a, b)

    # fp16 products are exact in fp32; only the order of the fp32 sums over K = 1024
    # differs from the float64 reference (|C| is about 10 here).
    want = a.astype(np.float64) @ b.astype(np.float64)
    ok = check("matmul", c, want, rtol=1e-4, atol=1e-3)
    run = matmul.last_run
    print(run.summary)
    if args.debug_mode >= 1:
        print(f"swimlane: {run.swimlane_path}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
