#!/usr/bin/env python3
"""Running out of host memory is an error, never a crash (docs/reliability.md, "Host
memory"; issue 14).

Runs `ptoc run`, `ptoc-opt` and Python's `@ptoc.jit` under address-space limits
(RLIMIT_AS, set in the child before it starts) on inputs that need more memory than
the limit allows, and requires every time: exit status 1 (Python: a
`ptoc.ResourceError`) with a message that names host memory and the fix, and nothing
else on stderr. Before the fix `ptoc run` on big-exp.pto segfaulted at 9 of 12
limits between 560 and 860 MB (a DenseMap unwound by std::bad_alloc) and `ptoc-opt`
aborted with an uncaught std::bad_alloc.

Four ways to run out:
- big-exp.pto, 786,432 tile ops (about 843 MB to compile and simulate), under an
  address-space limit: the compile stops at the op whose tiles the memory cannot
  hold (the check before compiling), in the tools and in Python.
- the same tensor with big tiles, run with numerics: `ptoc run` checks its 512 MiB
  input before making it, and the run its 512 MiB result before starting.
- a .pto file of WIDE_OPS ops, written here, too big to parse under the limit: the
  tools' new-handler ends them with "ran out of host memory while ..." (nothing
  checks a parse ahead of time).
- big-exp's compile in Python with a malloc that fails past a cap (failmalloc.c,
  preloaded): the checks do not see it coming, so std::bad_alloc unwinds through
  the compile, which must leave everything it destroys whole and raise
  ptoc.ResourceError (the IR context's uniquing map crashed the interpreter at
  caps of 140 and 150 MB before it grew through support::reserveOneMore).

Usage: out_of_memory.py --ptoc build/tools/ptoc --ptoc-opt build/tools/ptoc-opt
                        --python-path build/python --failmalloc LIB --work-dir DIR
"""
import argparse
import os
import re
import resource
import subprocess
import sys
import textwrap
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BIG = os.path.join(HERE, "Inputs", "big-exp.pto")
MIB = 1 << 20
# Limits (MiB of address space) for big-exp.pto, from where the compile barely starts
# to just below what it needs (~873 MiB): the audit's crashes were between 534 and
# 820 MiB.
BIG_LIMITS_MIB = [160, 400, 534, 600, 680, 760, 820]
# Ops of the file too big to parse, and the limits for it (it needs several times
# more than the largest).
WIDE_OPS = 400_000
WIDE_LIMITS_MIB = [48, 64, 96]
# Heap caps (MiB) for the failing malloc: the compile needs about 790.
FAILMALLOC_CAPS_MIB = [140, 150, 250, 400, 600]
TIMEOUT_S = 600

PRECHECK = re.compile(r"tile ops the host's memory holds \(about \d+ bytes each; this compile "
                      r"could allocate [\d.]+ [KMG]iB more, limited by .*\): raise the memory "
                      r"limit, or use bigger tiles")
HANDLER = re.compile(r"ran out of host memory while .+: raise the "
                     r"memory limit or use bigger tiles / lower max_tile_ops")

# What a crash or an abort leaves on stderr.
CRASH = re.compile(r"Segmentation|Aborted|terminate called|bad_alloc|LLVM ERROR|Stack dump|"
                   r"internal error")

failures = []


def check(ok, what):
    print(("ok:   " if ok else "FAIL: ") + what, flush=True)
    if not ok:
        failures.append(what)


def limited(mib):
    def set_limit():
        resource.setrlimit(resource.RLIMIT_AS, (mib * MIB, mib * MIB))
    return set_limit


def run_limited(cmd, mib, env=None):
    start = time.monotonic()
    p = subprocess.run(cmd, preexec_fn=limited(mib), capture_output=True, text=True,
                       timeout=TIMEOUT_S, env=env)
    return p, time.monotonic() - start


def expect_error(name, cmd, mib, pattern):
    p, seconds = run_limited(cmd, mib)
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    # One error (ptoc-opt adds the source line and a caret under it), nothing else.
    ok = (p.returncode == 1 and 1 <= len(lines) <= 3 and pattern.search(lines[0]) is not None
          and not any(CRASH.search(l) for l in lines))
    check(ok, f"{name} under {mib} MiB: exit {p.returncode} in {seconds:.1f} s"
              + ("" if ok else f"\n  stderr: {p.stderr.strip()[-2000:]}"))


def write_wide(path):
    """A function of WIDE_OPS element-wise ops, one after another: tens of MB of text
    whose IR takes several times that to parse."""
    with open(path, "w") as f:
        f.write("func @wide(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {\n")
        f.write("  %v0 = exp %x {vec_tile = [8, 64]} : tensor<8x64xf32>\n")
        for i in range(1, WIDE_OPS):
            f.write(f"  %v{i} = exp %v{i - 1} {{vec_tile = [8, 64]}} : tensor<8x64xf32>\n")
        f.write(f"  return %v{WIDE_OPS - 1}\n}}\n")


PYTHON_CHILD = textwrap.dedent("""
    import sys
    import numpy as np
    import ptoc

    @ptoc.jit(runtime_options={"run_numerics": False}, host_options={"use_tune_bank": False})
    def big(x):
        ptoc.set_vec_tile_shapes(8, 64)
        return ptoc.exp(x)

    # A view of one float as the whole tensor: the compile needs its shape, not data.
    x = np.lib.stride_tricks.as_strided(np.zeros(1, np.float32), (8192, 16384), (0, 0))
    try:
        big.compile(x)
    except ptoc.ResourceError as e:
        print("ResourceError:", e)
        sys.exit(3)
    print("compiled")
""")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ptoc", required=True)
    parser.add_argument("--ptoc-opt", required=True)
    parser.add_argument("--python-path", required=True)
    parser.add_argument("--failmalloc", required=True)
    parser.add_argument("--work-dir", required=True)
    args = parser.parse_args()
    os.makedirs(args.work_dir, exist_ok=True)

    # The check before compiling: the compile stops at the op, rc 1, one message.
    for mib in BIG_LIMITS_MIB:
        expect_error("ptoc run big-exp.pto --no-numerics",
                     [args.ptoc, "run", BIG, "--no-numerics"], mib, PRECHECK)
        expect_error("ptoc-opt big-exp.pto --pipeline=default",
                     [args.ptoc_opt, BIG, "--pipeline=default", "-o", os.devnull], mib,
                     PRECHECK)

    # Tensors too big for the limit, few tile ops: `ptoc run` checks its inputs
    # (512 MiB here) before it makes them.
    wide_tiles = os.path.join(args.work_dir, "big-data.pto")
    with open(BIG) as f:
        text = f.read().replace("vec_tile = [8, 64]", "vec_tile = [4, 2048]")
    with open(wide_tiles, "w") as f:
        f.write(text)
    inputs = re.compile(r"the arguments of 'big' take 512.0 MiB of host memory, and this process "
                        r"may allocate [\d.]+ [KMG]iB more, limited by .*: raise the memory "
                        r"limit, or use --no-numerics")
    for mib in [200, 400]:
        expect_error("ptoc run big-data.pto", [args.ptoc, "run", wide_tiles], mib, inputs)
    # With room for the inputs but not for the result: the run checks its tensors
    # before it starts (Session::run, as in Python).
    tensors = re.compile(r"running 'big' with numerics needs 512.0 MiB of host memory for its "
                         r"intermediate and result tensors, and this process may allocate "
                         r"[\d.]+ [KMG]iB more, limited by .*: raise the memory limit")
    expect_error("ptoc run big-data.pto", [args.ptoc, "run", wide_tiles], 950, tensors)

    # The tools' new-handler: a file too big to parse under the limit.
    wide = os.path.join(args.work_dir, "wide.pto")
    write_wide(wide)
    for mib in WIDE_LIMITS_MIB:
        expect_error("ptoc run wide.pto --no-numerics",
                     [args.ptoc, "run", wide, "--no-numerics"], mib, HANDLER)
        expect_error("ptoc-opt wide.pto", [args.ptoc_opt, wide, "-o", os.devnull], mib,
                     HANDLER)

    # Python: the same compile raises ptoc.ResourceError (a MemoryError), no crash.
    env = dict(os.environ, PYTHONPATH=args.python_path, OPENBLAS_NUM_THREADS="1",
               OMP_NUM_THREADS="1")
    for mib in BIG_LIMITS_MIB[2:]:
        p, seconds = run_limited([sys.executable, "-c", PYTHON_CHILD], mib, env)
        ok = p.returncode == 3 and PRECHECK.search(p.stdout) is not None
        check(ok, f"python big.compile under {mib} MiB: exit {p.returncode} in {seconds:.1f} s"
                  + ("" if ok else f"\n  stdout: {p.stdout.strip()[-1000:]}"
                                   f"\n  stderr: {p.stderr.strip()[-2000:]}"))

    # Python, allocations failing where no check foresaw them: ptoc.ResourceError.
    for mib in FAILMALLOC_CAPS_MIB:
        capped = dict(env, LD_PRELOAD=args.failmalloc, PTOC_FAILMALLOC_MB=str(mib))
        start = time.monotonic()
        p = subprocess.run([sys.executable, "-c", PYTHON_CHILD], capture_output=True, text=True,
                           timeout=TIMEOUT_S, env=capped)
        seconds = time.monotonic() - start
        ok = (p.returncode == 3 and "ran out of host memory" in p.stdout
              and not CRASH.search(p.stderr))
        check(ok, f"python big.compile, malloc failing past {mib} MiB: exit {p.returncode} in "
                  f"{seconds:.1f} s"
                  + ("" if ok else f"\n  stdout: {p.stdout.strip()[-1000:]}"
                                   f"\n  stderr: {p.stderr.strip()[-2000:]}"))

    if failures:
        print(f"{len(failures)} failed")
        return 1
    print("all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
