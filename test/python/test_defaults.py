"""Each option default is declared once, in the C++ option structs
(session::CompileOptions, RunOptions, TuneOptions): Python's option tables, the
bindings' keyword defaults, ptoc.tune's and ptoc.jit's keyword defaults and the CLI's
help all show the struct's value. A default declared again anywhere, and changed on
one side only, fails here.
"""
import ast
import inspect
import os
import re
import subprocess
import sys

import pytest

import ptoc
from ptoc import _ptoc

CPP = _ptoc.default_options()
OPTIONS = sys.modules["ptoc.options"]


def keyword_defaults(function):
    """name -> default of a pybind function, from its signature line."""
    signature = function.__doc__.splitlines()[0]
    return {name: ast.literal_eval(value)
            for name, value in re.findall(r"(\w+): [\w.]+(?:\[[^\]]*\])? = ('[^']*'|[^,)]+)",
                                          signature)}


def test_python_option_tables_are_the_cpp_defaults():
    for kind in ("runtime_options", "debug_options", "host_options"):
        assert OPTIONS.defaults(kind) == CPP[kind], kind
    assert OPTIONS.TUNE_DEFAULTS == CPP["tune"]


def test_the_cpp_defaults_are_what_the_engine_does():
    """The table's values, spelled out: a change to a C++ default is a visible decision."""
    assert CPP["runtime_options"] == {"device_sched_mode": 0, "host_threads": 0,
                                      "run_numerics": True, "stitch_function_max_num": 128,
                                      "device_sched_parallelism": 0}
    assert CPP["host_options"]["compile_stage"] == "codegen"
    assert CPP["host_options"]["max_tile_ops"] == 8 * 1024 * 1024
    assert CPP["tune"]["budget"] == 64 and CPP["tune"]["strategy"] == "auto"
    assert _ptoc.DEFAULT_DEVICE == "a2"


def test_binding_keyword_defaults_are_the_cpp_defaults():
    host, run, debug = CPP["host_options"], CPP["runtime_options"], CPP["debug_options"]
    compile_defaults = keyword_defaults(_ptoc.Session.compile)
    assert compile_defaults == {
        "stage": host["compile_stage"], "double_buffer": host["double_buffer"],
        "ir_dump_dir": "", "verify_each": host["verify_each"],
        "max_tile_ops": host["max_tile_ops"],
        # A C++ compile reads no user files unless asked; @ptoc.jit asks (use_tune_bank).
        "consult_bank": False, "bank_path": host["tune_bank_path"]}
    text_defaults = keyword_defaults(_ptoc.Session.compile_text)
    assert text_defaults == {k: v for k, v in compile_defaults.items()
                             if k not in ("consult_bank", "bank_path")}
    assert keyword_defaults(_ptoc.Session.run) == {
        "sched_mode": run["device_sched_mode"], "debug_mode": debug["runtime_debug_mode"],
        "output_dir": debug["output_dir"], "numerics": run["run_numerics"],
        "host_threads": run["host_threads"],
        "stitch_function_max_num": run["stitch_function_max_num"],
        "device_sched_parallelism": run["device_sched_parallelism"]}
    tune_defaults = keyword_defaults(_ptoc.tune_text)
    for name in ("strategy", "budget", "seed", "threads", "use_bank"):
        assert tune_defaults[name] == CPP["tune"][name], name
    assert tune_defaults["sched_parallelism"] == run["device_sched_parallelism"]
    assert keyword_defaults(_ptoc.Session.__init__)["device"] == _ptoc.DEFAULT_DEVICE


def test_python_keyword_defaults_are_the_cpp_defaults():
    tune = inspect.signature(ptoc.tune).parameters
    for name in ("strategy", "budget", "seed", "threads", "use_bank"):
        assert tune[name].default == CPP["tune"][name], name
    assert inspect.signature(ptoc.jit).parameters["device"].default == _ptoc.DEFAULT_DEVICE


def cli_help(*args):
    """--flag -> its text in `ptoc <args> --help` (wrapped lines joined)."""
    build = os.environ.get("PTOC_BUILD_DIR")
    if not build:
        pytest.skip("the ptoc CLI not found: set PTOC_BUILD_DIR to the build folder")
    text = subprocess.run([os.path.join(build, "tools", "ptoc"), *args, "--help"],
                          check=True, capture_output=True, text=True).stdout
    blocks, current = {}, None
    for line in text.splitlines():
        m = re.match(r"  (?:-\w, )?(--[\w-]+)", line)
        if m:
            current = m.group(1)
            blocks[current] = line
        elif current and line.startswith("    "):
            blocks[current] += " " + line.strip()
        else:
            current = None
    return blocks


def cli_defaults(*args):
    """--flag -> the default `ptoc <args> --help` shows for it (the [..] ending its text)."""
    return {flag: m.group(1) for flag, block in cli_help(*args).items()
            if (m := re.search(r"\[([^\]]*)\]$", block))}


def test_cli_help_shows_the_cpp_defaults():
    run = cli_defaults("run")
    assert run["--sched-mode"] == str(CPP["runtime_options"]["device_sched_mode"])
    assert run["--debug-mode"] == str(CPP["debug_options"]["runtime_debug_mode"])
    assert run["--threads"] == str(CPP["runtime_options"]["host_threads"])
    assert run["--max-tile-ops"] == str(CPP["host_options"]["max_tile_ops"])
    assert run["--device"] == _ptoc.DEFAULT_DEVICE
    tune = cli_defaults("tune", "x.pto")
    for name in ("strategy", "budget", "seed", "threads"):
        assert tune["--" + name] == str(CPP["tune"][name]), name
    report = cli_defaults("prof", "report")
    assert report["--sched-mode"] == str(CPP["runtime_options"]["device_sched_mode"])
    assert report["--device"] == _ptoc.DEFAULT_DEVICE


def test_analyze_lists_as_many_tasks_as_ptoc_prof_by_default():
    """ptoc.analyze's `top` is SummaryOptions::topTasks, like `ptoc prof --top`."""
    top = inspect.signature(ptoc.profile.analyze).parameters["top"].default
    assert top == _ptoc.DEFAULT_TOP == keyword_defaults(_ptoc.analyze_trace)["top"]
    assert cli_defaults("prof", "x")["--top"] == str(top)


def test_max_tile_ops_bounds_are_the_same_on_every_face(tmp_path):
    """CompileBudget's bounds: Python's host option, `ptoc run` and `ptoc-opt` accept the
    same range and reject the values just outside it."""
    lo, hi = _ptoc.MIN_MAX_TILE_OPS, _ptoc.MAX_MAX_TILE_OPS
    assert (lo, hi) == (1, 2**62)
    check = OPTIONS.HOST_OPTIONS["max_tile_ops"][0]
    for good in (lo, hi):
        check("max_tile_ops", good)
    for bad in (lo - 1, hi + 1):
        with pytest.raises(ptoc.OptionError, match=rf"max_tile_ops.*{lo}.*{hi}"):
            check("max_tile_ops", bad)
    build = os.environ.get("PTOC_BUILD_DIR")
    if not build:
        pytest.skip("the ptoc CLI not found: set PTOC_BUILD_DIR to the build folder")
    source = tmp_path / "k.pto"
    source.write_text("func @k(%x: tensor<16x64xf32>) -> tensor<16x64xf32> {\n"
                      "  %y = exp %x {vec_tile = [16, 64]} : tensor<16x64xf32>\n"
                      "  return %y\n}\n")
    for tool, args in (("ptoc", ["run", str(source), "--no-numerics"]),
                       ("ptoc-opt", [str(source), "--pipeline=default"])):
        refusal = f"--max-tile-ops must be an integer in [{lo}, {hi}]"
        for value in (lo - 1, hi + 1):
            proc = subprocess.run([os.path.join(build, "tools", tool), *args,
                                   "--max-tile-ops", str(value)], capture_output=True, text=True)
            assert proc.returncode != 0 and refusal in proc.stderr, (tool, value, proc.stderr)
        # In bounds: hi compiles; lo is accepted, then the compile runs out of budget.
        for value, ok in ((hi, True), (lo, False)):
            proc = subprocess.run([os.path.join(build, "tools", tool), *args,
                                   "--max-tile-ops", str(value)], capture_output=True, text=True)
            assert (proc.returncode == 0) == ok and refusal not in proc.stderr, \
                (tool, value, proc.stderr)
            if not ok:
                assert "tile ops a compile may create" in proc.stderr, (tool, proc.stderr)


def test_pass_option_default_reports_a_per_pass_default():
    """mg_copyin_upper_bound is capped at 1 MiB in l1-reuse-merge only; a knob whose
    passes agree has one default."""
    cap = _ptoc.pass_option_default("mg_copyin_upper_bound")
    assert cap == {"partition": -1, "nbuffer-merge": -1, "cube-nbuffer-merge": -1,
                   "l1-reuse-merge": 1 << 20}
    assert _ptoc.pass_option_default("mg_copyin_upper_bound", "l1-reuse-merge") == 1 << 20
    assert _ptoc.pass_option_default("mg_copyin_upper_bound", "partition") == -1
    assert _ptoc.pass_option_default("merge_fuel") == -1
    assert _ptoc.pass_option_default("pg_lower_bound") == 512
    assert _ptoc.pass_option_default("pg_lower_bound", "l1-reuse-merge") is None
    assert _ptoc.pass_option_default("no_such_option") is None


def test_python_and_cli_views_of_the_option_table_agree():
    """The runtime, debug and host options are one C++ table (session/OptionTable.h):
    Python's dicts and `ptoc run`'s flags show its names, bounds, help and defaults."""
    table = _ptoc.option_table()
    for kind, view in (("runtime_options", OPTIONS.RUNTIME_OPTIONS),
                       ("debug_options", OPTIONS.DEBUG_OPTIONS),
                       ("host_options", OPTIONS.HOST_OPTIONS)):
        assert list(view) == [row["name"] for row in table if row["dict"] == kind]
    blocks = cli_help("run")
    defaults = cli_defaults("run")
    flagged = [row for row in table if row["flag"]]
    assert {row["name"] for row in flagged} >= {"device_sched_mode", "runtime_debug_mode",
                                                  "output_dir", "run_numerics", "max_tile_ops"}
    for row in table:
        check, default, meaning = OPTIONS._TABLES[row["dict"]][row["name"]]
        assert default == row["default"] and meaning.startswith(row["help"]), row["name"]
        if row["kind"] == "int":
            check(row["name"], row["min"])
            check(row["name"], row["max"])
            with pytest.raises(ptoc.OptionError, match=re.escape(f"[{row['min']}, {row['max']}]")):
                check(row["name"], row["max"] + 1)
        if not row["flag"]:
            continue
        flag = "--" + row["flag"]
        block = " ".join(blocks[flag].split())
        said = " ".join(f"{row['name']}: {row['help']}".split())
        assert said in block, (flag, block)
        if row["flag"].startswith("no-"):
            assert row["kind"] == "bool" and row["default"] is True
            assert f"clears {row['name']}" in block
        elif row["shown_default"]:
            assert defaults[flag] == row["shown_default"]
        elif row["kind"] == "int":
            assert defaults[flag] == str(row["default"]), flag
    build = os.environ["PTOC_BUILD_DIR"]
    for row in flagged:
        if row["kind"] != "int":
            continue
        proc = subprocess.run([os.path.join(build, "tools", "ptoc"), "run", "x.pto",
                               "--" + row["flag"], str(row["max"] + 1)],
                              capture_output=True, text=True)
        assert proc.returncode == 2, (row["name"], proc.stderr)
        assert f"--{row['flag']} must be an integer in [{row['min']}, {row['max']}]" in \
            proc.stderr, proc.stderr
