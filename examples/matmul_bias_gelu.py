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

import argparse
import math
import sys

import numpy as np

import ptoc

TOKENS, IN_FEATURES, OUT_FEATURES = 256, 512, 1024

# a2: 128x128 output tiles (2 x 8 = 16 cube tasks) with 64-deep L0 steps over a
# 256-deep L1 K tile; 8x1024 vector tiles (32 KiB of f32, 32 vector tasks).
# "tiny": 64x64 output tiles, 2x512 vector tiles (4 KiB).
TILES = {
    "default": {"cube": ([128, 128], [64, 256], [128, 128]), "vec": (8, OUT_FEATURES)},
    "tiny": {"cube": ([64, 64], [32, 128], [64, 64]), "vec": (2, 512)},
}


def make_linear_gelu(device, debug_mode):
    tiles = TILES.get(device, TILES["default"])

    @ptoc.jit(device=device, debug_options={"runtime_debug_mode": debug_mode})
    def linear_gelu(x: ptoc.Tensor([TOKENS, IN_FEATURES], ptoc.DT_FP16),
                    w: ptoc.Tensor([IN_FEATURES, OUT_FEATURES], ptoc.DT_FP16),
                    bias: ptoc.Tensor([OUT_FEATURES], ptoc.DT_FP32)):
        ptoc.set_cube_tile_shapes(*tiles["cube"])
        h = ptoc.matmul(x, w, out_dtype=ptoc.DT_FP32)
        ptoc.set_vec_tile_shapes(*tiles["vec"])
        return ptoc.gelu(h + bias).cast(ptoc.DT_FP16)

    return linear_gelu


def reference(x, w, bias):
    h = x.astype(np.float64) @ w.astype(np.float64) + bias
    return 0.5 * h * (1.0 + np.vectorize(math.erf)(h / math.sqrt(2.0)))


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
    x = rng.uniform(-1, 1, (TOKENS, IN_FEATURES)).astype(np.float16)
    # Scaled so that x W has unit-ish variance: gelu sees both signs.
    w = (rng.uniform(-1, 1, (IN_FEATURES, OUT_FEATURES)) * math.sqrt(3.0 / IN_FEATURES) * 3
         ).astype(np.float16)
    bias = rng.uniform(-0.5, 0.5, OUT_FEATURES).astype(np.float32)

    linear_gelu = make_linear_gelu(args.device, args.debug_mode)
    y = linear_gelu(x, w, bias)

    # fp32 until the final cast: the output carries fp16 rounding (2^-11 relative).
    ok = check("matmul_bias_gelu", y, reference(x, w, bias), rtol=2e-3, atol=1e-3)
    run = linear_gelu.last_run
    print(run.summary)
    if args.debug_mode >= 1:
        print(f"swimlane: {run.swimlane_path}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
