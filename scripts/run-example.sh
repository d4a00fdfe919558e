#!/usr/bin/env bash
# The README's first command: install, build, and run the main job.
# Runs ptoc-opt's default pipeline (clean-up, expand-tiles, partition, merges) over
# examples/softmax.pto: prints the pass statistics and the head of the subgraph
# table, and writes the partitioned IR to build/softmax.partitioned.pto.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/build.sh"
out="$root/build/softmax.partitioned.pto"
echo "== ptoc-opt examples/softmax.pto --pipeline=default --pass-statistics --timing"
"$root/build/tools/ptoc-opt" "$root/examples/softmax.pto" --pipeline=default \
  --pass-statistics --timing -o "$out" 2>&1
echo "== subgraph table (first 5 of $(grep -c 'subgraph {' "$out")), then the first tile ops"
grep -m 5 'subgraph {' "$out"
grep -v 'subgraph {' "$out" | sed -n '2,8p'
echo "== partitioned IR written to $out"
