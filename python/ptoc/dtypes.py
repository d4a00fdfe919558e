"""Element types: ``DT_FP32, DT_FP16, DT_BF16, DT_INT8, DT_INT32``.

Each maps to the numpy dtype a user passes and receives: float32, float16, int8,
int32. numpy has no bfloat16, so a ``DT_BF16`` parameter takes float32 arrays,
rounded to bf16 (nearest-even) on the way in, and bf16 results come back widened to
float32 (exactly: every bf16 value is a float32 value).
"""

import numpy as np

from .errors import DTypeError


class DType:
    """A ptoc element type."""

    __slots__ = ("name", "ir_name", "numpy", "storage", "itemsize", "is_float")

    def __init__(self, name, ir_name, numpy_dtype, storage, itemsize, is_float):
        self.name = name            # "DT_FP32"
        self.ir_name = ir_name      # "f32", the IR spelling
        self.numpy = np.dtype(numpy_dtype)      # what users pass and get back
        self.storage = np.dtype(storage)        # what the kernel reads and writes
        self.itemsize = itemsize
        self.is_float = is_float

    def __repr__(self):
        return "ptoc." + self.name

    def __reduce__(self):
        return (as_dtype, (self.ir_name,))


DT_FP32 = DType("DT_FP32", "f32", np.float32, np.float32, 4, True)
DT_FP16 = DType("DT_FP16", "f16", np.float16, np.float16, 2, True)
DT_BF16 = DType("DT_BF16", "bf16", np.float32, np.uint16, 2, True)
DT_INT8 = DType("DT_INT8", "i8", np.int8, np.int8, 1, False)
DT_INT32 = DType("DT_INT32", "i32", np.int32, np.int32, 4, False)

ALL_DTYPES = (DT_FP32, DT_FP16, DT_BF16, DT_INT8, DT_INT32)

_BY_NAME = {}
for _t in ALL_DTYPES:
    for _alias in (_t.name, _t.ir_name, _t.name.lower()):
        _BY_NAME[_alias] = _t
_BY_NAME.update({"float32": DT_FP32, "fp32": DT_FP32, "float16": DT_FP16, "fp16": DT_FP16,
                 "half": DT_FP16, "bfloat16": DT_BF16, "int8": DT_INT8, "int32": DT_INT32})
_BY_NUMPY = {np.dtype(np.float32): DT_FP32, np.dtype(np.float16): DT_FP16,
             np.dtype(np.int8): DT_INT8, np.dtype(np.int32): DT_INT32}

_VALID = "ptoc.DT_FP32, DT_FP16, DT_BF16, DT_INT8, DT_INT32 (or numpy float32, float16, int8, int32)"


def as_dtype(x):
    """A DType from a DType, a name ("f32", "float16", "DT_BF16") or a numpy dtype."""
    if isinstance(x, DType):
        return x
    if isinstance(x, str):
        t = _BY_NAME.get(x)
        if t is None:
            raise DTypeError(f"unknown dtype '{x}'; valid: {_VALID}")
        return t
    try:
        npd = np.dtype(x)
    except TypeError:
        raise DTypeError(f"not a dtype: {x!r}; valid: {_VALID}") from None
    t = _BY_NUMPY.get(npd)
    if t is None:
        raise DTypeError(f"ptoc has no element type for numpy {npd}; valid: {_VALID}")
    return t


def from_array_dtype(npd):
    """The DType of an array of numpy dtype ``npd``, or None."""
    return _BY_NUMPY.get(np.dtype(npd))


def promote(a, b):
    """The dtype numpy-style arithmetic on ``a`` and ``b`` gives: floats beat ints,
    the wider float wins (f16 with bf16 gives f32), the wider int wins."""
    if a is b:
        return a
    if a.is_float != b.is_float:
        return a if a.is_float else b
    if a.is_float:
        if DT_FP32 in (a, b) or {a, b} == {DT_FP16, DT_BF16}:
            return DT_FP32
        return a
    return DT_INT32
