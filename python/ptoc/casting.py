"""How ``ptoc.cast`` rounds and treats out-of-range integers: ``ptoc.CastMode`` and
``ptoc.SaturationMode``, with PyPTO's member names (docs/python.md, "cast").

The rounding names are the IR's ``mode`` attribute spellings (``cast {mode =
"floor"}``); ``CAST_NONE`` is no attribute: trunc from a float to an integer type,
rint (nearest, ties to even) otherwise.
"""

import enum

from .errors import ArgumentError


class CastMode(enum.Enum):
    """Rounding of a cast whose exact result the target type cannot hold."""
    CAST_NONE = None     # the default for the types: trunc float -> int, rint otherwise
    CAST_RINT = "rint"   # nearest, ties to even
    CAST_ROUND = "round" # nearest, ties away from zero
    CAST_FLOOR = "floor" # toward -inf
    CAST_CEIL = "ceil"   # toward +inf
    CAST_TRUNC = "trunc" # toward zero
    CAST_ODD = "odd"     # an inexact result takes the neighbour whose last digit is odd


class SaturationMode(enum.Enum):
    """An integer result out of range: clamped to the type's range (ON, ptoc's
    default) or its low bits kept, two's complement (OFF: 300 -> i8 gives 44)."""
    OFF = False
    ON = True


_MODE_BY_NAME = {}
for _m in CastMode:
    _MODE_BY_NAME[_m.name] = _m
    if _m.value is not None:
        _MODE_BY_NAME[_m.value] = _m
_MODE_BY_NAME["none"] = CastMode.CAST_NONE
_SAT_BY_NAME = {"ON": SaturationMode.ON, "OFF": SaturationMode.OFF, "on": SaturationMode.ON,
                "off": SaturationMode.OFF}


def as_cast_mode(mode, what):
    """The IR spelling of ``mode`` ("" for the default): a CastMode, its name or its
    IR spelling ("floor"), or None."""
    if mode is None:
        return ""
    if isinstance(mode, CastMode):
        return mode.value or ""
    if isinstance(mode, str) and mode in _MODE_BY_NAME:
        return _MODE_BY_NAME[mode].value or ""
    valid = ", ".join(f"ptoc.CastMode.{m.name}" for m in CastMode)
    raise ArgumentError(f"{what}: unknown rounding mode {mode!r}; valid: {valid} (or their "
                        "IR spellings 'rint', 'round', 'floor', 'ceil', 'trunc', 'odd')")


def as_saturate(satmode, what):
    """Whether ``satmode`` saturates: a SaturationMode, 'ON'/'OFF', or a bool."""
    if isinstance(satmode, SaturationMode):
        return satmode.value
    if isinstance(satmode, bool):
        return satmode
    if isinstance(satmode, str) and satmode in _SAT_BY_NAME:
        return _SAT_BY_NAME[satmode].value
    raise ArgumentError(f"{what}: unknown saturation mode {satmode!r}; valid: "
                        "ptoc.SaturationMode.ON (clamp, the default) or "
                        "ptoc.SaturationMode.OFF (wrap)")
