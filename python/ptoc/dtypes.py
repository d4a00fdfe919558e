"""Element types: ``DT_FP32, DT_FP16, DT_BF16``, the signed integers ``DT_INT8,
DT_INT16, DT_INT32, DT_INT64``, the unsigned ``DT_UINT8, DT_UINT16, DT_UINT32,
DT_UINT64`` and ``DT_BOOL``.

Each maps to the numpy dtype a user passes and receives: float32, float16, int8,
int16, int32, int64, uint8, uint16, uint32, uint64, bool. numpy has no bfloat16, so a ``DT_BF16`` parameter takes float32 arrays,
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
DT_INT64 = DType("DT_INT64", "i64", np.int64, np.int64, 8, False)
DT_BOOL = DType("DT_BOOL", "bool", np.bool_, np.bool_, 1, False)
DT_INT16 = DType("DT_INT16", "i16", np.int16, np.int16, 2, False)
DT_UINT8 = DType("DT_UINT8", "u8", np.uint8, np.uint8, 1, False)
DT_UINT16 = DType("DT_UINT16", "u16", np.uint16, np.uint16, 2, False)
DT_UINT32 = DType("DT_UINT32", "u32", np.uint32, np.uint32, 4, False)
DT_UINT64 = DType("DT_UINT64", "u64", np.uint64, np.uint64, 8, False)

# The order of ir::kAllDTypes (include/ptoc/ir/DType.h).
ALL_DTYPES = (DT_FP32, DT_FP16, DT_BF16, DT_INT8, DT_INT32, DT_INT64, DT_BOOL, DT_INT16,
              DT_UINT8, DT_UINT16, DT_UINT32, DT_UINT64)

_BY_NAME = {}
for _t in ALL_DTYPES:
    for _alias in (_t.name, _t.ir_name, _t.name.lower()):
        _BY_NAME[_alias] = _t
_BY_NAME.update({"float32": DT_FP32, "fp32": DT_FP32, "float16": DT_FP16, "fp16": DT_FP16,
                 "half": DT_FP16, "bfloat16": DT_BF16})
# Every type but bf16 is its numpy dtype; numpy's names are accepted too.
_BY_NUMPY = {t.numpy: t for t in ALL_DTYPES if t is not DT_BF16}
_BY_NAME.update({npd.name: t for npd, t in _BY_NUMPY.items()})

_VALID = ("ptoc." + ", ".join(t.name for t in ALL_DTYPES) + " (or numpy " +
          ", ".join(npd.name for npd in _BY_NUMPY) + ")")


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
    """The dtype numpy-style arithmetic on ``a`` and ``b`` gives: floats beat ints and
    bool, the wider float wins (f16 with bf16 gives f32); integers (and bool) promote
    as numpy promotes them (i8 with u8 gives i16, i32 with u32 gives i64). u64 with a
    signed type has no common integer type (numpy gives float64): an error."""
    if a is b:
        return a
    if a.is_float != b.is_float:
        return a if a.is_float else b
    if a.is_float:
        if DT_FP32 in (a, b) or {a, b} == {DT_FP16, DT_BF16}:
            return DT_FP32
        return a
    t = _BY_NUMPY.get(np.promote_types(a.numpy, b.numpy))
    if t is None:
        raise DTypeError(f"{a!r} and {b!r} have no common integer type (numpy would give "
                         "float64); cast one of them with ptoc.cast first")
    return t
