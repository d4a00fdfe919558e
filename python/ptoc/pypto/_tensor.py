"""``pypto.Tensor`` and ``pypto.tensor``: PyPTO's parameter annotations and local
tensors, and the PyPTO methods of traced tensors (``move``, ``view``, ...).

As an annotation (outside a kernel) a ``pypto.Tensor`` records a shape (ints,
``pypto.DYNAMIC`` / ``STATIC`` axes, or nothing) and a dtype (or nothing);
``frontend.jit`` turns it into a ``ptoc.Tensor`` annotation where ptoc can express
it, and checks the rest itself. Called inside a kernel with a shape, it creates a
local tensor (zeros: PyPTO leaves a local's contents undefined until written).
"""

import numbers

import ptoc
from ptoc.dynamic import Axis
from ptoc.errors import DTypeError, ShapeError
from ptoc.tensor import Tensor as _PtocTensor
from ptoc.tracing import current_trace, located

from . import _names


class TileOpFormat:
    """PyPTO's tensor formats: accepted; ptoc keeps every tensor ND."""
    TILEOP_ND = "TILEOP_ND"
    TILEOP_NZ = "TILEOP_NZ"


def _axis_ok(d):
    return (d is Ellipsis or isinstance(d, Axis) or
            (isinstance(d, numbers.Integral) and not isinstance(d, bool)))


class _TensorMeta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, _PtocTensor) or type.__instancecheck__(cls, obj)

    def __getitem__(cls, key):
        """``pypto.Tensor[...]``, ``pypto.Tensor[[shape], dtype]``,
        ``pypto.Tensor[shape, dtype, {format: ...}]``."""
        if key is Ellipsis:
            return cls()
        if not isinstance(key, tuple):
            key = (key,)
        args, kwargs = [], {}
        for k in key:
            if isinstance(k, dict):
                kwargs.update(k)
            else:
                args.append(k)
        return cls(*args, **kwargs)


class Tensor(metaclass=_TensorMeta):
    """A PyPTO tensor annotation (outside a kernel) or a local tensor (inside)."""

    def __new__(cls, shape=None, dtype=None, name="", format=None, data_ptr=None,
                device=None, ori_shape=None):
        trace = current_trace()
        if trace is not None and shape is not None and dtype is not None and \
                len(shape) > 0:
            return local_tensor(shape, dtype, name)
        return super().__new__(cls)

    def __init__(self, shape=None, dtype=None, name="", format=None, data_ptr=None,
                 device=None, ori_shape=None):
        if shape is Ellipsis:
            shape = None
        if shape is not None:
            if not isinstance(shape, (list, tuple)) or not all(_axis_ok(d) for d in shape):
                raise ShapeError(f"pypto.Tensor: the shape must be a list of ints, "
                                 f"pypto.DYNAMIC / STATIC or ..., got {shape!r}")
            shape = list(shape)
            if not shape or shape == [Ellipsis]:
                shape = None  # dtype-only: any shape
        self.shape = shape
        self.dtype = dtype
        self.name = name
        self.format = format or TileOpFormat.TILEOP_ND

    def __repr__(self):
        return f"pypto.Tensor({self.shape!r}, {self.dtype!r})"

    def ptoc_annotation(self):
        """The ptoc.Tensor annotation that says what this one does, or None when
        ptoc cannot express it (the jit wrapper then checks the call itself)."""
        if self.shape is None or isinstance(self.dtype, (type(None), _names.MissingDType)):
            return None
        try:
            return _PtocTensor(self.shape, self.dtype)
        except (ShapeError, TypeError, ValueError):
            return None  # a shape ptoc.Tensor refuses: the wrapper checks the call

    def check(self, qual, name, value):
        """Rank, static sizes and dtype of an argument (when ptoc has no annotation
        that checks them)."""
        shape = getattr(value, "shape", None)
        if shape is None:
            return
        if self.dtype is not None and hasattr(value, "dtype"):
            want = _names.as_ptoc_dtype(self.dtype, f"{qual}(): parameter '{name}'")
            got = str(value.dtype).rsplit(".", 1)[-1]
            try:
                got_dtype = ptoc.dtypes.as_dtype(got)
            except Exception:
                got_dtype = None
            if got_dtype is not None and got_dtype is not want:
                hint = ("pass a torch.bfloat16 tensor (numpy has no bfloat16; a float32 "
                        "array is taken as bf16 only under a full-shape annotation)"
                        if want is ptoc.DT_BF16 else "convert it")
                raise DTypeError(f"{qual}(): parameter '{name}' is annotated "
                                 f"pypto.{want.name} but got a {got} tensor; {hint}")
        if self.shape is None or Ellipsis in self.shape:
            return
        if len(shape) != len(self.shape):
            raise ShapeError(f"{qual}(): parameter '{name}' is annotated with {len(self.shape)} "
                             f"dimensions {self.shape}, got shape {list(shape)}")
        for i, (want, got) in enumerate(zip(self.shape, shape)):
            if isinstance(want, numbers.Integral) and want != got:
                raise ShapeError(f"{qual}(): parameter '{name}' dimension {i} must be {want}, "
                                 f"got shape {list(shape)}")


def tensor(shape=None, dtype=None, name="", *args, **kwargs):
    """``pypto.tensor(shape, dtype, name)``: a local tensor inside a kernel; an
    annotation outside one (``pypto.tensor()`` is "any tensor")."""
    return Tensor(shape, dtype, name, *args, **kwargs)


def local_tensor(shape, dtype, name=""):
    dtype = _names.as_ptoc_dtype(dtype, "pypto.tensor")
    shape = [int(d) if isinstance(d, numbers.Integral) else d for d in shape]
    return ptoc.full(shape, 0, dtype)


# --- PyPTO methods of traced tensors -----------------------------------------

def _move(self, other):
    """``out.move(value)``: all of ``out`` takes ``value``."""
    self[:] = other


def _view(self, shape=None, offsets=None, *, valid_shape=None, dtype=None):
    from ._ops import view
    return view(self, shape, offsets, valid_shape=valid_shape, dtype=dtype)


def _assemble(self, input, offsets):
    from ._ops import assemble
    assemble(input, offsets, self)


def _name(self):
    return self._name or ""


def _format(self):
    return TileOpFormat.TILEOP_ND


def _dim(self):
    return len(self.shape)


# Added to ptoc.Tensor only where it has no attribute of that name (ptoc's own
# methods always win).
METHODS = {"move": _move, "view": _view, "assemble": _assemble,
           "name": property(_name), "format": property(_format), "dim": property(_dim)}


def add_methods():
    for name, fn in METHODS.items():
        if not hasattr(_PtocTensor, name):
            setattr(_PtocTensor, name, fn)

