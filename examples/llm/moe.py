#!/usr/bin/env python3
"""The routed-expert half of a DeepSeek-V3-class MoE layer, as two operators.

**moe_gating**: the router. scores = softmax(x W_r) over the 256 routed experts, the
top 8 per token (weights and expert indices), and the 8 weights renormalised to sum
to 1. x [4096, 7168] and W_r [7168, 256] are bf16 (DeepSeek-V3's activation dtype),
the scores fp32 (the cube accumulates in fp32 and writes fp32). Outputs: weights
[4096, 8] fp32 and experts [4096, 8] int32, ordered by weight. This is the softmax
router the issue asks for (DeepSeek-V2's, Mixtral's, Qwen-MoE's); DeepSeek-V3 itself
scores with sigmoid (scoring_func "sigmoid"), adds a per-expert load-balancing bias
for the selection only (e_score_correction_bias), picks the top 4 of 8 expert groups
first (n_group 8, topk_group 4), and scales the renormalised weights by 2.5
(routed_scaling_factor). Those are elementwise and small-reduction changes on the same
[4096, 256] scores; the cost is the GEMM and the top-k, which are the same.

Tiles: the GEMM is 4096 x 256 outputs over K = 7168. An output tile may hold at most
32768 fp32 accumulators (L0C), and every cube task streams its whole K strip of x and
of W_r through the core's own GM port, so 128 x 256 is the tile with the fewest bytes
per output; but 4096 / 128 x 1 = 32 tasks are 1.33 waves of 24 cube cores. 176 x 128
tiles (4096 = 23 x 176 + 48) give 24 x 2 = 48 tasks, two full waves, and are faster
(kL1 256 keeps both L1 operands double-buffered). The softmax, the top-8 and the
renormalisation run on vector tiles of 32 whole rows (32 x 256 fp32 = 32 KiB; a row
must be whole for the softmax and the top-k), 128 tiles for 48 vector cores.

**moe_experts**: the routed experts' FFN as a grouped GEMM. Per expert e, SwiGLU:
y = (silu(x W_gate[e]) * (x W_up[e])) W_down[e] with W_gate, W_up [7168, 2048] and
W_down [2048, 7168] (moe_intermediate_size 2048), fp16 operands and output, fp32
accumulation and activation. (DeepSeek-V3 ships FP8 expert weights and runs bf16
activations; the device model costs fp16 and bf16 the same, and fp16 keeps the host
arrays at 672 MiB, where bf16 parameters take float32 arrays from numpy, twice
that.) The routed rows arrive
permuted (as after an all-to-all dispatch): the rows of expert e are x[offs[e] :
offs[e + 1]], with offs [local_experts + 1] int32, exclusive prefix sums of the
per-expert counts, as grouped-GEMM kernels take them (torch._grouped_mm's offs,
group_list of Ascend's GroupedMatmul). The output y holds one row per routed row, in
the same order; weighting by the router's weight and the scatter-add back to tokens
(the combine) is a separate step.

The kernel loops (ptoc.loop) over the local experts and, inside, over blocks of 128
rows of that expert: the trip count ceil(count / 128) is read from offs when the
kernel runs, and the last block of an expert is a ptoc.view with a valid row count
min(count - 128 b, 128), so it reads zeros past the expert's rows and writes back only
its own rows. An expert with no rows runs no block. The bodies compile once; one
compiled kernel serves every routing (the row axis is dynamic).

Shard: DeepSeek-V3's prefill deployment (technical report, section 3.4.1) runs the
routed experts with expert parallelism 32: each of 32 devices holds 8 of the 256
experts (plus a redundant one, left out here). Weights of 8 experts: 8 x 3 x 7168 x
2048 x 2 B = 672 MiB (32 experts, EP 8, would be 2.6 GiB). The routed rows are the
4096 tokens x top-8 = 32768 (token, expert) pairs of one prefill batch (the batch of
moe_gating) that land on this shard's 8 experts: about 1024 rows (1/32 of them),
unevenly (a deployment where each of the 32 devices dispatches its own 4096 tokens
would bring about 32 times as many). inputs() routes the tokens by random token
logits plus a per-expert popularity (one expert of the shard is cold: 3 rows at full
size, none at the reduced size), keeps the pairs whose expert is local (experts 0-7)
and groups them by expert, in token order; at full size the counts are 129, 83, 165,
121, 85, 138, 235 and 3 rows (959).

Tiles: a block is 128 rows, one M tile of every GEMM: tiles of 128 x 256 outputs
(the fewest bytes streamed per output within L0C), 8 tasks for each of gate and up,
28 for down, per block. A bigger block reads each expert's weights fewer times but
pads more rows (a partial block costs a whole one); a smaller one needs flatter
tiles, which stream more bytes per output. For this routing (959 rows: 12 blocks of
128) the simulated times were 1009.9 us with blocks of 128, 1251.6 us with 256 (tiles
256 x 128), 1610.9 us with 64 (tiles 64 x 512), and 1199.8 us with blocks of 128 in
128 x 128 tiles (a2, 4 experts at once), measured before matmul tiles staggered their
K steps, which took blocks of 128 to 928.7 us. The vector tile, 32 x 256 fp32
(32 KiB, a quarter of a cube tile), fuses silu, the product and the cast to fp16
over the gate and up results.

ptoc.tune tunes this kernel for the routing of the call it is given (its loop bounds
and offsets are values of offs, read when the kernel runs): tune it with
representative data. make_experts(..., routing=offs) traces the same kernel with one
routing fixed (the loops unrolled per expert), which simulates to the same time.

    PYTHONPATH=build/python /usr/bin/python3 examples/llm/moe.py [--full]
"""

import sys

import numpy as np

import ptoc
from suite import Operator, main

SOURCE = ("DeepSeek-V3 config.json: hidden_size 7168, n_routed_experts 256, "
          "num_experts_per_tok 8, moe_intermediate_size 2048; 4096-token prefill")
EXPERTS_SOURCE = SOURCE + "; expert parallelism 32 (DeepSeek-V3 prefill): 8 local experts"


# --------------------------------------------------------------------------- gating

def _bf16_values(a):
    """``a`` (float32) rounded to bf16 values (nearest-even), still float32: what the
    kernel's bf16 parameters hold, so the numpy reference sees the same numbers."""
    bits = np.ascontiguousarray(a, np.float32).view(np.uint32)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return bits.astype(np.uint32).view(np.float32)


def make_gating(dims, device, runtime_options, pass_options):
    tokens, hidden, experts, topk = dims["tokens"], dims["hidden"], dims["experts"], dims["topk"]
    bf16, f32, i32 = ptoc.DT_BF16, ptoc.DT_FP32, ptoc.DT_INT32
    tile_m = min(176, tokens)  # 4096 = 23 x 176 + 48: 24 M tiles x 2 N tiles = 48 cube tasks

    @ptoc.jit(device=device, pass_options=pass_options or None, runtime_options=runtime_options)
    def moe_gating(x: ptoc.Tensor([tokens, hidden], bf16),
                   w_router: ptoc.Tensor([hidden, experts], bf16),
                   weights: ptoc.Tensor([tokens, topk], f32),
                   expert_ids: ptoc.Tensor([tokens, topk], i32)):
        ptoc.set_cube_tile_shapes([tile_m, tile_m], [64, 256], [128, 128])
        scores = ptoc.matmul(x, w_router, out_dtype=f32)
        ptoc.set_vec_tile_shapes(32, experts)      # 32 whole rows: 32 KiB of fp32 scores
        top = ptoc.topk(ptoc.softmax(scores, -1), topk)
        ptoc.set_vec_tile_shapes(32, topk)
        weights[:] = top.values / ptoc.sum(top.values, -1, keepdim=True)
        expert_ids[:] = top.indices

    return moe_gating


def inputs_gating(dims, rng):
    tokens, hidden, experts, topk = dims["tokens"], dims["hidden"], dims["experts"], dims["topk"]
    x = _bf16_values(rng.standard_normal((tokens, hidden), dtype=np.float32))
    w = _bf16_values(rng.standard_normal((hidden, experts), dtype=np.float32) / np.sqrt(hidden))
    return (x, w, np.zeros((tokens, topk), np.float32), np.zeros((tokens, topk), np.int32))


def reference_gating(x, w, weights, expert_ids):
    s = x.astype(np.float64) @ w.astype(np.float64)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    top = np.argsort(-p, axis=-1, kind="stable")[:, :weights.shape[1]]
    v = np.take_along_axis(p, top, -1)
    return v / v.sum(-1, keepdims=True), top


# --------------------------------------------------------------------------- experts

# Experts write disjoint rows: their loop is parallel=True, one stitch per expert, and
# 4 experts run at once (928.7 us; 2 and 8 at once: 937.6 and 920.7 us; parallel with
# 1 at once, 1218.9 us: each expert then waits for the one before).
# ptoc's default device_sched_parallelism (automatic, docs/runtime.md "Parallel loops")
# also picks 4 for this kernel.
EXPERTS_RUNTIME_OPTIONS = {"device_sched_parallelism": 4}

def make_experts(dims, device, runtime_options, pass_options, routing=None):
    """The grouped expert FFN. ``routing`` None: the kernel reads the expert offsets
    from ``offs`` when it runs (every routing, one kernel). ``routing`` an offs array:
    that routing fixed when tracing (``offs`` unused), so the kernel serves it only."""
    local, hidden, inter, block = dims["local"], dims["hidden"], dims["inter"], dims["block"]
    f16, f32, i32 = ptoc.DT_FP16, ptoc.DT_FP32, ptoc.DT_INT32
    rows = ptoc.dynamic("rows")  # the routed rows: any count, one compiled kernel
    n_tile = min(256, inter)

    def expert_ffn(x, w_gate, w_up, w_down, y, e, start, count, name):
        """SwiGLU of expert e over its rows x[start:start + count], 128 at a time."""
        for b in ptoc.loop(0, (count + block - 1) // block, name=name):
            r0 = start + b * block
            xb = ptoc.view(x, [block, hidden], [r0, 0],
                           valid_shape=[(count - b * block).min(block), hidden])
            gate = ptoc.matmul(xb, w_gate[e], out_dtype=f32)
            up = ptoc.matmul(xb, w_up[e], out_dtype=f32)
            act = ptoc.cast(gate * ptoc.sigmoid(gate) * up, f16)
            y[r0:r0 + block, :] = ptoc.matmul(act, w_down[e], out_dtype=f16)

    @ptoc.jit(device=device, pass_options=pass_options or None, runtime_options=runtime_options)
    def moe_experts(x: ptoc.Tensor([rows, hidden], f16),
                    offs: ptoc.Tensor([local + 1], i32),
                    w_gate: ptoc.Tensor([local, hidden, inter], f16),
                    w_up: ptoc.Tensor([local, hidden, inter], f16),
                    w_down: ptoc.Tensor([local, inter, hidden], f16),
                    y: ptoc.Tensor([rows, hidden], f16)):
        ptoc.set_cube_tile_shapes([block, block], [64, 256], [n_tile, n_tile])
        ptoc.set_vec_tile_shapes(block // 4, n_tile)  # a quarter of a cube tile: 32 KiB of fp32
        if routing is None:
            for e in ptoc.loop(local, name="expert", parallel=True):
                expert_ffn(x, w_gate, w_up, w_down, y, e, offs[e], offs[e + 1] - offs[e], "block")
        else:
            for e in range(local):
                start, count = int(routing[e]), int(routing[e + 1] - routing[e])
                if count:
                    expert_ffn(x, w_gate, w_up, w_down, y, e, start, count, f"block{e}")

    return moe_experts


def route(dims, rng):
    """The routing of one batch: every token's top-k experts of all ``experts`` (by a
    random token logit plus a per-expert popularity, so the load is uneven and the
    shard's last expert is cold), then the (token, expert) pairs whose expert is one
    of the ``local`` experts of this shard (experts 0 .. local-1), grouped by expert
    and in token order within one. Returns (tokens of the routed rows, offs)."""
    tokens, experts, topk, local = dims["tokens"], dims["experts"], dims["topk"], dims["local"]
    popularity = rng.normal(0.0, 0.3, experts)
    popularity[local - 1] = -1.5  # cold: few tokens or none
    logits = rng.standard_normal((tokens, experts)) + popularity
    chosen = np.argsort(-logits, axis=-1, kind="stable")[:, :topk]  # [tokens, topk]
    token_of_pair = np.repeat(np.arange(tokens), topk)
    expert_of_pair = chosen.reshape(-1)
    order = np.argsort(expert_of_pair, kind="stable")
    keep = order[expert_of_pair[order] < local]
    counts = np.bincount(expert_of_pair[keep], minlength=local)
    offs = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
    return token_of_pair[keep], offs


def inputs_experts(dims, rng):
    hidden, inter, local = dims["hidden"], dims["inter"], dims["local"]
    rows_token, offs = route(dims, rng)
    x_tokens = rng.standard_normal((dims["tokens"], hidden), dtype=np.float32).astype(np.float16)
    x = x_tokens[rows_token]  # the routed rows, grouped by expert (the dispatch's output)

    def weight(shape, fan_in):
        # Uniform with the variance 1 / fan_in (10x faster to draw than normal at 672
        # MiB), one expert at a time: no full-size float32 copy.
        w = np.empty(shape, np.float16)
        for e in range(shape[0]):
            u = rng.random(shape[1:], dtype=np.float32)
            w[e] = (u - np.float32(0.5)) * np.float32(2.0 * np.sqrt(3.0 / fan_in))
        return w

    w_gate = weight((local, hidden, inter), hidden)
    w_up = weight((local, hidden, inter), hidden)
    w_down = weight((local, inter, hidden), inter)
    return x, offs, w_gate, w_up, w_down, np.zeros_like(x)


def reference_experts(x, offs, w_gate, w_up, w_down, y):
    out = np.zeros(x.shape)
    for e in range(len(offs) - 1):
        xs = x[offs[e]:offs[e + 1]].astype(np.float64)
        g = xs @ w_gate[e].astype(np.float64)
        u = xs @ w_up[e].astype(np.float64)
        out[offs[e]:offs[e + 1]] = (g / (1.0 + np.exp(-g)) * u) @ w_down[e].astype(np.float64)
    return (out,)


OPERATORS = [
    Operator(name="moe_gating", source=SOURCE,
             full={"tokens": 4096, "hidden": 7168, "experts": 256, "topk": 8},
             small={"tokens": 128, "hidden": 512, "experts": 256, "topk": 8},
             make=make_gating, inputs=inputs_gating, reference=reference_gating,
             results=lambda returned, x, w, weights, expert_ids: (weights, expert_ids),
             rtol=1e-4, atol=1e-6),
    Operator(name="moe_experts", source=EXPERTS_SOURCE,
             full={"tokens": 4096, "experts": 256, "topk": 8, "local": 8,
                   "hidden": 7168, "inter": 2048, "block": 128},
             small={"tokens": 128, "experts": 64, "topk": 8, "local": 4,
                    "hidden": 256, "inter": 128, "block": 16},
             make=make_experts, inputs=inputs_experts, reference=reference_experts,
             results=lambda returned, x, offs, w_gate, w_up, w_down, y: (y,),
             runtime_options=EXPERTS_RUNTIME_OPTIONS,
             rtol=1e-2, atol=2e-3),
]

if __name__ == "__main__":
    sys.exit(main(["moe"] + sys.argv[1:]))
