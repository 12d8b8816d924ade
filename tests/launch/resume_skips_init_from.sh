#!/usr/bin/env bash
# A run that resumes from a checkpoint does not read --init-from: the checkpoint replaces
# every weight, so the same command line serves the first submission of a job (which
# starts from --init-from) and every requeue (which does not read it again). On 2 ranks:
#  - a first run with --init-from, --resume and an empty --checkpoint-dir loads the
#    weights (its log says so) and trains 6 steps, saving at step 3;
#  - the --init-from file is then cut to 100 bytes: a fresh run from it fails, so
#    reading it would be seen;
#  - a run resuming from the step-3 checkpoint with the same --init-from succeeds, says
#    that it did not read it, and its steps 4-6 repeat the first run's losses bit for bit
#    (resuming in the same layout is exact: tests/launch/checkpoint_resume.sh).
# usage: resume_skips_init_from.sh LLMFT SOURCE_DIR WORK_DIR MPIEXEC [MPIEXEC_FLAGS...]
set -euo pipefail
llmft=$1 source_dir=$2 work=$3
shift 3
mpiexec=("$@")

rm -rf "$work"
mkdir -p "$work"
"$llmft" prepare --input "$source_dir/examples/data/val.txt" --output "$work/text.tok" > /dev/null
common=(--data "$work/text.tok" --seq-len 32 --micro-batch 2 --steps 6 --lr 3e-3 --seed 7
        --threads 1 --log-every 100)
losses() { sed -nE 's/.*"loss":([^,]*),.*/\1/p' "$1"; }
fail() { echo "FAILED: $*"; exit 1; }

"${mpiexec[@]}" -n 1 "$llmft" --model llama-tiny --data "$work/text.tok" --seq-len 32 --steps 2 \
  --threads 1 --save-dir "$work/base" > "$work/base.log" 2>&1 ||
  { cat "$work/base.log"; fail "making the --init-from model"; }

"${mpiexec[@]}" -n 2 "$llmft" "${common[@]}" --init-from "$work/base" \
  --checkpoint-dir "$work/first" --checkpoint-every 3 --resume --metrics "$work/first.jsonl" \
  > "$work/first.log" 2>&1 || { cat "$work/first.log"; fail "the first run"; }
grep -q "loaded weights from $work/base" "$work/first.log" ||
  { cat "$work/first.log"; fail "the first run (nothing to resume yet) did not load --init-from"; }

truncate -s 100 "$work/base/model.safetensors"
if "${mpiexec[@]}" -n 2 "$llmft" "${common[@]}" --init-from "$work/base" \
  > "$work/damaged.log" 2>&1; then
  fail "a fresh run from the cut --init-from file succeeded: the check below would prove nothing"
fi

"${mpiexec[@]}" -n 2 "$llmft" "${common[@]}" --init-from "$work/base" \
  --checkpoint-dir "$work/second" --resume="$work/first/step_00000003.h5" \
  --metrics "$work/resumed.jsonl" > "$work/resumed.log" 2>&1 ||
  { cat "$work/resumed.log"; fail "the resumed run read the cut --init-from file"; }
grep -q "init-from $work/base not read" "$work/resumed.log" ||
  { cat "$work/resumed.log"; fail "the resumed run did not say that it left --init-from unread"; }

losses "$work/first.jsonl" | tail -n 3 > "$work/expected.loss"
losses "$work/resumed.jsonl" > "$work/resumed.loss"
[[ $(wc -l < "$work/resumed.loss") -eq 3 ]] || fail "the resumed run did not train steps 4-6"
cmp -s "$work/expected.loss" "$work/resumed.loss" ||
  { paste "$work/expected.loss" "$work/resumed.loss"; fail "steps 4-6 differ from the first run's"; }
echo "resumed without reading --init-from; steps 4-6 identical: $(paste -sd' ' "$work/resumed.loss")"
