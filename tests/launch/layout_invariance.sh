#!/usr/bin/env bash
# The layout does not change what a run trains on: for one seed and one global batch of 4
# windows, the llmft binary's loss curves under ten layouts (1 rank: micro-batch 4;
# 2 x 2 accumulated; 1 x 4 accumulated; 2 ranks: micro-batch 2; 1 x 2 accumulated;
# tensor-parallel 2 x micro-batch 4, with and without sequence parallelism; ZeRO-1 x 1 x 2
# accumulated; 4 ranks: ZeRO-3 x micro-batch 1; dp 2 x tp 2 with ZeRO-2) agree within
# tests/support/parity.h's fp32 tolerance, for AdamW on plain text (one stream) and on
# prompt/response rows (samples packed into windows, each attending to itself only, with
# masked prompts: windows hold different numbers of targets, and the loss is the mean over
# the global batch's targets in every layout; tests/parallel/packed_samples_test.cpp
# checks a packed window against its samples run alone), and for LOMO in the layouts it
# allows (it cannot accumulate).
# Every run's worst-rank allocator peak equals the memory model's prediction (a dry run of
# the same allocations: exact), and its measured device peak is within 2% of the
# predicted one (on a GPU, cudaMemGetInfo's figure beside the allocator's; on CPU ranks
# the two are the allocator's). Prints the curves side by side.
# With LLMFT_TEST_DEVICE=cuda every run is on the GPU, the ranks sharing it
# (--share-devices: MPI through host copies); where the machine has no GPU (no driver, no
# device, a build without CUDA) the script exits 77 (skipped).
# usage: layout_invariance.sh LLMFT SOURCE_DIR WORK_DIR MPIEXEC [MPIEXEC_FLAGS...]
set -euo pipefail
llmft=$1 source_dir=$2 work=$3
shift 3
mpiexec=("$@")
steps=8
# kFp32Parity in tests/support/parity.h, which says why it has this size.
tolerance=1e-5

rm -rf "$work"
mkdir -p "$work"
"$llmft" prepare --input "$source_dir/examples/data/val.txt" --output "$work/text.tok" > /dev/null
"$llmft" prepare --input "$source_dir/examples/data/instruct.jsonl" --output "$work/sft.tok" \
  > /dev/null
# shellcheck source=tests/launch/test_device.sh
source "$source_dir/tests/launch/test_device.sh" "$llmft" "$work/text.tok" "$work"

# name | ranks | layout options
layouts=(
  "1r-mb4|1|--micro-batch 4"
  "1r-mb2x2|1|--micro-batch 2 --grad-accum 2"
  "1r-mb1x4|1|--micro-batch 1 --grad-accum 4"
  "2r-mb2|2|--micro-batch 2"
  "2r-mb1x2|2|--micro-batch 1 --grad-accum 2"
  "2r-tp2-mb4|2|--tp 2 --sequence-parallel off --micro-batch 4"
  "2r-tp2-sp-mb4|2|--tp 2 --sequence-parallel on --micro-batch 4"
  "4r-zero3-mb1|4|--zero 3 --micro-batch 1"
  "2r-zero1-mb1x2|2|--zero 1 --micro-batch 1 --grad-accum 2"
  "4r-dp2-tp2-zero2-mb2|4|--tp 2 --zero 2 --micro-batch 2"
)

# check_memory DIR NAME: the run's last step's peaks against the predictions.
check_memory() {
  local metrics=$1/$2.jsonl
  local line
  line=$(tail -n 1 "$metrics")
  field() { echo "$line" | sed -E "s/.*\"$1\":([0-9]+).*/\1/"; }
  local allocator predicted device predicted_device
  allocator=$(field worst_rank_peak_memory_bytes)
  predicted=$(field predicted_peak_memory_bytes)
  device=$(field worst_rank_device_peak_bytes)
  predicted_device=$(field predicted_device_peak_bytes)
  if [[ $allocator != "$predicted" ]]; then
    echo "FAILED: $2: worst-rank allocator peak $allocator bytes, predicted $predicted"
    failed=1
  elif awk -v m="$device" -v p="$predicted_device" \
    'BEGIN { d = m - p; if (d < 0) d = -d; exit !(d > 0.02 * p) }'; then
    echo "FAILED: $2: worst-rank device peak $device bytes, predicted $predicted_device (over 2%)"
    failed=1
  fi
}

# run_curves LABEL DATA OPTIMIZER LR: trains every layout the optimizer allows, writes
# one loss per line to WORK/LABEL/LAYOUT.loss, and compares each curve with the first.
failed=0
run_curves() {
  local label=$1 data=$2 optimizer=$3 lr=$4
  local dir="$work/$label" names=()
  mkdir -p "$dir"
  for entry in "${layouts[@]}"; do
    IFS='|' read -r name ranks options <<< "$entry"
    if [[ $optimizer == lomo && $options == *grad-accum* ]]; then continue; fi
    # shellcheck disable=SC2086  # options are words
    "${mpiexec[@]}" -n "$ranks" "$llmft" "${device[@]}" --model llama-tiny --data "$data" --seq-len 32 \
      --optimizer "$optimizer" --lr "$lr" --warmup 2 --steps "$steps" --clip-grad 1 --seed 7 \
      --threads 1 --log-every 100 --metrics "$dir/$name.jsonl" $options > "$dir/$name.log" 2>&1 ||
      { echo "FAILED: $label $name exited non-zero:"; cat "$dir/$name.log"; exit 1; }
    sed -nE 's/.*"loss":([^,]*),.*/\1/p' "$dir/$name.jsonl" > "$dir/$name.loss"
    check_memory "$dir" "$name"
    names+=("$name")
  done
  echo "$label: loss per step"
  (cd "$dir" && printf 'step' && printf '  %14s' "${names[@]}" && echo &&
   paste "${names[@]/%/.loss}" | awk '{ printf "%4d", NR; for (i = 1; i <= NF; ++i) printf "  %14.8f", $i; print "" }')
  for name in "${names[@]:1}"; do
    local gap
    gap=$(paste "$dir/${names[0]}.loss" "$dir/$name.loss" | awk '
      { d = $2 - $1; if (d < 0) d = -d; r = d / $1; if (r > worst) worst = r }
      END { printf "%.3g", worst + 0 }')
    local lines
    lines=$(wc -l < "$dir/$name.loss")
    if [[ $lines -ne $steps ]] || awk -v g="$gap" -v t="$tolerance" 'BEGIN { exit !(g >= t) }'; then
      echo "FAILED: $label $name differs from ${names[0]} by $gap relative ($lines steps)"
      failed=1
    else
      echo "$label $name vs ${names[0]}: worst relative loss gap $gap"
    fi
  done
}

run_curves adamw-text "$work/text.tok" adamw 3e-3
run_curves adamw-prompt-response "$work/sft.tok" adamw 3e-3
run_curves lomo-text "$work/text.tok" lomo 0.1
exit $failed
