"""Arrays a @ptoc.jit call takes: numpy, objects with the buffer protocol,
__array_interface__ or __dlpack__, and torch CPU tensors (fp32, fp16, bf16 by its
bits, int8, int32); outputs written in place into each of them, non-contiguous ones
included; what a call returns; dtypes ptoc has no element type for; constants keyed
by value (lists, dicts, dataclasses); tensor parameters a function does not use."""

import array
import dataclasses

import numpy as np
import pytest

import ptoc
from conftest import F16, F32, I32, TINY, assert_close

SHAPE = (32, 64)


def jit(fn):
    return ptoc.jit(fn, device=TINY)


@jit
def exp_into(x, y):
    ptoc.set_vec_tile_shapes(32, 64)
    y[:] = ptoc.exp(x)


@jit
def double(x):
    ptoc.set_vec_tile_shapes(32, 64)
    return x * 2


@pytest.fixture
def x(rng):
    return rng.standard_normal(SHAPE).astype(F32)


# --- numpy and the buffer protocols ---------------------------------------------------

def test_numpy_in_and_out(x):
    y = np.full(SHAPE, 7.0, F32)
    assert exp_into(x, y) is None
    assert_close(y, np.exp(x))
    got = double(x)
    assert isinstance(got, np.ndarray) and got.dtype == F32
    assert_close(got, x * 2)


def test_memoryview_in_and_out(x):
    """A memoryview keeps its shape and format; the output lands in the memory it views."""
    backing = np.full(SHAPE, 7.0, F32)
    exp_into(memoryview(x), memoryview(backing))
    assert_close(backing, np.exp(x))


def test_array_module_buffer(x):
    """array.array is a 1-D buffer of its typecode."""
    @jit
    def neg(v, out):
        ptoc.set_vec_tile_shapes(64)
        out[:] = -v

    v = array.array("f", x[0].tolist())
    out = array.array("f", [0.0] * 64)
    neg(v, out)
    assert_close(np.asarray(out), -x[0])
    ints = array.array("i", range(64))
    ints_out = array.array("i", [0] * 64)
    neg(ints, ints_out)
    assert list(ints_out) == [-i for i in range(64)]


def test_read_only_buffer_output_is_an_error(x):
    ro = np.zeros(SHAPE, F32)
    ro.flags.writeable = False
    with pytest.raises(ptoc.ArgumentError) as e:
        exp_into(x, memoryview(ro))
    assert "'y'" in str(e.value) and "read-only" in str(e.value)
    exp_into(memoryview(ro), np.zeros(SHAPE, F32))  # a read-only input is fine


class ArrayInterface:
    """Exposes a numpy array only through __array_interface__."""

    def __init__(self, a):
        self._a = a
        self.__array_interface__ = a.__array_interface__


class DLPackOnly:
    """Exposes a numpy array only through the DLPack protocol."""

    def __init__(self, a):
        self._a = a

    def __dlpack__(self, stream=None):
        return self._a.__dlpack__()

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


@pytest.mark.parametrize("wrap", [ArrayInterface, DLPackOnly], ids=["array-interface", "dlpack"])
def test_protocol_objects_in_and_out(x, wrap):
    y = np.full(SHAPE, 7.0, F32)
    exp_into(wrap(x), wrap(y))
    assert_close(y, np.exp(x))
    assert isinstance(double(wrap(x)), np.ndarray)


def test_bytes_and_strings_stay_constants(x):
    @jit
    def f(x, tag):
        ptoc.set_vec_tile_shapes(32, 64)
        return x + len(tag)

    assert_close(f(x, b"abc"), x + 3)
    assert_close(f(x, "ab"), x + 2)


def test_unsupported_buffer_dtype_names_the_parameter(x):
    with pytest.raises(ptoc.DTypeError) as e:
        exp_into(memoryview(x.astype(np.float64)), np.zeros(SHAPE, F32))
    assert "'x'" in str(e.value) and "float64" in str(e.value)


def test_broadcast_output_is_an_error(x):
    """An output whose elements share memory would keep only one of the results."""
    torch = pytest.importorskip("torch")
    y = torch.zeros(1, 64).expand(32, 64)
    with pytest.raises(ptoc.ArgumentError) as e:
        exp_into(x, y)
    assert "'y'" in str(e.value) and "broadcast" in str(e.value)


# --- torch ----------------------------------------------------------------------------

@pytest.fixture
def torch():
    return pytest.importorskip("torch")


@pytest.mark.parametrize("dtype, np_dtype", [("float32", F32), ("float16", F16)])
def test_torch_float_in_place(torch, x, dtype, np_dtype):
    xt = torch.from_numpy(x.astype(np_dtype))
    yt = torch.full(SHAPE, 7.0, dtype=getattr(torch, dtype))
    exp_into(xt, yt)
    assert yt.dtype == getattr(torch, dtype)
    assert_close(yt.numpy(), np.exp(x.astype(np_dtype).astype(F32)).astype(np_dtype))


def test_torch_int_dtypes(torch):
    @jit
    def f(a, b, out):
        ptoc.set_vec_tile_shapes(32, 64)
        out[:] = a + b

    a = torch.arange(32 * 64, dtype=torch.int32).reshape(SHAPE)
    out = torch.zeros(SHAPE, dtype=torch.int32)
    f(a, a, out)
    assert torch.equal(out, a * 2)
    small = torch.full(SHAPE, 3, dtype=torch.int8)
    out8 = torch.zeros(SHAPE, dtype=torch.int8)
    f(small, small, out8)
    assert torch.equal(out8, torch.full(SHAPE, 6, dtype=torch.int8))


def bf16_patterns(torch, n):
    """n finite bf16 values spread over the whole bit range (subnormals, -0 included)."""
    bits = np.linspace(0, 0x7F7F, n // 2).astype(np.int16)
    bits = np.concatenate([bits, bits | np.int16(-0x8000)])  # and their negatives
    return torch.from_numpy(bits).view(torch.bfloat16)


def test_torch_bf16_by_its_bits(torch):
    """neg flips the sign bit only: every bf16 input comes back bit for bit."""
    @jit
    def neg(x, y):
        ptoc.set_vec_tile_shapes(32, 64)
        y[:] = -x

    xt = bf16_patterns(torch, 32 * 64).reshape(SHAPE)
    yt = torch.zeros(SHAPE, dtype=torch.bfloat16)
    neg(xt, yt)
    want = (xt.view(torch.int16) ^ torch.tensor(-0x8000, dtype=torch.int16))
    assert torch.equal(yt.view(torch.int16), want)


def test_torch_bf16_arithmetic_matches_torch(torch, x):
    """bf16 math rounds per op as torch's CPU bf16 does."""
    @jit
    def f(a, b, y):
        ptoc.set_vec_tile_shapes(32, 64)
        y[:] = a * b + a

    a = torch.from_numpy(x).to(torch.bfloat16)
    b = torch.from_numpy(x[::-1].copy()).to(torch.bfloat16)
    y = torch.zeros(SHAPE, dtype=torch.bfloat16)
    f(a, b, y)
    want = a * b + a
    np.testing.assert_allclose(y.float().numpy(), want.float().numpy(), rtol=1e-2, atol=1e-2)


def test_torch_returns_torch_when_every_array_is_torch(torch, x):
    xt = torch.from_numpy(x)
    got = double(xt)
    assert isinstance(got, torch.Tensor) and got.dtype == torch.float32
    assert torch.equal(got, xt * 2)

    @jit
    def bf(a):
        ptoc.set_vec_tile_shapes(32, 64)
        return -a, a.cast(ptoc.DT_FP32)

    ab = xt.to(torch.bfloat16)
    neg, wide = bf(ab)
    assert neg.dtype == torch.bfloat16 and wide.dtype == torch.float32
    assert torch.equal(neg, -ab) and torch.equal(wide, ab.float())


def test_mixed_torch_and_numpy_return_numpy(torch, x):
    @jit
    def add(a, b):
        ptoc.set_vec_tile_shapes(32, 64)
        return a + b

    got = add(torch.from_numpy(x), x)
    assert isinstance(got, np.ndarray)
    assert_close(got, x * 2)


@pytest.mark.parametrize("make", [
    lambda t: t.zeros(64, 32).t(),                    # transposed
    lambda t: t.zeros(32, 128)[:, ::2],               # strided columns
    lambda t: t.zeros(40, 64)[4:36],                  # an offset row range (contiguous)
], ids=["transposed", "strided", "offset"])
def test_torch_non_contiguous_output(torch, x, make):
    y = make(torch)
    assert tuple(y.shape) == SHAPE
    exp_into(torch.from_numpy(x), y)
    assert_close(y.numpy(), np.exp(x))


def test_torch_non_contiguous_bf16_output_and_input(torch, x):
    @jit
    def neg(a, y):
        ptoc.set_vec_tile_shapes(32, 64)
        y[:] = -a

    a = torch.from_numpy(x).to(torch.bfloat16).t().contiguous().t()  # column-major input
    base = torch.zeros(64, 32, dtype=torch.bfloat16)
    neg(a, base.t())
    assert torch.equal(base.t(), -a)


def test_torch_partial_write_keeps_the_rest(torch, x):
    @jit
    def top(a, y):
        ptoc.set_vec_tile_shapes(16, 64)
        y[0:16, :] = a[0:16, :] * 2

    y = torch.full(SHAPE, 7.0)
    top(torch.from_numpy(x), y)
    assert torch.equal(y[16:], torch.full((16, 64), 7.0))
    assert_close(y[:16].numpy(), x[:16] * 2)


def test_torch_requires_grad_is_read(torch, x):
    xt = torch.from_numpy(x).requires_grad_()
    assert_close(double(xt).detach().numpy(), x * 2)


@pytest.mark.parametrize("dtype", ["float64", "complex64"])
def test_torch_unsupported_dtype(torch, dtype):
    bad = torch.zeros(SHAPE, dtype=getattr(torch, dtype))
    with pytest.raises(ptoc.DTypeError) as e:
        double(bad)
    msg = str(e.value)
    assert "'x'" in msg and f"torch.{dtype}" in msg
    assert ("torch.float32, float16, bfloat16, int8, int32, int64, bool, int16, uint8"
            in msg)


@pytest.mark.parametrize("dtype", ["int64", "int16", "uint8", "bool"])
def test_torch_integer_and_bool_tensors(torch, dtype):
    @jit
    def same(x):
        ptoc.set_vec_tile_shapes(16, 64)  # room for 64-bit tiles on "tiny"
        return ptoc.maximum(x, x)

    x = torch.ones(SHAPE, dtype=getattr(torch, dtype))
    got = same(x)
    assert isinstance(got, torch.Tensor) and got.dtype == x.dtype
    assert bool((got == x).all())


def test_torch_annotation_dtype_must_match(torch):
    @jit
    def f(x: ptoc.Tensor([32, 64], ptoc.DT_BF16)):
        ptoc.set_vec_tile_shapes(32, 64)
        return x * 1

    with pytest.raises(ptoc.DTypeError) as e:
        f(torch.zeros(SHAPE))
    assert "torch.bfloat16" in str(e.value)
    assert f(torch.ones(SHAPE, dtype=torch.bfloat16)).dtype == torch.bfloat16


def test_torch_and_numpy_share_a_compiled_kernel(torch, x):
    f = jit(double.fn)
    f(x)
    f(torch.from_numpy(x))
    assert f.cache_info() == ptoc.CacheInfo(hits=1, misses=1, currsize=1)


# --- constants keyed by value ---------------------------------------------------------

@dataclasses.dataclass
class Config:  # a plain dataclass: unhashable
    scale: float
    shifts: list


def test_unhashable_constants_are_keyed_by_value(x):
    @jit
    def f(x, cfg, extra):
        ptoc.set_vec_tile_shapes(32, 64)
        return x * cfg.scale + sum(cfg.shifts) + extra["bias"]

    assert_close(f(x, Config(2.0, [1.0, 2.0]), {"bias": 1.0}), x * 2 + 4)
    # Equal values, new objects (and another dict order): a hit.
    assert_close(f(x, Config(2.0, [1.0, 2.0]), {"bias": 1.0}), x * 2 + 4)
    assert f.cache_info() == ptoc.CacheInfo(hits=1, misses=1, currsize=1)
    # A different value anywhere inside: a new kernel.
    assert_close(f(x, Config(2.0, [1.0, 3.0]), {"bias": 1.0}), x * 2 + 5)
    assert_close(f(x, Config(2.0, [1.0, 2.0]), {"bias": 0.5}), x * 2 + 3.5)
    assert f.cache_info() == ptoc.CacheInfo(hits=1, misses=3, currsize=3)


def test_constant_lists_key_each_element_type(x):
    """[2] and [2.0] compare equal but may trace differently: two kernels."""
    @jit
    def f(x, shifts):
        ptoc.set_vec_tile_shapes(32, 64)
        return x + shifts[0]

    f(x, [2])
    f(x, [2.0])
    f(x, (2.0,))
    f(x, [2.0])
    assert f.cache_info() == ptoc.CacheInfo(hits=1, misses=3, currsize=3)


def test_dict_order_does_not_matter(x):
    @jit
    def f(x, d):
        ptoc.set_vec_tile_shapes(32, 64)
        return x * d["a"] + d["b"]

    f(x, {"a": 2.0, "b": 1.0})
    f(x, {"b": 1.0, "a": 2.0})
    assert f.cache_info().hits == 1


def test_unkeyable_constant_names_the_part(x):
    class Opaque:
        __hash__ = None

    @jit
    def f(x, cfg):
        ptoc.set_vec_tile_shapes(32, 64)
        return x

    with pytest.raises(ptoc.ArgumentError) as e:
        f(x, {"layers": [1, Opaque()]})
    msg = str(e.value)
    assert "'cfg'" in msg and "cfg['layers'][1]" in msg and "Opaque" in msg
    cyclic = []
    cyclic.append(cyclic)
    with pytest.raises(ptoc.ArgumentError) as e:
        f(x, cyclic)
    assert "contains itself" in str(e.value)


# --- unused tensor parameters ---------------------------------------------------------

def test_unused_input_is_allowed(x):
    @jit
    def f(x, unused, y):
        ptoc.set_vec_tile_shapes(32, 64)
        y[:] = x + 1

    y = np.zeros(SHAPE, F32)
    f(x, np.zeros((8, 8), I32), y)
    assert_close(y, x + 1)
    assert f.compile(x, np.zeros((8, 8), I32), y).args[1]["name"] == "unused"


def test_unused_inputs_only_still_produce_nothing(x):
    @jit
    def f(x, unused):
        ptoc.set_vec_tile_shapes(32, 64)
        ptoc.exp(x)

    with pytest.raises(ptoc.Error) as e:
        f(x, x)
    assert "produces nothing" in str(e.value)


def test_timing_only_runs_do_not_convert_bf16(monkeypatch):
    """A bf16 parameter given float32 is rounded on the way in, but only when the run
    computes values: a timing-only run (and ptoc.tune) reads no floating-point values,
    so it skips the conversion (0.5 s for the LLM suite's SwiGLU weights)."""
    def scale(x: ptoc.Tensor([64, 128], ptoc.DT_BF16)):
        ptoc.set_vec_tile_shapes(16, 128)
        return x * 2.0

    timed = ptoc.jit(device=TINY, runtime_options={"run_numerics": False})(scale)
    computed = ptoc.jit(device=TINY)(scale)
    x = np.random.default_rng(0).standard_normal((64, 128), dtype=np.float32)
    want = computed(x)
    span = computed.last_run.simulated_us
    calls = []
    real = ptoc.arrays._ptoc.float_to_bf16
    monkeypatch.setattr(ptoc.arrays._ptoc, "float_to_bf16",
                        lambda a: calls.append(a.shape) or real(a))
    timed(x)
    assert calls == []
    assert timed.last_run.simulated_us == span
    assert_close(computed(x), want)
    assert calls == [(64, 128)]
