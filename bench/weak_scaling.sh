#!/usr/bin/env bash
# Weak scaling on CPU: 1 rank x 2 threads against 2 ranks x 1 thread, the same micro-batch
# per rank (so the 2-rank run does twice the work per step), gpt2 (124M) with AdamW.
# Prints each run and the ratio of global tokens/s. OpenBLAS's kernel is chosen as in
# bench/train_step.sh, for these processes only.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${LLMFT_BUILD_DIR:-$root/build}
cmake --build "$build" --target bench_data_parallel -j2 > /dev/null
kernel=()
if grep -qw avx512f /proc/cpuinfo; then
  kernel=(-x OPENBLAS_CORETYPE=SkylakeX)
elif grep -qw avx2 /proc/cpuinfo; then
  kernel=(-x OPENBLAS_CORETYPE=Haswell)
fi
flags=(--oversubscribe)
[[ $(id -u) -ne 0 ]] || flags+=(--allow-run-as-root)
run() {
  env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE mpirun "${flags[@]}" "${kernel[@]}" -np "$1" \
    "$build/bench/bench_data_parallel" --threads "$2" "${@:3}"
}
one=$(run 1 2 "$@")
two=$(run 2 1 "$@")
echo "$one" | head -1
echo "$two" | head -1
a=$(echo "$one" | sed -n 's/^tokens_per_s=//p')
b=$(echo "$two" | sed -n 's/^tokens_per_s=//p')
awk -v a="$a" -v b="$b" 'BEGIN { printf "weak scaling: 2 ranks x 1 thread give %.2fx the tokens/s of 1 rank x 2 threads\n", b / a }'
