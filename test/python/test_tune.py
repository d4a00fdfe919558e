"""ptoc.tune: the derived-space search from Python, applied to later calls, with
the knowledge bank."""
import io
import json
import os
import sys

import numpy as np
import pytest

import ptoc


def softmax(x, y):
    ptoc.set_vec_tile_shapes(8, 256)
    e = ptoc.exp(x - ptoc.amax(x, dim=-1, keepdim=True))  # AMAX_LINE
    y[:] = e / ptoc.sum(e, dim=-1, keepdim=True)


AMAX_LINE = next(i for i, line in enumerate(open(__file__), 1) if line.endswith("# AMAX_LINE\n"))


def reference(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def test_tune_finds_no_worse_config_and_later_calls_use_it(tmp_path):
    f = ptoc.jit(softmax, device="tiny")
    x = np.random.default_rng(0).random((64, 256), dtype=np.float32)
    y = np.empty_like(x)
    r = ptoc.tune(f, x, y, strategy="grid", budget=16, bank=str(tmp_path / "bank"),
                  result_dir=str(tmp_path), progress=False)
    assert not r.bank_hit and 0 < r.evaluations <= 16
    assert r.best_us is not None and r.best_us <= r.baseline_us
    assert os.path.isfile(r.result_path)
    saved = json.load(open(r.result_path))
    assert len(json.dumps(saved)) > 0
    f(x, y)
    np.testing.assert_allclose(y, reference(x), rtol=1e-5, atol=1e-7)
    assert f.last_run.simulated_us == pytest.approx(r.best_us, rel=1e-6)


def test_the_bank_answers_a_known_signature_without_evaluations(tmp_path):
    bank = str(tmp_path / "bank")
    x = np.random.default_rng(1).random((64, 256), dtype=np.float32)
    first = ptoc.tune(ptoc.jit(softmax, device="tiny"), x, np.empty_like(x), strategy="random",
                      budget=6, bank=bank, result_dir=str(tmp_path), progress=False)
    again = ptoc.tune(ptoc.jit(softmax, device="tiny"), x, np.empty_like(x), strategy="random",
                      budget=6, bank=bank, result_dir=str(tmp_path), progress=False)
    assert not first.bank_hit and again.bank_hit and again.evaluations == 0
    assert again.best_us == pytest.approx(first.best_us, rel=1e-6)
    # Another shape is another signature: no reuse.
    x2 = np.random.default_rng(2).random((32, 256), dtype=np.float32)
    other = ptoc.tune(ptoc.jit(softmax, device="tiny"), x2, np.empty_like(x2),
                      strategy="random", budget=4, bank=bank, result_dir=str(tmp_path),
                      progress=False)
    assert not other.bank_hit and other.evaluations > 0


def test_tune_rejects_what_it_cannot_tune():
    with pytest.raises(ptoc.Error, match="@ptoc.jit function"):
        ptoc.tune(softmax, np.ones((64, 256), np.float32))
    with pytest.raises(ptoc.OptionError):
        x = np.ones((64, 256), np.float32)
        ptoc.tune(ptoc.jit(softmax, device="tiny"), x, np.empty_like(x), strategy="annealing",
                  use_bank=False, progress=False)


def test_jit_uses_the_bank_on_its_own_and_can_opt_out(tmp_path):
    bank = str(tmp_path / "bank")
    x = np.random.default_rng(3).random((64, 256), dtype=np.float32)
    tuned = ptoc.tune(ptoc.jit(softmax, device="tiny"), x, np.empty_like(x), strategy="grid",
                      budget=12, bank=bank, result_dir=str(tmp_path), progress=False)
    assert tuned.best_us is not None

    # A fresh jit function of the same operator: the bank answers, no tuning.
    fresh = ptoc.jit(softmax, device="tiny", host_options={"tune_bank_path": bank})
    y = np.empty_like(x)
    fresh(x, y)
    np.testing.assert_allclose(y, reference(x), rtol=1e-5, atol=1e-7)
    assert fresh.last_run.simulated_us == pytest.approx(tuned.best_us, rel=1e-6)
    assert fresh.compile(x, y).bank_config == tuned.config

    # Opting out compiles the function as written.
    written = ptoc.jit(softmax, device="tiny",
                       host_options={"tune_bank_path": bank, "use_tune_bank": False})
    written(x, y)
    assert written.compile(x, y).bank_config is None
    assert written.last_run.simulated_us == pytest.approx(tuned.baseline_us, rel=1e-6)

    # Another shape has no record: as written.
    x2 = np.random.default_rng(4).random((32, 256), dtype=np.float32)
    other = ptoc.jit(softmax, device="tiny", host_options={"tune_bank_path": bank})
    assert other.compile(x2, np.empty_like(x2)).bank_config is None


def test_a_space_of_ones_own_is_searched_and_says_why_configs_are_invalid(tmp_path):
    f = ptoc.jit(softmax, device="tiny")
    x = np.random.default_rng(5).random((64, 256), dtype=np.float32)
    y = np.empty_like(x)
    space = {"vec_tile": [(4, 256), (8, 256), (32, 256)],   # 32 rows do not fit tiny's UB
             "vec_nbuffer[0]": ["auto", 2],
             "device_sched_mode": [0, 3]}
    r = ptoc.tune(f, x, y, space=space, strategy="grid", budget=12, use_bank=False,
                  result_dir=str(tmp_path), progress=False)
    assert r.space_size == 12
    # The oversized tile is pruned before compiling (no evaluation spent on it) ...
    assert r.pruned == 4 and r.evaluations == 8
    assert len(r.invalid) == 4
    assert "8 evaluations, 4 invalid" in repr(r)
    for config, why in r.invalid:
        assert config["vec_tile"] == [32, 256]
        assert "vec_tile = [32,256] does not fit" in why and "UB" in why
        # The op is named with the user's line (the tracer's locations survive tuning).
        assert f"does not fit 'amax' at {__file__}:{AMAX_LINE}:" in why
    # ... and the best config is one of the space's, applied to later calls.
    assert set(r.config) == set(space)
    assert r.config["vec_tile"] in ([4, 256], [8, 256])
    f(x, y)
    np.testing.assert_allclose(y, reference(x), rtol=1e-5, atol=1e-7)
    assert f.last_run.simulated_us == pytest.approx(r.best_us, rel=1e-6)
    saved = json.load(open(r.result_path))
    assert [d["name"] for d in saved["space"]] == sorted(space)
    assert all(p["reason"] for p in saved["pruned_configs"])


def matmul(a, b):
    ptoc.set_cube_tile_shapes(32, [32, 64], 32)
    return ptoc.matmul(a, b, out_dtype=ptoc.DT_FP32)


def test_a_cube_tile_space_takes_set_cube_tile_shapes_form(tmp_path):
    f = ptoc.jit(matmul, device="tiny")
    a = np.random.default_rng(6).random((64, 128)).astype(np.float16)
    b = np.random.default_rng(7).random((128, 64)).astype(np.float16)
    r = ptoc.tune(f, a, b, space={"cube_tile": [(32, [32, 64], 32), (16, 32, [16, 32])],
                                     "cube_nbuffer[0]": [1, 2]},
                  strategy="grid", budget=4, use_bank=False, result_dir=str(tmp_path),
                  progress=False)
    assert r.evaluations == 4 and not r.invalid and r.best_us < r.baseline_us
    assert r.config["cube_tile"] in ([32, 32, 32, 64, 32, 32], [16, 16, 32, 32, 16, 32])
    c = f(a, b)
    assert f.last_run.simulated_us == pytest.approx(r.best_us, rel=1e-6)
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-3)


@pytest.mark.parametrize("space, message", [
    ([1, 2], "space must be a dict"),
    ({"vec_tile": 8}, "must list its values"),
    ({"vec_tiles": [[8, 256]]}, "unknown search space knob 'vec_tiles'"),
    ({"vec_tile[3]": [[8, 256]]}, "the function has 1 distinct vec_tile shape"),
    ({"cube_tile": [(1, 2)]}, "is not a cube tile"),
    ({"vec_nbuffer_setting": [2]}, "vec_nbuffer\\[k\\]"),
    ({"vec_tile": [[8, 256], [8, 256]]}, "lists the value \\[8,256\\] twice"),
])
def test_a_bad_space_is_an_error_that_says_what_to_write(space, message):
    f = ptoc.jit(softmax, device="tiny")
    x = np.ones((64, 256), np.float32)
    with pytest.raises(ptoc.Error, match=message):
        ptoc.tune(f, x, np.empty_like(x), space=space, use_bank=False, progress=False)


def test_a_space_of_ones_own_is_searched_even_when_the_bank_knows_the_kernel(tmp_path):
    bank = str(tmp_path / "bank")
    x = np.random.default_rng(8).random((64, 256), dtype=np.float32)
    known = ptoc.tune(ptoc.jit(softmax, device="tiny"), x, np.empty_like(x), strategy="random",
                      budget=4, bank=bank, result_dir=str(tmp_path), progress=False)
    assert not known.bank_hit
    mine = ptoc.tune(ptoc.jit(softmax, device="tiny"), x, np.empty_like(x),
                     space={"vec_tile": [(4, 256), (8, 256)]}, strategy="grid", bank=bank,
                     result_dir=str(tmp_path), progress=False)
    assert not mine.bank_hit and mine.evaluations == 2


def test_progress_bar_and_shared_compiles(tmp_path, capsys):
    x = np.random.default_rng(4).random((64, 256), dtype=np.float32)
    # Only the scheduler mode varies: four evaluations, one compile.
    r = ptoc.tune(ptoc.jit(softmax, device="tiny"), x, np.empty_like(x), strategy="grid",
                  budget=4, use_bank=False, result_dir=str(tmp_path),
                  space={"device_sched_mode": [0, 1, 2, 3]})
    assert r.evaluations == 4 and r.compiles == 1
    err = capsys.readouterr().err
    # Not a terminal: a line per tenth of the plan, the last one complete.
    lines = err.splitlines()
    assert lines, err
    assert all(line.startswith("tuning softmax: [") for line in lines), err
    assert lines[-1].startswith("tuning softmax: [####################] 4/4 evaluated, best ")
    assert lines[-1].endswith(" us")

    # A search that ends below its plan (pruned tiles) still writes its last report.
    ptoc.tune(ptoc.jit(softmax, device="tiny"), x, np.empty_like(x), strategy="grid",
              budget=8, use_bank=False, result_dir=str(tmp_path),
              space={"vec_tile": [(8, 256), (64, 256)], "device_sched_mode": [0, 1]})
    lines = capsys.readouterr().err.splitlines()
    assert lines[-1].startswith("tuning softmax: [") and ", 2 pruned" in lines[-1], lines
    assert " 2/4 evaluated" in lines[-1], lines


def test_progress_bar_redraws_in_place_on_a_terminal(tmp_path, monkeypatch):
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    x = np.random.default_rng(5).random((64, 256), dtype=np.float32)
    ptoc.tune(ptoc.jit(softmax, device="tiny"), x, np.empty_like(x), strategy="rl", budget=6,
              threads=1, use_bank=False, result_dir=str(tmp_path))
    out = terminal.getvalue()
    # One line, redrawn after every batch ("\r", clear to its end), ended once.
    assert out.count("\n") == 1 and out.endswith("\n"), repr(out)
    frames = [f for f in out.rstrip("\n").split("\r") if f]
    assert len(frames) == 6, repr(out)
    assert all(f.endswith("\x1b[K") for f in frames), repr(out)
    assert frames[-1].startswith("tuning softmax: [####################] 6/6 evaluated, best ")


def test_the_result_says_the_written_config_and_what_the_best_changed(tmp_path):
    f = ptoc.jit(softmax, device="tiny")
    x = np.random.default_rng(3).random((64, 256), dtype=np.float32)
    r = ptoc.tune(f, x, np.empty_like(x), strategy="grid", budget=16, use_bank=False,
                  result_dir=str(tmp_path), progress=False)
    # The kernel as written sets vec_tile (8, 256): the written config holds it.
    assert r.written_config["vec_tile[0]"] == [8, 256]
    assert r.written_config.keys() == r.config.keys()
    assert r.changed == {k: (r.written_config[k], v) for k, v in r.config.items()
                         if r.written_config[k] != v}
    if r.best_us < r.baseline_us:
        assert r.changed, "a faster config must differ from the written one"
    # A config the tuner was told is the only one: nothing changed.
    only = ptoc.tune(f, x, np.empty_like(x), space={"vec_tile": [(8, 256)]}, budget=4,
                     use_bank=False, result_dir=str(tmp_path), progress=False)
    assert only.changed == {}


def attention_kernel(own_mode=None, **jit_options):
    """A small attention on tiny whose scheduler modes simulate differently (0: 17.53
    us, 1: 18.14 us); `own_mode`: a device_sched_mode the function sets itself."""
    def attention(q, k, v):
        if own_mode is not None:
            ptoc.set_runtime_options(device_sched_mode=own_mode)
        ptoc.set_cube_tile_shapes([64, 64], [32, 128], [64, 64])
        s = ptoc.matmul(q, k, out_dtype=ptoc.DT_FP32, b_trans=True)
        ptoc.set_vec_tile_shapes(2, 256)
        e = ptoc.exp(s - ptoc.amax(s, dim=-1, keepdim=True))
        p = ptoc.cast(e / ptoc.sum(e, dim=-1, keepdim=True), ptoc.DT_FP16)
        ptoc.set_cube_tile_shapes([64, 64], [32, 64], [64, 64])
        return ptoc.matmul(p, v, out_dtype=ptoc.DT_FP32)

    return ptoc.jit(attention, device="tiny", **jit_options)


def test_the_kernel_as_written_is_measured_with_its_own_runtime_options(tmp_path):
    # A scheduler mode and a stitch size set on the kernel (jit options and inside the
    # function): the tuner's baseline is what a call of the kernel simulates.
    q = np.random.default_rng(4).uniform(-1, 1, (256, 64)).astype(np.float16)
    mode1, mode0 = (attention_kernel(runtime_options={"device_sched_mode": m}) for m in (1, 0))
    for k in (mode1, mode0):
        k(q, q, q)
    # On this kernel the modes differ (0: 17.53 us, 1: 18.14 us).
    assert mode1.last_run.simulated_us != pytest.approx(mode0.last_run.simulated_us, rel=1e-6)
    r = ptoc.tune(mode1, q, q, q, space={"vec_tile": [(2, 256)]}, budget=2, use_bank=False,
                  result_dir=str(tmp_path), progress=False)
    assert r.baseline_us == pytest.approx(mode1.last_run.simulated_us, rel=1e-9)
    # A space without a scheduler mode keeps the kernel's: the best is the same kernel.
    assert r.best_us == pytest.approx(mode1.last_run.simulated_us, rel=1e-9)

    x = np.random.default_rng(4).random((64, 256), dtype=np.float32)
    def rows_kernel(stitch):
        def rows(x, y):
            if stitch:
                ptoc.set_runtime_options(stitch_function_max_num=stitch)
            ptoc.set_vec_tile_shapes(1, 256)
            for i in ptoc.loop(x.shape[0], name="row"):
                y[i] = ptoc.exp(x[i])
        return ptoc.jit(rows, device="tiny")

    two, default = rows_kernel(2), rows_kernel(0)
    for k in (two, default):
        k(x, np.empty_like(x))
    # Stitches of 2 iterations open as soon as they are built (one stitch of all 64
    # waits for the whole build): another time than the default 128's.
    assert two.last_run.simulated_us != pytest.approx(default.last_run.simulated_us, rel=1e-6)
    t = ptoc.tune(two, x, np.empty_like(x), space={"vec_tile": [(1, 256)]}, budget=2,
                  use_bank=False, result_dir=str(tmp_path), progress=False)
    assert t.baseline_us == pytest.approx(two.last_run.simulated_us, rel=1e-9)
    assert t.best_us == pytest.approx(two.last_run.simulated_us, rel=1e-9)


def test_a_kernel_whose_loops_read_its_inputs_is_tuned_with_the_calls_data(tmp_path):
    # The trip count is a value of `n`: the tuner instantiates the loop with the data
    # of the call it is given, so its baseline is that call's simulated time.
    @ptoc.jit(device="tiny")
    def first_rows(x: ptoc.Tensor([64, 256]), n: ptoc.Tensor([1], ptoc.DT_INT32),
                   y: ptoc.Tensor([64, 256])):
        ptoc.set_vec_tile_shapes(1, 256)
        for g in ptoc.loop(1, name="g"):  # n[g] is read when the kernel runs
            for i in ptoc.loop(n[g], name="row"):
                y[i] = ptoc.exp(x[i])

    x = np.random.default_rng(5).random((64, 256), dtype=np.float32)
    baselines = {}
    for rows in (8, 48):
        n = np.array([rows], np.int32)
        first_rows(x, n, np.zeros_like(x))
        called = first_rows.last_run.simulated_us
        r = ptoc.tune(first_rows, x, n, np.zeros_like(x), space={"vec_tile": [(1, 256)]},
                      budget=2, use_bank=False, result_dir=str(tmp_path), progress=False)
        assert r.baseline_us == pytest.approx(called, rel=1e-9)
        baselines[rows] = r.baseline_us
        y = np.zeros_like(x)
        first_rows(x, n, y)  # the tuned kernel still reads n
        np.testing.assert_allclose(y[:rows], np.exp(x[:rows]), rtol=1e-6)
        assert not y[rows:].any()
    assert baselines[48] > baselines[8]


def test_a_kernels_own_scheduler_mode_is_as_written_and_the_tuned_one_runs(tmp_path):
    # The kernel runs with device_sched_mode 1 (set inside it): that is its written
    # config (a search never reports 0 -> 1 as a change), and the tuned mode is the one
    # the next call runs with (the kernel's own setting does not win over it).
    q = np.random.default_rng(4).uniform(-1, 1, (256, 64)).astype(np.float16)
    kernel = attention_kernel(own_mode=1)
    kernel(q, q, q)
    own = kernel.last_run.simulated_us
    r = ptoc.tune(kernel, q, q, q, strategy="grid", budget=4, use_bank=False,
                  result_dir=str(tmp_path), progress=False,
                  space={"device_sched_mode": [0, 1, 2, 3]})
    assert r.written_config["device_sched_mode"] == 1
    assert r.baseline_us == pytest.approx(own, rel=1e-9)
    # On this kernel mode 1 is not the best (0: 17.53 us, 1: 18.14 us): a change.
    assert r.best_us < own and r.config["device_sched_mode"] != 1
    assert "device_sched_mode" in r.changed
    kernel(q, q, q)
    assert kernel.last_run.simulated_us == pytest.approx(r.best_us, rel=1e-9)


def test_a_kernel_with_two_loop_bodies_tunes_each_bodys_group(tmp_path):
    # Two loops whose bodies each cut 8 rows into one AIV group of eight (func1_0 and
    # func2_0): the derived space has a merge knob per body, and the tuned counts reach
    # the kernel's next compile through the tune result, body by body.
    def two_bodies(x, y):
        ptoc.set_vec_tile_shapes(1, 256)
        for i in ptoc.loop(2, name="a"):
            y[i * 8:(i + 1) * 8] = ptoc.exp(x[i * 8:(i + 1) * 8])
        for j in ptoc.loop(2, name="b"):
            y[j * 8:(j + 1) * 8] = ptoc.neg(y[j * 8:(j + 1) * 8])

    x = np.random.default_rng(6).random((16, 256), dtype=np.float32)
    derived = ptoc.tune(ptoc.jit(two_bodies, device="tiny"), x, np.zeros_like(x), budget=2,
                        use_bank=False, result_dir=str(tmp_path / "derived"), progress=False)
    assert {"vec_nbuffer[func1_0]", "vec_nbuffer[func2_0]"} <= set(derived.config)
    assert "vec_nbuffer[0]" not in derived.config

    # Written unmerged (each body's eight rows are eight tasks the AICPU control thread
    # builds one after another), so the grid's counts beat the function as written and
    # the tune result carries them.
    kernel = ptoc.jit(two_bodies, device="tiny", pass_options={"vec_nbuffer_mode": 0})
    space = {"vec_nbuffer[func1_0]": [1, 2], "vec_nbuffer[func2_0]": [4, 8]}
    r = ptoc.tune(kernel, x, np.zeros_like(x), space=space, strategy="grid", budget=4,
                  use_bank=False, result_dir=str(tmp_path / "grid"), progress=False)
    assert r.evaluations == 4 and not r.invalid and r.best_us < r.baseline_us
    with open(r.result_path) as f:
        saved = json.load(f)
    assert sorted(d["name"] for d in saved["space"]) == sorted(space)
    assert saved["best"]["config"] == r.config
    # The next compile runs the best config: each body's group merged by its own count.
    tuned = kernel.compile(x, np.zeros_like(x))
    sizes = {g["key"]: g["size"] for g in tuned.stats["groups"]}
    assert sizes == {"func1_0": 8 // r.config["vec_nbuffer[func1_0]"],
                     "func2_0": 8 // r.config["vec_nbuffer[func2_0]"]}
    assert "func1_0:" in tuned.pipeline and "func2_0:" in tuned.pipeline
    y = np.zeros_like(x)
    kernel(x, y)
    np.testing.assert_allclose(y, -np.exp(x), rtol=1e-6)
