#!/usr/bin/env python3
"""Row softmax over a 256x4096 fp32 tensor through @ptoc.jit.

The kernel is written the way a kernel author would: subtract the row max,
exponentiate, divide by the row sum, and write the result into the output
parameter in place. Each vector tile is one whole row (1x4096), so the two row
reductions are never split. The example checks the result against numpy, prints
the run summary and, with --debug-mode >= 1, the path of the swimlane trace.

    PYTHONPATH=build/python /usr/bin/python3 examples/softmax.py [--debug-mode N] [--device NAME]
"""

import argparse
import sys

import numpy as np

import ptoc

ROWS, COLS = 256, 4096

# Vector tile per device: one whole row (16 KiB of f32), so the reductions are not
# split. "tiny" has 32 KiB of UB, too little for a 3-operand step on whole rows:
# half rows there (a split reduction, combined across tiles; correct but slower).
VEC_TILE = {"default": (1, COLS), "tiny": (1, COLS // 2)}


def make_softmax(device, debug_mode):
    tile = VEC_TILE.get(device, VEC_TILE["default"])

    @ptoc.jit(device=device, debug_options={"runtime_debug_mode": debug_mode},
              runtime_options={"device_sched_mode": 1})
    def softmax(x: ptoc.Tensor([ROWS, COLS], ptoc.DT_FP32),
                y: ptoc.Tensor([ROWS, COLS], ptoc.DT_FP32)):
        ptoc.set_vec_tile_shapes(*tile)
        m = ptoc.amax(x, dim=-1, keepdim=True)
        e = ptoc.exp(x - m)
        y[:] = e / ptoc.sum(e, dim=-1, keepdim=True)

    return softmax


def reference(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


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
    x = rng.uniform(-4, 4, (ROWS, COLS)).astype(np.float32)
    y = np.empty_like(x)

    softmax = make_softmax(args.device, args.debug_mode)
    softmax(x, y)  # writes y in place

    # All fp32: exp and div are a few ulps from numpy's.
    ok = check("softmax", y, reference(x), rtol=1e-5, atol=1e-8)
    run = softmax.last_run
    print(run.summary)
    if args.debug_mode >= 1:
        print(f"swimlane: {run.swimlane_path}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
