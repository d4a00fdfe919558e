"""Slices and outputs: writing output parameters in place (whole, partial, several
writes, broadcast, cast), reading slices (ints drop dims, negative indices, ...),
returning tensors, non-contiguous and read-only arrays, and in-place updates of a
parameter that is both input and output."""

import numpy as np
import pytest

import ptoc
from conftest import F16, F32, I32, TINY, assert_close

SENTINEL = 7.0  # what the caller's output array holds before the call


def jit(fn):
    return ptoc.jit(fn, device=TINY)


@pytest.fixture
def x(rng):
    return rng.standard_normal((100, 200)).astype(F32)


def sentinel(shape, dtype=F32):
    return np.full(shape, SENTINEL, dtype)


# --- writing output parameters --------------------------------------------------------

def test_write_whole_output(x):
    @jit
    def f(x, y):
        ptoc.set_vec_tile_shapes(32, 64)
        y[:] = ptoc.exp(x)

    y = sentinel(x.shape)
    assert f(x, y) is None
    assert_close(y, np.exp(x))


@pytest.mark.parametrize("key", [
    np.s_[10:50, :], np.s_[:, 64:100], np.s_[3:97, 5:190], np.s_[90:100, 190:200],
], ids=["rows", "cols", "inner-tails", "corner"])
def test_partial_write_keeps_the_rest(x, key):
    """Unwritten parts of an output keep the caller's values (in-place semantics)."""
    @jit
    def f(x, y):
        ptoc.set_vec_tile_shapes(32, 64)
        y[key] = x[key] * 2.0

    y = sentinel(x.shape)
    f(x, y)
    want = sentinel(x.shape)
    want[key] = x[key] * 2
    assert_close(y, want)


def test_several_partial_writes_later_wins(x):
    @jit
    def f(x, y):
        ptoc.set_vec_tile_shapes(32, 64)
        y[0:60, :] = x[0:60, :] + 1.0
        y[40:100, 0:128] = x[40:100, 0:128] - 1.0  # overlaps the first write
        y[95:100, :] = 0.5

    y = sentinel(x.shape)
    f(x, y)
    want = sentinel(x.shape)
    want[0:60] = x[0:60] + 1
    want[40:100, 0:128] = x[40:100, 0:128] - 1
    want[95:100] = 0.5
    assert_close(y, want)


def test_write_then_read_back_the_output(x):
    """After a write, the parameter's value is the written one."""
    @jit
    def f(x, y):
        ptoc.set_vec_tile_shapes(32, 64)
        y[:] = x * 2.0
        y[:] = y + 1.0

    y = sentinel(x.shape)
    f(x, y)
    assert_close(y, x * 2 + 1)


def test_output_accumulates_into_callers_values(x):
    """Reading an output parameter before writing it reads the caller's array."""
    @jit
    def f(x, y):
        ptoc.set_vec_tile_shapes(32, 64)
        y[:] = y + x

    y = np.arange(x.size, dtype=F32).reshape(x.shape) / 1000
    before = y.copy()
    f(x, y)
    assert_close(y, before + x)


@pytest.mark.parametrize("value_shape", [(1, 200), (40, 1), (200,)], ids=["row", "col", "1d"])
def test_write_broadcasts(rng, value_shape):
    v = rng.standard_normal(value_shape).astype(F32)

    @jit
    def f(v, y):
        ptoc.set_vec_tile_shapes(32, 64)
        y[10:50, :] = v

    y = sentinel((100, 200))
    f(v, y)
    want = sentinel((100, 200))
    want[10:50, :] = v
    assert_close(y, want)


def test_write_scalar(x):
    @jit
    def f(x, y):
        ptoc.set_vec_tile_shapes(32, 64)
        y[:] = x
        y[20:30, 64:128] = -3.25

    y = sentinel(x.shape)
    f(x, y)
    want = x.copy()
    want[20:30, 64:128] = -3.25
    assert_close(y, want)


def test_write_casts_to_the_outputs_dtype(x):
    @jit
    def f(x, h, i):
        ptoc.set_vec_tile_shapes(32, 64)
        h[:] = x * 3.0
        i[0:50, :] = x[0:50, :] * 10.0

    h = sentinel(x.shape, F16)
    i = sentinel(x.shape, I32)
    f(x, h, i)
    assert h.dtype == F16
    np.testing.assert_array_equal(h, (x * 3).astype(F16))
    want = sentinel(x.shape, I32)
    want[0:50] = np.trunc(x[0:50] * 10).astype(I32)  # float -> int truncates
    np.testing.assert_array_equal(i, want)


def test_negative_indices_and_ellipsis(x):
    @jit
    def f(x, y):
        ptoc.set_vec_tile_shapes(32, 64)
        y[-20:, -64:] = x[-20:, 0:64]
        y[..., 0:32] = x[..., -32:] * 2.0
        y[-100:-90, ...] = 1.0

    y = sentinel(x.shape)
    f(x, y)
    want = sentinel(x.shape)
    want[-20:, -64:] = x[-20:, 0:64]
    want[..., 0:32] = x[..., -32:] * 2
    want[-100:-90, ...] = 1
    assert_close(y, want)


# --- int indices: they drop a dimension, like numpy -------------------------------------

def test_int_index_read(rng):
    """x[1] and x[-1, 3] drop dimensions; slices made before any tile shape is set
    and computed on under tiles of their rank."""
    x = rng.standard_normal((4, 40, 64)).astype(F32)

    @jit
    def f(x):
        plane, row = x[1], x[-1, 3]
        ptoc.set_vec_tile_shapes(32, 64)
        p = plane * 2.0
        ptoc.set_vec_tile_shapes(64)
        return p, row + 1.0

    p, r = f(x)
    assert p.shape == (40, 64) and r.shape == (64,)
    assert_close(p, x[1] * 2)
    assert_close(r, x[-1, 3] + 1)


def test_int_index_write(rng):
    x = rng.standard_normal((4, 40, 64)).astype(F32)

    @jit
    def f(x, y):
        row = x[2, 5]
        ptoc.set_vec_tile_shapes(64)
        row = row * 2.0
        ptoc.set_vec_tile_shapes(1, 64)
        y[-3, :] = row

    y = sentinel((40, 64))
    f(x, y)
    want = sentinel((40, 64))
    want[-3, :] = x[2, 5] * 2
    assert_close(y, want)


def test_int_index_read_under_a_tile_shape(rng):
    """The tile set for the computation need not fit the slice: x[1] of a rank-3 x
    (a view plus a reshape) under a rank-2 tile."""
    x = rng.standard_normal((4, 40, 64)).astype(F32)

    @jit
    def f(x):
        ptoc.set_vec_tile_shapes(32, 64)
        return x[1] * 2.0, x[-1][3:-3, :] + 1.0

    a, b = f(x)
    assert_close(a, x[1] * 2)
    assert_close(b, x[-1, 3:-3] + 1)


def test_int_index_write_under_a_tile_shape(rng):
    x = rng.standard_normal((4, 40, 64)).astype(F32)

    @jit
    def f(x, y):
        ptoc.set_vec_tile_shapes(32, 64)
        y[6, :] = x[0, 0, :]
        y[-1] = x[1, 2]
        y[7, 0:32] = x[2, 0:1, 0:32]  # leading 1s of the value drop, as in numpy

    y = sentinel((40, 64))
    f(x, y)
    want = sentinel((40, 64))
    want[6] = x[0, 0]
    want[-1] = x[1, 2]
    want[7, 0:32] = x[2, 0:1, 0:32]
    assert_close(y, want)


def test_scalar_write_into_int_indexed_row(rng):
    x = rng.standard_normal((40, 64)).astype(F32)

    @jit
    def f(x, y):
        ptoc.set_vec_tile_shapes(32, 64)
        y[:] = x
        y[5, :] = 3.0

    y = sentinel((40, 64))
    f(x, y)
    want = x.copy()
    want[5] = 3
    assert_close(y, want)


# --- returning ------------------------------------------------------------------------

def test_return_one_tensor(x):
    @jit
    def f(x):
        ptoc.set_vec_tile_shapes(32, 64)
        return ptoc.tanh(x)

    got = f(x)
    assert isinstance(got, np.ndarray) and got.dtype == F32 and got.shape == x.shape
    assert_close(got, np.tanh(x))


def test_return_tuple_of_different_shapes_and_dtypes(x):
    @jit
    def f(x):
        # 16 rows: the three consumers of each x tile and the row sums share one
        # subgraph, whose tiles must fit tiny's UB together.
        ptoc.set_vec_tile_shapes(16, 64)
        return x * 2.0, ptoc.cast(x, ptoc.DT_FP16), ptoc.sum(x, dim=1)

    got = f(x)
    assert isinstance(got, tuple) and len(got) == 3
    assert_close(got[0], x * 2)
    assert got[1].dtype == F16
    np.testing.assert_array_equal(got[1], x.astype(F16))
    assert_close(got[2], x.astype(np.float64).sum(1), F32, atol=1e-4)


def test_return_list_gives_tuple(x):
    @jit
    def f(x):
        ptoc.set_vec_tile_shapes(32, 64)
        return [x + 1.0, x - 1.0]

    a, b = f(x)
    assert_close(a, x + 1)
    assert_close(b, x - 1)


def test_write_and_return(x):
    @jit
    def f(x, y):
        ptoc.set_vec_tile_shapes(32, 64)
        y[:, 0:64] = x[:, 0:64] * 3.0
        return ptoc.amax(x, dim=-1, keepdim=True)

    y = sentinel(x.shape)
    m = f(x, y)
    want = sentinel(x.shape)
    want[:, :64] = x[:, :64] * 3
    assert_close(y, want)
    assert_close(m, x.max(-1, keepdims=True))


def test_returned_arrays_are_fresh(x):
    """Each call returns new arrays (not a buffer reused by the next call)."""
    @jit
    def f(x):
        ptoc.set_vec_tile_shapes(32, 64)
        return x * 2.0

    first = f(x)
    second = f(x + 1)
    assert first is not second and not np.shares_memory(first, second)
    assert_close(first, x * 2)
    assert_close(second, (x + 1) * 2)


def test_returning_a_parameter_unchanged(x):
    @jit
    def f(x):
        return x

    got = f(x)
    assert not np.shares_memory(got, x)
    np.testing.assert_array_equal(got, x)


# --- array layouts --------------------------------------------------------------------

@pytest.mark.parametrize("layout", ["transposed", "column-slice", "fortran", "strided"])
def test_non_contiguous_output_gets_the_values(x, layout):
    if layout == "transposed":
        base = sentinel((200, 100))
        y = base.T
    elif layout == "column-slice":
        base = sentinel((100, 400))
        y = base[:, 100:300]
    elif layout == "fortran":
        base = np.asfortranarray(sentinel((100, 200)))
        y = base
    else:
        base = sentinel((200, 200))
        y = base[::2, :]
    assert not y.flags.c_contiguous
    before = base.copy()

    @jit
    def f(x, y):
        ptoc.set_vec_tile_shapes(32, 64)
        y[10:90, :] = x[10:90, :] + 1.0

    f(x, y)
    want = sentinel((100, 200))
    want[10:90] = x[10:90] + 1
    assert_close(y, want)
    # Nothing of the base array outside the view changed.
    mask = np.ones(base.shape, bool)
    if layout == "column-slice":
        mask[:, 100:300] = False
    elif layout == "strided":
        mask[::2, :] = False
    else:
        mask[:] = False
    np.testing.assert_array_equal(base[mask], before[mask])


@pytest.mark.parametrize("layout", ["transposed", "strided", "fortran"])
def test_non_contiguous_inputs(rng, layout):
    src = rng.standard_normal((200, 200)).astype(F32)
    if layout == "transposed":
        x = np.ascontiguousarray(src[:, :100]).T
    elif layout == "strided":
        x = src[::2, :]
    else:
        x = np.asfortranarray(src[:100, :])
    assert not x.flags.c_contiguous
    z = rng.standard_normal((x.shape[1],)).astype(F32)[::-1]  # negative stride

    @jit
    def f(x, z):
        ptoc.set_vec_tile_shapes(32, 64)
        return x * z

    assert_close(f(x, z), x * z)


def test_read_only_output_is_an_error(x):
    @jit
    def f(x, y):
        ptoc.set_vec_tile_shapes(32, 64)
        y[:] = x * 2.0

    y = sentinel(x.shape)
    y.flags.writeable = False
    with pytest.raises(ptoc.Error) as e:
        f(x, y)
    assert "'y'" in str(e.value) and "read-only" in str(e.value)
    np.testing.assert_array_equal(y, sentinel(x.shape))
    # A read-only input is fine.
    x.flags.writeable = False
    y2 = sentinel(x.shape)
    f(x, y2)
    assert_close(y2, x * 2)


# --- in place -------------------------------------------------------------------------

def test_in_place_update(x):
    @jit
    def f(x):
        ptoc.set_vec_tile_shapes(32, 64)
        x[:] = x * 2.0

    a = x.copy()
    assert f(a) is None
    assert_close(a, x * 2)
    f(a)
    assert_close(a, x * 4)


def test_in_place_shifted_regions(x):
    """Writing rows that other tiles still have to read: every read sees the
    original values (numpy semantics of a[40:100] = a[0:60])."""
    @jit
    def down(x):
        ptoc.set_vec_tile_shapes(32, 64)
        x[40:100, :] = x[0:60, :]

    @jit
    def up(x):
        ptoc.set_vec_tile_shapes(32, 64)
        x[0:60, :] = x[40:100, :]

    for f, dst, src in ((down, np.s_[40:100], np.s_[0:60]), (up, np.s_[0:60], np.s_[40:100])):
        a = x.copy()
        f(a)
        want = x.copy()
        want[dst] = x[src]
        assert_close(a, want)


def test_in_place_transpose(rng):
    """x[:] = x.T on a square array: each output tile reads another tile's region."""
    s = rng.standard_normal((96, 96)).astype(F32)

    @jit
    def f(x):
        ptoc.set_vec_tile_shapes(32, 32)
        x[:] = x.T

    a = s.copy()
    f(a)
    assert_close(a, s.T)


def test_in_place_softmax_rows(rng):
    x = rng.standard_normal((64, 256)).astype(F32)

    @jit
    def f(x):
        ptoc.set_vec_tile_shapes(8, 256)
        e = ptoc.exp(x - ptoc.amax(x, dim=-1, keepdim=True))
        x[:] = e / ptoc.sum(e, dim=-1, keepdim=True)

    a = x.copy()
    f(a)
    ref = np.exp(x - x.max(-1, keepdims=True))
    assert_close(a, ref / ref.sum(-1, keepdims=True))


def test_output_array_is_written_in_place_not_rebound(x):
    """The caller's very array object (and memory) receives the values."""
    @jit
    def f(x, y):
        ptoc.set_vec_tile_shapes(32, 64)
        y[:] = x - 1.0

    y = sentinel(x.shape)
    view = y[10:20]
    f(x, y)
    assert_close(view, x[10:20] - 1)


def test_int_output_partial_write(rng):
    x = rng.integers(-50, 50, (100, 200)).astype(I32)

    @jit
    def f(x, y):
        ptoc.set_vec_tile_shapes(32, 64)
        y[:, 100:] = x[:, 100:] * 3

    y = np.full((100, 200), -1, I32)
    f(x, y)
    want = np.full((100, 200), -1, I32)
    want[:, 100:] = x[:, 100:] * 3
    np.testing.assert_array_equal(y, want)


# --- a tile of another rank on a returned or written slice/reshape ---------------------

def test_rank_2_tile_on_a_returned_rank_1_view_and_reshape(x):
    """Regression: after set_vec_tile_shapes(32, 64) a returned row x[3] or flattened
    x.reshape(-1), or a row written into a rank-1 output, failed with "'reshape' op
    has no vec_tile". The rank-2 tile adapts (its trailing size) as for x[3] + 1."""
    @jit
    def f(x, row_out):
        ptoc.set_vec_tile_shapes(32, 64)
        row_out[:] = x[3]
        return x[5], x[0:2, :].reshape(-1)

    row_out = sentinel((200,))
    r5, flat = f(x, row_out)
    np.testing.assert_array_equal(row_out, x[3])
    np.testing.assert_array_equal(r5, x[5])
    np.testing.assert_array_equal(flat, x[0:2, :].reshape(-1))
