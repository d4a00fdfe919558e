#!/usr/bin/env python3
"""The SwiGLU MLP of a Llama-3-8B-class layer, y = (silu(x Wg) * (x Wu)) Wd, over a
4096-token prefill: in fp16 ("swiglu_fp16") and in bf16 ("swiglu_bf16").

Shapes: Llama-3-8B's configuration (hidden_size 4096, intermediate_size 14336,
hidden_act "silu"), a prefill of 4096 tokens: x [4096, 4096], Wg and Wu [4096, 14336],
Wd [14336, 4096], y [4096, 4096], all in the operand dtype (fp16 or bf16; from numpy
a bf16 parameter takes float32 arrays, see docs/python.md).

What it computes, as a real kernel does: the gate and up GEMMs accumulate in fp32 on
the cube cores and leave their results in fp32; the vector cores compute
silu(g) * u = g * sigmoid(g) * u in fp32 and cast the hidden activation to the
operand dtype, which the down GEMM takes as its left operand; the down GEMM
accumulates in fp32 and rounds y to the operand dtype. The reference rounds the
hidden activation where the kernel does (as examples/mlp.py does), so the check
measures the kernel, not that rounding.

Tiles: the GEMMs are cube-bound (1.44 TFLOP, 4.08 ms at a2's cube peak, against
0.26 ms for the compulsory 400 MiB of HBM traffic), and what keeps the cube fed is
the bytes each output tile loads per FLOP: (mL1 + nL1) / (mL1 * nL1) per K step. The
largest output tile the L0C accumulator holds is 32768 fp32 elements, so all three
GEMMs use 128x256 output tiles (mL1 128, nL1 256) in K steps of 256 (kL1, double
buffered in L1: 192 KiB per step) with 128x64x128 L0 blocks. Measured on a2 at full
size (fp16; bf16 runs at the same cube rate):

    output tile 128x128 (examples/mlp.py's)         7570 us
    output tile 256x128 (mL1 256, nL1 128)           6372 us
    output tile 128x256 (mL1 128, nL1 256)           5591 us   <- the default
    128x256 with kL1 128 / kL1 512                   6038 / 6948 us

(bound 4098 us). Even 128x256 tiles ask the shared L2 for about 4.1 TB/s at the cube's
peak, close to its 4.75 TB/s; the cube tasks spend more pipe time transferring than
computing and run about 1.3x their compute time. The vector stage is a few percent
of the work; its tile, (8, 1024), is 32 KiB of fp32 per operand (16 KiB tiles, 16x256
or 8x512, time the same and compile more tile ops).

    PYTHONPATH=build/python /usr/bin/python3 examples/llm/swiglu.py [--full]
"""

import functools
import sys

import numpy as np

import ptoc
from suite import Operator, main

SOURCE = ("Llama-3-8B config.json: hidden_size 4096, intermediate_size 14336, "
          "hidden_act silu; 4096-token prefill")

CUBE_TILES = ([128, 128], [64, 256], [128, 256])  # [mL0, mL1], [kL0, kL1], [nL0, nL1]
VEC_TILE = (8, 1024)


def make(dtype, dims, device, runtime_options, pass_options):
    tokens, hidden, mlp = dims["tokens"], dims["hidden"], dims["mlp"]
    f32 = ptoc.DT_FP32

    @ptoc.jit(device=device, pass_options=pass_options or None, runtime_options=runtime_options)
    def swiglu(x: ptoc.Tensor([tokens, hidden], dtype),
               w_gate: ptoc.Tensor([hidden, mlp], dtype),
               w_up: ptoc.Tensor([hidden, mlp], dtype),
               w_down: ptoc.Tensor([mlp, hidden], dtype),
               y: ptoc.Tensor([tokens, hidden], dtype)):
        ptoc.set_cube_tile_shapes(*CUBE_TILES)
        gate = ptoc.matmul(x, w_gate, out_dtype=f32)  # [tokens, mlp], fp32 accumulators
        up = ptoc.matmul(x, w_up, out_dtype=f32)
        ptoc.set_vec_tile_shapes(*VEC_TILE)
        hidden_act = ptoc.cast(gate * ptoc.sigmoid(gate) * up, dtype)  # the down GEMM's operand
        ptoc.set_cube_tile_shapes(*CUBE_TILES)
        y[:] = ptoc.matmul(hidden_act, w_down, out_dtype=dtype)

    return swiglu


def round_to_bf16(a):
    """float32 values rounded to the nearest bf16 (ties to even), as float32."""
    bits = np.asarray(a, np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return bits.astype(np.uint32).view(np.float32)


def to_operand(a, dtype):
    """a (float32) as the numpy array a `dtype` parameter takes: float16, or float32
    holding bf16 values (so the reference sees exactly what the kernel reads)."""
    return a.astype(np.float16) if dtype == ptoc.DT_FP16 else round_to_bf16(a)


def inputs(dtype, dims, rng):
    tokens, hidden, mlp = dims["tokens"], dims["hidden"], dims["mlp"]

    def normal(shape, scale):
        a = rng.standard_normal(shape, dtype=np.float32)
        a *= np.float32(scale)
        return to_operand(a, dtype)

    # Weights scaled like a trained layer's: x Wg and x Wu of unit variance.
    x = normal((tokens, hidden), 1.0)
    w_gate = normal((hidden, mlp), hidden ** -0.5)
    w_up = normal((hidden, mlp), hidden ** -0.5)
    w_down = normal((mlp, hidden), mlp ** -0.5)
    return x, w_gate, w_up, w_down, np.zeros_like(x)


def reference(dtype, x, w_gate, w_up, w_down, y):
    x64 = x.astype(np.float64)
    gate, up = x64 @ w_gate.astype(np.float64), x64 @ w_up.astype(np.float64)
    hidden_act = gate / (1.0 + np.exp(-gate)) * up
    # Rounded to the operand dtype where the kernel casts it for the down GEMM.
    hidden_act = to_operand(hidden_act.astype(np.float32), dtype).astype(np.float64)
    return (hidden_act @ w_down.astype(np.float64),)


def operator(name, dtype, rtol, atol):
    return Operator(name=name, source=SOURCE,
                    full={"tokens": 4096, "hidden": 4096, "mlp": 14336},
                    small={"tokens": 128, "hidden": 256, "mlp": 512},
                    make=functools.partial(make, dtype),
                    inputs=functools.partial(inputs, dtype),
                    reference=functools.partial(reference, dtype),
                    results=lambda returned, x, w_gate, w_up, w_down, y: (y,),
                    rtol=rtol, atol=atol)


OPERATORS = [
    # y is rounded to the operand dtype: fp16 keeps 11 significant bits, bf16 8.
    operator("swiglu_fp16", ptoc.DT_FP16, rtol=1e-3, atol=1e-3),
    operator("swiglu_bf16", ptoc.DT_BF16, rtol=4e-3, atol=4e-3),
]

if __name__ == "__main__":
    sys.exit(main(["swiglu"] + sys.argv[1:]))
