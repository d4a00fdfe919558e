"""ptoc: fused tile operators for Ascend-style NPUs, compiled and run on the CPU.

Write an operator against whole tensors, set tile shapes and options, and call it
with numpy arrays or torch tensors: the outputs are computed for real on the host,
and the run is simulated on a model of the device (``last_run``: time, roofline bound, utilisation,
summary, swimlane). See docs/python.md.
"""

from . import _ptoc
from . import profile
from .dynamic import DYN, DYNAMIC, STATIC, dynamic
from .dtypes import (DT_BF16, DT_BOOL, DT_FP16, DT_FP32, DT_INT8, DT_INT16, DT_INT32, DT_INT64,
                     DT_UINT8, DT_UINT16, DT_UINT32, DT_UINT64, DType)
from .enums import PrecisionType, ReLuType
from .errors import (ArgumentError, CompileError, DTypeError, Error, FileError, InternalError,
                     OptionError, ResourceError, RunError, ShapeError, TileShapeError)
from .autotune import AutotunedFunction, ConfigResult, autotune
from .jit import CacheInfo, CompiledKernel, JitFunction, jit
from .loops import SymBool, SymInt, is_loop_begin, is_loop_end, loop, loop_unroll
from .casting import CastMode, SaturationMode
from .ops import (TopK, abs, add, amax, amin, cast, ceil, clip, clone, concat, div, eq, erfc,
                  exp, exp2, expand_clone, expm1, floor, full, gather, ge, gelu, gt, le, log,
                  logical_and, logical_not, logical_or, lt, matmul, maximum, mean, minimum, mul,
                  ne, neg, pow, reciprocal, relu, reshape, round, rsqrt, scatter, scatter_,
                  scatter_update, sigmoid, softmax, sqrt, sub, sum, tanh, topk, transpose, trunc,
                  unsqueeze, view, where)
from .options import options
from .settings import (pass_option_names, set_cube_tile_shapes, set_debug_options,
                       set_pass_options, set_runtime_options, set_vec_tile_shapes)
from .tensor import Tensor
from .tune import TuneResult, tune

__version__ = _ptoc.__version__
RunReport = _ptoc.RunReport


def device_presets():
    """The device preset names ("a2", "b3", "a3", "tiny")."""
    return list(_ptoc.device_presets())
