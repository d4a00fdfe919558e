"""Axis annotations of a ``ptoc.Tensor`` parameter: which axes change from call to
call without recompiling.

``ptoc.Tensor([ptoc.DYNAMIC, 128], ptoc.DT_FP16)`` declares a parameter whose first
axis may have any size: one compiled kernel serves every size, and inside the traced
function ``x.shape[0]`` is a symbolic scalar (``ptoc.SymInt``). ``ptoc.STATIC`` (or
an int) is an axis whose size is part of the signature: a new size compiles anew.
``...`` stands for all remaining axes, static. ``ptoc.dynamic("bs")`` names a dynamic
axis: every axis annotated with the same name must have the same size in a call.
"""

import re

from .errors import ShapeError


class Axis:
    """An axis annotation: ``DYNAMIC``, ``STATIC`` or ``dynamic(name)``."""

    __slots__ = ("_kind", "_name")

    def __init__(self, kind, name=None):
        self._kind = kind  # "dynamic" or "static"
        self._name = name

    @property
    def is_dynamic(self):
        return self._kind == "dynamic"

    @property
    def name(self):
        """The user's name of a named dynamic axis, else None."""
        return self._name

    def __repr__(self):
        if self._name is not None:
            return f"ptoc.dynamic({self._name!r})"
        return "ptoc.DYNAMIC" if self.is_dynamic else "ptoc.STATIC"

    def __eq__(self, other):
        return (isinstance(other, Axis) and other._kind == self._kind and
                other._name == self._name)

    def __hash__(self):
        return hash((self._kind, self._name))

    def __reduce__(self):
        if self._name is not None:
            return (dynamic, (self._name,))
        return (_named, (self._kind,))


def _named(kind):
    return DYNAMIC if kind == "dynamic" else STATIC


DYNAMIC = Axis("dynamic")
DYN = DYNAMIC
STATIC = Axis("static")

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def dynamic(name):
    """A named dynamic axis: the axes of several parameters annotated with the same
    name share one size (checked at each call) and one symbol."""
    if not isinstance(name, str) or not _NAME.match(name):
        raise ShapeError(f"ptoc.dynamic(name): the name must be an identifier "
                         f"(letters, digits, '_'), got {name!r}")
    return Axis("dynamic", name)
