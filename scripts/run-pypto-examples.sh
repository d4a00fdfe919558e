#!/usr/bin/env bash
# Runs every test_* function of a PyPTO checkout's examples/ through ptoc's PyPTO
# compatibility layer (python/ptoc/pypto), each in a fresh process with a timeout,
# and prints one line per test and a final "N passed, N failed" line.
#
#   bash scripts/run-pypto-examples.sh PYPTO_CHECKOUT [FILTER]
#
# PYPTO_CHECKOUT is a folder holding PyPTO's examples/ (DEVELOPERS.md says how to get
# one; it is never committed here). FILTER, if given, keeps the tests whose
# "file::test" id contains it. Environment: PTOC_BUILD (default ./build) is the
# build tree whose python/ folder holds the ptoc package; PYPTO_TEST_TIMEOUT (default
# 300) seconds per test; PYPTO_LOG_DIR (default a temp folder) keeps each test's output.
# Uses Debian's /usr/bin/python3 (numpy, torch from python3-torch).
set -u
if [ $# -lt 1 ] || [ ! -d "$1/examples" ]; then
  echo "usage: $0 PYPTO_CHECKOUT [FILTER]   (PYPTO_CHECKOUT must contain examples/)" >&2
  exit 2
fi
checkout=$(cd "$1" && pwd)
filter=${2:-}
root=$(cd "$(dirname "$0")/.." && pwd)
build=${PTOC_BUILD:-$root/build}
timeout_s=${PYPTO_TEST_TIMEOUT:-300}
logs=${PYPTO_LOG_DIR:-$(mktemp -d /tmp/pypto-examples.XXXXXX)}
mkdir -p "$logs"
export PYTHONPATH="$build/python${PYTHONPATH:+:$PYTHONPATH}"
py=/usr/bin/python3
if ! "$py" -c "import ptoc.pypto" 2>/dev/null; then
  echo "$0: cannot import ptoc.pypto from $build/python; build ptoc first" >&2
  exit 2
fi

passed=0
failed=0
while IFS= read -r file; do
  rel=${file#"$checkout"/}
  tests=$("$py" -m ptoc.pypto.run_example "$file") || { echo "FAIL $rel (cannot list tests)"; failed=$((failed + 1)); continue; }
  for t in $tests; do
    id="$rel::$t"
    if [ -n "$filter" ] && [[ "$id" != *"$filter"* ]]; then continue; fi
    log="$logs/$(echo "$id" | tr '/:' '__').log"
    # Each test in its own process, run from its file's folder (some read files
    # next to them).
    (cd "$(dirname "$file")" && timeout "$timeout_s" "$py" -m ptoc.pypto.run_example "$file" "$t") >"$log" 2>&1
    rc=$?
    if [ $rc -eq 0 ]; then
      passed=$((passed + 1)); echo "PASS $id"
    else
      failed=$((failed + 1))
      if [ $rc -eq 124 ]; then reason="timeout after ${timeout_s}s"
      else reason=$(grep -E '^[A-Za-z_.]*(Error|Exception)[:]|^[A-Za-z_.]*Error$' "$log" | tail -1 | cut -c1-200)
      fi
      echo "FAIL $id: ${reason:-exit $rc}"
    fi
  done
done < <(find "$checkout/examples" -name '*.py' | LC_ALL=C sort)
echo "logs: $logs"
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
