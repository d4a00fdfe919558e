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


def cli_defaults(*args):
    """--flag -> the default `ptoc <args> --help` shows for it (the [..] ending its text)."""
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
    return {flag: m.group(1) for flag, block in blocks.items()
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
