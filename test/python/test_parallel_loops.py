"""Parallel loops: ``ptoc.loop(..., parallel=True)`` and the runtime option
``device_sched_parallelism`` (docs/python.md, "Parallel loops"; docs/runtime.md):
the same results as the plain loop, the loop op's ``parallel`` attribute, overlapping
iterations that shorten a barrier-bound run, the option's range, and PyPTO's names
through the compatibility layer."""

import re
import warnings

import numpy as np
import pytest

import ptoc
import ptoc.profile
from ptoc import pypto
from ptoc.pypto import _options

F32 = ptoc.DT_FP32


def rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def blocks_kernel(parallel, device="a2"):
    """Eight iterations, each a few big tiles: on a2's cores, a barrier after every
    iteration leaves most of them idle."""
    @ptoc.jit(device=device)
    def blocks(x: ptoc.Tensor([8, 128, 512], F32), y):
        ptoc.set_vec_tile_shapes(32, 512)
        for b in ptoc.loop(8, name="b", parallel=parallel):
            y[b] = ptoc.exp(x[b]) * 2.0 + 1.0
    return blocks


def test_a_parallel_loop_computes_what_the_plain_loop_does():
    x = rand(8, 128, 512)
    plain, par = np.zeros_like(x), np.zeros_like(x)
    blocks_kernel(False)(x, plain)
    for p in (1, 4):
        out = np.zeros_like(x)
        blocks_kernel(True).with_config(runtime_options={"device_sched_parallelism": p})(x, out)
        np.testing.assert_array_equal(out, plain)
    np.testing.assert_allclose(plain, np.exp(x) * 2.0 + 1.0, rtol=1e-5)


def test_an_accumulator_stays_exact_even_if_marked_parallel():
    # The iterations are not independent (each adds into the same row): the promise is
    # false, but the data dependencies still order them, so the sum is exact.
    @ptoc.jit(device="tiny")
    def acc(x: ptoc.Tensor([6, 64], F32), s):
        ptoc.set_vec_tile_shapes(1, 64)
        for i in ptoc.loop(6, parallel=True):
            s[0] = s[0] + x[i]

    x = rand(6, 64)
    out = np.zeros((1, 64), np.float32)
    acc.with_config(runtime_options={"device_sched_parallelism": 8})(x, out)
    expect = np.zeros(64, np.float32)
    for i in range(6):
        expect = expect + x[i]
    np.testing.assert_array_equal(out[0], expect)


def test_the_loop_op_carries_parallel():
    x = rand(8, 128, 512)
    ir = blocks_kernel(True).compile(x, np.zeros_like(x)).ir("tensor")
    assert "parallel = true" in ir
    ir = blocks_kernel(False).compile(x, np.zeros_like(x)).ir("tensor")
    assert "parallel" not in ir


def barrier_wait_us(summary):
    """The summary's 'built stitches waiting at the barrier X us'."""
    m = re.search(r"built stitches waiting at the barrier ([0-9.]+) us", summary)
    assert m, summary
    return float(m.group(1))


def test_overlapping_iterations_shorten_a_barrier_bound_run():
    x = rand(8, 128, 512)
    times, runs = {}, {}
    for p in (1, 2, 4, 8):
        f = blocks_kernel(True).with_config(
            runtime_options={"device_sched_parallelism": p, "run_numerics": False})
        f(x, np.zeros_like(x))
        times[p], runs[p] = f.last_run.simulated_us, f.last_run
    plain = blocks_kernel(False).with_config(
        runtime_options={"stitch_function_max_num": 1, "run_numerics": False})
    plain(x, np.zeros_like(x))
    # P = 1: one iteration per stitch and the barrier, as a plain loop of 1-iteration
    # stitches; more iterations in flight shorten the run.
    assert times[1] == pytest.approx(plain.last_run.simulated_us)
    assert barrier_wait_us(runs[1].summary) > 0
    assert barrier_wait_us(runs[4].summary) < barrier_wait_us(runs[1].summary)
    assert times[4] < times[2] < times[1]
    assert times[8] <= times[4]
    # The control_bound advice names the parallel loop and the option.
    assert "device_sched_parallelism" in runs[1].summary


def test_device_sched_parallelism_is_checked():
    with pytest.raises(ptoc.OptionError, match=r"'device_sched_parallelism' must be an int in "
                                               r"\[0, 8\], got 9"):
        ptoc.jit(runtime_options={"device_sched_parallelism": 9})(lambda x: x)
    with pytest.raises(ptoc.OptionError, match="device_sched_parallelism"):
        ptoc.jit(runtime_options={"device_sched_parallelism": -1})(lambda x: x)
    # 0 is the default: derived from the kernel (docs/runtime.md "Parallel loops").
    ptoc.jit(runtime_options={"device_sched_parallelism": 0})(lambda x: x)


def test_parallel_must_be_a_bool():
    @ptoc.jit(device="tiny")
    def bad(x: ptoc.Tensor([4, 64], F32), y):
        for i in ptoc.loop(4, parallel="yes"):
            y[i] = x[i] + 1.0

    with pytest.raises(ptoc.Error, match="parallel must be True or False, got 'yes'"):
        bad(rand(4, 64), np.zeros((4, 64), np.float32))


def test_parallel_loops_with_runtime_branches_and_unrolling():
    # A body with an is_loop_begin path, one with a runtime condition, and an unrolled
    # loop: each is still exact when parallel.
    @ptoc.jit(device="tiny")
    def paths(x: ptoc.Tensor([8, 64], F32), y, z, u):
        ptoc.set_vec_tile_shapes(1, 64)
        for i in ptoc.loop(8, parallel=True):
            if ptoc.is_loop_begin(i):
                y[i] = x[i] * 3.0
            else:
                y[i] = x[i] + 1.0
        for i in ptoc.loop(8, name="c", parallel=True):
            if i < 3:
                z[i] = x[i] - 2.0
            else:
                z[i] = x[i] * 0.5
        for i, f in ptoc.loop_unroll(8, unroll_list=[4, 2], name="u", parallel=True):
            u[i:i + f] = x[i:i + f] * float(f)

    x = rand(8, 64)
    y, z, u = (np.zeros_like(x) for _ in range(3))
    paths.with_config(runtime_options={"device_sched_parallelism": 2})(x, y, z, u)
    np.testing.assert_allclose(y, np.concatenate([x[:1] * 3.0, x[1:] + 1.0]), rtol=1e-6)
    np.testing.assert_allclose(z, np.concatenate([x[:3] - 2.0, x[3:] * 0.5]), rtol=1e-6)
    np.testing.assert_allclose(u, x * 4.0, rtol=1e-6)


# ------------------------------------------------------------------ PyPTO's names

@pytest.fixture
def fresh_warnings(monkeypatch):
    monkeypatch.setattr(_options, "_warned", set())


def pypto_blocks(**jit_options):
    @pypto.frontend.jit(device="a2", **jit_options)
    def k(x: pypto.Tensor([8, 128, 512], pypto.DT_FP32),
          out: pypto.Tensor([8, 128, 512], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(1, 32, 512)
        for b in pypto.loop(0, 8, 1, name="b", idx_name="b", parallel=True):
            blk = pypto.view(x, [1, 128, 512], [b, 0, 0])
            pypto.assemble(pypto.exp(blk), [b, 0, 0], out)
    return k


def test_pypto_parallel_and_device_sched_parallelism_map_to_ptoc(fresh_warnings):
    x = rand(8, 128, 512)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # neither is "ignored" any more
        one = pypto_blocks(runtime_options={"device_sched_parallelism": 1})
        four = pypto_blocks(runtime_options={"device_sched_parallelism": 4})
        assert four.ptoc_function.options.runtime_options == {"device_sched_parallelism": 4}
        out1, out4 = np.zeros_like(x), np.zeros_like(x)
        one(x, out1)
        four(x, out4)
    np.testing.assert_array_equal(out1, out4)
    np.testing.assert_allclose(out4, np.exp(x), rtol=1e-5)
    assert "parallel = true" in four.compile(x, out4).ir("tensor")
    assert four.last_run.simulated_us < one.last_run.simulated_us


def test_pypto_set_runtime_options_takes_device_sched_parallelism(fresh_warnings):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        t = _options.translate_all(runtime_options={"device_sched_parallelism": 2})
    assert t["runtime_options"] == {"device_sched_parallelism": 2}


def test_the_tuner_measures_with_the_kernels_parallelism(tmp_path):
    # The baseline is what a call of the kernel simulates, with its own
    # device_sched_parallelism (TuneOptions::schedParallelism), not another value.
    x = rand(8, 128, 512)
    four = blocks_kernel(True).with_config(runtime_options={"device_sched_parallelism": 4})
    one = blocks_kernel(True).with_config(runtime_options={"device_sched_parallelism": 1})
    for k in (four, one):
        k(x, np.zeros_like(x))
    assert four.last_run.simulated_us < one.last_run.simulated_us
    t = ptoc.tune(four, x, np.zeros_like(x), space={"vec_tile": [(32, 512)]}, budget=1,
                  use_bank=False, result_dir=str(tmp_path), progress=False)
    assert t.baseline_us == pytest.approx(four.last_run.simulated_us, rel=1e-9)


def test_the_tuner_finds_the_parallelism_a_parallel_loop_wants(tmp_path):
    # device_sched_parallelism is a knob of the derived space only with a parallel
    # loop; its written value is the kernel's own.
    x = rand(8, 128, 512)
    opts = dict(budget=1, strategy="grid", use_bank=False, result_dir=str(tmp_path),
                progress=False)
    derived = ptoc.tune(blocks_kernel(True), x, np.zeros_like(x), **opts)
    assert derived.written_config["device_sched_parallelism"] == 0  # the default: automatic
    serial = ptoc.tune(blocks_kernel(False), x, np.zeros_like(x), **opts)
    assert "device_sched_parallelism" not in serial.written_config
    three = blocks_kernel(True).with_config(runtime_options={"device_sched_parallelism": 3})
    assert ptoc.tune(three, x, np.zeros_like(x), **opts).written_config[
        "device_sched_parallelism"] == 3

    # A grid over it picks more iterations in flight, says so, and the kernel then runs
    # with them: a call simulates the tuned time.
    k = blocks_kernel(True).with_config(runtime_options={"run_numerics": False,
                                                         "device_sched_parallelism": 1})
    r = ptoc.tune(k, x, np.zeros_like(x), space={"device_sched_parallelism": [1, 2, 4, 8]},
                  strategy="grid", budget=4, use_bank=False, result_dir=str(tmp_path),
                  progress=False)
    assert r.evaluations == 4
    best = r.config["device_sched_parallelism"]
    assert best > 1 and r.best_us < r.baseline_us
    assert r.changed == {"device_sched_parallelism": (1, best)}
    k(x, np.zeros_like(x))
    assert k.last_run.simulated_us == pytest.approx(r.best_us, rel=1e-9)
    assert k.last_run.simulated_us < r.baseline_us

    # The tuned value wins over one the function sets itself (the written one).
    @ptoc.jit(device="a2", runtime_options={"run_numerics": False})
    def own(x: ptoc.Tensor([8, 128, 512], F32), y):
        ptoc.set_runtime_options(device_sched_parallelism=1)
        ptoc.set_vec_tile_shapes(32, 512)
        for b in ptoc.loop(8, name="b", parallel=True):
            y[b] = ptoc.exp(x[b]) * 2.0 + 1.0

    t = ptoc.tune(own, x, np.zeros_like(x), space={"device_sched_parallelism": [1, best]},
                  strategy="grid", budget=2, use_bank=False, result_dir=str(tmp_path),
                  progress=False)
    assert t.changed == {"device_sched_parallelism": (1, best)}
    own(x, np.zeros_like(x))
    assert own.last_run.simulated_us == pytest.approx(t.best_us, rel=1e-9)


def test_a_bad_parallelism_in_a_tuning_space_is_a_clear_error(tmp_path):
    x = rand(8, 128, 512)
    with pytest.raises(ptoc.OptionError, match=r"search space knob 'device_sched_parallelism' "
                                               r"= 12: .* must be an integer in 1\.\.8"):
        ptoc.tune(blocks_kernel(True), x, np.zeros_like(x),
                  space={"device_sched_parallelism": [1, 12]}, use_bank=False,
                  result_dir=str(tmp_path), progress=False)
    with pytest.raises(ptoc.Error, match="'device_sched_parallelism' does not apply: the "
                                         "function has no parallel loop"):
        ptoc.tune(blocks_kernel(False), x, np.zeros_like(x),
                  space={"device_sched_parallelism": [1, 2]}, use_bank=False,
                  result_dir=str(tmp_path), progress=False)


def test_the_summary_and_the_trace_say_how_many_iterations_ran_at_once(tmp_path):
    x = rand(8, 128, 512)
    debug = {"runtime_debug_mode": 1, "output_dir": str(tmp_path)}
    derived = blocks_kernel(True).with_config(runtime_options={"run_numerics": False},
                                             debug_options=debug)
    derived(x, np.zeros_like(x))
    p = derived.last_run.sched_parallelism
    assert 1 <= p <= 8
    assert (f"parallel loops: {p} iteration{'s' if p > 1 else ''} at once (derived from the "
            "kernel and the device: device_sched_parallelism 0)") in derived.last_run.summary
    # The trace carries it, and the analysis of the trace reads it back.
    analysis = ptoc.profile.analyze(derived.last_run.swimlane_path)
    assert analysis["loops"]["parallelism"] == p
    assert analysis["loops"]["parallelism_derived"] is True

    two = blocks_kernel(True).with_config(
        runtime_options={"run_numerics": False, "device_sched_parallelism": 2},
        debug_options=debug)
    two(x, np.zeros_like(x))
    assert "parallel loops: 2 iterations at once (device_sched_parallelism 2)" in \
        two.last_run.summary
    analysis = ptoc.profile.analyze(two.last_run.swimlane_path)
    assert (analysis["loops"]["parallelism"], analysis["loops"]["parallelism_derived"]) == \
        (2, False)

    # A plain loop has no such line, and its analysis says 0.
    plain = blocks_kernel(False).with_config(runtime_options={"run_numerics": False},
                                             debug_options=debug)
    plain(x, np.zeros_like(x))
    assert "parallel loops:" not in plain.last_run.summary
    assert ptoc.profile.analyze(plain.last_run.swimlane_path)["loops"]["parallelism"] == 0
