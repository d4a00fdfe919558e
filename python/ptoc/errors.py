"""Exceptions raised by ptoc.

Every error is a ``ptoc.Error``; each kind is also the built-in exception a Python
user expects (``ValueError`` for bad shapes, tile shapes and options, ``TypeError``
for bad dtypes), so ``except ValueError`` works too. Messages name the place in the
user's code (``file:line``) and say how to fix the problem.
"""


class Error(Exception):
    """Base class of every ptoc error."""


class ShapeError(Error, ValueError):
    """Shapes that do not fit together (operands, slices, arguments)."""


class TileShapeError(Error, ValueError):
    """A tile shape that is invalid, misaligned or does not fit the device buffers."""


class DTypeError(Error, TypeError):
    """An unsupported or mismatched element type."""


class OptionError(Error, ValueError):
    """An unknown option name or an out-of-range option value."""


class ArgumentError(Error, TypeError):
    """Arguments that do not fit a function's parameters: too many, missing, or of a
    kind ptoc cannot take there (a list where an array or an int is expected)."""


class CompileError(Error, ValueError):
    """Compilation failed for another reason (the message says which)."""


class RunError(Error, RuntimeError):
    """Running a compiled kernel failed (e.g. the host ran out of memory)."""


class InternalError(Error, RuntimeError):
    """A bug in ptoc, not in the user's code; please report it with the message."""


_TILE_WORDS = ("vec_tile", "cube_tile", "tile shape", "set_vec_tile_shapes",
               "set_cube_tile_shapes", "ub capacity", "capacity", " l1 ", "l0a", "l0b",
               "l0c")
_DTYPE_WORDS = ("dtype", "element type", "floating-point", "integer operand")


def _classify(message):
    low = message.lower()
    if any(w in low for w in _TILE_WORDS):
        return TileShapeError
    if any(w in low for w in _DTYPE_WORDS):
        return DTypeError
    return None


def from_status(stage, code, message):
    """The exception for a failed C++ status (called by the extension module).

    ``stage`` is what was being done: "build" (an op of the traced function),
    "option", "compile", "run" or "input" (arrays given to a run).
    """
    if code == "internal":
        return InternalError(message)
    if stage == "option":
        return OptionError(message)
    if stage == "run":
        return RunError(message)
    kind = _classify(message)
    if kind is not None:
        return kind(message)
    if stage in ("build", "input"):
        return ShapeError(message)
    return CompileError(message)
