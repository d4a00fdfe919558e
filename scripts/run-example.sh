#!/usr/bin/env bash
# The README's first command: install, build, and run the main job.
# Compiles examples/softmax.pto with the default pipeline, runs it with `ptoc run`
# (simulated on the a2 model, executed for real, checked against a whole-tensor
# reference) and prints the summary and the path of the swimlane it wrote.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/build.sh"
echo "== ptoc run examples/softmax.pto --debug-mode 1 --check"
"$root/build/tools/ptoc" run "$root/examples/softmax.pto" --debug-mode 1 --check \
  --output-dir "${PTOC_OUTPUT_DIR:-$root/output}"
