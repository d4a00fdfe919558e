"""Settings made inside a traced function, applying to what follows them:
tile shapes (the ops created next), pass options (this kernel's compilation;
``sg_set_scope`` the ops created next) and runtime options (this kernel's runs).
"""

import numbers
import warnings

import numpy as np

from .errors import ArgumentError, OptionError, TileShapeError
from .options import INT64_MAX, check_options, check_pass_options
from .tracing import current_trace, located, user_location


# Which warnings were shown, per place in the user's code (warnings.warn_explicit
# shows each once per place with the default filter).
_warned = {}


def _positive_ints(values, what):
    out = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, numbers.Integral) or not 0 < v <= INT64_MAX:
            raise TileShapeError(located(f"{what}: tile sizes must be positive ints (below "
                                         f"2**63), got {list(values)}"))
        out.append(int(v))
    return out


def _check_label(label, what):
    """A setting call's label names it in @ptoc.autotune configs: a str or an int."""
    if label is not None and (isinstance(label, bool) or not isinstance(label, (str, int))):
        raise ArgumentError(located(f"{what}: label must be a str (or an int), got {label!r}"))


def set_vec_tile_shapes(*dims, label=None):
    """The tile shape of the vector ops created after this call: one size per
    dimension of the op (the last dim times the element size a multiple of 32 bytes;
    16-64 KB tiles work best; keep reduced axes whole). ``label`` names the call for
    ``@ptoc.autotune`` configs (``{"vec_tile": {label: shape}}``)."""
    trace = current_trace("ptoc.set_vec_tile_shapes")
    _check_label(label, "ptoc.set_vec_tile_shapes")
    if len(dims) == 1 and isinstance(dims[0], (list, tuple)):
        dims = tuple(dims[0])
    dims = trace.tile_shape("vec_tile", label, dims)
    if not isinstance(dims, (list, tuple)):
        raise TileShapeError(located(f"a vec_tile config must be a list of sizes (one per "
                                     f"dimension), got {dims!r}"))
    if not dims:
        raise TileShapeError(located("ptoc.set_vec_tile_shapes: give one size per dimension"))
    trace.builder.set_vec_tile(_positive_ints(dims, "ptoc.set_vec_tile_shapes"))


def set_cube_tile_shapes(m, k, n, enable_split_k=False, *, label=None):
    """The tile shape of the matmuls created after this call: ``[L0, L1]`` sizes
    for each of m, k, n (an int means the same size for both levels).
    ``enable_split_k`` is PyPTO's multi-core split-K switch: accepted, not modelled
    (a warning says so when it is True; each matmul keeps its K on one core). ``label``
    (keyword-only) names the call for ``@ptoc.autotune`` configs
    (``{"cube_tile": {label: (m, k, n)}}``); a str in 4th place is also taken as the
    label, as before enable_split_k existed."""
    trace = current_trace("ptoc.set_cube_tile_shapes")
    if isinstance(enable_split_k, str):
        if label is not None:
            raise ArgumentError(located(f"ptoc.set_cube_tile_shapes: label given twice "
                                        f"({enable_split_k!r} in 4th place and label={label!r})"))
        label, enable_split_k = enable_split_k, False
    elif not isinstance(enable_split_k, (bool, np.bool_)):
        raise ArgumentError(located(
            f"ptoc.set_cube_tile_shapes: the 4th argument is enable_split_k (PyPTO's split-K "
            f"switch), True or False; got {enable_split_k!r}. Name a call for "
            f"@ptoc.autotune with label=..."))
    if enable_split_k:
        file, line = user_location()
        warnings.warn_explicit(
            "ptoc.set_cube_tile_shapes: enable_split_k=True (PyPTO's multi-core split-K) is "
            "accepted but not modelled: ptoc keeps each matmul's K on one core, so results are "
            "the same and the simulated time is that of the unsplit matmul",
            UserWarning, file, line, registry=_warned)
    _check_label(label, "ptoc.set_cube_tile_shapes")
    override = trace.tile_shape("cube_tile", label, None)
    if override is not None:
        if not isinstance(override, (list, tuple)) or len(override) != 3:
            raise TileShapeError(located(f"a cube_tile config must be (m, k, n) with "
                                         f"[L0, L1] each, got {override!r}"))
        m, k, n = override

    def pair(v, name):
        if isinstance(v, numbers.Integral):
            v = [v, v]
        elif isinstance(v, (list, tuple)):
            v = list(v)
        else:
            raise TileShapeError(located(f"ptoc.set_cube_tile_shapes: {name} must be an int or "
                                         f"[L0, L1], got {v!r}"))
        if len(v) != 2:
            raise TileShapeError(located(f"ptoc.set_cube_tile_shapes: {name} must be [L0, L1], "
                                         f"got {v}"))
        return _positive_ints(v, "ptoc.set_cube_tile_shapes")

    trace.builder.set_cube_tile(pair(m, "m"), pair(k, "k"), pair(n, "n"))


def set_pass_options(**knobs):
    """Pass options of this kernel (names as in docs/passes.md, with underscores:
    ``pg_lower_bound``, ``vec_nbuffer_mode``, ``vec_nbuffer_setting={0: 4, -1: 2}``,
    ...). ``sg_set_scope=N`` puts the ops created next into scope N (forced into one
    subgraph); ``sg_set_scope=-1`` ends it."""
    trace = current_trace("ptoc.set_pass_options")
    knobs = check_pass_options(knobs)
    scope = knobs.pop("sg_set_scope", None)
    if scope is not None:
        trace.scope = scope
        trace.builder.set_scope(scope)
    trace.pass_options.update(knobs)


def set_runtime_options(**options):
    """Runtime options of this kernel's runs (``device_sched_mode=0..3``,
    ``host_threads``, ``run_numerics``)."""
    trace = current_trace("ptoc.set_runtime_options")
    trace.runtime_options.update(check_options("runtime_options", options))


def set_debug_options(**options):
    """Debug options of this kernel (``runtime_debug_mode``, ``compile_debug_mode``,
    ``output_dir``)."""
    trace = current_trace("ptoc.set_debug_options")
    trace.debug_options.update(check_options("debug_options", options))


def pass_option_names():
    """Every pass option name ``set_pass_options`` accepts."""
    from . import _ptoc
    return list(_ptoc.pass_option_names())


__all__ = ["set_vec_tile_shapes", "set_cube_tile_shapes", "set_pass_options",
           "set_runtime_options", "set_debug_options", "pass_option_names", "OptionError"]
