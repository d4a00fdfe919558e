"""PyPTO programs on ptoc: a package that answers to ``import pypto``.

``python3 -m ptoc.pypto SCRIPT [ARGS]`` runs a PyPTO script unmodified, and
``ptoc.pypto.install()`` makes ``import pypto`` give this package from inside a
program. Kernels (``@pypto.frontend.jit``, ``@pypto.jit``) become ``@ptoc.jit``
functions: the outputs are computed exactly on the CPU and the run is simulated on
ptoc's device model, whether the script asks for ``RunMode.NPU`` or ``RunMode.SIM``.
A real PyPTO is never shadowed unless asked. See docs/pypto.md.
"""

import enum
import functools
import inspect

import ptoc
from ptoc import DYN, DYNAMIC, STATIC

from . import _names, frontend
from ._install import install, real_pypto_spec
from ._ops import (assemble, cast, full, get_cube_tile_shapes, get_vec_tile_shapes, loop,
                   loop_unroll, matmul, ones, set_conv_tile_shapes, set_cube_tile_shapes,
                   set_vec_tile_shapes, view, zeros)
from ._options import (options, reset_options, set_codegen_options, set_debug_options,
                       set_host_options, set_matrix_size, set_pass_config,
                       set_pass_default_config, set_pass_options, set_runtime_options,
                       set_semantic_label, set_verify_options)
from ._tensor import Tensor, TileOpFormat, add_methods, tensor

jit = frontend.jit
add_methods()


class RunMode(enum.IntEnum):
    """PyPTO's run modes. Both run the kernel on ptoc: exact numerics on the CPU and
    the simulated device timing."""
    NPU = 0
    SIM = 1


class _DataTypeMeta(type):
    def __getattr__(cls, name):
        if name.startswith("DT_"):
            return _names.dtype(name)
        raise AttributeError(name)

    def __instancecheck__(cls, obj):
        return isinstance(obj, (ptoc.DType, _names.MissingDType))


class DataType(metaclass=_DataTypeMeta):
    """PyPTO's dtype enum: ``pypto.DataType.DT_FP32`` is ``pypto.DT_FP32``."""


def __getattr__(name):
    """PyPTO dtypes and ops by name: ptoc's of the same name, looked up when used."""
    if name.startswith("DT_"):
        return _names.dtype(name)
    if name.startswith("__"):
        raise AttributeError(name)
    value = getattr(ptoc, name, None)
    if callable(value) and not isinstance(value, type):
        return _same_name(name, value)
    if value is not None:
        return value
    if name.isidentifier() and name[0].islower():
        # is_loop_begin etc. start working when ptoc has them.
        return _Deferred(name)
    raise AttributeError(f"module 'pypto' (ptoc's compatibility layer) has no attribute "
                         f"{name!r}")


class _Deferred:
    """A PyPTO function ptoc does not have (yet): calls ``ptoc.<name>`` if it appears,
    else raises an error naming it."""

    def __init__(self, name):
        self.__name__ = name

    def __call__(self, *args, **kwargs):
        return _names.ptoc_attr(self.__name__)(*args, **kwargs)

    def __repr__(self):
        return f"<pypto.{self.__name__}: not supported by this ptoc yet>"


def _same_name(name, fn):
    """ptoc's function of a PyPTO op's name; a call whose arguments ptoc's function
    does not take (a PyPTO keyword ptoc lacks) is an error naming them."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return fn

    @functools.wraps(fn)
    def op(*args, **kwargs):
        try:
            sig.bind(*args, **kwargs)
        except TypeError as e:
            raise _names.unsupported(f"pypto.{name} with these arguments ({e})") from None
        return fn(*args, **kwargs)
    return op
