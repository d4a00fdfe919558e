"""``@ptoc.autotune(configs=[...])``: try an explicit list of configs (msKPP style)
and keep the fastest.

    @ptoc.autotune(configs=[
        {"vec_tile": (1, 4096)},
        {"vec_tile": (2, 4096), "pass_options": {"vec_nbuffer_mode": 0}},
    ], warmup=1, repeat=3)
    @ptoc.jit
    def softmax(x, y): ...

The first call with a new signature compiles and simulates every config (timing
only), prints ``No.<i>: <time>us, {config}`` for each and ``Best config: No.<k>``,
then runs the call with the best one; later calls with that signature use it
directly. A config that does not compile (a tile that does not fit, a bad
alignment, a bad option) is reported and skipped. A config may set ``vec_tile``,
``cube_tile`` (one shape for every set_*_tile_shapes call of the kernel, or a dict
keyed by the call's position or ``label=``), ``pass_options``, ``runtime_options``.
"""

import statistics
import sys
import threading

from .errors import Error, OptionError
from .jit import JitFunction

CONFIG_KEYS = ("vec_tile", "cube_tile", "pass_options", "runtime_options")


class ConfigResult:
    """What one config gave: ``time_us`` (median of ``repeat`` timed runs), or
    ``error`` (why it was skipped)."""

    __slots__ = ("index", "config", "time_us", "error")

    def __init__(self, index, config, time_us=None, error=None):
        self.index, self.config, self.time_us, self.error = index, config, time_us, error

    @property
    def valid(self):
        return self.error is None

    def __repr__(self):
        what = f"{self.time_us:.3f}us" if self.valid else f"invalid: {self.error}"
        return f"<ptoc.ConfigResult No.{self.index}: {what}, {self.config}>"


def _check_config(i, config):
    if not isinstance(config, dict):
        raise OptionError(f"@ptoc.autotune: config No.{i} must be a dict, got "
                          f"{type(config).__name__}")
    unknown = sorted(set(config) - set(CONFIG_KEYS))
    if unknown:
        raise OptionError(f"@ptoc.autotune: config No.{i} has unknown key '{unknown[0]}'; "
                          f"valid keys: {', '.join(CONFIG_KEYS)}")


def _first_line(e):
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


class AutotunedFunction:
    """A jit function with a list of configs to choose from, per signature."""

    def __init__(self, jit_fn, configs, warmup, repeat, file):
        self.jit_fn = jit_fn
        self.configs = list(configs)
        self.warmup = warmup
        self.repeat = repeat
        self.file = file
        # One jit function per config (its own compile cache), built on demand.
        self._variants = [None] * len(self.configs)
        self._best = {}      # signature key -> index of the best config
        self._results = {}   # signature key -> [ConfigResult]
        self._lock = threading.Lock()
        self._last_key = None

    def _variant(self, i):
        if self._variants[i] is None:
            c = self.configs[i]
            try:
                self._variants[i] = self.jit_fn.with_config(
                    pass_options=c.get("pass_options"), runtime_options=c.get("runtime_options"),
                    vec_tile=c.get("vec_tile"), cube_tile=c.get("cube_tile"))
            except Error as e:  # a bad option value: this config is invalid
                return e
        return self._variants[i]

    def _time(self, i, args, kwargs):
        variant = self._variant(i)
        if isinstance(variant, Exception):
            raise variant
        # Timing only: the simulator decides the time, numerics are not needed.
        timing = variant.with_config(runtime_options={"run_numerics": False},
                                     debug_options={"runtime_debug_mode": 0})
        times = []
        for run in range(self.warmup + self.repeat):
            timing(*args, **kwargs)
            if run >= self.warmup:
                times.append(timing.last_run.simulated_us)
        return statistics.median(times)

    def _tune(self, key, args, kwargs):
        results = []
        for i, config in enumerate(self.configs):
            try:
                results.append(ConfigResult(i, config, time_us=self._time(i, args, kwargs)))
                print(f"No.{i}: {results[-1].time_us:.3f}us, {config}", file=self.file)
            except Error as e:
                results.append(ConfigResult(i, config, error=_first_line(e)))
                print(f"No.{i}: invalid ({results[-1].error}), {config}", file=self.file)
        valid = [r for r in results if r.valid]
        if not valid:
            raise Error(f"@ptoc.autotune {self.jit_fn.fn.__qualname__}: none of the "
                        f"{len(self.configs)} configs compiles; the first failed with: "
                        f"{results[0].error}")
        best = min(valid, key=lambda r: (r.time_us, r.index))
        print(f"Best config: No.{best.index}", file=self.file)
        with self._lock:
            self._results[key] = results
            self._best[key] = best.index
        return best.index

    def _key(self, args, kwargs):
        arguments = self.jit_fn._bind(args, kwargs)
        options = self.jit_fn._resolve_options()
        return self.jit_fn._signature_key(arguments, options)

    def __call__(self, *args, **kwargs):
        key = self._key(args, kwargs)
        with self._lock:
            best = self._best.get(key)
        if best is None:
            best = self._tune(key, args, kwargs)
        self._last_key = key
        return self._variants[best](*args, **kwargs)

    @property
    def best_config(self):
        """The config chosen for the last signature called (None before a call)."""
        if self._last_key is None:
            return None
        return self.configs[self._best[self._last_key]]

    @property
    def results(self):
        """The ConfigResults of the last signature called."""
        return list(self._results.get(self._last_key, []))

    @property
    def last_run(self):
        if self._last_key is None:
            return None
        return self._variants[self._best[self._last_key]].last_run

    def compile(self, *args, **kwargs):
        """The compiled kernel of the best config (tunes first if needed)."""
        key = self._key(args, kwargs)
        if key not in self._best:
            self._tune(key, args, kwargs)
        return self._variants[self._best[key]].compile(*args, **kwargs)


def autotune(configs, warmup=1, repeat=3, file=None):
    """Chooses the fastest of ``configs`` for each signature of a ``@ptoc.jit``
    function (place it above ``@ptoc.jit``). ``warmup`` runs are discarded, the
    median of ``repeat`` simulated times decides. ``file``: where the lines go
    (default sys.stdout)."""
    if not isinstance(configs, (list, tuple)):
        raise OptionError(f"@ptoc.autotune: configs must be a list of config dicts, got "
                          f"{type(configs).__name__}")
    configs = list(configs)
    if not configs:
        raise OptionError("@ptoc.autotune needs at least one config")
    for i, c in enumerate(configs):
        _check_config(i, c)
    if (isinstance(warmup, bool) or not isinstance(warmup, int) or warmup < 0 or
            isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 1):
        raise OptionError(f"@ptoc.autotune: warmup must be an int >= 0 and repeat an int >= 1, "
                          f"got warmup={warmup!r}, repeat={repeat!r}")

    def wrap(fn):
        if not isinstance(fn, JitFunction):
            raise Error("@ptoc.autotune goes above @ptoc.jit: it tunes a jit function, got "
                        f"{type(fn).__name__}")
        return AutotunedFunction(fn, configs, warmup, repeat, file or sys.stdout)

    return wrap
