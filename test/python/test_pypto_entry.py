"""The entry points of ptoc's PyPTO layer: ``python3 -m ptoc.pypto SCRIPT ARGS``,
``ptoc.pypto.install()``, never shadowing a real PyPTO unless asked, and the example
runner (``python3 -m ptoc.pypto.run_example``, scripts/run-pypto-examples.sh)."""

import os
import subprocess
import sys
import textwrap

import pytest

import ptoc

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PYTHONPATH = os.path.dirname(os.path.dirname(os.path.abspath(ptoc.__file__)))

SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    import pypto

    @pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.NPU})
    def twice(x: pypto.Tensor([], pypto.DT_FP32), out: pypto.Tensor([], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 64)
        out[:] = x * 2.0

    x = np.arange(8 * 64, dtype=np.float32).reshape(8, 64)
    out = np.empty_like(x)
    twice(x, out)
    assert (out == 2 * x).all()
    print("module", pypto.__name__, "args", sys.argv[1:], "name", __name__)
""")


def run(args, env_path=None, cwd=None):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (env_path, PYTHONPATH) if p)
    return subprocess.run([sys.executable] + args, capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=300)


@pytest.fixture
def script(tmp_path):
    p = tmp_path / "prog.py"
    p.write_text(SCRIPT)
    return str(p)


@pytest.fixture
def real_pypto(tmp_path):
    """A folder holding a stand-in for a real PyPTO installation."""
    d = tmp_path / "site"
    (d / "pypto").mkdir(parents=True)
    (d / "pypto" / "__init__.py").write_text("REAL = True\n")
    return str(d)


def test_module_runs_a_script_unmodified(script):
    r = run(["-m", "ptoc.pypto", script, "--run_mode", "npu", "x"])
    assert r.returncode == 0, r.stderr
    assert "module ptoc.pypto args ['--run_mode', 'npu', 'x'] name __main__" in r.stdout


def test_module_without_script_or_with_a_missing_one():
    r = run(["-m", "ptoc.pypto"])
    assert r.returncode == 2 and "no script given" in r.stderr
    r = run(["-m", "ptoc.pypto", "/no/such/file.py"])
    assert r.returncode == 2 and "no such file" in r.stderr


def test_module_refuses_to_shadow_a_real_pypto(script, real_pypto):
    r = run(["-m", "ptoc.pypto", script], env_path=real_pypto)
    assert r.returncode == 2
    assert "a real PyPTO is importable" in r.stderr and "--force" in r.stderr
    r = run(["-m", "ptoc.pypto", "--force", script], env_path=real_pypto)
    assert r.returncode == 0, r.stderr
    assert "module ptoc.pypto" in r.stdout


def test_install_from_inside_a_program():
    code = textwrap.dedent("""
        import ptoc.pypto
        assert ptoc.pypto.install() is True
        import pypto, pypto.frontend
        print(pypto is ptoc.pypto, pypto.frontend.jit is ptoc.pypto.frontend.jit)
    """)
    r = run(["-c", code])
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["True", "True"]


def test_install_leaves_a_real_pypto_unless_forced(real_pypto):
    code = textwrap.dedent("""
        import warnings
        import ptoc.pypto
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            print(ptoc.pypto.install())
        import pypto
        print(getattr(pypto, "REAL", False), "real PyPTO is importable" in str(w[0].message))
        print(ptoc.pypto.install(force=True))
        import pypto
        print(pypto is ptoc.pypto)
    """)
    r = run(["-c", code], env_path=real_pypto)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["False", "True", "True", "True", "True"]


EXAMPLE = textwrap.dedent("""
    import pypto
    import torch

    run_mode = pypto.RunMode.NPU
    DTYPES = {torch.uint16: pypto.DT_UINT16, torch.float32: pypto.DT_FP32}  # newer torch names

    @pypto.frontend.jit(runtime_options={"run_mode": run_mode})
    def k(x: pypto.Tensor([], pypto.DT_FP32), out: pypto.Tensor([], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 64)
        out[:] = pypto.exp(x)

    @pypto.options(pass_options={"enable_slice": True})
    def test_good(device_id: int = None):
        x = torch.randn(8, 64)
        out = torch.empty(8, 64)
        k(x, out)
        if run_mode == pypto.RunMode.NPU:
            torch.npu.synchronize()      # the runner's stand-in: nothing to wait for
            torch.testing.assert_close(out, torch.exp(x))

    def test_bad(device):
        assert device == "cpu"
        x = torch.randn(8, 64)
        out = torch.empty(8, 64)
        k(x, out)
        if run_mode == pypto.RunMode.NPU:
            torch.testing.assert_close(out, torch.exp(x) + 1)   # a wrong golden

    def main():
        raise SystemExit("main() must not run")

    if __name__ == "__main__":
        main()
""")


@pytest.fixture
def checkout(tmp_path):
    pytest.importorskip("torch")
    d = tmp_path / "pypto-checkout" / "examples" / "01_x"
    d.mkdir(parents=True)
    (d / "ex.py").write_text(EXAMPLE)
    return tmp_path / "pypto-checkout"


def test_run_example_lists_and_runs_tests(checkout):
    ex = str(checkout / "examples" / "01_x" / "ex.py")
    r = run(["-m", "ptoc.pypto.run_example", ex])
    assert r.stdout.split() == ["test_good", "test_bad"]
    r = run(["-m", "ptoc.pypto.run_example", ex, "test_good"])
    assert r.returncode == 0, r.stderr
    r = run(["-m", "ptoc.pypto.run_example", ex, "test_bad"])
    assert r.returncode == 1 and "AssertionError" in r.stderr


def test_run_pypto_examples_script(checkout, tmp_path):
    env = dict(os.environ, PTOC_BUILD=os.path.dirname(PYTHONPATH),
               PYPTO_LOG_DIR=str(tmp_path / "logs"))
    r = subprocess.run(["bash", os.path.join(ROOT, "scripts", "run-pypto-examples.sh"),
                        str(checkout)], capture_output=True, text=True, env=env, timeout=600)
    lines = r.stdout.splitlines()
    assert "PASS examples/01_x/ex.py::test_good" in lines
    assert any(l.startswith("FAIL examples/01_x/ex.py::test_bad: AssertionError") for l in lines)
    assert lines[-1] == "1 passed, 1 failed"
    assert r.returncode == 1
