"""How a kernel author gets the causal GQA prefill of examples/llm/attention.py
(Llama-3-8B: 32 query heads, 8 KV heads, head_dim 128, 4096 tokens) towards its device
bound (issue 17's flash-attention goal: within 2.5x). Prints, per variant, the
simulated time against the bound and what limits it: tasks (each costs the AICPU
control thread 390 cycles to build), the control thread's busy time, and the HBM
traffic (the compulsory bytes are 84 MiB).

The variants, each a change to the one before unless it says otherwise:

  port        examples/flash_attention.py's structure: 128 x 128 blocks (4 query heads
              stacked per KV head), ptoc's default options
  blocks      512 x 512 blocks
  merged      + 16 tiles per task (vec_nbuffer / cube_nbuffer settings)
  suite       the suite's operator: 256 x 512 blocks, 8 tiles per task, 64 iterations
              per stitch, fair scheduling (gqa_prefill as examples/llm/attention.py has it)
  stitch128   the suite's with stitch_function_max_num 128
  cubesums    the suite's with the row sums of P computed by the cube (P x ones) and a
              first-block path that skips the rescale
  kv-outer    the key-block loop outermost (every query block's statistics in one
              workspace), 512 x 512 blocks, 16 tiles per task
  ring        the suite's with S, P and P V written into a ring of 8 reused workspaces
  no-control / big-L2 / both
              the cubesums variant on a device whose control thread costs nothing, whose
              L2 holds everything, or both: what is left when each limit is lifted

Run (after a build; about a second per variant):
  PYTHONPATH=build/python /usr/bin/python3 benchmarks/llm_prefill_variants.py [NAME ...]
"""

import argparse
import json
import math
import os
import re
import sys
import tempfile
import time

import numpy as np

import ptoc

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples",
                                "llm"))
import attention  # noqa: E402

F16, F32 = ptoc.DT_FP16, ptoc.DT_FP32
FULL = {"tokens": 4096, "q_heads": 32, "kv_heads": 8, "head_dim": 128}


def merges(n):
    return {"vec_nbuffer_mode": 2, "vec_nbuffer_setting": {-1: n},
            "cube_nbuffer_mode": 2, "cube_nbuffer_setting": {-1: n}}


def make(dims, device, runtime_options, pass_options, order="q", cube_sums=False, ring=0):
    """The prefill with structural options: `order` "q" (query blocks outer, as the
    suite's) or "kv" (key blocks outer); `cube_sums`: row sums of P on the cube and a
    first-block path; `ring`: S, P and P V through `ring` reused workspaces."""
    seq, hq, hkv, d = dims["tokens"], dims["q_heads"], dims["kv_heads"], dims["head_dim"]
    bq, bk = dims["block_q"], dims["block_k"]
    group, per_k = hq // hkv, bk // bq
    rows, nq = group * bq, seq // bq
    scale = 1.0 / math.sqrt(d)

    @ptoc.jit(device=device, pass_options=pass_options, runtime_options=runtime_options)
    def prefill(q: ptoc.Tensor([hq, seq, d], F16), k: ptoc.Tensor([hkv, seq, d], F16),
                v: ptoc.Tensor([hkv, seq, d], F16), mask: ptoc.Tensor([per_k, rows, bk], F32),
                o: ptoc.Tensor([hq, seq, d], F16)):
        ptoc.set_cube_tile_shapes([128, 128], [64, 128], [128, 128])
        if cube_sums:
            ptoc.set_vec_tile_shapes(bk, 16)
            ones = ptoc.full([bk, 16], 1.0, F16)
        if ring:
            ptoc.set_vec_tile_shapes(1, 1, 8192 // bk, bk)
            ring_s = ptoc.full([ring, 2, rows, bk], 0.0, F32)
            ring_p = ptoc.full([ring, 2, rows, bk], 0.0, F16)
            ptoc.set_vec_tile_shapes(1, 1, 8192 // d, d)
            ring_pv = ptoc.full([ring, 2, rows, d], 0.0, F32)

        def through(workspace, slot, value):
            if not ring:
                return value
            workspace[slot] = value
            return workspace[slot]

        def load_q(g, qb):
            ptoc.set_vec_tile_shapes(8192 // d, d)
            tokens = slice(qb * bq, (qb + 1) * bq)
            qi = ptoc.concat([q[g * group + i, tokens, :] for i in range(group)], dim=0)
            return ptoc.cast(ptoc.cast(qi, F32) * scale, F16)

        def step(qi, g, qb, kb, diagonal, first, m, l, acc):
            keys = slice(kb * bk, (kb + 1) * bk)
            slot = ((g * nq + qb) % ring, kb % 2) if ring else None
            ptoc.set_cube_tile_shapes([128, 128], [64, 128], [128, 128])
            s = through(ring_s if ring else None, slot,
                        ptoc.matmul(qi, k[g, keys, :], out_dtype=F32, b_trans=True))
            ptoc.set_vec_tile_shapes(8192 // bk, bk)
            if diagonal:
                s = s + mask[qb % per_k]
            mx = ptoc.amax(s, dim=-1, keepdim=True)
            m_new = mx if first else ptoc.maximum(m, mx)
            p = ptoc.exp(s - m_new)
            alpha = None if first else ptoc.exp(m - m_new)
            p16 = through(ring_p if ring else None, slot, ptoc.cast(p, F16))
            if cube_sums:
                ptoc.set_cube_tile_shapes([128, 128], [64, 256], [16, 16])
                sums = ptoc.matmul(p16, ones, out_dtype=F32)[:, 0:1]
            else:
                sums = ptoc.sum(p, dim=-1, keepdim=True)
            ptoc.set_cube_tile_shapes([128, 128], [64, 256], [128, 128])
            pv = through(ring_pv if ring else None, slot,
                         ptoc.matmul(p16, v[g, keys, :], out_dtype=F32))
            ptoc.set_vec_tile_shapes(8192 // d, d)
            if first:  # a view (sums) or a ring slot (pv) becomes a value of its own
                return m_new, sums + 0.0 if cube_sums else sums, pv + 0.0 if ring else pv
            return m_new, l * alpha + sums, acc * alpha + pv

        def write(g, qb, l, acc):
            ptoc.set_vec_tile_shapes(8192 // d, d)
            out = ptoc.cast(acc / l, F16)
            for i in range(group):
                o[g * group + i, qb * bq:(qb + 1) * bq, :] = out[i * bq:(i + 1) * bq, :]

        if order == "q":
            for g in ptoc.loop(hkv, name="kv_head"):
                for qb in ptoc.loop(nq, name="q_block"):
                    qi = load_q(g, qb)
                    m = ptoc.full([rows, 1], -math.inf, F32)
                    l = ptoc.full([rows, 1], 0.0, F32)
                    acc = ptoc.full([rows, d], 0.0, F32)
                    for kb in ptoc.loop(0, qb // per_k + 1, name="k_block"):
                        last = ptoc.is_loop_end(kb)
                        first = cube_sums and ptoc.is_loop_begin(kb)
                        m_new, l_new, acc_new = step(qi, g, qb, kb, last, first, m, l, acc)
                        if last:
                            write(g, qb, l_new, acc_new)
                        else:
                            m[:] = m_new
                            l[:] = l_new
                            acc[:] = acc_new
        else:
            ptoc.set_vec_tile_shapes(1, 1, 8192 // d, d)
            m_all = ptoc.full([hkv, nq, rows, 1], -math.inf, F32)
            l_all = ptoc.full([hkv, nq, rows, 1], 0.0, F32)
            acc_all = ptoc.full([hkv, nq, rows, d], 0.0, F32)
            for kb in ptoc.loop(seq // bk, name="k_block"):
                for g in ptoc.loop(hkv, name="kv_head"):
                    for diagonal, lo, hi in ((True, kb * per_k, (kb + 1) * per_k),
                                             (False, (kb + 1) * per_k, nq)):
                        for qb in ptoc.loop(lo, hi, name="q_diag" if diagonal else "q_block"):
                            first = cube_sums and ptoc.is_loop_begin(kb)
                            m_new, l_new, acc_new = step(load_q(g, qb), g, qb, kb, diagonal,
                                                         first, m_all[g, qb], l_all[g, qb],
                                                         acc_all[g, qb])
                            if diagonal:
                                write(g, qb, l_new, acc_new)
                            else:
                                m_all[g, qb] = m_new
                                l_all[g, qb] = l_new
                                acc_all[g, qb] = acc_new

    return prefill


SUITE_RUNTIME = attention.PREFILL_RUNTIME_OPTIONS
DEFAULT_RUNTIME = {"device_sched_mode": 0, "stitch_function_max_num": 128}
# name: (block_q, block_k, pass options, runtime options, structure, device)
VARIANTS = {
    "port": (128, 128, {}, DEFAULT_RUNTIME, {}, "a2"),
    "blocks": (512, 512, {}, DEFAULT_RUNTIME, {}, "a2"),
    "merged": (512, 512, merges(16), DEFAULT_RUNTIME, {}, "a2"),
    "suite": (256, 512, attention.PREFILL_PASS_OPTIONS, SUITE_RUNTIME, None, "a2"),
    "stitch128": (256, 512, attention.PREFILL_PASS_OPTIONS,
                  {**SUITE_RUNTIME, "stitch_function_max_num": 128}, None, "a2"),
    "cubesums": (256, 512, attention.PREFILL_PASS_OPTIONS, SUITE_RUNTIME,
                 {"cube_sums": True}, "a2"),
    "kv-outer": (512, 512, merges(16), {"device_sched_mode": 1, "stitch_function_max_num": 128},
                 {"order": "kv", "cube_sums": True}, "a2"),
    "ring": (256, 512, attention.PREFILL_PASS_OPTIONS, SUITE_RUNTIME, {"ring": 8}, "a2"),
    "no-control": (256, 512, attention.PREFILL_PASS_OPTIONS, SUITE_RUNTIME,
                   {"cube_sums": True}, "no-control"),
    "big-L2": (256, 512, attention.PREFILL_PASS_OPTIONS, SUITE_RUNTIME,
               {"cube_sums": True}, "big-l2"),
    "both": (256, 512, attention.PREFILL_PASS_OPTIONS, SUITE_RUNTIME,
             {"cube_sums": True}, "both"),
}
# Diagnostic devices: a2 with one limit lifted (docs/device-model.md, custom devices).
NO_CONTROL = {"scheduler": {"control_iteration_cycles": 0, "control_task_cycles": 0,
                            "control_stitch_cycles": 0}}
BIG_L2 = {"memory": {"l2_bytes": 64 << 30}}


def device_file(name, folder):
    spec = {"no-control": NO_CONTROL, "big-l2": BIG_L2, "both": {**NO_CONTROL, **BIG_L2}}[name]
    path = os.path.join(folder, f"{name}.json")
    with open(path, "w") as f:
        json.dump({"name": f"a2-{name}", **spec}, f)
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", help=f"variants (default: all): {', '.join(VARIANTS)}")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    inputs = {}
    with tempfile.TemporaryDirectory() as folder:
        for name in args.names or VARIANTS:
            bq, bk, passes, runtime, structure, device = VARIANTS[name]
            dims = {**FULL, "block_q": bq, "block_k": bk}
            if (bq, bk) not in inputs:
                inputs[bq, bk] = attention.prefill_inputs(dims, rng)
            device = device if device == "a2" else device_file(device, folder)
            runtime = {**runtime, "run_numerics": False}
            if structure is None:  # the suite's operator itself
                kernel = attention.make_prefill(dims, device, runtime,
                                                attention.PREFILL_PASS_OPTIONS)
            else:
                kernel = make(dims, device, runtime, passes, **structure)
            start = time.perf_counter()
            kernel(*inputs[bq, bk])
            seconds = time.perf_counter() - start
            r = kernel.last_run
            control = re.search(r"control thread busy ([0-9.]+) us", r.summary)
            hbm = re.search(r"HBM read ([0-9.]+ \w+), HBM write ([0-9.]+ \w+)", r.summary)
            print(f"{name:10s} {r.simulated_us:9.1f} us = {r.simulated_us / r.bound_us:6.2f}x "
                  f"the bound ({r.bound_us:.1f} us); {r.tasks:6d} tasks, control thread "
                  f"{float(control.group(1)) if control else 0:7.1f} us, HBM read "
                  f"{hbm.group(1)}, write {hbm.group(2)} ({seconds:.1f} s)", flush=True)


if __name__ == "__main__":
    main()
