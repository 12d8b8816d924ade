#!/usr/bin/env bash
# Benchmark of one training step (gpt2 124M, micro-batch 4 x seq 64, AdamW, fp32) against
# OpenBLAS sgemm and PyTorch on this machine. Builds first if needed.
# OpenBLAS's kernel choice: an inherited OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE can force
# a slow kernel, and Debian's OpenBLAS 0.3.21 does not recognise recent Xeons (it falls
# back to the generic Prescott kernel). For its own processes only, the benchmark drops
# both variables and names the kernel family the CPU flags support. Tests and CI never
# touch these variables.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${LLMFT_BUILD_DIR:-$root/build}
venv=${LLMFT_VENV:-$HOME/.cache/llmft/venv}
cmake --build "$build" --target bench_train_step -j2 > /dev/null
peer=()
if [[ -x $venv/bin/python ]]; then
  peer=(--python "$venv/bin/python" --peer-script "$root/bench/torch_train_step.py")
fi
kernel=()
if grep -qw avx512f /proc/cpuinfo; then
  kernel=(OPENBLAS_CORETYPE=SkylakeX)
elif grep -qw avx2 /proc/cpuinfo; then
  kernel=(OPENBLAS_CORETYPE=Haswell)
fi
exec env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "${kernel[@]}" \
  "$build/bench/bench_train_step" "${peer[@]}" "$@"
