#!/usr/bin/env bash
# --threads 0 (launch/cpu_share.h): one rank takes every CPU it may run on; two ranks on
# the same CPUs (not bound) take half each, at least one; OMP_NUM_THREADS, when set,
# wins. Read off the training log's device line ("cpu, N threads per rank").
# usage: threads_share.sh LLMFT TOKEN_FILE MPIEXEC [MPIEXEC_FLAGS...]
set -uo pipefail
llmft=$1 data=$2
shift 2
mpiexec=("$@")
failed=0
# expect RANKS THREADS [MPIEXEC_OPTIONS...]
expect() {
  local ranks=$1 threads=$2 line
  shift 2
  line=$("${mpiexec[@]}" -n "$ranks" --bind-to none "$@" "$llmft" --data "$data" --seq-len 16 \
    --micro-batch 1 --steps 1 2>&1 | grep -o 'cpu, [0-9]* threads per rank')
  if [[ $line == "cpu, $threads threads per rank" ]]; then
    echo "$ranks rank(s) $*: $line"
  else
    echo "FAILED: $ranks rank(s) $*: '$line', expected $threads threads per rank"
    failed=1
  fi
}
all=$(nproc)
half=$((all / 2 > 0 ? all / 2 : 1))
expect 1 "$all"
expect 2 "$half"
expect 2 3 -x OMP_NUM_THREADS=3  # more than the share, and than 2 cores
exit $failed
