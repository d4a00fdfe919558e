"""ptoc.profile.analyze: the analysis of a @ptoc.jit run's trace agrees with the run
report, carries the documented keys, and a bad trace raises TraceError."""
import json
import os
import pathlib
import shutil
import subprocess

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
                 "control", "roots", "blocks", "loops"}
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
    shared = {"under_parallelised", "wave_imbalance", "scheduling_gaps", "port_bound",
              "memory_bound", "near_roofline"}
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


# Traces PyPTO wrote on real NPUs (test/data/pypto-real, as published).
REAL = pathlib.Path(os.environ.get("PTOC_SOURCE_DIR") or
                    pathlib.Path(__file__).resolve().parents[2]) / "test" / "data" / "pypto-real"
MACHINE_VIEW = "KayWang12138__pypto__merged_swimlane.json"


def test_analyze_a_real_machine_view(tmp_path):
    trace = tmp_path / MACHINE_VIEW
    shutil.copyfile(REAL / MACHINE_VIEW, trace)
    a = ptoc.profile.analyze(trace, device="a2")
    assert set(a) == ANALYSIS_KEYS
    assert a["family"] == "pypto-machine-view"
    assert a["tasks"] == 74 and a["control"]["nodes"] == 39
    assert a["span_us"] == pytest.approx(43.06, abs=US_TOLERANCE)
    assert a["simulated_us"] is None and a["bound"] is None and a["bytes"] is None
    cores = {k["kind"]: k for k in a["cores"]}
    assert (cores["AIC"]["tasks"], cores["AIC"]["cores_used"]) == (40, 24)
    assert (cores["AIV"]["tasks"], cores["AIV"]["cores_used"], cores["AIV"]["cores"]) == (34, 32, 48)
    assert a["critical_path"]["tasks"] == 9
    assert a["critical_path"]["length_us"] == pytest.approx(44.06, abs=US_TOLERANCE)
    # Nothing written unless asked.
    assert list(tmp_path.iterdir()) == [trace]


def test_analyze_writes_what_ptoc_prof_writes(tmp_path):
    """Python's analyze and `ptoc prof` are one library operation: the same analysis
    file, and the page written (device trace) or refreshed (ptoc run folder)."""
    build = os.environ.get("PTOC_BUILD_DIR")
    if not build:
        pytest.skip("the ptoc CLI not found: set PTOC_BUILD_DIR to the build folder")
    cli, py = tmp_path / "cli", tmp_path / "py"
    for folder in (cli, py):
        folder.mkdir()
        shutil.copyfile(REAL / MACHINE_VIEW, folder / MACHINE_VIEW)
    subprocess.run([os.path.join(build, "tools", "ptoc"), "prof", str(cli / MACHINE_VIEW),
                    "--device", "a2", "--quiet"], check=True, capture_output=True)
    a = ptoc.profile.analyze(py / MACHINE_VIEW, write=True, device="a2")
    stem = MACHINE_VIEW[:-len(".json")]
    written = json.loads((py / (stem + ".analysis.json")).read_text())
    assert written == a
    by_cli = json.loads((cli / (stem + ".analysis.json")).read_text())
    by_cli["source"] = a["source"]
    assert by_cli == a
    assert (py / (stem + ".swimlane.html")).exists()

    # A ptoc run folder's swimlane.html shows the analysis once Python wrote it.
    run = _run_softmax(tmp_path / "run", 1)
    folder = os.path.dirname(run.swimlane_path)
    page = pathlib.Path(folder) / "swimlane.html"
    assert '<script type="application/json" id="ptoc-analysis">null</script>' in page.read_text()
    ptoc.profile.analyze(folder, write=True)
    assert '<script type="application/json" id="ptoc-analysis">null</script>' not in page.read_text()
    assert '"run_summary"' in page.read_text()


def test_analyze_bad_device(tmp_path):
    with pytest.raises(ptoc.profile.TraceError, match="nonesuch"):
        ptoc.profile.analyze(REAL / MACHINE_VIEW, device="nonesuch")
    with pytest.raises(TypeError):
        ptoc.profile.analyze(REAL / MACHINE_VIEW, device=3)
