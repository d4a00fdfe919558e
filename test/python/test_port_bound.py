"""Read stalls and the port_bound verdict (docs/outputs.md "Verdicts"): a router GEMM
whose cube tiles share rows of x, two tiles per row strip running on two cores at once,
is limited by the cores' own HBM ports. With every tile stepping K from 0
(cube_k_stagger=False, as the measured kernels do) the tiles that run at once read the
same slabs and wait for each other's fills; the verdict comes first, names the stagger
and the merge that runs the two tiles on one core, and each takes the run down."""
import json
import os

import numpy as np
import pytest

import ptoc
import ptoc.profile

US_TOLERANCE = 1.5e-3


def _router(tmp_path, stagger=False):
    # moe_gating's router (examples/llm/moe.py): 23 row strips of 176 and one of 48
    # (its own group), x 2 column tiles of 128: 48 tasks, two waves on a2's 24 cube cores.
    @ptoc.jit(device="a2", runtime_options={"run_numerics": False},
              pass_options={"cube_k_stagger": stagger},
              debug_options={"runtime_debug_mode": 1, "output_dir": str(tmp_path)})
    def router(x: ptoc.Tensor([4096, 7168], ptoc.DT_FP16),
               w: ptoc.Tensor([7168, 256], ptoc.DT_FP16)):
        ptoc.set_cube_tile_shapes([176, 176], [64, 256], [128, 128])
        return ptoc.matmul(x, w, out_dtype=ptoc.DT_FP32)

    return router


def _run(kernel):
    x = np.zeros((4096, 7168), np.float16)
    w = np.zeros((7168, 256), np.float16)
    kernel(x, w)
    run = kernel.last_run
    with open(os.path.join(run.output_folder, "summary.json")) as f:
        return run, json.load(f)


def test_port_bound_names_the_merge_that_helps(tmp_path):
    run, summary = _run(_router(tmp_path))
    aic = summary["cores"][0]
    assert aic["kind"] == "AIC" and aic["tasks"] == 48
    # Most of the cube tasks' time is reads: x strips missing L2 through each core's own
    # port, and the two tiles of a strip reading it at once (one waits for the other's fill).
    assert aic["read_stall_us"] > 0.3 * aic["busy_us"]
    assert 0 < aic["fill_wait_us"] < aic["read_stall_us"]
    assert "read stalls: AIC" in run.summary
    first = summary["verdicts"][0]
    assert (first["rule"], first["scope"]) == ("port_bound", "AIC")
    assert "cube_k_stagger=True" in first["knob"]
    assert "cube_nbuffer_setting={0: 2} for group func0_0" in first["knob"]
    evidence = first["evidence"]
    assert evidence["read_stall_us"] == pytest.approx(aic["read_stall_us"], abs=US_TOLERANCE)
    assert evidence["fill_wait_share"] >= 0.25

    # The knob as the verdict gives it: the tiles of a strip run on one core, the second
    # hits L2, the other cores' ports fetch other strips.
    merged, merged_summary = _run(_router(tmp_path).with_config(
        pass_options={"cube_k_stagger": False, "cube_nbuffer_mode": 2,
                      "cube_nbuffer_setting": {0: 2}}))
    merged_aic = merged_summary["cores"][0]
    assert merged_aic["tasks"] == 25  # 23 merged pairs, the 48-row strip's two tiles
    assert merged_aic["fill_wait_us"] < 0.5 * aic["fill_wait_us"]
    assert merged.simulated_us < 0.9 * run.simulated_us

    # The default, staggered K: the tiles that run at once read different slabs of w
    # (and the two tiles of a strip different slabs of x), so few reads wait for a fill.
    staggered, staggered_summary = _run(_router(tmp_path, stagger=True))
    staggered_aic = staggered_summary["cores"][0]
    assert staggered_aic["fill_wait_us"] < 0.1 * aic["fill_wait_us"]
    assert staggered.simulated_us < 0.8 * run.simulated_us


def test_read_stalls_round_trip_through_the_trace(tmp_path):
    run, summary = _run(_router(tmp_path))
    with open(run.swimlane_path) as f:
        tasks = [e for e in json.load(f)["traceEvents"] if e.get("cat") == "task"]
    assert all(0 <= e["args"]["fill_wait_us"] <= e["args"]["read_stall_us"] <= e["dur"]
               for e in tasks)
    a = ptoc.profile.analyze(run.swimlane_path)
    assert a["carries"]["read_stalls"]
    for mine, theirs in zip(a["cores"], summary["cores"]):
        assert mine["read_stall_us"] == pytest.approx(theirs["read_stall_us"], rel=1e-4)
        assert mine["fill_wait_us"] == pytest.approx(theirs["fill_wait_us"], rel=1e-4)
    assert [v["rule"] for v in a["verdicts"]][0] == "port_bound"
