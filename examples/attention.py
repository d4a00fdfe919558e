#!/usr/bin/env python3
"""Single-head attention, O = softmax(Q K^T / sqrt(d)) V, through @ptoc.jit.

Q, K and V are fp16 (512 tokens, head dim 128, as in examples/attention.pto). The
scores S = Q K^T come out of the cube cores in fp32, are scaled and row-softmaxed on
the vector cores, cast back to fp16, and O = P V accumulates in fp32. The example
checks O against numpy, prints the run summary and, with --debug-mode >= 1, the path
of the swimlane trace (open it in the Perfetto UI or chrome://tracing).

    PYTHONPATH=build/python /usr/bin/python3 examples/attention.py [--debug-mode N] [--device NAME]
"""

import math
import sys

import numpy as np

import ptoc
from example_support import check, parse_args, report

TOKENS, HEAD_DIM = 512, 128

# Tile shapes per device. a2-class devices: 128x128 score tiles (K = 128 in two
# 64-deep L0 steps: 16 cube tasks), 16x512 vector tiles (32 KiB of f32, whole rows
# so the row reductions are not split: 32 vector tasks, one wave on 48 AIV cores;
# 8x512 would make 64 tasks in two waves and run about 20% slower), and 128x128
# output tiles for P V. "tiny" has 16 KiB L0A/L0B, 64 KiB L1 and 32 KiB UB.
TILES = {
    "default": {"qk": ([128, 128], [64, 128], [128, 128]),
                "pv": ([128, 128], [64, 256], [128, 128]),
                "vec": (16, TOKENS)},
    "tiny": {"qk": ([64, 64], [32, 128], [64, 64]),
             "pv": ([64, 64], [32, 64], [64, 64]),
             "vec": (2, TOKENS)},
}


def make_attention(device, debug_mode, derived_tiles=False):
    """derived_tiles: set no tile shapes (the compiler derives them, docs/passes.md)."""
    tiles = None if derived_tiles else TILES.get(device, TILES["default"])

    @ptoc.jit(device=device, debug_options={"runtime_debug_mode": debug_mode},
              runtime_options={"device_sched_mode": 1})
    def attention(q, k, v):
        if tiles:
            ptoc.set_cube_tile_shapes(*tiles["qk"])
        s = ptoc.matmul(q, k, out_dtype=ptoc.DT_FP32, b_trans=True)   # [T, T] f32
        if tiles:
            ptoc.set_vec_tile_shapes(*tiles["vec"])
        s = s * (1.0 / math.sqrt(q.shape[-1]))
        e = ptoc.exp(s - ptoc.amax(s, dim=-1, keepdim=True))
        p = e / ptoc.sum(e, dim=-1, keepdim=True)
        p16 = ptoc.cast(p, ptoc.DT_FP16)
        if tiles:
            ptoc.set_cube_tile_shapes(*tiles["pv"])
        return ptoc.matmul(p16, v, out_dtype=ptoc.DT_FP32)            # [T, d] f32

    return attention


def reference(q, k, v):
    """The same computation in numpy, rounding P to fp16 where the kernel does."""
    q32, k32, v32 = (a.astype(np.float32) for a in (q, k, v))
    s = (q32 @ k32.T) / np.float32(math.sqrt(q.shape[-1]))
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    p = (e / e.sum(axis=-1, keepdims=True)).astype(np.float16)
    return p.astype(np.float32) @ v32


def main():
    args = parse_args(__doc__)

    rng = np.random.default_rng(0)
    q, k, v = (rng.uniform(-1, 1, (TOKENS, HEAD_DIM)).astype(np.float16) for _ in range(3))

    attention = make_attention(args.device, args.debug_mode, args.derived_tiles)
    o = attention(q, k, v)

    # P is rounded to fp16 (relative step 2^-11) before P V; everything else is fp32.
    ok = check("attention", o, reference(q, k, v), rtol=1e-2, atol=1e-4)
    return report(attention, ok, args.debug_mode)


if __name__ == "__main__":
    sys.exit(main())
