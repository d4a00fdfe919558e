"""Shared helpers of the ptoc pytest suites: fresh jit kernels from an expression,
tile shapes that fit the small "tiny" device, numpy references (bf16 rounding, gelu)
and per-dtype tolerances.

Test modules import the helpers with ``from conftest import ...`` (pytest puts this
folder on sys.path) and take the ``rng`` fixture.
"""

import atexit
import math
import os
import shutil
import tempfile

import numpy as np
import pytest

# Run from ctest, the suite writes its run folders and tuning bank into the build
# tree (test/CMakeLists.txt). Run directly (pytest test/python), it must not write
# into the source tree (./output) or into the user's own knowledge bank
# (~/.cache/ptoc/bank): both default to a temporary folder removed at exit.
if "PTOC_OUTPUT_DIR" not in os.environ or "PTOC_TUNE_BANK_PATH" not in os.environ:
    _scratch = tempfile.mkdtemp(prefix="ptoc-pytest-")
    atexit.register(shutil.rmtree, _scratch, ignore_errors=True)
    os.environ.setdefault("PTOC_OUTPUT_DIR", os.path.join(_scratch, "output"))
    os.environ.setdefault("PTOC_TUNE_BANK_PATH", os.path.join(_scratch, "bank"))

import ptoc  # noqa: E402 (after the environment it reads)

TINY = "tiny"
A2 = "a2"

# Vector tiles for "tiny" (UB 32 KiB): a step of a binary op holds three tiles, so a
# tile stays at or under 8 KiB of f32. Every last dim is a multiple of 32 elements,
# so it is 32-byte aligned for every element size, int8 included.
TINY_VEC_TILES = {1: (1024,), 2: (32, 64), 3: (2, 16, 64), 4: (1, 2, 16, 64)}
# Cube tiles for "tiny" (L0A/L0B 16 KiB, L0C 32 KiB, L1 64 KiB), all 16-aligned.
TINY_CUBE = ([32, 32], [32, 32], [32, 32])
# The a2 starting points from the docs (UB 192 KiB; L0A/L0B 64 KiB, L0C 128 KiB, L1 512 KiB).
A2_VEC_TILE = (16, 512)
A2_CUBE = ([128, 128], [64, 256], [128, 128])

F32, F16, I8, I32 = np.float32, np.float16, np.int8, np.int32

# Tolerances against numpy for one elementwise op: f32 is computed in f32 (a few ulp
# apart from numpy's algorithms); f16/bf16 results are rounded to 11/8 significant
# bits (half an ulp: 4.9e-4 / 3.9e-3 relative). Reductions and matmuls, which
# accumulate, pass looser ones.
_TOLERANCES = {
    "f32": dict(rtol=1e-5, atol=1e-6),
    "f16": dict(rtol=2e-3, atol=1e-3),
    "bf16": dict(rtol=2e-2, atol=1e-2),
}


def tolerance(dtype):
    """rtol/atol for comparing a result of `dtype` (numpy dtype or "bf16")."""
    if isinstance(dtype, str):
        return dict(_TOLERANCES[dtype])
    dtype = np.dtype(dtype)
    if dtype == np.float16:
        return dict(_TOLERANCES["f16"])
    if dtype.kind in "iu":
        return dict(rtol=0, atol=0)
    return dict(_TOLERANCES["f32"])


def assert_close(got, want, dtype=None, **overrides):
    """Asserts `got` matches the numpy reference `want` within the tolerance of
    `dtype` (default: got's dtype); exact for integers. Also checks the shape."""
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.shape == want.shape, f"shape {got.shape} != reference {want.shape}"
    tol = tolerance(dtype if dtype is not None else got.dtype)
    tol.update(overrides)
    if got.dtype.kind in "iu" and tol["rtol"] == 0 and tol["atol"] == 0:
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), **tol)


def default_tile(rank, device=TINY):
    """A vector tile shape of `rank` dims that fits `device`."""
    if device == TINY:
        return TINY_VEC_TILES[rank]
    if rank == 1:
        return (A2_VEC_TILE[-1],)
    return (1,) * (rank - 2) + A2_VEC_TILE


_PARAM_NAMES = ("a", "b", "c", "d")


def kernel(expr, nargs, *, tile=None, cube=None, device=TINY, annotations=None, name="kern",
           **jit_options):
    """A fresh ``@ptoc.jit`` function of `nargs` tensor parameters that sets the
    tile shapes (`tile` for vector ops, `cube` for matmuls) and returns
    ``expr(*params)``. `annotations` (one ptoc.Tensor or None per parameter) become
    the parameters' annotations."""

    def settings():
        if cube is not None:
            ptoc.set_cube_tile_shapes(*cube)
        if tile is not None:
            ptoc.set_vec_tile_shapes(*tile)

    if nargs == 1:
        def fn(a):
            settings()
            return expr(a)
    elif nargs == 2:
        def fn(a, b):
            settings()
            return expr(a, b)
    elif nargs == 3:
        def fn(a, b, c):
            settings()
            return expr(a, b, c)
    elif nargs == 4:
        def fn(a, b, c, d):
            settings()
            return expr(a, b, c, d)
    else:
        raise ValueError(f"kernel(): 1 to 4 parameters, got {nargs}")
    fn.__name__ = fn.__qualname__ = name
    if annotations is not None:
        fn.__annotations__ = {n: t for n, t in zip(_PARAM_NAMES, annotations) if t is not None}
    return ptoc.jit(fn, device=device, **jit_options)


def run(expr, *arrays, tile="auto", cube=None, device=TINY, annotations=None, **jit_options):
    """Compiles ``expr`` over the arrays' shapes (a fresh kernel: no caching between
    tests) and runs it; returns what the kernel returns. ``tile="auto"`` picks a
    vector tile of the largest input rank that fits `device`."""
    if isinstance(tile, str) and tile == "auto":
        tile = default_tile(max(np.ndim(a) for a in arrays), device)
    f = kernel(expr, len(arrays), tile=tile, cube=cube, device=device, annotations=annotations,
               **jit_options)
    return f(*arrays)


def bf16_round(a):
    """float32 values rounded to bfloat16 (round to nearest, ties to even, on the
    float32 bit pattern), returned as float32. NaN stays NaN."""
    a = np.ascontiguousarray(a, dtype=np.float32)
    bits = a.view(np.uint32).astype(np.uint64)
    lsb = (bits >> np.uint64(16)) & np.uint64(1)
    rounded = ((bits + np.uint64(0x7FFF) + lsb) >> np.uint64(16)) << np.uint64(16)
    out = (rounded & np.uint64(0xFFFFFFFF)).astype(np.uint32).view(np.float32)
    return np.where(np.isnan(a), a, out)


_erf = np.vectorize(math.erf, otypes=[np.float64])


def gelu_ref(x):
    """The exact (erf) gelu the C++ reference uses (lib/ir/OpRegistry.cpp):
    0.5 x (1 + erf(x / sqrt 2)), in float64."""
    x = np.asarray(x, dtype=np.float64)
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


def sigmoid_ref(x):
    x = np.asarray(x, dtype=np.float64)
    return 1.0 / (1.0 + np.exp(-x))


def in_dtype(ref, dtype):
    """A float64 reference rounded through the result dtype (what a correct kernel
    of that dtype can return at best)."""
    if isinstance(dtype, str) and dtype == "bf16":
        return bf16_round(np.asarray(ref, np.float32))
    return np.asarray(ref).astype(dtype)


@pytest.fixture
def rng():
    """A seeded generator: every test sees the same data on every run."""
    return np.random.default_rng(20240611)
