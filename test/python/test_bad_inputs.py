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
