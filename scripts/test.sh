#!/usr/bin/env bash
# The README's second command: install, build, and run every test through ctest
# (Catch2 unit tests, lit pass tests, pytest, the embedding and swimlane.html tests).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/build.sh"
cd "$root/build"
ctest --output-on-failure -j"$(nproc)"
