"""Slice writes that cost only the slice: every write form against numpy (disjoint,
overlapping, column blocks, int-indexed, rank-changing, in a loop, read-modify-write,
reads of the old value after an overwrite), the costs (tile ops linear in the number
of writes, a per-step writer simulated like the loop-free form, no dependency
between disjoint writes, a real write chain shown on the critical path), concat of
many inputs, and the errors that remain."""

import json
import os
import re

import numpy as np
import pytest

import ptoc
from conftest import F16, F32, TINY, assert_close


def jit(fn):
    return ptoc.jit(fn, device=TINY)


def ref_softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def codegen_write_order_edges(kernel):
    """Number of calls that wait on another to keep writes of one region in order."""
    return len(re.findall(r"write-order \[", kernel.ir("codegen")))


# --- every write form against numpy ------------------------------------------------------

def test_rows_written_one_per_step(rng):
    x = rng.standard_normal((8, 64)).astype(F32)

    @jit
    def f(x, y):
        ptoc.set_vec_tile_shapes(1, 64)
        for i in range(8):
            y[i] = x[i] * 2 + 1

    y = np.zeros_like(x)
    f(x, y)
    assert_close(y, x * 2 + 1)
    k = f.compile(x, y)
    # No row waits on another, and every task runs one program.
    assert k.stats["leaves"] == 1
    assert codegen_write_order_edges(k) == 0
    assert k.stats["passes"]["expand-tiles"]["slice-writes"] == 8
    assert k.stats["passes"]["expand-tiles"]["fill-bytes"] == 0


def test_batches_written_one_per_step(rng):
    x = rng.standard_normal((6, 16, 64)).astype(F32)

    @jit
    def f(x, y):
        ptoc.set_vec_tile_shapes(8, 64)
        for b in range(6):
            y[b] = ptoc.exp(x[b] - ptoc.amax(x[b], -1, True))

    y = np.zeros_like(x)
    f(x, y)
    assert_close(y, np.exp(x - x.max(-1, keepdims=True)))


def test_overlapping_writes_keep_program_order(rng):
    a = rng.standard_normal((3, 64)).astype(F32)
    b = rng.standard_normal((3, 64)).astype(F32)
    c = rng.standard_normal((2, 64)).astype(F32)

    @jit
    def f(a, b, c, y):
        ptoc.set_vec_tile_shapes(1, 64)
        y[0:3] = a
        y[2:5] = b
        y[1:3] = c * 3

    y = np.full((6, 64), 7.0, F32)
    f(a, b, c, y)
    want = np.full((6, 64), 7.0, F32)
    want[0:3] = a
    want[2:5] = b
    want[1:3] = c * 3
    assert_close(y, want)


def test_column_blocks_and_sub_blocks(rng):
    x = rng.standard_normal((16, 128)).astype(F32)

    @jit
    def f(x, y):
        ptoc.set_vec_tile_shapes(8, 32)
        for j in range(4):  # strided in memory: a column block per step
            y[:, 32 * j:32 * (j + 1)] = x[:, 32 * j:32 * (j + 1)] * (j + 1)
        y[4:12, 32:96] = -x[4:12, 32:96]

    y = np.zeros_like(x)
    f(x, y)
    want = x * np.repeat(np.arange(1, 5, dtype=F32), 32)[None, :]
    want[4:12, 32:96] = -x[4:12, 32:96]
    assert_close(y, want)


def test_int_index_rank_changing_write(rng):
    # o[h] = r: a 2-D value into a 3-D tensor with a 2-D vec tile.
    q = rng.standard_normal((4, 16, 64)).astype(F32)

    @jit
    def f(q, o):
        ptoc.set_vec_tile_shapes(8, 64)
        for h in range(4):
            r = ptoc.exp(q[h])  # 16 x 64
            o[h] = r

    o = np.zeros_like(q)
    f(q, o)
    assert_close(o, np.exp(q))
    # r's tiles are reshaped in UB and written where they belong: no GM round trip.
    tile = f.compile(q, o).ir("tile")
    assert tile.count("copy_out") == 8  # 2 tiles per head
    assert "reshape" in tile


def test_row_of_a_matrix_from_a_vector(rng):
    v = rng.standard_normal((64,)).astype(F32)

    @jit
    def f(v, y):
        ptoc.set_vec_tile_shapes(1, 64)
        y[3, :] = v
        y[5] = v * 2

    y = np.ones((8, 64), F32)
    f(v, y)
    want = np.ones((8, 64), F32)
    want[3] = v
    want[5] = v * 2
    assert_close(y, want)


def test_read_modify_write_is_a_real_chain(rng, tmp_path):
    x = rng.standard_normal((4, 64)).astype(F32)
    t = rng.standard_normal((5, 1, 64)).astype(F32)

    @jit
    def f(x, t):
        ptoc.set_vec_tile_shapes(1, 64)
        acc = x * 1
        for i in range(5):
            acc[2] = acc[2] * 0.5 + t[i]
        return acc

    want = x.copy()
    for i in range(5):
        want[2] = want[2] * 0.5 + t[i][0]
    assert_close(f(x, t), want)
    k = f.compile(x, t)
    assert codegen_write_order_edges(k) > 0
    # The summary's critical path shows the chain of in-place updates.
    with ptoc.options(runtime_options={"run_numerics": False}):
        f(x, t)
    assert "write order:" in f.last_run.summary
    # So do the run folder's summary.json and swimlane: the path's write-order edges, and
    # flows named "write order" for the edges that keep the updates in order.
    with ptoc.options(runtime_options={"run_numerics": False},
                      debug_options={"runtime_debug_mode": 1, "output_dir": str(tmp_path)}):
        f(x, t)
    folder = f.last_run.output_folder
    assert folder.startswith(str(tmp_path))
    with open(os.path.join(folder, "summary.json")) as fh:
        summary = json.load(fh)
    assert summary["critical_path"]["write_order_edges"] > 0
    with open(f.last_run.swimlane_path) as fh:
        events = json.load(fh)["traceEvents"]
    write_order = [e for e in events if e.get("ph") == "s" and e.get("name") == "write order"]
    assert len(write_order) >= summary["critical_path"]["write_order_edges"]


def test_old_value_read_before_an_overwrite(rng):
    # The old rows are read into a value that is used after they are overwritten.
    x = rng.standard_normal((4, 64)).astype(F32)
    w = rng.standard_normal((2, 64)).astype(F32)

    @jit
    def f(x, w):
        ptoc.set_vec_tile_shapes(2, 64)
        y = x + 0
        old = y[0:2] * 1
        y[0:2] = w
        return y, old + y[0:2]

    y, z = f(x, w)
    want = x.copy()
    want[0:2] = w
    assert_close(y, want)
    assert_close(z, x[0:2] + w)


def test_destination_read_later_is_not_overwritten(rng):
    x = rng.standard_normal((4, 64)).astype(F32)
    w = rng.standard_normal((1, 64)).astype(F32)

    @jit
    def f(x, w):
        ptoc.set_vec_tile_shapes(1, 64)
        a = x * 2
        b = a + 0
        b[1] = w
        return a, b

    a, b = f(x, w)
    assert_close(a, x * 2)
    want = x * 2
    want[1] = w
    assert_close(b, want)


def test_write_that_reads_its_own_destination(rng):
    x = rng.standard_normal((6, 64)).astype(F32)

    @jit
    def f(x):
        ptoc.set_vec_tile_shapes(1, 64)
        y = x + 0
        y[1:4] = y[0:3]  # overlapping source and destination: numpy copies first
        return y

    want = x.copy()
    want[1:4] = x[0:3].copy()
    assert_close(f(x), want)


def test_writes_into_a_constant_and_partial_outputs(rng):
    x = rng.standard_normal((4, 64)).astype(F32)

    @jit
    def f(x, y):
        ptoc.set_vec_tile_shapes(1, 64)
        z = ptoc.full([4, 64], 3.0)
        z[1] = x[1]
        y[2] = x[2] * 5  # the other rows of y keep the caller's values
        return z

    y = np.full((4, 64), -1.0, F32)
    z = f(x, y)
    want = np.full((4, 64), 3.0, F32)
    want[1] = x[1]
    assert_close(z, want)
    want_y = np.full((4, 64), -1.0, F32)
    want_y[2] = x[2] * 5
    assert_close(y, want_y)


def test_quantise_matmul_dequantise_with_one_row_statistic(rng):
    # A row statistic used before and after a matmul under one row split: fusing it
    # into both would make a task wait on itself; it goes through GM instead.
    x = rng.uniform(0.5, 1.5, (64, 64)).astype(F16)
    w = rng.uniform(-1, 1, (64, 64)).astype(F16)

    @jit
    def f(x, w):
        ptoc.set_vec_tile_shapes(32, 64)
        ptoc.set_cube_tile_shapes([32, 32], [32, 32], [32, 32])
        m = ptoc.amax(x, -1, True)
        y = ptoc.matmul(x * m, w)
        return y * m

    xf = x.astype(F32)
    m = xf.max(-1, keepdims=True)
    xm = (xf * m).astype(F16).astype(F32)
    want = (xm @ w.astype(F32)).astype(F16).astype(F32) * m
    assert_close(f(x, w).astype(F32), want, rtol=2e-2, atol=2e-2)
    assert f.compile(x, w).stats["passes"]["expand-tiles"]["unfused-to-avoid-cycles"] > 0


def test_concat_of_257_inputs(rng):
    n = 257
    xs = rng.standard_normal((n, 64)).astype(F32)

    @jit
    def f(x):
        ptoc.set_vec_tile_shapes(1, 64)
        return ptoc.concat([x[i:i + 1] * 2 for i in range(n)], 0)

    assert_close(f(xs), xs * 2)


# --- costs ----------------------------------------------------------------------------------

def per_step_softmax(batches):
    @ptoc.jit(device="a2")
    def f(x, y):
        ptoc.set_vec_tile_shapes(8, 512)
        for b in range(batches):
            xb = x[b]
            e = ptoc.exp(xb - ptoc.amax(xb, -1, True))
            y[b] = e / ptoc.sum(e, -1, True)
    return f


def test_per_step_writer_costs_what_the_loop_free_form_costs(rng):
    B = 16
    x = rng.standard_normal((B, 64, 512)).astype(F32)

    @ptoc.jit(device="a2")
    def whole(x):
        ptoc.set_vec_tile_shapes(1, 8, 512)
        e = ptoc.exp(x - ptoc.amax(x, -1, True))
        return e / ptoc.sum(e, -1, True)

    f = per_step_softmax(B)
    y = np.zeros_like(x)
    f(x, y)
    assert_close(y, ref_softmax(x))
    assert_close(whole(x), ref_softmax(x))
    # The same tiles, the same tasks: the simulated time is within a few percent.
    assert f.last_run.simulated_us <= 1.05 * whole.last_run.simulated_us
    # The same tile ops, plus a free reshape per tile (8 x 512 to 1 x 8 x 512).
    tile = f.compile(x, y).ir("tile")
    reshapes = len(re.findall(r"= reshape %\w+ : tile<", tile))
    assert reshapes == 128
    assert f.compile(x, y).stats["tile_ops"] - reshapes == whole.compile(x).stats["tile_ops"]


def test_tile_ops_grow_linearly_with_the_number_of_writes(rng):
    counts = {}
    for B in (4, 16):
        f = per_step_softmax(B)
        x = np.zeros((B, 64, 512), F32)
        counts[B] = f.compile(x, np.zeros_like(x)).stats["tile_ops"]
    assert counts[16] == 4 * counts[4]


# --- errors -----------------------------------------------------------------------------------

def test_write_of_the_wrong_shape_names_the_write():
    @jit
    def f(x, y):
        ptoc.set_vec_tile_shapes(1, 64)
        y[0:2] = x[0:3]

    x = np.zeros((4, 64), F32)
    with pytest.raises(ptoc.Error, match=r"test_slice_writes.py:\d+: error: cannot write a "
                                         r"tensor of shape \[3, 64\] into a slice of shape "
                                         r"\[2, 64\]; write a value of the slice's shape"):
        f(x, np.zeros_like(x))


def test_write_out_of_range_names_the_index():
    @jit
    def f(x, y):
        ptoc.set_vec_tile_shapes(1, 64)
        y[4] = x[0]

    x = np.zeros((4, 64), F32)
    with pytest.raises(ptoc.Error, match="index 4 is out of range for dimension 0 of size 4"):
        f(x, np.zeros_like(x))


@pytest.mark.parametrize("dim", [0, 1])
def test_strided_write_names_the_fix(dim):
    @jit
    def f(x, y):
        ptoc.set_vec_tile_shapes(4, 64)
        t = x[0:4] * 2
        if dim == 0:
            y[0:8:2] = t
        else:
            y[:, 0:8:2] = x[:, 0:4]

    x = np.zeros((8, 64), F32)
    lead = ":, " * dim
    with pytest.raises(ptoc.Error) as e:
        f(x, np.zeros_like(x))
    message = str(e.value)
    assert re.search(r"test_slice_writes.py:\d+: error: write: dimension "
                     f"{dim}: the slice 0:8:2 has step 2; ptoc slices have step 1", message)
    # The fix: the four positions written one at a time, each with an int index.
    assert (f"write its 4 positions one at a time with int indices: for j, i in "
            f"enumerate(range(0, 8, 2)): y[{lead}i] = value[{lead}j]") in message


def test_strided_write_done_as_the_error_says(rng):
    # What the step-2 write's message says to write instead, against numpy.
    x = rng.standard_normal((4, 64)).astype(F32)

    @jit
    def f(x, y):
        ptoc.set_vec_tile_shapes(1, 64)
        value = x * 2
        for j, i in enumerate(range(0, 8, 2)):
            y[i] = value[j]

    y = np.full((8, 64), 5.0, F32)
    f(x, y)
    want = np.full((8, 64), 5.0, F32)
    want[0:8:2] = x * 2
    assert_close(y, want)
    assert codegen_write_order_edges(f.compile(x, y)) == 0


def test_strided_read_names_the_fix():
    @jit
    def f(x):
        ptoc.set_vec_tile_shapes(4, 64)
        return x[1::3] * 2

    x = np.zeros((8, 64), F32)
    with pytest.raises(ptoc.Error, match=re.escape(
            "slice: dimension 0: the slice 1::3 has step 3; ptoc slices have step 1: read its "
            "3 positions with int-indexed slices and join them: ptoc.concat([x[i:i + 1] for i "
            "in range(1, 8, 3)], 0)")):
        f(x)
