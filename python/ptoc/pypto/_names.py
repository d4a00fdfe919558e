"""Resolving PyPTO names to ptoc ones, lazily.

Some PyPTO names (dtypes such as ``DT_INT64``, ops such as ``where``) name features
ptoc is still gaining. They are looked up in ``ptoc`` when they are used, not when
this package is imported, so they start working as soon as ptoc has them; until then
using one is a ``ptoc.Error`` that says this ptoc does not support it yet.
"""

import ptoc
from ptoc.errors import Error
from ptoc.tracing import located


def unsupported(what):
    return Error(located(f"{what} is not supported by this ptoc yet (the PyPTO "
                         "compatibility layer maps it to ptoc once ptoc has it); see "
                         "docs/pypto.md, 'Known differences'"))


def ptoc_attr(name, what=None):
    """``ptoc.<name>``, or an error naming the PyPTO feature that needs it."""
    value = getattr(ptoc, name, None)
    if value is None:
        raise unsupported(what or f"pypto.{name}")
    return value


class MissingDType:
    """A PyPTO dtype this ptoc has no element type for yet. Naming it is fine (a table
    of dtypes may list it); computing with it is an error."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"pypto.{self.name} (not supported by this ptoc yet)"

    def __eq__(self, other):
        return isinstance(other, MissingDType) and other.name == self.name

    def __hash__(self):
        return hash(("MissingDType", self.name))


DTYPE_NAMES = ("DT_FP32", "DT_FP16", "DT_BF16", "DT_INT8", "DT_INT16", "DT_INT32",
               "DT_INT64", "DT_UINT8", "DT_UINT16", "DT_UINT32", "DT_UINT64", "DT_BOOL",
               "DT_FP8", "DT_HF4", "DT_HF8", "DT_DOUBLE")


def dtype(name):
    """ptoc's dtype of the PyPTO name, or a MissingDType placeholder."""
    value = getattr(ptoc, name, None)
    return value if value is not None else MissingDType(name)


def as_ptoc_dtype(d, what):
    """A ptoc dtype from what a PyPTO program passes as one (an error for a
    MissingDType)."""
    if isinstance(d, MissingDType):
        raise unsupported(f"{what}: pypto.{d.name}")
    return d
