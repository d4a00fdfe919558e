"""Effect tests for ptoc.options (context manager and decorator, ambient and inside a
traced function, nesting, precedence), debug_options, host_options and
runtime_options: each asserts what the option changes in the compiled kernel, the
run report or the files a run writes.
"""
import json
import os
import re

import numpy as np
import pytest

import ptoc

TINY = "tiny"  # 2 AIC / 4 AIV cores
RNG = np.random.default_rng(11)
ROWS = 64
X = RNG.random((ROWS, 256), dtype=np.float32)
SENTINEL = -7.0


def softmax_ref(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def row_softmax(x, y):
    """64 one-row tiles: 64 AIV subgraphs, merged by nbuffer-merge into 4 on tiny
    (its 4 AIV cores); vec_nbuffer_mode=0 keeps 64, {0: 8} in mode 2 gives 8."""
    ptoc.set_vec_tile_shapes(1, 256)
    m = ptoc.amax(x, dim=-1, keepdim=True)
    e = ptoc.exp(x - m)
    y[:] = e / ptoc.sum(e, dim=-1, keepdim=True)


NBUFFER_OFF = {"vec_nbuffer_mode": 0}                               # -> 64 subgraphs
NBUFFER_8 = {"vec_nbuffer_mode": 2, "vec_nbuffer_setting": {0: 8}}  # -> 8
DEFAULT_SUBGRAPHS = 4                                               # automatic


def subgraphs_of(f):
    return f.compile(X, np.empty_like(X)).stats["subgraphs"]["total"]


def fresh(body=row_softmax, **jit_options):
    return ptoc.jit(body, device=TINY, **jit_options)


def sentinel_out():
    return np.full_like(X, SENTINEL)


# --- ptoc.options: ambient ------------------------------------------------------

def test_options_context_manager_sets_ambient_pass_options():
    f = fresh()
    assert subgraphs_of(f) == DEFAULT_SUBGRAPHS
    with ptoc.options(pass_options=NBUFFER_OFF):
        assert subgraphs_of(f) == ROWS
    assert subgraphs_of(f) == DEFAULT_SUBGRAPHS  # restored on exit


def test_options_decorator_sets_ambient_options_for_the_call():
    f = fresh()

    @ptoc.options(pass_options=NBUFFER_8)
    def caller():
        return subgraphs_of(f)

    assert caller() == ROWS // 8
    assert subgraphs_of(f) == DEFAULT_SUBGRAPHS
    assert caller() == ROWS // 8  # the decorator applies again on every call


def test_nested_options_merge_inner_over_outer_and_restore():
    f = fresh()
    with ptoc.options(pass_options=NBUFFER_8):
        assert subgraphs_of(f) == ROWS // 8
        with ptoc.options(pass_options={"vec_nbuffer_setting": {0: 2}}):
            # The inner setting replaces the outer one; the outer mode 2 stays.
            k = f.compile(X, np.empty_like(X))
            assert k.stats["subgraphs"]["total"] == ROWS // 2
            assert "vec-nbuffer-mode=2" in k.pipeline
        assert subgraphs_of(f) == ROWS // 8
    assert subgraphs_of(f) == DEFAULT_SUBGRAPHS


def test_options_are_restored_after_an_exception():
    f = fresh()
    with pytest.raises(KeyError):
        with ptoc.options(pass_options=NBUFFER_OFF):
            assert subgraphs_of(f) == ROWS
            raise KeyError("boom")
    assert subgraphs_of(f) == DEFAULT_SUBGRAPHS

    @ptoc.options(pass_options=NBUFFER_OFF)
    def failing():
        raise KeyError("boom")

    with pytest.raises(KeyError):
        failing()
    assert subgraphs_of(f) == DEFAULT_SUBGRAPHS


# --- ptoc.options inside a traced function ---------------------------------------

def test_options_context_inside_the_traced_function_sets_kernel_options():
    def body(x, y):
        with ptoc.options(pass_options=NBUFFER_OFF, host_options={"double_buffer": False}):
            row_softmax(x, y)

    f = fresh(body)
    k = f.compile(X, np.empty_like(X))
    assert k.stats["subgraphs"]["total"] == ROWS
    assert "double_buffered false" in k.ir("codegen")
    y = sentinel_out()
    f(X, y)
    np.testing.assert_allclose(y, softmax_ref(X), rtol=2e-5, atol=1e-7)


def test_options_decorator_on_the_traced_function_sets_kernel_options():
    f = fresh(ptoc.options(pass_options=NBUFFER_8)(row_softmax))
    assert subgraphs_of(f) == ROWS // 8
    # Inside a trace nothing is left on the ambient stack.
    assert subgraphs_of(fresh()) == DEFAULT_SUBGRAPHS


def test_options_scope_inside_applies_to_the_block_only():
    def body(x, y):
        ptoc.set_vec_tile_shapes(1, 64)
        with ptoc.options(pass_options={"sg_set_scope": 3}):
            e = ptoc.exp(x)
        ptoc.set_vec_tile_shapes(2, 64)
        y[:] = -e

    x = X[:8, :64].copy()
    k = ptoc.jit(body, device=TINY).compile(x, np.empty_like(x))
    tensor = k.ir("tensor")
    assert re.search(r"= exp [^\n]*sg_scope = 3", tensor)
    assert not re.search(r"= neg [^\n]*sg_scope", tensor)
    part = k.ir("partitioned")
    assert len(set(re.findall(r"= exp [^\n]*\bsg = (\d+)", part))) == 1


# --- precedence: ambient < jit options < settings inside ---------------------------

def test_pass_option_precedence():
    inside = fresh(ptoc.options(pass_options={"vec_nbuffer_mode": 1})(row_softmax),
                   pass_options=NBUFFER_8)
    jit_only = fresh(pass_options=NBUFFER_8)
    plain = fresh()
    with ptoc.options(pass_options=NBUFFER_OFF):
        assert subgraphs_of(plain) == ROWS              # ambient applies
        assert subgraphs_of(jit_only) == ROWS // 8       # jit beats ambient
        assert subgraphs_of(inside) == DEFAULT_SUBGRAPHS  # inside beats both


def attention(q, k, y):
    ptoc.set_cube_tile_shapes([32, 32], [32, 32], [32, 32])
    s = ptoc.matmul(q, k, out_dtype=ptoc.DT_FP32, b_trans=True)
    ptoc.set_vec_tile_shapes(8, s.shape[1])
    m = ptoc.amax(s, dim=-1, keepdim=True)
    e = ptoc.exp(s - m)
    y[:] = e / ptoc.sum(e, dim=-1, keepdim=True)


# On a2 this kernel's simulated time differs between scheduler modes 0 and 1.
Q = RNG.random((512, 64), dtype=np.float32).astype(np.float16)
K = RNG.random((256, 64), dtype=np.float32).astype(np.float16)


def simulate_attention(f):
    f(Q, K, np.empty((512, 256), np.float32))
    return f.last_run


def test_runtime_option_precedence():
    mode0 = simulate_attention(ptoc.jit(attention, runtime_options={"device_sched_mode": 0}))
    mode1 = simulate_attention(ptoc.jit(attention, runtime_options={"device_sched_mode": 1}))
    assert mode0.simulated_us != mode1.simulated_us
    with ptoc.options(runtime_options={"device_sched_mode": 1}):
        ambient = simulate_attention(ptoc.jit(attention))
        jit_wins = simulate_attention(
            ptoc.jit(attention, runtime_options={"device_sched_mode": 0}))
    assert "sched mode 1," in ambient.summary and ambient.simulated_us == mode1.simulated_us
    assert "sched mode 0," in jit_wins.summary and jit_wins.simulated_us == mode0.simulated_us

    def body(q, k, y):
        ptoc.set_runtime_options(device_sched_mode=1)
        attention(q, k, y)
    with ptoc.options(runtime_options={"device_sched_mode": 0}):
        inside = simulate_attention(ptoc.jit(body, runtime_options={"device_sched_mode": 0}))
    assert "sched mode 1," in inside.summary and inside.simulated_us == mode1.simulated_us


def test_ambient_runtime_and_debug_options_apply_on_a_cache_hit(tmp_path):
    f = fresh()
    f(X, np.empty_like(X))
    assert f.last_run.swimlane_path == ""
    with ptoc.options(debug_options={"runtime_debug_mode": 1, "output_dir": str(tmp_path)}):
        f(X, np.empty_like(X))
    assert f.cache_info().hits == 1
    assert f.last_run.swimlane_path.startswith(str(tmp_path))


# --- debug_options ---------------------------------------------------------------

def run_with_debug(tmp_path, mode):
    f = fresh(debug_options={"runtime_debug_mode": mode, "output_dir": str(tmp_path)})
    y = np.empty_like(X)
    f(X, y)
    np.testing.assert_allclose(y, softmax_ref(X), rtol=2e-5, atol=1e-7)
    return f.last_run


def thread_names(trace):
    return [e["args"]["name"] for e in trace["traceEvents"]
            if e.get("ph") == "M" and e.get("name") == "thread_name"]


def test_runtime_debug_mode_0_writes_nothing(tmp_path):
    r = run_with_debug(tmp_path, 0)
    assert r.swimlane_path == "" and r.output_folder == ""
    assert r.simulated_us > 0
    assert not os.listdir(tmp_path)


def test_runtime_debug_mode_1_writes_swimlane_and_summary(tmp_path):
    r = run_with_debug(tmp_path, 1)
    folder = r.output_folder
    assert os.path.dirname(folder) == str(tmp_path)  # output_dir is honoured
    assert re.fullmatch(r"output_\d{8}_\d{6}_\d{6}_\d+(_\d+)?", os.path.basename(folder))
    assert {"merged_swimlane.json", "summary.txt", "summary.json"} <= set(os.listdir(folder))
    assert r.swimlane_path == os.path.join(folder, "merged_swimlane.json")
    trace = json.load(open(r.swimlane_path))
    tasks = [e for e in trace["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "task"]
    assert len(tasks) == r.tasks == DEFAULT_SUBGRAPHS
    assert not any(e.get("cat") == "pipe" for e in trace["traceEvents"])
    assert not any(" VEC" in n for n in thread_names(trace))
    summary = json.load(open(os.path.join(folder, "summary.json")))
    assert summary["simulated_us"] == pytest.approx(r.simulated_us, abs=1e-3)  # 3 decimals
    assert open(os.path.join(folder, "summary.txt")).read().strip() == r.summary.strip()


def test_runtime_debug_mode_2_adds_pipe_lanes(tmp_path):
    one, two = run_with_debug(tmp_path, 1), run_with_debug(tmp_path, 2)
    assert one.output_folder != two.output_folder
    trace = json.load(open(two.swimlane_path))
    names = thread_names(trace)
    for pipe in ("MTE2", "VEC", "MTE3"):  # the AIV pipes
        assert f"AIV_0 {pipe}" in names
    for pipe in ("MTE2", "MTE1", "CUBE", "FIXPIPE"):  # the AIC pipes
        assert f"AIC_0 {pipe}" in names
    pipe_events = [e for e in trace["traceEvents"] if e.get("cat") == "pipe"]
    assert {e["name"].split()[0] for e in pipe_events} >= {"MTE2", "MTE3"}
    assert len(names) > len(thread_names(json.load(open(one.swimlane_path))))
    assert two.simulated_us == one.simulated_us  # tracing does not change the timing


def test_compile_debug_mode_dumps_the_ir_after_every_pass(tmp_path):
    f = fresh(debug_options={"compile_debug_mode": 1, "output_dir": str(tmp_path)})
    k = f.compile(X, np.empty_like(X))
    assert k.ir_dump_dir.startswith(str(tmp_path) + os.sep) and k.ir_dump_dir.endswith("ir")
    passes = [p.split("{")[0] for p in k.pipeline.split(",")]
    files = sorted(os.listdir(k.ir_dump_dir))
    assert files == [f"{i:02d}_{p}.pto" for i, p in enumerate(passes, 1)]
    expand_file = f"{passes.index('expand-tiles') + 1:02d}_expand-tiles.pto"
    expand = open(os.path.join(k.ir_dump_dir, expand_file)).read()
    assert expand.startswith("// -----// IR Dump After expand-tiles")
    assert k.ir("tile").strip() in expand
    last = open(os.path.join(k.ir_dump_dir, files[-1])).read()
    assert k.ir("partitioned").strip() in last
    assert fresh().compile(X, np.empty_like(X)).ir_dump_dir == ""


# --- host_options ------------------------------------------------------------------

@pytest.mark.parametrize("stage", ["tensor", "tile", "partitioned"])
def test_compile_stage_stops_before_running(stage):
    f = fresh(host_options={"compile_stage": stage})
    y = sentinel_out()
    k = f(X, y)
    assert isinstance(k, ptoc.CompiledKernel) and k.stage == stage
    assert (y == SENTINEL).all()  # nothing ran
    assert f.last_run is None
    stages = ["tensor", "tile", "partitioned", "codegen"]
    for s in stages[:stages.index(stage) + 1]:
        assert k.ir(s)
    for later in stages[stages.index(stage) + 1:]:
        with pytest.raises(ptoc.Error, match=f"no {later} IR.*compiled to the {stage} stage"):
            k.ir(later)
    assert k.ir() == k.ir(stage)


def test_compile_stage_pipelines():
    tensor = fresh(host_options={"compile_stage": "tensor"}).compile(X, np.empty_like(X))
    tile = fresh(host_options={"compile_stage": "tile"}).compile(X, np.empty_like(X))
    assert tensor.pipeline == "" and tensor.stats["tasks"] == 0
    assert tile.pipeline.endswith("expand-tiles") and "partition" not in tile.pipeline
    assert "= copy_in " in tile.ir("tile") and "subgraph {" not in tile.ir("tile")


def test_compile_stage_codegen_runs():
    f = fresh(host_options={"compile_stage": "codegen"})
    y = sentinel_out()
    assert f(X, y) is None
    np.testing.assert_allclose(y, softmax_ref(X), rtol=2e-5, atol=1e-7)
    assert f.compile(X, y).stage == "codegen" and "leaf 0:" in f.compile(X, y).ir("codegen")


def test_double_buffer_false_serialises_transfers_and_compute():
    on = fresh()
    off = fresh(host_options={"double_buffer": False})
    assert "double_buffered true" in on.compile(X, X).ir("codegen")
    assert "double_buffered false" in off.compile(X, X).ir("codegen")
    assert "double_buffered true" not in off.compile(X, X).ir("codegen")
    y_on, y_off = np.empty_like(X), np.empty_like(X)
    on(X, y_on)
    off(X, y_off)
    np.testing.assert_array_equal(y_on, y_off)
    assert off.last_run.simulated_us > on.last_run.simulated_us


def test_verify_each_is_accepted_and_changes_nothing_on_valid_ir():
    # No observable effect on IR that verifies: it only adds checks after each pass.
    checked = fresh(host_options={"verify_each": True}).compile(X, X)
    unchecked = fresh(host_options={"verify_each": False}).compile(X, X)
    assert checked.ir("codegen") == unchecked.ir("codegen")
    with pytest.raises(ptoc.OptionError, match="verify_each"):
        ptoc.jit(row_softmax, host_options={"verify_each": "yes"})


def test_max_tile_ops_stops_a_compile_past_the_budget():
    # The kernel needs some tile ops; a budget below that is an error at the op that
    # crosses it, naming the option and the fix; the default compiles it.
    tiles = fresh().compile(X, X).stats["tile_ops"]
    assert tiles > 4
    small = fresh(host_options={"max_tile_ops": 4})
    with pytest.raises(ptoc.Error, match=r"past the 4 tile ops a compile may create \(host option "
                                         r"max_tile_ops.*use bigger tiles"):
        small.compile(X, X)
    assert fresh(host_options={"max_tile_ops": tiles}).compile(X, X).stats["tile_ops"] == tiles
    with pytest.raises(ptoc.OptionError, match="max_tile_ops"):
        ptoc.jit(row_softmax, host_options={"max_tile_ops": 0})


# --- runtime_options ---------------------------------------------------------------

def test_host_threads_give_identical_results():
    runs = []
    for threads in (1, 2):
        f = fresh(runtime_options={"host_threads": threads})
        y = np.empty_like(X)
        f(X, y)
        runs.append((y, f.last_run.simulated_us))
    np.testing.assert_array_equal(runs[0][0], runs[1][0])
    assert runs[0][1] == runs[1][1]
    np.testing.assert_allclose(runs[0][0], softmax_ref(X), rtol=2e-5, atol=1e-7)


def test_run_numerics_false_returns_defined_values_and_leaves_outputs_alone():
    """Issue 14, item 5: returned arrays were np.empty (uninitialised memory), and an
    output parameter that needs a copy back (another layout or dtype) got garbage."""
    @ptoc.jit(device="tiny", runtime_options={"run_numerics": False})
    def several(x, y, z: ptoc.Tensor(list(X.shape), ptoc.DT_BF16)):
        ptoc.set_vec_tile_shapes(8, 256)
        y[:] = x + 1.0
        z[:] = x + 2.0
        return (x * 2.0, ptoc.cast(x, ptoc.DT_BF16), ptoc.cast(x * 9.0, ptoc.DT_INT32))

    # Both outputs are copied back when computed: y has another layout, z (bf16, held
    # as float32 in numpy) another storage.
    y = np.asfortranarray(np.full(X.shape, SENTINEL, np.float32))
    z = np.full(X.shape, SENTINEL, np.float32)
    doubled, brain, whole = several(X, y, z)
    assert (y == SENTINEL).all() and (z == SENTINEL).all()
    assert doubled.shape == X.shape and doubled.dtype == np.float32
    assert np.isnan(doubled).all()
    assert brain.shape == X.shape and brain.dtype == np.float32 and np.isnan(brain).all()
    assert whole.shape == X.shape and whole.dtype == np.int32 and (whole == 0).all()
    assert several.last_run.simulated_us > 0
    # With numerics the same call computes all of them.
    computed = several.with_config(runtime_options={"run_numerics": True})
    doubled, brain, whole = computed(X, y, z)
    np.testing.assert_allclose(doubled, X * 2, rtol=1e-6)
    np.testing.assert_allclose(y, X + 1, rtol=1e-6)
    np.testing.assert_allclose(z, X + 2, rtol=1e-2)
    assert (whole == (X * 9).astype(np.int32)).all()


def test_run_numerics_false_simulates_only():
    timed = fresh(runtime_options={"run_numerics": False})
    computed = fresh()
    y = sentinel_out()
    assert timed(X, y) is None
    assert (y == SENTINEL).all()
    r = timed.last_run
    assert r.simulated_us > 0 and r.tasks == DEFAULT_SUBGRAPHS
    computed(X, np.empty_like(X))
    assert r.simulated_us == computed.last_run.simulated_us
