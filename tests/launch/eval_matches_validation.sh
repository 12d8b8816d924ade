#!/usr/bin/env bash
# `llmft eval` scores a model as its training run's validation line did: a 2-rank run trains
# llama-tiny for 3 steps with --val-data, a checkpoint and an export; eval then scores the
# export (1 rank, 2 and 3 data-parallel ranks, --tp 2), the export's weights file
# (--init-from, the model implied from its directory) and the checkpoint (2 ranks, and 3
# under ZeRO-3), on the same windows.
# Tolerances: the data-parallel ranks share the windows, each micro-batch's loss sum comes
# from one rank with the same kernels, and the sums add in batch order on every rank
# (Engine::evaluate), so eval on 1, 2 or 3 data-parallel ranks (3 do not divide the 650
# micro-batches: a rank repeats the last and drops it; ZeRO-3 gathers weights in every
# forward) must give the training run's val_loss (--metrics, shortest round-trip digits)
# exactly. Under --tp 2 the head's and the blocks' sums are split over
# two ranks and added in another order, so only the validation line's printed digits are
# asserted: within half a unit of its 4th decimal of the printed loss.
# usage: eval_matches_validation.sh LLMFT SOURCE_DIR WORK_DIR MPIEXEC [MPIEXEC_FLAGS...]
set -euo pipefail
llmft=$1 source_dir=$2 work=$3
shift 3
rm -rf "$work"
mkdir -p "$work"
fail() { echo "FAILED: $1"; exit 1; }
"$llmft" prepare --input "$source_dir/examples/data/train.txt" --output "$work/train.tok" > /dev/null
"$llmft" prepare --input "$source_dir/examples/data/val.txt" --output "$work/val.tok" > /dev/null
windows=(--seq-len 32 --micro-batch 2 --threads 1)
"$@" -n 2 "$llmft" train --model llama-tiny --data "$work/train.tok" --val-data "$work/val.tok" \
  --eval-windows 1000000 --steps 3 --log-every 1 "${windows[@]}" --checkpoint-dir "$work/ck" \
  --save-dir "$work/model" --metrics "$work/metrics.jsonl" > "$work/train.log" 2>&1 ||
  { cat "$work/train.log"; fail "training exited non-zero"; }
printed=$(grep '^validation | step 3 |' "$work/train.log" | sed -E 's/.*\| loss ([0-9.]+) \|.*/\1/')
exact=$(tail -n 1 "$work/metrics.jsonl" | sed -E 's/.*"val_loss":([0-9.e+-]+).*/\1/')
[[ -n $printed && -n $exact ]] || { cat "$work/train.log"; fail "no validation after step 3"; }
echo "training: validation line $printed, val_loss $exact"

# score NAME MATCH RANKS EVAL_ARGS...: eval --json on RANKS ranks; MATCH is exact or printed.
score() {
  local name=$1 match=$2 ranks=$3
  shift 3
  local launch=()
  [[ $ranks -gt 1 ]] && launch=("${mpiexec[@]}" -n "$ranks")
  "${launch[@]}" "$llmft" eval --data "$work/val.tok" "${windows[@]}" --json "$@" \
    > "$work/$name.json" 2> "$work/$name.err" || { cat "$work/$name.err"; fail "$name exited non-zero"; }
  [[ $(wc -l < "$work/$name.json") -eq 1 ]] || { cat "$work/$name.json"; fail "$name printed more than the JSON line"; }
  local loss
  loss=$(sed -E 's/.*"loss":([0-9.e+-]+).*/\1/' "$work/$name.json")
  echo "$name: $(cat "$work/$name.json")"
  if [[ $match == exact ]]; then
    [[ $loss == "$exact" ]] || fail "$name: loss $loss, training's val_loss $exact"
  else
    awk -v a="$loss" -v b="$printed" 'BEGIN { d = a - b; exit !(d <= 5e-5 && d >= -5e-5) }' ||
      fail "$name: loss $loss is not the validation line's $printed to its printed digits"
  fi
}
mpiexec=("$@")
score export_1rank exact 1 --model "$work/model"
score export_2ranks exact 2 --model "$work/model"
score weights_file exact 1 --init-from "$work/model/model.safetensors"
score checkpoint_2ranks exact 2 --checkpoint "$work/ck"
score export_3ranks exact 3 --model "$work/model"
score checkpoint_3ranks_zero3 exact 3 --checkpoint "$work/ck" --zero 3
score export_tp2 printed 2 --model "$work/model" --tp 2

# The counts: every window of val.tok, 32 input tokens each, some of them targets.
field() { sed -E "s/.*\"$1\":([0-9.e+-]+).*/\1/" "$work/export_1rank.json"; }
[[ $(field tokens) -eq $(($(field windows) * 32)) && $(field target_tokens) -gt 0 &&
   $(field target_tokens) -le $(field tokens) ]] || fail "the token counts are wrong"
# perplexity = exp(loss), to the 1e-9 relative of a double's exp and the JSON's digits
awk -v p="$(field perplexity)" -v l="$(field loss)" \
  'BEGIN { d = p / exp(l) - 1; exit !(d < 1e-9 && d > -1e-9) }' || fail "perplexity is not exp(loss)"
echo "ok"
