"""Threads: kernels traced, compiled and run concurrently from Python threads give
the right results, and compile / run release the GIL (another Python thread makes
progress meanwhile)."""

import sys
import threading

import numpy as np
import pytest

import ptoc
from conftest import A2, F32, TINY, TINY_CUBE, assert_close, gelu_ref

JOIN_TIMEOUT_S = 300  # a hang fails the test instead of blocking the suite


def run_threads(targets):
    """Runs each callable in its own thread, all released together by a Barrier so
    they overlap; returns their results (re-raising the first exception)."""
    barrier = threading.Barrier(len(targets))
    results = [None] * len(targets)
    errors = []

    def body(i, fn):
        try:
            barrier.wait()
            results[i] = fn()
        except BaseException as e:  # reported in the main thread
            errors.append(e)

    threads = [threading.Thread(target=body, args=(i, fn)) for i, fn in enumerate(targets)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(JOIN_TIMEOUT_S)
        assert not t.is_alive(), "a thread did not finish"
    if errors:
        raise errors[0]
    return results


@ptoc.jit(device=TINY)
def softmax_rows(x):
    ptoc.set_vec_tile_shapes(8, 256)
    e = ptoc.exp(x - ptoc.amax(x, dim=-1, keepdim=True))
    return e / ptoc.sum(e, dim=-1, keepdim=True)


@ptoc.jit(device=TINY)
def linear_gelu(x, w, b):
    ptoc.set_cube_tile_shapes(*TINY_CUBE)
    ptoc.set_vec_tile_shapes(32, 64)
    return ptoc.gelu(x @ w + b)


def softmax_ref(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def test_two_kernels_concurrently(rng):
    x = rng.standard_normal((200, 256)).astype(F32)
    a = rng.standard_normal((100, 72)).astype(F32)
    w = rng.standard_normal((72, 130)).astype(F32)
    b = rng.standard_normal((1, 130)).astype(F32)
    softmax_rows.cache_clear()
    linear_gelu.cache_clear()

    def first():
        return [softmax_rows(x) for _ in range(5)]

    def second():
        return [linear_gelu(a, w, b) for _ in range(5)]

    soft, lin = run_threads([first, second])
    for s in soft:
        assert_close(s, softmax_ref(x))
    want = gelu_ref(a.astype(np.float64) @ w + b)
    for got in lin:
        assert_close(got, want, rtol=1e-5, atol=1e-4)
    # Each kernel compiled once for its one signature (a racing second compile of the
    # same signature may count as a miss, but only one kernel stays cached).
    assert softmax_rows.cache_info().currsize == 1
    assert linear_gelu.cache_info().currsize == 1
    assert softmax_rows.cache_info().hits + softmax_rows.cache_info().misses == 5


def test_two_signatures_of_one_kernel_concurrently(rng):
    shapes = [(64, 256), (200, 512), (24, 256), (96, 512)]
    xs = [rng.standard_normal(s).astype(F32) for s in shapes]

    @ptoc.jit(device=TINY)
    def scaled_softmax(x, scale):
        ptoc.set_vec_tile_shapes(4, x.shape[-1])
        y = x * scale
        e = ptoc.exp(y - ptoc.amax(y, dim=-1, keepdim=True))
        return e / ptoc.sum(e, dim=-1, keepdim=True)

    def job(x, scale):
        def go():
            out = []
            for _ in range(3):
                got = scaled_softmax(x, scale)
                # This thread's last_run is its own run: the task count of its
                # signature's kernel.
                out.append((got, scaled_softmax.last_run.tasks,
                            scaled_softmax.compile(x, scale).stats["tasks"]))
            return out
        return go

    results = run_threads([job(x, 0.5 + i) for i, x in enumerate(xs)])
    for i, (x, res) in enumerate(zip(xs, results)):
        for got, tasks, expected_tasks in res:
            assert_close(got, softmax_ref(x * F32(0.5 + i)))
            assert tasks == expected_tasks
    assert scaled_softmax.cache_info().currsize == len(xs)
    assert len({r[0][2] for r in results}) > 1  # the signatures really differ


def test_same_signature_from_many_threads(rng):
    """Several threads tracing and compiling the same new signature at once: each
    gets correct results and one kernel stays cached."""
    x = rng.standard_normal((96, 256)).astype(F32)

    @ptoc.jit(device=TINY)
    def f(x):
        ptoc.set_vec_tile_shapes(8, 256)
        return ptoc.tanh(x) * 2.0 + 1.0

    results = run_threads([lambda: f(x)] * 4)
    for got in results:
        assert_close(got, np.tanh(x) * 2 + 1)
    c = f.cache_info()
    assert c.currsize == 1 and c.hits + c.misses == 4


def test_concurrent_in_place_outputs(rng):
    """Threads writing their own output arrays in place do not see each other's."""
    xs = [rng.standard_normal((64, 256)).astype(F32) for _ in range(3)]
    ys = [np.full((64, 256), -1.0, F32) for _ in range(3)]

    @ptoc.jit(device=TINY)
    def f(x, y):
        ptoc.set_vec_tile_shapes(8, 256)
        y[0:32, :] = x[0:32, :] * 2.0

    run_threads([lambda i=i: [f(xs[i], ys[i]) for _ in range(3)] for i in range(3)])
    for x, y in zip(xs, ys):
        assert_close(y[:32], x[:32] * 2)
        assert np.all(y[32:] == -1.0)


def test_errors_in_one_thread_do_not_disturb_another(rng):
    x = rng.standard_normal((64, 256)).astype(F32)

    @ptoc.jit(device=TINY)
    def good(x):
        ptoc.set_vec_tile_shapes(8, 256)
        return x + 1.0

    @ptoc.jit(device=TINY)
    def bad(x):
        ptoc.set_vec_tile_shapes(32, 256)  # 3 x 32 KiB: over tiny's UB
        return x + 1.0

    def failing():
        caught = 0
        for _ in range(5):
            try:
                bad(x)
            except ptoc.TileShapeError:
                caught += 1
        return caught

    caught, outs = run_threads([failing, lambda: [good(x) for _ in range(5)]])
    assert caught == 5
    for got in outs:
        assert_close(got, x + 1)


# --- the GIL --------------------------------------------------------------------------

# While this thread waits for the GIL, Python hands it over only when the holder
# blocks or releases it (a C++ call with the GIL released) or after the switch
# interval. With a long interval, a Python loop in another thread advances during a
# kernel's compile or run only if that call released the GIL.
LONG_SWITCH_INTERVAL_S = 1.0
MIN_ITERATIONS = 10


@pytest.fixture
def long_switch_interval():
    saved = sys.getswitchinterval()
    sys.setswitchinterval(LONG_SWITCH_INTERVAL_S)
    yield
    sys.setswitchinterval(saved)


def iterations_during(call):
    """Runs `call` in a worker thread; counts the iterations a Python loop in this
    thread makes between the worker's start signal and the end of the call."""
    started = threading.Event()
    done = [False]
    outcome = {}

    def worker():
        started.set()
        try:
            outcome["value"] = call()
        except BaseException as e:
            outcome["error"] = e
        done[0] = True

    t = threading.Thread(target=worker)
    t.start()
    started.wait()
    count = 0
    while not done[0]:
        count += 1
    t.join(JOIN_TIMEOUT_S)
    if "error" in outcome:
        raise outcome["error"]
    return count, outcome.get("value")


def big_a2_softmax():
    # A big softmax on a2 with a per-element pow in front and one host thread: the
    # run takes a few tenths of a second.
    @ptoc.jit(device=A2, runtime_options={"run_numerics": True, "host_threads": 1})
    def softmax(x, y):
        ptoc.set_vec_tile_shapes(4, 4096)
        x = x ** 1.5
        e = ptoc.exp(x - ptoc.amax(x, dim=-1, keepdim=True))
        y[:] = e / ptoc.sum(e, dim=-1, keepdim=True)

    return softmax


def test_run_releases_the_gil(rng, long_switch_interval):
    f = big_a2_softmax()
    x = rng.random((4096, 4096), dtype=F32)
    y = np.empty_like(x)
    f.compile(x, y)  # compiled up front: the call below is (almost) all run
    count, _ = iterations_during(lambda: f(x, y))
    assert count > MIN_ITERATIONS
    # And the run computed the right thing.
    ref = softmax_ref((x[:64].astype(np.float64)) ** 1.5)
    assert_close(y[:64], ref)


def test_compile_releases_the_gil(rng, long_switch_interval):
    f = big_a2_softmax()
    x = np.empty((4096, 4096), F32)
    count, kernel = iterations_during(lambda: f.compile(x, x))
    assert isinstance(kernel, ptoc.CompiledKernel)
    assert count > MIN_ITERATIONS
