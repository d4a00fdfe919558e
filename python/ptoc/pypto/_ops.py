"""PyPTO functions whose signature differs from ptoc's: views and writes, ``full``,
``matmul``, loops, tile shapes. Every other PyPTO op name resolves to the ptoc
function of the same name (``__init__.__getattr__``)."""

import inspect
import numbers
import threading

import ptoc
from ptoc.errors import ArgumentError, ShapeError
from ptoc.tracing import current_trace, located

from . import _names
from ._options import warn_ignored


# --- views and writes ---------------------------------------------------------

def view(input, shape=None, offsets=None, *, valid_shape=None, dtype=None):
    """``pypto.view(x, shape, offsets, valid_shape=...)``: ptoc.view (the window of
    ``x`` at ``offsets`` of size ``shape``, holding data in ``valid_shape``)."""
    if dtype is not None and dtype is not input.dtype:
        raise _names.unsupported("pypto.view(..., dtype=) (reinterpreting the bytes)")
    if shape is None:
        shape = list(input.shape)
    if offsets is None:
        offsets = [0] * len(shape)
    return ptoc.view(input, shape, offsets, valid_shape=valid_shape)


def assemble(input, offsets=None, out=None, parallel=False):
    """``pypto.assemble(x, offsets, out)`` writes ``x`` into ``out`` at ``offsets``;
    ``pypto.assemble([(x, offsets), ...], out)`` writes several."""
    if isinstance(input, (list, tuple)) and out is None:
        out = offsets
        for item in input:
            x, offs = item
            assemble(x, offs, out)
        return
    if out is None:
        raise ArgumentError(located("pypto.assemble(input, offsets, out): out is missing"))
    if offsets is None:
        offsets = [0] * len(out.shape)
    if len(offsets) != len(out.shape):
        raise ShapeError(located(f"pypto.assemble: offsets {list(offsets)} need one entry per "
                                 f"dimension of out {list(out.shape)}"))
    shape = list(input.shape)
    if len(shape) != len(out.shape):
        raise ShapeError(located(f"pypto.assemble: input {shape} and out {list(out.shape)} "
                                 "must have the same number of dimensions"))
    out[tuple(slice(o, o + s) for o, s in zip(offsets, shape))] = input


# --- creation -----------------------------------------------------------------

def full(size, fill_value, dtype=None, *, valid_shape=None):
    """``pypto.full(size, value, dtype, valid_shape=...)``."""
    if dtype is None:
        dtype = ptoc.DT_INT32 if isinstance(fill_value, numbers.Integral) else ptoc.DT_FP32
    dtype = _names.as_ptoc_dtype(dtype, "pypto.full")
    size = list(size)
    if valid_shape is not None and list(valid_shape) != size:
        pview = getattr(ptoc, "view", None)
        if pview is None:
            raise _names.unsupported("pypto.full(..., valid_shape=) smaller than the size")
        return pview(ptoc.full(size, fill_value, dtype), size, [0] * len(size),
                     valid_shape=valid_shape)
    return ptoc.full(size, fill_value, dtype)


def zeros(size, dtype=None, **kwargs):
    return full(size, 0, dtype, **kwargs)


def ones(size, dtype=None, **kwargs):
    return full(size, 1, dtype, **kwargs)


# --- compute ops with other signatures ----------------------------------------

def matmul(input, mat2, out_dtype=None, *, a_trans=False, b_trans=False, c_matrix_nz=False,
           extend_params=None, **kwargs):
    """``pypto.matmul(a, b, out_dtype, a_trans=, b_trans=, ...)``; the NZ output
    format is accepted (ptoc keeps ND); ``extend_params`` goes to ptoc when it takes
    it."""
    if out_dtype is not None:
        out_dtype = _names.as_ptoc_dtype(out_dtype, "pypto.matmul")
    if c_matrix_nz:
        warn_ignored(["matmul(c_matrix_nz=True)"])
    extra = dict(kwargs)
    if extend_params is not None:
        extra["extend_params"] = extend_params
    _check_keywords(ptoc.matmul, extra, "pypto.matmul")
    return ptoc.matmul(input, mat2, out_dtype, a_trans=a_trans, b_trans=b_trans, **extra)


def _check_keywords(fn, kwargs, what):
    """An error naming the PyPTO keyword a ptoc function does not take (yet)."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return
    for k in kwargs:
        if k not in params:
            raise _names.unsupported(f"{what}(..., {k}=)")


def cast(input, dtype, *args, **kwargs):
    _check_keywords(ptoc.cast, kwargs, "pypto.cast")
    return ptoc.cast(input, _names.as_ptoc_dtype(dtype, "pypto.cast"), *args, **kwargs)


# --- loops --------------------------------------------------------------------

_LOOP_KW = ("step", "name", "idx_name", "parallel")


def loop(*bounds, **kwargs):
    """``pypto.loop(stop)`` / ``pypto.loop(start, stop, step, name=, idx_name=,
    parallel=)``; the step may also be given as ``step=`` (the prototype PyPTO's loop
    guide documents). ``parallel`` is ptoc's (independent iterations, run up to runtime
    option ``device_sched_parallelism`` at once); other scheduling hints
    (``submit_before_loop``, ``unroll_list``...) are accepted and ignored."""
    ignored = [f"loop({k}=)" for k in kwargs if k not in _LOOP_KW]
    warn_ignored(ignored)
    return ptoc.loop(*bounds, **{k: v for k, v in kwargs.items() if k in _LOOP_KW})


def loop_unroll(*bounds, unroll_list=(1,), **kwargs):
    """``pypto.loop_unroll(start, stop, step, unroll_list=[4, 2])``: ptoc.loop_unroll
    with 1 added to the factors, as PyPTO adds it (its loop takes the tail)."""
    ignored = [f"loop_unroll({k}=)" for k in kwargs if k not in _LOOP_KW]
    warn_ignored(ignored)
    try:
        factors = list(unroll_list)
    except TypeError:
        factors = unroll_list  # ptoc.loop_unroll names the bad value
    else:
        if 1 not in factors:
            factors.append(1)
    return ptoc.loop_unroll(*bounds, unroll_list=factors,
                            **{k: v for k, v in kwargs.items() if k in _LOOP_KW})


# --- tile shapes --------------------------------------------------------------

_tiles = threading.local()


def _current(kind):
    trace = current_trace()
    saved = getattr(_tiles, kind, None)
    if saved is None or saved[0] is not trace:
        return []
    return list(saved[1])


def set_vec_tile_shapes(*dims, **kwargs):
    ptoc.set_vec_tile_shapes(*dims, **kwargs)
    if len(dims) == 1 and isinstance(dims[0], (list, tuple)):
        dims = tuple(dims[0])
    _tiles.vec = (current_trace(), list(dims))


def get_vec_tile_shapes():
    """The vector tile shape set last in the kernel being traced ([] if none)."""
    return _current("vec")


def set_cube_tile_shapes(m, k, n, enable_split_k=False, *args, **kwargs):
    ptoc.set_cube_tile_shapes(m, k, n, enable_split_k, **kwargs)
    _tiles.cube = (current_trace(), [list(m) if isinstance(m, (list, tuple)) else [m, m],
                                     list(k) if isinstance(k, (list, tuple)) else [k, k],
                                     list(n) if isinstance(n, (list, tuple)) else [n, n]])


def get_cube_tile_shapes():
    return _current("cube")


def set_conv_tile_shapes(*args, **kwargs):
    warn_ignored(["set_conv_tile_shapes"])
