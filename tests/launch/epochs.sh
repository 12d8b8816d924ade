#!/usr/bin/env bash
# --epochs: data of fewer windows than one global batch trains with a warning that names
# the windows and the batch; the steps are ceil(epochs x windows / global batch) (checked
# by hand from the warning's window count); each step line says the epoch; and a run
# resumed from its first step's checkpoint with the same --epochs ends at the same last
# step with the same loss, bit for bit (a resume in the same layout restores every bit).
# usage: epochs.sh LLMFT WORK_DIR
set -euo pipefail
llmft=$1 work=$2
rm -rf "$work"
mkdir -p "$work"
fail() { echo "FAILED: $1"; exit 1; }
# About 200 bytes: a dozen windows of 16 byte tokens.
for i in 1 2 3 4 5 6 7 8; do echo "line $i of a tiny corpus."; done > "$work/tiny.txt"
"$llmft" prepare --input "$work/tiny.txt" --output "$work/tiny.tok" > /dev/null
run=(--data "$work/tiny.tok" --seq-len 16 --micro-batch 8 --grad-accum 2 --threads 1
  --log-every 1 --epochs 3)
"$llmft" train "${run[@]}" --checkpoint-dir "$work/a" --checkpoint-every 1 --keep-checkpoints 0 \
  --metrics "$work/a.jsonl" > "$work/a.log" 2> "$work/a.err" ||
  { cat "$work/a.log" "$work/a.err"; fail "the run exited non-zero"; }
cat "$work/a.err"
windows=$(sed -nE 's/^warning: --data .* holds ([0-9]+) windows of --seq-len 16, fewer than one global batch of 16 windows: windows repeat within a step$/\1/p' "$work/a.err")
[[ -n $windows ]] || fail "no warning naming the windows and the global batch of 16"
steps=$(((3 * windows + 15) / 16))
grep -E "^step +$steps/$steps \| epoch [0-9.]+/3 \|" "$work/a.log" ||
  { cat "$work/a.log"; fail "the last step is not $steps of $steps with its epoch"; }
[[ $(grep -c "^step " "$work/a.log") -eq $steps ]] || fail "not $steps step lines"

mkdir -p "$work/b"
cp "$work/a/step_00000001.h5" "$work/b/"
"$llmft" train "${run[@]}" --checkpoint-dir "$work/b" --resume --metrics "$work/b.jsonl" \
  > "$work/b.log" 2>&1 || { cat "$work/b.log"; fail "the resumed run exited non-zero"; }
last() { tail -n 1 "$1" | sed -E 's/.*"step":([0-9]+),.*"loss":([0-9.e+-]+),.*/\1 \2/'; }
echo "first run's last step and loss: $(last "$work/a.jsonl"); resumed: $(last "$work/b.jsonl")"
[[ $(last "$work/a.jsonl") == "$(last "$work/b.jsonl")" ]] ||
  fail "the resumed run did not end at the same step with the same loss"
echo "ok"
