#!/usr/bin/env bash
# The README's first command: install, build, and run the main job.
# Runs ptoc-opt's clean-up pipeline over examples/softmax.pto, showing the IR after
# each pass that changed it and the passes' statistics.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/build.sh"
echo "== ptoc-opt examples/softmax.pto --pipeline=cleanup"
"$root/build/tools/ptoc-opt" "$root/examples/softmax.pto" --pipeline=cleanup \
  --print-ir-after-change --pass-statistics 2>&1
