#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, clang, ASan + UBSan) into ./build-fuzz,
# generates their seeds and dictionaries from the project's own inputs, and runs each
# target for SECONDS (default 10: a smoke run), one after another. Fails if any
# target finds a crash, a sanitizer report, a hang (an input over 10 s), a leak, an
# out-of-memory (over 2 GB) or a broken ptoc promise (fuzz/FuzzCheck.h).
#
#   bash scripts/fuzz.sh                 # every target, 10 s each
#   bash scripts/fuzz.sh 600             # every target, 10 min each
#   bash scripts/fuzz.sh 3600 pto space  # some targets (pto device trace bank space report)
#
# Inputs may grow to 256 KiB (-max_len): the deep seeds (40,000 levels: 80 KB as
# arrays, 240 KB as objects) must fit.
#
# A run is random (libFuzzer picks a seed) and stops after SECONDS, so two runs see
# different inputs. CI wants the same inputs every time: PTOC_FUZZ_RUNS=N makes each
# target execute exactly N inputs (SECONDS is then only a cap) and PTOC_FUZZ_SEED=S
# fixes libFuzzer's seed; on a fresh build (empty corpus) such a run is reproducible.
#
# Where things are (W = build-fuzz/fuzz-work):
#   W/<target>/seeds     seeds, regenerated every run (fuzz/make_seeds.py)
#   fuzz/regressions/<target>/  small inputs of past findings, also read as seeds: a
#                        fixed finding stays fixed, an open one fails every run
#   W/<target>.dict      the dictionary
#   W/<target>/corpus    inputs the fuzzer found interesting; kept between runs, so a
#                        later run starts where the last one stopped
#   W/artifacts/<target>/crash-<sha1> (also leak-, timeout-, oom-): the input of a
#                        finding; W/logs/<target>.log the run's output with the stack
#
# Reproduce a finding: run the target on the file (it runs that one input):
#   build-fuzz/fuzz/fuzz-pto build-fuzz/fuzz-work/artifacts/pto/crash-...
# and shrink it with -minimize_crash=1 -runs=100000 -exact_artifact_path=min.pto. The
# same input through the tools: pto `ptoc-opt FILE --canonicalize --cse --dce
# --verify-roundtrip`; device `ptoc run examples/softmax.pto --device FILE`; trace
# `ptoc prof FILE` (named *.json); bank: copy it into a folder DIR under the name of
# a2's file in a bank (a2-ee9a0337322ab7cb.jsonl as of this writing; the target uses
# a2's contentHash, and `ptoc tune examples/softmax.pto --budget 2 --bank DIR` makes
# the file under its current name) and run `ptoc tune show --bank DIR`; space `ptoc tune
# examples/softmax.pto --space FILE`; report `ptoc prof compare FILE FILE`.
#
# Longer or parallel runs: call a target directly with libFuzzer's flags, e.g.
#   build-fuzz/fuzz/fuzz-pto W/pto/corpus W/pto/seeds -dict=W/pto.dict \
#     -max_total_time=36000 -max_len=262144 -timeout=10 -rss_limit_mb=2048 \
#     -artifact_prefix=W/artifacts/pto/
# with -jobs=N -workers=N for N processes (each writes fuzz-<i>.log), or -fork=N to
# keep going past findings (add -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1),
# and -merge=1 NEW_DIR W/pto/corpus to shrink a grown corpus. Use at most as many
# processes as free cores. docs/reliability.md has what has been run and found.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seconds="${1:-10}"
if [ $# -gt 0 ]; then shift; fi
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then targets=(pto device trace bank space report); fi
build="${PTOC_FUZZ_BUILD_DIR:-$root/build-fuzz}"
work="$build/fuzz-work"

bash "$root/scripts/install-deps.sh"
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 -DPTOC_FUZZ=ON \
  "${launcher[@]}" >/dev/null
ninja -C "$build" -j"$(nproc)" fuzzers
/usr/bin/python3 "$root/fuzz/make_seeds.py" --source-dir "$root" --ptoc "$build/tools/ptoc" \
  --out "$work"

export ASAN_SYMBOLIZER_PATH=/usr/lib/llvm-14/bin/llvm-symbolizer
export UBSAN_OPTIONS="print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
# The bank target writes its input to a scratch file per execution: memory, not disk.
if [ -d /dev/shm ] && [ -w /dev/shm ]; then export TMPDIR=/dev/shm; fi

failed=()
for t in "${targets[@]}"; do
  mkdir -p "$work/$t/corpus" "$work/artifacts/$t" "$work/logs"
  log="$work/logs/$t.log"
  # Past findings' inputs (fuzz/regressions/<target>) are seeds too.
  regressions=()
  if [ -d "$root/fuzz/regressions/$t" ]; then regressions=("$root/fuzz/regressions/$t"); fi
  fixed=()
  if [ -n "${PTOC_FUZZ_RUNS:-}" ]; then fixed+=(-runs="$PTOC_FUZZ_RUNS"); fi
  if [ -n "${PTOC_FUZZ_SEED:-}" ]; then fixed+=(-seed="$PTOC_FUZZ_SEED"); fi
  rc=0
  "$build/fuzz/fuzz-$t" "$work/$t/corpus" "$work/$t/seeds" "${regressions[@]}" \
    -dict="$work/$t.dict" \
    -max_total_time="$seconds" -max_len=262144 -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 "${fixed[@]}" \
    -artifact_prefix="$work/artifacts/$t/" >"$log" 2>&1 || rc=$?
  runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")"
  corpus="$(ls "$work/$t/corpus" | wc -l)"
  if [ "$rc" -eq 0 ]; then
    echo "fuzz-$t: ${runs:-?} runs (at most ${seconds} s), corpus $corpus inputs: no finding"
  else
    echo "fuzz-$t: FINDING (exit $rc) after ${runs:-?} runs; input in $work/artifacts/$t/," \
         "log $log:"
    grep -E "ERROR|runtime error|ptoc fuzz finding|SUMMARY" "$log" | head -5 | sed 's/^/  /'
    failed+=("$t")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: findings in ${failed[*]} (reproduce: $build/fuzz/fuzz-<target> <input>)"
  exit 1
fi
