"""The arrays a ``@ptoc.jit`` call takes and gives back: numpy arrays, torch CPU
tensors, and any object with ``__dlpack__``, ``__array_interface__`` or the buffer
protocol, each seen as a numpy view of the caller's memory (no copy), so outputs
are written in place into the caller's object.

torch is never imported here: a value can only be a torch tensor if the caller
imported torch already (``sys.modules``). bf16 travels as its bits (uint16): a
torch.bfloat16 tensor is read and written exactly, never through float32.
"""

import sys

import numpy as np

from . import _ptoc
from .dtypes import ALL_DTYPES, DT_BF16, DT_FP16, DT_FP32, as_dtype, from_array_dtype
from .errors import ArgumentError, DTypeError, ShapeError

# Kinds of array a call can pass (HostArray.kind).
NUMPY, TORCH, DLPACK, BUFFER = "numpy", "torch", "dlpack", "buffer"

# torch's name of each ptoc type that torch (1.13) has: all but uint16/32/64.
_TORCH_NAMES = {DT_FP32: "float32", DT_FP16: "float16", DT_BF16: "bfloat16"}
_TORCH_NAMES.update({t: t.numpy.name for t in ALL_DTYPES
                     if not t.is_float and t.numpy.name in ("int8", "int16", "int32", "int64",
                                                            "uint8", "bool")})
_TORCH_DTYPE_NAMES = tuple((name, t) for t, name in _TORCH_NAMES.items())
TORCH_DTYPES_TEXT = "torch." + ", ".join(_TORCH_NAMES.values())


class HostArray:
    """One array argument of a call: ``array`` is a numpy view of the caller's
    memory; ``dtype`` the ptoc element type; ``bits`` says that ``array`` holds the
    kernel's storage (bf16 as uint16 bit patterns) rather than user floats (a numpy
    float32 array given for a bf16 parameter, rounded on the way in)."""

    __slots__ = ("array", "dtype", "kind", "bits", "source")

    def __init__(self, array, dtype, kind, bits, source):
        self.array = array
        self.dtype = dtype
        self.kind = kind
        self.bits = bits
        self.source = source  # the caller's object (kept alive while its view is used)

    @property
    def shape(self):
        return tuple(self.array.shape)

    def for_kernel(self, values=True):
        """A C-contiguous array in the kernel's storage dtype (a copy only when needed).
        ``values`` False: the run reads no floating-point values (timing only: only int
        tensors, for loop bounds and offsets, are read), so a bf16 parameter given as
        float32 is not converted; zeros of its shape stand in (calloc'd, not touched)."""
        if self.dtype is DT_BF16 and not self.bits:
            if not values:
                return np.zeros(self.array.shape, dtype=DT_BF16.storage)
            return _ptoc.float_to_bf16(self.array)
        return np.ascontiguousarray(self.array)

    def writable_view(self, qual, name):
        """The view results are written into; an error naming the parameter when the
        caller's object cannot take them."""
        a = self.array
        if any(stride == 0 and n > 1 for stride, n in zip(a.strides, a.shape)):
            raise ArgumentError(f"{qual}(): output parameter '{name}' is a broadcast (expanded) "
                                "view whose elements share memory; pass an array with its own "
                                "storage (.copy() / .contiguous())")
        if not a.flags.writeable:
            if self.kind != DLPACK:
                raise ArgumentError(f"{qual}(): output parameter '{name}' is a read-only "
                                    f"{_describe(self.source)}; pass a writable one")
            # numpy marks every DLPack import read-only (the protocol cannot say);
            # the caller passed it as an output, so write through to its memory.
            a = _writable_alias(a)
        return a

    def store(self, target, result):
        """Copies a result (kernel storage) into ``target`` (from writable_view)."""
        if self.dtype is DT_BF16 and not self.bits:
            result = _ptoc.bf16_to_float(result)
        np.copyto(target, result, casting="unsafe")


def _torch():
    """The torch module if the program imported it, else None (never imports it)."""
    return sys.modules.get("torch")


def is_torch_tensor(value):
    torch = _torch()
    return torch is not None and isinstance(value, torch.Tensor)


def _describe(value):
    t = type(value)
    return f"{t.__module__}.{t.__qualname__}" if t.__module__ != "builtins" else t.__qualname__


class _Alias:
    """Holds an ``__array_interface__`` (and what owns its memory) for np.asarray."""

    def __init__(self, interface, owner):
        self.__array_interface__ = interface
        self.owner = owner


def _writable_alias(a):
    interface = dict(a.__array_interface__)
    interface["data"] = (interface["data"][0], False)
    return np.asarray(_Alias(interface, a))


def _torch_dtype(torch, t):
    for attr, dtype in _TORCH_DTYPE_NAMES:
        if t is getattr(torch, attr):
            return dtype
    return None


def _from_torch(qual, name, value):
    torch = _torch()
    if value.device.type != "cpu":
        raise ArgumentError(f"{qual}(): parameter '{name}' is a torch tensor on {value.device}; "
                            f"ptoc runs on the host: pass {name}.cpu() (and copy an output back "
                            "with .copy_())")
    if value.layout is not torch.strided:
        raise ArgumentError(f"{qual}(): parameter '{name}' is a {value.layout} torch tensor; "
                            f"pass a dense one ({name}.to_dense())")
    dtype = _torch_dtype(torch, value.dtype)
    if dtype is None:
        raise DTypeError(f"{qual}(): parameter '{name}' has dtype {value.dtype}, which ptoc has "
                         f"no element type for; supported: {TORCH_DTYPES_TEXT} (convert it "
                         f"with {name}.to(torch.float32))")
    # detach(): the same memory without autograd (ptoc does not record gradients).
    t = value.detach()
    if dtype is DT_BF16:
        return HostArray(t.view(torch.int16).numpy().view(np.uint16), dtype, TORCH, True, value)
    return HostArray(t.numpy(), dtype, TORCH, False, value)


def _numpy_view(qual, name, value):
    """(numpy view, kind) of a non-numpy, non-torch array object, or None."""
    if isinstance(value, (str, bytes, np.generic)) or isinstance(value, type):
        return None  # scalars and text are constants, not tensors
    if hasattr(value, "__dlpack__") and hasattr(value, "__dlpack_device__"):
        try:
            return np.from_dlpack(value), DLPACK
        except (TypeError, ValueError, RuntimeError, BufferError) as e:
            raise DTypeError(f"{qual}(): parameter '{name}' ({_describe(value)}) cannot be read "
                             f"through DLPack: {e}; pass a CPU array of one of "
                             f"{TORCH_DTYPES_TEXT[6:]}") from None
    if hasattr(value, "__array_interface__") or hasattr(value, "__array_struct__"):
        return np.asarray(value), BUFFER
    try:
        view = memoryview(value)
    except TypeError:
        return None
    try:
        return np.asarray(view), BUFFER
    except (TypeError, ValueError) as e:
        raise DTypeError(f"{qual}(): parameter '{name}' ({_describe(value)}) has a buffer numpy "
                         f"cannot read: {e}") from None


def host_array(qual, name, value, annotation=None):
    """The HostArray of argument ``value`` of parameter ``name``, or None when it is not
    an array (a compile-time constant). ``annotation`` (a ptoc.Tensor) fixes dtype and
    shape; errors name ``qual()`` and the parameter."""
    if isinstance(value, np.ndarray):
        array, kind = value, NUMPY
    elif is_torch_tensor(value):
        h = _from_torch(qual, name, value)
        if annotation is not None and h.dtype is not annotation.dtype:
            raise DTypeError(f"{qual}(): parameter '{name}' must be a "
                             f"{_torch_name(annotation.dtype)} tensor ({annotation.dtype!r}), "
                             f"got {value.dtype}; convert it with "
                             f".to({_torch_name(annotation.dtype)})")
        return _checked_shape(qual, name, h, annotation)
    else:
        found = _numpy_view(qual, name, value)
        if found is None:
            if annotation is not None:
                raise DTypeError(f"{qual}(): parameter '{name}' is a tensor "
                                 f"({annotation!r}); pass a numpy "
                                 f"array or a torch tensor, got {type(value).__name__}")
            return None
        array, kind = found
    if annotation is not None:
        want = annotation.dtype.numpy
        if array.dtype != want:
            raise DTypeError(f"{qual}(): parameter '{name}' must be a numpy {want} array "
                             f"({annotation.dtype!r}), got {array.dtype}; convert it with "
                             f".astype(np.{want})")
        dtype = annotation.dtype
    else:
        dtype = from_array_dtype(array.dtype)
        if dtype is None:
            raise DTypeError(f"{qual}(): parameter '{name}' has numpy dtype {array.dtype}, which "
                             "ptoc has no element type for; pass one of "
                             f"{', '.join(t.numpy.name for t in ALL_DTYPES if t is not DT_BF16)} "
                             "(or a torch.bfloat16 tensor, or annotate it as "
                             "ptoc.Tensor(shape, ptoc.DT_BF16) and pass float32 for bf16)")
    return _checked_shape(qual, name, HostArray(array, dtype, kind, False, value), annotation)


def _torch_name(dtype):
    dtype = as_dtype(dtype)
    name = _TORCH_NAMES.get(dtype)
    if name is None:
        raise DTypeError(f"torch has no dtype for {dtype!r} (torch lacks uint16, uint32 and "
                         "uint64); pass and receive numpy arrays for it")
    return "torch." + name


def _checked_shape(qual, name, h, annotation):
    problem = annotation._check_shape(h.shape) if annotation is not None else None
    if problem is not None:
        raise ShapeError(f"{qual}(): parameter '{name}' (shape {list(h.shape)}) {problem}")
    if h.array.ndim == 0 or 0 in h.shape:
        raise ShapeError(f"{qual}(): parameter '{name}' has shape {list(h.shape)}; "
                         "tensors need at least one dimension and no empty dimension")
    return h


def to_torch(array, dtype):
    """A kernel result (storage dtype) as a torch tensor sharing its memory."""
    torch = _torch()
    _torch_name(dtype)  # an error naming the type when torch has none for it
    if dtype is DT_BF16:
        return torch.from_numpy(array.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(array)


def for_user(array, dtype):
    """A kernel result (storage dtype) as the numpy array a caller gets: bf16 widened
    to float32 (exactly)."""
    return _ptoc.bf16_to_float(array) if dtype is DT_BF16 else array


def not_computed(shape, dtype, as_torch):
    """What a returned tensor is when run_numerics=False computed nothing: NaN
    (floats) or 0 (ints) of its shape and dtype, never uninitialised memory."""
    fill = np.nan if dtype.is_float else 0
    if as_torch:
        torch = _torch()
        return torch.full(tuple(shape), fill, dtype=getattr(torch, _torch_name(dtype)[6:]))
    return np.full(shape, fill, dtype=np.float32 if dtype is DT_BF16 else dtype.storage)
