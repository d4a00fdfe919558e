"""The compile cache of a @ptoc.jit function: what is a hit, what is a miss
(shapes, dtypes, constants, options), compile() sharing it, and cache_clear()."""

import numpy as np
import pytest

import ptoc
from conftest import F16, F32, TINY, assert_close


def make():
    """A fresh jit function (its own empty cache) with a constant parameter."""
    @ptoc.jit(device=TINY)
    def scale(x, factor=2.0):
        ptoc.set_vec_tile_shapes(32, 64)
        return x * factor

    return scale


def info(f):
    c = f.cache_info()
    return (c.hits, c.misses, c.currsize)


@pytest.fixture
def x(rng):
    return rng.standard_normal((64, 128)).astype(F32)


def test_fresh_function_has_an_empty_cache():
    f = make()
    assert f.cache_info() == ptoc.CacheInfo(0, 0, 0)
    assert f.cache_info()._fields == ("hits", "misses", "currsize")


def test_same_signature_hits(x):
    f = make()
    assert_close(f(x), x * 2)
    assert info(f) == (0, 1, 1)
    assert_close(f(x + 1), (x + 1) * 2)  # new values, same shape and dtype
    f(x.copy())
    assert info(f) == (2, 1, 1)


def test_different_shape_misses(x):
    f = make()
    f(x)
    got = f(x[:32])
    assert info(f) == (0, 2, 2)
    assert_close(got, x[:32] * 2)
    f(x[:32].copy())
    assert info(f) == (1, 2, 2)


def test_different_dtype_misses(x):
    f = make()
    f(x)
    got = f(x.astype(F16))
    assert got.dtype == F16
    assert info(f) == (0, 2, 2)


def test_constants_are_part_of_the_key(x):
    f = make()
    assert_close(f(x, 2.0), x * 2)
    assert_close(f(x, 3.0), x * 3)   # another constant: another kernel
    assert info(f) == (0, 2, 2)
    assert_close(f(x, 3.0), x * 3)
    assert_close(f(x, factor=3.0), x * 3)  # keyword or positional: one key
    assert info(f) == (2, 2, 2)
    f(x)  # the default, 2.0, is the first signature
    assert info(f) == (3, 2, 2)


def test_constant_type_is_part_of_the_key(x):
    """2 and 2.0 are equal and hash alike, but are different constants."""
    f = make()
    f(x, 2.0)
    f(x, 2)
    assert info(f) == (0, 2, 2)


def test_unhashable_constant_is_a_type_error(x):
    """Lists, dicts and dataclasses are keyed by value (test_arrays.py); an unhashable
    object ptoc cannot look into is an error naming the parameter."""
    class Opaque:
        __hash__ = None

    f = make()
    with pytest.raises(TypeError) as e:
        f(x, Opaque())
    assert "'factor'" in str(e.value) and "hashable" in str(e.value)
    assert info(f) == (0, 0, 0)


def test_pass_options_via_ptoc_options_miss(x):
    f = make()
    f(x)
    with ptoc.options(pass_options={"pg_lower_bound": 1024}):
        f(x)
        assert info(f) == (0, 2, 2)
        f(x)
        assert info(f) == (1, 2, 2)
    f(x)  # back to the ambient defaults: the first kernel
    assert info(f) == (2, 2, 2)


def test_host_options_via_ptoc_options_miss(x):
    f = make()
    f(x)
    with ptoc.options(host_options={"double_buffer": False}):
        assert_close(f(x), x * 2)
    assert info(f) == (0, 2, 2)
    with ptoc.options(host_options={"compile_stage": "tile"}):
        k = f(x)  # stops after the tile stage: returns the CompiledKernel
    assert isinstance(k, ptoc.CompiledKernel) and k.stage == "tile"
    assert info(f) == (0, 3, 3)


def test_options_decorator_form_misses(x):
    f = make()
    f(x)

    @ptoc.options(pass_options={"fuse_local": False})
    def call():
        return f(x)

    assert_close(call(), x * 2)
    assert info(f) == (0, 2, 2)
    call()
    assert info(f) == (1, 2, 2)


def test_jit_options_are_per_function(x):
    """Two jit functions of one Python function have separate caches."""
    def body(x):
        ptoc.set_vec_tile_shapes(32, 64)
        return x + 1.0

    a = ptoc.jit(body, device=TINY)
    b = ptoc.jit(body, device=TINY, pass_options={"pg_lower_bound": 2048})
    a(x)
    b(x)
    assert info(a) == (0, 1, 1) and info(b) == (0, 1, 1)


def test_ambient_run_options_apply_on_a_cache_hit(x, tmp_path):
    """Runtime and debug options around a call are not compile options: a hit runs
    with the current call's ones."""
    f = make()
    f(x)
    assert f.last_run.output_folder == ""
    with ptoc.options(debug_options={"runtime_debug_mode": 1, "output_dir": str(tmp_path)}):
        f(x)
        assert f.last_run.output_folder.startswith(str(tmp_path))
    f(x)
    assert f.last_run.output_folder == ""
    assert info(f) == (2, 1, 1)


def test_ambient_run_numerics_applies_on_a_cache_hit(x):
    @ptoc.jit(device=TINY)
    def double_into(x, y):
        ptoc.set_vec_tile_shapes(32, 64)
        y[:] = x * 2.0

    y = np.zeros_like(x)
    double_into(x, y)
    assert_close(y, x * 2)
    y[:] = -1.0
    with ptoc.options(runtime_options={"run_numerics": False}):
        double_into(x, y)  # timing only: the output stays untouched
    assert double_into.last_run.simulated_us > 0
    assert np.all(y == -1.0)
    double_into(x, y)
    assert_close(y, x * 2)
    assert info(double_into) == (2, 1, 1)


def test_ambient_run_options_apply_on_first_compile(x, tmp_path):
    f = make()
    with ptoc.options(debug_options={"runtime_debug_mode": 1, "output_dir": str(tmp_path)}):
        f(x)
    folder = f.last_run.output_folder
    assert folder.startswith(str(tmp_path))


def test_compile_then_call_hits(x):
    f = make()
    k = f.compile(x)
    assert isinstance(k, ptoc.CompiledKernel) and k.stage == "codegen"
    assert info(f) == (0, 1, 1)
    assert f.compile(x) is k
    assert info(f) == (1, 1, 1)
    assert_close(f(x), x * 2)
    assert info(f) == (2, 1, 1)


def test_compile_with_constant(x):
    f = make()
    k3 = f.compile(x, 3.0)
    k2 = f.compile(x)
    assert k3 is not k2
    assert "3.0" in k3.ir("tensor") and info(f) == (0, 2, 2)
    assert_close(f(x, 3.0), x * 3)
    assert info(f) == (1, 2, 2)


def test_cache_clear(x):
    f = make()
    f(x)
    f(x)
    f(x[:32])
    assert info(f) == (1, 2, 2)
    f.cache_clear()
    assert info(f) == (0, 0, 0)
    assert_close(f(x), x * 2)  # compiles again
    assert info(f) == (0, 1, 1)


def test_failed_compile_is_not_cached(x):
    @ptoc.jit(device=TINY)
    def bad(x, n=1):
        # n == 1: 3 tiles of 32x128 f32 = 48 KiB, over tiny's 32 KiB of UB
        ptoc.set_vec_tile_shapes(32 if n == 1 else 8, 128)
        return x * 2.0

    for _ in range(2):
        with pytest.raises(ptoc.TileShapeError):
            bad(x)
    assert bad.cache_info().currsize == 0
    assert_close(bad(x, 2), x * 2)
    assert info(bad) == (0, 1, 1)
