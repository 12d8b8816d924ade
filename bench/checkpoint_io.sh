#!/usr/bin/env bash
# Checkpoint write and read time for the gpt2-xl shape on 1 and 2 ranks, each beside plain
# sequential I/O of the same bytes in the same run (bench/checkpoint_io.cpp).
# usage: bench/checkpoint_io.sh [BUILD_DIR] [extra bench_checkpoint_io arguments...]
set -euo pipefail
build=${1:-build}
shift || true
flags=(--oversubscribe)
if [[ $(id -u) -eq 0 ]]; then flags+=(--allow-run-as-root); fi
for ranks in 1 2; do
  mpiexec -n "$ranks" "${flags[@]}" "$build/bench/bench_checkpoint_io" --dir "$build/checkpoint_bench" "$@"
done
