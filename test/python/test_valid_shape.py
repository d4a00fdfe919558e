"""ptoc.view(..., valid_shape=): reads beyond the valid region are not computed.
Reductions fold only the valid elements (amax of negative data is not 0, a mean
divides by the valid count), through elementwise ops, a matmul and a split reduced
axis; an empty valid region reads and writes nothing; the simulator charges a tail
as a full tile (docs/python.md, "Dynamic axes")."""

import numpy as np
import pytest

import ptoc

F32 = ptoc.DT_FP32
REDUCE = {"amax": np.max, "amin": np.min, "sum": np.sum, "mean": np.mean}


def data(op, shape, seed):
    """Data that zeros would corrupt: negative for amax, positive for amin and mean."""
    r = np.random.default_rng(seed).random(shape, dtype=np.float32) + 0.5
    return -r if op in ("amax", "sum") else r


def block_reduce(op, tile=4):
    """out[b] = op over the rows of block b (a view of `tile` rows, valid as far as
    the tensor goes), along axis 0."""
    @ptoc.jit(device="tiny")
    def f(x: ptoc.Tensor([ptoc.DYNAMIC, 64], F32), out: ptoc.Tensor([ptoc.DYNAMIC, 64], F32)):
        n = x.shape[0]
        for b in ptoc.loop((n + tile - 1) // tile, name="b"):
            v = ptoc.view(x, [tile, 64], [b * tile, 0], valid_shape=[(n - b * tile).min(tile), 64])
            ptoc.set_vec_tile_shapes(tile, 64)
            out[b] = getattr(ptoc, op)(v, 0)
    return f


@pytest.mark.parametrize("op", list(REDUCE))
def test_a_reduction_over_a_partly_valid_view_folds_only_the_valid_rows(op):
    f = block_reduce(op)
    for n in (13, 8, 3, 1):
        x = data(op, (n, 64), n)
        out = np.zeros((n, 64), np.float32)
        f(x, out)
        for b in range((n + 3) // 4):
            np.testing.assert_allclose(out[b], REDUCE[op](x[b * 4:b * 4 + 4], axis=0),
                                       rtol=1e-6, err_msg=f"{op}, {n} rows, block {b}")
    assert f.cache_info().currsize == 1


def test_the_audits_reproduction_amax_of_negative_rows_is_not_zero():
    f = block_reduce("amax")
    x = -np.arange(1, 6 * 64 + 1, dtype=np.float32).reshape(6, 64)
    out = np.zeros((6, 64), np.float32)
    f(x, out)
    np.testing.assert_array_equal(out[1], x[4:6].max(0))  # 2 valid rows of 4
    assert (out[1] < 0).all()


@pytest.mark.parametrize("op", list(REDUCE))
def test_validity_follows_elementwise_ops_to_the_reduction(op):
    # exp(0) * -1 = -1 beyond the valid rows would beat every valid -exp(x) < -1 in amax,
    # and add 1 per padded row to a sum.
    @ptoc.jit(device="tiny")
    def f(x: ptoc.Tensor([ptoc.DYNAMIC, 64], F32), out: ptoc.Tensor([ptoc.DYNAMIC, 64], F32)):
        n = x.shape[0]
        for b in ptoc.loop((n + 3) // 4, name="b"):
            v = ptoc.view(x, [4, 64], [b * 4, 0], valid_shape=[(n - b * 4).min(4), 64])
            ptoc.set_vec_tile_shapes(4, 64)
            out[b] = getattr(ptoc, op)(ptoc.exp(v) * -1.0 + 0.25, 0)
    for n in (6, 9):
        x = np.random.default_rng(n).random((n, 64), dtype=np.float32) + 0.1
        out = np.zeros((n, 64), np.float32)
        f(x, out)
        for b in range((n + 3) // 4):
            want = REDUCE[op](-np.exp(x[b * 4:b * 4 + 4].astype(np.float64)) + 0.25, axis=0)
            np.testing.assert_allclose(out[b], want, rtol=2e-6, err_msg=f"{op}, {n}, block {b}")


@pytest.mark.parametrize("op", list(REDUCE))
def test_a_split_reduced_axis_skips_invalid_chunks(op):
    # Columns valid up to k of 128, reduced along axis 1 with 64-column tiles: the
    # second chunk is partly valid (k > 64) or empty (k <= 64); a mean divides by k.
    @ptoc.jit(device="tiny")
    def f(x: ptoc.Tensor([4, ptoc.DYNAMIC], F32), out: ptoc.Tensor([4, 1], F32)):
        for b in ptoc.loop(1, name="b"):
            v = ptoc.view(x, [4, 128], [0, 0], valid_shape=[4, x.shape[1].min(128)])
            ptoc.set_vec_tile_shapes(4, 64)
            out[:, :] = getattr(ptoc, op)(v, 1, keepdim=True)
    for k in (100, 30, 64, 128):
        x = data(op, (4, k), k)
        out = np.zeros((4, 1), np.float32)
        f(x, out)
        np.testing.assert_allclose(out[:, 0], REDUCE[op](x, axis=1), rtol=1e-6, err_msg=f"{op}, k={k}")


def test_a_matmul_with_a_partly_valid_operand_keeps_its_valid_columns():
    # The scores of a query block against a tail key block: only the valid keys'
    # columns hold data, so their row max is over those (a flash-attention tail).
    @ptoc.jit(device="tiny")
    def f(q: ptoc.Tensor([16, 32], F32), k: ptoc.Tensor([ptoc.DYNAMIC, 32], F32),
          m: ptoc.Tensor([ptoc.DYNAMIC, 16], F32), l: ptoc.Tensor([ptoc.DYNAMIC, 16], F32)):
        n = k.shape[0]
        for j in ptoc.loop((n + 15) // 16, name="kb"):
            kb = ptoc.view(k, [16, 32], [j * 16, 0], valid_shape=[(n - j * 16).min(16), 32])
            ptoc.set_cube_tile_shapes([16, 16], [32, 32], [16, 16])
            s = ptoc.matmul(q, kb, F32, b_trans=True) - 4.0   # negative scores
            ptoc.set_vec_tile_shapes(16, 16)
            m[j] = ptoc.amax(s, 1)
            l[j] = ptoc.sum(ptoc.exp(s - 1.0), 1)
    rng = np.random.default_rng(3)
    q = rng.random((16, 32), dtype=np.float32) * 0.1
    for n in (20, 7):
        k = rng.random((n, 32), dtype=np.float32) * 0.1
        m = np.zeros((n, 16), np.float32)
        l = np.zeros((n, 16), np.float32)
        f(q, k, m, l)
        s = q.astype(np.float64) @ k.T.astype(np.float64) - 4.0
        for j in range((n + 15) // 16):
            cols = s[:, j * 16:(j + 1) * 16]
            np.testing.assert_allclose(m[j], cols.max(1), rtol=1e-5)
            np.testing.assert_allclose(l[j], np.exp(cols - 1.0).sum(1), rtol=1e-5)


def test_a_static_valid_shape_outside_loops_reduces_the_valid_part():
    @ptoc.jit(device="tiny")
    def f(x: ptoc.Tensor([8, 64], F32)):
        v = ptoc.view(x, [8, 64], [0, 0], valid_shape=[5, 64])
        ptoc.set_vec_tile_shapes(8, 64)
        return ptoc.amax(v, 0), ptoc.mean(v, 0), ptoc.amin(v, 1, keepdim=True)
    x = -np.random.default_rng(1).random((8, 64), dtype=np.float32) - 1.0
    mx, mean, mn = f(x)
    np.testing.assert_allclose(mx, x[:5].max(0), rtol=1e-6)
    np.testing.assert_allclose(mean, x[:5].mean(0), rtol=1e-6)
    np.testing.assert_allclose(mn[:5, 0], x[:5].min(1), rtol=1e-6)


def test_an_empty_valid_region_reads_and_writes_nothing():
    # Three blocks of 4 rows whatever the size: blocks past the data have 0 valid rows.
    @ptoc.jit(device="tiny")
    def f(x: ptoc.Tensor([ptoc.DYNAMIC, 64], F32), y: ptoc.Tensor([12, 64], F32)):
        n = x.shape[0]
        for b in ptoc.loop(3, name="b"):
            valid = (n - b * 4).max(0).min(4)
            v = ptoc.view(x, [4, 64], [(b * 4).min(n), 0], valid_shape=[valid, 64])
            ptoc.set_vec_tile_shapes(4, 64)
            y[b * 4:b * 4 + 4, :] = v * 2.0 + 1.0
    for n in (5, 4, 1):
        x = np.random.default_rng(n).random((n, 64), dtype=np.float32)
        y = np.full((12, 64), 7.0, np.float32)
        f(x, y)
        want = np.full((12, 64), 7.0, np.float32)
        want[:n] = x * 2.0 + 1.0
        np.testing.assert_allclose(y, want, rtol=1e-6, err_msg=f"{n} rows")
    assert f.cache_info().currsize == 1


def test_a_view_with_a_valid_extent_below_zero_is_an_error():
    @ptoc.jit(device="tiny")
    def f(x: ptoc.Tensor([8, 64], F32)):
        return ptoc.view(x, [8, 64], [0, 0], valid_shape=[-1, 64]) + 1.0
    with pytest.raises(ptoc.ShapeError, match=r"valid_shape\[0\] must be between 0 \(an empty "
                       r"view\) and shape\[0\] = 8"):
        f(np.zeros((8, 64), np.float32))


def test_the_simulator_charges_a_tail_iteration_as_a_full_tile():
    # The body is compiled once for the buffer shape: 1, 2 or 4 valid rows take the
    # same simulated time (docs/python.md: a known difference from PyPTO).
    f = block_reduce("sum")
    times = []
    for n in (4, 2, 1):
        x = np.ones((n, 64), np.float32)
        f(x, np.zeros_like(x))
        times.append(f.last_run.simulated_us)
    assert times[0] == times[1] == times[2]
