"""matmul's FIXPIPE epilogue (PyPTO extend_params): 'scale' dequantises an i8 x i8
product (i32 accumulator x scale, as f16/bf16), 'relu_type' applies a ReLU. Numerics
are exact against numpy replaying the documented steps; fused into the cube task,
they add no vector task and no time."""

import re

import numpy as np
import pytest

import ptoc
from conftest import F16, F32, I8, I32, TINY_CUBE, assert_close, bf16_round, kernel

M, K, N = 64, 96, 80


def _i8(rng, *shape):
    return rng.integers(-128, 128, shape).astype(I8)


def _fixpipe_scale(s):
    """The f32 value of s keeping sign, exponent and the top 10 mantissa bits."""
    bits = np.array([s], dtype=np.float32).view(np.uint32) & np.uint32(0xFFFFE000)
    return bits.view(np.float32)[0]


def _dequant_ref(a, b, scale, relu, out):
    acc = a.astype(np.int64) @ b.astype(np.int64)  # exact; fits i32 for these sizes
    v = acc.astype(np.int32).astype(np.float32) * _fixpipe_scale(scale)  # f32 product
    if relu:
        v = np.maximum(v, np.float32(0))
    return v.astype(F16) if out is F16 else bf16_round(v)


@pytest.mark.parametrize("relu", [False, True], ids=["scale", "scale+relu"])
@pytest.mark.parametrize("out", [F16, "bf16"])
def test_dequant_exact(rng, relu, out):
    a, b = _i8(rng, M, K), _i8(rng, K, N)
    scale = 0.2  # not representable in 10 mantissa bits: the truncation matters
    params = {"scale": scale}
    if relu:
        params["relu_type"] = ptoc.ReLuType.RELU
    dt = ptoc.DT_FP16 if out is F16 else ptoc.DT_BF16
    f = kernel(lambda p, q: ptoc.matmul(p, q, dt, extend_params=params), 2, cube=TINY_CUBE)
    got = f(a, b)
    want = _dequant_ref(a, b, scale, relu, F16 if out is F16 else None)
    if out is F16:
        assert got.dtype == F16
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_array_equal(np.asarray(got).astype(F32), want)
    # The truncated scale differs from 0.2 in f32: a wrong rounding would show.
    assert _fixpipe_scale(scale) != np.float32(scale)


def test_relu_float(rng):
    a = rng.standard_normal((M, K)).astype(F32)
    b = rng.standard_normal((K, N)).astype(F32)
    f = kernel(lambda p, q: ptoc.matmul(p, q, extend_params={"relu_type": ptoc.ReLuType.RELU}),
               2, cube=TINY_CUBE)
    got = f(a, b)
    want = np.maximum(a.astype(np.float64) @ b.astype(np.float64), 0)
    assert (got >= 0).all() and (got == 0).sum() > 0
    assert_close(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


def test_no_relu_is_plain(rng):
    a, b = _i8(rng, M, K), _i8(rng, K, N)
    f = kernel(lambda p, q: ptoc.matmul(p, q, extend_params={"relu_type": ptoc.ReLuType.NO_RELU}),
               2, cube=TINY_CUBE)
    np.testing.assert_array_equal(f(a, b), (a.astype(I32) @ b.astype(I32)))


def test_fused_epilogue_has_no_vector_task_and_is_faster(rng):
    """The epilogue runs in the FIXPIPE: against the same math as vector ops after the
    matmul, the cube tasks are the only tasks, the tile IR carries scale/relu on the
    copy_out from l0c, and the simulated time is lower."""
    a, b = _i8(rng, M, K), _i8(rng, K, N)
    fused = kernel(lambda p, q: ptoc.matmul(
        p, q, ptoc.DT_FP16, extend_params={"scale": 0.25, "relu_type": ptoc.ReLuType.RELU}),
        2, cube=TINY_CUBE, name="fused")
    unfused = kernel(lambda p, q: ptoc.cast(
        ptoc.relu(ptoc.cast(ptoc.matmul(p, q), ptoc.DT_FP32) * 0.25), ptoc.DT_FP16),
        2, cube=TINY_CUBE, tile=(32, 64), name="unfused")
    got_f, got_u = fused(a, b), unfused(a, b)
    # 0.25 is exact in 10 mantissa bits: both compute the same numbers.
    np.testing.assert_array_equal(got_f, got_u)
    kf, ku = fused.compile(a, b), unfused.compile(a, b)
    tile_ir = kf.ir("tile")
    copy_outs = [l for l in tile_ir.splitlines() if "copy_out" in l]
    assert copy_outs and all("relu = true" in l and "scale = 0.25" in l for l in copy_outs), tile_ir
    assert 'core = "aiv"' not in kf.ir("partitioned")
    assert 'core = "aiv"' in ku.ir("partitioned")
    assert kf.stats["tasks"] < ku.stats["tasks"]
    assert fused.last_run.simulated_us < unfused.last_run.simulated_us


def _bias_kernel(out=None, batched=False, **params):
    def f(a, b, c):
        ptoc.set_cube_tile_shapes(*TINY_CUBE)
        return ptoc.matmul(a, b, out, extend_params=dict(bias_tensor=c, **params))
    return ptoc.jit(f, device="tiny")


@pytest.mark.parametrize("dequant", [False, True], ids=["i32", "dequant-relu"])
def test_bias_i8_exact(rng, dequant):
    """The i32 bias initialises the accumulator: exact, then the epilogue."""
    a, b = _i8(rng, M, K), _i8(rng, K, N)
    c = rng.integers(-5000, 5000, (1, N)).astype(I32)
    acc = a.astype(I32) @ b.astype(I32) + c
    if dequant:
        got = _bias_kernel(ptoc.DT_FP16, scale=0.25, relu_type=ptoc.ReLuType.RELU)(a, b, c)
        np.testing.assert_array_equal(
            got, np.maximum(acc.astype(F32) * np.float32(0.25), np.float32(0)).astype(F16))
    else:
        np.testing.assert_array_equal(_bias_kernel()(a, b, c), acc)


@pytest.mark.parametrize("bias_dtype", [F16, F32])
def test_bias_float(rng, bias_dtype):
    a = rng.standard_normal((M, K)).astype(F16)
    b = rng.standard_normal((K, N)).astype(F16)
    c = rng.standard_normal((1, N)).astype(bias_dtype)
    got = _bias_kernel(ptoc.DT_FP32)(a, b, c)
    want = a.astype(np.float64) @ b.astype(np.float64) + c.astype(np.float64)
    assert_close(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


def test_bias_batched(rng):
    a = rng.standard_normal((3, 40, K)).astype(F32)
    b = rng.standard_normal((K, N)).astype(F32)
    c = rng.standard_normal((1, N)).astype(F32)
    got = _bias_kernel()(a, b, c)
    want = a.astype(np.float64) @ b.astype(np.float64) + c
    assert_close(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


def test_bias_is_one_row_copy_per_output_tile_and_beats_a_vector_add(rng):
    """The bias row of each output tile is copied into L1 once and initialises the
    accumulator (no vector task); an add after the matmul costs AIV tasks and time."""
    a = rng.standard_normal((M, K)).astype(F16)
    b = rng.standard_normal((K, N)).astype(F16)
    c = rng.standard_normal((1, N)).astype(F32)
    fused = _bias_kernel(ptoc.DT_FP32)
    added = kernel(lambda p, q, r: ptoc.matmul(p, q, ptoc.DT_FP32) + r, 3, cube=TINY_CUBE,
                   tile=(32, 64), name="added")
    assert_close(fused(a, b, c), added(a, b, c), rtol=1e-5, atol=1e-4)
    kf, ka = fused.compile(a, b, c), added.compile(a, b, c)
    tile_ir = kf.ir("tile")
    tiles = (M // 32) * ((N + 31) // 32)  # mL1 x nL1 = 32 x 32 output tiles
    assert tile_ir.count("copy_in %c") == tiles, tile_ir
    assert len(re.findall(r"copy_in %c \{offsets = \[0, \d+\]\} : tile<1x\d+xf32, l1>",
                          tile_ir)) == tiles
    assert 'core = "aiv"' not in kf.ir("partitioned")
    assert 'core = "aiv"' in ka.ir("partitioned")
    assert fused.last_run.simulated_us < added.last_run.simulated_us


@pytest.mark.parametrize("shape,dtype,match", [
    ((N,), F32, r"bias tensor<80xf32> must have shape \[1, 80\]"),
    ((2, N), F32, r"must have shape \[1, 80\]"),
    ((1, N), np.float16, r"bias tensor<1x80xbf16>|with f32 operands it must be f32"),
])
def test_bad_bias(rng, shape, dtype, match):
    a = rng.standard_normal((M, K)).astype(F32)
    b = rng.standard_normal((K, N)).astype(F32)
    with pytest.raises(ptoc.Error, match=match):
        _bias_kernel()(a, b, np.zeros(shape, dtype))


@pytest.mark.parametrize("params,match", [
    ({"scale": 0.5}, r"'scale' but f32 operands"),
    ({"bias_tensor": 1.0}, r"bias_tensor'\] must be a ptoc.Tensor"),
    ({"scale_tensor": 1}, r"scale_tensor.*per-tensor 'scale'"),
    ({"relu_type": True}, r"relu_type'\] must be ptoc.ReLuType"),
    ({"scale": float("nan")}, r"finite number"),
    ({"bogus": 1}, r"unknown extend_params key 'bogus'"),
])
def test_bad_extend_params(rng, params, match):
    a = rng.standard_normal((M, K)).astype(F32)
    f = kernel(lambda p, q: ptoc.matmul(p, q, extend_params=params), 2, cube=TINY_CUBE)
    with pytest.raises(ptoc.Error, match=match):
        f(a, a.T.copy())


def test_i8_to_f16_needs_a_scale(rng):
    a, b = _i8(rng, M, K), _i8(rng, K, N)
    f = kernel(lambda p, q: ptoc.matmul(p, q, ptoc.DT_FP16), 2, cube=TINY_CUBE)
    with pytest.raises(ptoc.DTypeError, match=r"produces i32, not f16; for an f16 or bf16 "
                                              r"result give a dequantisation 'scale'"):
        f(a, b)
