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
    """Running a compiled kernel failed (the message says why)."""


class ResourceError(Error, MemoryError):
    """The host has not the memory for a compile or a run: the tile ops of a tile
    shape far too small for its tensor, tensors too big for the memory left. The
    message names the limit (the process's address-space limit, its cgroup's, the
    host's free memory) and the fix (bigger tiles, a higher limit)."""


class FileError(Error, OSError):
    """Reading or writing a file failed (a run folder, an IR dump, a device file): the
    disk is full, a folder is not writable, a file is missing."""


class InternalError(Error, RuntimeError):
    """A bug in ptoc, not in the user's code; please report it with the message."""


# The C++ core files every error under a category (ir::DiagCategory); each maps to
# one class. "general" errors take the class of what was being done.
_BY_CATEGORY = {"shape": ShapeError, "tile": TileShapeError, "dtype": DTypeError,
                "option": OptionError, "io": FileError, "resource": ResourceError,
                "internal": InternalError}
_BY_STAGE = {"option": OptionError, "run": RunError, "build": ShapeError,
             "input": ShapeError, "compile": CompileError}


def from_status(stage, code, message, category="general"):
    """The exception for a failed C++ status (called by the extension module).

    ``stage`` is what was being done: "build" (an op of the traced function),
    "option", "compile", "run" or "input" (arrays given to a run); ``category`` is
    what the error is about, as the C++ core filed it.
    """
    if code == "internal":
        return InternalError(message)
    kind = _BY_CATEGORY.get(category) or _BY_STAGE.get(stage, CompileError)
    return kind(message)
