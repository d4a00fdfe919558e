"""The ops of a traced function, as functions (``ptoc.exp(x)``); ``Tensor``'s
operators and methods call these. Each records one op (or a few) into the current
trace at the user's source line; a mistake raises a ``ptoc.Error`` naming that line.
"""

import builtins
import collections
import math
import numbers

import numpy as np

from . import tensor as _tensor
from .casting import CastMode, SaturationMode, as_cast_mode, as_saturate
from .dtypes import DT_BOOL, DT_FP32, DT_INT32, as_dtype, promote
from .enums import PrecisionType, ReLuType
from .errors import ArgumentError, DTypeError, Error, ShapeError
from .options import INT64_MAX
from .loops import SymInt, is_symbolic, offset_text
from .tracing import current_trace, located


def _is_tensor(x):
    return isinstance(x, _tensor.Tensor)


def _is_scalar(x):
    return isinstance(x, (numbers.Real, np.number)) and not isinstance(x, np.ndarray)


def _trace_of(what, *xs):
    """The trace the tensors among ``xs`` belong to (they must share one)."""
    trace = None
    for x in xs:
        if _is_tensor(x):
            if x._trace is None:
                x._value()  # raises: an annotation used as a value
            if trace is None:
                trace = x._trace
            elif x._trace is not trace:
                raise Error(located(f"{what}: the tensors come from different traced functions; "
                                    "a traced tensor lives only inside the call that made it"))
    return trace or current_trace(f"ptoc.{what}")


def _record(trace, make):
    """Runs ``make(builder)`` at the user's line; returns the result as a Tensor."""
    trace.at_user_code()
    return _tensor.Tensor._bound(trace, make(trace.builder))


def _const(trace, value, dtype, ndim):
    """A broadcastable constant (shape [1] * ndim)."""
    return _record(trace, lambda b: b.full([1] * builtins.max(ndim, 1), float(value), dtype.ir_name))


def _scalar_dtype(value, tensor_dtype):
    if not tensor_dtype.is_float and isinstance(value, (float, np.floating)):
        return DT_FP32
    return tensor_dtype


def _operand(trace, x, what):
    if _is_tensor(x):
        return x
    raise DTypeError(located(f"{what}: expected a ptoc.Tensor, got {type(x).__name__}"))


def _inherit_valid(result, *operands):
    """``result`` holding data where its same-shaped operand does (ptoc.view's
    valid_shape follows elementwise ops and casts)."""
    for x in operands:
        if _is_tensor(x) and x._valid is not None and x.shape == result.shape:
            result._valid = x._valid
            break
    return result


def _binary(op, what, a, b, record=None):
    trace = _trace_of(what, a, b)
    if not _is_tensor(a) and not _is_tensor(b):
        raise DTypeError(located(f"ptoc.{what}: at least one operand must be a ptoc.Tensor, got "
                                 f"{type(a).__name__} and {type(b).__name__}"))
    # A scalar takes the tensor's dtype, except a float scalar with an int tensor,
    # which makes the arithmetic f32 (as numpy does).
    if _is_scalar(a):
        a = _const(trace, a, _scalar_dtype(a, b.dtype), b.ndim)
    if _is_scalar(b):
        b = _const(trace, b, _scalar_dtype(b, a.dtype), a.ndim)
    a = _operand(trace, a, f"ptoc.{what}")
    b = _operand(trace, b, f"ptoc.{what}")
    dtype = promote(a.dtype, b.dtype)
    a, b = cast(a, dtype), cast(b, dtype)
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise ShapeError(located(f"ptoc.{what}: shapes {list(a.shape)} and {list(b.shape)} do "
                                 "not broadcast (numpy rules: trailing dimensions must be equal "
                                 "or 1)")) from None
    ia, ib = a._value(), b._value()
    if record is not None:
        return _inherit_valid(_record(trace, lambda bld: record(bld, ia, ib)), a, b)
    return _inherit_valid(_record(trace, lambda bld: bld.binary(op, ia, ib)), a, b)


def add(a, b): return _binary("add", "add", a, b)
def sub(a, b): return _binary("sub", "sub", a, b)
def mul(a, b): return _binary("mul", "mul", a, b)
def div(a, b, precision_type=PrecisionType.HIGH_PRECISION):
    """``a / b`` elementwise. ``precision_type`` (PyPTO's): HIGH_PRECISION (default)
    gives the correctly rounded quotient; INTRINSIC computes ``a * (1 / b)`` with the
    reciprocal rounded to the dtype, faster and possibly 1 ulp off (floats only; it
    changes nothing for integers)."""
    if precision_type is None:
        precision_type = PrecisionType.HIGH_PRECISION
    if not isinstance(precision_type, PrecisionType):
        raise ArgumentError(located(f"ptoc.div: precision_type must be "
                                    f"ptoc.PrecisionType.HIGH_PRECISION or "
                                    f"ptoc.PrecisionType.INTRINSIC, got {precision_type!r}"))
    if precision_type is PrecisionType.HIGH_PRECISION:
        return _binary("div", "div", a, b)
    return _binary("div", "div", a, b, lambda bld, ia, ib: bld.div(ia, ib, "intrinsic"))
def maximum(a, b): return _binary("max", "maximum", a, b)
def minimum(a, b): return _binary("min", "minimum", a, b)
def pow(a, b): return _binary("pow", "pow", a, b)


def _unary(op, x):
    trace = _trace_of(op, x)
    x = _operand(trace, x, f"ptoc.{op}")
    ix = x._value()
    return _inherit_valid(_record(trace, lambda b: b.unary(op, ix)), x)


def neg(x): return _unary("neg", x)
def exp(x): return _unary("exp", x)
def log(x): return _unary("log", x)
def sqrt(x): return _unary("sqrt", x)
def rsqrt(x): return _unary("rsqrt", x)
def abs(x): return _unary("abs", x)
def relu(x): return _unary("relu", x)
def sigmoid(x): return _unary("sigmoid", x)
def tanh(x): return _unary("tanh", x)
def gelu(x): return _unary("gelu", x)
def reciprocal(x): return _unary("reciprocal", x)
def ceil(x): return _unary("ceil", x)
def floor(x): return _unary("floor", x)
def trunc(x): return _unary("trunc", x)
def exp2(x): return _unary("exp2", x)
def expm1(x): return _unary("expm1", x)
def erfc(x): return _unary("erfc", x)


def round(x, decimals=0):
    """``x`` rounded to ``decimals`` decimal places, ties to even (numpy's and torch's
    rule). As numpy does, a non-zero ``decimals`` scales by 10**|decimals| (multiply
    for positive, divide for negative), rounds and scales back; integers are returned
    as they are for ``decimals >= 0``."""
    trace = _trace_of("round", x)
    x = _operand(trace, x, "ptoc.round")
    if isinstance(decimals, bool) or not isinstance(decimals, numbers.Integral):
        raise ArgumentError(located(f"ptoc.round: decimals must be an int, got {decimals!r}"))
    decimals = int(decimals)
    if not x.dtype.is_float:
        if decimals >= 0:
            return x
        raise DTypeError(located(f"ptoc.round: decimals={decimals} on an integer tensor "
                                 f"({x.dtype!r}) is not supported; cast it to a float dtype "
                                 "first"))
    if decimals == 0:
        return _unary("round", x)
    scale = 10.0 ** builtins.abs(decimals)
    if decimals > 0:
        return div(_unary("round", mul(x, scale)), scale)
    return mul(_unary("round", div(x, scale)), scale)


def clip(x, min=None, max=None):
    """``x`` limited to [min, max] (either may be None; each a number or a tensor
    that broadcasts): ``minimum(maximum(x, min), max)``, as numpy and torch."""
    if min is None and max is None:
        raise ArgumentError(located("ptoc.clip: give min, max or both"))
    out = x
    if min is not None:
        out = maximum(out, min)
    if max is not None:
        out = minimum(out, max)
    return out


def softmax(x, dim=-1):
    """``exp(x - max) / sum(exp(x - max))`` along ``dim`` (one reduction axis): the
    row max and sum are kept per row, so the vec tile should cover ``dim`` whole.
    An fp16 or bf16 input is computed in fp32 and the result cast back, as PyPTO's
    softmax does (and torch's)."""
    trace = _trace_of("softmax", x)
    x = _operand(trace, x, "ptoc.softmax")
    d = _dim(x, dim, "softmax")
    narrow = x.dtype.is_float and x.dtype.itemsize < DT_FP32.itemsize
    xf = cast(x, DT_FP32) if narrow else x
    e = exp(sub(xf, amax(xf, d, keepdim=True)))
    y = div(e, sum(e, d, keepdim=True))
    return cast(y, x.dtype) if narrow else y


def unsqueeze(x, dim):
    """``x`` with a dimension of size 1 inserted at ``dim`` (-rank-1 <= dim <= rank)."""
    trace = _trace_of("unsqueeze", x)
    x = _operand(trace, x, "ptoc.unsqueeze")
    if isinstance(dim, bool) or not isinstance(dim, numbers.Integral) or \
            not -x.ndim - 1 <= dim <= x.ndim:
        raise ShapeError(located(f"ptoc.unsqueeze: dim {dim!r} is out of range for a tensor of "
                                 f"rank {x.ndim} (valid: {-x.ndim - 1}..{x.ndim})"))
    d = int(dim) % (x.ndim + 1)
    shape = list(x.shape)
    shape.insert(d, 1)
    return reshape(x, shape)


def clone(x):
    """A tensor with ``x``'s values. Traced values are immutable, so it shares them:
    a slice written into the clone (``c[0] = ...``) changes the clone only."""
    trace = _trace_of("clone", x)
    x = _operand(trace, x, "ptoc.clone")
    return _tensor.Tensor._bound(trace, x._value())


def cast(x, dtype, mode=CastMode.CAST_NONE, satmode=SaturationMode.ON):
    """``x`` converted to ``dtype``. ``mode`` (a ``ptoc.CastMode``) rounds an inexact
    result; the default is trunc from a float to an integer type and nearest-even
    otherwise. ``satmode`` ``ptoc.SaturationMode.ON`` (the default) clamps an integer
    result to the type's range, ``OFF`` keeps its low bits. bool results are
    ``x != 0``. A cast to ``x``'s own dtype returns ``x``."""
    trace = _trace_of("cast", x)
    x = _operand(trace, x, "ptoc.cast")
    dtype = as_dtype(dtype)
    ir_mode = as_cast_mode(mode, "ptoc.cast")
    saturate = as_saturate(satmode, "ptoc.cast")
    if dtype is x.dtype:
        return x
    ix = x._value()
    return _inherit_valid(_record(trace, lambda b: b.cast(ix, dtype.ir_name, ir_mode, saturate)), x)


# --- comparisons and logic: bool results ---

def eq(a, b): return _binary("eq", "eq", a, b)
def ne(a, b): return _binary("ne", "ne", a, b)
def lt(a, b): return _binary("lt", "lt", a, b)
def le(a, b): return _binary("le", "le", a, b)
def gt(a, b): return _binary("gt", "gt", a, b)
def ge(a, b): return _binary("ge", "ge", a, b)
def logical_and(a, b): return _binary("logical_and", "logical_and", a, b)
def logical_or(a, b): return _binary("logical_or", "logical_or", a, b)
def logical_not(x): return _unary("logical_not", x)


def _scalar_type(value):
    if isinstance(value, (bool, np.bool_)):
        return DT_BOOL
    return DT_FP32 if isinstance(value, (float, np.floating)) else DT_INT32


def where(cond, a, b):
    """``a`` where ``cond`` (a DT_BOOL tensor) is true, else ``b``; ``a`` and ``b`` are
    tensors or scalars. The three shapes broadcast (numpy rules); ``a`` and ``b`` are
    promoted to one dtype as arithmetic promotes them (a scalar takes the other
    operand's dtype, a float scalar with an integer tensor makes f32; two scalars
    are f32 if either is a float, else i32)."""
    trace = _trace_of("where", cond, a, b)
    cond = _operand(trace, cond, "ptoc.where: the condition")
    if cond.dtype is not DT_BOOL:
        raise DTypeError(located(f"ptoc.where: the condition must be a {DT_BOOL!r} tensor, got "
                                 f"{cond.dtype!r}; compare it first (e.g. ptoc.ne(c, 0))"))
    for name, v in (("a", a), ("b", b)):
        if not _is_tensor(v) and not _is_scalar(v):
            raise DTypeError(located(f"ptoc.where: '{name}' must be a ptoc.Tensor or a number, "
                                     f"got {type(v).__name__}"))
    if _is_scalar(a) and _is_scalar(b):
        ta, tb = _scalar_type(a), _scalar_type(b)
        dtype = DT_FP32 if DT_FP32 in (ta, tb) else promote(ta, tb)
        a = _const(trace, a, dtype, cond.ndim)
        b = _const(trace, b, dtype, cond.ndim)
    elif _is_scalar(a):
        a = _const(trace, a, _scalar_dtype(a, b.dtype), b.ndim)
    elif _is_scalar(b):
        b = _const(trace, b, _scalar_dtype(b, a.dtype), a.ndim)
    dtype = promote(a.dtype, b.dtype)
    a, b = cast(a, dtype), cast(b, dtype)
    try:
        np.broadcast_shapes(cond.shape, a.shape, b.shape)
    except ValueError:
        raise ShapeError(located(f"ptoc.where: shapes {list(cond.shape)}, {list(a.shape)} and "
                                 f"{list(b.shape)} do not broadcast (numpy rules: trailing "
                                 "dimensions must be equal or 1)")) from None
    ic, ia, ib = cond._value(), a._value(), b._value()
    return _record(trace, lambda bld: bld.where(ic, ia, ib))


def _dim(x, d, what):
    """``d`` as a dimension of ``x`` (negative counts from the end)."""
    if isinstance(d, bool) or not isinstance(d, numbers.Integral) or not -x.ndim <= d < x.ndim:
        raise ShapeError(located(f"ptoc.{what}: dim {d!r} is out of range for a tensor of "
                                 f"rank {x.ndim} (valid: {-x.ndim}..{x.ndim - 1})"))
    return int(d) % x.ndim


def _axes(x, dim, what):
    if dim is None:
        return list(range(x.ndim))
    dims = list(dim) if isinstance(dim, (list, tuple)) else [dim]
    return sorted(set(_dim(x, d, what) for d in dims))


def _shape(shape, what, allow_infer=False):
    """A shape argument (an int or a list of ints) as a list of positive ints below
    2**63 (and one -1 when ``allow_infer``)."""
    dims = list(shape) if isinstance(shape, (list, tuple)) else [shape]
    ok = bool(dims) and all(
        not isinstance(d, bool) and isinstance(d, numbers.Integral) and
        (0 < d <= INT64_MAX or (allow_infer and d == -1)) for d in dims)
    if not ok or (allow_infer and dims.count(-1) > 1):
        raise ShapeError(located(f"{what}: invalid shape {shape!r}; use positive ints"
                                 f"{' and at most one -1' if allow_infer else ''}"))
    return [int(d) for d in dims]


def _reduce(op, x, dim, keepdim):
    """A reduction; over a value with a valid_shape (ptoc.view's) it folds only the
    valid elements (a mean divides by their count) and the result keeps the valid
    extents of the kept dims. A valid_shape known only at run time is the runtime's
    to honour; one known now reduces the valid part here."""
    trace = _trace_of(op, x)
    x = _operand(trace, x, f"ptoc.{op}")
    axes = _axes(x, dim, op)
    valid = x._valid
    kept_valid = None
    if valid is not None:
        kept_valid = [1 if d in axes else v for d, v in enumerate(valid) if keepdim or d not in axes]
        if all(not is_symbolic(v) and v == s for v, s in zip(kept_valid, _kept_shape(x, axes, keepdim))):
            kept_valid = None
        if not any(is_symbolic(v) for v in valid) and any(valid[a] < x.shape[a] for a in axes):
            if any(valid[a] == 0 for a in axes):  # nothing to fold: the identity
                identity = {"sum": 0, "mean": float("nan"),
                            "amax": -np.inf if x.dtype.is_float else np.iinfo(x.dtype.numpy).min,
                            "amin": np.inf if x.dtype.is_float else np.iinfo(x.dtype.numpy).max}
                r = full(_kept_shape(x, axes, keepdim) or [1], identity[op], x.dtype)
            else:
                part = slice_view(x, tuple(slice(0, valid[d]) if d in axes else slice(None)
                                           for d in range(x.ndim)))
                r = _reduce(op, part, axes, keepdim)
            r._valid = kept_valid
            return r
    ix = x._value()
    r = _record(trace, lambda b: b.reduce(op, ix, axes, bool(keepdim)))
    r._valid = kept_valid
    return r


def _kept_shape(x, axes, keepdim):
    return [1 if d in axes else s for d, s in enumerate(x.shape) if keepdim or d not in axes]


def sum(x, dim=None, keepdim=False): return _reduce("sum", x, dim, keepdim)
def amax(x, dim=None, keepdim=False): return _reduce("amax", x, dim, keepdim)
def amin(x, dim=None, keepdim=False): return _reduce("amin", x, dim, keepdim)
def mean(x, dim=None, keepdim=False): return _reduce("mean", x, dim, keepdim)


# The extend_params keys PyPTO documents for matmul, and what ptoc does with each.
_EXTEND_PARAMS = ("scale", "relu_type", "bias_tensor", "scale_tensor", "trans_mode")
_EXTEND_UNSUPPORTED = {
    "scale_tensor": "per-channel dequantisation is not modelled yet; use a per-tensor 'scale'",
    "trans_mode": "TF32 rounding is an Ascend 950 feature that ptoc's devices do not have",
}


def _extend_params(extend_params):
    """(scale, relu, bias) from matmul's ``extend_params`` dict."""
    if extend_params is None:
        return None, False, None
    if not isinstance(extend_params, dict):
        raise ArgumentError(located(f"ptoc.matmul: extend_params must be a dict such as "
                                    f"{{'scale': 0.5, 'relu_type': ptoc.ReLuType.RELU}}, got "
                                    f"{type(extend_params).__name__}"))
    for key in extend_params:
        if key not in _EXTEND_PARAMS:
            raise ArgumentError(located(f"ptoc.matmul: unknown extend_params key {key!r}; "
                                        f"the keys are {', '.join(_EXTEND_PARAMS)}"))
        if key in _EXTEND_UNSUPPORTED and extend_params[key] is not None:
            raise ArgumentError(located(f"ptoc.matmul: extend_params[{key!r}]: "
                                        f"{_EXTEND_UNSUPPORTED[key]}"))
    bias = extend_params.get("bias_tensor")
    if bias is not None and not _is_tensor(bias):
        raise ArgumentError(located(f"ptoc.matmul: extend_params['bias_tensor'] must be a "
                                    f"ptoc.Tensor of shape [1, N], got {type(bias).__name__}"))
    scale = extend_params.get("scale")
    if scale is not None:
        if not _is_scalar(scale) or isinstance(scale, (bool, np.bool_)) or not math.isfinite(
                float(scale)):
            raise ArgumentError(located(f"ptoc.matmul: extend_params['scale'] must be a finite "
                                        f"number, got {scale!r}"))
        scale = float(scale)
    relu = extend_params.get("relu_type", ReLuType.NO_RELU)
    if relu is None:
        relu = ReLuType.NO_RELU
    if not isinstance(relu, ReLuType):
        raise ArgumentError(located(f"ptoc.matmul: extend_params['relu_type'] must be "
                                    f"ptoc.ReLuType.RELU or ptoc.ReLuType.NO_RELU, got {relu!r}"))
    return scale, relu is ReLuType.RELU, bias


def matmul(a, b, out_dtype=None, a_trans=False, b_trans=False, *, extend_params=None):
    """``a @ b`` on the cube cores (operands transposed first with ``a_trans`` /
    ``b_trans``); accumulates in f32 (i32 for i8) and returns ``out_dtype``
    (default: the operands' dtype, i32 for i8).

    ``extend_params`` (PyPTO's): ``{'scale': s}`` dequantises an i8 x i8 product
    (i32 accumulator times s, as f16 or bf16: give that ``out_dtype``);
    ``{'relu_type': ptoc.ReLuType.RELU}`` applies a ReLU to the result. Both run in
    the cube's FIXPIPE as the result leaves L0C, with no vector task (docs/ir.md).
    ``{'bias_tensor': t}`` (``t`` of shape [1, N]) initialises the accumulator with
    ``t`` in every row (the cube's bias table), before the scale and the ReLU."""
    trace = _trace_of("matmul", a, b)
    a = _operand(trace, a, "ptoc.matmul")
    b = _operand(trace, b, "ptoc.matmul")
    if a.dtype is not b.dtype:
        raise DTypeError(located(f"ptoc.matmul: operands have dtypes {a.dtype!r} and {b.dtype!r}; "
                                 "cast one with ptoc.cast(x, dtype) so they match"))
    scale, relu, bias = _extend_params(extend_params)
    out = as_dtype(out_dtype).ir_name if out_dtype is not None else ""
    if bias is not None and _trace_of("matmul", a, bias) is not trace:
        raise Error(located("ptoc.matmul: the bias comes from a different traced function"))
    ia, ib = a._value(), b._value()
    ic = bias._value() if bias is not None else -1
    result = _record(trace, lambda bld: bld.matmul(ia, ib, bool(a_trans), bool(b_trans), out,
                                                   scale, relu, ic))
    result._valid = _matmul_valid(result, a, b, a_trans, b_trans)
    return result


def _matmul_valid(result, a, b, a_trans, b_trans):
    """The valid extents of ``a @ b`` (ptoc.view's valid_shape): the rows ``a`` holds
    data in, the columns ``b`` holds data in, the batch dims of the operand of the
    result's rank; None when every extent is whole. Rows past ``a``'s valid rows are
    products of the zeros the view reads, not data, so writing the result into a window
    writes the valid rows only (a ragged block of a grouped GEMM)."""
    if a._valid is None and b._valid is None:
        return None
    valid = list(result.shape)
    if a._valid is not None:
        valid[-2] = a._valid[-1 if a_trans else -2]
    if b._valid is not None:
        valid[-1] = b._valid[-2 if b_trans else -1]
    for x in (b, a):
        if x._valid is not None and x.ndim == result.ndim:
            valid[:-2] = x._valid[:-2]
    if all(not is_symbolic(v) and v == s for v, s in zip(valid, result.shape)):
        return None
    return valid


def reshape(x, shape):
    """``x`` with a new shape of the same size (one dimension may be -1)."""
    trace = _trace_of("reshape", x)
    x = _operand(trace, x, "ptoc.reshape")
    shape = _shape(shape, "ptoc.reshape", allow_infer=True)
    known = math.prod(d for d in shape if d != -1)
    if -1 in shape:
        if x.size % known:
            raise ShapeError(located(f"ptoc.reshape: cannot reshape {list(x.shape)} "
                                     f"({x.size} elements) to {shape}"))
        shape[shape.index(-1)] = x.size // known
    if math.prod(shape) != x.size:
        raise ShapeError(located(f"ptoc.reshape: cannot reshape {list(x.shape)} ({x.size} "
                                 f"elements) to {shape} ({math.prod(shape)} elements)"))
    if tuple(shape) == x.shape:
        return x
    ix = x._value()
    return _record(trace, lambda b: b.reshape(ix, shape))


def transpose(x, dim0=-2, dim1=-1):
    """``x`` with dimensions ``dim0`` and ``dim1`` swapped."""
    trace = _trace_of("transpose", x)
    x = _operand(trace, x, "ptoc.transpose")
    d0, d1 = _dim(x, dim0, "transpose"), _dim(x, dim1, "transpose")
    ix = x._value()
    return _record(trace, lambda b: b.transpose(ix, d0, d1))


def concat(tensors, dim=0):
    """The tensors joined along ``dim`` (dtypes promoted like arithmetic)."""
    if not isinstance(tensors, (list, tuple)):
        raise ArgumentError(located(f"ptoc.concat: takes a list of tensors, got "
                                    f"{type(tensors).__name__}"))
    tensors = list(tensors)
    if not tensors:
        raise ShapeError(located("ptoc.concat: needs at least one tensor"))
    trace = _trace_of("concat", *tensors)
    tensors = [_operand(trace, t, "ptoc.concat") for t in tensors]
    dtype = tensors[0].dtype
    for t in tensors[1:]:
        dtype = promote(dtype, t.dtype)
    axis = _dim(tensors[0], dim, "concat")
    ids = [cast(t, dtype)._value() for t in tensors]
    return _record(trace, lambda b: b.concat(ids, axis))


def full(shape, value, dtype=DT_FP32):
    """A tensor of ``shape`` filled with ``value``."""
    trace = current_trace("ptoc.full")
    shape = _shape(shape, "ptoc.full")
    if not _is_scalar(value):
        raise ArgumentError(located(f"ptoc.full: value must be a number, got {value!r}"))
    dtype = as_dtype(dtype)
    return _record(trace, lambda b: b.full(shape, float(value), dtype.ir_name))


# --- index ops (PyPTO's topk, gather, expand_clone) --------------------------------

TopK = collections.namedtuple("TopK", ["values", "indices"])
TopK.__doc__ = "topk's result: ``values`` and their ``indices`` (DT_INT32)."

_TOPK_ALGOS = ("MERGE_SORT", "RADIX_SELECT")


def topk(x, k, dim=-1, largest=True, algo=None, *, sorted=True):
    """The ``k`` largest elements of ``x`` along ``dim`` (the smallest when ``largest``
    is false) and their indices, as ``TopK(values, indices)`` (a tuple; indices are
    DT_INT32). Values come in order, largest first (smallest first); equal values in
    index order, lower first; NaN ranks above every number (first for the largest, last
    for the smallest). ``dim=None`` is the last dimension. ``algo`` (PyPTO's TopKAlgo:
    MERGE_SORT or RADIX_SELECT, or its name) only names how the device would select: the
    result is the same. ``sorted=False`` is accepted; the result is still sorted."""
    trace = _trace_of("topk", x)
    x = _operand(trace, x, "ptoc.topk")
    d = _dim(x, x.ndim - 1 if dim is None else dim, "topk")
    n = x.shape[d]
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or not 1 <= k <= n:
        raise ShapeError(located(f"ptoc.topk: k={k!r} is not in 1..{n} (the size of dimension "
                                 f"{d} of a tensor of shape {list(x.shape)})"))
    if algo is not None:
        name = algo if isinstance(algo, str) else getattr(algo, "name", None)
        if not isinstance(name, str) or name.upper() not in _TOPK_ALGOS:
            raise ArgumentError(located(f"ptoc.topk: algo must be one of "
                                        f"{', '.join(_TOPK_ALGOS)} (or PyPTO's TopKAlgo), "
                                        f"got {algo!r}"))
    if not isinstance(largest, (bool, np.bool_)) or not isinstance(sorted, (bool, np.bool_)):
        raise ArgumentError(located(f"ptoc.topk: largest and sorted must be bools, got "
                                    f"{largest!r} and {sorted!r}"))
    ix = x._value()
    trace.at_user_code()
    values, indices = trace.builder.topk(ix, int(k), d, bool(largest))
    return TopK(_tensor.Tensor._bound(trace, values), _tensor.Tensor._bound(trace, indices))


def _index_operand(trace, index, what):
    """``index`` as the integer tensor an index op reads (any integer dtype)."""
    index = _operand(trace, index, what)
    if index.dtype.is_float:
        raise DTypeError(located(f"{what}: index must be an integer tensor, got "
                                 f"{index.dtype!r}; cast it with ptoc.cast(index, DT_INT32)"))
    return index


def gather(x, dim, index):
    """PyPTO's gather: ``out[..., i, ...] = x[..., index[..., i, ...], ...]`` with ``i``
    at ``dim``; ``index`` is an integer tensor of ``x``'s rank, no larger than ``x`` in the
    other dimensions; the result has ``index``'s shape and ``x``'s dtype. An index outside
    ``0..x.shape[dim] - 1`` reads 0 (the reference evaluator reports it as an error)."""
    trace = _trace_of("gather", x, index)
    x = _operand(trace, x, "ptoc.gather")
    index = _index_operand(trace, index, "ptoc.gather")
    d = _dim(x, dim, "gather")
    ix, ii = x._value(), index._value()
    return _record(trace, lambda b: b.gather(ix, d, ii))


_SCATTER_REDUCE = {None: "", "none": "", "add": "add", "multiply": "multiply"}


def scatter(x, dim, index, src, *, reduce=None):
    """PyPTO's scatter: ``x`` with ``src[p]`` written at ``x[..., index[p], ...]`` (the
    index at ``dim``) for every position ``p`` of ``index``, as a new tensor. ``src`` is a
    tensor (no smaller than ``index`` in any dimension) or a number; ``reduce``
    ``"add"`` / ``"multiply"`` (or PyPTO's ScatterMode) combines with the element there
    instead of replacing it. Equal indices apply in row-major order of ``index`` (the
    last one wins without reduce). An index outside ``0..x.shape[dim] - 1`` is skipped."""
    trace = _trace_of("scatter", x, index, src)
    x = _operand(trace, x, "ptoc.scatter")
    index = _index_operand(trace, index, "ptoc.scatter")
    d = _dim(x, dim, "scatter")
    mode = reduce if reduce is None or isinstance(reduce, str) else getattr(reduce, "name", reduce)
    if isinstance(mode, str):
        mode = mode.lower()
    if mode not in _SCATTER_REDUCE:
        raise ArgumentError(located(f"ptoc.scatter: reduce must be None, 'add' or 'multiply' "
                                    f"(or PyPTO's ScatterMode), got {reduce!r}"))
    if _is_scalar(src):
        if isinstance(src, float) and not math.isfinite(src):
            raise ArgumentError(located(f"ptoc.scatter: a scalar source must be finite, "
                                        f"got {src!r}"))
        src = full(list(index.shape), src, x.dtype)
    src = cast(_operand(trace, src, "ptoc.scatter"), x.dtype)
    ix, ii, isrc = x._value(), index._value(), src._value()
    return _record(trace, lambda b: b.scatter(ix, d, ii, isrc, _SCATTER_REDUCE[mode]))


def scatter_(x, dim, index, src, *, reduce=None):
    """``scatter`` in place: ``x`` becomes the result (also inside a loop body, for a
    tensor from outside it); returns ``x``."""
    write_slice(x, Ellipsis, scatter(x, dim, index, src, reduce=reduce))
    return x


def scatter_update(x, dim, index, src):
    """PyPTO's scatter_update (in place; ``dim`` must be -2): rows of ``src`` written at
    the rows ``index`` names. 2-D: ``x`` [N, d], ``index`` [b, s], ``src`` [b * s, d]:
    ``x[index[i][j]] = src[i * s + j]``. 4-D: ``x`` [blocks, block_size, 1, d], ``src``
    [b, s, 1, d]: row ``index[i][j]`` of ``x`` seen as [blocks * block_size, d] gets
    ``src[i][j][0]``. Returns ``x``."""
    trace = _trace_of("scatter_update", x, index, src)
    x = _operand(trace, x, "ptoc.scatter_update")
    index = _operand(trace, index, "ptoc.scatter_update")
    src = _operand(trace, src, "ptoc.scatter_update")
    if dim != -2:
        raise ArgumentError(located(f"ptoc.scatter_update: dim must be -2 (PyPTO's only "
                                    f"value), got {dim!r}"))
    if index.ndim != 2:
        raise ShapeError(located(f"ptoc.scatter_update: index must be 2-D [b, s], got shape "
                                 f"{list(index.shape)}"))
    b, s = index.shape
    if x.ndim == 2 and src.ndim == 2:
        rows, d = x.shape
        want = [b * s, d]
    elif x.ndim == 4 and src.ndim == 4 and x.shape[2] == 1:
        rows, d = x.shape[0] * x.shape[1], x.shape[3]
        want = [b, s, 1, d]
    else:
        raise ShapeError(located(f"ptoc.scatter_update: x and src must be 2-D ([N, d] and "
                                 f"[b*s, d]) or 4-D ([blocks, block_size, 1, d] and "
                                 f"[b, s, 1, d]), got {list(x.shape)} and {list(src.shape)}"))
    if list(src.shape) != want:
        raise ShapeError(located(f"ptoc.scatter_update: src must have shape {want} for an "
                                 f"index of shape {list(index.shape)} and x of shape "
                                 f"{list(x.shape)}, got {list(src.shape)}"))
    rows_index = expand_clone(reshape(index, [b * s, 1]), [b * s, d])
    flat = scatter(reshape(x, [rows, d]), 0, rows_index, reshape(src, [b * s, d]))
    write_slice(x, Ellipsis, reshape(flat, list(x.shape)))
    return x


def expand_clone(x, shape, *, valid_shape=None):
    """``x`` broadcast to ``shape`` (same rank; each dimension of ``x`` equal to it or
    1), as a new tensor. ``valid_shape`` (PyPTO's, for dynamic tails) may only repeat
    ``shape``."""
    trace = _trace_of("expand_clone", x)
    x = _operand(trace, x, "ptoc.expand_clone")
    shape = _shape(shape, "ptoc.expand_clone")
    if valid_shape is not None and list(valid_shape) != shape:
        raise ArgumentError(located(f"ptoc.expand_clone: valid_shape {valid_shape!r} differs "
                                    f"from shape {shape}; ptoc expands static shapes only "
                                    "(slice the result for a tail)"))
    ix = x._value()
    return _record(trace, lambda b: b.expand_clone(ix, shape))


# --- slices ---------------------------------------------------------------------

def _region(x, key, what):
    """(offsets, sizes, kept) of ``x[key]``: kept[d] is False for int-indexed dims."""
    if not isinstance(key, tuple):
        key = (key,)
    if builtins.sum(1 for k in key if k is Ellipsis) > 1:
        raise ShapeError(located(f"{what}: at most one ... in an index"))
    if Ellipsis in key:
        i = key.index(Ellipsis)
        fill = x.ndim - (len(key) - 1)
        key = key[:i] + (slice(None),) * fill + key[i + 1:]
    if len(key) > x.ndim:
        raise ShapeError(located(f"{what}: {len(key)} indices for a tensor of rank {x.ndim}"))
    key = key + (slice(None),) * (x.ndim - len(key))
    offsets, sizes, kept = [], [], []
    for d, (k, n) in enumerate(zip(key, x.shape)):
        if is_symbolic(n):  # a dynamic axis: windows of static size, checked at run time
            offsets.append(_dynamic_axis_index(k, n, d, what))
            sizes.append(1 if not isinstance(k, slice) else
                         SymInt._of(k.stop).constant_difference(offsets[-1]))
            kept.append(isinstance(k, slice))
            continue
        if isinstance(k, slice) and (is_symbolic(k.start) or is_symbolic(k.stop)):
            # A window at an offset known only at run time: its size must be static.
            if k.step not in (None, 1):
                raise _step_error(x, k, n, d, what)
            start = 0 if k.start is None else k.start
            stop = n if k.stop is None else k.stop
            size = SymInt._of(stop).constant_difference(start)
            if size is None:
                raise ShapeError(located(
                    f"{what}: dimension {d}: the slice {k.start}:{k.stop} has a size known only "
                    "at run time; write it as start:start + SIZE with a static SIZE "
                    "(x[i * 64:(i + 1) * 64]), or use a window of the largest size"))
            if not 0 < size <= n:
                raise ShapeError(located(f"{what}: dimension {d}: the slice {k.start}:{k.stop} "
                                         f"has size {size}, outside 1..{n}"))
            offsets.append(start)
            sizes.append(size)
            kept.append(True)
        elif is_symbolic(k):
            offsets.append(k)
            sizes.append(1)
            kept.append(False)
        elif isinstance(k, slice):
            if k.step not in (None, 1):
                raise _step_error(x, k, n, d, what)
            start, stop, _ = k.indices(n)
            if stop <= start:
                raise ShapeError(located(f"{what}: dimension {d}: the slice {k.start}:{k.stop} "
                                         f"of a dimension of size {n} is empty"))
            offsets.append(start)
            sizes.append(stop - start)
            kept.append(True)
        elif isinstance(k, numbers.Integral) and not isinstance(k, bool):
            i = int(k) + n if k < 0 else int(k)
            if not 0 <= i < n:
                raise ShapeError(located(f"{what}: index {k} is out of range for dimension {d} "
                                         f"of size {n}"))
            offsets.append(i)
            sizes.append(1)
            kept.append(False)
        else:
            raise ShapeError(located(f"{what}: unsupported index {k!r} in dimension {d}; use "
                                     "ints, step-1 slices and ..."))
    return offsets, sizes, kept


def _step_error(x, k, n, d, what):
    """The error for a slice ``k`` with a step other than 1 in dimension ``d`` (size
    ``n``) of ``x`` (None: a tensor seen through a loop window), with the way to write it:
    a write or read of each position with an int index."""
    text = ":".join("" if v is None else str(v) for v in (k.start, k.stop, k.step))
    head = f"{what}: dimension {d}: the slice {text} has step {k.step}; ptoc slices have step 1"
    if not isinstance(k.step, numbers.Integral) or isinstance(k.step, bool) or k.step == 0:
        return ShapeError(located(f"{head}, and a step must be a non-zero int"))
    if is_symbolic(n) or is_symbolic(k.start) or is_symbolic(k.stop):
        start = 0 if k.start is None else k.start
        stop = n if k.stop is None else k.stop
        positions = f"range({offset_text(start)}, {offset_text(stop)}, {k.step})"
        count = "its"
    else:
        rng = range(*k.indices(n))
        if not rng:
            return ShapeError(located(f"{head}, and this one selects nothing of a dimension of "
                                      f"size {n}"))
        positions = f"range({rng.start}, {rng.stop}, {rng.step})"
        count = f"its {len(rng)}"
    name = getattr(x, "_name", None) or ("y" if what == "write" else "x")
    lead = ":, " * d
    if what == "write":
        how = (f"write {count} positions one at a time with int indices: "
               f"for j, i in enumerate({positions}): {name}[{lead}i] = value[{lead}j] "
               "(writes of different positions are independent, each costs only what it "
               "writes)")
    else:
        how = (f"read {count} positions with int-indexed slices and join them: "
               f"ptoc.concat([{name}[{lead}i:i + 1] for i in {positions}], {d})")
    return ShapeError(located(f"{head}: {how}"))


def _dynamic_axis_index(k, n, d, what):
    """The offset of index ``k`` into dynamic axis ``d`` (size ``n``, a SymInt); a
    slice must have a static size (checked here), its range is checked when the kernel
    runs."""
    if isinstance(k, slice):
        if k.step not in (None, 1):
            raise _step_error(None, k, n, d, what)
        if k.stop is None:
            raise ShapeError(located(
                f"{what}: dimension {d} is dynamic (size {n}): a slice of it needs a stop with "
                "a static distance from its start (x[i * 64:(i + 1) * 64]); for a tail of "
                "unknown extent use ptoc.view(x, shape, offsets, valid_shape=...)"))
        start = 0 if k.start is None else k.start
        stop = SymInt._of(k.stop)
        size = stop.constant_difference(start) if stop is not None else None
        if size is None or size <= 0 or (not is_symbolic(start) and start < 0):
            raise ShapeError(located(
                f"{what}: dimension {d} is dynamic (size {n}): the slice {k.start}:{k.stop} "
                "must have a static positive size and a non-negative start"))
        return start
    if is_symbolic(k):
        return k
    if isinstance(k, numbers.Integral) and not isinstance(k, bool):
        if k < 0:
            raise ShapeError(located(
                f"{what}: index {k} counts from the end of dynamic dimension {d}, whose size "
                f"is known only at run time; index it as {n} - {-k} instead"))
        return int(k)
    raise ShapeError(located(f"{what}: unsupported index {k!r} in dimension {d}; use "
                             "ints, step-1 slices and ..."))


def _scalar_read(trace, x, key):
    """``t[i, j]`` of an integer input of the kernel, every dimension indexed: the
    value as a symbolic scalar (read by the control thread when the kernel runs; usable
    in loop bounds and window offsets). None for any other index."""
    if x._trace is None or x.dtype.is_float or x._scope is not trace.root:
        return None
    if not x._name or x._written or x._id != x._original_id:
        return None
    key = key if isinstance(key, tuple) else (key,)
    if len(key) != x.ndim or not all(is_symbolic(k) or (isinstance(k, numbers.Integral) and
                                                           not isinstance(k, bool)) for k in key):
        return None
    if not any(is_symbolic(k) for k in key) and trace.fn_scope is trace.root:
        return None  # a static element outside loops stays a tensor
    index = []
    for d, (k, n) in enumerate(zip(key, x.shape)):
        if not is_symbolic(k):
            if is_symbolic(n) and k < 0:
                raise ShapeError(located(f"index {k} counts from the end of dynamic dimension "
                                         f"{d} of '{x._name}'; index it as {n} - {-k}"))
            k = int(k) + n if k < 0 else int(k)
            if not is_symbolic(n) and not 0 <= k < n:
                raise ShapeError(located(f"index {k} is out of range for dimension {d} of "
                                         f"'{x._name}' (size {n})"))
        index.append(offset_text(k))
    x._read = True
    return SymInt(text=f"{x._name}[{', '.join(index)}]")


def slice_view(x, key):
    """``x[key]``: a slice (ints drop their dimension, like numpy). Inside a
    ``ptoc.loop`` body, a slice of a tensor from outside the loop is a window the
    body reads, and its offsets may be symbolic (the loop index)."""
    trace = _trace_of("slice", x)
    scalar = _scalar_read(trace, x, key)
    if scalar is not None:
        return scalar
    offsets, sizes, kept = _region(x, key, "slice")
    visible = [s for s, k in zip(sizes, kept) if k]
    if x._trace is not None and x._scope is not trace.fn_scope:
        trace.at_user_code()
        wid = trace.fn_scope.window(x, offsets, sizes, visible or [1])
        return _tensor.Tensor._bound(trace, wid)
    if any(is_symbolic(d) for d in x.shape):
        x._value()  # raises: a tensor with a dynamic axis is used through windows only
    if any(is_symbolic(o) for o in offsets):
        raise ShapeError(located(
            "slice: offsets known only at run time (a loop index) select windows of tensors "
            "from outside the loop; this tensor was computed inside the loop body: slice it "
            "with static offsets"))
    if tuple(sizes) == x.shape and all(kept):
        return x
    ix = x._value()
    v = _record(trace, lambda b: b.view(ix, offsets, sizes))
    if not all(kept):
        v = reshape(v, visible or [1])
    return v


def _window_valid(v, sizes, kept):
    """The valid extents, per window dimension, of a window written with value ``v``
    (whose dims are the window's kept dims): ``v``'s valid_shape, or None."""
    if v._valid is None:
        return None
    it = iter(v._valid)
    return [next(it, s) if k else 1 for s, k in zip(sizes, kept)]


def view(x, shape, offsets, valid_shape=None):
    """``ptoc.view(x, shape, offsets, valid_shape=None)``: the part of ``x`` of static
    ``shape`` at ``offsets`` (ints, or symbolic scalars inside a ``ptoc.loop``), with
    ``x``'s rank. ``valid_shape`` (ints or symbolic scalars, each between 1 and the
    shape's size) is the part that holds data, for tails whose extent is known only at
    run time: the view reads zeros beyond it, and ops on the view keep it, so writing
    the result into a window (``y[o:o + 64] = r``) writes only the valid part."""
    trace = _trace_of("view", x)
    x = _operand(trace, x, "ptoc.view")
    shape, offsets = list(shape), list(offsets)
    if len(shape) != x.ndim or len(offsets) != x.ndim:
        raise ShapeError(located(f"ptoc.view: shape {shape} and offsets {offsets} need one "
                                 f"entry per dimension of the tensor (rank {x.ndim})"))
    for d, s in enumerate(shape):
        if isinstance(s, bool) or not isinstance(s, numbers.Integral) or s < 1:
            raise ShapeError(located(
                f"ptoc.view: shape[{d}] must be a positive int (a static buffer size), got "
                f"{s!r}; a size known only at run time goes into valid_shape="))
    for d, o in enumerate(offsets):
        if not is_symbolic(o) and (isinstance(o, bool) or not isinstance(o, numbers.Integral)
                                   or o < 0):
            raise ShapeError(located(f"ptoc.view: offsets[{d}] must be a non-negative int or "
                                     f"a symbolic scalar, got {o!r}"))
    if valid_shape is not None:
        valid_shape = list(valid_shape)
        if len(valid_shape) != x.ndim:
            raise ShapeError(located(f"ptoc.view: valid_shape {valid_shape} needs one entry per "
                                     f"dimension (rank {x.ndim})"))
        for d, (v, s) in enumerate(zip(valid_shape, shape)):
            if not is_symbolic(v) and (isinstance(v, bool) or not isinstance(v, numbers.Integral)
                                       or not 0 <= v <= s):
                raise ShapeError(located(f"ptoc.view: valid_shape[{d}] must be between 0 (an "
                                         f"empty view) and shape[{d}] = {s}, or a symbolic "
                                         f"scalar, got {v!r}"))
        if all(not is_symbolic(v) and v == s for v, s in zip(valid_shape, shape)):
            valid_shape = None
    for d, (o, s, n) in enumerate(zip(offsets, shape, x.shape)):
        if not is_symbolic(o) and not is_symbolic(n) and (valid_shape is None or
                                                          not is_symbolic(valid_shape[d])):
            extent = s if valid_shape is None else valid_shape[d]
            if o + extent > n:
                raise ShapeError(located(f"ptoc.view: dimension {d}: offset {o} + size {extent} "
                                         f"is beyond the tensor's size {n}"))
    if x._trace is not None and x._scope is not trace.fn_scope:
        trace.at_user_code()
        wid = trace.fn_scope.window(x, offsets, shape, shape, valid_shape)
        t = _tensor.Tensor._bound(trace, wid)
        t._valid = valid_shape
        return t
    if any(is_symbolic(d) for d in x.shape):
        x._value()  # raises: a tensor with a dynamic axis is used through windows only
    if (valid_shape is not None and not any(is_symbolic(v) for v in valid_shape) and
            not any(is_symbolic(o) for o in offsets)):
        # Known now: the valid part, zeros beyond it (the view's static shape).
        padded = full(shape, 0, x.dtype)
        if 0 not in valid_shape:
            part = slice_view(x, tuple(slice(o, o + v) for o, v in zip(offsets, valid_shape)))
            padded[tuple(slice(0, v) for v in valid_shape)] = part
        padded._valid = valid_shape
        return padded
    if valid_shape is not None or any(is_symbolic(o) for o in offsets):
        raise ShapeError(located(
            "ptoc.view: offsets or a valid_shape known only at run time select windows of "
            "tensors from outside a ptoc.loop, inside its body; this tensor is not one"))
    if shape == list(x.shape):
        return x
    ix = x._value()
    return _record(trace, lambda b: b.view(ix, offsets, shape))


def _open_ends_from_value(x, key, value):
    """``key`` with each open-ended slice whose start is symbolic, or that spans a
    dynamic axis, closed at start + the value's size there (``out[i:, ...] = v``
    writes ``v`` at ``i``, as PyPTO's assemble); the value's dims align with the
    slices from the right."""
    key = key if isinstance(key, tuple) else (key,)
    if Ellipsis in key and builtins.sum(1 for k in key if k is Ellipsis) == 1:
        i = key.index(Ellipsis)
        key = key[:i] + (slice(None),) * (x.ndim - (len(key) - 1)) + key[i + 1:]
    key = key + (slice(None),) * (x.ndim - len(key))
    slices = [d for d, k in enumerate(key) if isinstance(k, slice)]
    sizes = dict(zip(slices[::-1], value.shape[::-1]))
    out = list(key)
    for d, k in enumerate(key):
        if (d < x.ndim and isinstance(k, slice) and k.stop is None and k.step in (None, 1) and
                (is_symbolic(k.start) or is_symbolic(x.shape[d])) and d in sizes):
            start = 0 if k.start is None else k.start
            out[d] = slice(start, start + sizes[d])
    return tuple(out)


def write_slice(x, key, value):
    """``x[key] = value``: ``x`` now holds ``value`` (broadcast and cast to the
    slice) in that region. Writing an output parameter is how a kernel returns data
    in place."""
    trace = _trace_of("write", x, value)
    if x._trace is None:
        x._value()
    if _is_tensor(value):
        key = _open_ends_from_value(x, key, value)
    offsets, sizes, kept = _region(x, key, "write")
    visible = tuple(s for s, k in zip(sizes, kept) if k) or (1,)
    if _is_scalar(value):
        v = full(list(sizes), value, x.dtype)  # the region's shape: no reshape needed
    else:
        v = _operand(trace, value, "write")
        # numpy drops leading 1s of the value (y[3, :] = t with t of shape [1, 64]).
        extra = 0
        while len(v.shape) - extra > len(visible) and v.shape[extra] == 1:
            extra += 1
        if extra:
            v = reshape(v, list(v.shape[extra:]))
        if v.shape != visible:
            try:
                ok = np.broadcast_shapes(v.shape, visible) == visible
            except ValueError:
                ok = False
            if not ok:
                raise ShapeError(located(f"cannot write a tensor of shape {list(v.shape)} into "
                                         f"a slice of shape {list(visible)}; write a value of "
                                         f"the slice's shape, or one that broadcasts to it"))
            # Materialise the broadcast (x + 0 of the slice's shape).
            v = add(v, full(list(visible), 0, v.dtype))
    v = cast(v, x.dtype)
    if x._trace is not None and x._scope is not trace.fn_scope:
        # Inside a ptoc.loop body: the body writes this window of an outer tensor.
        shape = list(visible)
        if list(v.shape) != shape:
            v = reshape(v, shape)
        trace.at_user_code()
        trace.fn_scope.write(x, offsets, sizes, v._value(), _window_valid(v, sizes, kept))
        return
    if any(is_symbolic(d) for d in x.shape):
        x._value()  # raises: a tensor with a dynamic axis is used through windows only
    if any(is_symbolic(o) for o in offsets):
        raise ShapeError(located(
            "write: offsets known only at run time (a loop index) select windows of tensors "
            "from outside the loop; this tensor was created inside the loop body"))
    if list(v.shape) != sizes:
        v = reshape(v, sizes)
    if sizes == list(x.shape):
        x._id = v._value()
    else:
        base, src = x._id, v._value()
        trace.at_user_code()
        x._id = trace.builder.assemble(base, src, offsets)
    x._written = True
