"""The index ops against numpy: ptoc.topk (values and indices, the tie and NaN order),
ptoc.gather and ptoc.expand_clone, on odd shapes with tails, every dim, the dtypes each
op takes, the MoE gating size (top-8 of 256 experts over 4096 tokens), and the errors
a wrong call gets."""

import numpy as np
import pytest

import ptoc
from conftest import A2, F16, F32, I32, assert_close, run


def topk_ref(x, k, dim, largest):
    """numpy's answer under ptoc's order: larger first (smaller when not `largest`),
    NaN above every number, equal values by lower index."""
    xm = np.moveaxis(x, dim, -1).astype(np.float64)
    pos = np.broadcast_to(np.arange(xm.shape[-1]), xm.shape)
    nan = np.isnan(xm)
    key = np.where(nan, 0.0, xm)
    if largest:
        order = np.lexsort((pos, -key, ~nan), axis=-1)  # NaN first, then descending
    else:
        order = np.lexsort((pos, key, nan), axis=-1)  # ascending, NaN last
    idx = order[..., :k]
    vals = np.take_along_axis(np.moveaxis(x, dim, -1), idx, axis=-1)
    return np.moveaxis(vals, -1, dim), np.moveaxis(idx, -1, dim).astype(I32)


def check_topk(x, k, dim=-1, largest=True, tile=None, device="tiny"):
    got_v, got_i = run(lambda a: tuple(ptoc.topk(a, k, dim, largest)), x, tile=tile,
                       device=device)
    want_v, want_i = topk_ref(x, k, dim % x.ndim, largest)
    assert got_i.dtype == I32 and got_v.dtype == x.dtype
    np.testing.assert_array_equal(got_i, want_i)
    np.testing.assert_array_equal(got_v, want_v)


# --- topk ---------------------------------------------------------------------------

@pytest.mark.parametrize("largest", [True, False], ids=["largest", "smallest"])
@pytest.mark.parametrize("shape,k,dim,tile", [
    pytest.param((64, 256), 8, -1, (4, 64), id="gating-rows"),
    pytest.param((7, 37), 5, 1, (4, 32), id="tails"),
    pytest.param((37,), 37, 0, (64,), id="1d-all"),
    pytest.param((5, 33, 6), 3, 1, (2, 8, 32), id="rank3-middle-dim"),
    pytest.param((9, 40), 1, 0, (4, 32), id="dim0-k1"),
])
def test_topk_f32(rng, shape, k, dim, tile, largest):
    check_topk(rng.standard_normal(shape).astype(F32), k, dim, largest, tile)


@pytest.mark.parametrize("largest", [True, False], ids=["largest", "smallest"])
def test_topk_ties_keep_index_order(rng, largest):
    # Values from a small set: every row has many equal values, so the order among
    # them (lower index first) decides which indices come out.
    x = rng.integers(-2, 3, (20, 48)).astype(F32)
    check_topk(x, 10, -1, largest, (8, 32))
    got_v, got_i = run(lambda a: tuple(ptoc.topk(a, 3)), np.zeros((2, 32), F32),
                       tile=(2, 32))
    np.testing.assert_array_equal(got_i, [[0, 1, 2], [0, 1, 2]])


def test_topk_nan_ranks_above_numbers():
    x = np.array([[1.0, np.nan, 3.0, np.inf, -np.inf, np.nan, 0.0, 2.0] + [-5.0] * 24], F32)
    check_topk(np.tile(x, (3, 1)), 4, -1, True, (2, 32))
    check_topk(np.tile(x, (3, 1)), 30, -1, False, (2, 32))
    v, i = run(lambda a: tuple(ptoc.topk(a, 3)), x, tile=(1, 32))
    assert np.isnan(v[0, :2]).all() and v[0, 2] == np.inf
    np.testing.assert_array_equal(i[0], [1, 5, 3])
    v, i = run(lambda a: tuple(ptoc.topk(a, 32, largest=False)), x, tile=(1, 32))
    np.testing.assert_array_equal(i[0, [0, 1, -3, -2, -1]], [4, 8, 3, 1, 5])


def test_topk_pypto_example():
    # PyPTO's documented example: [[1, 2, 3], [1, 2, 3]], k = 2.
    x = np.array([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]], F32)
    v, i = run(lambda a: tuple(ptoc.topk(a, 2, -1, True)), x, tile=(2, 32))
    np.testing.assert_array_equal(v, [[3, 2], [3, 2]])
    np.testing.assert_array_equal(i, [[2, 1], [2, 1]])


@pytest.mark.parametrize("dtype", [F16, I32], ids=["f16", "i32"])
def test_topk_dtypes(rng, dtype):
    x = (rng.standard_normal((12, 70)) * 100).astype(dtype)
    check_topk(x, 6, -1, True, (4, 32))
    check_topk(x, 6, 0, False, (4, 32))


def test_topk_indices_only_and_method(rng):
    x = rng.standard_normal((16, 40)).astype(F32)
    got = run(lambda a: a.topk(4, dim=1, largest=False).indices, x, tile=(8, 32))
    np.testing.assert_array_equal(got, topk_ref(x, 4, 1, False)[1])
    got = run(lambda a: a.topk(4).values * 2.0, x, tile=(8, 32))
    np.testing.assert_array_equal(got, topk_ref(x, 4, 1, True)[0] * 2)


def test_topk_moe_gating_a2(rng):
    # Issue 21: top-8 of 256 experts over 4096 tokens, softmax scores, on the a2 device.
    logits = rng.standard_normal((4096, 256)).astype(F32)

    def gate(a):
        scores = ptoc.softmax(a, -1)
        v, i = ptoc.topk(scores, 8, -1, True, algo="MERGE_SORT")
        return v, i

    v, i = run(gate, logits, tile=(32, 256), device=A2)
    e = np.exp(logits - logits.max(-1, keepdims=True))
    scores = e / e.sum(-1, keepdims=True)
    want_i = topk_ref(scores.astype(F32), 8, 1, True)[1]
    # Scores equal to the last ulp may swap; the selected experts' scores must match.
    np.testing.assert_allclose(np.take_along_axis(scores, i.astype(np.int64), 1),
                               np.take_along_axis(scores, want_i.astype(np.int64), 1),
                               rtol=1e-6, atol=1e-7)
    assert_close(v, np.take_along_axis(scores, want_i.astype(np.int64), 1))
    assert (np.diff(v, axis=1) <= 0).all()


def test_topk_cost_grows_with_k(rng):
    # A larger k sorts longer blocks (more bitonic stages) on the simulated device.
    x = rng.standard_normal((64, 256)).astype(F32)

    def simulated_us(k):
        @ptoc.jit(device="tiny")
        def f(a):
            ptoc.set_vec_tile_shapes(8, 256)
            return ptoc.topk(a, k).indices

        f(x)
        return f.last_run.simulated_us

    assert simulated_us(64) > simulated_us(2) > 0


@pytest.mark.parametrize("call,kind,text", [
    (lambda a: ptoc.topk(a, 0), ptoc.ShapeError, "k=0 is not in 1..40"),
    (lambda a: ptoc.topk(a, 41), ptoc.ShapeError, "k=41 is not in 1..40"),
    (lambda a: ptoc.topk(a, 2, dim=2), ptoc.ShapeError, "dim 2 is out of range"),
    (lambda a: ptoc.topk(a, 2, algo="BUBBLE"), ptoc.ArgumentError, "algo must be one of"),
    (lambda a: ptoc.topk(a, 2.5), ptoc.ShapeError, "k=2.5"),
])
def test_topk_errors(rng, call, kind, text):
    x = rng.standard_normal((8, 40)).astype(F32)
    with pytest.raises(kind, match=text):
        run(call, x, tile=(8, 64))


def test_topk_tile_too_large_names_the_dim(rng):
    x = rng.standard_normal((64, 4096)).astype(F32)
    with pytest.raises(ptoc.TileShapeError, match="keeps dimension 1 \\(size 4096\\) whole"):
        run(lambda a: ptoc.topk(a, 8).indices, x, tile=(32, 64))


# --- gather -------------------------------------------------------------------------

def gather_ref(x, dim, index):
    region = tuple(slice(0, n) if d != dim else slice(None) for d, n in enumerate(index.shape))
    return np.take_along_axis(x[region], index.astype(np.int64), axis=dim)


@pytest.mark.parametrize("xshape,ishape,dim,tile", [
    pytest.param((3, 5), (3, 4), 0, (4, 32), id="pypto-example-shape"),
    pytest.param((37, 50), (37, 9), 1, (8, 32), id="dim1-tails"),
    pytest.param((40, 70), (20, 33), 1, (8, 32), id="smaller-index"),
    pytest.param((6, 9, 40), (4, 12, 33), 1, (2, 4, 32), id="rank3-index-longer-on-dim"),
    pytest.param((70,), (100,), 0, (64,), id="1d"),
])
@pytest.mark.parametrize("dtype", [F32, F16, I32], ids=["f32", "f16", "i32"])
def test_gather(rng, xshape, ishape, dim, tile, dtype):
    x = (rng.standard_normal(xshape) * 50).astype(dtype)
    index = rng.integers(0, xshape[dim], ishape).astype(I32)
    got = run(lambda a, i: ptoc.gather(a, dim, i), x, index, tile=tile)
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, gather_ref(x, dim, index))


def test_gather_pypto_example():
    x = np.arange(15, dtype=I32).reshape(3, 5)
    index = np.array([[0, 1, 2, 0], [1, 2, 0, 1], [2, 2, 1, 0]], I32)
    got = run(lambda a, i: a.gather(0, i), x, index, tile=(4, 32))
    np.testing.assert_array_equal(got, [[0, 6, 12, 3], [5, 11, 2, 8], [10, 11, 7, 3]])


def test_gather_with_topk_indices(rng):
    # The MoE pattern: route by the top experts' indices, read another tensor there.
    scores = rng.standard_normal((24, 64)).astype(F32)
    bias = rng.standard_normal((24, 64)).astype(F32)

    def route(s, b):
        top = ptoc.topk(s, 4)
        return ptoc.gather(b, 1, top.indices) + top.values

    got = run(route, scores, bias, tile=(8, 64))
    v, i = topk_ref(scores, 4, 1, True)
    assert_close(got, gather_ref(bias, 1, i) + v)


def test_gather_out_of_range_reads_zero():
    x = np.arange(1, 33, dtype=F32).reshape(1, 32)
    index = np.array([[0, 31, 32, -1]], I32)
    got = run(lambda a, i: ptoc.gather(a, 1, i), x, index, tile=(1, 32))
    np.testing.assert_array_equal(got, [[1, 32, 0, 0]])


@pytest.mark.parametrize("call,kind,text", [
    (lambda a, i: ptoc.gather(a, 1, ptoc.cast(i, ptoc.DT_FP32)), ptoc.DTypeError,
     "index must be an integer tensor"),
    (lambda a, i: ptoc.gather(a, 3, i), ptoc.ShapeError, "dim 3 is out of range"),
    (lambda a, i: ptoc.gather(a[0:4, :], 1, i), ptoc.ShapeError,
     "is larger than the input .* in dimension 0"),
])
def test_gather_errors(rng, call, kind, text):
    x = rng.standard_normal((8, 40)).astype(F32)
    index = np.zeros((8, 4), I32)
    with pytest.raises(kind, match=text):
        run(call, x, index, tile=(8, 64))


# --- expand_clone -------------------------------------------------------------------

@pytest.mark.parametrize("xshape,shape,tile", [
    pytest.param((1, 8), (4, 8), (4, 32), id="pypto-example"),
    pytest.param((37, 1), (37, 45), (8, 32), id="column-tails"),
    pytest.param((1, 3, 1), (5, 3, 70), (2, 2, 32), id="rank3-two-dims"),
    pytest.param((6, 40), (6, 40), (8, 32), id="nothing-to-expand"),
])
@pytest.mark.parametrize("dtype", [F32, I32], ids=["f32", "i32"])
def test_expand_clone(rng, xshape, shape, tile, dtype):
    x = (rng.standard_normal(xshape) * 10).astype(dtype)
    got = run(lambda a: ptoc.expand_clone(a, list(shape)), x, tile=tile)
    np.testing.assert_array_equal(got, np.broadcast_to(x, shape))
    got = run(lambda a: a.expand_clone(shape, valid_shape=list(shape)) + a, x, tile=tile)
    np.testing.assert_array_equal(got, np.broadcast_to(x, shape) + x)


@pytest.mark.parametrize("call,kind,text", [
    (lambda a: ptoc.expand_clone(a, [4, 9]), ptoc.ShapeError,
     "cannot expand dimension 1 .* only size-1 dimensions expand"),
    (lambda a: ptoc.expand_clone(a, [2, 4, 8]), ptoc.ShapeError, "of another rank"),
    (lambda a: ptoc.expand_clone(a, [4, 8], valid_shape=[4, 3]), ptoc.ArgumentError,
     "valid_shape"),
])
def test_expand_clone_errors(rng, call, kind, text):
    x = rng.standard_normal((1, 8)).astype(F32)
    with pytest.raises(kind, match=text):
        run(call, x, tile=(4, 32))


# --- scatter, scatter_, scatter_update ---------------------------------------------

def scatter_ref(x, dim, index, src, reduce=None):
    """numpy: every index position in row-major order (the last of equal ones wins)."""
    out = x.copy()
    src = np.broadcast_to(src, index.shape) if np.ndim(src) == 0 else src
    for p in np.ndindex(*index.shape):
        at = list(p)
        at[dim] = index[p]
        at = tuple(at)
        if reduce == "add":
            out[at] = out[at] + src[p]
        elif reduce == "multiply":
            out[at] = out[at] * src[p]
        else:
            out[at] = src[p]
    return out


@pytest.mark.parametrize("xshape,ishape,dim,tile", [
    pytest.param((3, 5), (2, 5), 0, (4, 32), id="dim0"),
    pytest.param((37, 50), (30, 9), 1, (8, 32), id="dim1-tails-partial-rows"),
    pytest.param((6, 9, 40), (4, 12, 33), 1, (2, 4, 32), id="rank3-index-longer-on-dim"),
    pytest.param((70,), (20,), 0, (64,), id="1d"),
])
@pytest.mark.parametrize("reduce", [None, "add", "multiply"])
@pytest.mark.parametrize("dtype", [F32, I32], ids=["f32", "i32"])
def test_scatter(rng, xshape, ishape, dim, tile, reduce, dtype):
    x = (rng.standard_normal(xshape) * 4).astype(dtype)
    # Distinct positions per row for replace (equal ones are order-dependent, tested below).
    index = rng.integers(0, xshape[dim], ishape).astype(I32)
    src = (rng.standard_normal(ishape) * 4).astype(dtype)
    got = run(lambda a, i, s: ptoc.scatter(a, dim, i, s, reduce=reduce), x, index, src, tile=tile)
    assert got.dtype == dtype
    assert_close(got, scatter_ref(x, dim, index, src, reduce), dtype=dtype, rtol=1e-5)


def test_scatter_pypto_semantics_and_order():
    x = np.zeros((3, 5), F32)
    index = np.array([[0, 1, 2, 0, 1], [2, 0, 0, 1, 2]], I32)
    src = np.arange(1, 11, dtype=F32).reshape(2, 5)
    got = run(lambda a, i, s: ptoc.scatter(a, 0, i, s), x, index, src, tile=(4, 32))
    np.testing.assert_array_equal(got, scatter_ref(x, 0, index, src))
    # Equal indices: the later position (row-major) wins; add sums them all.
    index = np.array([[1, 1, 1, 1]], I32)
    x = np.zeros((1, 32), F32)
    src = np.array([[1, 2, 3, 4]], F32)
    got = run(lambda a, i, s: ptoc.scatter(a, 1, i, s), x, index, src, tile=(1, 32))
    assert got[0, 1] == 4
    got = run(lambda a, i, s: ptoc.scatter(a, 1, i, s, reduce="add"), x, index, src,
              tile=(1, 32))
    assert got[0, 1] == 10 and got.sum() == 10


def test_scatter_scalar_in_place_and_methods(rng):
    x = rng.standard_normal((16, 40)).astype(F32)
    index = rng.integers(0, 40, (16, 3)).astype(I32)

    def fill(a, i):
        a.scatter_(1, i, -7.5)
        return a * 1.0

    got = run(fill, x.copy(), index, tile=(8, 64))
    np.testing.assert_array_equal(got, scatter_ref(x, 1, index, np.float32(-7.5)))
    got = run(lambda a, i: a.scatter(1, i, 2.0, reduce="multiply"), x, index, tile=(8, 64))
    assert_close(got, scatter_ref(x, 1, index, np.float32(2.0), "multiply"))


@pytest.mark.parametrize("four_d", [False, True], ids=["2d", "4d"])
def test_scatter_update(rng, four_d):
    # A paged KV cache: rows of src written at the slots index names.
    blocks, block_size, d, b, s = 4, 8, 32, 2, 3
    cache = rng.standard_normal((blocks * block_size, d)).astype(F32)
    slots = rng.permutation(blocks * block_size)[:b * s].reshape(b, s).astype(I32)
    new = rng.standard_normal((b * s, d)).astype(F32)
    want = cache.copy()
    want[slots.reshape(-1)] = new
    if four_d:
        cache = cache.reshape(blocks, block_size, 1, d)
        new = new.reshape(b, s, 1, d)
        want = want.reshape(blocks, block_size, 1, d)
        tile = (1, 8, 1, 32)
    else:
        tile = (32, 32)

    def update(c, i, n):
        c.scatter_update(-2, i, n)
        return c * 1.0

    got = run(update, cache.copy(), slots, new, tile=tile)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("call,kind,text", [
    (lambda a, i: ptoc.scatter(a, 1, ptoc.cast(i, ptoc.DT_FP32), 1.0), ptoc.DTypeError,
     "index must be an integer tensor"),
    (lambda a, i: ptoc.scatter(a, 1, i, 1.0, reduce="max"), ptoc.ArgumentError,
     "reduce must be None, 'add' or 'multiply'"),
    (lambda a, i: ptoc.scatter(a, 1, i, a[:, 0:2]), ptoc.ShapeError,
     "is larger than the source"),
    (lambda a, i: ptoc.scatter(a, 1, i, float("inf")), ptoc.ArgumentError, "must be finite"),
    (lambda a, i: ptoc.scatter_update(a, 0, i, a), ptoc.ArgumentError, "dim must be -2"),
])
def test_scatter_errors(rng, call, kind, text):
    x = rng.standard_normal((8, 40)).astype(F32)
    index = np.zeros((8, 4), I32)
    with pytest.raises(kind, match=text):
        run(call, x, index, tile=(8, 64))
