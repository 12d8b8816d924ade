#!/usr/bin/env bash
# Installs what is missing (Debian packages and the Python environment for the Hugging
# Face oracle tests), builds, and runs every test through ctest. Extra arguments go to
# ctest.
# With --sanitize first: a second build, in LLMFT_SANITIZE_BUILD_DIR (default
# build-sanitize/), with AddressSanitizer and UndefinedBehaviorSanitizer (CPU only, no
# Python oracles), and every test of it; any report fails the test that made it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv=${LLMFT_VENV:-$HOME/.cache/llmft/venv}
if [[ ${1:-} == --sanitize ]]; then
  shift
  "$root/scripts/install_deps.sh"
  build=${LLMFT_SANITIZE_BUILD_DIR:-$root/build-sanitize}
  LLMFT_BUILD_DIR=$build "$root/scripts/build.sh" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DLLMFT_SANITIZE=ON -DLLMFT_CUDA=OFF -DLLMFT_PYTHON=
  # Open MPI and OpenBLAS keep allocations until exit by design: leaks are not reported.
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=1}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
  cd "$build"
  exec ctest --output-on-failure -j"$(nproc)" "$@"
fi
"$root/scripts/install_deps.sh" --python
"$root/scripts/build.sh" -DLLMFT_PYTHON="$venv/bin/python"
cd "${LLMFT_BUILD_DIR:-$root/build}"
ctest --output-on-failure -j"$(nproc)" "$@"
