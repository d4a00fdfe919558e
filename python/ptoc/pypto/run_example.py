"""``python3 -m ptoc.pypto.run_example FILE [TEST]``: run one ``test_*`` function of a
PyPTO example file on ptoc (used by scripts/run-pypto-examples.sh); without TEST,
list the file's ``test_*`` functions, one per line.

The file is loaded as a module (its ``main()`` does not run) with ``import pypto``
giving ptoc's compatibility package and ``sys.argv`` holding only the file, so the
examples keep their default run mode, ``RunMode.NPU``: their checks against the torch
goldens, guarded by ``if run_mode == NPU``, run. A test's parameters get their
defaults, ``device_id`` None (the examples then keep tensors on the CPU) and
``device`` ``"cpu"``. Exit status 0 when the test returns, 1 when it raises (the
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
