"""Dynamic axes (ptoc.DYNAMIC, ptoc.dynamic(name), ptoc.STATIC, ...) and windows with a
runtime-valid part (ptoc.view(..., valid_shape=)): one compiled kernel for every size,
numerics against numpy, and the errors users hit (docs/python.md, "Dynamic axes")."""

import numpy as np
import pytest

import ptoc

F32, F16 = ptoc.DT_FP32, ptoc.DT_FP16


def rows_kernel():
    @ptoc.jit(device="tiny")
    def rows(x: ptoc.Tensor([ptoc.DYNAMIC, 64], F32), y: ptoc.Tensor([ptoc.DYNAMIC, 64], F32)):
        ptoc.set_vec_tile_shapes(64)
        for i in ptoc.loop(x.shape[0]):
            y[i] = ptoc.exp(x[i]) * 2.0
    return rows


def test_one_kernel_serves_every_size_of_a_dynamic_axis():
    rows = rows_kernel()
    rng = np.random.default_rng(0)
    for n in (1, 5, 12, 5):
        x = rng.random((n, 64), dtype=np.float32)
        y = np.zeros_like(x)
        rows(x, y)
        np.testing.assert_allclose(y, np.exp(x) * 2, rtol=1e-6)
    info = rows.cache_info()
    assert (info.misses, info.hits, info.currsize) == (1, 3, 1)


def test_the_simulated_time_grows_with_the_dynamic_size():
    rows = rows_kernel()
    spans = []
    for n in (4, 16):
        x = np.ones((n, 64), np.float32)
        rows(x, np.zeros_like(x))
        spans.append(rows.last_run.simulated_us)
    assert spans[1] > spans[0]


def test_the_ir_has_dynamic_types_and_dim_terms():
    k = rows_kernel().compile(np.zeros((3, 64), np.float32), np.zeros((3, 64), np.float32))
    ir = k.ir("tensor")
    assert "tensor<?x64xf32>" in ir
    assert 'stop = "dim(x, 0)"' in ir


def test_a_static_axis_compiles_per_size():
    @ptoc.jit(device="tiny")
    def f(x: ptoc.Tensor([ptoc.DYNAMIC, ptoc.STATIC], F32), y: ptoc.Tensor([ptoc.DYNAMIC, ...], F32)):
        ptoc.set_vec_tile_shapes(64)
        for i in ptoc.loop(x.shape[0]):
            y[i] = x[i] + 1.0
    for shape in ((2, 64), (7, 64), (2, 128)):
        x = np.ones(shape, np.float32)
        y = np.zeros_like(x)
        f(x, y)
        np.testing.assert_array_equal(y, x + 1)
    assert f.cache_info().currsize == 2  # 64 and 128 columns; rows never recompile


def test_a_named_axis_is_one_size_and_one_symbol():
    @ptoc.jit(device="tiny")
    def f(x: ptoc.Tensor([ptoc.dynamic("bs"), 64], F32),
          y: ptoc.Tensor([ptoc.dynamic("bs"), 64], F32)):
        assert x.shape[0] is y.shape[0]
        ptoc.set_vec_tile_shapes(64)
        for i in ptoc.loop(y.shape[0]):
            y[i] = x[i] * 3.0
    x = np.arange(6 * 64, dtype=np.float32).reshape(6, 64)
    y = np.zeros_like(x)
    f(x, y)
    np.testing.assert_array_equal(y, x * 3)
    with pytest.raises(ptoc.ArgumentError, match=r"axis 0 of 'y' has size 5, but axis 0 of 'x' "
                       r"has size 6; both are ptoc.dynamic\('bs'\)"):
        f(x, np.zeros((5, 64), np.float32))


def test_a_size_contradicting_a_literal_annotation_is_named():
    rows = rows_kernel()
    with pytest.raises(ptoc.ShapeError, match=r"parameter 'x' \(shape \[4, 32\]\) has size 32 in "
                       r"axis 1, but its annotation \[ptoc.DYNAMIC, 64\] fixes it to 64"):
        rows(np.zeros((4, 32), np.float32), np.zeros((4, 32), np.float32))
    with pytest.raises(ptoc.ShapeError, match=r"has rank 1, but its annotation"):
        rows(np.zeros(64, np.float32), np.zeros(64, np.float32))


def test_bad_annotations_are_named():
    with pytest.raises(ptoc.ShapeError, match=r"\.\.\. stands for the remaining axes and must come last"):
        ptoc.Tensor([..., 64])
    with pytest.raises(ptoc.ShapeError, match=r"axis 1 must be a positive int"):
        ptoc.Tensor([ptoc.DYNAMIC, "n"])
    with pytest.raises(ptoc.ShapeError, match=r"the name must be an identifier"):
        ptoc.dynamic("2x")
    assert repr(ptoc.Tensor([ptoc.DYN, ptoc.dynamic("s"), ...], F16)) == \
        "ptoc.Tensor([ptoc.DYNAMIC, ptoc.dynamic('s'), ...], ptoc.DT_FP16, annotation)"


def test_computing_on_a_whole_dynamic_tensor_says_to_use_windows():
    @ptoc.jit(device="tiny")
    def f(x: ptoc.Tensor([ptoc.DYNAMIC, 64], F32)):
        return ptoc.exp(x)
    with pytest.raises(ptoc.Error, match=r"'x' has a dynamic axis .* ops work on fixed-size "
                       r"windows of it inside a ptoc.loop"):
        f(np.zeros((4, 64), np.float32))


def test_a_slice_of_a_dynamic_axis_needs_a_static_size():
    @ptoc.jit(device="tiny")
    def f(x: ptoc.Tensor([ptoc.DYNAMIC, 64], F32), y: ptoc.Tensor([ptoc.DYNAMIC, 64], F32)):
        ptoc.set_vec_tile_shapes(1, 64)
        for i in ptoc.loop(x.shape[0]):
            y[i:] = x[i:]
    with pytest.raises(ptoc.ShapeError, match=r"dimension 0 is dynamic .* needs a stop with a "
                       r"static distance from its start"):
        f(np.zeros((4, 64), np.float32), np.zeros((4, 64), np.float32))


def test_a_window_beyond_the_size_fails_at_run_time_naming_the_iteration():
    @ptoc.jit(device="tiny")
    def f(x: ptoc.Tensor([ptoc.DYNAMIC, 64], F32), y: ptoc.Tensor([ptoc.DYNAMIC, 64], F32)):
        ptoc.set_vec_tile_shapes(64)
        for i in ptoc.loop(x.shape[0] + 1, name="r"):
            y[i] = x[i] + 1.0
    x = np.zeros((3, 64), np.float32)
    with pytest.raises(ptoc.Error, match=r"test_dynamic.py:\d+:\d+: error: loop 'r' iteration "
                       r"r = 3: ins window 0 .* outside \[0, 3\)"):
        f(x, np.zeros_like(x))


# --- ptoc.view with valid_shape: tails known only at run time --------------------------

def tiled_scale(tile):
    @ptoc.jit(device="tiny")
    def scale(x: ptoc.Tensor([ptoc.DYNAMIC, 64], F16), out: ptoc.Tensor([ptoc.DYNAMIC, 64], F16)):
        bs = x.shape[0]
        for b in ptoc.loop((bs + tile - 1) // tile):
            off = b * tile
            end = min(off + tile, bs)  # the builtin min on symbolic scalars
            v = ptoc.view(x, [tile, 64], [off, 0], valid_shape=[end - off, 64])
            ptoc.set_vec_tile_shapes(tile, 64)
            out[off:off + tile, :] = v * 2.0
    return scale


@pytest.mark.parametrize("n", [8, 13, 3, 1])
def test_valid_shape_tails_write_only_their_valid_rows(n):
    scale = tiled_scale(4)
    x = np.random.default_rng(n).random((n, 64)).astype(np.float16)
    out = np.full_like(x, 7)
    scale(x, out)
    np.testing.assert_array_equal(out, x * np.float16(2))


def test_valid_shape_kernels_compile_once():
    scale = tiled_scale(4)
    for n in (8, 13, 3):
        x = np.ones((n, 64), np.float16)
        scale(x, np.zeros_like(x))
    assert scale.cache_info().currsize == 1


def test_a_sum_over_a_tail_block_adds_its_valid_rows():
    @ptoc.jit(device="tiny")
    def colsum(x: ptoc.Tensor([ptoc.DYNAMIC, 64], F32), s: ptoc.Tensor([ptoc.DYNAMIC, 64], F32)):
        n = x.shape[0]
        for b in ptoc.loop((n + 3) // 4):
            v = ptoc.view(x, [4, 64], [b * 4, 0], valid_shape=[(n - b * 4).min(4), 64])
            ptoc.set_vec_tile_shapes(4, 64)
            s[b] = ptoc.sum(v, 0)
    x = np.random.default_rng(2).random((6, 64), dtype=np.float32)
    s = np.zeros((6, 64), np.float32)
    colsum(x, s)
    np.testing.assert_allclose(s[0], x[:4].sum(0), rtol=1e-6)
    np.testing.assert_allclose(s[1], x[4:].sum(0), rtol=1e-6)  # 2 valid rows
    np.testing.assert_array_equal(s[2:], 0)


def test_a_valid_extent_outside_the_window_fails_at_run_time():
    @ptoc.jit(device="tiny")
    def f(x: ptoc.Tensor([ptoc.DYNAMIC, 64], F32), y: ptoc.Tensor([ptoc.DYNAMIC, 64], F32)):
        for b in ptoc.loop(1, name="t"):
            v = ptoc.view(x, [4, 64], [0, 0], valid_shape=[x.shape[0], 64])
            ptoc.set_vec_tile_shapes(4, 64)
            y[0:4, :] = v + 1.0
    x = np.zeros((6, 64), np.float32)
    with pytest.raises(ptoc.Error, match=r"loop 't' iteration t = 0: ins window 0 valid extent "
                       r"0 'dim\(x, 0\)' is 6, outside \[0, 4\]"):
        f(x, np.zeros_like(x))


def test_view_argument_errors_are_named():
    @ptoc.jit(device="tiny")
    def f(x: ptoc.Tensor([8, 64], F32)):
        return ptoc.view(x, [4, 64], [6, 0]) + 1.0
    with pytest.raises(ptoc.ShapeError, match=r"ptoc.view: dimension 0: offset 6 \+ size 4 is "
                       r"beyond the tensor's size 8"):
        f(np.zeros((8, 64), np.float32))

    @ptoc.jit(device="tiny")
    def g(x: ptoc.Tensor([8, 64], F32)):
        return ptoc.view(x, [4, 64], [0, 0], valid_shape=[5, 64]) + 1.0
    with pytest.raises(ptoc.ShapeError, match=r"valid_shape\[0\] must be between 0 \(an empty "
                       r"view\) and shape\[0\] = 4"):
        g(np.zeros((8, 64), np.float32))


def test_a_static_view_outside_loops_is_a_plain_view():
    @ptoc.jit(device="tiny")
    def f(x: ptoc.Tensor([8, 64], F32)):
        ptoc.set_vec_tile_shapes(4, 64)
        return ptoc.view(x, [4, 64], [2, 0]) + 1.0
    x = np.arange(8 * 64, dtype=np.float32).reshape(8, 64)
    np.testing.assert_array_equal(f(x), x[2:6] + 1)


def test_an_open_ended_write_at_a_symbolic_offset_takes_the_value_size():
    @ptoc.jit(device="tiny")
    def f(x: ptoc.Tensor([ptoc.DYNAMIC, 4, 64], F32), y: ptoc.Tensor([ptoc.DYNAMIC, ...], F32)):
        bs, rows, cols = x.shape
        ptoc.set_vec_tile_shapes(1, 4, 64)
        for b in ptoc.loop(bs):
            y[b:, ...] = ptoc.exp(x[b:b + 1, :rows, :cols])   # PyPTO's assemble at b
    x = np.random.default_rng(3).random((3, 4, 64), dtype=np.float32)
    y = np.zeros_like(x)
    f(x, y)
    np.testing.assert_allclose(y, np.exp(x), rtol=1e-6)


def test_a_static_valid_shape_outside_loops_pads_with_zeros():
    # As PyPTO's view example: a 4x8 view at [2, 8] of a 4x16 tensor, 2x8 of it valid.
    @ptoc.jit(device="tiny")
    def f(x: ptoc.Tensor([4, 16], F32), out: ptoc.Tensor([4, 8], F32)):
        ptoc.set_vec_tile_shapes(4, 8)
        out[:] = ptoc.view(x, [4, 8], [2, 8], valid_shape=[2, 8]) + 0.0
    x = np.arange(64, dtype=np.float32).reshape(4, 16)
    out = np.full((4, 8), 7, np.float32)
    f(x, out)
    np.testing.assert_array_equal(out, np.vstack([x[2:4, 8:16], np.zeros((2, 8), np.float32)]))


def test_many_different_sizes_stay_exact_beyond_the_kept_instantiations():
    # Instantiations are kept for 16 sets of sizes; later sizes are instantiated per call.
    rows = rows_kernel()
    for n in range(1, 21):
        x = np.full((n, 64), n / 10, np.float32)
        y = np.zeros_like(x)
        rows(x, y)
        np.testing.assert_allclose(y, np.exp(x) * 2, rtol=1e-6)
    assert rows.cache_info().currsize == 1


# --- ragged groups: offsets read from an int tensor (a grouped GEMM's rows) -------------

def grouped_rows(groups, block, hidden, out_cols):
    """Per group g, rows x[offs[g]:offs[g + 1]] @ w[g], in blocks of ``block`` rows whose
    last one is partly valid: the layout of a grouped GEMM (examples/llm/moe.py)."""
    @ptoc.jit(device="tiny")
    def grouped(x: ptoc.Tensor([ptoc.dynamic("rows"), hidden], F16),
                offs: ptoc.Tensor([groups + 1], ptoc.DT_INT32),
                w: ptoc.Tensor([groups, hidden, out_cols], F16),
                y: ptoc.Tensor([ptoc.dynamic("rows"), out_cols], F16)):
        ptoc.set_cube_tile_shapes([16, 16], [32, 32], [32, 32])
        for g in ptoc.loop(groups, name="g"):
            start, count = offs[g], offs[g + 1] - offs[g]
            for b in ptoc.loop(0, (count + block - 1) // block, name="b"):
                r0 = start + b * block
                xb = ptoc.view(x, [block, hidden], [r0, 0],
                               valid_shape=[(count - b * block).min(block), hidden])
                y[r0:r0 + block, :] = ptoc.matmul(xb, w[g])
    return grouped


def test_a_window_at_an_offset_read_from_a_tensor_has_its_static_size():
    # Before: "the slice (offs[g]) + (16 * b):((offs[g]) + (16 * b)) + (16) must have a
    # static positive size": a value read from a tensor made the offset opaque, so the
    # size of the slice r0:r0 + 16 was not seen to be 16.
    grouped = grouped_rows(3, 16, 32, 32)
    compiled = grouped.compile(np.zeros((40, 32), np.float16), np.array([0, 20, 20, 40], np.int32),
                               np.zeros((3, 32, 32), np.float16), np.zeros((40, 32), np.float16))
    assert "offs[g]" in compiled.ir("tensor")


def test_a_matmul_of_a_partly_valid_view_writes_only_its_valid_rows():
    # Before: the matmul result lost the view's valid rows, so the block of group 0
    # (20 rows: 16 + 4 valid) wrote 16 rows at 16 and zeroed group 2's first rows; an
    # empty group (group 1) runs no block.
    rng = np.random.default_rng(5)
    offs = np.array([0, 20, 20, 45], np.int32)
    x = rng.standard_normal((45, 32)).astype(np.float16)
    w = (rng.standard_normal((3, 32, 32)) / 6).astype(np.float16)
    y = np.full((45, 32), 7, np.float16)
    grouped_rows(3, 16, 32, 32)(x, offs, w, y)
    want = np.concatenate([x[offs[g]:offs[g + 1]].astype(np.float64) @ w[g] for g in range(3)])
    np.testing.assert_allclose(y.astype(np.float64), want, rtol=2e-3, atol=2e-3)


def test_a_matmul_keeps_the_valid_columns_of_its_right_operand():
    @ptoc.jit(device="tiny")
    def f(a: ptoc.Tensor([16, 32], F16), b: ptoc.Tensor([ptoc.DYNAMIC, 32], F16),
          y: ptoc.Tensor([16, 32], F16)):
        ptoc.set_cube_tile_shapes([16, 16], [32, 32], [32, 32])
        n = b.shape[0]
        for i in ptoc.loop(1, name="t"):
            bt = ptoc.view(b, [32, 32], [0, 0], valid_shape=[n, 32])
            y[:, 0:32] = ptoc.matmul(a, bt, b_trans=True)  # columns n.. stay as they were
    rng = np.random.default_rng(6)
    a = (rng.standard_normal((16, 32)) / 4).astype(np.float16)
    b = (rng.standard_normal((20, 32)) / 4).astype(np.float16)
    y = np.full((16, 32), 7, np.float16)
    f(a, b, y)
    want = a.astype(np.float64) @ b.T.astype(np.float64)
    np.testing.assert_allclose(y[:, :20].astype(np.float64), want, rtol=2e-3, atol=2e-3)
    np.testing.assert_array_equal(y[:, 20:], 7)
