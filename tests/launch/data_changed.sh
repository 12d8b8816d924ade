#!/usr/bin/env bash
# A data file cut short while a job trains on it ends the job with an error naming the
# file (exit 1), never SIGBUS: the reader uses positioned reads, not a memory map.
# usage: data_changed.sh LLMFT SOURCE_DIR WORK_DIR
set -euo pipefail
llmft=$1 source_dir=$2 work=$3

rm -rf "$work"
mkdir -p "$work"
"$llmft" prepare --input "$source_dir/examples/data/train.txt" --output "$work/train.tok" > /dev/null
code=0
"$llmft" --data "$work/train.tok" --seq-len 16 --micro-batch 2 --threads 1 --log-every 1 \
  --steps 100000 > "$work/out" 2> "$work/err" &
job=$!
for _ in $(seq 600); do  # up to 60 s for the first step
  grep -q "step *1/" "$work/out" 2> /dev/null && break
  sleep 0.1
done
truncate -s 1000 "$work/train.tok"
wait "$job" || code=$?
cat "$work/err"
if [[ $code -eq 1 ]] && grep -q "train.tok' changed while this job was reading it" "$work/err"; then
  echo "ok: exit 1 with the file named"
else
  echo "FAILED: exit $code (135 is SIGBUS)"
  exit 1
fi
