#!/usr/bin/env python3
"""FlashAttention-2 through ptoc.loop: O = softmax(Q K^T / sqrt(d)) V, one query block
at a time, never materialising the score matrix.

Loops over batch x heads (a dynamic axis: one kernel for every batch) and over query
blocks, and for each query block over the key/value blocks with an online softmax: a running row max `m`, a running row sum `l`
and an fp32 accumulator rescaled by exp(m_old - m_new) whenever the max grows. Q, K
and V are fp16; the scores and the accumulator are fp32; P is cast to fp16 for the
P V product, as fused attention kernels do. Each loop body is compiled once.

Causal attention stops the key loop at the query block (its bound is an expression
of the outer index), and the diagonal block adds a -inf mask above the diagonal: the
body picks the mask or zeros with a window whose offset is min(qb - kb, 1).

Block size: the AICPU control thread builds every iteration's tasks one after another
(docs/runtime.md "Loops"), so at long sequences the blocks must be big for the cores,
not the control thread, to bound the run. The kernel takes the largest of 1024, 512,
256 and 128 that divides the sequence: at S=4096 that is 4 x 4 key-block iterations per
head instead of 32 x 32 with 128 x 128 blocks (N=32: 3559.5 us simulated; 512 x 512
blocks, 4336.1 us; 128 x 128, about 28x the bound). Q is scaled by 1/sqrt(d) once per query
block (not every score block), and each task folds 8 tiles of a group (PASS_OPTIONS).
The heads loop is `parallel=True` with device_sched_parallelism 8 (RUNTIME_OPTIONS):
the stitch of one head need not wait for the tail of the head before it
(docs/runtime.md "Parallel loops").

    PYTHONPATH=build/python /usr/bin/python3 examples/flash_attention.py [--causal]
        [--batch 1 --heads 8 --seq 2048 --dim 128] [--timing-only] [--debug-mode N]
"""

import argparse
import math
import sys

import numpy as np

import ptoc
from example_support import check, report

BLOCKS = (1024, 512, 256, 128)  # query and key block sizes, largest first
# 8 tiles of a group per task: a tile's work is short next to the control thread's
# cost of building a task, and 8 still leaves several tasks per stage for the cores.
PASS_OPTIONS = {"vec_nbuffer_mode": 2, "vec_nbuffer_setting": {-1: 8},
                "cube_nbuffer_mode": 2, "cube_nbuffer_setting": {-1: 8}}
# Heads are independent: the batch x heads loop is marked parallel, and up to 8 heads'
# stitches run at once instead of each waiting for the tail of the one before.
RUNTIME_OPTIONS = {"device_sched_parallelism": 8}


def block_for(seq):
    """The query and key block of a sequence: the largest of BLOCKS dividing it."""
    for block in BLOCKS:
        if seq % block == 0:
            return block
    raise ValueError(f"seq must be a multiple of {BLOCKS[-1]}, got {seq}")


def make_flash_attention(batch, heads, seq, dim, causal, device="a2", debug_mode=0,
                         runtime_options=None):
    """A jit kernel: fa(q, k, v, bias, o) with q, k, v, o of [batch * heads, seq, dim]
    (any batch * heads) fp16 and bias = causal_bias(block_for(seq)), [2, block, block]
    fp32 (bias[0] the causal mask of the diagonal block, bias[1] zeros)."""
    block = block_for(seq)
    blocks = seq // block
    # batch x heads is a dynamic axis, shared by q, k, v and o: one compiled kernel
    # serves every batch size (`batch` and `heads` only name the shapes callers pass).
    BH = ptoc.dynamic("bh")
    scale = 1.0 / math.sqrt(dim)
    f16, f32 = ptoc.DT_FP16, ptoc.DT_FP32

    score_rows = 8192 // block  # 32 KiB fp32 vector tiles of whole score rows
    out_rows = 8192 // dim      # 32 KiB fp32 tiles of [rows, dim]

    @ptoc.jit(device=device, debug_options={"runtime_debug_mode": debug_mode},
              pass_options=PASS_OPTIONS,
              runtime_options={**RUNTIME_OPTIONS, **(runtime_options or {})})
    def flash_attention(q: ptoc.Tensor([BH, seq, dim], f16),
                        k: ptoc.Tensor([BH, seq, dim], f16),
                        v: ptoc.Tensor([BH, seq, dim], f16),
                        bias: ptoc.Tensor([2, block, block], f32),
                        o: ptoc.Tensor([BH, seq, dim], f16)):
        ptoc.set_cube_tile_shapes([128, 128], [64, dim], [128, 128])
        # Any batch: the kernel compiles once. Heads share nothing: parallel iterations.
        for bh in ptoc.loop(q.shape[0], name="bh", parallel=True):
            for qb in ptoc.loop(blocks, name="qb"):
                rows = slice(qb * block, (qb + 1) * block)
                ptoc.set_vec_tile_shapes(out_rows, dim)
                qi = ptoc.cast(ptoc.cast(q[bh, rows, :], f32) * scale, f16)  # pre-scaled
                m = ptoc.full([block, 1], -math.inf, f32)
                l = ptoc.full([block, 1], 0.0, f32)
                acc = ptoc.full([block, dim], 0.0, f32)
                for kb in ptoc.loop(0, qb + 1 if causal else blocks, name="kb"):
                    cols = slice(kb * block, (kb + 1) * block)
                    s = ptoc.matmul(qi, k[bh, cols, :], out_dtype=f32, b_trans=True)
                    ptoc.set_vec_tile_shapes(score_rows, block)
                    if causal:
                        s = s + bias[(qb - kb).min(1)]
                    m_new = ptoc.maximum(m, ptoc.amax(s, dim=-1, keepdim=True))
                    p = ptoc.exp(s - m_new)
                    alpha = ptoc.exp(m - m_new)
                    l[:] = l * alpha + ptoc.sum(p, dim=-1, keepdim=True)
                    pv = ptoc.matmul(ptoc.cast(p, f16), v[bh, cols, :], out_dtype=f32)
                    ptoc.set_vec_tile_shapes(out_rows, dim)
                    acc[:] = acc * alpha + pv
                    m[:] = m_new
                o[bh, rows, :] = ptoc.cast(acc / l, f16)

    return flash_attention


def causal_bias(block):
    bias = np.zeros((2, block, block), np.float32)
    bias[0][np.triu_indices(block, 1)] = -np.inf
    return bias


def reference(q, k, v, causal):
    """Exact attention in float64 (no blocking): what the online softmax must match."""
    q64, k64, v64 = (a.astype(np.float64) for a in (q, k, v))
    s = q64 @ np.swapaxes(k64, -1, -2) / math.sqrt(q.shape[-1])
    if causal:
        s = s + np.triu(np.full(s.shape[-2:], -np.inf), 1)
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ v64


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--seq", type=int, default=2048)
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--causal", action="store_true")
    ap.add_argument("--timing-only", action="store_true",
                    help="simulate only (run_numerics=False): for the full-size shapes")
    ap.add_argument("--device", default="a2")
    ap.add_argument("--debug-mode", type=int, default=1, choices=(0, 1, 2))
    args = ap.parse_args()

    bh = args.batch * args.heads
    shape = (bh, args.seq, args.dim)
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal(shape).astype(np.float16) for _ in range(3))
    o = np.zeros(shape, np.float16)
    fa = make_flash_attention(args.batch, args.heads, args.seq, args.dim, args.causal,
                              args.device, args.debug_mode,
                              {"run_numerics": not args.timing_only})
    fa(q, k, v, causal_bias(block_for(args.seq)), o)
    ok = True
    if not args.timing_only:
        ok = check("O", o, reference(q, k, v, args.causal), rtol=2e-2, atol=2e-3)
    return report(fa, ok, args.debug_mode)


if __name__ == "__main__":
    sys.exit(main())
