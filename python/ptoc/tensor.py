"""``ptoc.Tensor``: a parameter annotation and the value of a traced tensor.

``ptoc.Tensor([256, 4096], ptoc.DT_FP32)`` written as an annotation declares a
parameter's shape and dtype. Inside a traced function every tensor (parameters and
op results) is a ``Tensor`` bound to the trace: arithmetic operators, methods and
the functions of ``ptoc`` record ops; ``t[a:b, :]`` reads a slice and
``out[a:b, :] = t`` writes one.
"""

import numbers

from . import ops
from .dtypes import DT_FP32, as_dtype
from .errors import DTypeError, Error, ShapeError
from .tracing import located


class Tensor:
    """A tensor of a static shape and element type."""

    __slots__ = ("_shape", "_dtype", "_trace", "_id", "_name", "_read", "_written",
                 "_original_id", "_scope")

    def __init__(self, shape, dtype=DT_FP32):
        if not isinstance(shape, (list, tuple)):
            raise ShapeError(f"ptoc.Tensor shape must be a non-empty list of positive ints, "
                             f"got {shape!r}")
        shape = tuple(shape)
        if not shape or any(isinstance(d, bool) or not isinstance(d, numbers.Integral) or
                            not 0 < d < 2**63 for d in shape):
            raise ShapeError(f"ptoc.Tensor shape must be a non-empty list of positive ints "
                             f"(below 2**63), got {list(shape)}")
        self._shape = tuple(int(d) for d in shape)
        self._dtype = as_dtype(dtype)
        self._trace = None
        self._id = None
        self._name = None
        self._read = False
        self._written = False
        self._original_id = None
        self._scope = None

    @classmethod
    def _bound(cls, trace, value_id, name=None):
        t = cls.__new__(cls)
        t._trace = trace
        t._id = value_id
        t._shape = tuple(trace.builder.shape(value_id))
        t._dtype = as_dtype(trace.builder.dtype(value_id))
        t._name = name
        t._read = False
        t._written = False
        t._original_id = value_id
        t._scope = trace.fn_scope  # the function (jit function or loop body) it lives in
        return t

    # --- what it is ---
    @property
    def shape(self):
        return self._shape

    @property
    def dtype(self):
        return self._dtype

    @property
    def ndim(self):
        return len(self._shape)

    @property
    def size(self):
        n = 1
        for d in self._shape:
            n *= d
        return n

    def __len__(self):
        return self._shape[0]

    def __repr__(self):
        state = "traced" if self._trace is not None else "annotation"
        name = f" '{self._name}'" if self._name else ""
        return f"ptoc.Tensor{name}({list(self._shape)}, {self._dtype!r}, {state})"

    def _value(self):
        """The id of its current value in the trace (marks it read)."""
        if self._trace is None:
            raise Error(located("this ptoc.Tensor is a type annotation, not a traced value; "
                                "compute only with the tensors a @ptoc.jit function receives "
                                "or creates"))
        self._read = True
        if self._scope is not self._trace.fn_scope:
            # A tensor from outside the loop body being traced: read as a window.
            return self._trace.fn_scope.value_of(self)
        return self._id

    def __bool__(self):
        raise Error(located("a traced ptoc.Tensor has no truth value: its data exists only "
                            "when the kernel runs; use ptoc.maximum/minimum/relu instead of "
                            "branching on values"))

    def __array__(self, *args, **kwargs):
        raise Error(located("a traced ptoc.Tensor cannot become a numpy array inside a "
                            "@ptoc.jit function; return it (or write it into an output "
                            "parameter) to get its values"))

    __hash__ = object.__hash__

    def _no_compare(self, other):
        raise DTypeError(located("comparisons of traced tensors are not ptoc ops; use "
                                 "ptoc.maximum / ptoc.minimum / ptoc.relu instead of masks"))

    __lt__ = __le__ = __gt__ = __ge__ = _no_compare

    # --- operators ---
    def __add__(self, o): return ops.add(self, o)
    def __radd__(self, o): return ops.add(o, self)
    def __sub__(self, o): return ops.sub(self, o)
    def __rsub__(self, o): return ops.sub(o, self)
    def __mul__(self, o): return ops.mul(self, o)
    def __rmul__(self, o): return ops.mul(o, self)
    def __truediv__(self, o): return ops.div(self, o)
    def __rtruediv__(self, o): return ops.div(o, self)
    def __pow__(self, o): return ops.pow(self, o)
    def __rpow__(self, o): return ops.pow(o, self)
    def __matmul__(self, o): return ops.matmul(self, o)
    def __rmatmul__(self, o): return ops.matmul(o, self)
    def __neg__(self): return ops.neg(self)
    def __pos__(self): return self
    def __abs__(self): return ops.abs(self)
    # round(t), math.floor(t), math.ceil(t), math.trunc(t) record the ops.
    def __round__(self, ndigits=None): return ops.round(self, ndigits or 0)
    def __floor__(self): return ops.floor(self)
    def __ceil__(self): return ops.ceil(self)
    def __trunc__(self): return ops.trunc(self)

    # --- methods ---
    def exp(self): return ops.exp(self)
    def log(self): return ops.log(self)
    def sqrt(self): return ops.sqrt(self)
    def rsqrt(self): return ops.rsqrt(self)
    def abs(self): return ops.abs(self)
    def relu(self): return ops.relu(self)
    def sigmoid(self): return ops.sigmoid(self)
    def tanh(self): return ops.tanh(self)
    def gelu(self): return ops.gelu(self)
    def reciprocal(self): return ops.reciprocal(self)
    def ceil(self): return ops.ceil(self)
    def floor(self): return ops.floor(self)
    def trunc(self): return ops.trunc(self)
    def round(self, decimals=0): return ops.round(self, decimals)
    def exp2(self): return ops.exp2(self)
    def expm1(self): return ops.expm1(self)
    def erfc(self): return ops.erfc(self)
    def clip(self, min=None, max=None): return ops.clip(self, min, max)
    def softmax(self, dim=-1): return ops.softmax(self, dim)
    def unsqueeze(self, dim): return ops.unsqueeze(self, dim)
    def clone(self): return ops.clone(self)
    def neg(self): return ops.neg(self)
    def add(self, o): return ops.add(self, o)
    def sub(self, o): return ops.sub(self, o)
    def mul(self, o): return ops.mul(self, o)
    def div(self, o, precision_type=None): return ops.div(self, o, precision_type)
    def maximum(self, o): return ops.maximum(self, o)
    def minimum(self, o): return ops.minimum(self, o)
    def pow(self, o): return ops.pow(self, o)
    def matmul(self, o, out_dtype=None, a_trans=False, b_trans=False):
        return ops.matmul(self, o, out_dtype=out_dtype, a_trans=a_trans, b_trans=b_trans)
    def sum(self, dim=None, keepdim=False): return ops.sum(self, dim, keepdim)
    def amax(self, dim=None, keepdim=False): return ops.amax(self, dim, keepdim)
    def amin(self, dim=None, keepdim=False): return ops.amin(self, dim, keepdim)
    def mean(self, dim=None, keepdim=False): return ops.mean(self, dim, keepdim)
    def cast(self, dtype): return ops.cast(self, dtype)
    astype = cast
    def reshape(self, *shape):
        if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
            shape = shape[0]
        return ops.reshape(self, shape)
    def transpose(self, dim0=-2, dim1=-1): return ops.transpose(self, dim0, dim1)

    @property
    def T(self):
        """The last two dimensions swapped."""
        return ops.transpose(self, -2, -1)

    # --- slices ---
    def __getitem__(self, key):
        return ops.slice_view(self, key)

    def __setitem__(self, key, value):
        ops.write_slice(self, key, value)
