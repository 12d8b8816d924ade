#!/usr/bin/env bash
# The chat example (examples/chat/run.sh) end to end, as a user runs it: conversations
# prepared with the model's chat template, 2 ranks training a tiny Llama on packed
# samples, the saved model scored by `llmft eval` and asked a question with
# `generate --chat`. Checks that the validation loss fell well below the uniform guess,
# that `llmft eval` prints the training run's last validation loss (the same windows
# through the same kernels, sums in a fixed order: equal to the 4 printed digits), that
# prepare --seq-len reports the windows training packs, the saved directory holds the
# tokenizer with its chat template, and that the reply is
# not empty and ended at an end token (generate says so on stderr when --max-new-tokens
# cut it instead).
# usage: chat_example.sh LLMFT SOURCE_DIR WORK_DIR MPIEXEC [MPIEXEC_FLAGS...]
set -euo pipefail
llmft=$1 source_dir=$2 work=$3 mpiexec=$4
shift 4
rm -rf "$work"
mkdir -p "$work"
LLMFT_BUILD_DIR=$(dirname "$llmft") LLMFT_MPIEXEC=$mpiexec LLMFT_MPIEXEC_FLAGS="$*" \
  bash "$source_dir/examples/chat/run.sh" "$work/run" > "$work/run.log" 2>&1 ||
  { cat "$work/run.log"; echo "FAILED: examples/chat/run.sh exited non-zero"; exit 1; }
cat "$work/run.log"
failed=0
fail() { echo "FAILED: $*"; failed=1; }

first=$(grep -m1 '^validation | step 0 |' "$work/run/train.log" | sed -E 's/.*\| loss ([0-9.]+) .*/\1/')
last=$(grep '^validation |' "$work/run/train.log" | tail -n 1 | sed -E 's/.*\| loss ([0-9.]+) .*/\1/')
eval_loss=$(sed -E 's/.*"loss":([0-9.eE+-]+).*/\1/' "$work/run/eval.json")
echo "validation loss $first -> $last; llmft eval $eval_loss"
# The uniform guess over 512 tokens is ln 512 = 6.24; training reaches about 1.75.
awk -v a="$first" -v b="$last" 'BEGIN { exit !(b < 0.5 * a) }' ||
  fail "the validation loss fell only from $first to $last"
[[ $(printf '%.4f' "$eval_loss") == "$last" ]] ||
  fail "llmft eval says $eval_loss, the training run's last validation line $last"
for file in tokenizer.json tokenizer_config.json generation_config.json; do
  [[ -s $work/run/model/$file ]] || fail "the saved model has no $file"
done
grep -q '"chat_template"' "$work/run/model/tokenizer_config.json" ||
  fail "the saved tokenizer_config.json has no chat template"
# prepare --seq-len reports the windows training then packs.
prepared=$(sed -nE 's/^prepare: at --seq-len 128: ([0-9]+) windows.*/\1/p' "$work/run/prepare.log")
trained=$(sed -nE 's/^llmft: data .*: ([0-9]+) windows of 128 tokens packed.*/\1/p' "$work/run/train.log")
[[ -n $prepared && $prepared == "$trained" ]] ||
  fail "prepare --seq-len 128 reported '$prepared' windows, training packed '$trained'"
reply=$(cat "$work/run/reply.txt")
[[ -n ${reply//[[:space:]]/} ]] || fail "generate --chat replied nothing"
if grep -q 'stopped after --max-new-tokens' "$work/run.log"; then
  fail "the reply did not end at an end token"
fi
exit $failed
