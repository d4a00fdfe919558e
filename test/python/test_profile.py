"""ptoc.profile.analyze: the analysis of a @ptoc.jit run's trace agrees with the run
report, carries the documented keys, and a bad trace raises TraceError."""
import json
import os

import numpy as np
import pytest

import ptoc
import ptoc.profile

from conftest import TINY

# The top-level keys of analysis.json (docs/profiling.md "analysis.json keys").
ANALYSIS_KEYS = {"source", "run_summary", "func", "device", "sched_mode", "clock_mhz", "tasks",
                 "edges", "simulated_us", "head_us", "span_us", "bound_us", "ratio",
                 "span_ratio", "limiter", "bound", "cores", "bytes", "groups", "bubbles",
                 "top_tasks", "critical_path", "pipes", "verdicts", "family", "carries", "notes",
                 "control", "roots", "blocks"}
# Times in the trace and the analysis have three decimals (nanoseconds).
US_TOLERANCE = 1.5e-3


def _run_softmax(tmp_path, debug_mode):
    @ptoc.jit(device=TINY, debug_options={"runtime_debug_mode": debug_mode,
                                          "output_dir": str(tmp_path)})
    def softmax(x: ptoc.Tensor([64, 256], ptoc.DT_FP32)):
        ptoc.set_vec_tile_shapes(8, 256)
        m = ptoc.amax(x, dim=-1, keepdim=True)
        e = ptoc.exp(x - m)
        return e / ptoc.sum(e, dim=-1, keepdim=True)

    x = np.random.default_rng(0).random((64, 256), dtype=np.float32)
    softmax(x)
    return softmax.last_run


@pytest.mark.parametrize("debug_mode", [1, 2])
def test_analyze_agrees_with_the_run(tmp_path, debug_mode):
    run = _run_softmax(tmp_path, debug_mode)
    a = ptoc.profile.analyze(run.swimlane_path)
    assert set(a) == ANALYSIS_KEYS
    assert a["func"] == "softmax" and a["device"] == TINY
    assert a["simulated_us"] == pytest.approx(run.simulated_us, abs=US_TOLERANCE)
    assert a["bound_us"] == pytest.approx(run.bound_us, abs=US_TOLERANCE)
    cores = {k["kind"]: k for k in a["cores"]}
    for kind in ("AIC", "AIV"):
        assert cores[kind]["utilisation"] == pytest.approx(run.utilization[kind], abs=1e-3)
    # The groups add up to the tasks, their shares to 1.
    assert sum(g["tasks"] for g in a["groups"]) == a["tasks"]
    assert sum(g["share"] for g in a["groups"]) == pytest.approx(1, abs=1e-3)
    # Each core's span is its busy time plus the three kinds of idle.
    for core in a["bubbles"]["per_core"]:
        total = core["busy_us"] + core["sched_idle_us"] + core["dep_idle_us"] + core["tail_idle_us"]
        assert total == pytest.approx(a["span_us"], abs=1e-2)
    path = a["critical_path"]
    assert 0 < path["length_us"] <= a["span_us"] + US_TOLERANCE
    assert path["tasks"] == len(path["calls"]) >= 1
    assert (a["pipes"] is not None) == (debug_mode == 2)
    if debug_mode == 2:
        pipes = {(p["kind"], p["pipe"]) for p in a["pipes"]["per_pipe"]}
        assert {("AIV", "MTE2"), ("AIV", "VEC"), ("AIV", "MTE3")} <= pipes
    # The folder form gives the same analysis; nothing is written unless asked.
    folder = os.path.dirname(run.swimlane_path)
    assert ptoc.profile.analyze(folder)["critical_path"] == path
    assert not os.path.exists(os.path.join(folder, "analysis.json"))


def test_analyze_writes_and_matches_the_summary(tmp_path):
    run = _run_softmax(tmp_path, 1)
    folder = os.path.dirname(run.swimlane_path)
    a = ptoc.profile.analyze(folder, top=3, write=True)
    with open(os.path.join(folder, "analysis.json")) as f:
        assert json.load(f) == a
    assert len(a["top_tasks"]) == 3 and len(a["bubbles"]["top_sched_waits"]) == 3
    with open(os.path.join(folder, "summary.json")) as f:
        summary = json.load(f)
    # The rules shared with the summary give the same verdicts on the same run.
    shared = {"under_parallelised", "wave_imbalance", "scheduling_gaps", "memory_bound",
              "near_roofline"}
    assert ([v["rule"] for v in a["verdicts"] if v["rule"] in shared] ==
            [v["rule"] for v in summary["verdicts"]])
    assert [g["key"] for g in a["groups"]] == [g["key"] for g in summary["groups"]]
    assert a["run_summary"].endswith("summary.json")
    assert a["bound"]["hbm_us"] == summary["bound"]["hbm_us"]


def test_bad_traces_raise_trace_error(tmp_path):
    with pytest.raises(ptoc.profile.TraceError, match="cannot read trace"):
        ptoc.profile.analyze(tmp_path / "missing.json")
    with pytest.raises(ptoc.profile.TraceError, match="no merged_swimlane.json in folder"):
        ptoc.profile.analyze(tmp_path)
    bad = tmp_path / "cut.json"
    bad.write_text('{"traceEvents": [{"ph": "M"')
    with pytest.raises(ptoc.profile.TraceError, match="not valid JSON at line 1"):
        ptoc.profile.analyze(bad)
    other = tmp_path / "other.json"
    other.write_text('{"traceEvents": []}')
    with pytest.raises(ValueError, match="otherData"):
        ptoc.profile.analyze(other)
    with pytest.raises(TypeError):
        ptoc.profile.analyze(other, top=-1)
