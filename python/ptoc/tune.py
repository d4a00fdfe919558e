"""``ptoc.tune(kernel, *args)``: search the knobs of a jit function for these
arguments on the simulator — tile shapes, merge counts, scheduler modes and, for a
kernel with a parallel loop, device_sched_parallelism — with a search strategy, and
use the best from then on.

    r = ptoc.tune(softmax, x, y, strategy="auto", budget=64, seed=0)
    print(r.best_us, r.baseline_us, r.config)
    softmax(x, y)      # runs the tuned kernel

The knowledge bank (docs/tuning.md) is consulted first: a known signature costs no
evaluation, and every evaluated config is recorded for the next time.
"""

import json
import os
import sys

from . import _ptoc
from .errors import ArgumentError, OptionError
from .jit import JitFunction, session_for
from .options import TUNE_DEFAULTS


class TuneResult:
    """What ptoc.tune found: ``best_us`` (None if nothing compiled), ``baseline_us``
    (the kernel as written), ``config`` (dict), ``evaluations``, ``bank_hit``,
    ``compiles``, ``strategy``, ``result_path`` (the tune_result JSON), ``space_size``,
    ``written_config`` (the kernel as written, in the space's knobs; None when the space
    cannot say it), ``changed`` (knob -> (written, best) for every knob the best
    config sets differently),
    ``pruned`` (configs rejected before compiling) and ``invalid`` ((config, reason)
    pairs)."""

    def __init__(self, report):
        self._report = report
        self.best_us = report["best_us"]
        self.baseline_us = report["baseline_us"]
        self.config = json.loads(report["config"]) if "config" in report else None
        self.evaluations = report["evaluations"]
        #: compiles made: configs that differ only in runtime options (the scheduler
        #: mode, device_sched_parallelism) share one
        self.compiles = report["compiles"]
        self.bank_hit = report["bank_hit"]
        self.strategy = report["strategy"]
        self.result_path = report["result_path"]
        self.space_size = report["space_size"]
        #: (config JSON, why) of every config that was pruned before compiling or
        #: failed to compile or simulate.
        self.invalid = [(json.loads(c), why) for c, why in report["invalid"]]
        self.pruned = report["pruned"]
        written = report.get("written_config")
        self.written_config = json.loads(written) if written else None

    @property
    def changed(self):
        if not self.config or self.written_config is None:
            return {}
        return {knob: (self.written_config.get(knob), value)
                for knob, value in self.config.items()
                if self.written_config.get(knob) != value}

    @property
    def speedup(self):
        return self.baseline_us / self.best_us if self.best_us else None

    def __repr__(self):
        best = f"{self.best_us:.3f}us" if self.best_us is not None else "none"
        invalid = f", {len(self.invalid)} invalid" if self.invalid else ""
        return (f"<ptoc.TuneResult best {best} (written: {self.baseline_us:.3f}us), "
                f"{self.evaluations} evaluations{' (bank hit)' if self.bank_hit else ''}"
                f"{invalid}, {self.config}>")


def _cube_tile_value(value, knob):
    """(m, k, n), each an int or [L0, L1], as the flat [mL0, mL1, kL0, kL1, nL0, nL1]."""
    if isinstance(value, (list, tuple)) and len(value) == 3:
        flat = []
        for part in value:
            pair = [part, part] if isinstance(part, int) else list(part)
            if len(pair) != 2:
                break
            flat += pair
        else:
            return flat
    if isinstance(value, (list, tuple)) and len(value) == 6:
        return list(value)
    raise OptionError(f"ptoc.tune: space knob '{knob}' value {value!r} is not a cube tile: give "
                f"(m, k, n) with [L0, L1] each (as set_cube_tile_shapes takes), or "
                f"[mL0, mL1, kL0, kL1, nL0, nL1]")


def _space_json(space):
    """The JSON of a user's space: {knob: [values]} (docs/tuning.md)."""
    if not isinstance(space, dict) or not space:
        raise OptionError(f"ptoc.tune: space must be a dict of knob -> list of values, e.g. "
                    f"{{'vec_tile': [(8, 4096), (16, 4096)], 'device_sched_mode': [0, 3]}}; "
                    f"got {space!r}")
    out = {}
    for knob, values in space.items():
        if not isinstance(knob, str):
            raise OptionError(f"ptoc.tune: space knob names are strings, got {knob!r}")
        if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
            raise OptionError(f"ptoc.tune: space knob '{knob}' must list its values, got {values!r}")
        values = list(values)
        if knob.startswith("cube_tile"):
            values = [_cube_tile_value(v, knob) for v in values]
        else:
            values = [list(v) if isinstance(v, tuple) else v for v in values]
        out[knob] = values
    try:
        return json.dumps(out, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as e:
        raise OptionError(f"ptoc.tune: space values must be finite numbers, bools, strings or "
                          f"lists of integers ({type(e).__name__}: {e})") from None


class _Progress:
    """The progress bar of a search on ``file`` (the same bar as ``ptoc tune``, drawn by
    the C++ session::TuneProgress): ``tuning softmax: [#####...............] 16/64
    evaluated, best 27.233 us``. Redrawn in place on a terminal; in a log, a line per
    tenth of the plan and the last one."""

    def __init__(self, name, file):
        self._file = file
        self._bar = _ptoc.TuneProgress(f"tuning {name}",
                                       hasattr(file, "isatty") and file.isatty())

    def __call__(self, used, planned, best, pruned):
        self._write(self._bar.report(used, planned, best, pruned))

    def finish(self):
        """Ends the in-place line, or writes the last report if a log has not got it."""
        self._write(self._bar.finish())

    def _write(self, text):
        if text:
            self._file.write(text)
            self._file.flush()


def tune(kernel, *args, space=None, strategy=TUNE_DEFAULTS["strategy"],
         budget=TUNE_DEFAULTS["budget"], seed=TUNE_DEFAULTS["seed"],
         threads=TUNE_DEFAULTS["threads"], bank=None, use_bank=TUNE_DEFAULTS["use_bank"],
         result_dir=None, progress=True, **kwargs):
    """Tunes ``kernel`` (a ``@ptoc.jit`` function) for the signature of ``args``;
    later calls with that signature use the best config. Returns a TuneResult.
    ``strategy``: "auto", "grid", "random", "ga", "rl". ``space=None`` derives the
    space from the operator; else a dict of knob -> values, e.g.
    ``{"vec_tile": [(8, 4096), (16, 4096)], "vec_nbuffer[0]": ["auto", 2, 4],
    "device_sched_mode": [0, 3], "pg_upper_bound": [0, 20000]}`` (knob names and
    meanings: docs/tuning.md). ``bank``: the knowledge bank folder
    (default PTOC_TUNE_BANK_PATH or ~/.cache/ptoc/bank); ``use_bank=False`` neither
    reads nor writes it. ``progress``: a progress bar on stderr."""
    if not isinstance(kernel, JitFunction):
        raise ArgumentError(f"ptoc.tune tunes a @ptoc.jit function, got "
                            f"{type(kernel).__name__}")
    if not isinstance(strategy, str):
        raise OptionError(f"ptoc.tune: strategy must be a str (auto, grid, random, ga, rl), "
                          f"got {strategy!r}")
    for name, value, lo, hi in (("budget", budget, 1, 2**64 - 1), ("seed", seed, 0, 2**64 - 1),
                                ("threads", threads, 0, _ptoc.MAX_HOST_THREADS)):
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            raise OptionError(f"ptoc.tune: {name} must be an int in [{lo}, {hi}], got {value!r}")
    def folder(name, value):
        path = os.fspath(value) if isinstance(value, os.PathLike) else value
        if value is not None and not isinstance(path, str):
            raise OptionError(f"ptoc.tune: {name} must be a folder path (a str), got {value!r}")
        return path or ""

    bank, result_dir = folder("bank", bank), folder("result_dir", result_dir)
    for name, value in (("use_bank", use_bank), ("progress", progress)):
        if not isinstance(value, bool) and value not in (0, 1):
            raise OptionError(f"ptoc.tune: {name} must be True or False, got {value!r}")
    space_json = _space_json(space) if space is not None else ""
    compiled = kernel.compile(*args, **kwargs)
    text = compiled._plan.tensor_text
    # The call's sizes: what a kernel with dynamic axes is tuned for.
    hosts = kernel._host_arrays(kernel._bind(args, kwargs))
    arg_shapes = [list(hosts[name].shape) for name in compiled._plan.tensor_params]
    # Their data, as the kernel reads it: loops whose bounds or offsets read values of
    # the inputs (a block table, group offsets) are instantiated with it. Tuning runs
    # read no floating-point values.
    arg_data = [hosts[name].for_kernel(values=False) for name in compiled._plan.tensor_params]
    knobs = dict(compiled.options.pass_options)
    # The kernel as written runs with its own runtime options: so is it measured.
    run = kernel._runtime_options(compiled, kernel._resolve_options())
    bar = _Progress(kernel.fn.__name__, sys.stderr) if progress else None
    try:
        report = _ptoc.tune_text(
            session_for(kernel.device), text, strategy=strategy, budget=budget, seed=seed,
            threads=threads, bank_path=bank, use_bank=bool(use_bank),
            result_dir=result_dir, knobs=knobs, progress=bar, space_json=space_json,
            arg_shapes=arg_shapes, arg_data=arg_data, sched_mode=run["device_sched_mode"],
            stitch_max_num=run["stitch_function_max_num"],
            sched_parallelism=run["device_sched_parallelism"])
    finally:
        if bar is not None:
            bar.finish()
    result = TuneResult(report)
    if "module_text" in report:
        kernel._use_tuned(kernel._bind(args, kwargs), report["module_text"], report["knobs"],
                          report["sched_mode"], report["sched_parallelism"])
    return result
