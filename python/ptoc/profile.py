"""Profiling from Python: ``ptoc.profile.analyze(path)`` is ``ptoc prof PATH``.

``path`` is a run's ``merged_swimlane.json`` or its run folder (``last_run.swimlane_path``
of a kernel run with ``runtime_debug_mode=1`` or 2), or a trace PyPTO wrote on a device
(Machine View, Worker View). The result is the content of analysis.json as a dict;
docs/profiling.md lists its keys ("analysis.json keys") and the verdict rules. The
same library operation as the CLI computes it (profile::profileTrace).
"""

import json
import os

from . import _ptoc
from .errors import ArgumentError, Error

__all__ = ["TraceError", "analyze"]


class TraceError(Error, ValueError):
    """A trace that cannot be analysed: missing, malformed, truncated or not from ptoc."""


def analyze(path, top=_ptoc.DEFAULT_TOP, write=False, device=None):
    """The analysis of a run's trace as a dict (the keys of analysis.json).

    ``top``: how many tasks to list by duration and by scheduling wait. ``write``: also
    write the analysis beside the trace and refresh (or, for a device trace, write) its
    swimlane.html, as ``ptoc prof`` does. ``device``: the device a PyPTO trace ran on
    (a preset name or a JSON file), so idle cores without a lane count (``ptoc prof
    --device``). Raises TraceError (a ValueError) naming what is wrong with the trace.
    """
    if not isinstance(top, int) or isinstance(top, bool) or not 0 <= top <= _ptoc.MAX_TOP:
        raise ArgumentError(f"analyze(): top must be an int from 0 to {_ptoc.MAX_TOP}, "
                            f"got {top!r}")
    if device is not None and not isinstance(device, (str, os.PathLike)):
        raise ArgumentError(f"analyze(): device must be a preset name or a path, got {device!r}")
    try:
        text = _ptoc.analyze_trace(str(path), top, bool(write),
                                   "" if device is None else str(device))
    except ValueError as e:
        raise TraceError(str(e)) from None
    return json.loads(text)
