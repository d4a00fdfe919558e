"""Profiling from Python: ``ptoc.profile.analyze(path)`` is ``ptoc prof PATH``.

``path`` is a run's ``merged_swimlane.json`` or its run folder (``last_run.swimlane_path``
of a kernel run with ``runtime_debug_mode=1`` or 2). The result is the content of
analysis.json as a dict; docs/profiling.md lists its keys ("analysis.json keys") and
the verdict rules.
"""

import json

from . import _ptoc
from .errors import ArgumentError, Error

__all__ = ["TraceError", "analyze"]


class TraceError(Error, ValueError):
    """A trace that cannot be analysed: missing, malformed, truncated or not from ptoc."""


def analyze(path, top=10, write=False):
    """The analysis of a run's trace as a dict (the keys of analysis.json).

    ``top``: how many tasks to list by duration and by scheduling wait. ``write``: also
    write analysis.json beside the trace, as ``ptoc prof`` does. Raises TraceError
    (a ValueError) naming what is wrong with the trace.
    """
    if not isinstance(top, int) or isinstance(top, bool) or not 0 <= top <= _ptoc.MAX_TOP:
        raise ArgumentError(f"analyze(): top must be an int from 0 to {_ptoc.MAX_TOP}, "
                            f"got {top!r}")
    try:
        text = _ptoc.analyze_trace(str(path), top, bool(write))
    except ValueError as e:
        raise TraceError(str(e)) from None
    return json.loads(text)
