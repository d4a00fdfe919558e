"""PyPTO's option names through ptoc's compatibility layer: each mapped option
changes the compiled kernel or its run as ptoc's own option does; each ignored one is
accepted and listed in exactly one warning."""

import os
import warnings

import numpy as np
import pytest

import ptoc
from ptoc import pypto
from ptoc.pypto import _options


@pytest.fixture(autouse=True)
def fresh_warnings(monkeypatch):
    # Each test sees ignored options as never warned about before.
    monkeypatch.setattr(_options, "_warned", set())


def rows_kernel(**jit_options):
    @pypto.frontend.jit(device="tiny", **jit_options)
    def k(x: pypto.Tensor([256, 64], pypto.DT_FP32), out: pypto.Tensor([256, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 64)
        out[:] = pypto.exp(x) + 1.0
    return k


X = np.random.default_rng(0).standard_normal((256, 64)).astype(np.float32)


def compiled(k):
    return k.compile(X, np.empty_like(X))


def test_vec_nbuffer_setting_maps_to_mode_2():

    one = compiled(rows_kernel(pass_options={"vec_nbuffer_setting": {"DEFAULT": 1}}))
    four = compiled(rows_kernel(pass_options={"vec_nbuffer_setting": {"func0_0": 4}}))
    assert "vec-nbuffer-mode=2 vec-nbuffer-setting={-1:1}" in one.pipeline
    # The function index stays: func0_0 is group 0 of function 0, as ptoc keys it.
    assert "vec-nbuffer-setting={func0_0:4}" in four.pipeline
    assert one.stats["tasks"] == 32                # 256 rows / 8: no merge
    assert four.stats["tasks"] == 8                # 4 tiles per task


def test_setting_keys_keep_their_function():
    # PyPTO's int keys and "func<F>_<order>" keys reach ptoc as they are (and leading
    # zeros go), so a per-function key sets that function's group only.
    ignored = []
    out = _options.translate("pass_options",
                             {"vec_nbuffer_setting": {"func01_002": 4, 3: 2, "DEFAULT": 1}},
                             ignored)
    assert out["pass_options"]["vec_nbuffer_setting"] == {"func1_2": 4, 3: 2, -1: 1}
    assert out["pass_options"]["vec_nbuffer_mode"] == 2
    assert ignored == []
    # A function that is no root function of the kernel is an error naming the key and
    # the keys that exist.
    k = rows_kernel(pass_options={"vec_nbuffer_setting": {"func3_0": 4}})
    with pytest.raises(ptoc.OptionError) as e:
        compiled(k)
    assert "vec-nbuffer-setting key func3_0 names function 3" in str(e.value)
    assert "valid keys (the AIV groups): 0 (or func0_0)" in str(e.value)


def test_cube_settings_map_to_their_modes():
    @pypto.frontend.jit(device="tiny", pass_options={"cube_l1_reuse_setting": {"DEFAULT": 2},
                                                     "cube_nbuffer_setting": {}})
    def mm(a: pypto.Tensor([64, 64], pypto.DT_FP16), b: pypto.Tensor([64, 64], pypto.DT_FP16),
           out: pypto.Tensor([64, 64], pypto.DT_FP32)):
        pypto.set_cube_tile_shapes([32, 32], [32, 32], [32, 32])
        out.move(pypto.matmul(a, b, pypto.DT_FP32))

    a = np.ones((64, 64), np.float16)
    k = mm.compile(a, a, np.empty((64, 64), np.float32))
    assert "cube-l1-reuse-mode=2 cube-l1-reuse-setting={-1:2}" in k.pipeline
    assert "cube-nbuffer-mode=1" in k.pipeline


def test_set_pass_options_inside_the_kernel():
    @pypto.frontend.jit(device="tiny")
    def k(x: pypto.Tensor([256, 64], pypto.DT_FP32), out: pypto.Tensor([256, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 64)
        pypto.set_pass_options(vec_nbuffer_setting={"DEFAULT": 2})
        out[:] = pypto.exp(x)

    assert compiled(k).stats["tasks"] == 16


def test_sg_set_scope_tuple_takes_the_id():
    @pypto.frontend.jit(device="tiny")
    def k(x: pypto.Tensor([256, 64], pypto.DT_FP32), out: pypto.Tensor([256, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 64)
        pypto.set_pass_options(sg_set_scope=(1, False, False))
        e = pypto.exp(x)
        pypto.set_pass_options(sg_set_scope=-1)
        out[:] = e + 1.0

    with pytest.warns(UserWarning, match="sg_set_scope's flags"):
        k_ = compiled(k)
    # The scoped exp is one task of its own.
    assert k_.stats["subgraphs"]["AIV"] >= 2
    assert any(g["size"] == 1 for g in k_.stats["groups"])


def test_runtime_options_reach_ptoc():
    k = rows_kernel(runtime_options={"run_mode": pypto.RunMode.SIM, "device_sched_mode": 3,
                                     "stitch_function_max_num": 7})
    assert k.ptoc_function.options.runtime_options == {"device_sched_mode": 3,
                                                        "stitch_function_max_num": 7}


def test_debug_options_write_a_run_folder(tmp_path):
    k = rows_kernel(debug_options={"runtime_debug_mode": 1, "compile_debug_mode": 1,
                                   "output_dir": str(tmp_path)})
    out = np.empty_like(X)
    k(X, out)
    np.testing.assert_allclose(out, np.exp(X) + 1, rtol=1e-5)
    assert os.path.isfile(k.last_run.swimlane_path)
    assert os.listdir(compiled(k).ir_dump_dir)


def test_runtime_debug_mode_above_ptocs_top_is_ptocs_top():
    k = rows_kernel(debug_options={"runtime_debug_mode": 9})
    assert k.ptoc_function.options.debug_options == {
        "runtime_debug_mode": ptoc._ptoc.MAX_DEBUG_MODE}


def test_host_compile_stage():
    k = rows_kernel(host_options={"compile_stage": "TENSOR_GRAPH"})
    r = k(X, np.empty_like(X))
    assert isinstance(r, ptoc.CompiledKernel) and r.stage == "tensor"


def test_ignored_options_give_exactly_one_warning():
    with pytest.warns(UserWarning) as record:
        rows_kernel(pass_options={"enable_slice": True},
                    runtime_options={"valid_shape_optimize": 1},
                    codegen_options={"support_dynamic_aligned": True})
        rows_kernel(pass_options={"enable_slice": True})
    msgs = [str(w.message) for w in record if "no effect in ptoc" in str(w.message)]
    assert len(msgs) == 1
    for name in ("pass_options.enable_slice", "runtime_options.valid_shape_optimize",
                 "codegen_options.support_dynamic_aligned"):
        assert name in msgs[0]


def test_options_decorator_and_context_manager():
    k = rows_kernel()
    out = np.empty_like(X)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")

        @pypto.options(pass_options={"enable_slice": True})
        def run():
            k(X, out)
            return k.last_run.tasks

        merged_auto = run()
        with pypto.options(pass_options={"vec_nbuffer_setting": {"DEFAULT": 1}}):
            k(X, out)
            unmerged = k.last_run.tasks
    assert unmerged == 32 and merged_auto != 32
    assert sum("enable_slice" in str(w.message) for w in record) == 1
    np.testing.assert_allclose(out, np.exp(X) + 1, rtol=1e-5)


def test_semantic_label_keys_and_labels_are_ignored():
    with pytest.warns(UserWarning, match=r"vec_nbuffer_setting\['V1'\]"):
        k = rows_kernel(pass_options={"vec_nbuffer_setting": {"DEFAULT": 2, "V1": 1}})
    assert compiled(k).stats["tasks"] == 16


def test_settings_without_effect_warn_once_and_run():
    @pypto.frontend.jit(device="tiny")
    def k(x: pypto.Tensor([256, 64], pypto.DT_FP32), out: pypto.Tensor([256, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 64)
        pypto.set_matrix_size([256, 64, 64])
        pypto.set_semantic_label("V1")
        pypto.set_codegen_options(support_dynamic_aligned=True)
        out[:] = pypto.exp(x)

    with pytest.warns(UserWarning) as record:
        k(X, np.empty_like(X))
    names = " ".join(str(w.message) for w in record)
    for n in ("set_matrix_size", "set_semantic_label", "codegen_options.support_dynamic_aligned"):
        assert names.count(n) == 1


def test_sim_run_mode_writes_the_cost_model_swimlane(tmp_path):
    k = rows_kernel(runtime_options={"run_mode": pypto.RunMode.SIM},
                    debug_options={"output_dir": str(tmp_path)})
    assert k.ptoc_function.options.debug_options["runtime_debug_mode"] == 1
    k(X, np.empty_like(X))
    folder = os.path.dirname(k.last_run.swimlane_path)
    assert os.path.isfile(os.path.join(folder, "CostModelSimulationOutput", "merged_swimlane.json"))
    # Explicit debug options win; NPU mode writes nothing by default.
    assert rows_kernel(runtime_options={"run_mode": pypto.RunMode.SIM},
                       debug_options={"runtime_debug_mode": 0}
                       ).ptoc_function.options.debug_options == {"runtime_debug_mode": 0}
    assert rows_kernel(runtime_options={"run_mode": pypto.RunMode.NPU}
                       ).ptoc_function.options.debug_options == {}
