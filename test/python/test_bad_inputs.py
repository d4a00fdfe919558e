"""Hostile and careless inputs from Python: each is a ptoc.Error naming what was wrong
(or, where the docs promise it, a warning), never a crash of the interpreter.

Cases that crashed the process before their fix run in a fresh interpreter, so a
regression fails that test instead of killing the whole pytest run."""
import glob
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import ptoc

DEEP = "[" * 40000 + "]" * 40000  # the reproduction: 40,000 levels


def run_isolated(script, tmp_path, timeout=120, prelude=""):
    """Runs `prelude` then `script` in a fresh interpreter (cwd `tmp_path`); returns
    the process."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    code = textwrap.dedent(prelude) + textwrap.dedent(script)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True,
                          text=True, env=env, cwd=str(tmp_path), timeout=timeout)
    assert proc.returncode >= 0, f"killed by signal {-proc.returncode}: {proc.stderr}"
    return proc


SOFTMAX = """
    import numpy as np, ptoc
    def softmax(x, y):
        ptoc.set_vec_tile_shapes(8, 256)
        e = ptoc.exp(x - ptoc.amax(x, dim=-1, keepdim=True))
        y[:] = e / ptoc.sum(e, dim=-1, keepdim=True)
    x = np.random.default_rng(0).random((64, 256), dtype=np.float32)
"""


# --- deep JSON (issue 14, item 1) -----------------------------------------------------

def test_a_deep_device_file_is_an_option_error(tmp_path):
    (tmp_path / "deep.json").write_text(DEEP)
    (tmp_path / "field.json").write_text('{"aic_cores": ' + DEEP + "}")
    proc = run_isolated("""
        import ptoc
        for name in ("deep.json", "field.json"):
            try:
                ptoc.jit(lambda x: x, device=name)
            except ptoc.OptionError as e:
                print(e)
    """, tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == 2, proc.stdout
    assert lines[0].startswith("deep.json: JSON nested deeper than 64 levels at line 1 column 65")
    assert lines[1].startswith("field.json: JSON nested deeper than 64 levels at line 1 column 78")


def test_a_deep_bank_line_is_a_warning_and_the_other_records_still_count(tmp_path):
    """docs/tuning.md: an unusable bank line is skipped with a warning. The jit
    compile that consults the bank must not crash and must still use the good record."""
    proc = run_isolated("""
        tuned = ptoc.tune(ptoc.jit(softmax, device="tiny"), x, np.empty_like(x),
                          strategy="random", budget=3, bank="bank", result_dir=".",
                          progress=False)
        import glob
        (path,) = glob.glob("bank/tiny-*.jsonl")
        with open(path, "a") as f:
            f.write("[" * 40000 + "]" * 40000 + "\\n")
            f.write('{"format":1,"config":' + "[" * 40000 + "]" * 40000 + "}\\n")
        fresh = ptoc.jit(softmax, device="tiny", host_options={"tune_bank_path": "bank"})
        y = np.empty_like(x)
        fresh(x, y)
        print("config", fresh.compile(x, y).bank_config == tuned.config)
        print("ok", bool(np.isfinite(y).all()))
        print("records", len(open(path).read().splitlines()) - 2)
    """, tmp_path, prelude=SOFTMAX)
    assert proc.returncode == 0, proc.stderr
    assert "config True" in proc.stdout and "ok True" in proc.stdout, proc.stdout
    tuned_lines = int(re.search(r"records (\d+)", proc.stdout).group(1))
    skipped = re.findall(r"tiny-[0-9a-f]+\.jsonl:(\d+): skipped bank line: JSON nested deeper "
                         r"than 64 levels at line 1 column (\d+)", proc.stderr)
    assert sorted(set(skipped)) == [(str(tuned_lines + 1), "65"), (str(tuned_lines + 2), "85")], \
        proc.stderr


def test_a_deep_search_space_from_python_is_an_error(tmp_path):
    """ptoc.tune's space reaches the C++ reader as JSON text; a nested Python value
    (made by a careless generator) is refused with an error, not a crash."""
    proc = run_isolated("""
        deep = []
        for _ in range(40000):
            deep = [deep]
        try:
            ptoc.tune(ptoc.jit(softmax, device="tiny"), x, np.empty_like(x),
                      space={"vec_tile": deep}, use_bank=False, progress=False)
        except ptoc.OptionError as e:
            print(e)
    """, tmp_path, prelude=SOFTMAX)
    assert proc.returncode == 0, proc.stderr
    assert "ptoc.tune: space values must be" in proc.stdout, proc.stdout


# --- device descriptions out of physical bounds (issue 14, item 3) --------------------

@pytest.mark.parametrize("fields, message", [
    ('"aic_cores": 1e9, "aiv_cores": 2e9',
     "field 'aic_cores': 1000000000 is out of range: it must be between 1 and 1024"),
    ('"aic_cores": 100000000, "aiv_cores": 100000000',
     "field 'aic_cores': 100000000 is out of range"),
    ('"compute": {"vector_bytes_per_cycle": 1e-300}',
     "field 'compute.vector_bytes_per_cycle': 1e-300 is out of range: it must be between 1 "
     "and 65536"),
    ('"memory": {"hbm_bytes_per_second": 1e-300}',
     "field 'memory.hbm_bytes_per_second': 1e-300 is out of range"),
    ('"memory": {"hbm_bytes_per_second": 9223372036854775808}',
     "field 'memory.hbm_bytes_per_second': 9223372036854775808 is out of range"),
])
def test_a_device_out_of_bounds_is_an_option_error(tmp_path, fields, message):
    (tmp_path / "dev.json").write_text('{"name": "bad", ' + fields + "}")
    proc = run_isolated("""
        import numpy as np, ptoc
        try:
            f = ptoc.jit(lambda x: ptoc.exp(x), device="dev.json")
            print("no error")
        except ptoc.OptionError as e:
            print(e)
    """, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("dev.json: " + message), proc.stdout


# --- wrong types and out-of-range values raise the ptoc.Error naming the option -------
# (issue 14, item 5). Each of these raised pybind11's own TypeError ("incompatible
# function arguments") or RuntimeError ("Unable to cast Python instance to C++ type"),
# or a bare TypeError / ValueError from deep inside the package.

X = np.random.default_rng(0).random((64, 256), dtype=np.float32)
BIG = 2**70  # beyond int64


def body(x, y):
    ptoc.set_vec_tile_shapes(8, 256)
    y[:] = ptoc.exp(x)


def run_jit(**kw):
    ptoc.jit(body, device="tiny", **kw)(X, np.empty_like(X))


def inside(setting):
    def traced(x, y):
        ptoc.set_vec_tile_shapes(8, 256)
        setting()
        y[:] = ptoc.exp(x)
    ptoc.jit(traced, device="tiny")(X, np.empty_like(X))


def op(fn):
    def traced(x):
        ptoc.set_vec_tile_shapes(8, 256)
        return fn(x), x * 1.0
    ptoc.jit(traced, device="tiny")(X)


def tune(**kw):
    kw = {"use_bank": False, "progress": False, "budget": 2, **kw}
    ptoc.tune(ptoc.jit(body, device="tiny"), X, np.empty_like(X), **kw)


BAD_INPUTS = [
    # device=
    (lambda: ptoc.jit(body, device=3), ptoc.OptionError,
     "device must be a preset name (a2, a3, b3, b4, tiny) or the path of a device JSON file, got 3"),
    (lambda: ptoc.jit(body, device=["a2"]), ptoc.OptionError, "device must be a preset name"),
    (lambda: ptoc.jit(body, device=None), ptoc.OptionError, "got None"),
    # pass options: names and 64-bit values
    (lambda: run_jit(pass_options={1: 2}), ptoc.OptionError, "pass option names are strings, got 1"),
    (lambda: run_jit(pass_options={"pg_lower_bound": BIG}), ptoc.OptionError,
     f"pass option 'pg_lower_bound': {BIG} does not fit in a 64-bit integer"),
    (lambda: run_jit(pass_options={"vec_nbuffer_setting": {0: BIG}}), ptoc.OptionError,
     "pass option 'vec_nbuffer_setting': 1180591620717411303424 does not fit"),
    (lambda: run_jit(pass_options={"vec_nbuffer_setting": {-BIG: 2}}), ptoc.OptionError,
     "does not fit in a 64-bit integer"),
    (lambda: inside(lambda: ptoc.set_pass_options(pg_upper_bound=-BIG)), ptoc.OptionError,
     "pass option 'pg_upper_bound'"),
    (lambda: inside(lambda: ptoc.set_pass_options(sg_set_scope=BIG)), ptoc.OptionError,
     "pass option 'sg_set_scope' must be an int in [-1, 9223372036854775807]"),
    # runtime options
    (lambda: run_jit(runtime_options={"host_threads": BIG}), ptoc.OptionError,
     "option 'host_threads' must be an int in [0, 4096], got 1180591620717411303424"),
    (lambda: inside(lambda: ptoc.set_runtime_options(host_threads=5000)), ptoc.OptionError,
     "option 'host_threads' must be an int in [0, 4096]"),
    # tile shapes
    (lambda: inside(lambda: ptoc.set_vec_tile_shapes(BIG, 256)), ptoc.TileShapeError,
     "ptoc.set_vec_tile_shapes: tile sizes must be positive ints (below 2**63)"),
    (lambda: inside(lambda: ptoc.set_cube_tile_shapes(None, [32, 32], [32, 32])),
     ptoc.TileShapeError, "ptoc.set_cube_tile_shapes: m must be an int or [L0, L1], got None"),
    (lambda: inside(lambda: ptoc.set_cube_tile_shapes([BIG, BIG], 32, 32)), ptoc.TileShapeError,
     "tile sizes must be positive ints (below 2**63)"),
    (lambda: inside(lambda: ptoc.set_vec_tile_shapes(8, 256, label=[1])), ptoc.ArgumentError,
     "label must be a str (or an int), got [1]"),
    # ptoc.tune's arguments
    (lambda: tune(strategy=None), ptoc.OptionError, "ptoc.tune: strategy must be a str"),
    (lambda: tune(budget=BIG), ptoc.OptionError, "ptoc.tune: budget must be an int in [1, "),
    (lambda: tune(budget="8"), ptoc.OptionError, "ptoc.tune: budget must be an int"),
    (lambda: tune(seed=-1), ptoc.OptionError, "ptoc.tune: seed must be an int in [0, "),
    (lambda: tune(threads=1.5), ptoc.OptionError, "ptoc.tune: threads must be an int in [0, 4096]"),
    (lambda: tune(bank=3), ptoc.OptionError, "ptoc.tune: bank must be a folder path (a str), got 3"),
    (lambda: tune(result_dir=["x"]), ptoc.OptionError, "ptoc.tune: result_dir must be a folder"),
    (lambda: tune(use_bank="yes"), ptoc.OptionError, "ptoc.tune: use_bank must be True or False"),
    (lambda: tune(space={"vec_tile": [float("nan")]}), ptoc.OptionError,
     "ptoc.tune: space values must be finite numbers"),
    (lambda: ptoc.tune(body, X), ptoc.ArgumentError, "ptoc.tune tunes a @ptoc.jit function"),
    # ops and shapes
    (lambda: op(lambda x: ptoc.full([BIG], 1.0)), ptoc.ShapeError,
     "ptoc.full: invalid shape [1180591620717411303424]; use positive ints"),
    (lambda: op(lambda x: ptoc.full([2**40, 2**40], 1.0)), ptoc.ShapeError,
     "'full' op a tensor of shape 1099511627776x1099511627776 is too large"),
    (lambda: op(lambda x: ptoc.full([8, 256], None)), ptoc.ArgumentError,
     "ptoc.full: value must be a number, got None"),
    (lambda: op(lambda x: ptoc.full([8, 256], 1e300, ptoc.DT_INT32)), ptoc.DTypeError,
     "'full' op value 1e+300 is out of range for the element type i32"),
    (lambda: op(lambda x: ptoc.full([8, 256], float("nan"), ptoc.DT_INT32)), ptoc.DTypeError,
     "'full' op value nan is not a number of the integer element type i32"),
    (lambda: op(lambda x: ptoc.reshape(x, "ab")), ptoc.ShapeError,
     "ptoc.reshape: invalid shape 'ab'"),
    (lambda: op(lambda x: ptoc.reshape(x, [2**40, 2**40, -1])), ptoc.ShapeError,
     "ptoc.reshape: cannot reshape [64, 256]"),
    (lambda: op(lambda x: ptoc.transpose(x, BIG, 0)), ptoc.ShapeError,
     "ptoc.transpose: dim 1180591620717411303424 is out of range for a tensor of rank 2"),
    (lambda: op(lambda x: ptoc.sum(x, dim=1.5)), ptoc.ShapeError,
     "ptoc.sum: dim 1.5 is out of range"),
    (lambda: op(lambda x: ptoc.concat([x, x], dim="a")), ptoc.ShapeError,
     "ptoc.concat: dim 'a' is out of range"),
    (lambda: op(lambda x: ptoc.concat(3)), ptoc.ArgumentError,
     "ptoc.concat: takes a list of tensors, got int"),
    (lambda: ptoc.Tensor(None), ptoc.ShapeError, "ptoc.Tensor shape must be a list of axis sizes"),
    (lambda: ptoc.Tensor([BIG]), ptoc.ShapeError, "(below 2**63)"),
    # calls of a jit function
    (lambda: ptoc.jit(body, device="tiny")(X), ptoc.ArgumentError,
     "body(): missing a required argument: 'y'"),
    (lambda: ptoc.jit(body, device="tiny")(X, np.empty_like(X), X), ptoc.ArgumentError,
     "body(): too many positional arguments"),
    (lambda: ptoc.jit(body, device="tiny").compile(X, np.empty_like(X)).ir(3), ptoc.OptionError,
     "ir(): stage must be one of tensor, tile, partitioned, codegen, got 3"),
    # autotune and profile
    (lambda: ptoc.autotune(3), ptoc.OptionError,
     "@ptoc.autotune: configs must be a list of config dicts, got int"),
    (lambda: ptoc.profile.analyze("x", top=BIG), ptoc.ArgumentError,
     "analyze(): top must be an int from 0 to 100000"),
]


@pytest.mark.parametrize("call, kind, message", BAD_INPUTS,
                         ids=[m[:50] for _, _, m in BAD_INPUTS])
def test_a_bad_input_is_the_ptoc_error_naming_it(call, kind, message):
    with pytest.raises(kind) as e:
        call()
    assert isinstance(e.value, ptoc.Error)
    assert message in str(e.value)
    # The built-in kind a Python user catches is kept: ValueError or TypeError.
    assert isinstance(e.value, (ValueError, TypeError))
