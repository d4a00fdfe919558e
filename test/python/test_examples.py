"""Runs every examples/*.py as a user would (a subprocess, --debug-mode 1): each must
pass its own numpy check (exit 0), print the run summary and the path of a swimlane
trace that exists and is a Chrome trace."""

import json
import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

import ptoc

# ctest sets PTOC_SOURCE_DIR; run by hand, the examples are two levels up from here.
SOURCE_DIR = pathlib.Path(os.environ.get("PTOC_SOURCE_DIR") or
                          pathlib.Path(__file__).resolve().parents[2])
EXAMPLES_DIR = SOURCE_DIR / "examples"
# Every script is an example except the support module they share.
EXAMPLES = sorted(p for p in EXAMPLES_DIR.glob("*.py") if p.name != "example_support.py")

# The list of examples; each must exist (a missing one is a failure, not a
# test that silently does not run).
REQUIRED = {"softmax", "layernorm", "rmsnorm", "matmul", "matmul_bias_gelu", "attention",
            "mlp", "flash_attention", "paged_attention"}

# The first line of every run summary (lib/profile/Summary.cpp, summaryText):
# "simulated 36.94 us (bound 20.41 us, 55% of roofline, limited by hbm)".
SUMMARY_HEADLINE = re.compile(r"^simulated [0-9.]+ us \(bound [0-9.]+ us, [0-9]+% of roofline, "
                              r"limited by \w+\)$", re.MULTILINE)
SWIMLANE_LINE = re.compile(r"^swimlane: (.+)$", re.MULTILINE)
# A generous cap so a hung example fails instead of stalling the suite (each example
# takes well under a second on a 2-core machine).
TIMEOUT_SECONDS = 300


def example_env(output_dir):
    """The test's environment with run folders in `output_dir` and the ptoc package
    this test imported first on the path (so the example runs the same build)."""
    env = dict(os.environ)
    package_root = str(pathlib.Path(ptoc.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    env["PTOC_OUTPUT_DIR"] = str(output_dir)
    return env


def test_every_example_exists():
    names = {p.stem for p in EXAMPLES}
    missing = REQUIRED - names
    assert not missing, f"examples missing from {EXAMPLES_DIR}: {sorted(missing)}"


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_example_runs_checks_and_profiles(example, tmp_path):
    proc = subprocess.run([sys.executable, str(example), "--debug-mode", "1"],
                          env=example_env(tmp_path), cwd=tmp_path, capture_output=True,
                          text=True, timeout=TIMEOUT_SECONDS)
    report = f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    assert proc.returncode == 0, f"{example.name} exited with {proc.returncode}\n{report}"
    assert SUMMARY_HEADLINE.search(proc.stdout), f"no run summary printed\n{report}"
    assert "MISMATCH" not in proc.stdout, report

    paths = SWIMLANE_LINE.findall(proc.stdout)
    assert len(paths) == 1, f"expected one 'swimlane: <path>' line\n{report}"
    swimlane = pathlib.Path(paths[0])
    assert swimlane.is_file(), f"the printed swimlane {swimlane} does not exist\n{report}"
    assert swimlane.name == "merged_swimlane.json"
    # The run folder lands under PTOC_OUTPUT_DIR.
    assert tmp_path in swimlane.resolve().parents, swimlane
    with open(swimlane) as f:
        trace = json.load(f)
    tasks = [e for e in trace["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "task"]
    assert tasks, f"{swimlane} has no task events"


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_example_without_debug_mode_writes_no_swimlane(example, tmp_path):
    proc = subprocess.run([sys.executable, str(example), "--debug-mode", "0"],
                          env=example_env(tmp_path), cwd=tmp_path, capture_output=True,
                          text=True, timeout=TIMEOUT_SECONDS)
    report = f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    assert proc.returncode == 0, f"{example.name} exited with {proc.returncode}\n{report}"
    assert SUMMARY_HEADLINE.search(proc.stdout), f"no run summary printed\n{report}"
    assert not SWIMLANE_LINE.search(proc.stdout), report
    assert not any(tmp_path.rglob("merged_swimlane.json")), "debug mode 0 wrote a swimlane"


# The examples on example_support's command line take --derived-tiles: no tile calls,
# every tile derived by the compiler (docs/passes.md "default-tiles").
DERIVED_TILE_EXAMPLES = [p for p in EXAMPLES if "parse_args(__doc__)" in p.read_text()]
TILES_LINE = re.compile(r"^tiles: derived (vec_tile|cube_tile) ", re.MULTILINE)


def test_the_derived_tile_examples_are_the_documented_ones():
    assert {p.stem for p in DERIVED_TILE_EXAMPLES} == {
        "softmax", "layernorm", "rmsnorm", "matmul", "matmul_bias_gelu", "attention", "mlp"}


@pytest.mark.parametrize("example", DERIVED_TILE_EXAMPLES, ids=lambda p: p.stem)
def test_example_with_derived_tiles_checks_and_lists_them(example, tmp_path):
    proc = subprocess.run([sys.executable, str(example), "--debug-mode", "0", "--derived-tiles"],
                          env=example_env(tmp_path), cwd=tmp_path, capture_output=True,
                          text=True, timeout=TIMEOUT_SECONDS)
    report = f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    assert proc.returncode == 0, f"{example.name} exited with {proc.returncode}\n{report}"
    assert "MISMATCH" not in proc.stdout, report
    assert TILES_LINE.search(proc.stdout), f"no 'tiles: derived' line in the summary\n{report}"
