"""What every Python example shares: its command line, the numpy comparison and the
report it prints (the run summary and, with a debug mode, the swimlane path)."""

import argparse

import numpy as np


def parse_args(doc):
    """``--debug-mode {0,1,2}`` (default 1), ``--device NAME`` (default a2) and
    ``--derived-tiles`` (call no set_*_tile_shapes: the compiler derives every tile)."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--debug-mode", type=int, default=1, choices=(0, 1, 2),
                        help="runtime_debug_mode: 0 off, 1 swimlane + summary files, 2 pipe lanes")
    parser.add_argument("--device", default="a2", help="device preset or JSON file (default a2)")
    parser.add_argument("--derived-tiles", action="store_true",
                        help="set no tile shapes: the default-tiles pass derives them from the "
                             "ops and the device (docs/passes.md); the summary lists them")
    return parser.parse_args()


def check(name, got, want, rtol, atol):
    """Prints the max abs/rel error; False when an element is off tolerance
    (|got - want| > atol + rtol |want|, numpy.isclose's rule)."""
    got, want = got.astype(np.float64), want.astype(np.float64)
    err = np.abs(got - want)
    rel = err / np.maximum(np.abs(want), atol)  # relative error, floored at atol
    ok = bool(np.all(err <= atol + rtol * np.abs(want)))
    print(f"{name}: max abs err {err.max():.3e}, max rel err {rel.max():.3e} "
          f"(rtol {rtol:g}, atol {atol:g}): {'OK' if ok else 'MISMATCH'}")
    return ok


def report(kernel, ok, debug_mode):
    """Prints the last run's summary (and swimlane path); the exit status."""
    run = kernel.last_run
    print(run.summary)
    if debug_mode >= 1:
        print(f"swimlane: {run.swimlane_path}")
    return 0 if ok else 1
