#!/usr/bin/env bash
# Checkpoints that cannot be resumed are refused before training, with one line naming the
# file, the reason and the fix (tests/launch/expect_failure.sh): a truncated file, a flipped
# byte in a dataset (Fletcher32), another model, another optimizer (unless
# --resume-weights-only), a directory without a complete checkpoint. --resume skips a newer
# file that is not a whole checkpoint, naming it and why, and refuses a directory where no
# checkpoint is usable rather than start afresh over them. A checkpoint directory that cannot be made fails at
# start; a full disk (a file-size limit) fails the write cleanly, removes its partial file
# and leaves the previous checkpoint as it was. A resume on other data or another --seq-len
# is refused (its window count means nothing there) unless --resume-new-data asks for it,
# and then, like a changed --lr, --steps or batch, it is named in a note with the learning
# rates both schedules give the next step.
# usage: checkpoint_faults.sh LLMFT SOURCE_DIR WORK_DIR
set -euo pipefail
llmft=$1 source_dir=$2 work=$3
expect=$source_dir/tests/launch/expect_failure.sh

rm -rf "$work"
mkdir -p "$work"
"$llmft" prepare --input "$source_dir/examples/data/val.txt" --output "$work/text.tok" > /dev/null
run=("$llmft" --model llama-tiny --data "$work/text.tok" --seq-len 32 --micro-batch 2
     --lr 3e-3 --threads 1 --log-every 100)
"${run[@]}" --steps 4 --checkpoint-dir "$work/good" --checkpoint-every 2 > "$work/good.log"
good=$work/good/step_00000004.h5
size=$(stat -c %s "$good")
failed=0
check() { bash "$expect" "$@" || failed=1; }

echo "== truncated file"
mkdir -p "$work/truncated"
head -c $((size / 2)) "$good" > "$work/truncated/step_00000004.h5"
check "checkpoint .*truncated/step_00000004.h5" --one-line -- \
  "${run[@]}" --steps 6 --resume="$work/truncated/step_00000004.h5"

echo "== a flipped byte in the middle of the file (tensor data)"
mkdir -p "$work/flipped"
cp "$good" "$work/flipped/step_00000004.h5"
offset=$((size * 3 / 5))
byte=$(od -An -tu1 -j "$offset" -N1 "$good" | tr -d ' ')
printf "$(printf '\\%03o' $(((byte + 1) % 256)))" |
  dd of="$work/flipped/step_00000004.h5" bs=1 seek="$offset" conv=notrunc status=none
check "flipped/step_00000004.h5 could not be read at dataset .*checksum" --one-line -- \
  "${run[@]}" --steps 6 --resume="$work/flipped/step_00000004.h5"

echo "== another model"
check "holds another model: llama .* but --model gpt2-tiny is gpt2" --one-line -- \
  "${run[@]/llama-tiny/gpt2-tiny}" --steps 6 --resume="$good"

echo "== another optimizer"
check "holds the state of --optimizer adamw but this run uses --optimizer sgd.*--resume-weights-only" \
  --one-line -- "${run[@]}" --steps 6 --optimizer sgd --resume="$good"
echo "== another optimizer, weights only"
"${run[@]}" --steps 2 --optimizer sgd --resume="$good" --resume-weights-only > "$work/weights_only.log"
grep -q "took the weights of .*step_00000004.h5" "$work/weights_only.log" &&
  grep -q "step     2/2" "$work/weights_only.log" && echo ok || { echo "FAILED"; failed=1; }

echo "== a directory without a complete checkpoint"
mkdir -p "$work/empty"
cp "$good" "$work/empty/.step_00000004.h5.partial"
check "empty: the directory holds no complete checkpoint" --one-line -- \
  "${run[@]}" --steps 6 --resume="$work/empty"

echo "== --resume passes over a newer file that is not a whole checkpoint, saying so"
mkdir -p "$work/newer"
cp "$good" "$work/newer/"
head -c $((size / 2)) "$good" > "$work/newer/step_00000009.h5"
"${run[@]}" --steps 6 --checkpoint-dir "$work/newer" --resume > "$work/newer.log"
grep -q "passing over .*newer/step_00000009.h5: " "$work/newer.log" &&
  grep -q "resumed from .*newer/step_00000004.h5" "$work/newer.log" && echo ok ||
  { echo "FAILED"; cat "$work/newer.log"; failed=1; }

echo "== --resume refuses a directory whose every checkpoint is unusable (never starts afresh over them)"
mkdir -p "$work/unusable"
head -c $((size / 2)) "$good" > "$work/unusable/step_00000004.h5"
check "--checkpoint-dir .*unusable: none of its 1 checkpoints can be resumed" --one-line -- \
  "${run[@]}" --steps 6 --checkpoint-dir "$work/unusable" --resume
cmp -s <(head -c $((size / 2)) "$good") "$work/unusable/step_00000004.h5" && echo "left as it was" ||
  { echo "FAILED: the unusable checkpoint was changed"; failed=1; }

echo "== other data, another --seq-len"
"$llmft" prepare --input "$source_dir/examples/data/train.txt" --output "$work/other.tok" > /dev/null
check "trained on other data .* than this run's --data .*--resume-new-data" --one-line -- \
  "${run[@]/$work\/text.tok/$work/other.tok}" --steps 6 --resume="$good"
check "written with --seq-len 32 but this run uses --seq-len 16.*--resume-new-data" --one-line -- \
  "${run[@]/32/16}" --steps 6 --resume="$good"
echo "== other data and changed settings, asked for: a note names each change"
changed=("${run[@]/$work\/text.tok/$work/other.tok}")
"${changed[@]/3e-3/1e-3}" --steps 8 --resume="$good" --resume-new-data > "$work/new_data.log"
if grep -q "note: resuming with settings changed since the checkpoint: --lr 0.003 -> 0.001, --steps 4 -> 8, the --data file .*; step 5's learning rate is .* under this run's schedule, where the checkpoint's schedule gave" \
  "$work/new_data.log" && grep -q "step     8/8" "$work/new_data.log"; then
  echo ok
else
  echo "FAILED: no note naming the changes"; grep "llmft:" "$work/new_data.log"; failed=1
fi

echo "== a checkpoint directory that cannot be made"
check "--checkpoint-dir .*cannot create the directory" --one-line -- \
  "${run[@]}" --steps 2 --checkpoint-dir "$work/text.tok/ckpt"

echo "== the disk fills up during a write (a file-size limit below the checkpoint's size)"
mkdir -p "$work/full"
cp "$good" "$work/full/"
check "writing the checkpoint of step 6 failed: .*; the newest complete checkpoint, .*full/step_00000004.h5, is intact" \
  --absent "$work/full/.step_00000006.h5.partial" -- bash -c \
  "trap '' XFSZ; ulimit -f $((size / 2048)); exec \"\$@\"" limit \
  "${run[@]}" --steps 6 --checkpoint-dir "$work/full" --resume
if cmp -s "$good" "$work/full/step_00000004.h5" && [[ ! -e $work/full/step_00000006.h5 ]]; then
  echo "the previous checkpoint is intact; no step 6 file"
else
  echo "FAILED: the checkpoint directory after the failed write: $(ls -A "$work/full")"
  failed=1
fi
exit $failed
