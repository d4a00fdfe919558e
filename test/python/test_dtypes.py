"""Element types: the DT_* constants and their numpy mapping, bf16 parameters
(float32 arrays rounded to bf16 on the way in, results widened to float32), f16 and
int arrays, and the DTypeError for arrays of the wrong dtype."""

import pickle

import numpy as np
import pytest

import ptoc
from conftest import (F16, F32, I8, I32, TINY, TINY_CUBE, assert_close, bf16_round, kernel,
                      run)

BF16 = ptoc.DT_BF16


def tensor(shape, dtype):
    return ptoc.Tensor(list(shape), dtype)


# --- the constants --------------------------------------------------------------------

@pytest.mark.parametrize("t,name,ir,numpy_dtype,itemsize,is_float", [
    (ptoc.DT_FP32, "DT_FP32", "f32", np.float32, 4, True),
    (ptoc.DT_FP16, "DT_FP16", "f16", np.float16, 2, True),
    (ptoc.DT_BF16, "DT_BF16", "bf16", np.float32, 2, True),  # float32 arrays in and out
    (ptoc.DT_INT8, "DT_INT8", "i8", np.int8, 1, False),
    (ptoc.DT_INT32, "DT_INT32", "i32", np.int32, 4, False),
], ids=lambda v: v if isinstance(v, str) else None)
def test_dtype_constants(t, name, ir, numpy_dtype, itemsize, is_float):
    assert isinstance(t, ptoc.DType)
    assert t.name == name and t.ir_name == ir
    assert t.numpy == np.dtype(numpy_dtype)
    assert t.itemsize == itemsize and t.is_float is is_float
    assert repr(t) == "ptoc." + name
    assert pickle.loads(pickle.dumps(t)) is t


@pytest.mark.parametrize("spelling,want", [
    ("f16", ptoc.DT_FP16), ("float16", ptoc.DT_FP16), ("DT_FP16", ptoc.DT_FP16),
    ("bf16", ptoc.DT_BF16), ("bfloat16", ptoc.DT_BF16), ("int8", ptoc.DT_INT8),
    (np.float32, ptoc.DT_FP32), (np.dtype(np.int32), ptoc.DT_INT32), ("i32", ptoc.DT_INT32),
])
def test_dtype_spellings_in_annotations(spelling, want):
    assert ptoc.Tensor([4, 8], spelling).dtype is want


@pytest.mark.parametrize("bad", ["f64", "float64", np.float64, np.complex64, "nope"])
def test_unknown_dtype_in_annotation(bad):
    with pytest.raises(ptoc.DTypeError) as e:
        ptoc.Tensor([4, 8], bad)
    assert isinstance(e.value, TypeError) and isinstance(e.value, ptoc.Error)
    assert "DT_FP32" in str(e.value)  # lists the valid ones


def test_cast_accepts_dtype_spellings(rng):
    x = rng.standard_normal((32, 64)).astype(F32)
    a, b, c = run(lambda t: (ptoc.cast(t, "f16"), ptoc.cast(t, np.float16), t.astype("int32")), x)
    assert a.dtype == b.dtype == F16 and c.dtype == I32
    np.testing.assert_array_equal(a, x.astype(F16))
    np.testing.assert_array_equal(b, x.astype(F16))


# --- bf16 -----------------------------------------------------------------------------

def _bits(v):
    return np.array(v, dtype=np.uint32).view(np.float32)


def test_bf16_round_reference_itself():
    """The numpy emulation rounds to nearest, ties to even, on the bit pattern."""
    tie_down = _bits(0x3F808000)   # halfway between 0x3F80 (even) and 0x3F81
    tie_up = _bits(0x3F818000)     # halfway between 0x3F81 and 0x3F82 (even)
    above = _bits(0x3F808001)
    got = bf16_round(np.array([tie_down, tie_up, above], np.float32)).view(np.uint32)
    assert list(got) == [0x3F800000, 0x3F820000, 0x3F810000]


def test_bf16_parameter_rounds_nearest_even_on_the_way_in(rng):
    x = rng.standard_normal((32, 64)).astype(F32)
    x[0, :6] = [_bits(0x3F808000), _bits(0x3F818000), _bits(0x3F808001), _bits(0xBF808000),
                _bits(0xBF818000), 1.0 + 2.0 ** -9]
    x[1, :4] = [np.inf, -np.inf, np.float32(3.4e38), 1e-40]  # 3.4e38 rounds past bf16's max
    f = kernel(lambda a: a * 2.0, 1, tile=(32, 64), annotations=[tensor(x.shape, BF16)])
    got = f(x)
    assert got.dtype == F32  # widened back to float32
    # Doubling is exact in bf16: the result is the rounded input, times 2.
    want = bf16_round(x) * 2
    np.testing.assert_array_equal(got, want)
    assert got[0, 0] == 2.0 and got[0, 1] == 2 * _bits(0x3F820000)
    assert np.isinf(got[1, 2])
    assert np.all(got.view(np.uint32) & 0xFFFF == 0)  # every value is a bf16 value


def test_bf16_nan_stays_nan():
    x = np.zeros((32, 64), F32)
    x[0, 0] = np.nan
    f = kernel(lambda a: a + 1.0, 1, tile=(32, 64), annotations=[tensor(x.shape, BF16)])
    got = f(x)
    assert np.isnan(got[0, 0]) and np.all(got.ravel()[1:] == 1.0)


def test_bf16_arithmetic_rounds_each_result(rng):
    """bf16 + bf16 is computed in f32 and rounded to bf16 (nearest-even)."""
    x = rng.standard_normal((100, 200)).astype(F32)
    y = rng.standard_normal((100, 200)).astype(F32)
    f = kernel(lambda a, b: (a + b, a * b), 2, tile=(32, 64),
               annotations=[tensor(x.shape, BF16), tensor(y.shape, BF16)])
    s, p = f(x, y)
    bx, by = bf16_round(x), bf16_round(y)
    np.testing.assert_array_equal(s, bf16_round(bx + by))
    np.testing.assert_array_equal(p, bf16_round(bx * by))


def test_bf16_unary_and_reduction(rng):
    x = rng.standard_normal((100, 200)).astype(F32)
    f = kernel(lambda a: (ptoc.exp(a), ptoc.amax(a, dim=-1)), 1, tile=(32, 64),
               annotations=[tensor(x.shape, BF16)])
    e, m = f(x)
    bx = bf16_round(x)
    assert e.dtype == m.dtype == F32
    assert_close(e, np.exp(bx.astype(np.float64)), "bf16")
    np.testing.assert_array_equal(m, bx.max(-1))  # max of bf16 values is exact


def test_bf16_mixed_with_f32_promotes_to_f32(rng):
    x = rng.standard_normal((32, 64)).astype(F32)
    y = rng.standard_normal((32, 64)).astype(F32)
    f = kernel(lambda a, b: a + b, 2, tile=(32, 64), annotations=[tensor(x.shape, BF16), None])
    got = f(x, y)
    # Only the bf16 operand was rounded; the f32 sum is exact to f32.
    assert_close(got, bf16_round(x) + y)
    assert not np.all(got.view(np.uint32) & 0xFFFF == 0)


def test_bf16_output_parameter(rng):
    """A bf16 output takes a float32 array; written values are rounded to bf16 and
    the unwritten part keeps the caller's values (as bf16: they came in rounded)."""
    x = rng.standard_normal((100, 200)).astype(F32)
    y = rng.standard_normal((100, 200)).astype(F32)
    original = y.copy()

    @ptoc.jit(device=TINY)
    def f(x, y: ptoc.Tensor([100, 200], ptoc.DT_BF16)):
        ptoc.set_vec_tile_shapes(32, 64)
        y[0:50, :] = x[0:50, :] * 3.0

    assert f(x, y) is None
    assert y.dtype == F32
    np.testing.assert_array_equal(y[:50], bf16_round(x[:50] * 3))
    np.testing.assert_array_equal(y[50:], bf16_round(original[50:]))


def test_bf16_matmul(rng):
    a = rng.standard_normal((100, 72)).astype(F32)
    b = rng.standard_normal((72, 50)).astype(F32)
    f = kernel(lambda p, q: (p @ q, ptoc.matmul(p, q, out_dtype=ptoc.DT_FP32)), 2, cube=TINY_CUBE,
               annotations=[tensor(a.shape, BF16), tensor(b.shape, BF16)])
    got_bf16, got_f32 = f(a, b)
    want = bf16_round(a).astype(np.float64) @ bf16_round(b).astype(np.float64)
    # f32 accumulation of bf16 products (exact), then one rounding to the result.
    assert_close(got_f32, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())
    np.testing.assert_array_equal(got_bf16, bf16_round(got_f32))


def test_cast_to_and_from_bf16(rng):
    x = rng.standard_normal((32, 64)).astype(F32)
    h = rng.standard_normal((32, 64)).astype(F16)

    def expr(a, b):
        return ptoc.cast(a, BF16), ptoc.cast(b, BF16), ptoc.cast(ptoc.cast(a, BF16), ptoc.DT_FP16)

    xb, hb, back = run(expr, x, h)
    np.testing.assert_array_equal(xb, bf16_round(x))
    np.testing.assert_array_equal(hb, bf16_round(h.astype(F32)))
    np.testing.assert_array_equal(back, bf16_round(x).astype(F16))


# --- f16 and integer arrays -----------------------------------------------------------

def test_f16_arrays(rng):
    x = rng.standard_normal((100, 200)).astype(F16)
    y = rng.standard_normal((100, 200)).astype(F16)
    got = run(lambda a, b: a * b + 1.0, x, y)
    assert got.dtype == F16
    assert_close(got, (x.astype(F32) * y.astype(F32)).astype(F16) + F16(1))


def test_annotated_f16(rng):
    x = rng.standard_normal((32, 64)).astype(F16)
    f = kernel(lambda a: ptoc.sqrt(ptoc.abs(a)), 1, tile=(32, 64),
               annotations=[tensor(x.shape, ptoc.DT_FP16)])
    got = f(x)
    assert got.dtype == F16
    assert_close(got, np.sqrt(np.abs(x.astype(F32))).astype(F16))


@pytest.mark.parametrize("dtype,ptoc_dtype", [(I8, ptoc.DT_INT8), (I32, ptoc.DT_INT32)],
                         ids=["i8", "i32"])
def test_int_arrays(rng, dtype, ptoc_dtype):
    x = rng.integers(-60, 60, (100, 200)).astype(dtype)
    y = rng.integers(-60, 60, (100, 200)).astype(dtype)
    f = kernel(lambda a, b: (a + b, ptoc.maximum(a, b), ptoc.amin(a, dim=-1)), 2, tile=(8, 256),
               annotations=[tensor(x.shape, ptoc_dtype), tensor(y.shape, ptoc_dtype)])
    s, m, lo = f(x, y)
    assert s.dtype == m.dtype == lo.dtype == dtype
    np.testing.assert_array_equal(s, (x.astype(np.int64) + y).astype(dtype))
    np.testing.assert_array_equal(m, np.maximum(x, y))
    np.testing.assert_array_equal(lo, x.min(-1))


# --- wrong dtypes ---------------------------------------------------------------------

@pytest.mark.parametrize("ann,arr,hint", [
    (ptoc.DT_FP16, F32, "float16"),
    (ptoc.DT_FP32, F16, "float32"),
    (ptoc.DT_BF16, F16, "float32"),      # bf16 takes float32 arrays
    (ptoc.DT_BF16, np.float64, "float32"),
    (ptoc.DT_INT8, I32, "int8"),
    (ptoc.DT_INT32, np.int64, "int32"),
], ids=["f16<-f32", "f32<-f16", "bf16<-f16", "bf16<-f64", "i8<-i32", "i32<-i64"])
def test_wrong_array_dtype_for_annotated_parameter(ann, arr, hint):
    @ptoc.jit(device=TINY)
    def f(x, weights: ptoc.Tensor([32, 64], ann)):
        ptoc.set_vec_tile_shapes(32, 64)
        return x + weights

    x = np.zeros((32, 64), F32)
    with pytest.raises(ptoc.DTypeError) as e:
        f(x, np.zeros((32, 64), arr))
    assert isinstance(e.value, TypeError) and isinstance(e.value, ptoc.Error)
    msg = str(e.value)
    assert "'weights'" in msg  # names the parameter
    assert hint in msg and np.dtype(arr).name in msg  # what it wants and what it got
    assert f.cache_info().currsize == 0


@pytest.mark.parametrize("arr", [np.float64, np.complex64, np.longdouble])
def test_unsupported_array_dtype_without_annotation(arr):
    @ptoc.jit(device=TINY)
    def f(x):
        ptoc.set_vec_tile_shapes(32, 64)
        return x * 2

    with pytest.raises(ptoc.DTypeError) as e:
        f(np.zeros((32, 64), arr))
    assert isinstance(e.value, TypeError)
    msg = str(e.value)
    assert "'x'" in msg and np.dtype(arr).name in msg and "float32" in msg


def test_non_array_for_annotated_parameter():
    @ptoc.jit(device=TINY)
    def f(x: ptoc.Tensor([32, 64], ptoc.DT_FP32)):
        ptoc.set_vec_tile_shapes(32, 64)
        return x * 2.0

    with pytest.raises(ptoc.DTypeError) as e:
        f([[1.0] * 64] * 32)
    assert "'x'" in str(e.value) and "numpy array" in str(e.value)
