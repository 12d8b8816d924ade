#!/usr/bin/env bash
# Resuming from a checkpoint continues the run it came from. Each case trains 10 steps
# uninterrupted, saving at step 5 (and 10), then resumes a second run from the step-5
# file for steps 6-10 and compares the two runs' losses for steps 6-10:
#  - same layout: bit for bit (every optimizer; fp32, bf16, fp16 with loss-scale changes
#    across the resume; 1 and 2 ranks), and, when h5py is given, the two step-10
#    checkpoints dataset by dataset (tests/launch/checkpoint_compare.py);
#  - another layout (2 -> 4 ranks, 4 -> 1, ZeRO-1 -> ZeRO-3, tp 2 -> dp 2, the optimizer
#    offloaded to host memory -> on the device and back,
#    dp 2 x tp 2 -> tp 4, and the fused optimizers across tensor-parallel sizes): within
#    tests/support/parity.h's fp32 tolerance, since the new layout sums in another order;
#    bf16 and fp16 within 1e-3, the bound of the bf16 data-parallel test
#    (tests/parallel/data_parallel_mpi_tests.cpp: a layout that sums 16-bit gradients
#    over other groups rounds them at 2^-8 relative, which the weights mostly absorb).
# With LLMFT_TEST_DEVICE=cuda every run is on the GPU (the ranks sharing it,
# tests/launch/test_device.sh; exit 77 where none can start) and only the same-layout
# cases run: the kernels add in a fixed order, so there too a resume repeats the
# uninterrupted run bit for bit (the layouts' parity on the GPU is
# tests/launch/layout_invariance.sh's).
# usage: checkpoint_resume.sh LLMFT SOURCE_DIR WORK_DIR PYTHON|none MPIEXEC [MPIEXEC_FLAGS...]
set -euo pipefail
llmft=$1 source_dir=$2 work=$3 python=$4
shift 4
mpiexec=("$@")
# kFp32Parity in tests/support/parity.h, which says why it has this size.
tolerance=1e-5
tolerance16=1e-3

rm -rf "$work"
mkdir -p "$work"
"$llmft" prepare --input "$source_dir/examples/data/val.txt" --output "$work/text.tok" > /dev/null
# shellcheck source=tests/launch/test_device.sh
source "$source_dir/tests/launch/test_device.sh" "$llmft" "$work/text.tok" "$work"

failed=0
# losses FILE: one loss per line, as --metrics wrote it (shortest round-trip decimal).
losses() { sed -nE 's/.*"loss":([^,]*),.*/\1/p' "$1"; }

# train NAME RANKS OPTIONS...: one run; its metrics in NAME.jsonl, its output in NAME.log.
train() {
  local name=$1 ranks=$2
  shift 2
  local lr=(--lr 3e-3)  # unless the case gives its own
  if [[ " $* " == *" --lr "* ]]; then lr=(); fi
  "${mpiexec[@]}" -n "$ranks" "$llmft" "${device[@]}" --data "$work/text.tok" --seq-len 32 --steps 10 \
    "${lr[@]}" --warmup 2 --seed 7 --threads 1 --log-every 100 --metrics "$name.jsonl" "$@" \
    > "$name.log" 2>&1 || { echo "FAILED: $name exited non-zero:"; cat "$name.log"; exit 1; }
}

# check CASE SOURCE_RANKS "SOURCE_OPTIONS" RESUME_RANKS "RESUME_OPTIONS" exact|parity|parity16
check() {
  local case=$1 source_ranks=$2 source_options=$3 resume_ranks=$4 resume_options=$5 mode=$6
  local dir="$work/$case"
  mkdir -p "$dir"
  # shellcheck disable=SC2086  # options are words
  train "$dir/uninterrupted" "$source_ranks" $source_options --checkpoint-dir "$dir/first" \
    --checkpoint-every 5
  # shellcheck disable=SC2086
  train "$dir/resumed" "$resume_ranks" $resume_options --checkpoint-dir "$dir/second" \
    --resume="$dir/first/step_00000005.h5"
  losses "$dir/uninterrupted.jsonl" | tail -n 5 > "$dir/expected.loss"
  losses "$dir/resumed.jsonl" > "$dir/resumed.loss"
  if [[ $(wc -l < "$dir/resumed.loss") -ne 5 ]]; then
    echo "FAILED: $case: the resumed run did not train steps 6-10"
    failed=1
    return
  fi
  if [[ $mode == exact ]]; then
    if cmp -s "$dir/expected.loss" "$dir/resumed.loss"; then
      echo "$case: steps 6-10 identical: $(paste -sd' ' "$dir/resumed.loss")"
    else
      echo "FAILED: $case: the resumed losses differ from the uninterrupted run's:"
      paste "$dir/expected.loss" "$dir/resumed.loss"
      failed=1
    fi
    if [[ $python != none ]]; then
      "$python" "$source_dir/tests/launch/checkpoint_compare.py" "$dir/first/step_00000010.h5" \
        "$dir/second/step_00000010.h5" || failed=1
    fi
    return
  fi
  local gap bound=$tolerance
  if [[ $mode == parity16 ]]; then bound=$tolerance16; fi
  gap=$(paste "$dir/expected.loss" "$dir/resumed.loss" | awk '
    { d = $2 - $1; if (d < 0) d = -d; r = d / $1; if (r > worst) worst = r }
    END { printf "%.3g", worst + 0 }')
  if awk -v g="$gap" -v t="$bound" 'BEGIN { exit !(g >= t) }'; then
    echo "FAILED: $case: resumed losses differ by $gap relative (tolerance $bound):"
    paste "$dir/expected.loss" "$dir/resumed.loss"
    failed=1
  else
    echo "$case: steps 6-10 within $gap relative of the uninterrupted run"
  fi
}

llama="--model llama-tiny"
# Same layout, bit for bit.
check adamw-fp32-1r 1 "$llama --optimizer adamw --micro-batch 4" 1 "$llama --optimizer adamw --micro-batch 4" exact
check sgd-fp32-1r 1 "$llama --optimizer sgd --momentum 0.9 --micro-batch 2 --grad-accum 2" \
  1 "$llama --optimizer sgd --momentum 0.9 --micro-batch 2 --grad-accum 2" exact
check lomo-fp32-1r 1 "$llama --optimizer lomo --lr 0.05 --micro-batch 4" 1 "$llama --optimizer lomo --lr 0.05 --micro-batch 4" exact
check adalomo-fp32-1r 1 "$llama --optimizer adalomo --micro-batch 4" 1 "$llama --optimizer adalomo --micro-batch 4" exact
check adamw-bf16-1r 1 "$llama --optimizer adamw --dtype bf16 --micro-batch 4" 1 "$llama --optimizer adamw --dtype bf16 --micro-batch 4" exact
check adalomo-bf16-1r 1 "$llama --optimizer adalomo --dtype bf16 --micro-batch 4" 1 "$llama --optimizer adalomo --dtype bf16 --micro-batch 4" exact
# fp16: a first scale that overflows, a short window: the scale halves, then grows,
# and the scaler's state crosses the resume.
fp16="--dtype fp16 --initial-loss-scale 4194304 --loss-scale-window 3"
check adamw-fp16-1r 1 "$llama --optimizer adamw $fp16 --micro-batch 4" 1 "$llama --optimizer adamw $fp16 --micro-batch 4" exact
check lomo-fp16-2r-zero1 2 "$llama --optimizer lomo --lr 0.05 $fp16 --zero 1 --micro-batch 2" \
  2 "$llama --optimizer lomo --lr 0.05 $fp16 --zero 1 --micro-batch 2" exact
check sgd-bf16-2r-tp2 2 "$llama --optimizer sgd --momentum 0.9 --dtype bf16 --tp 2 --micro-batch 4" \
  2 "$llama --optimizer sgd --momentum 0.9 --dtype bf16 --tp 2 --micro-batch 4" exact
check adamw-bf16-2r-zero3 2 "$llama --optimizer adamw --dtype bf16 --zero 3 --micro-batch 2" \
  2 "$llama --optimizer adamw --dtype bf16 --zero 3 --micro-batch 2" exact
# The optimizer offloaded to host memory (f32 keeps its host masters from the weights).
check adamw-fp32-offload-1r 1 "$llama --offload-optimizer --micro-batch 2 --grad-accum 2" \
  1 "$llama --offload-optimizer --micro-batch 2 --grad-accum 2" exact
check adamw-bf16-offload-2r-zero1 2 "$llama --offload-optimizer --dtype bf16 --zero 1 --micro-batch 2" \
  2 "$llama --offload-optimizer --dtype bf16 --zero 1 --micro-batch 2" exact

# On a device, the same-layout cases above are all.
if ((${#device[@]})); then exit $failed; fi
# Another layout: within the fp32 parity tolerance.
check adamw-2r-to-4r 2 "$llama --micro-batch 2" 4 "$llama --micro-batch 1" parity
check adamw-4r-zero1-to-1r 4 "$llama --zero 1 --micro-batch 1" 1 "$llama --micro-batch 4" parity
check adamw-zero1-to-zero3 2 "$llama --zero 1 --micro-batch 2" 2 "$llama --zero 3 --micro-batch 2" parity
check adamw-tp2-to-dp2 2 "$llama --tp 2 --micro-batch 4" 2 "$llama --micro-batch 2" parity
check adamw-dp2tp2-to-tp4 4 "--model gpt2-tiny --tp 2 --micro-batch 2" 4 "--model gpt2-tiny --tp 4 --micro-batch 4" parity
check sgd-4r-zero1-to-1r 4 "$llama --optimizer sgd --momentum 0.9 --zero 1 --micro-batch 1" \
  1 "$llama --optimizer sgd --momentum 0.9 --micro-batch 4" parity
check lomo-zero2-to-zero3 2 "$llama --optimizer lomo --lr 0.05 --zero 2 --micro-batch 2" \
  2 "$llama --optimizer lomo --lr 0.05 --zero 3 --micro-batch 2" parity
check adalomo-dp2tp2-to-tp4 4 "--model gpt2-tiny --optimizer adalomo --tp 2 --micro-batch 2" \
  4 "--model gpt2-tiny --optimizer adalomo --tp 4 --micro-batch 4" parity
check adalomo-tp2-to-1r 2 "$llama --optimizer adalomo --tp 2 --micro-batch 4" \
  1 "$llama --optimizer adalomo --micro-batch 4" parity
check adamw-bf16-zero1-to-1r 2 "$llama --dtype bf16 --zero 1 --micro-batch 2" \
  1 "$llama --dtype bf16 --micro-batch 4" parity16
check adalomo-bf16-tp2-to-dp2 2 "$llama --optimizer adalomo --dtype bf16 --tp 2 --micro-batch 4" \
  2 "$llama --optimizer adalomo --dtype bf16 --micro-batch 2" parity16
check adamw-fp16-2r-to-tp2 2 "$llama --optimizer adamw $fp16 --micro-batch 2" \
  2 "$llama --optimizer adamw $fp16 --tp 2 --micro-batch 4" parity16
check sgd-fp16-zero3-to-1r 2 "$llama --optimizer sgd --momentum 0.9 $fp16 --zero 3 --micro-batch 2" \
  1 "$llama --optimizer sgd --momentum 0.9 $fp16 --micro-batch 4" parity16
# On and off the host: the host sums each micro-batch's gradient where the device sums the
# micro-batches first (the same terms in another order; 16-bit: the host sums in f32).
check adamw-offload-zero1-to-device 2 "$llama --offload-optimizer --zero 1 --micro-batch 1 --grad-accum 2" \
  2 "$llama --zero 1 --micro-batch 1 --grad-accum 2" parity
check sgd-device-to-offload-zero3 2 "$llama --optimizer sgd --momentum 0.9 --zero 3 --micro-batch 2" \
  1 "$llama --optimizer sgd --momentum 0.9 --offload-optimizer --micro-batch 4" parity
check adamw-bf16-device-to-offload 2 "$llama --dtype bf16 --micro-batch 2" \
  2 "$llama --dtype bf16 --offload-optimizer --zero 2 --micro-batch 2" parity16
exit $failed
