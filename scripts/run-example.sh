#!/usr/bin/env bash
# The README's first command: install, build, and run the main job.
# Runs examples/attention.py: single-head attention (QK^T scaled -> softmax -> PV)
# written with @ptoc.jit, compiled for the a2 device model, simulated, executed for
# real on the CPU and checked against numpy; it prints the run summary and the path
# of the swimlane it wrote (runtime_debug_mode=1).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/build.sh"
export PYTHONPATH="$root/build/python${PYTHONPATH:+:$PYTHONPATH}"
export PTOC_OUTPUT_DIR="${PTOC_OUTPUT_DIR:-$root/output}"
echo "== python3 examples/attention.py --debug-mode 1"
# Debian's python3: the one with numpy that the module is built for.
/usr/bin/python3 "$root/examples/attention.py" --debug-mode 1
