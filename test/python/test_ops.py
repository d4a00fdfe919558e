"""Every ptoc op against numpy: several shapes (aligned, tails, tile larger than the
tensor, rank 3), numpy broadcasting (row, column, 1-D, scalar) and the dtypes each op
supports (f32, f16, bf16 where it is special, i32/i8 for the integer ops). Most run
on the small "tiny" device with tiles that fit it; a few on "a2"."""

import numpy as np
import pytest

import ptoc
from conftest import (A2, A2_CUBE, A2_VEC_TILE, F16, F32, I8, I32, TINY_CUBE, assert_close,
                      bf16_round, gelu_ref, in_dtype, run, sigmoid_ref)

# (x shape, y shape or None for a Python scalar); tiles: TINY_VEC_TILES by rank,
# (32, 64) for rank 2, so 100x200 has tails in both dimensions.
BINARY_SHAPES = [
    pytest.param((64, 128), (64, 128), id="aligned"),
    pytest.param((100, 200), (100, 200), id="tails"),
    pytest.param((7, 40), (7, 40), id="smaller-than-tile"),
    pytest.param((100, 200), (1, 200), id="row-vector"),
    pytest.param((100, 200), (100, 1), id="column-vector"),
    pytest.param((100, 200), (200,), id="1d-row"),
    pytest.param((1, 200), (100, 1), id="outer"),
    pytest.param((100, 200), None, id="scalar"),
    pytest.param((3, 20, 72), (20, 1), id="rank3-broadcast"),
]

SCALAR = 0.75


def _operands(rng, op, shape, dtype):
    """Inputs in the op's domain: pow takes positive bases and small exponents, div
    divisors away from zero."""
    if shape is None:
        return None
    if op == "pow":
        return rng.uniform(0.5, 2.0, shape).astype(dtype)
    return (rng.standard_normal(shape) * 2).astype(dtype)


def _divisor(rng, shape, dtype):
    sign = np.where(rng.random(shape) < 0.5, -1.0, 1.0)
    return (sign * rng.uniform(0.5, 2.0, shape)).astype(dtype)


BINARY_FLOAT = {
    "add": (ptoc.add, np.add),
    "sub": (ptoc.sub, np.subtract),
    "mul": (ptoc.mul, np.multiply),
    "div": (ptoc.div, np.divide),
    "maximum": (ptoc.maximum, np.maximum),
    "minimum": (ptoc.minimum, np.minimum),
    "pow": (ptoc.pow, np.power),
}


@pytest.mark.parametrize("dtype", [F32, F16], ids=["f32", "f16"])
@pytest.mark.parametrize("xshape,yshape", BINARY_SHAPES)
@pytest.mark.parametrize("name", list(BINARY_FLOAT))
def test_binary_float(rng, name, xshape, yshape, dtype):
    op, ref = BINARY_FLOAT[name]
    x = _operands(rng, name, xshape, dtype)
    if yshape is None:
        got = run(lambda a: op(a, SCALAR), x)
        want = ref(x.astype(F32), F32(SCALAR))
    else:
        if name == "div":
            y = _divisor(rng, yshape, dtype)
        elif name == "pow":
            y = rng.uniform(-2.0, 2.0, yshape).astype(dtype)
        else:
            y = _operands(rng, name, yshape, dtype)
        got = run(op, x, y)
        want = ref(x.astype(F32), y.astype(F32))
    assert got.dtype == dtype
    assert_close(got, in_dtype(want, dtype))


@pytest.mark.parametrize("name", list(BINARY_FLOAT))
def test_binary_reflected_scalar(rng, name):
    """A scalar on the left (ptoc.sub(2.0, x)) takes the tensor's dtype."""
    op, ref = BINARY_FLOAT[name]
    x = (rng.uniform(0.5, 2.0, (100, 200)) * np.where(rng.random((100, 200)) < 0.5, -1, 1))
    if name == "pow":
        x = np.abs(x)
    x = x.astype(F32)
    got = run(lambda a: op(2.0, a), x)
    assert got.dtype == F32
    assert_close(got, ref(F32(2.0), x))


def test_operators(rng):
    x = rng.uniform(0.5, 2.0, (100, 200)).astype(F32)
    y = rng.uniform(0.5, 2.0, (100, 200)).astype(F32)

    def expr(a, b):
        return (a + b, a - b, a * b, a / b, a ** b, -a, abs(a - 1.0), +a * 1.5)

    got = run(expr, x, y)
    want = (x + y, x - y, x * y, x / y, x ** y, -x, np.abs(x - 1), x * 1.5)
    assert isinstance(got, tuple) and len(got) == len(want)
    for g, w in zip(got, want):
        assert_close(g, w)


def test_reflected_scalar_operators(rng):
    x = rng.uniform(0.5, 2.0, (100, 200)).astype(F32)

    def expr(a):
        return (2.0 - a, 2.0 + a, 3.0 * a, 2.0 / a, 2.0 ** a, a - 2.0, a / 4.0, a ** 2)

    got = run(expr, x)
    want = (2 - x, 2 + x, 3 * x, 2 / x, np.power(F32(2), x), x - 2, x / 4, x ** 2)
    for g, w in zip(got, want):
        assert_close(g, w)


def test_tensor_methods(rng):
    x = rng.uniform(0.5, 2.0, (64, 128)).astype(F32)
    y = rng.uniform(0.5, 2.0, (64, 128)).astype(F32)

    def expr(a, b):
        return (a.add(b), a.sub(b), a.mul(b), a.div(b), a.maximum(b), a.minimum(b), a.pow(b),
                a.exp(), a.log(), a.sqrt(), a.rsqrt(), a.neg(), a.abs(), a.relu(),
                a.reciprocal(), a.tanh(), a.sigmoid())

    got = run(expr, x, y)
    want = (x + y, x - y, x * y, x / y, np.maximum(x, y), np.minimum(x, y), x ** y, np.exp(x),
            np.log(x), np.sqrt(x), 1 / np.sqrt(x), -x, x, x, 1 / x, np.tanh(x), sigmoid_ref(x))
    for g, w in zip(got, want):
        assert_close(g, w)


def test_mixed_dtypes_promote_like_numpy(rng):
    h = rng.standard_normal((32, 64)).astype(F16)
    f = rng.standard_normal((32, 64)).astype(F32)
    i = rng.integers(-100, 100, (32, 64)).astype(I32)
    b = rng.integers(-100, 100, (32, 64)).astype(I8)
    hf, fi, bi = run(lambda p, q, r, s: (p + q, q * r, s + r), h, f, i, b)
    assert hf.dtype == F32 and fi.dtype == F32 and bi.dtype == I32
    assert_close(hf, h.astype(F32) + f)
    assert_close(fi, f * i.astype(F32))
    assert_close(bi, b.astype(I32) + i)


# --- integers ---------------------------------------------------------------------

def _saturate(v, dtype):
    info = np.iinfo(dtype)
    return np.clip(v, info.min, info.max).astype(dtype)


INT_BINARY = {
    "add": (ptoc.add, lambda a, b: a + b),
    "sub": (ptoc.sub, lambda a, b: a - b),
    "mul": (ptoc.mul, lambda a, b: a * b),
    "maximum": (ptoc.maximum, np.maximum),
    "minimum": (ptoc.minimum, np.minimum),
    # Integer division truncates toward zero (C semantics, not numpy's floor).
    "div": (ptoc.div, lambda a, b: np.trunc(a / b).astype(np.int64)),
}
INT_SHAPES = [
    pytest.param((100, 200), (100, 200), id="tails"),
    pytest.param((100, 200), (1, 200), id="row-vector"),
    pytest.param((100, 200), (100, 1), id="column-vector"),
    pytest.param((100, 200), None, id="scalar"),
]


@pytest.mark.parametrize("dtype", [I32, I8], ids=["i32", "i8"])
@pytest.mark.parametrize("xshape,yshape", INT_SHAPES)
@pytest.mark.parametrize("name", list(INT_BINARY))
def test_binary_int(rng, name, xshape, yshape, dtype):
    """Integer arithmetic is exact and saturates at the dtype's range (int8 sums
    overflow here)."""
    op, ref = INT_BINARY[name]
    lim = 127 if dtype == I8 else 100000
    x = rng.integers(-lim, lim + 1, xshape).astype(dtype)
    if name == "div":
        x[x == 0] = 5  # also a divisor in the reflected form
    if yshape is None:
        got, reflected = run(lambda a: (op(a, 3), op(3, a)), x)
        assert reflected.dtype == dtype
        assert_close(reflected, _saturate(ref(np.int64(3), x.astype(np.int64)), dtype))
        y64 = np.int64(3)
    else:
        y = rng.integers(-lim, lim + 1, yshape).astype(dtype)
        if name == "div":
            y[y == 0] = 7
        got = run(op, x, y)
        y64 = y.astype(np.int64)
    assert got.dtype == dtype
    assert_close(got, _saturate(ref(x.astype(np.int64), y64), dtype))


@pytest.mark.parametrize("dtype", [I32, I8], ids=["i32", "i8"])
def test_unary_int(rng, dtype):
    """neg / abs saturate (-(-128) is 127 in int8); relu keeps positives."""
    info = np.iinfo(dtype)
    x = rng.integers(-100, 100, (100, 200)).astype(dtype)
    x[0, :4] = [info.min, info.max, 0, -1]
    neg, ab, re = run(lambda a: (-a, ptoc.abs(a), ptoc.relu(a)), x)
    x64 = x.astype(np.int64)
    assert neg.dtype == ab.dtype == re.dtype == dtype
    assert_close(neg, _saturate(-x64, dtype))
    assert_close(ab, _saturate(np.abs(x64), dtype))
    assert_close(re, np.maximum(x, 0))


def test_float_scalar_with_int_tensor_computes_in_f32():
    """As in numpy, a float scalar makes int arithmetic float: i32 * 2.5 is f32."""
    x = np.arange(32 * 64, dtype=I32).reshape(32, 64) - 1000
    out = run(lambda a: a * 2.5, x)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, x.astype(np.float32) * np.float32(2.5))
    # An int scalar keeps the tensor's dtype.
    assert run(lambda a: a * 3, x).dtype == I32


# --- unary float ------------------------------------------------------------------

POSITIVE_DOMAIN = {"log", "sqrt", "rsqrt", "reciprocal"}
UNARY_FLOAT = {
    "neg": lambda x: -x,
    "exp": np.exp,
    "log": np.log,
    "sqrt": np.sqrt,
    "rsqrt": lambda x: 1.0 / np.sqrt(x),
    "abs": np.abs,
    "relu": lambda x: np.maximum(x, 0.0),
    "sigmoid": sigmoid_ref,
    "tanh": np.tanh,
    "gelu": gelu_ref,
    "reciprocal": lambda x: 1.0 / x,
}
UNARY_SHAPES = [
    pytest.param((64, 128), id="aligned"),
    pytest.param((100, 200), id="tails"),
    pytest.param((7, 40), id="smaller-than-tile"),
    pytest.param((3, 20, 72), id="rank3"),
    pytest.param((2500,), id="rank1-tail"),
]


@pytest.mark.parametrize("dtype", [F32, F16], ids=["f32", "f16"])
@pytest.mark.parametrize("shape", UNARY_SHAPES)
@pytest.mark.parametrize("name", list(UNARY_FLOAT))
def test_unary_float(rng, name, shape, dtype):
    if name in POSITIVE_DOMAIN:
        x = rng.uniform(0.1, 4.0, shape).astype(dtype)
    else:
        x = (rng.standard_normal(shape) * 2).astype(dtype)
    got = run(getattr(ptoc, name), x)
    assert got.dtype == dtype
    assert_close(got, in_dtype(UNARY_FLOAT[name](x.astype(np.float64)), dtype))


def test_gelu_is_the_erf_form():
    """gelu is 0.5 x (1 + erf(x / sqrt 2)) (lib/ir/OpRegistry.cpp), not the tanh
    approximation: at x = -3 they differ by 10% relative, far above f32 error;
    the negative tail keeps its relative accuracy."""
    x = np.linspace(-6.0, 3.0, 32 * 64, dtype=F32).reshape(32, 64)
    got = run(ptoc.gelu, x)
    assert_close(got, gelu_ref(x), rtol=1e-5, atol=1e-12)
    x64 = x.astype(np.float64)
    tanh_form = 0.5 * x64 * (1 + np.tanh(np.sqrt(2 / np.pi) * (x64 + 0.044715 * x64 ** 3)))
    assert not np.allclose(got, tanh_form, rtol=1e-4, atol=0)


# --- cast -------------------------------------------------------------------------

def test_cast_float_to_int_truncates_and_saturates():
    x = np.zeros((32, 64), F32)
    x[0, :8] = [3.7, -3.7, 0.5, -0.5, 1e10, -1e10, 126.9, 300.0]
    x[1, :2] = [np.nan, 2.0]
    i32, i8 = run(lambda a: (ptoc.cast(a, ptoc.DT_INT32), a.astype(ptoc.DT_INT8)), x)
    assert i32.dtype == I32 and i8.dtype == I8
    want32 = np.zeros((32, 64), I32)
    want32[0, :8] = [3, -3, 0, 0, 2**31 - 1, -2**31, 126, 300]
    want32[1, :2] = [0, 2]
    assert_close(i32, want32)
    assert_close(i8, np.clip(want32, -128, 127).astype(I8))


@pytest.mark.parametrize("src,dst,ptoc_dst", [
    (F32, F16, ptoc.DT_FP16), (F16, F32, ptoc.DT_FP32), (I32, F32, ptoc.DT_FP32),
    (I8, F16, ptoc.DT_FP16), (I32, I8, ptoc.DT_INT8), (I8, I32, ptoc.DT_INT32),
    (F16, I32, ptoc.DT_INT32),
], ids=lambda v: getattr(v, "__name__", repr(v)))
def test_cast(rng, src, dst, ptoc_dst):
    """Float casts round to nearest-even (numpy's astype), int casts saturate."""
    if np.dtype(src).kind == "f":
        x = (rng.standard_normal((100, 200)) * 50).astype(src)
    else:
        x = rng.integers(-300, 300, (100, 200)).astype(src) if src == I32 else \
            rng.integers(-128, 128, (100, 200)).astype(src)
    got = run(lambda a: ptoc.cast(a, ptoc_dst), x)
    assert got.dtype == dst
    if np.dtype(dst).kind == "i":
        src64 = np.trunc(x.astype(np.float64)) if np.dtype(src).kind == "f" else x.astype(np.int64)
        want = _saturate(src64, dst)
    else:
        want = x.astype(dst)
    np.testing.assert_array_equal(got, want)


def test_cast_to_bf16_rounds_nearest_even(rng):
    x = rng.standard_normal((100, 200)).astype(F32)
    got = run(lambda a: ptoc.cast(a, ptoc.DT_BF16) * 2.0, x)
    assert got.dtype == F32  # bf16 results come back widened to float32
    np.testing.assert_array_equal(got, bf16_round(x) * 2)


# --- reductions -------------------------------------------------------------------

REDUCTIONS = {"sum": np.sum, "amax": np.max, "amin": np.min, "mean": np.mean}
REDUCE_DIMS_2D = [None, 0, 1, -1, -2, (0, 1), (1, 0)]
REDUCE_DIMS_3D = [None, 1, -1, (0, 2), (0, 1)]


def _reduce_input(rng, name, shape, dtype=F32):
    # Sums of positive values: no cancellation, so a relative tolerance holds.
    if name in ("sum", "mean"):
        return rng.uniform(0.5, 1.5, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def _np_dim(dim):
    return tuple(dim) if isinstance(dim, tuple) else dim


@pytest.mark.parametrize("keepdim", [True, False], ids=["keepdim", "dropdim"])
@pytest.mark.parametrize("dim", REDUCE_DIMS_2D, ids=repr)
@pytest.mark.parametrize("name", list(REDUCTIONS))
def test_reduce_2d_split_tiles(rng, name, dim, keepdim):
    """100x200 with 32x64 tiles: every reduced axis is split over several tiles with
    tails, so the cross-tile combine is exercised."""
    x = _reduce_input(rng, name, (100, 200))
    got = run(lambda a: getattr(ptoc, name)(a, dim=dim, keepdim=keepdim), x)
    want = REDUCTIONS[name](x.astype(np.float64), axis=_np_dim(dim), keepdims=keepdim)
    assert_close(got, np.asarray(want), F32, rtol=2e-5)


@pytest.mark.parametrize("keepdim", [True, False], ids=["keepdim", "dropdim"])
@pytest.mark.parametrize("dim", REDUCE_DIMS_3D, ids=repr)
@pytest.mark.parametrize("name", list(REDUCTIONS))
def test_reduce_3d(rng, name, dim, keepdim):
    x = _reduce_input(rng, name, (3, 20, 72))
    got = run(lambda a: getattr(ptoc, name)(a, dim=dim, keepdim=keepdim), x)
    want = REDUCTIONS[name](x.astype(np.float64), axis=_np_dim(dim), keepdims=keepdim)
    assert_close(got, np.asarray(want), F32, rtol=2e-5)


@pytest.mark.parametrize("name", list(REDUCTIONS))
def test_reduce_whole_rows_method_form(rng, name):
    """The recommended tiling (reduced axis not split: 8 x 200 tiles) and the method
    form x.sum(...)."""
    x = _reduce_input(rng, name, (100, 200))
    got = run(lambda a: getattr(a, name)(dim=-1, keepdim=True), x, tile=(8, 200))
    assert_close(got, REDUCTIONS[name](x, axis=-1, keepdims=True), F32, rtol=2e-5)


@pytest.mark.parametrize("dtype", [F16, I32, I8], ids=["f16", "i32", "i8"])
@pytest.mark.parametrize("name", ["sum", "amax", "amin"])
def test_reduce_dtypes(rng, name, dtype):
    if np.dtype(dtype).kind == "i":
        x = rng.integers(-3, 4, (100, 200)).astype(dtype)  # int8 sums of 200 stay in range
    else:
        x = _reduce_input(rng, name, (100, 200), dtype)
    got = run(lambda a: getattr(ptoc, name)(a, dim=-1), x)
    assert got.dtype == dtype
    want = REDUCTIONS[name](x.astype(np.float64), axis=-1)
    if dtype == F16:
        # Partial sums round to f16 per tile: a few f16 ulps over 200 elements.
        assert_close(got, want, F16, rtol=5e-3)
    else:
        assert_close(got, want.astype(dtype))


def test_mean_f16(rng):
    x = rng.uniform(0.5, 1.5, (100, 200)).astype(F16)
    got = run(lambda a: ptoc.mean(a, dim=(0, 1), keepdim=True), x)
    assert got.dtype == F16 and got.shape == (1, 1)
    assert_close(got, x.astype(np.float64).mean(keepdims=True), F16, rtol=5e-3)


@pytest.mark.xfail(strict=True, raises=ptoc.TileShapeError, reason=(
    "codegen: a split reduction (here amin over dim 0; dim -1 likewise) whose input tiles "
    "also feed elementwise ops becomes one subgraph holding a whole band of tiles at once: "
    "57344 bytes of UB on tiny with 32x64 tiles, still 51456 with 1x64 tiles, 2 MB on a2 "
    "(1000x2000, 64x256); the error's advice (a smaller tile) does not help; "
    "fuse_local=False compiles"))
def test_column_reduction_sharing_its_input(rng):
    x = rng.standard_normal((100, 200)).astype(F32)
    y = rng.standard_normal((100, 200)).astype(F32)
    s, m, lo = run(lambda a, b: (a + b, ptoc.maximum(a, b), ptoc.amin(a, dim=0)), x, y,
                   tile=(8, 64))
    assert_close(s, x + y)
    assert_close(m, np.maximum(x, y))
    assert_close(lo, x.min(0))


def test_softmax_composite(rng):
    x = (rng.standard_normal((100, 200)) * 3).astype(F32)

    def softmax(a):
        e = ptoc.exp(a - ptoc.amax(a, dim=-1, keepdim=True))
        return e / ptoc.sum(e, dim=-1, keepdim=True)

    ref = np.exp(x - x.max(-1, keepdims=True))
    assert_close(run(softmax, x), ref / ref.sum(-1, keepdims=True))


# --- reshape / transpose / slices / concat / full ----------------------------------

@pytest.mark.parametrize("shape,new,tile", [
    ((100, 200), (200, -1), (32, 64)),
    ((100, 200), (-1,), (1024,)),
    ((4, 30, 64), (120, 64), (32, 64)),
    ((120, 64), (4, -1, 64), (2, 16, 64)),
    ((100, 200), (10, 10, 200), (2, 16, 64)),
])
def test_reshape(rng, shape, new, tile):
    """A reshape takes the tile of its result's rank; the result is computed on and
    returned."""
    x = rng.standard_normal(shape).astype(F32)

    def expr(a):
        r = ptoc.reshape(a, new)
        return r * 2.0, a.reshape(new) + 1.0

    doubled, plus_one = run(expr, x, tile=tile)
    assert_close(doubled, x.reshape(new) * 2)
    assert_close(plus_one, x.reshape(new) + 1)


def test_reshape_returned_directly(rng):
    x = rng.standard_normal((100, 200)).astype(F32)
    got = run(lambda a: ptoc.reshape(a * 3.0, (-1, 100)), x)
    assert_close(got, (x * 3).reshape(-1, 100))


@pytest.mark.parametrize("shape,dims,tile", [
    ((100, 200), (0, 1), (32, 64)),
    ((64, 96), (-1, -2), (32, 32)),
    ((3, 40, 72), (0, 2), (8, 8, 8)),
    ((3, 40, 72), (1, 2), (1, 16, 32)),
])
def test_transpose(rng, shape, dims, tile):
    x = rng.standard_normal(shape).astype(F32)
    got = run(lambda a: ptoc.transpose(a, *dims) + 1.0, x, tile=tile)
    assert_close(got, np.swapaxes(x, *dims) + 1)


def test_transpose_property_and_method(rng):
    x = rng.standard_normal((64, 96)).astype(F32)
    t1, t2 = run(lambda a: (a.T * 1.5, a.transpose(0, 1) - 1.0), x, tile=(32, 32))
    assert_close(t1, x.T * 1.5)
    assert_close(t2, x.T - 1)


@pytest.mark.parametrize("key", [
    np.s_[10:50, :], np.s_[:, 64:192], np.s_[3:97, 5:190], np.s_[-40:, -64:],
    np.s_[90:, :], np.s_[..., 0:100],
], ids=["rows", "cols", "inner-tails", "negative", "last-rows", "ellipsis"])
def test_slice_views(rng, key):
    x = rng.standard_normal((100, 200)).astype(F32)
    got = run(lambda a: ptoc.exp(a[key]), x)
    assert_close(got, np.exp(x[key]))


def test_slices_combined(rng):
    """Two overlapping views of one input combined (each reads its own region)."""
    x = rng.standard_normal((100, 200)).astype(F32)
    got = run(lambda a: a[0:60, :] - a[40:100, :], x)
    assert_close(got, x[0:60] - x[40:100])


@pytest.mark.parametrize("dim,shapes", [
    (0, [(30, 128), (70, 128)]),
    (1, [(100, 64), (100, 136)]),
    (-1, [(40, 64), (40, 32), (40, 96)]),
    (1, [(2, 10, 64), (2, 30, 64)]),
], ids=["rows", "cols-tail", "three", "rank3"])
def test_concat(rng, dim, shapes):
    xs = [rng.standard_normal(s).astype(F32) for s in shapes]
    got = run(lambda *ts: ptoc.concat([t * 2.0 for t in ts], dim), *xs)
    assert_close(got, np.concatenate([x * 2 for x in xs], axis=dim))


def test_concat_promotes(rng):
    h = rng.standard_normal((32, 64)).astype(F16)
    f = rng.standard_normal((32, 64)).astype(F32)
    got = run(lambda a, b: ptoc.concat([a, b], 0), h, f)
    assert got.dtype == F32
    assert_close(got, np.concatenate([h.astype(F32), f]))


def test_full(rng):
    x = rng.standard_normal((100, 200)).astype(F32)

    def expr(a):
        return (a + ptoc.full([100, 200], 3.5), ptoc.full([1, 200], -2.0) * a,
                ptoc.full((100, 200), 7, ptoc.DT_INT32) + ptoc.cast(a, ptoc.DT_INT32),
                ptoc.full([100, 200], 0.1, ptoc.DT_FP16))

    f1, f2, f3, f4 = run(expr, x)
    assert_close(f1, x + 3.5)
    assert_close(f2, -2 * x)
    assert f3.dtype == I32
    assert_close(f3, np.trunc(x).astype(I32) + 7)
    assert f4.dtype == F16 and np.all(f4 == F16(0.1))


# --- matmul -----------------------------------------------------------------------

MATMUL_SHAPES = [
    pytest.param((64, 64, 64), id="aligned"),
    pytest.param((100, 72, 50), id="tails"),
    pytest.param((40, 200, 72), id="long-k"),
    pytest.param((33, 17, 15), id="odd"),
]


def _mm_inputs(rng, m, k, n, dtype):
    if dtype == I8:
        return (rng.integers(-128, 128, (m, k)).astype(I8),
                rng.integers(-128, 128, (k, n)).astype(I8))
    return (rng.standard_normal((m, k)).astype(dtype), rng.standard_normal((k, n)).astype(dtype))


def _mm_ref(a, b):
    return a.astype(np.float64) @ b.astype(np.float64)


@pytest.mark.parametrize("dtype", [F32, F16, I8], ids=["f32", "f16", "i8"])
@pytest.mark.parametrize("mkn", MATMUL_SHAPES)
def test_matmul(rng, mkn, dtype):
    a, b = _mm_inputs(rng, *mkn, dtype)
    got = run(ptoc.matmul, a, b, tile=None, cube=TINY_CUBE)
    want = _mm_ref(a, b)
    if dtype == I8:
        assert got.dtype == I32  # i8 accumulates in and returns i32
        np.testing.assert_array_equal(got, want.astype(I32))
    elif dtype == F16:
        assert got.dtype == F16
        # f32 accumulation, one rounding to f16 at the end.
        assert_close(got, want, atol=1e-2 * np.abs(want).max(), rtol=2e-3)
    else:
        assert got.dtype == F32
        assert_close(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


@pytest.mark.parametrize("a_trans", [False, True])
@pytest.mark.parametrize("b_trans", [False, True])
def test_matmul_transposed(rng, a_trans, b_trans):
    m, k, n = 100, 72, 50
    a = rng.standard_normal((k, m) if a_trans else (m, k)).astype(F32)
    b = rng.standard_normal((n, k) if b_trans else (k, n)).astype(F32)
    got = run(lambda p, q: ptoc.matmul(p, q, a_trans=a_trans, b_trans=b_trans), a, b,
              tile=None, cube=TINY_CUBE)
    want = _mm_ref(a.T if a_trans else a, b.T if b_trans else b)
    assert got.shape == (m, n)
    assert_close(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


@pytest.mark.parametrize("src,out,ptoc_out", [(F16, F32, ptoc.DT_FP32), (F32, F16, ptoc.DT_FP16)],
                         ids=["f16->f32", "f32->f16"])
def test_matmul_out_dtype(rng, src, out, ptoc_out):
    a, b = _mm_inputs(rng, 100, 72, 50, src)
    got = run(lambda p, q: ptoc.matmul(p, q, out_dtype=ptoc_out), a, b, tile=None,
              cube=TINY_CUBE)
    assert got.dtype == out
    want = _mm_ref(a, b)
    if out == F32:  # f16 inputs, f32 accumulation and result: only input rounding
        assert_close(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())
    else:
        assert_close(got, want, F16, atol=1e-2 * np.abs(want).max())


def test_matmul_operator_and_method(rng):
    a, b = _mm_inputs(rng, 64, 96, 48, F32)
    p, q = run(lambda x, y: (x @ y, x.matmul(y)), a, b, tile=None, cube=TINY_CUBE)
    assert_close(p, _mm_ref(a, b), rtol=1e-5, atol=1e-4)
    np.testing.assert_array_equal(p, q)


def test_matmul_batched(rng):
    a = rng.standard_normal((2, 40, 48)).astype(F32)
    b = rng.standard_normal((48, 40)).astype(F32)
    c = rng.standard_normal((2, 40, 48)).astype(F32)
    got1, got2 = run(lambda x, y, z: (x @ y, ptoc.matmul(x, z, b_trans=True)), a, b, c,
                     tile=None, cube=TINY_CUBE)
    assert_close(got1, a @ b, rtol=1e-5, atol=1e-4)
    assert_close(got2, a @ np.swapaxes(c, 1, 2), rtol=1e-5, atol=1e-4)


def test_matmul_then_vector_ops(rng):
    """The cube result feeds vector ops (bias add with a row vector, relu)."""
    a, b = _mm_inputs(rng, 100, 72, 200, F32)
    bias = rng.standard_normal((1, 200)).astype(F32)
    got = run(lambda x, y, z: ptoc.relu(x @ y + z), a, b, bias, tile=(32, 64), cube=TINY_CUBE)
    assert_close(got, np.maximum(_mm_ref(a, b) + bias, 0), rtol=1e-5, atol=1e-4)


# --- the a2 device ----------------------------------------------------------------

def test_a2_elementwise_broadcast_tails(rng):
    x = rng.standard_normal((300, 1000)).astype(F32)
    row = rng.standard_normal((1000,)).astype(F32)
    col = rng.uniform(0.5, 2.0, (300, 1)).astype(F32)
    got = run(lambda a, r, c: ptoc.gelu(a * r) / c, x, row, col, device=A2)
    assert_close(got, gelu_ref(x * row) / col)


def test_a2_softmax_f16(rng):
    x = (rng.standard_normal((64, 1024)) * 2).astype(F16)

    def softmax(a):
        e = ptoc.exp(a - ptoc.amax(a, dim=-1, keepdim=True))
        return e / ptoc.sum(e, dim=-1, keepdim=True)

    got = run(softmax, x, tile=(8, 1024), device=A2)
    x64 = x.astype(np.float64)
    ref = np.exp(x64 - x64.max(-1, keepdims=True))
    assert got.dtype == F16
    assert_close(got, ref / ref.sum(-1, keepdims=True), F16, rtol=1e-2, atol=1e-4)


def test_a2_matmul_tails(rng):
    a, b = _mm_inputs(rng, 300, 520, 200, F16)
    got = run(lambda x, y: ptoc.matmul(x, y, out_dtype=ptoc.DT_FP32), a, b, tile=None,
              cube=A2_CUBE, device=A2)
    want = _mm_ref(a, b)
    assert_close(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


def test_a2_reduce_mean_columns(rng):
    x = rng.uniform(0.5, 1.5, (256, 1000)).astype(F32)
    got = run(lambda a: ptoc.mean(a, dim=0), x, tile=A2_VEC_TILE, device=A2)
    assert_close(got, x.astype(np.float64).mean(0), F32, rtol=2e-5)
