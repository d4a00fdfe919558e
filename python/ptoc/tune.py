"""``ptoc.tune(kernel, *args)``: search the knobs of a jit function for these
arguments on the simulator — tile shapes, merge counts, scheduler modes — with a
search strategy, and use the best from then on.

    r = ptoc.tune(softmax, x, y, strategy="auto", budget=64, seed=0)
    print(r.best_us, r.baseline_us, r.config)
    softmax(x, y)      # runs the tuned kernel

The knowledge bank (docs/tuning.md) is consulted first: a known signature costs no
evaluation, and every evaluated config is recorded for the next time.
"""

import json
import sys

from . import _ptoc
from .errors import Error
from .jit import JitFunction, session_for


class TuneResult:
    """What ptoc.tune found: ``best_us`` (None if nothing compiled), ``baseline_us``
    (the kernel as written), ``config`` (dict), ``evaluations``, ``bank_hit``,
    ``strategy``, ``result_path`` (the tune_result JSON)."""

    def __init__(self, report):
        self._report = report
        self.best_us = report["best_us"]
        self.baseline_us = report["baseline_us"]
        self.config = json.loads(report["config"]) if "config" in report else None
        self.evaluations = report["evaluations"]
        self.bank_hit = report["bank_hit"]
        self.strategy = report["strategy"]
        self.result_path = report["result_path"]
        self.space_size = report["space_size"]

    @property
    def speedup(self):
        return self.baseline_us / self.best_us if self.best_us else None

    def __repr__(self):
        best = f"{self.best_us:.3f}us" if self.best_us is not None else "none"
        return (f"<ptoc.TuneResult best {best} (written: {self.baseline_us:.3f}us), "
                f"{self.evaluations} evaluations{' (bank hit)' if self.bank_hit else ''}, "
                f"{self.config}>")


def _progress_printer(name, file):
    def show(used, planned, best):
        best_text = f"{best:.3f} us" if best is not None else "-"
        file.write(f"\rtuning {name}: {used}/{planned} evaluated, best {best_text}")
        file.flush()
        if used >= planned:
            file.write("\n")
    return show


def tune(kernel, *args, space=None, strategy="auto", budget=64, seed=0, threads=0,
         bank=None, use_bank=True, result_dir=None, progress=True, **kwargs):
    """Tunes ``kernel`` (a ``@ptoc.jit`` function) for the signature of ``args``;
    later calls with that signature use the best config. Returns a TuneResult.
    ``strategy``: "auto", "grid", "random", "ga", "rl". ``space=None`` derives the
    space from the operator (docs/tuning.md). ``bank``: the knowledge bank folder
    (default PTOC_TUNE_BANK_PATH or ~/.cache/ptoc/bank); ``use_bank=False`` neither
    reads nor writes it. ``progress``: a progress line on stderr."""
    if not isinstance(kernel, JitFunction):
        raise Error(f"ptoc.tune tunes a @ptoc.jit function, got {type(kernel).__name__}")
    if space is not None:
        raise Error("ptoc.tune: custom spaces are not supported yet; pass space=None to "
                    "derive the space from the operator")
    compiled = kernel.compile(*args, **kwargs)
    text = compiled.ir("tensor")
    knobs = dict(compiled.options.pass_options)
    report = _ptoc.tune_text(
        session_for(kernel.device), text, strategy=strategy, budget=budget, seed=seed,
        threads=threads, bank_path=bank or "", use_bank=use_bank, result_dir=result_dir or "",
        knobs=knobs,
        progress=_progress_printer(kernel.fn.__name__, sys.stderr) if progress else None)
    result = TuneResult(report)
    if "module_text" in report:
        kernel._use_tuned(kernel._bind(args, kwargs), report["module_text"], report["knobs"],
                          report["sched_mode"])
    return result
