#!/usr/bin/env python3
"""RMSNorm of a Llama-3-8B-class layer: y = x / sqrt(mean(x^2) + eps) * weight over
4096 tokens of hidden size 4096, fp16 in and out, statistics in fp32.

Shapes: Llama-3-8B's configuration (hidden_size 4096, rms_norm_eps 1e-5), a prefill
of 4096 tokens. The reduction runs over whole rows (the vector tile spans the hidden
axis), so no partial sums cross tiles.

    PYTHONPATH=build/python /usr/bin/python3 examples/llm/rmsnorm.py [--full]
"""

import sys

import numpy as np

import ptoc
from suite import Operator, main

SOURCE = "Llama-3-8B config.json: hidden_size 4096, rms_norm_eps 1e-5; 4096-token prefill"
EPS = 1e-5


def make(dims, device, runtime_options, pass_options):
    tokens, hidden = dims["tokens"], dims["hidden"]
    f16, f32 = ptoc.DT_FP16, ptoc.DT_FP32

    @ptoc.jit(device=device, pass_options=pass_options or None, runtime_options=runtime_options)
    def rmsnorm(x: ptoc.Tensor([tokens, hidden], f16),
                weight: ptoc.Tensor([hidden], f16),
                y: ptoc.Tensor([tokens, hidden], f16)):
        ptoc.set_vec_tile_shapes(2, hidden)  # whole rows: 2 x 4096 f32 = 32 KiB per tile
        x32 = ptoc.cast(x, f32)
        ms = ptoc.mean(x32 * x32, dim=-1, keepdim=True)
        y[:] = x32 * ptoc.rsqrt(ms + EPS) * ptoc.cast(weight, f32)

    return rmsnorm


def inputs(dims, rng):
    tokens, hidden = dims["tokens"], dims["hidden"]
    x = rng.normal(0.0, 2.0, (tokens, hidden)).astype(np.float16)
    weight = rng.uniform(0.5, 1.5, hidden).astype(np.float16)
    return x, weight, np.zeros_like(x)


def reference(x, weight, y):
    x64 = x.astype(np.float64)
    return (x64 / np.sqrt((x64 * x64).mean(-1, keepdims=True) + EPS) * weight,)


OPERATORS = [
    Operator(name="rmsnorm", source=SOURCE,
             full={"tokens": 4096, "hidden": 4096}, small={"tokens": 64, "hidden": 4096},
             make=make, inputs=inputs, reference=reference,
             results=lambda returned, x, weight, y: (y,), rtol=2e-3, atol=2e-3),
]

if __name__ == "__main__":
    sys.exit(main(["rmsnorm"] + sys.argv[1:]))
