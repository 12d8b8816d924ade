#!/usr/bin/env bash
# The divergence policy through the binary: a run whose loss or gradient norm goes
# non-finite (fp32, bf16) or whose fp16 steps overflow more than --max-skipped-steps times
# in a row ends with exit code 65 and an error naming the step, and the model saved before
# by a good run in the same --save-dir is left as it was, with no partial shard beside it.
# usage: divergence.sh LLMFT SOURCE_DIR WORK_DIR
set -euo pipefail
llmft=$1 source_dir=$2 work=$3

rm -rf "$work"
mkdir -p "$work"
"$llmft" prepare --input "$source_dir/examples/data/val.txt" --output "$work/text.tok" > /dev/null
run=("$llmft" --data "$work/text.tok" --seq-len 16 --micro-batch 1 --threads 1 --log-every 1
     --save-dir "$work/out")
"${run[@]}" --steps 2 > "$work/good.log"
sum_before=$(cat "$work"/out/* | md5sum)
failed=0

diverges() {  # diverges NAME PATTERN ARGS...: exit 65, PATTERN on stderr, out/ unchanged
  local name=$1 pattern=$2
  shift 2
  echo "== $name"
  local code=0
  "${run[@]}" "$@" > "$work/$name.out" 2> "$work/$name.err" || code=$?
  cat "$work/$name.err"
  local problems=()
  [[ $code -eq 65 ]] || problems+=("exit code $code, not 65")
  grep -Eq -- "$pattern" "$work/$name.err" || problems+=("stderr does not match /$pattern/")
  grep -q "saved the model" "$work/$name.out" && problems+=("it saved the model")
  [[ $(cat "$work"/out/* | md5sum) == "$sum_before" ]] || problems+=("out/ was changed")
  [[ -z $(find "$work/out" -name '*.partial') ]] || problems+=("a partial file was left")
  if [[ ${#problems[@]} -eq 0 ]]; then
    echo ok
  else
    printf 'FAILED: %s\n' "${problems[@]}"
    failed=1
  fi
}

# The reproductions: AdamW at lr 1e6 blows the weights up at step 1 (the step-2 loss
# is about 1e13, above --max-loss 111 = 20 x ln 257); SGD at lr 3e38 without clipping makes
# the weights infinite in one step, so the next loss is not finite.
diverges adamw_lr_1e6 "training diverged at step 2: the loss [0-9.e+]+ is above --max-loss 110.9" \
  --lr 1e6 --steps 4
diverges sgd_lr_3e38 "training diverged at step [0-9]+: the (loss|gradient norm) became" \
  --optimizer sgd --clip-grad 0 --lr 3e38 --steps 3
diverges bf16_lr_1e6 "training diverged at step [0-9]+" --dtype bf16 --lr 1e6 --steps 4
# fp16 skips overflowing steps (loss scaling), but not forever.
diverges fp16_skips "fp16 overflowed 3 steps in a row \\(more than --max-skipped-steps 2" \
  --dtype fp16 --lr 1e6 --steps 30 --max-skipped-steps 2

exit "$failed"
