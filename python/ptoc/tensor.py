"""``ptoc.Tensor``: a parameter annotation and the value of a traced tensor.

``ptoc.Tensor([256, 4096], ptoc.DT_FP32)`` written as an annotation declares a
parameter's shape and dtype. Inside a traced function every tensor (parameters and
op results) is a ``Tensor`` bound to the trace: arithmetic operators, methods and
the functions of ``ptoc`` record ops; ``t[a:b, :]`` reads a slice and
``out[a:b, :] = t`` writes one.
"""

import numbers

from . import ops
from .dtypes import DT_BOOL, DT_FP32, as_dtype
from .dynamic import Axis
from .errors import DTypeError, Error, ShapeError
from .tracing import located


class Tensor:
    """A tensor of a static shape and element type."""

    __slots__ = ("_shape", "_dtype", "_trace", "_id", "_name", "_read", "_written",
                 "_original_id", "_scope", "_axes", "_valid")

    def __init__(self, shape, dtype=DT_FP32):
        if not isinstance(shape, (list, tuple)):
            raise ShapeError(f"ptoc.Tensor shape must be a list of axis sizes (positive ints, "
                             f"ptoc.DYNAMIC, ptoc.STATIC, ptoc.dynamic(name), and a final ...), "
                             f"got {shape!r}")
        axes = tuple(shape)
        for i, d in enumerate(axes):
            if d is Ellipsis:
                if i != len(axes) - 1:
                    raise ShapeError(f"ptoc.Tensor shape {_axes_str(axes)}: ... stands for the "
                                     "remaining axes and must come last")
            elif not isinstance(d, Axis) and (isinstance(d, bool) or
                                              not isinstance(d, numbers.Integral) or
                                              not 0 < d < 2**63):
                raise ShapeError(f"ptoc.Tensor shape {_axes_str(axes)}: axis {i} must be a "
                                 "positive int (below 2**63), ptoc.DYNAMIC, ptoc.STATIC or "
                                 f"ptoc.dynamic(name), got {d!r}")
        if not axes:
            raise ShapeError("ptoc.Tensor shape must have at least one axis; write [...] for "
                             "a tensor of any shape")
        # _axes: the annotation as written (ints, Axis objects, a final ...); _shape: the
        # static sizes when every axis is an int.
        self._axes = tuple(int(d) if isinstance(d, numbers.Integral) else d for d in axes)
        self._shape = self._axes if all(isinstance(d, int) for d in self._axes) else None
        self._dtype = as_dtype(dtype)
        self._valid = None
        self._trace = None
        self._id = None
        self._name = None
        self._read = False
        self._written = False
        self._original_id = None
        self._scope = None

    def _check_shape(self, shape):
        """None when an array of ``shape`` fits this annotation, else what is wrong."""
        axes = self._axes
        fixed = axes[:-1] if axes[-1] is Ellipsis else axes
        if len(shape) < len(fixed) or (axes[-1] is not Ellipsis and len(shape) != len(fixed)):
            return (f"has rank {len(shape)}, but its annotation {_axes_str(axes)} needs "
                    f"{'at least ' if axes[-1] is Ellipsis else ''}{len(fixed)} axes")
        for d, (a, n) in enumerate(zip(fixed, shape)):
            if isinstance(a, int) and a != n:
                return (f"has size {n} in axis {d}, but its annotation {_axes_str(axes)} fixes "
                        f"it to {a}; pass a tensor of that size, or annotate the axis "
                        "ptoc.DYNAMIC")
        return None

    def _dynamic_axes(self):
        """[(axis, Axis)] of the annotation's dynamic axes."""
        if self._axes is None:
            return []
        return [(d, a) for d, a in enumerate(self._axes) if isinstance(a, Axis) and a.is_dynamic]

    @classmethod
    def _bound(cls, trace, value_id, name=None):
        t = cls.__new__(cls)
        t._axes = None
        # The part holding data, per dimension (ints or SymInts), for a value read
        # through ptoc.view(..., valid_shape=) and what elementwise ops make of it;
        # None: all of it.
        t._valid = None
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
        if self._trace is None:
            return f"ptoc.Tensor({_axes_str(self._axes)}, {self._dtype!r}, annotation)"
        state = "traced"
        name = f" '{self._name}'" if self._name else ""
        return f"ptoc.Tensor{name}({list(self._shape)}, {self._dtype!r}, {state})"

    def _value(self):
        """The id of its current value in the trace (marks it read)."""
        if self._trace is None:
            raise Error(located("this ptoc.Tensor is a type annotation, not a traced value; "
                                "compute only with the tensors a @ptoc.jit function receives "
                                "or creates"))
        if any(not isinstance(d, int) for d in self._shape):
            raise Error(located(
                f"'{self._name or 'this tensor'}' has a dynamic axis (shape "
                f"{list(self._shape)}): its size is known only when the kernel runs, so ops "
                "work on fixed-size windows of it inside a ptoc.loop: x[i], "
                "x[i * 64:(i + 1) * 64], or ptoc.view(x, shape, offsets, valid_shape=...)"))
        self._read = True
        if self._scope is not self._trace.fn_scope:
            # A tensor from outside the loop body being traced: read as a window.
            return self._trace.fn_scope.value_of(self)
        return self._id

    def __bool__(self):
        raise Error(located("a traced ptoc.Tensor has no truth value: its data exists only "
                            "when the kernel runs; use ptoc.where(cond, a, b) or "
                            "ptoc.maximum/minimum/relu instead of branching on values"))

    def __array__(self, *args, **kwargs):
        raise Error(located("a traced ptoc.Tensor cannot become a numpy array inside a "
                            "@ptoc.jit function; return it (or write it into an output "
                            "parameter) to get its values"))

    # Comparisons record ops with DT_BOOL results (as PyPTO's tensors do), `==` and
    # `!=` included; hashing stays by identity, so tensors still work as dict keys and
    # in sets (which look a key up by identity before any ==). `t in some_list`
    # compares with == and so raises: look tensors up by identity (`any(t is x ...)`).
    __hash__ = object.__hash__

    def __eq__(self, o): return ops.eq(self, o)
    def __ne__(self, o): return ops.ne(self, o)
    def __lt__(self, o): return ops.lt(self, o)
    def __le__(self, o): return ops.le(self, o)
    def __gt__(self, o): return ops.gt(self, o)
    def __ge__(self, o): return ops.ge(self, o)

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
    # ~, &, | on DT_BOOL tensors: logical not / and / or (numpy's meaning on bools).
    def _bool_only(self, what, o=None):
        for t in (self, o):
            if isinstance(t, Tensor) and t.dtype is not DT_BOOL:
                raise DTypeError(located(f"'{what}' is defined on DT_BOOL tensors only (bitwise "
                                         f"ops on {t.dtype!r} are not ptoc ops); use "
                                         "ptoc.logical_and / logical_or / logical_not"))

    def __invert__(self):
        self._bool_only("~")
        return ops.logical_not(self)

    def __and__(self, o):
        self._bool_only("&", o)
        return ops.logical_and(self, o)

    def __rand__(self, o):
        self._bool_only("&", o)
        return ops.logical_and(o, self)

    def __or__(self, o):
        self._bool_only("|", o)
        return ops.logical_or(self, o)

    def __ror__(self, o):
        self._bool_only("|", o)
        return ops.logical_or(o, self)
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
    def cast(self, dtype, mode=None, satmode=True): return ops.cast(self, dtype, mode, satmode)
    def eq(self, o): return ops.eq(self, o)
    def ne(self, o): return ops.ne(self, o)
    def lt(self, o): return ops.lt(self, o)
    def le(self, o): return ops.le(self, o)
    def gt(self, o): return ops.gt(self, o)
    def ge(self, o): return ops.ge(self, o)
    def logical_not(self): return ops.logical_not(self)
    def logical_and(self, o): return ops.logical_and(self, o)
    def logical_or(self, o): return ops.logical_or(self, o)
    astype = cast
    def reshape(self, *shape):
        if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
            shape = shape[0]
        return ops.reshape(self, shape)
    def transpose(self, dim0=-2, dim1=-1): return ops.transpose(self, dim0, dim1)
    def topk(self, k, dim=-1, largest=True, algo=None, *, sorted=True):
        return ops.topk(self, k, dim, largest, algo, sorted=sorted)
    def gather(self, dim, index): return ops.gather(self, dim, index)
    def scatter(self, dim, index, src, *, reduce=None):
        return ops.scatter(self, dim, index, src, reduce=reduce)
    def scatter_(self, dim, index, src, *, reduce=None):
        return ops.scatter_(self, dim, index, src, reduce=reduce)
    def scatter_update(self, dim, index, src): return ops.scatter_update(self, dim, index, src)
    def expand_clone(self, shape, *, valid_shape=None):
        return ops.expand_clone(self, shape, valid_shape=valid_shape)

    @property
    def T(self):
        """The last two dimensions swapped."""
        return ops.transpose(self, -2, -1)

    # --- slices ---
    def __getitem__(self, key):
        return ops.slice_view(self, key)

    def __setitem__(self, key, value):
        ops.write_slice(self, key, value)


def _axes_str(axes):
    return "[" + ", ".join("..." if a is Ellipsis else repr(a) for a in axes) + "]"
