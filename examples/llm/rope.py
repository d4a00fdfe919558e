#!/usr/bin/env python3
"""Rotary position embedding (RoPE) of a Llama-3-8B-class attention layer: the query
and key heads of a 4096-token prefill rotated by their positions, fp16 in and out,
the rotation computed in fp32.

Shapes: Llama-3-8B's configuration (hidden_size 4096, num_attention_heads 32,
num_key_value_heads 8, so head_dim 4096 / 32 = 128; rope_theta 500000), a prefill of
4096 tokens at positions 0..4095. Q is [tokens, 32, 128] and K [tokens, 8, 128], the
layout the Q and K projections produce once their last axis is split into heads (as
Hugging Face's LlamaAttention does before transposing); rotating before the
transpose lets one cos/sin row serve every head of its token.

What it computes is Hugging Face's ``apply_rotary_pos_emb``, the rotate-half form:

    q_embed = q * cos + rotate_half(q) * sin,   rotate_half(q) = concat(-q[64:], q[:64])

with ``cos`` and ``sin`` [tokens, 128] given as inputs, computed as Llama's rotary
embedding precomputes them (inverse frequencies theta^(-2i/128), the angle of each
position and frequency, the 64 angles repeated to 128) and cast to the activations'
fp16. The kernel writes the two halves of each head separately:

    out[:64] = q[:64] * cos[:64] - q[64:] * sin[:64]
    out[64:] = q[64:] * cos[64:] + q[:64] * sin[64:]

which is the formula above element by element, without materialising
rotate_half(q): a concat of two computed halves would go through GM, and the
halves of an input are views (no copy). Each half is read once, cast to fp32, and
used by both outputs.

Tiles: Q in (2, 32, 128) tiles, two tokens with all their heads, so a half tile is
[2, 32, 64] f32 = 16 KiB; one tile's live set (both halves, their products, the cos
and sin rows: 72 KiB) stays under half of a2's 192 KiB UB, so nbuffer-merge can
double buffer and folds the 2048 tiles 43 at a time into 48 tasks, one per vector
core. With 4 tokens per tile two tiles no longer fit UB, no tiles merge, and the
1024 separate tasks make the scheduler the limit (126 us instead of 79 us). K in
(4, 8, 128) tiles: its 1024 tiles merge 21 at a time into 48 tasks and a 16-tile
tail, one per core next to the Q tasks; 8-token tiles would merge 10 at a time into
52 and give four cores a second full K task (84 us).

    PYTHONPATH=build/python /usr/bin/python3 examples/llm/rope.py [--full]
"""

import sys

import numpy as np

import ptoc
from suite import Operator, main

SOURCE = ("Llama-3-8B config.json: hidden_size 4096, num_attention_heads 32, "
          "num_key_value_heads 8 (head_dim 128), rope_theta 500000; 4096-token prefill")
ROPE_THETA = 500000.0


def make(dims, device, runtime_options, pass_options):
    tokens, heads, kv_heads, head_dim = (dims["tokens"], dims["heads"], dims["kv_heads"],
                                         dims["head_dim"])
    half = head_dim // 2
    f16, f32 = ptoc.DT_FP16, ptoc.DT_FP32

    def rotate(x, cos, sin):
        """The two rotated halves of every head of x [tokens, heads, head_dim]."""
        lo, hi = ptoc.cast(x[..., :half], f32), ptoc.cast(x[..., half:], f32)
        # [tokens, 1, head_dim] views: one row per token, broadcast over the heads.
        cos3, sin3 = cos.reshape([tokens, 1, head_dim]), sin.reshape([tokens, 1, head_dim])
        cos_lo, cos_hi = ptoc.cast(cos3[..., :half], f32), ptoc.cast(cos3[..., half:], f32)
        sin_lo, sin_hi = ptoc.cast(sin3[..., :half], f32), ptoc.cast(sin3[..., half:], f32)
        return (ptoc.cast(lo * cos_lo - hi * sin_lo, f16),
                ptoc.cast(hi * cos_hi + lo * sin_hi, f16))

    @ptoc.jit(device=device, pass_options=pass_options or None, runtime_options=runtime_options)
    def rope(q: ptoc.Tensor([tokens, heads, head_dim], f16),
             k: ptoc.Tensor([tokens, kv_heads, head_dim], f16),
             cos: ptoc.Tensor([tokens, head_dim], f16),
             sin: ptoc.Tensor([tokens, head_dim], f16),
             q_out: ptoc.Tensor([tokens, heads, head_dim], f16),
             k_out: ptoc.Tensor([tokens, kv_heads, head_dim], f16)):
        ptoc.set_vec_tile_shapes(2, heads, head_dim)  # 2 tokens: [2, 32, 64] f32 halves, 16 KiB
        q_out[..., :half], q_out[..., half:] = rotate(q, cos, sin)
        ptoc.set_vec_tile_shapes(4, kv_heads, head_dim)  # 4 tokens: 1024 tiles -> 48 + 1 tasks
        k_out[..., :half], k_out[..., half:] = rotate(k, cos, sin)

    return rope


def rope_tables(positions, head_dim, theta=ROPE_THETA):
    """cos and sin [len(positions), head_dim] as Llama's rotary embedding computes
    them (inverse frequencies theta^(-2i/head_dim), repeated to head_dim), in fp16."""
    inv_freq = 1.0 / theta ** (np.arange(0, head_dim, 2, dtype=np.float64) / head_dim)
    angles = np.outer(np.asarray(positions, np.float64), inv_freq)
    emb = np.concatenate([angles, angles], axis=-1)
    return np.cos(emb).astype(np.float16), np.sin(emb).astype(np.float16)


def inputs(dims, rng):
    tokens, heads, kv_heads, head_dim = (dims["tokens"], dims["heads"], dims["kv_heads"],
                                         dims["head_dim"])
    q = rng.standard_normal((tokens, heads, head_dim), dtype=np.float32).astype(np.float16)
    k = rng.standard_normal((tokens, kv_heads, head_dim), dtype=np.float32).astype(np.float16)
    cos, sin = rope_tables(np.arange(tokens), head_dim)
    return q, k, cos, sin, np.zeros_like(q), np.zeros_like(k)


def rotate_half(x):
    half = x.shape[-1] // 2
    return np.concatenate([-x[..., half:], x[..., :half]], axis=-1)


def reference(q, k, cos, sin, q_out, k_out):
    c = cos.astype(np.float64)[:, None, :]  # broadcast over the heads
    s = sin.astype(np.float64)[:, None, :]
    q64, k64 = q.astype(np.float64), k.astype(np.float64)
    return q64 * c + rotate_half(q64) * s, k64 * c + rotate_half(k64) * s


OPERATORS = [
    Operator(name="rope", source=SOURCE,
             full={"tokens": 4096, "heads": 32, "kv_heads": 8, "head_dim": 128},
             small={"tokens": 64, "heads": 8, "kv_heads": 2, "head_dim": 128},
             make=make, inputs=inputs, reference=reference,
             results=lambda returned, q, k, cos, sin, q_out, k_out: (q_out, k_out),
             rtol=1e-3, atol=1e-3),
]

if __name__ == "__main__":
    sys.exit(main(["rope"] + sys.argv[1:]))
