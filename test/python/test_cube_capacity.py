"""Cube tiles under PyPTO's capacity rules: a tile that fills L0A/L0B (or L1) is
accepted, computes exactly, runs single-buffered, and the summary (text, JSON and
the trace read back by ptoc prof) names its group."""

import json
import os

import numpy as np
import pytest

import ptoc


def _matmul(k_l0, out_dir):
    @ptoc.jit(device="a2", debug_options={"runtime_debug_mode": 1, "output_dir": out_dir})
    def mm(x: ptoc.Tensor([256, 512], ptoc.DT_FP16), y: ptoc.Tensor([512, 256], ptoc.DT_FP16)):
        ptoc.set_cube_tile_shapes([128, 128], [k_l0, 512], [128, 128])
        return x @ y
    return mm


@pytest.fixture
def operands():
    rng = np.random.default_rng(7)
    return (rng.standard_normal((256, 512)).astype(np.float16),
            rng.standard_normal((512, 256)).astype(np.float16))


def test_a_tile_filling_l0_runs_single_buffered_and_says_so(operands, tmp_path):
    a, b = operands
    full = _matmul(256, str(tmp_path))   # 128x256 f16 = all of a2's 64 KiB L0A
    got = full(a, b)
    want = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(got.astype(np.float32), want, rtol=2e-3, atol=0.25)
    run = full.last_run
    assert "single-buffered (no room in a local buffer" in run.summary
    assert "func0_0" in run.summary.split("single-buffered")[1].splitlines()[0]
    summary = json.load(open(os.path.join(run.output_folder, "summary.json")))
    assert [g["single_buffered"] for g in summary["groups"]] == [True]
    # ptoc prof reads the same fact back from the trace.
    again = ptoc.profile.analyze(run.swimlane_path)
    assert [g["single_buffered"] for g in again["groups"]] == [True]

    half = _matmul(128, str(tmp_path))   # two L0 blocks per buffer: double-buffered
    np.testing.assert_array_equal(half(a, b), got)
    assert "single-buffered" not in half.last_run.summary
    # Loads that cannot overlap the cube cost time.
    assert half.last_run.simulated_us < run.simulated_us


def test_tiles_pypto_accepts_are_accepted(operands):
    a, b = operands

    @ptoc.jit(device="a2")
    def mm(x: ptoc.Tensor([256, 512], ptoc.DT_FP16), y: ptoc.Tensor([512, 256], ptoc.DT_FP16)):
        # L1: (128x512 + 512x256) x 2 bytes = 384 KiB <= 512 KiB once, not twice.
        ptoc.set_cube_tile_shapes([128, 128], [128, 512], [128, 256])
        return x @ y
    got = mm(a, b)
    np.testing.assert_allclose(got.astype(np.float32), a.astype(np.float32) @ b.astype(np.float32),
                               rtol=2e-3, atol=0.25)


def test_a_tile_over_l0a_still_names_the_fix(operands):
    a, b = operands

    @ptoc.jit(device="a2")
    def mm(x: ptoc.Tensor([256, 512], ptoc.DT_FP16), y: ptoc.Tensor([512, 256], ptoc.DT_FP16)):
        ptoc.set_cube_tile_shapes([256, 256], [256, 512], [64, 128])
        return x @ y
    with pytest.raises(ptoc.TileShapeError,
                       match="131072 bytes of L0A, but the device has 65536; halve kL0 to 128"):
        mm(a, b)
