"""The rounding, exponential and convenience ops (ceil, floor, trunc, round with
decimals, exp2, expm1, erfc, clip, softmax, unsqueeze, clone) against numpy / math,
and their cost on the simulated device."""

import math

import numpy as np
import pytest

import ptoc
from conftest import F16, F32, I32, assert_close, run

# Values with exact ties (x.5) so round's ties-to-even rule is tested, negatives, zero.
TIES = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, -3.7, 0.0, 7.2], dtype=np.float32)


def _data(rng, shape, dtype):
    x = (rng.standard_normal(shape) * 4).astype(dtype)
    x.flat[:TIES.size] = TIES.astype(dtype)
    return x


@pytest.mark.parametrize("dtype", [F32, F16], ids=["f32", "f16"])
@pytest.mark.parametrize("name,ref", [
    ("ceil", np.ceil), ("floor", np.floor), ("trunc", np.trunc), ("round", np.round)])
def test_rounding_ops_match_numpy_exactly(rng, name, ref, dtype):
    x = _data(rng, (37, 100), dtype)
    got = run(lambda a: getattr(ptoc, name)(a), x)
    np.testing.assert_array_equal(got, ref(x))


def test_rounding_ops_are_the_identity_on_integers(rng):
    x = rng.integers(-50, 50, (8, 64)).astype(I32)
    for f in (ptoc.ceil, ptoc.floor, ptoc.trunc, ptoc.round):
        np.testing.assert_array_equal(run(lambda a: f(a) + 0, x), x)


@pytest.mark.parametrize("decimals", [1, 2, -1])
def test_round_with_decimals_follows_numpy(rng, decimals):
    x = (rng.standard_normal((16, 64)) * 300).astype(F32)
    got = run(lambda a: ptoc.round(a, decimals=decimals), x)
    np.testing.assert_array_equal(got, np.round(x, decimals))


def test_python_builtins_round_floor_ceil_trunc_record_the_ops(rng):
    x = _data(rng, (8, 64), F32)
    got = run(lambda a: round(a) + math.floor(a) * 10 + math.ceil(a) * 100 +
              math.trunc(a) * 1000, x)
    want = np.round(x) + np.floor(x) * 10 + np.ceil(x) * 100 + np.trunc(x) * 1000
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name,ref", [
    ("exp2", np.exp2), ("expm1", np.expm1),
    ("erfc", np.vectorize(math.erfc, otypes=[np.float64]))])
@pytest.mark.parametrize("dtype", [F32, F16], ids=["f32", "f16"])
def test_exponential_ops_match_numpy(rng, name, ref, dtype):
    x = (rng.standard_normal((37, 100)) * 2).astype(dtype)
    got = run(lambda a: getattr(ptoc, name)(a), x)
    assert_close(got, ref(x.astype(np.float64)).astype(dtype), dtype)


def test_expm1_keeps_precision_near_zero():
    x = np.full((8, 64), 1e-6, dtype=F32)
    got = run(lambda a: ptoc.expm1(a), x)
    assert_close(got, np.expm1(x), F32, rtol=1e-6, atol=0)
    # exp(x) - 1 would lose it: this is what expm1 is for.
    assert abs(float(got[0, 0]) - 1e-6) < 1e-12


def test_exponential_ops_need_floats(rng):
    x = rng.integers(-3, 3, (8, 64)).astype(I32)
    with pytest.raises(ptoc.DTypeError, match="erfc.*floating-point"):
        run(lambda a: ptoc.erfc(a), x)


def test_clip_with_numbers_tensors_and_one_side(rng):
    x = (rng.standard_normal((32, 64)) * 3).astype(F32)
    lo = (rng.standard_normal((1, 64)) - 1).astype(F32)
    np.testing.assert_array_equal(run(lambda a: ptoc.clip(a, -1.0, 2.0), x),
                                  np.clip(x, -1.0, 2.0))
    np.testing.assert_array_equal(run(lambda a, b: a.clip(min=b), x, lo), np.maximum(x, lo))
    np.testing.assert_array_equal(run(lambda a: ptoc.clip(a, max=0.5), x), np.minimum(x, 0.5))
    with pytest.raises(ptoc.ArgumentError, match="give min, max or both"):
        run(lambda a: ptoc.clip(a), x)


@pytest.mark.parametrize("dim", [-1, 0])
def test_softmax_matches_numpy(rng, dim):
    x = (rng.standard_normal((32, 64)) * 3).astype(F32)
    tile = (1, 64) if dim == -1 else (32, 8)
    got = run(lambda a: ptoc.softmax(a, dim=dim), x, tile=tile)
    e = np.exp(x - x.max(axis=dim, keepdims=True))
    assert_close(got, e / e.sum(axis=dim, keepdims=True), F32)


def test_unsqueeze_and_clone(rng):
    x = rng.standard_normal((32, 64)).astype(F32)
    assert run(lambda a: ptoc.unsqueeze(a, 0) * 2, x, tile=(1, 8, 64)).shape == (1, 32, 64)
    assert run(lambda a: a.unsqueeze(-2) * 2, x, tile=(8, 1, 64)).shape == (32, 1, 64)
    with pytest.raises(ptoc.ShapeError, match="unsqueeze: dim 3 is out of range"):
        run(lambda a: ptoc.unsqueeze(a, 3), x)

    @ptoc.jit(device="tiny")
    def write_clone(a: ptoc.Tensor([32, 64], ptoc.DT_FP32)):
        ptoc.set_vec_tile_shapes(8, 64)
        c = a.clone()
        c[0:8, :] = a[0:8, :] * 0 - 1
        return a + 0, c + 0

    orig, cloned = write_clone(x)
    np.testing.assert_array_equal(orig, x)  # writing the clone leaves the original as it was
    want = x.copy()
    want[0:8] = -1
    np.testing.assert_array_equal(cloned, want)


def _simulated_us(op, x):
    @ptoc.jit(device="a2")
    def k(a: ptoc.Tensor(list(x.shape), ptoc.DT_FP32)):
        ptoc.set_vec_tile_shapes(8, 1024)
        return op(a)
    k(x)
    return k.last_run.simulated_us


def test_costs_follow_the_instructions_each_op_issues():
    # A vector-bound size: the ops differ only in the instructions they issue.
    x = np.zeros((2048, 1024), dtype=F32)
    t = {name: _simulated_us(getattr(ptoc, name), x)
         for name in ("floor", "exp2", "expm1", "erfc", "exp")}
    # One rounding conversion costs no more than one transcendental pass...
    assert t["floor"] < t["exp"]
    # ...exp2 and expm1 are an exp plus one full-rate pass, erfc many passes.
    assert t["exp"] < t["exp2"] and t["exp"] < t["expm1"]
    assert t["erfc"] > t["exp2"]
