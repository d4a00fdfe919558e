"""Option dictionaries (runtime, debug, host, pass) and ``ptoc.options``.

Each kind of option has a fixed set of names; an unknown name or a value out of
range raises ``ptoc.OptionError`` listing what is valid. Options apply from the
least to the most specific: ``ptoc.options(...)`` around a call, then the options of
``@ptoc.jit(...)``, then settings made inside the traced function
(``set_pass_options``, ``set_runtime_options``, or ``ptoc.options`` used inside it).
"""

import functools
import threading

from . import _ptoc
from .errors import OptionError
from .tracing import current_trace

STAGES = ("tensor", "tile", "partitioned", "codegen")
# The largest value a C++ int64 holds (tile sizes, scope ids, pass option values).
INT64_MAX = 2**63 - 1


def _int_in(lo, hi):
    def check(name, v):
        if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
            raise OptionError(f"option '{name}' must be an int in [{lo}, {hi}], got {v!r}")
        return v
    return check


def _boolean(name, v):
    if not isinstance(v, bool) and v not in (0, 1):
        raise OptionError(f"option '{name}' must be True or False, got {v!r}")
    return bool(v)


def _string(name, v):
    if not isinstance(v, str):
        raise OptionError(f"option '{name}' must be a str, got {v!r}")
    return v


def _stage(name, v):
    if v not in STAGES:
        raise OptionError(f"option '{name}' must be one of {', '.join(STAGES)}, got {v!r}")
    return v


# The defaults of every option, from the C++ option structs (python/src/Defaults.cpp):
# declared there once, read here.
_DEFAULTS = _ptoc.default_options()


def _table(kind, rows):
    """name -> (checker, default, meaning): `rows` gives (checker, meaning); the default
    is the C++ one. An option without a C++ default, or one C++ declares that Python
    does not, is a bug of this file or of Defaults.cpp."""
    defaults = _DEFAULTS[kind]
    if set(rows) != set(defaults):
        raise ImportError(f"{kind}: the Python options {sorted(rows)} and the C++ defaults "
                          f"{sorted(defaults)} (_ptoc.default_options()) differ")
    return {name: (check, defaults[name], meaning) for name, (check, meaning) in rows.items()}


RUNTIME_OPTIONS = _table("runtime_options", {
    "device_sched_mode": (_int_in(_ptoc.MIN_SCHED_MODE, _ptoc.MAX_SCHED_MODE),
                          "0 FIFO, 1 L2 affinity, 2 fair across AICPU threads, 3 both"),
    "host_threads": (_int_in(0, _ptoc.MAX_HOST_THREADS),
                     "host threads computing the numerics (0 = all cores)"),
    "run_numerics": (_boolean,
                     "compute the outputs; False simulates timing only (outputs untouched)"),
    "stitch_function_max_num": (_int_in(_ptoc.MIN_STITCH, _ptoc.MAX_STITCH),
                                "loop iterations the AICPU control thread submits per stitch"),
    "device_sched_parallelism": (_int_in(_ptoc.AUTO_SCHED_PARALLELISM, _ptoc.MAX_SCHED_PARALLELISM),
                                 "iterations of a parallel loop (ptoc.loop(..., parallel=True)) "
                                 "that may run at once; 0 derives it from the kernel"),
})
DEBUG_OPTIONS = _table("debug_options", {
    "runtime_debug_mode": (_int_in(0, _ptoc.MAX_DEBUG_MODE),
                           "0 off, 1 swimlane + summary in a run folder, 2 also pipe lanes"),
    "compile_debug_mode": (_int_in(0, 1),
                           "1: the IR after every pass is written into a run folder"),
    "output_dir": (_string, "base folder of run folders (default $PTOC_OUTPUT_DIR or ./output)"),
})
HOST_OPTIONS = _table("host_options", {
    "compile_stage": (_stage, "stop compiling after this stage: tensor, tile, partitioned, codegen"),
    "double_buffer": (_boolean, "ping-pong local buffers (transfers overlap compute)"),
    "verify_each": (_boolean, "verify the IR after every pass that changed it"),
    "max_tile_ops": (_int_in(1, 2**62),
                     "stop compiling a function past this many tile ops (about 750 bytes of "
                     "host memory each): a tile shape far too small for its tensor is an "
                     "error, not an exhausted host"),
    "use_tune_bank": (_boolean,
                      "compile the knowledge bank's best config for this signature, if it "
                      "has one (docs/tuning.md); False compiles the function as written"),
    "tune_bank_path": (_string, "the knowledge bank folder (default $PTOC_TUNE_BANK_PATH "
                                "or ~/.cache/ptoc/bank)"),
})
# ptoc.tune's keyword defaults (strategy, budget, seed, threads, use_bank).
TUNE_DEFAULTS = dict(_DEFAULTS["tune"])
_TABLES = {"runtime_options": RUNTIME_OPTIONS, "debug_options": DEBUG_OPTIONS,
           "host_options": HOST_OPTIONS}


def check_options(kind, options):
    """A validated copy of ``options`` (a dict or None) of ``kind``."""
    if options is None:
        return {}
    if not isinstance(options, dict):
        raise OptionError(f"{kind} must be a dict, got {type(options).__name__}")
    table = _TABLES[kind]
    out = {}
    for name, value in options.items():
        if name not in table:
            raise OptionError(f"unknown {kind[:-1].replace('_', ' ')} '{name}'; valid: "
                              f"{', '.join(sorted(table))}")
        out[name] = table[name][0](name, value)
    return out


def check_pass_options(options):
    """A validated copy of pass options (knob names as in DESIGN.md)."""
    if options is None:
        return {}
    if not isinstance(options, dict):
        raise OptionError(f"pass_options must be a dict, got {type(options).__name__}")
    out = {}
    for name, value in options.items():
        if not isinstance(name, str):
            raise OptionError(f"pass option names are strings, got {name!r}")
        if name == "sg_set_scope":
            if isinstance(value, bool) or not isinstance(value, int) or not -1 <= value <= INT64_MAX:
                raise OptionError(f"pass option 'sg_set_scope' must be an int in [-1, "
                                  f"{INT64_MAX}] (-1 clears the scope), got {value!r}")
        else:
            _ptoc.check_pass_option(name, value)
        out[name] = value
    return out


def defaults(kind):
    return {name: spec[1] for name, spec in _TABLES[kind].items()}


class OptionSet:
    """The four option dicts, validated."""

    __slots__ = ("pass_options", "runtime_options", "debug_options", "host_options")

    def __init__(self, pass_options=None, runtime_options=None, debug_options=None,
                 host_options=None):
        self.pass_options = check_pass_options(pass_options)
        self.runtime_options = check_options("runtime_options", runtime_options)
        self.debug_options = check_options("debug_options", debug_options)
        self.host_options = check_options("host_options", host_options)

    def merged_over(self, base):
        """``base`` with these options on top (a new OptionSet)."""
        out = OptionSet()
        for kind in self.__slots__:
            merged = dict(getattr(base, kind))
            merged.update(getattr(self, kind))
            setattr(out, kind, merged)
        return out


_local = threading.local()


def ambient():
    """The ``ptoc.options`` contexts active on this thread, merged (outermost first)."""
    result = OptionSet()
    for o in getattr(_local, "stack", ()):
        result = o.merged_over(result)
    return result


class options:
    """Options for the ptoc calls made while it is active; a context manager and a
    decorator::

        with ptoc.options(debug_options={"runtime_debug_mode": 1}):
            softmax(x, y)

        @ptoc.options(pass_options={"pg_lower_bound": 1024})
        def f(...): ...

    Used inside a traced function (or on the function a ``@ptoc.jit`` wraps), its
    options apply to that kernel like ``set_pass_options`` / ``set_runtime_options``
    and ``sg_set_scope`` applies to the ops created inside the block.
    """

    def __init__(self, pass_options=None, runtime_options=None, debug_options=None,
                 host_options=None):
        self.set = OptionSet(pass_options, runtime_options, debug_options, host_options)

    def __enter__(self):
        trace = current_trace()
        self._trace = trace
        if trace is None:
            _local.stack = getattr(_local, "stack", ()) + (self.set,)
            return self
        # Inside a traced function: settings of this kernel.
        knobs = dict(self.set.pass_options)
        scope = knobs.pop("sg_set_scope", None)
        trace.pass_options.update(knobs)
        trace.runtime_options.update(self.set.runtime_options)
        trace.debug_options.update(self.set.debug_options)
        trace.host_options.update(self.set.host_options)
        self._saved_scope = getattr(trace, "scope", -1)
        if scope is not None:
            trace.scope = scope
            trace.builder.set_scope(scope)
        return self

    def __exit__(self, *exc):
        trace = self._trace
        if trace is None:
            _local.stack = _local.stack[:-1]
        elif "sg_set_scope" in self.set.pass_options:
            trace.scope = self._saved_scope
            trace.builder.set_scope(self._saved_scope)
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with options(**{k: getattr(self.set, k) for k in OptionSet.__slots__}):
                return fn(*args, **kwargs)
        return wrapper
