#!/bin/sh
# Regenerates the performance baselines benchmarks/baselines/<example>.json from
# examples/<example>.pto on the a2 device (docs/profiling.md "Reports and regression
# gates"). Run it after a change that is meant to move an example's simulated time,
# and check the new files in with that change.
#
# Usage: scripts/update-baselines.sh [BUILD_DIR]      (default: build)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
case $build in /*) ;; *) build=$(pwd)/$build ;; esac
ptoc=$build/tools/ptoc
if [ ! -x "$ptoc" ]; then
  echo "update-baselines: no ptoc at $ptoc; build first (scripts/build.sh) or pass BUILD_DIR" >&2
  exit 2
fi
# Relative paths, so the reports do not depend on where the checkout lives; no host
# wall times, so regenerating on an unchanged tree changes nothing but the commit.
cd "$root"
for example in softmax layernorm matmul attention mlp; do
  "$ptoc" prof report "examples/$example.pto" --device a2 --label "$example" \
    --no-host-times -o "benchmarks/baselines/$example.json"
done
