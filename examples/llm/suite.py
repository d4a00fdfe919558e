"""The LLM-scale operator suite (examples/llm/, issue 21): what every operator shares.

Each module of the suite (rmsnorm.py, rope.py, swiglu.py, attention.py, moe.py)
declares ``OPERATORS``, a list of :class:`Operator`. An operator carries two sets of
sizes: ``full`` (the shapes of the public model configuration named in ``source``,
simulated for timing only) and ``small`` (the same operator at a reduced size, run
with exact numerics and checked against numpy). ``all_operators()`` gathers the suite;
tests and benchmarks/llm.py use nothing else.

Run one module (or all of them) from the repository root:

    PYTHONPATH=build/python /usr/bin/python3 examples/llm/suite.py [NAME ...] [--full] [--defaults]
"""

import argparse
import importlib
import os
import sys
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

import ptoc

#: the tag of a flash-attention operator (benchmarks/llm.py holds it to its own goal)
FLASH_ATTENTION = "flash_attention"

#: the modules of the suite, in the order the benchmark prints them
MODULES = ("rmsnorm", "rope", "swiglu", "attention", "moe")


@dataclass(frozen=True)
class Operator:
    """One operator of the suite.

    ``make(dims, device, runtime_options, pass_options)`` returns a ``@ptoc.jit`` kernel
    for the sizes ``dims`` (a dict, ``full`` or ``small``) with those options;
    ``pass_options`` and ``runtime_options`` (fields) are the operator's own, what its
    author set: :func:`check` and :func:`simulate` pass them, or none of them with
    ``defaults=True`` (how benchmarks/llm.py measures ptoc's defaults beside the
    operator as written). ``inputs(dims, rng)`` the arguments
    of one call (numpy arrays, outputs included, in the kernel's order); ``reference(*args)``
    the expected results (a tuple of arrays, computed in float64 from the inputs), and
    ``results(returned, *args)`` what the kernel produced (its return value and/or
    the output arguments it wrote), in the same order. Tolerances follow numpy.isclose.
    ``tags``: what kind of operator it is (FLASH_ATTENTION).
    """

    name: str
    source: str
    full: dict
    small: dict
    make: Callable
    inputs: Callable
    reference: Callable
    results: Callable
    rtol: float = 2e-2
    atol: float = 2e-3
    notes: str = ""
    tags: tuple = field(default_factory=tuple)
    pass_options: dict = field(default_factory=dict)
    runtime_options: dict = field(default_factory=dict)


def options_of(op, defaults=False, runtime_options=None):
    """(runtime options, pass options) to make ``op`` with: its own (none of them with
    ``defaults``), then ``runtime_options`` on top."""
    own_runtime = {} if defaults else op.runtime_options
    return {**own_runtime, **(runtime_options or {})}, ({} if defaults else dict(op.pass_options))


def all_operators(names=None):
    """Every operator of the suite (or those whose name or module is in ``names``)."""
    here = os.path.dirname(os.path.abspath(__file__))
    if here not in sys.path:
        sys.path.insert(0, here)
    ops = []
    for module in MODULES:
        for op in importlib.import_module(module).OPERATORS:
            if not names or op.name in names or module in names:
                ops.append(op)
    return ops


def check(op, device="a2", seed=0, defaults=False):
    """Runs ``op`` at its small size with numerics (with ptoc's default options instead
    of its own with ``defaults``); returns (ok, kernel, message)."""
    dims = op.small
    args = op.inputs(dims, np.random.default_rng(seed))
    kernel = op.make(dims, device, *options_of(op, defaults, {"run_numerics": True}))
    returned = kernel(*args)
    got = op.results(returned, *args)
    want = op.reference(*args)
    lines, ok = [], True
    for i, (g, w) in enumerate(zip(got, want)):
        g64, w64 = np.asarray(g, np.float64), np.asarray(w, np.float64)
        if g64.shape != w64.shape:
            lines.append(f"result {i}: shape {g64.shape}, expected {w64.shape}")
            ok = False
            continue
        err = np.abs(g64 - w64)
        bad = ~(err <= op.atol + op.rtol * np.abs(w64))
        lines.append(f"result {i}: max abs err {err.max():.3e}, "
                     f"{int(bad.sum())} of {bad.size} off tolerance")
        ok = ok and not bad.any()
    return ok, kernel, "; ".join(lines)


def simulate(op, device="a2", runtime_options=None, defaults=False, args=None):
    """Compiles and runs ``op`` at full size, timing only (with ptoc's default options
    instead of its own with ``defaults``; ``args`` reuses inputs made before); returns
    (kernel, args)."""
    dims = op.full
    if args is None:
        args = op.inputs(dims, np.random.default_rng(0))
    kernel = op.make(dims, device,
                     *options_of(op, defaults, {"run_numerics": False, **(runtime_options or {})}))
    kernel(*args)
    return kernel, args


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", help="operators or modules (default: all)")
    ap.add_argument("--full", action="store_true",
                    help="simulate at full size (timing only) instead of checking numerics")
    ap.add_argument("--device", default="a2")
    ap.add_argument("--defaults", action="store_true",
                    help="without the operators' own pass and runtime options")
    args = ap.parse_args(argv)
    status = 0
    for op in all_operators(args.names):
        if args.full:
            kernel, _ = simulate(op, args.device, defaults=args.defaults)
            run = kernel.last_run
            print(f"{op.name}: simulated {run.simulated_us:.1f} us, bound {run.bound_us:.1f} us "
                  f"({run.simulated_us / run.bound_us:.2f}x)")
        else:
            ok, kernel, message = check(op, args.device, defaults=args.defaults)
            print(f"{op.name}: {'OK' if ok else 'MISMATCH'} ({message})")
            status |= 0 if ok else 1
    return status


if __name__ == "__main__":
    sys.exit(main())
