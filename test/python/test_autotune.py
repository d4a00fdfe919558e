"""@ptoc.autotune(configs=...): every config compiled and simulated, the output
lines, the best chosen and kept, invalid configs skipped, per-call overrides."""
import io
import re

import numpy as np
import pytest

import ptoc

ROWS, COLS = 256, 4096


def softmax_body(x, y):
    ptoc.set_vec_tile_shapes(1, COLS, label="rows")
    e = ptoc.exp(x - ptoc.amax(x, dim=-1, keepdim=True))
    y[:] = e / ptoc.sum(e, dim=-1, keepdim=True)


def reference(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


CONFIGS = [
    {"vec_tile": (1, COLS)},
    {"vec_tile": (64, COLS)},                      # 2 MiB per buffer: does not fit UB
    {"vec_tile": (4, COLS), "pass_options": {"vec_nbuffer_mode": 0}},
    {"vec_tile": {"rows": (2, COLS)}},             # by label
]


def tuned(configs=CONFIGS, **kw):
    out = io.StringIO()
    f = ptoc.autotune(configs=configs, file=out, **kw)(ptoc.jit(softmax_body))
    return f, out


def test_every_config_is_reported_and_the_fastest_is_kept():
    f, out = tuned()
    x = np.random.default_rng(0).random((ROWS, COLS), dtype=np.float32)
    y = np.empty_like(x)
    f(x, y)
    np.testing.assert_allclose(y, reference(x), rtol=1e-5, atol=1e-7)

    lines = out.getvalue().splitlines()
    assert len(lines) == len(CONFIGS) + 1
    times = {}
    for i, line in enumerate(lines[:-1]):
        m = re.fullmatch(r"No\.(\d+): (\d+\.\d+)us, (.*)", line)
        if i == 1:
            assert re.fullmatch(r"No\.1: invalid \(.*UB.*\), \{'vec_tile': \(64, 4096\)\}", line), line
            continue
        assert m and int(m.group(1)) == i and m.group(3) == str(CONFIGS[i]), line
        times[i] = float(m.group(2))
    best = min(times, key=times.get)
    assert lines[-1] == f"Best config: No.{best}"
    assert f.best_config == CONFIGS[best]
    assert [r.valid for r in f.results] == [True, False, True, True]
    assert f.results[best].time_us == pytest.approx(times[best], abs=1e-3)
    # The call ran with the best config.
    assert f.last_run.simulated_us == pytest.approx(times[best], abs=1e-3)

    # Later calls with the same signature do not tune again.
    f(x, y)
    assert len(out.getvalue().splitlines()) == len(lines)
    np.testing.assert_allclose(y, reference(x), rtol=1e-5, atol=1e-7)


def test_config_shapes_reach_the_compiled_kernel():
    f, _ = tuned()
    x = np.ones((ROWS, COLS), np.float32)
    f(x, np.empty_like(x))
    tensor_ir = f.compile(x, np.empty_like(x)).ir("tensor")
    best_tile = f.best_config["vec_tile"]
    shape = best_tile["rows"] if isinstance(best_tile, dict) else best_tile
    assert f"vec_tile = [{shape[0]}, {shape[1]}]" in tensor_ir


def test_overrides_by_position_and_label_apply_to_their_call_only():
    def two_tiles(x):
        ptoc.set_vec_tile_shapes(8, 64)
        a = x * 2
        ptoc.set_vec_tile_shapes(8, 64, label="second")
        return a + 1

    base = ptoc.jit(two_tiles, device="tiny")
    x = np.ones((64, 64), np.float32)
    by_pos = base.with_config(vec_tile={0: (16, 64)}).compile(x).ir("tensor")
    assert "mul" in by_pos and re.search(r"mul .*vec_tile = \[16, 64\]", by_pos)
    assert re.search(r"add .*vec_tile = \[8, 64\]", by_pos)
    by_label = base.with_config(vec_tile={"second": (32, 64)}).compile(x).ir("tensor")
    assert re.search(r"mul .*vec_tile = \[8, 64\]", by_label)
    assert re.search(r"add .*vec_tile = \[32, 64\]", by_label)
    every = base.with_config(vec_tile=(4, 64)).compile(x).ir("tensor")
    assert len(re.findall(r"vec_tile = \[4, 64\]", every)) >= 2


def test_cube_tile_configs_and_pass_options():
    def mm(a, b):
        ptoc.set_cube_tile_shapes([32, 32], [32, 32], [32, 32])
        return ptoc.matmul(a, b, out_dtype=ptoc.DT_FP32)

    out = io.StringIO()
    configs = [
        {"cube_tile": ([32, 32], [32, 32], [32, 32])},
        {"cube_tile": ([64, 64], [32, 64], [64, 64])},
        {"cube_tile": ([32, 32], [32, 32], [32, 32]),
         "pass_options": {"cube_l1_reuse_mode": 2, "cube_l1_reuse_setting": {-1: 2}}},
    ]
    f = ptoc.autotune(configs=configs, file=out, repeat=1)(ptoc.jit(mm, device="tiny"))
    rng = np.random.default_rng(1)
    a = rng.standard_normal((128, 128)).astype(np.float16)
    b = rng.standard_normal((128, 128)).astype(np.float16)
    c = f(a, b)
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=2e-2, atol=2e-2)
    valid = [r for r in f.results if r.valid]
    assert len(valid) == 3
    assert f.best_config == configs[min(valid, key=lambda r: (r.time_us, r.index)).index]
    # Each config compiled as it says: its cube tile, its L1-reuse setting.
    kernels = {r.index: f._variant(r.index).compile(a, b) for r in valid}
    assert "m = [32, 32]" in kernels[0].ir("tensor")
    assert "m = [64, 64], k = [32, 64], n = [64, 64]" in kernels[1].ir("tensor")
    assert "cube-l1-reuse-mode=2" in kernels[2].pipeline
    assert "cube-l1-reuse-mode=2" not in kernels[0].pipeline


def test_all_invalid_configs_is_an_error_and_bad_configs_are_rejected():
    f, _ = tuned(configs=[{"vec_tile": (64, COLS)}, {"vec_tile": (128, COLS)}])  # both over UB
    x = np.ones((ROWS, COLS), np.float32)
    with pytest.raises(ptoc.Error, match="none of the 2 configs compiles"):
        f(x, np.empty_like(x))
    with pytest.raises(ptoc.OptionError, match="unknown key 'vec_tiles'"):
        ptoc.autotune(configs=[{"vec_tiles": (1, 2)}])
    with pytest.raises(ptoc.OptionError, match="at least one config"):
        ptoc.autotune(configs=[])
    with pytest.raises(ptoc.Error, match="above @ptoc.jit"):
        ptoc.autotune(configs=[{}])(softmax_body)
    # A config with a bad option value is reported and skipped, not fatal.
    g, out = tuned(configs=[{"pass_options": {"vec_nbuffer_mode": 9}}, {}])
    g(x, np.empty_like(x))
    assert out.getvalue().startswith("No.0: invalid (")
    assert g.best_config == {}
