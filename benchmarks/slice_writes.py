"""Slice writes that cost only the slice (issue 15): operators that write their result
piece by piece, against the same math written once, on the a2 preset through
@ptoc.jit. Prints, in one run:

  1. softmax over 32 batches written one batch per step (y[b] = softmax(x[b])) vs the
     loop-free softmax of the whole tensor: simulated-time ratio (goal <= 1.1);
  2. attention over 32 heads at 4096 tokens, head dim 128, written one head per step
     (o[h] = attn(q[h], k[h], v[h])) vs the batched form, timing only: simulated-time
     ratio (goal <= 1.2);
  3. a paged indexer that writes one page of scores per step, at 128, 512 and 2048
     pages: trace + compile seconds, tile ops per page, simulated time against the
     same pages joined once with concat (goal: time(2048) / time(128) <= 20, i.e.
     linear in the pages).

Run (after a build):
  PYTHONPATH=build/python /usr/bin/python3 benchmarks/slice_writes.py
  PYTHONPATH=build/python /usr/bin/python3 benchmarks/slice_writes.py --pages=128,512,2048,8192
  PYTHONPATH=build/python /usr/bin/python3 benchmarks/slice_writes.py --skip-attention

Times are wall-clock on this machine (the best of --repeat fresh traces, default 3);
simulated times are deterministic. Inputs are zeros: timing runs do not execute the
numerics (run_numerics=False), and tests check the numbers elsewhere
(test/python/test_slice_writes.py).
"""

import argparse
import sys
import time

import numpy as np

import ptoc

DEVICE = "a2"
SIM_ONLY = {"run_numerics": False}


def softmax_pair(batches, rows, cols):
    @ptoc.jit(device=DEVICE)
    def per_step(x: ptoc.Tensor([batches, rows, cols]), y: ptoc.Tensor([batches, rows, cols])):
        ptoc.set_vec_tile_shapes(8, cols)
        for b in range(batches):
            xb = x[b]
            e = ptoc.exp(xb - ptoc.amax(xb, -1, True))
            y[b] = e / ptoc.sum(e, -1, True)

    @ptoc.jit(device=DEVICE)
    def loop_free(x: ptoc.Tensor([batches, rows, cols])):
        ptoc.set_vec_tile_shapes(1, 8, cols)
        e = ptoc.exp(x - ptoc.amax(x, -1, True))
        return e / ptoc.sum(e, -1, True)

    return per_step, loop_free


def attention_pair(heads, seq, dim):
    f16 = ptoc.DT_FP16
    shape = [heads, seq, dim]

    @ptoc.jit(device=DEVICE)
    def per_head(q: ptoc.Tensor(shape, f16), k: ptoc.Tensor(shape, f16),
                 v: ptoc.Tensor(shape, f16), o: ptoc.Tensor(shape, f16)):
        ptoc.set_cube_tile_shapes([128, 128], [64, 128], [128, 256])
        for h in range(heads):
            ptoc.set_vec_tile_shapes(4, seq)
            s = ptoc.matmul(q[h], k[h], b_trans=True, out_dtype=ptoc.DT_FP32)
            e = ptoc.exp(s - ptoc.amax(s, -1, True))
            p = (e / ptoc.sum(e, -1, True)).cast(f16)
            ptoc.set_vec_tile_shapes(64, dim)
            o[h] = ptoc.matmul(p, v[h])

    @ptoc.jit(device=DEVICE)
    def batched(q: ptoc.Tensor(shape, f16), k: ptoc.Tensor(shape, f16),
                v: ptoc.Tensor(shape, f16)):
        ptoc.set_cube_tile_shapes([128, 128], [64, 128], [128, 256])
        ptoc.set_vec_tile_shapes(1, 4, seq)
        s = ptoc.matmul(q, k, b_trans=True, out_dtype=ptoc.DT_FP32)
        e = ptoc.exp(s - ptoc.amax(s, -1, True))
        p = (e / ptoc.sum(e, -1, True)).cast(f16)
        return ptoc.matmul(p, v)

    return per_head, batched


TOKENS, PAGE, DIM = 16, 64, 128  # indexer: query tokens, page size, head dim


def indexer(pages, joined):
    """Scores of TOKENS queries against every key of a paged cache, relu-gated and
    weighted per query, one page per step: written into its columns of `out`, or
    (joined) collected and concatenated once."""
    f16 = ptoc.DT_FP16

    @ptoc.jit(device=DEVICE)
    def per_page(q: ptoc.Tensor([TOKENS, DIM], f16), kc: ptoc.Tensor([pages, PAGE, DIM], f16),
                 w: ptoc.Tensor([TOKENS, 1]), out: ptoc.Tensor([TOKENS, pages * PAGE])):
        ptoc.set_cube_tile_shapes([16, 16], [128, 128], [64, 64])
        ptoc.set_vec_tile_shapes(TOKENS, PAGE)
        for p in range(pages):
            s = ptoc.matmul(q, kc[p], b_trans=True, out_dtype=ptoc.DT_FP32)
            out[:, p * PAGE:(p + 1) * PAGE] = ptoc.relu(s) * w

    @ptoc.jit(device=DEVICE)
    def concat_once(q: ptoc.Tensor([TOKENS, DIM], f16),
                    kc: ptoc.Tensor([pages, PAGE, DIM], f16), w: ptoc.Tensor([TOKENS, 1])):
        ptoc.set_cube_tile_shapes([16, 16], [128, 128], [64, 64])
        ptoc.set_vec_tile_shapes(TOKENS, PAGE)
        parts = []
        for p in range(pages):
            s = ptoc.matmul(q, kc[p], b_trans=True, out_dtype=ptoc.DT_FP32)
            parts.append(ptoc.relu(s) * w)
        return ptoc.concat(parts, 1)

    return concat_once if joined else per_page


def simulate(fn, *args):
    with ptoc.options(runtime_options=SIM_ONLY):
        fn(*args)
    return fn.last_run.simulated_us


def verdict(ok):
    return "PASS" if ok else "MISS"


def bench_softmax():
    B, R, C = 32, 64, 512
    per_step, loop_free = softmax_pair(B, R, C)
    x = np.zeros((B, R, C), np.float32)
    a = simulate(per_step, x, np.zeros_like(x))
    b = simulate(loop_free, x)
    ratio = a / b
    print(f"1. softmax, {B} batches of {R}x{C} f32, one batch per step")
    print(f"   per step {a:9.1f} us   loop-free {b:9.1f} us   ratio {ratio:.3f}   "
          f"goal <= 1.1: {verdict(ratio <= 1.1)}")
    return ratio <= 1.1


def bench_attention():
    H, S, D = 32, 4096, 128
    per_head, batched = attention_pair(H, S, D)
    q = np.zeros((H, S, D), np.float16)
    t = time.perf_counter()
    a = simulate(per_head, q, q, q, np.zeros_like(q))
    ta = time.perf_counter() - t
    t = time.perf_counter()
    b = simulate(batched, q, q, q)
    tb = time.perf_counter() - t
    ratio = a / b
    print(f"2. attention, {H} heads x {S} tokens x {D}, fp16, one head per step (timing only)")
    print(f"   per head {a:9.1f} us   batched {b:9.1f} us   ratio {ratio:.3f}   "
          f"goal <= 1.2: {verdict(ratio <= 1.2)}")
    print(f"   (trace + compile + simulate: per head {ta:.1f} s, batched {tb:.1f} s)")
    return ratio <= 1.2


def compile_seconds(make, args, repeat):
    """The best of `repeat` fresh traces + compiles, and the last kernel."""
    best, kernel, fn = None, None, None
    for _ in range(repeat):
        fn = make()
        t = time.perf_counter()
        kernel = fn.compile(*args)
        dt = time.perf_counter() - t
        best = dt if best is None else min(best, dt)
    return best, kernel, fn


def bench_pages(page_counts, repeat):
    print(f"3. paged indexer: {TOKENS} queries x pages of {PAGE} keys x {DIM}, one page of "
          f"scores written per step")
    print(f"   {'pages':>6} {'trace+compile s':>16} {'tile ops/page':>14} {'per page us':>12} "
          f"{'joined us':>10} {'ratio':>6}")
    seconds = {}
    for pages in page_counts:
        q = np.zeros((TOKENS, DIM), np.float16)
        kc = np.zeros((pages, PAGE, DIM), np.float16)
        w = np.zeros((TOKENS, 1), np.float32)
        out = np.zeros((TOKENS, pages * PAGE), np.float32)
        s, kernel, fn = compile_seconds(lambda: indexer(pages, False), (q, kc, w, out), repeat)
        seconds[pages] = s
        sim = simulate(fn, q, kc, w, out)
        joined = simulate(indexer(pages, True), q, kc, w)
        print(f"   {pages:>6} {s:>16.3f} {kernel.stats['tile_ops'] / pages:>14.2f} {sim:>12.1f} "
              f"{joined:>10.1f} {sim / joined:>6.3f}")
    lo, hi = min(page_counts), max(page_counts)
    ok = True
    if lo != hi:
        growth = seconds[hi] / seconds[lo]
        bound = 20 * (hi / lo) / 16  # goal: 2048 pages within 20x of 128 (16x the pages)
        ok = growth <= bound
        print(f"   time({hi}) / time({lo}) = {growth:.1f} for {hi / lo:.0f}x the pages   "
              f"goal <= {bound:.0f}: {verdict(ok)}")
    return ok


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--pages", default="128,512,2048", help="page counts for the indexer")
    p.add_argument("--repeat", type=int, default=3, help="fresh traces timed per page count")
    p.add_argument("--skip-attention", action="store_true",
                   help="leave out the 32-head attention (about 15 s)")
    args = p.parse_args(argv)
    results = [bench_softmax()]
    if not args.skip_attention:
        results.append(bench_attention())
    results.append(bench_pages([int(n) for n in args.pages.split(",")], args.repeat))
    print(f"goals: {sum(results)} of {len(results)} met")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
