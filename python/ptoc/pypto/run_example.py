"""``python3 -m ptoc.pypto.run_example FILE [TEST]``: run one ``test_*`` function of a
PyPTO example file on ptoc (used by scripts/run-pypto-examples.sh); without TEST,
list the file's ``test_*`` functions, one per line.

The file is loaded as a module (its ``main()`` does not run) with ``import pypto``
giving ptoc's compatibility package and ``sys.argv`` holding only the file, so the
examples keep their default run mode, ``RunMode.NPU``: their checks against the torch
goldens, guarded by ``if run_mode == NPU``, run. A test's parameters get their
defaults, ``device_id`` None (the examples then keep tensors on the CPU) and
``device`` ``"cpu"``. torch dtype names newer than the installed torch
(``torch.uint16``, ...) get placeholders so that files naming them in tables import,
and ``torch.npu.synchronize()`` (called on the NPU-mode path) does nothing.
Exit status 0 when the test returns, 1 when it raises (the
traceback is printed), 2 for a bad command line.
"""

import ast
import importlib.util
import inspect
import os
import sys
import traceback


def test_names(path):
    """The module-level ``def test_*`` functions of a file, in order."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    return [n.name for n in tree.body
            if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")]


def _arguments(fn):
    kwargs = {}
    for name, p in inspect.signature(fn).parameters.items():
        if p.default is not inspect.Parameter.empty:
            continue
        if name == "device":
            kwargs[name] = "cpu"
        elif name == "device_id":
            kwargs[name] = None
        else:
            raise SystemExit(f"run_example: {fn.__name__} needs an argument {name!r} this "
                             "runner does not know how to give")
    return kwargs


class _MissingTorchDType:
    """A torch dtype name this torch lacks (e.g. torch.uint16 before torch 2.3)."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"torch.{self.name} (not in this torch)"


def _newer_torch_names():
    """Example files that list newer torch dtypes in module-level tables
    (``{torch.uint16: pypto.DT_UINT16}``) import under an older torch (Debian's) when
    those names exist: placeholders for them, in this process only."""
    try:
        import torch
    except ImportError:
        return
    for name in ("uint16", "uint32", "uint64"):
        if not hasattr(torch, name):
            setattr(torch, name, _MissingTorchDType(name))
    if not hasattr(torch, "npu"):
        torch.npu = _NpuStandIn()


class _NpuStandIn:
    """``torch.npu`` for the NPU-mode paths the runner forces: ptoc runs a kernel to
    completion before the call returns, so ``synchronize`` has nothing to wait for;
    there is no device to select."""

    @staticmethod
    def synchronize(*args, **kwargs):
        pass

    @staticmethod
    def set_device(*args, **kwargs):
        pass

    @staticmethod
    def is_available():
        return False


def main(argv):
    if len(argv) not in (1, 2):
        print(__doc__, file=sys.stderr)
        return 2
    path = os.path.abspath(argv[0])
    if len(argv) == 1:
        print("\n".join(test_names(path)))
        return 0
    from ptoc import pypto
    pypto.install(force=True)
    _newer_torch_names()
    sys.argv = [path]
    sys.path.insert(0, os.path.dirname(path))
    spec = importlib.util.spec_from_file_location("pypto_example", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["pypto_example"] = module
    try:
        spec.loader.exec_module(module)
        fn = getattr(module, argv[1])
        fn(**_arguments(fn))
    except Exception:
        traceback.print_exc()
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
