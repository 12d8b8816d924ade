#!/usr/bin/env bash
# `llmft plan` on the h200 preset prices each kernel (docs/GPU_TIME_MODEL.md): the
# predicted MFU line names the per-kernel model, and the breakdown under it lists the
# matrix products and attention at their TFLOP/s and the memory-bound kernels at the HBM
# bandwidth, each with its seconds and share of the step.
# usage: plan_gpu_time_model.sh LLMFT
set -uo pipefail
llmft=$1
out=$("$llmft" plan --gpu h200 --gpus 1 --model tinyllama-1.1b --dtype bf16 --seq-len 2048 \
  --global-batch 8) || { echo "llmft plan failed" >&2; exit 1; }
echo "$out"
expect() {
  grep -Eq "$1" <<<"$out" || { echo "missing: $1" >&2; exit 1; }
}
expect "^predicted MFU [0-9]+\.[0-9]% of 989 TFLOP/s per device, from the h200 preset's per-kernel GPU time model"
expect "^where the chosen step's time goes"
expect "^  matrix products +[0-9]+\.[0-9]{4} s +[0-9]+\.[0-9]%  [0-9]+ TFLOP/s, [0-9]+% of peak$"
expect "^  attention forward +[0-9.]+ s +[0-9.]+%  [0-9]+ TFLOP/s"
expect "^  attention backward +[0-9.]+ s +[0-9.]+%  [0-9]+ TFLOP/s"
expect "^  cross-entropy +[0-9.]+ s +[0-9.]+%  bytes at 4\.32 TB/s$"
expect "^  optimizer update +[0-9.]+ s"
expect "^  kernel gaps +[0-9.]+ s"
# A preset without published kernel rates keeps its stated assumption.
"$llmft" plan --gpu a100-80g --gpus 1 --model tinyllama-1.1b --dtype bf16 --seq-len 2048 \
  --global-batch 8 | grep -q "at 50% of its peak (an assumption, not a per-kernel model)" ||
  { echo "a100-80g: the whole-step assumption is gone" >&2; exit 1; }
