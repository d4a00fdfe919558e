"""The trace of one call of a ``@ptoc.jit`` function: the C++ builder the ops go
into, the settings made inside the function, and the user's source location.

The trace being built is per thread (``threading.local``), so two threads can trace
and compile different kernels at the same time; nothing here is shared between
traces.
"""

import itertools
import os
import sys
import threading

from .errors import Error

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
_local = threading.local()


def _in_package(code, _cache={}):
    """Whether a code object's file lies in the ptoc package (cached per file name:
    every traced op asks, for each frame between it and the user)."""
    name = code.co_filename
    inside = _cache.get(name)
    if inside is None:
        inside = _cache[name] = os.path.abspath(name).startswith(_PACKAGE_DIR)
    return inside


def user_location():
    """(file, line) of the innermost frame outside the ptoc package."""
    f = sys._getframe(1)
    while f is not None and _in_package(f.f_code):
        f = f.f_back
    if f is None:
        return ("<unknown>", 0)
    return (f.f_code.co_filename, f.f_lineno)


def user_position():
    """(file, line, column) of the innermost frame outside the ptoc package: the
    position of the expression it is evaluating (1-based column; 1 where Python
    does not say)."""
    f = sys._getframe(1)
    while f is not None and _in_package(f.f_code):
        f = f.f_back
    if f is None:
        return ("<unknown>", 0, 1)
    line, col = f.f_lineno, 1
    positions = getattr(f.f_code, "co_positions", None)  # Python 3.11+
    if positions is not None and f.f_lasti >= 0:
        at = next(itertools.islice(positions(), f.f_lasti // 2, None), None)
        if at is not None and at[0] is not None and at[2] is not None:
            line, col = at[0], at[2] + 1
    return (f.f_code.co_filename, line or 0, col)


def located(message, location=None):
    """``file:line: error: message`` at the user's code."""
    file, line = location or user_location()
    return f"{file}:{line}: error: {message}"


class Trace:
    """One function being traced into the builder."""

    def __init__(self, builder, func_name):
        self.builder = builder
        self.func_name = func_name
        self.pass_options = {}     # set_pass_options / ptoc.options inside the function
        self.runtime_options = {}  # set_runtime_options inside the function
        self.debug_options = {}
        self.host_options = {}
        self.tile_overrides = {}   # JitFunction.with_config: shapes replacing set_* calls
        self.tile_calls = {"vec_tile": 0, "cube_tile": 0}
        # Loops (loops.py): the function being traced now (the jit function or a
        # loop body), the body names used, and the user's line of the last op.
        from .loops import Scope
        self.root = self.fn_scope = Scope(self, builder)
        self.loop_count = 0
        self.body_names = set()
        self.loop_paths = {}  # loop name -> bodies traced for its begin/end paths
        self.location = ("<unknown>", 0)

    def push_scope(self, scope):
        """Traces into loop body ``scope`` until pop_scope."""
        self.fn_scope = scope
        self.builder = scope.builder

    def pop_scope(self, scope):
        if self.fn_scope is scope:
            self.fn_scope = scope.parent
            self.builder = self.fn_scope.builder

    def tile_shape(self, kind, label, given):
        """The shape the ``kind`` ("vec_tile" / "cube_tile") setting call gives: the
        override for this call (by label, then position, then for all calls) or
        ``given``."""
        index = self.tile_calls[kind]
        self.tile_calls[kind] += 1
        spec = self.tile_overrides.get(kind)
        if spec is None:
            return given
        if isinstance(spec, dict):
            if label is not None and label in spec:
                return spec[label]
            return spec.get(index, given)
        return spec

    def at_user_code(self):
        """Points the builder at the user's current line (ops created next get it)."""
        file, line = user_location()
        self.location = (file, line)
        self.builder.set_location(file, line)


def current_trace(what=None):
    """The trace being built on this thread; with ``what``, raises if there is none."""
    trace = getattr(_local, "trace", None)
    if trace is None and what is not None:
        raise Error(located(f"{what} works only inside a @ptoc.jit function while it is "
                            "traced; outside one, use ptoc.options(...) or the jit options"))
    return trace


class tracing:
    """Context manager making ``trace`` the current trace of this thread."""

    def __init__(self, trace):
        self.trace = trace

    def __enter__(self):
        self.saved = getattr(_local, "trace", None)
        _local.trace = self.trace
        return self.trace

    def __exit__(self, *exc):
        _local.trace = self.saved
        return False
