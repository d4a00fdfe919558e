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
"""

import argparse
import sys

import numpy as np

import ptoc

ROWS, HIDDEN = 256, 1024
EPS = 1e-6

# 8 whole rows per tile (32 KiB of f32); "tiny" (32 KiB UB) takes 1 row per tile.
VEC_TILE = {"default": (8, HIDDEN), "tiny": (1, HIDDEN)}


def make_rmsnorm(device, debug_mode):
    tile = VEC_TILE.get(device, VEC_TILE["default"])

    @ptoc.jit(device=device, debug_options={"runtime_debug_mode": debug_mode})
    def rmsnorm(x: ptoc.Tensor([ROWS, HIDDEN], ptoc.DT_FP16),
                weight: ptoc.Tensor([HIDDEN], ptoc.DT_FP32),
                y: ptoc.Tensor([ROWS, HIDDEN], ptoc.DT_FP16)):
        ptoc.set_vec_tile_shapes(*tile)
        x32 = ptoc.cast(x, ptoc.DT_FP32)
        ms = ptoc.mean(x32 * x32, dim=-1, keepdim=True)          # [ROWS, 1]
        y[:] = x32 * ptoc.rsqrt(ms + EPS) * weight               # cast to fp16 on write

    return rmsnorm


def reference(x, weight, eps):
    x64 = x.astype(np.float64)
    return x64 / np.sqrt((x64 * x64).mean(axis=-1, keepdims=True) + eps) * weight


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
    x = rng.normal(0.0, 3.0, (ROWS, HIDDEN)).astype(np.float16)
    weight = rng.uniform(0.5, 1.5, HIDDEN).astype(np.float32)
    y = np.empty_like(x)

    rmsnorm = make_rmsnorm(args.device, args.debug_mode)
    rmsnorm(x, weight, y)

    # The output is rounded to fp16 (relative step 2^-11 ~ 4.9e-4).
    ok = check("rmsnorm", y, reference(x, weight, EPS), rtol=1e-3, atol=1e-3)
    run = rmsnorm.last_run
    print(run.summary)
    if args.debug_mode >= 1:
        print(f"swimlane: {run.swimlane_path}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
