"""Compile-time constant arguments of a ``@ptoc.jit`` call, keyed by value.

A constant (a float, a flag, a shape, a config) is part of the cache key. Hashable
values key themselves; lists, dicts, sets and dataclasses (plain dataclasses are
unhashable) are keyed by a frozen, canonical copy of their contents, so an equal
config hits the cache and a different one compiles anew. Every leaf carries its
type: ``[1]``, ``[1.0]`` and ``[True]`` are different keys, as they may trace
differently.
"""

import dataclasses

import numpy as np


class Unkeyable(Exception):
    """A part of a constant that can be neither hashed nor frozen: ``path`` says where
    (``value.layers[2]``), ``reason`` why."""

    def __init__(self, path, reason):
        super().__init__(f"{path} {reason}")
        self.path = path
        self.reason = reason


def _type_tag(value):
    t = type(value)
    return f"{t.__module__}.{t.__qualname__}"


def freeze(value, path="value"):
    """A hashable, canonical form of ``value``: equal values give equal forms.
    Raises Unkeyable (naming the part) for an unhashable value it cannot look into."""
    return _freeze(value, path, set())


def _freeze(value, path, active):
    if isinstance(value, (list, tuple, dict, set, frozenset)) or (
            dataclasses.is_dataclass(value) and not isinstance(value, type)):
        if id(value) in active:
            raise Unkeyable(path, "contains itself")
        active.add(id(value))
        try:
            return _freeze_container(value, path, active)
        finally:
            active.discard(id(value))
    if isinstance(value, np.ndarray):
        return (_type_tag(value), value.dtype.str, value.shape, value.tobytes())
    try:
        hash(value)
    except TypeError:
        raise Unkeyable(path, f"is a {type(value).__name__}, which is unhashable") from None
    return (_type_tag(value), value)


def _freeze_container(value, path, active):
    tag = _type_tag(value)
    if isinstance(value, (list, tuple)):
        return (tag, tuple(_freeze(x, f"{path}[{i}]", active) for i, x in enumerate(value)))
    if isinstance(value, dict):
        items = [(_freeze(k, f"{path} key {k!r}", active), _freeze(x, f"{path}[{k!r}]", active))
                 for k, x in value.items()]
        # Equal dicts in any insertion order give one key.
        return (tag, tuple(sorted(items, key=repr)))
    if isinstance(value, (set, frozenset)):
        return (tag, frozenset(_freeze(x, f"{path} element", active) for x in value))
    return (tag, tuple((f.name, _freeze(getattr(value, f.name), f"{path}.{f.name}", active))
                       for f in dataclasses.fields(value)))
