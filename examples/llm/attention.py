#!/usr/bin/env python3
"""Grouped-query attention of a Llama-3-8B-class layer, flash-attention style: the
online softmax of FlashAttention-2 (a running row max, a running row sum and an fp32
accumulator rescaled when the max grows), one key block per loop iteration, so the
score matrix is never materialised. Q, K and V are fp16; scores, statistics and the
accumulator fp32; P is cast to fp16 for the P V product. Both operators are written
with ptoc.loop, as examples/flash_attention.py and examples/paged_attention.py are.

Shapes: Llama-3-8B's configuration (num_attention_heads 32, num_key_value_heads 8,
head_dim 128 = hidden_size 4096 / 32): grouped-query attention, each key/value head
serves G = 4 query heads. A good kernel loads each K/V block once for its 4 query
heads, so both operators stack the 4 query heads of a group as the rows of one score
tile (4 x the rows of a per-head kernel, the same K/V bytes).

gqa_prefill: causal attention over a 4096-token prefill (batch 1), q and o
[32 heads, 4096, 128], k and v [8 heads, 4096, 128] (BNSD). For each KV head and each
block of BQ = 256 queries, the 4 heads' query rows are stacked into a [1024, 128] tile
(scaled by 1/sqrt(128) once, so the scores need no scaling), then the key blocks of
BK = 512 keys up to the diagonal run as the inner loop: S = Q K^T [1024, 512] on the
cube, the online softmax on the vector cores, P V on the cube. Only the last key block
of a query block crosses the diagonal: it adds a -inf mask above it (the mask row is
picked by the query block's offset in the key block), and that iteration also writes
the output, so no separate pass normalises it. Big blocks because the AICPU control
thread builds every iteration's tasks one after another (docs/runtime.md "Loops"): with
128 x 128 blocks the same prefill is 4,480 iterations and 61x its device bound; 256 x 512
blocks are 704 iterations. The vector tile is 16 score rows (16 x 512 fp32 = 32 KiB,
whole rows: the row max and sum never split), the cube tile 128 x 128 output tiles, and
the merge settings fold 8 tiles per task (PREFILL_PASS_OPTIONS): fewer tasks for the
control thread to build, still several per stage to spread over the cores.

gqa_decode: one new token per sequence over a paged KV cache, batch 64, up to 4096
tokens of context per sequence (32 pages of 128 tokens). The cache is
[pages, 8 kv heads, 128, 128] fp16 (a page holds every KV head's block); the block
table [64, 32] int32 names the pages of each sequence and seq_lens [64] int32 the
context lengths (ragged: from 1024 to 4096, deterministic, most not a multiple of a
page). Both are read when the kernel runs. One iteration takes U = 4 pages of one
sequence for all 8 KV heads: the score tile of a head is its 4 query heads x 512 keys.
The last chunk of a sequence masks the keys past its length (the mask row is picked by
the remaining length), and writes the output. Table entries past a sequence's last page
name page 0, a valid page that the mask hides.

    PYTHONPATH=build/python /usr/bin/python3 examples/llm/attention.py [NAME] [--full]
"""

import math
import sys

import numpy as np

import ptoc
from suite import FLASH_ATTENTION, Operator, main

SOURCE = ("Llama-3-8B config.json: num_attention_heads 32, num_key_value_heads 8 (GQA, "
          "4 query heads per KV head), head_dim 128 (hidden_size 4096 / 32)")
PAGE = 128  # tokens per KV cache page (vLLM's and PyPTO's usual block size)
F16, F32, I32 = ptoc.DT_FP16, ptoc.DT_FP32, ptoc.DT_INT32

# The prefill's own options (the Operator's pass_options / runtime_options; the suite
# also measures it without them, with ptoc's defaults: benchmarks/llm.py). 8 tiles of
# a group per task (a tile's work is short next to the control thread's cost of
# building a task: 390 cycles), 64 iterations per stitch and the AICPU scheduler's fair
# policy (2), chosen when the KV-head loop was not parallel yet: inside an iteration of
# a parallel loop a stitch holds up to 1024 iterations, so the stitch size no longer
# changes anything, and mode 2 is now 0.2% slower than the FIFO queue (2619.0 against
# 2612.8 us). The KV heads are independent: their loop is parallel=True, one stitch
# per head, and 2 heads may run at once (2966.9 -> 2619.0 us; 4 or 8 give the same: a
# head's stitch is built whole before it opens, and the control thread takes about as
# long to build one as the cores take to run one, so no more are in flight). ptoc's
# defaults (the control thread's merge counts and the automatic parallelism,
# docs/passes.md "Merge rules", docs/runtime.md "Parallel loops") give 2410.2 us.
PREFILL_PASS_OPTIONS = {"vec_nbuffer_mode": 2, "vec_nbuffer_setting": {-1: 8},
                        "cube_nbuffer_mode": 2, "cube_nbuffer_setting": {-1: 8}}
PREFILL_RUNTIME_OPTIONS = {"device_sched_mode": 2, "stitch_function_max_num": 64,
                           "device_sched_parallelism": 2}
# The decode's: 16 tiles per task (its cube tiles, 4 query rows x one page of one KV
# head, are mostly the page's load), 64 iterations (chunks of pages) per stitch (no
# effect inside the parallel loop, as for the prefill); a score vector tile of 2 KV
# heads x 4 query rows x 512 fp32 keys = 16 KiB. Sequences are independent: their loop
# is parallel=True and 8 run at once (957.0 -> 796.8 us; 2 and 4 at once: 1888.0 and
# 1076.5 us, as each sequence is then its own stitch). ptoc's defaults: 796.3 us.
DECODE_PASS_OPTIONS = {"vec_nbuffer_mode": 2, "vec_nbuffer_setting": {-1: 16},
                       "cube_nbuffer_mode": 2, "cube_nbuffer_setting": {-1: 16}}
DECODE_RUNTIME_OPTIONS = {"stitch_function_max_num": 64, "device_sched_parallelism": 8}
DECODE_HEADS_PER_TILE = 2


# ---------------------------------------------------------------- prefill

def make_prefill(dims, device, runtime_options, pass_options):
    seq, hq, hkv, d = dims["tokens"], dims["q_heads"], dims["kv_heads"], dims["head_dim"]
    bq, bk = dims["block_q"], dims["block_k"]
    group = hq // hkv
    rows = group * bq                 # the stacked query rows of one block
    per_k = bk // bq                  # query blocks per key block
    scale = 1.0 / math.sqrt(d)
    score_rows = 8192 // bk           # 32 KiB fp32 vector tiles of whole score rows
    out_rows = 8192 // d              # 32 KiB fp32 tiles of [rows, head_dim]

    @ptoc.jit(device=device, pass_options=pass_options or None, runtime_options=runtime_options)
    def gqa_prefill(q: ptoc.Tensor([hq, seq, d], F16), k: ptoc.Tensor([hkv, seq, d], F16),
                    v: ptoc.Tensor([hkv, seq, d], F16),
                    mask: ptoc.Tensor([per_k, rows, bk], F32),
                    o: ptoc.Tensor([hq, seq, d], F16)):
        ptoc.set_cube_tile_shapes([128, 128], [64, 128], [128, 128])
        for g in ptoc.loop(hkv, name="kv_head", parallel=True):
            for qb in ptoc.loop(seq // bq, name="q_block"):
                tokens = slice(qb * bq, (qb + 1) * bq)
                heads = [g * group + i for i in range(group)]
                ptoc.set_vec_tile_shapes(out_rows, d)
                # The group's query heads stacked as rows, pre-scaled: [rows, d].
                qi = ptoc.concat([q[h, tokens, :] for h in heads], dim=0)
                qi = ptoc.cast(ptoc.cast(qi, F32) * scale, F16)
                m = ptoc.full([rows, 1], -math.inf, F32)
                l = ptoc.full([rows, 1], 0.0, F32)
                acc = ptoc.full([rows, d], 0.0, F32)
                for kb in ptoc.loop(0, qb // per_k + 1, name="k_block"):
                    keys = slice(kb * bk, (kb + 1) * bk)
                    s = ptoc.matmul(qi, k[g, keys, :], out_dtype=F32, b_trans=True)
                    ptoc.set_vec_tile_shapes(score_rows, bk)
                    diagonal = ptoc.is_loop_end(kb)
                    if diagonal:
                        s = s + mask[qb % per_k]
                    m_new = ptoc.maximum(m, ptoc.amax(s, dim=-1, keepdim=True))
                    p = ptoc.exp(s - m_new)
                    alpha = ptoc.exp(m - m_new)
                    l_new = l * alpha + ptoc.sum(p, dim=-1, keepdim=True)
                    pv = ptoc.matmul(ptoc.cast(p, F16), v[g, keys, :], out_dtype=F32)
                    ptoc.set_vec_tile_shapes(out_rows, d)
                    acc_new = acc * alpha + pv
                    if diagonal:  # the last key block: normalise and write the heads
                        out = ptoc.cast(acc_new / l_new, F16)
                        for i, h in enumerate(heads):
                            o[h, tokens, :] = out[i * bq:(i + 1) * bq, :]
                    else:
                        m[:] = m_new
                        l[:] = l_new
                        acc[:] = acc_new

    return gqa_prefill


def prefill_mask(dims):
    """mask[j]: the -inf mask of a key block whose query block starts j * block_q keys
    into it (the stacked rows repeat the block's tokens once per query head)."""
    bq, bk = dims["block_q"], dims["block_k"]
    group = dims["q_heads"] // dims["kv_heads"]
    mask = np.zeros((bk // bq, group * bq, bk), np.float32)
    key = np.arange(bk)[None, :]
    for j in range(bk // bq):
        query = j * bq + np.arange(bq)[:, None]
        mask[j] = np.tile(np.where(key > query, -np.inf, 0.0), (group, 1))
    return mask


def prefill_inputs(dims, rng):
    seq, hq, hkv, d = dims["tokens"], dims["q_heads"], dims["kv_heads"], dims["head_dim"]
    q = rng.standard_normal((hq, seq, d), np.float32).astype(np.float16)
    k = rng.standard_normal((hkv, seq, d), np.float32).astype(np.float16)
    v = rng.standard_normal((hkv, seq, d), np.float32).astype(np.float16)
    return q, k, v, prefill_mask(dims), np.zeros_like(q)


def prefill_reference(q, k, v, mask, o):
    hq, seq, d = q.shape
    group = hq // k.shape[0]
    k64 = np.repeat(k.astype(np.float64), group, axis=0)  # query head h reads KV head h // G
    v64 = np.repeat(v.astype(np.float64), group, axis=0)
    s = q.astype(np.float64) @ k64.transpose(0, 2, 1) / math.sqrt(d)
    s += np.triu(np.full((seq, seq), -np.inf), 1)
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True) @ v64,)


# ---------------------------------------------------------------- decode

def make_decode(dims, device, runtime_options, pass_options):
    batch, hq, hkv, d = dims["batch"], dims["q_heads"], dims["kv_heads"], dims["head_dim"]
    chunk = dims["pages_per_step"]
    pages, max_pages = dims["pages"], dims["context"] // PAGE
    group = hq // hkv
    width = chunk * PAGE              # keys per iteration
    scale = 1.0 / math.sqrt(d)

    @ptoc.jit(device=device, pass_options=pass_options or None, runtime_options=runtime_options)
    def gqa_decode(q: ptoc.Tensor([batch, hq, d], F16),
                   k_cache: ptoc.Tensor([pages, hkv, PAGE, d], F16),
                   v_cache: ptoc.Tensor([pages, hkv, PAGE, d], F16),
                   block_table: ptoc.Tensor([batch, max_pages], I32),
                   seq_lens: ptoc.Tensor([batch], I32),
                   mask: ptoc.Tensor([width + 1, 1, 1, width], F32),
                   o: ptoc.Tensor([batch, hq, d], F16)):
        ptoc.set_cube_tile_shapes([16, 16], [128, 128], [128, 128])
        # Running statistics of every sequence (windows [b] in the loop).
        ptoc.set_vec_tile_shapes(1, hkv, group, d)
        m_all = ptoc.full([batch, hkv, group, 1], -math.inf, F32)
        l_all = ptoc.full([batch, hkv, group, 1], 0.0, F32)
        acc_all = ptoc.full([batch, hkv, group, d], 0.0, F32)
        for b in ptoc.loop(batch, name="seq", parallel=True):
            length = seq_lens[b]                                  # read when it runs
            ptoc.set_vec_tile_shapes(hkv, group, d)
            # The query heads of each KV head as the rows of its score tile, pre-scaled.
            qb = ptoc.reshape(q[b], [hkv, group, d])
            qb = ptoc.cast(ptoc.cast(qb, F32) * scale, F16)
            for j in ptoc.loop(0, (length + width - 1) // width, name="chunk"):
                page = [block_table[b, j * chunk + c] for c in range(chunk)]
                # [kv heads, group, width]: every KV head's scores of `chunk` pages.
                s = ptoc.concat([ptoc.matmul(qb, k_cache[pg], out_dtype=F32, b_trans=True)
                                 for pg in page], dim=-1)
                ptoc.set_vec_tile_shapes(DECODE_HEADS_PER_TILE, group, width)
                last = ptoc.is_loop_end(j)
                if last:  # hide the keys past the sequence's end
                    s = s + mask[(length - j * width).min(width)]
                m, l, acc = m_all[b], l_all[b], acc_all[b]
                m_new = ptoc.maximum(m, ptoc.amax(s, dim=-1, keepdim=True))
                p = ptoc.exp(s - m_new)
                alpha = ptoc.exp(m - m_new)
                l_new = l * alpha + ptoc.sum(p, dim=-1, keepdim=True)
                p16 = ptoc.cast(p, F16)
                pv = ptoc.matmul(p16[:, :, 0:PAGE], v_cache[page[0]], out_dtype=F32)
                for c in range(1, chunk):
                    pv = pv + ptoc.matmul(p16[:, :, c * PAGE:(c + 1) * PAGE],
                                          v_cache[page[c]], out_dtype=F32)
                ptoc.set_vec_tile_shapes(hkv, group, d)
                acc_new = acc * alpha + pv
                if last:
                    o[b] = ptoc.reshape(ptoc.cast(acc_new / l_new, F16), [hq, d])
                else:
                    m_all[b] = m_new
                    l_all[b] = l_new
                    acc_all[b] = acc_new

    return gqa_decode


def spread_lengths(batch, context):
    """Context lengths from a quarter of the context to all of it, in a fixed shuffled
    order (b * 37 mod batch), most not a multiple of a page."""
    return tuple(int(context * (0.25 + 0.75 * ((b * 37) % batch) / (batch - 1)))
                 for b in range(batch))


def decode_dims(**dims):
    """Decode sizes with the number of cache pages the lengths need (+2 unused)."""
    assert (dims["context"] // PAGE) % dims["pages_per_step"] == 0, "whole chunks"
    dims["pages"] = sum(-(-n // PAGE) for n in dims["lengths"]) + 2
    return dims


def decode_inputs(dims, rng):
    batch, hq, hkv, d = dims["batch"], dims["q_heads"], dims["kv_heads"], dims["head_dim"]
    width = dims["pages_per_step"] * PAGE
    lengths = dims["lengths"]
    # Every sequence's pages scattered over the cache; entries past its last page name
    # page 0 (read by the last chunk, hidden by the mask).
    order = rng.permutation(dims["pages"])
    table = np.zeros((batch, dims["context"] // PAGE), np.int32)
    used = 0
    for b, n in enumerate(lengths):
        count = -(-n // PAGE)
        table[b, :count] = order[used:used + count]
        used += count
    q = rng.standard_normal((batch, hq, d), np.float32).astype(np.float16)

    def cache():  # uniform in [-2, 2): half the time of normal values for 340 MiB
        values = rng.random((dims["pages"], hkv, PAGE, d), np.float32)
        values -= 0.5
        values *= 4.0
        return values.astype(np.float16)

    k_cache, v_cache = cache(), cache()
    mask = np.zeros((width + 1, 1, 1, width), np.float32)  # row r hides keys >= r
    for r in range(width + 1):
        mask[r, 0, 0, r:] = -np.inf
    return (q, k_cache, v_cache, table, np.asarray(lengths, np.int32), mask,
            np.zeros_like(q))


def decode_reference(q, k_cache, v_cache, table, seq_lens, mask, o):
    batch, hq, d = q.shape
    hkv = k_cache.shape[1]
    out = np.zeros((batch, hq, d))
    for b, n in enumerate(seq_lens):
        pages = table[b, :-(-n // PAGE)]
        keys = np.concatenate([k_cache[p] for p in pages], axis=1)[:, :n].astype(np.float64)
        values = np.concatenate([v_cache[p] for p in pages], axis=1)[:, :n].astype(np.float64)
        qb = q[b].astype(np.float64).reshape(hkv, hq // hkv, d)
        s = np.einsum("hgd,htd->hgt", qb, keys) / math.sqrt(d)
        p = np.exp(s - s.max(-1, keepdims=True))
        out[b] = np.einsum("hgt,htd->hgd", p / p.sum(-1, keepdims=True), values).reshape(hq, d)
    return (out,)


OPERATORS = [
    Operator(name="gqa_prefill", source=SOURCE + "; a causal 4096-token prefill, batch 1",
             full={"tokens": 4096, "q_heads": 32, "kv_heads": 8, "head_dim": 128,
                   "block_q": 256, "block_k": 512},
             small={"tokens": 256, "q_heads": 8, "kv_heads": 2, "head_dim": 128,
                    "block_q": 64, "block_k": 128},
             make=make_prefill, inputs=prefill_inputs, reference=prefill_reference,
             results=lambda returned, q, k, v, mask, o: (o,), tags=(FLASH_ATTENTION,),
             pass_options=PREFILL_PASS_OPTIONS, runtime_options=PREFILL_RUNTIME_OPTIONS),
    Operator(name="gqa_decode",
             source=SOURCE + "; decode of batch 64 over a paged KV cache of 4096 tokens "
                    "per sequence, 128-token pages",
             full=decode_dims(batch=64, q_heads=32, kv_heads=8, head_dim=128, context=4096,
                              pages_per_step=4, lengths=spread_lengths(64, 4096)),
             small=decode_dims(batch=3, q_heads=8, kv_heads=2, head_dim=128, context=1024,
                               pages_per_step=4, lengths=(640, 300, 512)),
             make=make_decode, inputs=decode_inputs, reference=decode_reference,
             results=lambda returned, q, k, v, table, lens, mask, o: (o,),
             tags=(FLASH_ATTENTION,),
             pass_options=DECODE_PASS_OPTIONS, runtime_options=DECODE_RUNTIME_OPTIONS),
]

if __name__ == "__main__":
    names = [a for a in sys.argv[1:] if not a.startswith("-")]
    sys.exit(main(([] if names else ["attention"]) + sys.argv[1:]))
