"""The integer and bool dtypes end to end (exact 64-bit values), comparisons and
logical ops (bool results), ptoc.where, and ptoc.cast's rounding and saturation
modes, each against numpy (or a Python-integer reference where numpy has no rule)."""

import math

import numpy as np
import pytest

import ptoc
from conftest import run as _run


def run(*args, **kwargs):
    """conftest.run with a vector tile that leaves room for 64-bit tiles on "tiny"."""
    kwargs.setdefault("tile", (16, 64))
    return _run(*args, **kwargs)

INT_TYPES = [(np.int8, ptoc.DT_INT8), (np.int16, ptoc.DT_INT16), (np.int32, ptoc.DT_INT32),
             (np.int64, ptoc.DT_INT64), (np.uint8, ptoc.DT_UINT8), (np.uint16, ptoc.DT_UINT16),
             (np.uint32, ptoc.DT_UINT32), (np.uint64, ptoc.DT_UINT64)]
ALL_TYPES = [(np.float32, ptoc.DT_FP32), (np.float16, ptoc.DT_FP16)] + INT_TYPES + [
    (np.bool_, ptoc.DT_BOOL)]
IDS = [np.dtype(n).name for n, _ in ALL_TYPES]
INT_IDS = [np.dtype(n).name for n, _ in INT_TYPES]


def sample(rng, npt, shape):
    """Values of numpy type `npt` that exercise its range (and ties for floats)."""
    if npt is np.bool_:
        return rng.integers(0, 2, shape).astype(np.bool_)
    if np.issubdtype(npt, np.floating):
        return (rng.integers(-12, 12, shape) / 4).astype(npt)
    info = np.iinfo(npt)
    lo, hi = builtins_max(info.min, -100), builtins_min(info.max, 100)
    return rng.integers(lo, hi + 1, shape, dtype=np.int64).astype(npt)


def builtins_max(a, b):
    return a if a > b else b


def builtins_min(a, b):
    return a if a < b else b


# --- dtypes ---------------------------------------------------------------------------

@pytest.mark.parametrize("npt,t", ALL_TYPES, ids=IDS)
def test_dtype_maps_to_numpy(npt, t):
    assert t.numpy == np.dtype(npt)
    assert ptoc.Tensor([2, 32], np.dtype(npt)).dtype is t
    assert ptoc.Tensor([2, 32], np.dtype(npt).name).dtype is t
    assert t.itemsize == np.dtype(npt).itemsize


@pytest.mark.parametrize("npt,t", INT_TYPES, ids=INT_IDS)
def test_integer_arithmetic_saturates_and_reduces(rng, npt, t):
    x, y = sample(rng, npt, (32, 64)), sample(rng, npt, (1, 64))
    s, m, lo, c = run(lambda a, b: (a + b, ptoc.maximum(a, b), ptoc.amin(a, dim=-1),
                                    ptoc.cast(a, ptoc.DT_FP32)), x, y)
    info = np.iinfo(npt)
    want = np.clip(x.astype(object) + y.astype(object), info.min, info.max).astype(npt)
    assert s.dtype == npt
    np.testing.assert_array_equal(s, want)
    np.testing.assert_array_equal(m, np.maximum(x, y))
    np.testing.assert_array_equal(lo, x.min(-1))
    np.testing.assert_array_equal(c, x.astype(np.float32))


@pytest.mark.parametrize("npt", [np.int64, np.uint64])
def test_64_bit_values_beyond_2_53_are_exact(npt):
    # Values a double cannot hold: the executor computes integers exactly.
    base = 2**62 + 1 if npt is np.int64 else 2**63 + 7
    x = (np.arange(64, dtype=object) * 3 + base).reshape(2, 32).astype(npt)
    y = np.full((2, 32), 5, npt)
    s, d, e, sat = run(lambda a, b: (a + b, a - b, ptoc.eq(a, a + b - b), a * b), x, y)
    np.testing.assert_array_equal(s, (x.astype(object) + 5).astype(npt))
    np.testing.assert_array_equal(d, (x.astype(object) - 5).astype(npt))
    assert e.all()
    np.testing.assert_array_equal(sat, np.full((2, 32), np.iinfo(npt).max, npt))


def test_bool_tensors_round_trip_and_cast(rng):
    x = rng.integers(0, 2, (32, 64)).astype(np.bool_)
    f = rng.standard_normal((32, 64)).astype(np.float32)
    f[0, :8] = [0.0, -0.0, 0.5, -2.0, np.nan, np.inf, 1e-30, 0.0]
    same, asint, fb = run(lambda a, b: (ptoc.logical_not(ptoc.logical_not(a)),
                                        ptoc.cast(a, ptoc.DT_INT32), ptoc.cast(b, ptoc.DT_BOOL)),
                          x, f)
    assert same.dtype == np.bool_
    np.testing.assert_array_equal(same, x)
    np.testing.assert_array_equal(asint, x.astype(np.int32))
    np.testing.assert_array_equal(fb, f.astype(np.bool_))  # nonzero (and NaN) is True


@pytest.mark.parametrize("npt", [np.uint16, np.uint32, np.uint64])
def test_torch_has_no_unsigned_wide_types(npt):
    from ptoc.arrays import _torch_name
    with pytest.raises(ptoc.DTypeError) as e:
        _torch_name(ptoc.dtypes.as_dtype(np.dtype(npt)))
    assert "torch has no dtype" in str(e.value) and "numpy" in str(e.value)


def test_unsigned_and_signed_64_have_no_common_type():
    @ptoc.jit(device="tiny")
    def f(a, b):
        ptoc.set_vec_tile_shapes(2, 32)
        return a + b

    with pytest.raises(ptoc.DTypeError) as e:
        f(np.zeros((2, 32), np.uint64), np.zeros((2, 32), np.int64))
    assert "no common integer type" in str(e.value) and "ptoc.cast" in str(e.value)


# --- comparisons ----------------------------------------------------------------------

COMPARES = [("eq", np.equal), ("ne", np.not_equal), ("lt", np.less), ("le", np.less_equal),
            ("gt", np.greater), ("ge", np.greater_equal)]


@pytest.mark.parametrize("npt,t", ALL_TYPES, ids=IDS)
@pytest.mark.parametrize("name,ref", COMPARES, ids=[c[0] for c in COMPARES])
def test_compare_tensor_tensor_broadcast(rng, npt, t, name, ref):
    x, y = sample(rng, npt, (32, 64)), sample(rng, npt, (1, 64))
    if np.issubdtype(npt, np.floating):
        x[0, :3] = [np.nan, np.inf, -0.0]
        y[0, :3] = [np.nan, np.inf, 0.0]
    (got,) = run(lambda a, b: (getattr(ptoc, name)(a, b),), x, y)
    assert got.dtype == np.bool_
    np.testing.assert_array_equal(got, ref(x, y))


@pytest.mark.parametrize("npt,t", [ALL_TYPES[0], ALL_TYPES[3], ALL_TYPES[6]],
                         ids=["float32", "int32", "uint8"])
def test_compare_operators_and_scalars(rng, npt, t):
    x = sample(rng, npt, (32, 64))
    got = run(lambda a: (a < 2, a <= 2, a > 1, a >= 1, a == 3, a != 3, 2 > a, a < 0.5), x)
    want = (x < 2, x <= 2, x > 1, x >= 1, x == 3, x != 3, 2 > x, x < 0.5)
    for g, w in zip(got, want):
        assert g.dtype == np.bool_
        np.testing.assert_array_equal(g, w)


def test_logical_ops_and_bool_operators(rng):
    x = sample(rng, np.float32, (32, 64))
    x[0, :2] = np.nan
    y = sample(rng, np.int32, (32, 64))
    a, o, n, amp, bar, inv = run(
        lambda a, b: (ptoc.logical_and(a, b), ptoc.logical_or(a, b), ptoc.logical_not(a),
                      (a > 0) & (b > 0), (a > 0) | (b > 0), ~(a > 0)), x, y)
    np.testing.assert_array_equal(a, np.logical_and(x, y))
    np.testing.assert_array_equal(o, np.logical_or(x, y))
    np.testing.assert_array_equal(n, np.logical_not(x))
    np.testing.assert_array_equal(amp, (x > 0) & (y > 0))
    np.testing.assert_array_equal(bar, (x > 0) | (y > 0))
    np.testing.assert_array_equal(inv, ~(x > 0))


def test_bitwise_operators_need_bool_tensors():
    @ptoc.jit(device="tiny")
    def f(a):
        ptoc.set_vec_tile_shapes(32, 64)
        return a & a

    with pytest.raises(ptoc.DTypeError) as e:
        f(np.zeros((32, 64), np.int32))
    assert "DT_BOOL tensors only" in str(e.value) and "logical_and" in str(e.value)


def test_tensors_stay_usable_as_dict_keys_and_in_sets(rng):
    x = sample(rng, np.float32, (32, 64))

    def body(a):
        b = a + 1.0
        seen = {a: "a", b: "b"}
        assert seen[a] == "a" and seen[b] == "b" and len({a, b, a}) == 2
        return (b,)

    (got,) = run(body, x)
    np.testing.assert_array_equal(got, x + 1)


# --- where ----------------------------------------------------------------------------

@pytest.mark.parametrize("npt,t", ALL_TYPES, ids=IDS)
def test_where_tensors_broadcast(rng, npt, t):
    c = rng.integers(0, 2, (32, 1)).astype(np.bool_)
    a, b = sample(rng, npt, (32, 64)), sample(rng, npt, (1, 64))
    (got,) = run(lambda c_, a_, b_: (ptoc.where(c_, a_, b_),), c, a, b)
    assert got.dtype == npt
    np.testing.assert_array_equal(got, np.where(c, a, b))


def test_where_with_scalars(rng):
    x = sample(rng, np.float32, (32, 64))
    i = sample(rng, np.int32, (32, 64))
    g1, g2, g3, g4 = run(lambda a, b: (ptoc.where(a > 0, a, 0.0), ptoc.where(a > 0, -1.5, a),
                                       ptoc.where(b > 0, 1, 2), ptoc.where(b > 0, b, 7)), x, i)
    np.testing.assert_array_equal(g1, np.where(x > 0, x, np.float32(0)))
    np.testing.assert_array_equal(g2, np.where(x > 0, np.float32(-1.5), x))
    assert g3.dtype == np.int32 and g4.dtype == np.int32
    np.testing.assert_array_equal(g3, np.where(i > 0, 1, 2))
    np.testing.assert_array_equal(g4, np.where(i > 0, i, 7))


def test_where_condition_must_be_bool():
    @ptoc.jit(device="tiny")
    def f(a):
        ptoc.set_vec_tile_shapes(32, 64)
        return ptoc.where(a, a, a)

    with pytest.raises(ptoc.DTypeError) as e:
        f(np.zeros((32, 64), np.float32))
    assert "DT_BOOL" in str(e.value) and "ptoc.ne" in str(e.value)


# --- cast modes -----------------------------------------------------------------------

def _round_mode(v, mode):
    """A Python-float reference of rounding `v` to an integer with `mode`."""
    if mode == "rint":
        return float(np.rint(v))
    if mode == "round":
        return math.copysign(math.floor(abs(v) + 0.5), v)
    if mode == "floor":
        return float(math.floor(v))
    if mode == "ceil":
        return float(math.ceil(v))
    if mode == "trunc":
        return float(math.trunc(v))
    t = float(math.trunc(v))  # odd
    if t != v and t % 2 == 0:
        t += math.copysign(1.0, v)
    return t


MODES = [m for m in ptoc.CastMode if m is not ptoc.CastMode.CAST_NONE]


@pytest.mark.parametrize("mode", MODES, ids=[m.name for m in MODES])
@pytest.mark.parametrize("npt,t", [(np.int32, ptoc.DT_INT32), (np.int16, ptoc.DT_INT16),
                                   (np.uint8, ptoc.DT_UINT8), (np.int64, ptoc.DT_INT64)],
                         ids=["i32", "i16", "u8", "i64"])
def test_float_to_int_each_mode(rng, mode, npt, t):
    x = (rng.integers(-40, 40, (32, 64)) / 4).astype(np.float32)  # quarters: ties at .5
    (got,) = run(lambda a: (ptoc.cast(a, t, mode=mode),), x)
    info = np.iinfo(npt)
    want = np.array([min(max(_round_mode(float(v), mode.value), info.min), info.max)
                     for v in x.ravel()]).reshape(x.shape).astype(npt)
    np.testing.assert_array_equal(got, want)


def test_float_to_int_default_is_trunc_and_modes_differ(rng):
    x = np.tile(np.array([2.5, -2.5, 3.5, 0.75], np.float32), (32, 16))
    d, r, o = run(lambda a: (ptoc.cast(a, ptoc.DT_INT32), ptoc.cast(a, "i32", mode="CAST_RINT"),
                             ptoc.cast(a, "i32", mode="odd")), x)
    np.testing.assert_array_equal(d[0, :4], [2, -2, 3, 0])
    np.testing.assert_array_equal(r[0, :4], [2, -2, 4, 1])
    np.testing.assert_array_equal(o[0, :4], [3, -3, 3, 1])


@pytest.mark.parametrize("mode", MODES, ids=[m.name for m in MODES])
def test_f32_to_f16_each_mode(rng, mode):
    # Values between f16 neighbours, ties included, and values near f16's range end.
    ulp = 2.0**-10
    base = np.array([1 + ulp / 4, 1 + ulp / 2, 1 + 3 * ulp / 4, 1 + 3 * ulp / 2, 65510.0,
                     70000.0, 2.0**-26, 0.0], np.float64)
    vals = np.concatenate([base, -base]).astype(np.float32)
    x = np.tile(vals, (32, 4))
    (got,) = run(lambda a: (ptoc.cast(a, ptoc.DT_FP16, mode=mode),), x)
    want = np.array([_to_f16(float(v), mode.value) for v in vals], np.float16)
    np.testing.assert_array_equal(got[0, :16].view(np.uint16), want.view(np.uint16))


def _to_f16(v, mode):
    """The f16 `mode` gives for v: from its two f16 neighbours lo <= v <= hi (an
    infinity past the largest finite value) and numpy's nearest-even."""
    n = float(np.float16(v))
    if n == v or math.isnan(v):
        return n
    big = 65504.0
    if abs(v) > big:
        lo, hi = (big, math.inf) if v > 0 else (-math.inf, -big)
    elif n < v:
        lo, hi = n, float(np.nextafter(np.float16(n), np.float16(np.inf)))
    else:
        lo, hi = float(np.nextafter(np.float16(n), np.float16(-np.inf))), n
    if mode == "rint":
        return n
    if mode == "floor":
        return lo
    if mode == "ceil":
        return hi
    if mode == "trunc":
        return lo if v > 0 else hi
    if mode == "round":
        tie = not math.isinf(lo) and not math.isinf(hi) and v - lo == hi - v
        return (hi if v > 0 else lo) if tie else n

    def odd(f):  # an infinity counts as even
        return not math.isinf(f) and int(np.array(f, np.float16).view(np.uint16)) & 1

    return lo if odd(lo) else hi


@pytest.mark.parametrize("mode", MODES, ids=[m.name for m in MODES])
def test_int_to_f32_each_mode(mode):
    # 2^24 + k: f32 holds only the even ones; i64 beyond 2^53 exercises exactness.
    vals = [2**24 + 1, 2**24 + 3, -(2**24 + 1), 2**60 + 2**36 + 1, -(2**60 + 2**37), 7]
    x = np.tile(np.array(vals + [0, 1], np.int64), (2, 4))
    (got,) = run(lambda a: (ptoc.cast(a, ptoc.DT_FP32, mode=mode),), x)
    want = [_int_to_f32(v, mode.value) for v in vals + [0, 1]]
    np.testing.assert_array_equal(got[0, :8], np.array(want, np.float32))


def _int_to_f32(v, mode):
    """`mode` rounding of the integer v to f32 (24-bit significand), in Python integers
    (numpy's float32(v) rounds through a double first: wrong beyond 2^53)."""
    a = abs(v)
    k = a.bit_length() - 24
    if k <= 0:
        return float(v)
    lo, rem = (a >> k) << k, a & ((1 << k) - 1)
    if rem == 0:
        return float(v)
    hi = lo + (1 << k)
    half = 1 << (k - 1)
    lo_odd = (lo >> k) & 1
    nearest = lo if rem < half or (rem == half and not lo_odd) else hi
    pick = {"rint": nearest, "trunc": lo, "odd": lo if lo_odd else hi,
            "round": lo if rem < half else hi,
            "floor": lo if v > 0 else hi, "ceil": hi if v > 0 else lo}[mode]
    return float(pick if v > 0 else -pick)


@pytest.mark.parametrize("src,npt,t", [(np.int32, np.int8, ptoc.DT_INT8),
                                       (np.int64, np.uint16, ptoc.DT_UINT16),
                                       (np.int16, np.uint8, ptoc.DT_UINT8),
                                       (np.uint64, np.int32, ptoc.DT_INT32)],
                         ids=["i32-i8", "i64-u16", "i16-u8", "u64-i32"])
def test_int_narrowing_saturates_or_wraps(rng, src, npt, t):
    x = rng.integers(0, 2**15, (32, 64)).astype(src)
    if np.issubdtype(src, np.signedinteger):
        x[::2] = -x[::2]
    sat, wrap = run(lambda a: (ptoc.cast(a, t), ptoc.cast(a, t, satmode=ptoc.SaturationMode.OFF)), x)
    info = np.iinfo(npt)
    np.testing.assert_array_equal(sat, np.clip(x.astype(object), info.min, info.max).astype(npt))
    np.testing.assert_array_equal(wrap, x.astype(npt))  # numpy's astype keeps the low bits


def test_float_to_int_wraps_like_pypto_example():
    # PyPTO's documentation: f16 [300, -300, 50] to i8 gives [127, -128, 50] saturating
    # and [44, -44, 50] with SaturationMode.OFF.
    x = np.tile(np.array([300.0, -300.0, 50.0, 0.0], np.float16), (32, 16))
    sat, wrap = run(lambda a: (ptoc.cast(a, ptoc.DT_INT8, satmode="ON"),
                               ptoc.cast(a, ptoc.DT_INT8, satmode=ptoc.SaturationMode.OFF)), x)
    np.testing.assert_array_equal(sat[0, :4], [127, -128, 50, 0])
    np.testing.assert_array_equal(wrap[0, :4], [44, -44, 50, 0])


@pytest.mark.parametrize("kw,what", [({"mode": "nearest"}, "unknown rounding mode 'nearest'"),
                                     ({"mode": 3}, "unknown rounding mode 3"),
                                     ({"satmode": "clip"}, "unknown saturation mode 'clip'")])
def test_bad_cast_mode_names(kw, what):
    @ptoc.jit(device="tiny")
    def f(a):
        ptoc.set_vec_tile_shapes(32, 64)
        return ptoc.cast(a, ptoc.DT_INT32, **kw)

    with pytest.raises(ptoc.ArgumentError) as e:
        f(np.zeros((32, 64), np.float32))
    msg = str(e.value)
    assert what in msg and ("CAST_FLOOR" in msg or "SaturationMode.OFF" in msg)
