#!/usr/bin/env bash
# Sequence parallelism through the binary: 2 ranks at tp 2 train to the same losses and
# gradient norms with and without --sequence-parallel, within tests/support/parity.h's
# fp32 bound (the norms' weight gradients are summed over the group in another order),
# and the run with it holds fewer activations, as the memory model predicts. Extra llmft options come from
# LLMFT_EXTRA_OPTIONS (scripts/gpu_check.sh runs it on the GPU: --device cuda
# --share-devices, the ranks sharing it).
# usage: sequence_parallel.sh LLMFT DATA WORK_DIR MPIEXEC [MPIEXEC_FLAGS...]
set -euo pipefail
llmft=$1 data=$2 work=$3
shift 3
mkdir -p "$work"
read -r -a extra <<<"${LLMFT_EXTRA_OPTIONS:-}"
# kFp32Parity in tests/support/parity.h, which says why it has this size.
tolerance=1e-5
# values KEY FILE: the number after "KEY": on each line of a metrics file.
values() { sed -nE "s/.*\"$1\":([0-9.e+-]+).*/\1/p" "$2"; }
# value KEY FILE: the same on its last line.
value() { tail -n 1 "$2" | values "$1" /dev/stdin; }
for sp in off on; do
  "$@" -n 2 "$llmft" --model gpt2-tiny --data "$data" --tp 2 --steps 3 --seq-len 32 \
    --micro-batch 2 --threads 1 --log-every 1 --sequence-parallel="$sp" "${extra[@]}" \
    --metrics "$work/sp_$sp.jsonl" > "$work/sp_$sp.log" 2>&1 ||
    { echo "FAILED: --sequence-parallel=$sp exited non-zero:"; cat "$work/sp_$sp.log"; exit 1; }
  # each step's loss and gradient norm
  paste <(values loss "$work/sp_$sp.jsonl") <(values grad_norm "$work/sp_$sp.jsonl") \
    > "$work/sp_$sp.steps"
done
[[ $(wc -l < "$work/sp_on.steps") -eq 3 ]] || { echo "FAILED: not 3 steps"; exit 1; }
gap=$(paste "$work/sp_off.steps" "$work/sp_on.steps" | awk '
  function rel(a, b) { d = (a - b) / b; return d < 0 ? -d : d }
  { for (i = 1; i <= 2; ++i) { r = rel($(i + 2), $i); if (r > worst) worst = r } }
  END { printf "%.3g", worst + 0 }')
echo "losses and gradient norms within $gap relative of the run without"
awk -v g="$gap" -v t="$tolerance" 'BEGIN { exit !(g < t) }' ||
  { echo "FAILED: they differ by $gap (tolerance $tolerance):";
    paste "$work/sp_off.steps" "$work/sp_on.steps"; exit 1; }
measured=$(value worst_rank_peak_memory_bytes "$work/sp_on.jsonl")
predicted=$(value predicted_peak_memory_bytes "$work/sp_on.jsonl")
off_activations=$(value activations "$work/sp_off.jsonl")
on_activations=$(value activations "$work/sp_on.jsonl")
echo "peak $measured bytes (predicted $predicted); activations $off_activations bytes without, $on_activations with"
[[ $measured == "$predicted" ]] || { echo "FAILED: the measured peak is not the predicted one"; exit 1; }
awk -v a="$on_activations" -v b="$off_activations" 'BEGIN { exit !(a < b) }' ||
  { echo "FAILED: sequence parallelism did not lower the activations"; exit 1; }
