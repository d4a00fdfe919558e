#!/usr/bin/env python3
"""Row softmax over a 256x4096 fp32 tensor through @ptoc.jit.

The kernel is written the way a kernel author would: subtract the row max,
exponentiate, divide by the row sum, and write the result into the output
parameter in place. Each vector tile is one whole row (1x4096), so the two row
reductions are never split. The example checks the result against numpy, prints
the run summary and, with --debug-mode >= 1, the path of the swimlane trace.

    PYTHONPATH=build/python /usr/bin/python3 examples/softmax.py [--debug-mode N] [--device NAME]
        [--derived-tiles]
"""

import sys

import numpy as np

import ptoc
from example_support import check, parse_args, report

ROWS, COLS = 256, 4096

# Vector tile per device: one whole row (16 KiB of f32), so the reductions are not
# split. "tiny" has 32 KiB of UB, too little for a 3-operand step on whole rows:
# half rows there (a split reduction, combined across tiles; correct but slower).
VEC_TILE = {"default": (1, COLS), "tiny": (1, COLS // 2)}


def make_softmax(device, debug_mode, derived_tiles=False):
    """derived_tiles: set no tile shape (the compiler derives one, docs/passes.md)."""
    tile = None if derived_tiles else VEC_TILE.get(device, VEC_TILE["default"])

    @ptoc.jit(device=device, debug_options={"runtime_debug_mode": debug_mode},
              runtime_options={"device_sched_mode": 1})
    def softmax(x: ptoc.Tensor([ROWS, COLS], ptoc.DT_FP32),
                y: ptoc.Tensor([ROWS, COLS], ptoc.DT_FP32)):
        if tile:
            ptoc.set_vec_tile_shapes(*tile)
        m = ptoc.amax(x, dim=-1, keepdim=True)
        e = ptoc.exp(x - m)
        y[:] = e / ptoc.sum(e, dim=-1, keepdim=True)

    return softmax


def reference(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def main():
    args = parse_args(__doc__)

    rng = np.random.default_rng(0)
    x = rng.uniform(-4, 4, (ROWS, COLS)).astype(np.float32)
    y = np.empty_like(x)

    softmax = make_softmax(args.device, args.debug_mode, args.derived_tiles)
    softmax(x, y)  # writes y in place

    # All fp32: exp and div are a few ulps from numpy's.
    ok = check("softmax", y, reference(x), rtol=1e-5, atol=1e-8)
    return report(softmax, ok, args.debug_mode)


if __name__ == "__main__":
    sys.exit(main())
