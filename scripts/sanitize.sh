#!/usr/bin/env bash
# Builds ptoc with clang's AddressSanitizer and UndefinedBehaviorSanitizer into
# ./build-asan and runs the whole ctest suite there (unit, lit, pytest under ASan,
# the embed and swimlane.html tests). Any finding fails its test: UBSan is fatal
# (-fno-sanitize-recover), ASan stops at the first error, and leaks fail every
# instrumented executable (not the Python interpreter; test/CMakeLists.txt says why).
# cmake/PtocSanitize.cmake has the flags; docs/reliability.md the whole story.
#
#   bash scripts/sanitize.sh                   # install deps, configure, build, ctest
#   PTOC_SANITIZE_BUILD_DIR=/tmp/asan bash scripts/sanitize.sh
#   cd build-asan && ctest -R pytest --output-on-failure   # one test again
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${PTOC_SANITIZE_BUILD_DIR:-$root/build-asan}"
jobs="$(nproc)"

bash "$root/scripts/install-deps.sh"
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
  -DPTOC_SANITIZE=address,undefined "${launcher[@]}" >/dev/null
ninja -C "$build" -j"$jobs"

# Reports with function names and lines; a UBSan report with its stack.
export ASAN_SYMBOLIZER_PATH=/usr/lib/llvm-14/bin/llvm-symbolizer
export UBSAN_OPTIONS="print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
cd "$build"
ctest --output-on-failure -j"$jobs"
