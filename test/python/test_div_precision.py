"""div's precision_type (PyPTO's PrecisionType): HIGH_PRECISION (the default) is the
correctly rounded quotient; INTRINSIC is a * round(1 / b), exactly as numpy computes
it in the same steps, and costs a reciprocal and a multiply instead of the div
instruction (faster on large tiles)."""

import numpy as np
import pytest

import ptoc
from conftest import F16, F32, kernel

SHAPE = (64, 256)


def _inputs(rng, dtype):
    a = (rng.standard_normal(SHAPE) * 10).astype(dtype)
    b = (rng.uniform(0.5, 8.0, SHAPE) * rng.choice([-1, 1], SHAPE)).astype(dtype)
    return a, b


def _div(precision, name):
    return kernel(lambda p, q: ptoc.div(p, q, precision), 2, tile=(8, 256), name=name)


@pytest.mark.parametrize("dtype", [F32, F16], ids=["f32", "f16"])
def test_numerics(rng, dtype):
    a, b = _inputs(rng, dtype)
    high = _div(ptoc.PrecisionType.HIGH_PRECISION, "high")(a, b)
    intrinsic = _div(ptoc.PrecisionType.INTRINSIC, "intrinsic")(a, b)
    # HIGH_PRECISION: the correctly rounded quotient (from the exact quotient in f64).
    np.testing.assert_array_equal(high, (a.astype(np.float64) / b).astype(dtype))
    # INTRINSIC: the reciprocal rounded to the dtype, times a, rounded to the dtype.
    r = (np.float32(1) / b.astype(F32)).astype(dtype)
    np.testing.assert_array_equal(intrinsic, (a.astype(F32) * r.astype(F32)).astype(dtype))
    # The two differ (by an ulp) on some elements, never by more.
    differ = high != intrinsic
    assert differ.any()
    ulp = np.spacing(np.abs(high).astype(dtype)).astype(np.float64)
    assert (np.abs(high.astype(np.float64) - intrinsic) <= ulp * 1.0001).all()


def test_default_and_operator_are_high_precision(rng):
    a, b = _inputs(rng, F32)
    plain = kernel(lambda p, q: ptoc.div(p, q), 2, tile=(8, 256), name="plain")(a, b)
    op = kernel(lambda p, q: p / q, 2, tile=(8, 256), name="op")(a, b)
    np.testing.assert_array_equal(plain, a / b)
    np.testing.assert_array_equal(op, a / b)


def test_ir_and_timing(rng):
    """The attribute is in the IR (tensor and tile level); the intrinsic path is
    estimated and simulated faster (rec at full rate + mul at the binary rate, against
    the div instruction's quarter rate)."""
    a, b = _inputs(rng, F32)
    fh = _div(ptoc.PrecisionType.HIGH_PRECISION, "high_t")
    fi = _div(ptoc.PrecisionType.INTRINSIC, "intrinsic_t")
    fh(a, b)
    fi(a, b)
    kh, ki = fh.compile(a, b), fi.compile(a, b)
    assert 'precision = "intrinsic"' in ki.ir("tensor")
    assert 'precision = "intrinsic"' in ki.ir("tile")
    assert "precision" not in kh.ir("tile")
    cycles = lambda k: sum(int(c) for c in __import__("re").findall(r"cycles = (\d+)",
                                                                      k.ir("partitioned")))
    assert cycles(ki) < cycles(kh)
    assert fi.last_run.simulated_us < fh.last_run.simulated_us


def test_bad_precision_type(rng):
    a, b = _inputs(rng, F32)
    f = kernel(lambda p, q: ptoc.div(p, q, "fast"), 2, tile=(8, 256), name="bad")
    with pytest.raises(ptoc.ArgumentError, match=r"precision_type must be "
                                                 r"ptoc.PrecisionType.HIGH_PRECISION or "
                                                 r"ptoc.PrecisionType.INTRINSIC, got 'fast'"):
        f(a, b)


def test_constant_folding_follows_the_mode():
    """Two constants fold with the op's own mode (canonicalize)."""
    x = np.ones(SHAPE, F32)

    def both(p, q):
        c = ptoc.full([1, 256], 3.0, ptoc.DT_FP32)
        d = ptoc.full([1, 256], 7.0, ptoc.DT_FP32)
        return p * ptoc.div(c, d, ptoc.PrecisionType.INTRINSIC), q * ptoc.div(c, d)

    f = kernel(both, 2, tile=(8, 256), name="fold")
    got_i, got_h = f(x, x)
    rec = np.float32(1) / np.float32(7)
    assert (got_i == np.float32(3) * rec).all()
    assert (got_h == np.float32(3) / np.float32(7)).all()
    assert (got_i != got_h).all()  # 3 x (1/7) and 3/7 differ in f32
