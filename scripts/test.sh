#!/usr/bin/env bash
# Installs what is missing (Debian packages and the Python environment for the Hugging
# Face oracle tests), builds, and runs every test through ctest.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv=${LLMFT_VENV:-$HOME/.cache/llmft/venv}
"$root/scripts/install_deps.sh" --python
"$root/scripts/build.sh" -DLLMFT_PYTHON="$venv/bin/python"
cd "${LLMFT_BUILD_DIR:-$root/build}"
ctest --output-on-failure -j"$(nproc)" "$@"
