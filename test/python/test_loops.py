"""ptoc.loop: bodies compiled once, symbolic windows, in-place writes, accumulators,
nested loops, stitching, and the errors a user meets."""

import numpy as np
import pytest

import ptoc

F32 = ptoc.DT_FP32


def rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def test_per_batch_writes_match_numpy_and_compile_the_body_once():
    @ptoc.jit
    def rows(x: ptoc.Tensor([8, 4, 64], F32), y):
        ptoc.set_vec_tile_shapes(4, 64)
        for b in ptoc.loop(8, name="b"):
            y[b] = ptoc.exp(x[b]) * 2.0

    x = rand(8, 4, 64)
    y = np.zeros_like(x)
    rows(x, y)
    np.testing.assert_allclose(y, np.exp(x) * 2.0, rtol=1e-6)
    k = rows.compile(x, y)
    assert k.stats["root_functions"] == 1
    assert k.stats["tasks"] == 8              # one task per iteration
    assert k.ir("tensor").count("func @") == 2  # the function and its one body
    assert "loop %x, %y" in k.ir("tensor")


def test_body_compiled_once_whatever_the_trip_count():
    def make(n):
        @ptoc.jit
        def f(x: ptoc.Tensor([n, 64], F32), y):
            ptoc.set_vec_tile_shapes(1, 64)
            for i in ptoc.loop(n):
                y[i] = x[i] + 1.0
        return f

    small, big = make(2), make(512)
    xs, xb = rand(2, 64), rand(512, 64)
    ks = small.compile(xs, np.zeros_like(xs))
    kb = big.compile(xb, np.zeros_like(xb))
    assert ks.stats["tile_ops"] == kb.stats["tile_ops"]   # the body's, once
    assert kb.stats["tasks"] == 512 * ks.stats["tasks"] // 2
    yb = np.zeros_like(xb)
    big(xb, yb)
    np.testing.assert_allclose(yb, xb + 1.0)


def test_strided_windows_with_affine_offsets_and_a_start_and_step():
    @ptoc.jit
    def cols(x: ptoc.Tensor([16, 256], F32), y):
        ptoc.set_vec_tile_shapes(16, 64)
        y[:] = x * 0.0
        for j in ptoc.loop(1, 4, 2, name="j"):
            y[:, j * 64:(j + 1) * 64] = x[:, j * 64:(j + 1) * 64] * 3.0

    x = rand(16, 256)
    y = np.full_like(x, 7.0)
    cols(x, y)
    want = np.zeros_like(x)
    for j in (1, 3):
        want[:, j * 64:(j + 1) * 64] = x[:, j * 64:(j + 1) * 64] * 3.0
    np.testing.assert_allclose(y, want)


def test_unwritten_parts_of_an_output_keep_their_values():
    @ptoc.jit
    def some_rows(x: ptoc.Tensor([8, 64], F32), y):
        ptoc.set_vec_tile_shapes(1, 64)
        for i in ptoc.loop(2, 5):
            y[i] = x[i] - 1.0

    x = rand(8, 64)
    y = np.full_like(x, 5.0)
    some_rows(x, y)
    want = np.full_like(x, 5.0)
    want[2:5] = x[2:5] - 1.0
    np.testing.assert_allclose(y, want)


def test_accumulator_read_modify_write_across_iterations():
    @ptoc.jit
    def colsum(x: ptoc.Tensor([32, 4, 64], F32)):
        ptoc.set_vec_tile_shapes(4, 64)
        acc = ptoc.full([4, 64], 0.0, F32)
        for i in ptoc.loop(32, name="k"):
            acc[:] = acc + x[i] * x[i]
        return acc + 0.0

    x = rand(32, 4, 64)
    got = colsum(x)
    np.testing.assert_allclose(got, (x * x).sum(axis=0), rtol=1e-5)
    summary = colsum.last_run.summary
    assert "loops:" in summary
    # The chain is real: every iteration waits for the previous one's write.
    k = colsum.compile(x)
    assert k.stats["root_functions"] == 3  # the zeros, the body, the final add


def test_values_computed_before_the_loop_are_read_inside_it():
    @ptoc.jit
    def scaled(x: ptoc.Tensor([8, 64], F32), w: ptoc.Tensor([1, 64], F32), y):
        ptoc.set_vec_tile_shapes(1, 64)
        s = ptoc.exp(w)               # computed once, outside the loop
        for i in ptoc.loop(8):
            y[i] = x[i] * s
        return s

    x, w = rand(8, 64), rand(1, 64, seed=1)
    y = np.zeros_like(x)
    s = scaled(x, w, y)
    np.testing.assert_allclose(s, np.exp(w), rtol=1e-6)
    np.testing.assert_allclose(y, x * np.exp(w), rtol=1e-6)


def test_nested_loops_over_heads_and_blocks():
    @ptoc.jit
    def blocks(x: ptoc.Tensor([4, 128, 64], F32), y):
        ptoc.set_vec_tile_shapes(32, 64)
        for h in ptoc.loop(4, name="h"):
            for j in ptoc.loop(4, name="j"):
                y[h, j * 32:(j + 1) * 32, :] = x[h, j * 32:(j + 1) * 32, :] + (1.0)

    x = rand(4, 128, 64)
    y = np.zeros_like(x)
    blocks(x, y)
    np.testing.assert_allclose(y, x + 1.0)
    k = blocks.compile(x, y)
    assert k.stats["root_functions"] == 1
    assert k.stats["tasks"] == 16


def test_stitch_size_changes_the_simulated_time_not_the_result():
    @ptoc.jit
    def rows(x: ptoc.Tensor([256, 64], F32), y):
        ptoc.set_vec_tile_shapes(1, 64)
        for i in ptoc.loop(256):
            y[i] = x[i] * 2.0

    x = rand(256, 64)
    times = {}
    for n in (1, 128):
        y = np.zeros_like(x)
        f = rows.with_config(runtime_options={"stitch_function_max_num": n})
        f(x, y)
        np.testing.assert_allclose(y, x * 2.0)
        times[n] = f.last_run
    # One iteration per stitch puts a barrier after every iteration.
    assert times[1].simulated_us > times[128].simulated_us
    assert "control_bound" in times[1].summary


def test_a_value_computed_in_the_body_cannot_escape():
    @ptoc.jit
    def leak(x: ptoc.Tensor([4, 64], F32), y):
        ptoc.set_vec_tile_shapes(1, 64)
        for i in ptoc.loop(4):
            t = x[i] * 2.0
            y[i] = t
        return t + 1.0

    x = rand(4, 64)
    with pytest.raises(ptoc.Error, match="computed inside loop"):
        leak(x, np.zeros_like(x))


def test_a_loop_that_writes_nothing_is_an_error():
    @ptoc.jit
    def idle(x: ptoc.Tensor([4, 64], F32)):
        ptoc.set_vec_tile_shapes(1, 64)
        for i in ptoc.loop(4, name="idle"):
            _ = x[i] * 2.0
        return x + 0.0

    with pytest.raises(ptoc.Error, match="loop 'idle' writes nothing"):
        idle(rand(4, 64))


def test_overlapping_writes_in_one_iteration_are_refused():
    @ptoc.jit
    def clash(x: ptoc.Tensor([8, 64], F32), y):
        ptoc.set_vec_tile_shapes(1, 64)
        for i in ptoc.loop(4):
            y[i:i + 2] = x[i:i + 2]
            y[i + 1] = x[i] * 2.0

    x = rand(8, 64)
    with pytest.raises(ptoc.Error, match="overlapping"):
        clash(x, np.zeros_like(x))


def test_symbolic_scalars_are_not_python_ints():
    @ptoc.jit
    def as_int(x: ptoc.Tensor([4, 64], F32), y):
        for i in ptoc.loop(4):
            y[int(i)] = x[i] + 1.0

    x = rand(4, 64)
    with pytest.raises(ptoc.Error, match="known only when the kernel runs"):
        as_int(x, np.zeros_like(x))


def test_an_out_of_range_window_is_reported_at_the_loop():
    @ptoc.jit
    def past(x: ptoc.Tensor([8, 64], F32), y):
        ptoc.set_vec_tile_shapes(1, 64)
        for i in ptoc.loop(8):
            y[i] = x[i + 1]

    x = rand(8, 64)
    with pytest.raises(ptoc.Error, match="outside"):
        past(x, np.zeros_like(x))


def test_stitch_option_is_checked():
    with pytest.raises(ptoc.OptionError):
        ptoc.jit(runtime_options={"stitch_function_max_num": 0})(lambda x: x)


def test_loop_unroll_covers_the_trip_greedily_with_one_body_per_factor():
    @ptoc.jit
    def scaled(x: ptoc.Tensor([11, 64], F32), y):
        ptoc.set_vec_tile_shapes(4, 64)
        for i, f in ptoc.loop_unroll(11, unroll_list=[4, 2, 1], name="u"):
            y[i:i + f] = x[i:i + f] * float(f)

    x = rand(11, 64)
    y = np.zeros_like(x)
    scaled(x, y)
    want = x.copy()
    want[:8] *= 4.0     # two steps of 4
    want[8:10] *= 2.0   # one of 2
    want[10:] *= 1.0    # one of 1
    np.testing.assert_allclose(y, want)
    k = scaled.compile(x, y)
    assert k.stats["root_functions"] == 3
    assert k.ir("tensor").count("loop %") == 3


def test_loop_unroll_without_a_factor_for_the_tail_is_an_error():
    @ptoc.jit
    def odd(x: ptoc.Tensor([7, 64], F32), y):
        for i, f in ptoc.loop_unroll(7, unroll_list=[4, 2]):
            y[i:i + f] = x[i:i + f]

    x = rand(7, 64)
    with pytest.raises(ptoc.Error, match="cannot cover 7 iterations"):
        odd(x, np.zeros_like(x))


def test_an_inner_bound_may_use_the_outer_index():
    @ptoc.jit
    def tri(x: ptoc.Tensor([4, 4, 64], F32)):
        ptoc.set_vec_tile_shapes(1, 64)
        acc = ptoc.full([4, 64], 0.0, F32)
        for q in ptoc.loop(4, name="q"):
            row = ptoc.full([1, 64], 0.0, F32)
            for k in ptoc.loop(0, q + 1, name="k"):
                row[:] = row + x[q, k]
            acc[q] = row
        return acc + 0.0

    x = rand(4, 4, 64)
    want = np.stack([x[q, :q + 1].sum(axis=0) for q in range(4)])
    np.testing.assert_allclose(tri(x), want, rtol=1e-5)


def _example(name):
    import importlib.util
    import os
    import pathlib
    import sys
    src = pathlib.Path(os.environ.get("PTOC_SOURCE_DIR") or
                       pathlib.Path(__file__).resolve().parents[2]) / "examples"
    sys.path.insert(0, str(src))
    spec = importlib.util.spec_from_file_location(name, src / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_flash_attention_matches_exact_attention(causal):
    fa = _example("flash_attention")
    rng = np.random.default_rng(3)
    shape = (2, 384, 64)
    q, k, v = (rng.standard_normal(shape).astype(np.float16) for _ in range(3))
    o = np.zeros(shape, np.float16)
    kernel = fa.make_flash_attention(1, 2, 384, 64, causal)
    kernel(q, k, v, fa.causal_bias(fa.block_for(384)), o)
    want = fa.reference(q, k, v, causal)
    np.testing.assert_allclose(o.astype(np.float64), want, rtol=2e-2, atol=4e-3)
    stats = kernel.compile(q, k, v, fa.causal_bias(fa.block_for(384)), o).stats
    # The key-block body is compiled once; causal runs 1 + 2 + 3 key blocks per head.
    blocks = 3
    iterations = 2 * (blocks * (blocks + 1) // 2 if causal else blocks * blocks)
    assert f"{iterations}" in kernel.last_run.summary.split("flash_attention.kb")[1].split()[1]
    assert stats["root_functions"] >= 2
    # batch x heads is dynamic: one head more runs on the same compiled kernel.
    q3, k3, v3 = (rng.standard_normal((3, 384, 64)).astype(np.float16) for _ in range(3))
    o3 = np.zeros((3, 384, 64), np.float16)
    kernel(q3, k3, v3, fa.causal_bias(fa.block_for(384)), o3)
    np.testing.assert_allclose(o3.astype(np.float64), fa.reference(q3, k3, v3, causal),
                               rtol=2e-2, atol=4e-3)
    assert kernel.cache_info().currsize == 1


def test_tune_a_kernel_with_a_dynamic_axis_for_the_calls_sizes(tmp_path):
    @ptoc.jit(host_options={"use_tune_bank": False})
    def rows(x: ptoc.Tensor([ptoc.DYNAMIC, 4, 256], F32), y: ptoc.Tensor([ptoc.DYNAMIC, 4, 256], F32)):
        ptoc.set_vec_tile_shapes(4, 64)
        for b in ptoc.loop(x.shape[0], name="b"):
            y[b] = ptoc.exp(x[b]) * 2.0
    x = np.random.default_rng(0).random((16, 4, 256), dtype=np.float32)
    y = np.zeros_like(x)
    r = ptoc.tune(rows, x, y, budget=8, seed=1, progress=False, use_bank=False,
                  result_dir=str(tmp_path))
    assert r.best_us is not None and r.best_us <= r.baseline_us
    rows(x, y)  # the tuned kernel, at these sizes and others
    np.testing.assert_allclose(y, np.exp(x) * 2, rtol=1e-6)
    x2 = x[:5].copy()
    y2 = np.zeros_like(x2)
    rows(x2, y2)
    np.testing.assert_allclose(y2, np.exp(x2) * 2, rtol=1e-6)


def test_tune_turns_the_knobs_inside_loop_bodies(tmp_path):
    @ptoc.jit(host_options={"use_tune_bank": False})
    def rows(x: ptoc.Tensor([64, 4, 256], F32), y):
        ptoc.set_vec_tile_shapes(4, 64)
        for b in ptoc.loop(64, name="b"):
            y[b] = ptoc.exp(x[b]) * 2.0

    x = rand(64, 4, 256)
    y = np.zeros_like(x)
    result = ptoc.tune(rows, x, y, budget=8, seed=1, bank=str(tmp_path / "bank"),
                       progress=False)
    assert "vec_tile[0]" in result.config          # the body's tile shape is a knob
    assert result.best_us < result.baseline_us
    rows(x, y)                                     # later calls run the tuned kernel
    np.testing.assert_allclose(y, np.exp(x) * 2.0, rtol=1e-6)
    assert rows.last_run.simulated_us == pytest.approx(result.best_us, rel=1e-9)


def test_paged_attention_reads_the_block_table_and_ragged_lengths():
    pa = _example("paged_attention")
    lens = [70, 256, 5, 129]
    q, k, v, table, seq, nb, mb = pa.random_problem(4, 2, 64, lens, seed=5)
    o = np.zeros_like(q)
    kernel = pa.make_paged_attention(4, 2, 64, nb, mb)
    kernel(q, k, v, table, seq, pa.mask_rows(), o)
    np.testing.assert_allclose(o.astype(np.float64), pa.reference(q, k, v, table, seq),
                               rtol=2e-2, atol=4e-3)
    # The key-block loop ran ceil(len / 64) times per sequence and head.
    blocks = sum(-(-n // 64) for n in lens) * 2
    row = kernel.last_run.summary.split("paged_attention.j")[1].split()
    assert int(row[1]) == blocks
    # Other lengths and tables: the same compiled kernel, iterations from the new values.
    lens2 = [200, 129, 65, 1]  # as many blocks in all, as long a table
    q2, k2, v2, table2, seq2, nb2, mb2 = pa.random_problem(4, 2, 64, lens2, seed=6)
    assert (nb2, mb2) == (nb, mb)
    o2 = np.zeros_like(q2)
    kernel(q2, k2, v2, table2, seq2, pa.mask_rows(), o2)
    assert kernel.cache_info().currsize == 1
    np.testing.assert_allclose(o2.astype(np.float64), pa.reference(q2, k2, v2, table2, seq2),
                               rtol=2e-2, atol=4e-3)


def test_values_read_from_an_int_tensor_select_windows():
    @ptoc.jit
    def gather_rows(x: ptoc.Tensor([16, 64], F32), idx: ptoc.Tensor([5], ptoc.DT_INT32), y):
        ptoc.set_vec_tile_shapes(1, 64)
        for i in ptoc.loop(5):
            y[i] = x[idx[i]] + 0.5

    x = rand(16, 64)
    idx = np.array([3, 0, 15, 3, 7], np.int32)
    y = np.zeros((5, 64), np.float32)
    gather_rows(x, idx, y)
    np.testing.assert_allclose(y, x[idx] + 0.5)
    bad = np.array([3, 0, 16, 3, 7], np.int32)
    with pytest.raises(ptoc.RunError, match="iteration"):
        gather_rows(x, bad, y)


def test_a_value_read_must_come_from_an_input_no_loop_writes():
    @ptoc.jit
    def self_indexed(x: ptoc.Tensor([4, 64], F32), idx: ptoc.Tensor([4], ptoc.DT_INT32)):
        ptoc.set_vec_tile_shapes(1, 64)
        out = ptoc.full([4, 64], 0.0, F32)
        for i in ptoc.loop(4):
            out[idx[i]] = x[i]
        for i in ptoc.loop(4, name="w"):
            idx[i:i + 1] = idx[i:i + 1]
        return out + 0.0

    x = rand(4, 64)
    with pytest.raises(ptoc.Error, match="reads 'idx', which the loop at"):
        self_indexed(x, np.arange(4, dtype=np.int32))


def test_tuning_a_kernel_whose_window_offsets_are_read_values_uses_the_calls_data(tmp_path):
    # The windows are rows named by idx: the tuner instantiates them with the call's
    # idx (docs/tuning.md); the tuned kernel still reads idx when it runs.
    @ptoc.jit(host_options={"use_tune_bank": False})
    def gather_rows(x: ptoc.Tensor([16, 64], F32), idx: ptoc.Tensor([5], ptoc.DT_INT32), y):
        ptoc.set_vec_tile_shapes(1, 64)
        for i in ptoc.loop(5):
            y[i] = x[idx[i]] + 0.5

    x, y = rand(16, 64), np.zeros((5, 64), np.float32)
    idx = np.array([3, 0, 15, 3, 7], np.int32)
    gather_rows(x, idx, y)
    called = gather_rows.last_run.simulated_us
    r = ptoc.tune(gather_rows, x, idx, y, space={"vec_tile": [(1, 64)]}, budget=2,
                  progress=False, use_bank=False, result_dir=str(tmp_path))
    assert r.baseline_us == pytest.approx(called, rel=1e-9)
    other = np.array([15, 14, 1, 1, 2], np.int32)
    gather_rows(x, other, y)
    np.testing.assert_allclose(y, x[other] + 0.5, rtol=1e-6)


def test_a_trace_of_nested_loops_counts_every_run_of_a_body(tmp_path):
    @ptoc.jit(debug_options={"runtime_debug_mode": 1, "output_dir": str(tmp_path)})
    def blocks(x: ptoc.Tensor([4, 128, 64], F32), y):
        ptoc.set_vec_tile_shapes(32, 64)
        for h in ptoc.loop(4, name="h"):
            for j in ptoc.loop(4, name="j"):
                y[h, j * 32:(j + 1) * 32, :] = x[h, j * 32:(j + 1) * 32, :] + 1.0

    x = rand(4, 128, 64)
    blocks(x, np.zeros_like(x))
    # The same iteration values recur under every h: 16 runs of the body, not 4.
    analysis = ptoc.profile.analyze(blocks.last_run.output_folder)
    bodies = {b["name"]: b for b in analysis["loops"]["bodies"]}
    assert bodies["blocks.j"]["iterations"] == 16
    assert "blocks.j" in blocks.last_run.summary
    row = blocks.last_run.summary.split("blocks.j")[1].split()
    assert int(row[1]) == 16


# --- is_loop_begin / is_loop_end: runtime branches compiled once per path -------------

def first_last_kernel():
    @ptoc.jit(device="tiny")
    def acc(x: ptoc.Tensor([ptoc.DYNAMIC, 64], ptoc.DT_FP32),
            out: ptoc.Tensor([2, 64], ptoc.DT_FP32)):
        ptoc.set_vec_tile_shapes(64)
        s = ptoc.full([64], 0.0, ptoc.DT_FP32)
        for i in ptoc.loop(x.shape[0], name="k"):
            if ptoc.is_loop_begin(i):
                s[:] = x[i] + 100.0          # the first iteration starts the sum
            else:
                s[:] = s + x[i]
            if ptoc.is_loop_end(i):
                out[0] = s * 2.0             # the last one writes it out
                out[1] = x[i] * 3.0
    return acc


@pytest.mark.parametrize("n", [1, 2, 3, 7])
def test_begin_and_end_branches_match_numpy_at_every_trip_count(n):
    acc = first_last_kernel()
    x = np.random.default_rng(n).random((n, 64), dtype=np.float32)
    out = np.zeros((2, 64), np.float32)
    acc(x, out)
    np.testing.assert_allclose(out[0], (x.sum(0) + 100) * 2, rtol=1e-5)
    np.testing.assert_allclose(out[1], x[-1] * 3, rtol=1e-6)


def test_each_branch_path_is_compiled_once_and_counted():
    acc = first_last_kernel()
    for n in (1, 4, 9):
        x = np.ones((n, 64), np.float32)
        acc(x, np.zeros((2, 64), np.float32))
    assert acc.cache_info().currsize == 1
    k = acc.compile(np.ones((3, 64), np.float32), np.zeros((2, 64), np.float32))
    # begin x end answers: (T, T), (T, F), (F, F), (F, T) -> four bodies, four loops
    assert k.stats["loop_paths"] == {"k": 4}
    assert k.ir("tensor").count(" = loop %x") == 4


def test_a_begin_test_alone_peels_the_first_iteration():
    @ptoc.jit(device="tiny")
    def f(x: ptoc.Tensor([6, 64], ptoc.DT_FP32), y: ptoc.Tensor([6, 64], ptoc.DT_FP32)):
        ptoc.set_vec_tile_shapes(64)
        for i in ptoc.loop(1, 6, 2, name="r"):   # i = 1, 3, 5
            y[i] = x[i] + (10.0 if ptoc.is_loop_begin(i) else 20.0)
    x = np.zeros((6, 64), np.float32)
    y = np.zeros_like(x)
    f(x, y)
    np.testing.assert_array_equal(y[:, 0], [0, 10, 0, 20, 0, 20])
    k = f.compile(x, y)
    assert k.stats["loop_paths"] == {"r": 2}


def test_loop_flags_need_the_index_of_an_enclosing_loop():
    @ptoc.jit(device="tiny")
    def f(x: ptoc.Tensor([4, 64], ptoc.DT_FP32), y: ptoc.Tensor([4, 64], ptoc.DT_FP32)):
        ptoc.set_vec_tile_shapes(64)
        for i in ptoc.loop(4):
            if ptoc.is_loop_end(i + 1):
                y[i] = x[i] + 1.0
    with pytest.raises(ptoc.Error, match=r"ptoc.is_loop_end takes the index of an enclosing "
                       r"ptoc.loop"):
        f(np.zeros((4, 64), np.float32), np.zeros((4, 64), np.float32))


# --- if on symbolic scalars: runtime branches --------------------------------------

def test_if_on_an_index_is_a_runtime_branch_with_one_body_per_path():
    @ptoc.jit(device="tiny")
    def f(x: ptoc.Tensor([ptoc.DYNAMIC, 64], F32), y: ptoc.Tensor([ptoc.DYNAMIC, 64], F32),
          val: float):
        ptoc.set_vec_tile_shapes(64)
        for i in ptoc.loop(x.shape[0], name="r"):
            if i < 2:
                y[i] = x[i] + val
            else:
                y[i] = x[i] * 2.0
    for n in (1, 3, 6):
        x = rand(n, 64)
        y = np.zeros_like(x)
        f(x, y, 5.0)
        np.testing.assert_allclose(y, np.where(np.arange(n)[:, None] < 2, x + 5, x * 2),
                                   rtol=1e-6)
    assert f.cache_info().currsize == 1
    assert f.compile(x, y, 5.0).stats["loop_paths"] == {"r": 2}


def test_a_condition_on_an_outer_index_inside_an_inner_loop():
    # PyPTO's condition example: nested loops, `if i == 0` in the inner body.
    @ptoc.jit(device="tiny")
    def f(a: ptoc.Tensor([2, 16], F32), b: ptoc.Tensor([2, 16], F32), y: ptoc.Tensor([2, 16], F32)):
        ptoc.set_vec_tile_shapes(1, 8)
        for i in ptoc.loop(2):
            for j in ptoc.loop(2):
                av, bv = a[i:i + 1, j * 8:j * 8 + 8], b[i:i + 1, j * 8:j * 8 + 8]
                if i == 0:
                    y[i:i + 1, j * 8:j * 8 + 8] = av + bv
                else:
                    y[i:i + 1, j * 8:j * 8 + 8] = av - bv
    a, b = rand(2, 16), rand(2, 16)
    y = np.zeros_like(a)
    f(a, b, y)
    np.testing.assert_allclose(y, np.stack([a[0] + b[0], a[1] - b[1]]), rtol=1e-6)


def test_conditions_combine_and_a_path_may_do_nothing():
    @ptoc.jit(device="tiny")
    def f(x: ptoc.Tensor([8, 64], F32), y: ptoc.Tensor([8, 64], F32)):
        ptoc.set_vec_tile_shapes(64)
        for i in ptoc.loop(8, name="r"):
            if (i % 2 == 0 and i != 4) or ptoc.is_loop_end(i):
                y[i] = x[i] + 1.0                      # rows 0, 2, 6 and 7; others untouched
    x = rand(8, 64)
    y = np.full_like(x, -1.0)
    f(x, y)
    rows = np.array([0, 2, 6, 7])
    np.testing.assert_allclose(y[rows], x[rows] + 1, rtol=1e-6)
    np.testing.assert_array_equal(np.delete(y, rows, axis=0), -1.0)


def test_an_accumulator_keeps_the_iteration_order_across_paths():
    @ptoc.jit(device="tiny")
    def f(x: ptoc.Tensor([6, 64], F32), out: ptoc.Tensor([1, 64], F32)):
        ptoc.set_vec_tile_shapes(64)
        s = ptoc.full([64], 0.0, F32)
        for i in ptoc.loop(6, name="k"):
            if i % 3 == 1:
                s[:] = s * 0.5 + x[i]
            else:
                s[:] = s + x[i]
        out[0] = s * 1.0 + 0.0
    x = rand(6, 64)
    out = np.zeros((1, 64), np.float32)
    f(x, out)
    want = np.zeros(64, np.float64)
    for i in range(6):
        want = want * 0.5 + x[i] if i % 3 == 1 else want + x[i]
    np.testing.assert_allclose(out[0], want, rtol=1e-5)


def test_a_branch_outside_loops_is_named():
    @ptoc.jit(device="tiny")
    def f(x: ptoc.Tensor([ptoc.DYNAMIC, 64], F32), y: ptoc.Tensor([ptoc.DYNAMIC, 64], F32)):
        ptoc.set_vec_tile_shapes(64)
        if x.shape[0] > 4:
            for i in ptoc.loop(x.shape[0]):
                y[i] = x[i] + 1.0
    with pytest.raises(ptoc.Error, match=r"branches on a value known only when the kernel runs, "
                       r"outside any ptoc.loop body"):
        f(rand(6, 64), np.zeros((6, 64), np.float32))


# --- the step: positional or step=, in ptoc.loop, ptoc.loop_unroll and pypto.loop ------

def stepped(loop_call):
    """A kernel writing x * 2 into the rows loop_call() visits; the rest stay 5."""
    @ptoc.jit(device="tiny")
    def f(x: ptoc.Tensor([10, 64], F32), y: ptoc.Tensor([10, 64], F32)):
        ptoc.set_vec_tile_shapes(64)
        for i in loop_call():
            y[i] = x[i] * 2.0
    x = rand(10, 64)
    y = np.full_like(x, 5.0)
    f(x, y)
    return x, y


@pytest.mark.parametrize("call, rows", [
    (lambda: ptoc.loop(0, 8, step=2), range(0, 8, 2)),
    (lambda: ptoc.loop(10, step=3), range(0, 10, 3)),
    (lambda: ptoc.loop(1, 10, 4), range(1, 10, 4)),
    (lambda: ptoc.loop(1, 10, step=4, name="s", idx_name="j"), range(1, 10, 4)),
])
def test_a_loops_step_visits_the_rows_of_range(call, rows):
    x, y = stepped(call)
    want = np.full_like(x, 5.0)
    want[list(rows)] = x[list(rows)] * 2.0
    np.testing.assert_allclose(y, want)


@pytest.mark.parametrize("step", [0, -1, -2])
def test_a_step_below_one_is_an_error_saying_loops_count_up(step):
    with pytest.raises(ptoc.Error, match=rf"test_loops.py:\d+: error: ptoc.loop: step must be a "
                       rf"positive int, got {step}; loops count up"):
        stepped(lambda: ptoc.loop(8, 0, step=step))
    with pytest.raises(ptoc.Error, match=rf"ptoc.loop_unroll: step must be a positive int, got "
                       rf"{step}"):
        stepped(lambda: (i for i, f in ptoc.loop_unroll(0, 8, step=step)))


def test_a_step_given_twice_or_not_an_int_is_an_error():
    with pytest.raises(ptoc.Error, match=r"ptoc.loop: the step is given twice"):
        stepped(lambda: ptoc.loop(0, 8, 2, step=2))
    with pytest.raises(ptoc.Error, match=r"ptoc.loop: step must be a positive int \(a step known "
                       r"when tracing\), got float"):
        stepped(lambda: ptoc.loop(0, 8, step=2.0))


def test_loop_unroll_takes_a_step_keyword():
    # range(1, 10, 2) = 1, 3, 5, 7, 9: one step of 4 (1, 3, 5, 7) and one of 1 (9).
    @ptoc.jit(device="tiny")
    def f(x: ptoc.Tensor([10, 64], F32), y: ptoc.Tensor([10, 64], F32)):
        ptoc.set_vec_tile_shapes(64)
        for i, n in ptoc.loop_unroll(1, 10, step=2, unroll_list=[4, 1], name="u"):
            for k in range(n):
                y[i + 2 * k] = x[i + 2 * k] * float(n)
    x = rand(10, 64)
    y = np.full_like(x, 5.0)
    f(x, y)
    want = np.full_like(x, 5.0)
    want[[1, 3, 5, 7]] = x[[1, 3, 5, 7]] * 4.0
    want[9] = x[9]
    np.testing.assert_allclose(y, want)


def test_pypto_loop_passes_the_step_keyword_through():
    from ptoc import pypto
    import warnings

    @pypto.frontend.jit(device="tiny")
    def f(x: pypto.Tensor([10, 64], pypto.DT_FP32), y: pypto.Tensor([10, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(64)
        for i in pypto.loop(0, 8, step=2, name="even"):
            y[i] = x[i] * 2.0
        for i, n in pypto.loop_unroll(1, 8, 2, unroll_list=[2]):  # PyPTO adds the 1
            for k in range(n):
                y[i + 2 * k] = x[i + 2 * k] * 3.0
    x = rand(10, 64)
    y = np.full_like(x, 5.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # step= is used, not ignored
        f(x, y)
    want = np.full_like(x, 5.0)
    want[0:8:2] = x[0:8:2] * 2.0
    want[1:8:2] = x[1:8:2] * 3.0
    np.testing.assert_allclose(y, want)


# --- loop_unroll over a trip count known only at run time -------------------------------

def unrolled_rows(unroll_list, start=0, step=1):
    @ptoc.jit(device="tiny")
    def f(x: ptoc.Tensor([ptoc.DYNAMIC, 64], F32), y: ptoc.Tensor([ptoc.DYNAMIC, 64], F32)):
        ptoc.set_vec_tile_shapes(64)
        for i, n in ptoc.loop_unroll(start, x.shape[0], step, unroll_list=unroll_list, name="u"):
            for k in range(n):
                y[i + step * k] = x[i + step * k] * float(n)
    return f


def greedy_factors(rows, factors):
    """The factor that covers each of ``rows`` (a list of indices), greedily."""
    out, at = {}, 0
    for f in sorted(factors, reverse=True):
        count = (len(rows) - at) // f
        for r in rows[at:at + count * f]:
            out[r] = f
        at += count * f
    assert at == len(rows)
    return out


@pytest.mark.parametrize("factors, start, step", [([4, 2, 1], 0, 1), ([3, 1], 0, 1),
                                                  ([4, 1], 2, 1), ([2, 1], 1, 2)])
def test_loop_unroll_over_a_dynamic_axis_compiles_once_for_every_size(factors, start, step):
    f = unrolled_rows(factors, start, step)
    for n in (1, 2, 3, 6, 7, 8, 13):
        x = rand(n, 64, seed=n)
        y = np.full_like(x, 5.0)
        f(x, y)
        rows = list(range(start, n, step))
        want = np.full_like(x, 5.0)
        for r, factor in greedy_factors(rows, factors).items():
            want[r] = x[r] * float(factor)
        np.testing.assert_allclose(y, want, err_msg=f"{n} rows")
    assert f.cache_info().currsize == 1
    k = f.compile(x, y)
    assert k.stats["root_functions"] == len(factors)   # one body per factor
    assert k.ir("tensor").count("loop %") == len(factors)


def test_loop_unroll_over_a_dynamic_axis_needs_1_for_the_tail():
    f = unrolled_rows([4, 2])
    x = rand(7, 64)
    with pytest.raises(ptoc.Error, match=r"ptoc.loop_unroll: the trip count .* is known only when "
                       r"the kernel runs, so the factors \[4, 2\] may leave a tail; add 1"):
        f(x, np.zeros_like(x))


def test_loop_unroll_with_a_constant_distance_between_symbolic_bounds_is_planned_now():
    # start and stop symbolic, but stop - start = 5: planned when tracing (4 + 1).
    @ptoc.jit(device="tiny")
    def f(x: ptoc.Tensor([ptoc.DYNAMIC, 64], F32), y: ptoc.Tensor([ptoc.DYNAMIC, 64], F32)):
        ptoc.set_vec_tile_shapes(64)
        for b in ptoc.loop(x.shape[0] // 5, name="b"):
            for i, n in ptoc.loop_unroll(b * 5, b * 5 + 5, unroll_list=[4, 2], name="u"):
                y[i:i + n] = x[i:i + n] * float(n)
    x = rand(10, 64)
    y = np.zeros_like(x)
    with pytest.raises(ptoc.Error, match=r"cannot cover 5 iterations"):
        f(x, y)


def test_two_identical_loop_bodies_keep_groups_of_their_own():
    # Same body twice: each is a root function, so each has its own group 0 (func1_0,
    # func2_0) in the compile statistics and the summary; nothing merges across bodies
    # (test/loops/separate-bodies.pto checks the IR).
    @ptoc.jit(device="tiny")
    def f(x: ptoc.Tensor([8, 64], F32), y: ptoc.Tensor([8, 64], F32), z: ptoc.Tensor([8, 64], F32)):
        ptoc.set_vec_tile_shapes(64)
        for a in ptoc.loop(8, name="a"):
            y[a] = ptoc.exp(x[a])
        for b in ptoc.loop(8, name="b"):
            z[b] = ptoc.exp(x[b])
    x = rand(8, 64)
    y, z = np.zeros_like(x), np.zeros_like(x)
    k = f.compile(x, y, z)
    assert [(g["key"], g["hash_order"], g["size"]) for g in k.stats["groups"]] == [
        ("func1_0", 0, 1), ("func2_0", 0, 1)]
    f(x, y, z)
    np.testing.assert_allclose(y, np.exp(x), rtol=1e-6)
    np.testing.assert_allclose(z, np.exp(x), rtol=1e-6)
    groups = f.last_run.summary.split("\ngroups\n")[1].split("\n\n")[0]
    assert [line.split()[:4] for line in groups.splitlines()[1:]] == [
        ["func1_0", "AIV", "1", "8"], ["func2_0", "AIV", "1", "8"]]


# --- run-time errors name every enclosing index and the user's statement --------------

def test_a_window_error_in_nested_loops_names_every_index_and_points_at_the_window():
    import inspect

    @ptoc.jit(device="tiny")
    def f(x: ptoc.Tensor([ptoc.DYNAMIC, 64], F32), y: ptoc.Tensor([ptoc.DYNAMIC, 64], F32)):
        ptoc.set_vec_tile_shapes(64)
        for o in ptoc.loop(2, name="outer", idx_name="o"):
            for i in ptoc.loop(x.shape[0], name="inner", idx_name="i"):
                y[i] = x[i + o] + 1.0  # the window out of range at o = 1, i = 2
    lines, first = inspect.getsourcelines(test_a_window_error_in_nested_loops_names_every_index_and_points_at_the_window)
    at = next(k for k, s in enumerate(lines) if "the window out of range" in s)
    line, col = first + at, lines[at].index("x[i + o]") + 1
    x = rand(3, 64)
    with pytest.raises(ptoc.RunError) as e:
        f(x, np.zeros_like(x))
    msg = str(e.value)
    assert f"test_loops.py:{line}:{col}: error: loop 'inner' iteration o = 1, i = 2: ins window 0" in msg, msg
    assert "outside [0, 3)" in msg

