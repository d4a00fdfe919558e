#!/usr/bin/env python3
"""Decode attention over a paged KV cache through ptoc.loop: one query token per
sequence attends to its sequence's keys and values, which live in fixed-size blocks
of a shared cache, listed per sequence in a block table.

The kernel reads `block_table[b, j]` (which cache block holds the j-th block of
sequence b) and `seq_lens[b]` (how many tokens sequence b has) as values when it runs:
the key-block loop of sequence b runs ceil(seq_lens[b] / BLOCK) times (ragged), and
each iteration reads the window of the cache block the table names. The last block of
a sequence is partly valid: a -inf mask row picked by the window offset
min(seq_lens[b] - j * BLOCK, BLOCK) hides the positions past its end. The softmax is
the online one of flash attention (running max, running sum, rescaled accumulator).

    PYTHONPATH=build/python /usr/bin/python3 examples/paged_attention.py [--debug-mode N]
"""

import argparse
import math
import sys

import numpy as np

import ptoc
from example_support import check, report

BLOCK = 64  # tokens per cache block


def make_paged_attention(batch, heads, dim, num_blocks, max_blocks, device="a2", debug_mode=0):
    """fa(q, k_cache, v_cache, block_table, seq_lens, mask, o): q, o [batch, heads, dim]
    f16; k_cache, v_cache [num_blocks, heads, BLOCK, dim] f16; block_table [batch,
    max_blocks] i32; seq_lens [batch] i32; mask [BLOCK + 1, 1, BLOCK] f32 (row r hides
    positions >= r)."""
    scale = 1.0 / math.sqrt(dim)
    f16, f32, i32 = ptoc.DT_FP16, ptoc.DT_FP32, ptoc.DT_INT32

    @ptoc.jit(device=device, debug_options={"runtime_debug_mode": debug_mode})
    def paged_attention(q: ptoc.Tensor([batch, heads, dim], f16),
                        k_cache: ptoc.Tensor([num_blocks, heads, BLOCK, dim], f16),
                        v_cache: ptoc.Tensor([num_blocks, heads, BLOCK, dim], f16),
                        block_table: ptoc.Tensor([batch, max_blocks], i32),
                        seq_lens: ptoc.Tensor([batch], i32),
                        mask: ptoc.Tensor([BLOCK + 1, 1, BLOCK], f32),
                        o: ptoc.Tensor([batch, heads, dim], f16)):
        ptoc.set_cube_tile_shapes([16, 16], [64, dim], [BLOCK, BLOCK])
        ptoc.set_vec_tile_shapes(1, BLOCK)
        for b in ptoc.loop(batch, name="b"):
            length = seq_lens[b]                       # read when the kernel runs
            for h in ptoc.loop(heads, name="h"):
                qh = q[b, h:h + 1, :]                  # [1, dim]
                m = ptoc.full([1, 1], -math.inf, f32)
                l = ptoc.full([1, 1], 0.0, f32)
                acc = ptoc.full([1, dim], 0.0, f32)
                for j in ptoc.loop(0, (length + BLOCK - 1) // BLOCK, name="j"):
                    page = block_table[b, j]
                    s = ptoc.matmul(qh, k_cache[page, h], out_dtype=f32, b_trans=True) * scale
                    s = s + mask[(length - j * BLOCK).min(BLOCK)]
                    m_new = ptoc.maximum(m, ptoc.amax(s, dim=-1, keepdim=True))
                    p = ptoc.exp(s - m_new)
                    alpha = ptoc.exp(m - m_new)
                    l[:] = l * alpha + ptoc.sum(p, dim=-1, keepdim=True)
                    pv = ptoc.matmul(ptoc.cast(p, f16), v_cache[page, h], out_dtype=f32)
                    acc[:] = acc * alpha + pv
                    m[:] = m_new
                o[b, h:h + 1, :] = ptoc.cast(acc / l, f16)

    return paged_attention


def mask_rows():
    mask = np.zeros((BLOCK + 1, 1, BLOCK), np.float32)
    for r in range(BLOCK + 1):
        mask[r, 0, r:] = -np.inf
    return mask


def random_problem(batch, heads, dim, seq_lens, seed=0):
    """Inputs with the blocks of every sequence scattered over the cache at random."""
    rng = np.random.default_rng(seed)
    max_blocks = max(-(-n // BLOCK) for n in seq_lens)
    num_blocks = sum(-(-n // BLOCK) for n in seq_lens) + 3  # a few unused blocks
    order = rng.permutation(num_blocks)
    table = np.zeros((batch, max_blocks), np.int32)
    used = 0
    for b, n in enumerate(seq_lens):
        for j in range(-(-n // BLOCK)):
            table[b, j] = order[used]
            used += 1
    q = rng.standard_normal((batch, heads, dim)).astype(np.float16)
    k = rng.standard_normal((num_blocks, heads, BLOCK, dim)).astype(np.float16)
    v = rng.standard_normal((num_blocks, heads, BLOCK, dim)).astype(np.float16)
    return q, k, v, table, np.asarray(seq_lens, np.int32), num_blocks, max_blocks


def reference(q, k, v, table, seq_lens):
    batch, heads, dim = q.shape
    out = np.zeros((batch, heads, dim))
    for b, n in enumerate(seq_lens):
        blocks = [table[b, j] for j in range(-(-n // BLOCK))]
        keys = np.concatenate([k[p] for p in blocks], axis=1)[:, :n].astype(np.float64)
        vals = np.concatenate([v[p] for p in blocks], axis=1)[:, :n].astype(np.float64)
        s = np.einsum("hd,htd->ht", q[b].astype(np.float64), keys) / math.sqrt(dim)
        p = np.exp(s - s.max(-1, keepdims=True))
        out[b] = np.einsum("ht,htd->hd", p / p.sum(-1, keepdims=True), vals)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--seq-lens", default="70,256,5,129,64,1")
    ap.add_argument("--device", default="a2")
    ap.add_argument("--debug-mode", type=int, default=1, choices=(0, 1, 2))
    args = ap.parse_args()
    seq_lens = [int(n) for n in args.seq_lens.split(",")]
    q, k, v, table, lens, num_blocks, max_blocks = random_problem(
        len(seq_lens), args.heads, args.dim, seq_lens)
    o = np.zeros_like(q)
    fa = make_paged_attention(len(seq_lens), args.heads, args.dim, num_blocks, max_blocks,
                              args.device, args.debug_mode)
    fa(q, k, v, table, lens, mask_rows(), o)
    ok = check("O", o, reference(q, k, v, table, lens), rtol=2e-2, atol=2e-3)
    return report(fa, ok, args.debug_mode)


if __name__ == "__main__":
    sys.exit(main())
