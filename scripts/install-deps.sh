#!/usr/bin/env bash
# Installs every Debian package ptoc needs to build and test. Idempotent: a no-op
# when everything is present; uses sudo only when not running as root.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build git
  llvm-14-dev llvm-14-tools
  libabsl-dev libeigen3-dev catch2
  pybind11-dev python3-dev python3-numpy python3-pytest
  python3-torch  # torch CPU tensors as @ptoc.jit arguments (optional at run time; tests skip without it)
  chromium  # headless test of swimlane.html (test/html)
  # clang builds, sanitizers and fuzzers (scripts/sanitize.sh, scripts/fuzz.sh):
  # clang, its ASan/UBSan/libFuzzer runtimes, llvm-symbolizer for readable stacks
  clang-14 libclang-rt-14-dev llvm-14
  zlib1g-dev libzstd-dev libtinfo-dev libxml2-dev libedit-dev libffi-dev
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
