"""Loops that compile their body once (issue 17): ptoc.loop on the a2 preset through
@ptoc.jit. Prints, in one run:

  1. trace + compile seconds of a kernel whose ptoc.loop runs 1 and 4096 iterations
     (goal: ratio <= 1.2: the body is compiled once, whatever the trip count), with
     the unrolled Python `for` of 4096 steps for comparison;
  2. at 1k, 10k and 100k iterations: the first run's instantiation of the iterations
     (kept for later runs), then simulate and execute seconds per iteration (goal:
     linear, time(100k) / time(10k) <= 11, simulate + execute), and the simulated time;
  3. the same loop with stitch_function_max_num 1, 16, 128 and 1024: simulated time
     and the control thread's share;
  4. flash attention (examples/flash_attention.py) at B=1, N=32, S=4096, D=128, timing
     only: trace + compile and simulate seconds, the simulated time against the device
     bound of the program (cube, vector and compulsory HBM terms at peak; no score
     matrix is materialised) (goal <= 2.5x), and the same after ptoc.tune with a budget
     of --tune-budget (default 128; goal <= 1.6x; 0 skips it).

Run (after a build):
  PYTHONPATH=build/python /usr/bin/python3 benchmarks/loops.py
  PYTHONPATH=build/python /usr/bin/python3 benchmarks/loops.py --iterations=1000,10000

Wall-clock times are the best of --repeat runs (default 3) on this machine; simulated
times are deterministic. Numerics are checked against numpy on every run here.
"""

import argparse
import os
import re
import sys
import time

import numpy as np

import ptoc

DEVICE = "a2"
COLS = 64


def rows_kernel(n, unrolled=False, runtime_options=None):
    @ptoc.jit(device=DEVICE, runtime_options=runtime_options)
    def rows(x: ptoc.Tensor([n, COLS]), y: ptoc.Tensor([n, COLS])):
        ptoc.set_vec_tile_shapes(1, COLS)
        if unrolled:
            for i in range(n):
                y[i] = ptoc.exp(x[i]) * 0.5
        else:
            for i in ptoc.loop(n, name="row"):
                y[i] = ptoc.exp(x[i]) * 0.5
    return rows


def best(fn, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def compile_seconds(n, repeat, unrolled=False):
    x = np.zeros((n, COLS), np.float32)
    return best(lambda: rows_kernel(n, unrolled).compile(x, np.zeros_like(x)), repeat)


def run_seconds(n, repeat):
    """(expand seconds, simulate seconds, execute seconds, simulated us): the first run
    instantiates the iterations (kept for later runs); simulate and execute are the
    best of repeat later runs."""
    x = np.random.default_rng(0).standard_normal((n, COLS)).astype(np.float32)
    f = rows_kernel(n)
    y = np.zeros_like(x)
    f.compile(x, y)
    start = time.perf_counter()
    f(x, y)  # instantiates the iterations, then simulates and executes
    first = time.perf_counter() - start
    np.testing.assert_allclose(y, np.exp(x) * 0.5, rtol=1e-6)
    expand = first - f.last_run.simulate_seconds - f.last_run.execute_seconds
    sims, execs = [], []
    for _ in range(repeat):
        f(x, y)
        sims.append(f.last_run.simulate_seconds)
        execs.append(f.last_run.execute_seconds)
    return expand, min(sims), min(execs), f.last_run.simulated_us


def control_share(summary):
    m = re.search(r"control thread busy ([0-9.]+) us", summary)
    return float(m.group(1)) if m else 0.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--iterations", default="1000,10000,100000")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--tune-budget", type=int, default=128)
    ap.add_argument("--skip-flash", action="store_true")
    args = ap.parse_args()

    print("1. compile once: trace + compile seconds")
    # Sub-millisecond compiles: the best of more tries, so noise does not decide.
    one = compile_seconds(1, max(args.repeat, 10))
    many = compile_seconds(4096, max(args.repeat, 10))
    unrolled = compile_seconds(4096, 1, unrolled=True)
    print(f"   ptoc.loop(1)    {one:8.4f} s")
    print(f"   ptoc.loop(4096) {many:8.4f} s   ratio {many / one:5.2f} (goal <= 1.2)")
    print(f"   for i in range(4096) (unrolled, for comparison) {unrolled:8.4f} s")

    print("2. simulate + execute per iteration")
    rows = []
    for n in [int(v) for v in args.iterations.split(",")]:
        expand, sim, ex, us = run_seconds(n, args.repeat)
        rows.append((n, sim, ex))
        print(f"   {n:7d} iterations: expand (first run) {expand:7.4f} s "
              f"({expand / n * 1e6:6.2f} us/it), simulate {sim:7.4f} s ({sim / n * 1e6:5.2f} "
              f"us/it), execute {ex:7.4f} s ({ex / n * 1e6:5.2f} us/it), simulated "
              f"{us:9.1f} us")
    by_n = {n: sim + ex for n, sim, ex in rows}
    if 10000 in by_n and 100000 in by_n:
        print(f"   time(100k) / time(10k) = {by_n[100000] / by_n[10000]:5.2f} (goal <= 11)")

    print("3. stitch_function_max_num (4096 iterations)")
    x = np.zeros((4096, COLS), np.float32)
    for s in (1, 16, 128, 1024):
        f = rows_kernel(4096, runtime_options={"stitch_function_max_num": s, "run_numerics": False})
        f(x, np.zeros_like(x))
        r = f.last_run
        print(f"   {s:5d}: simulated {r.simulated_us:10.1f} us, control thread busy "
              f"{control_share(r.summary):9.1f} us")
    if not args.skip_flash:
        flash(args.tune_budget)


def flash(budget):
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
    import flash_attention as fa
    b, n, s, d = 1, 32, 4096, 128
    print(f"4. flash attention B={b} N={n} S={s} D={d} (timing only)")
    shape = (b * n, s, d)
    q = np.zeros(shape, np.float16)
    o = np.zeros(shape, np.float16)
    kernel = fa.make_flash_attention(b, n, s, d, False, DEVICE, 0, {"run_numerics": False})
    bias = fa.causal_bias(fa.block_for(s))
    start = time.perf_counter()
    kernel.compile(q, q, q, bias, o)
    compile_s = time.perf_counter() - start
    start = time.perf_counter()
    kernel(q, q, q, bias, o)
    first = time.perf_counter() - start
    r = kernel.last_run
    print(f"   trace + compile {compile_s:.4f} s; first run {first:.2f} s (instantiate "
          f"{first - r.simulate_seconds:.2f} s, simulate {r.simulate_seconds:.2f} s)")
    print(f"   default: simulated {r.simulated_us:10.1f} us, bound {r.bound_us:8.1f} us: "
          f"{r.simulated_us / r.bound_us:6.2f}x the bound (goal <= 2.5); control thread busy "
          f"{control_share(r.summary):9.1f} us")
    if budget > 0:
        start = time.perf_counter()
        t = ptoc.tune(kernel, q, q, q, bias, o, budget=budget, progress=False,
                      use_bank=False)
        print(f"   ptoc.tune budget {budget} ({time.perf_counter() - start:.0f} s): best "
              f"{t.best_us:10.1f} us = {t.best_us / r.bound_us:6.2f}x the bound (goal <= 1.6); "
              f"config {t.config}")


if __name__ == "__main__":
    main()
