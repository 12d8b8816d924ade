#!/usr/bin/env bash
# Checkpoints written by two simulated hosts (tests/cluster/multinode_hosts.sh) into one
# shared directory resume the run: 2 hosts x 2 ranks, dp 2 x tp 2 with ZeRO-1 (every rank
# writes its own slices and shards of one parallel HDF5 file), train 8 steps saving at step
# 4, then a second job on both hosts resumes from the step-4 file; its losses for steps 5-8
# equal the uninterrupted run's bit for bit (same layout: tests/launch/checkpoint_resume.sh
# shows one host does so too). The checkpoint directory's run record lists both hosts.
# usage: multinode_checkpoint.sh LLMFT SOURCE_DIR WORK_DIR MPIEXEC [MPIEXEC_FLAGS...]
set -uo pipefail
llmft=$1 source_dir=$2 work=$3
shift 3
# shellcheck source=tests/cluster/multinode_hosts.sh
source "$source_dir/tests/cluster/multinode_hosts.sh"
rm -rf "$work"
mkdir -p "$work/shared"
multinode_start 2 "$@"
h1=${MULTINODE_HOSTS[0]} h2=${MULTINODE_HOSTS[1]}
"$llmft" prepare --input "$source_dir/examples/data/val.txt" --output "$work/text.tok" > /dev/null

# train NAME OPTIONS...: 2 hosts x 2 ranks; metrics in NAME.jsonl, output in NAME.log.
train() {
  local name=$1
  shift
  multinode_mpirun 2 --bind-to none "$llmft" --model llama-tiny --data "$work/text.tok" \
    --seq-len 32 --micro-batch 2 --steps 8 --lr 3e-3 --warmup 2 --seed 7 --threads 1 \
    --log-every 100 --tp 2 --zero 1 --metrics "$work/$name.jsonl" "$@" > "$work/$name.log" 2>&1 ||
    { echo "FAILED: $name exited non-zero:"; cat "$work/$name.log"; exit 1; }
}
losses() { grep '"step"' "$1" | sed -nE 's/.*"loss":([^,]*),.*/\1/p'; }

train uninterrupted --checkpoint-dir "$work/shared/first" --checkpoint-every 4
train resumed --checkpoint-dir "$work/shared/second" --resume="$work/shared/first/step_00000004.h5"
failed=0
losses "$work/uninterrupted.jsonl" | tail -n 4 > "$work/expected.loss"
losses "$work/resumed.jsonl" > "$work/resumed.loss"
if [[ $(wc -l < "$work/resumed.loss") -ne 4 ]]; then
  echo "FAILED: the resumed run did not train steps 5-8:"
  cat "$work/resumed.log"
  failed=1
elif cmp -s "$work/expected.loss" "$work/resumed.loss"; then
  echo "steps 5-8 identical after the two-host resume: $(paste -sd' ' "$work/resumed.loss")"
else
  echo "FAILED: the resumed losses differ from the uninterrupted run's:"
  paste "$work/expected.loss" "$work/resumed.loss"
  failed=1
fi
[[ -f $work/shared/second/step_00000008.h5 ]] ||
  { echo "FAILED: the resumed run wrote no step-8 checkpoint"; failed=1; }
grep -qF "\"hosts\":[\"$h1\",\"$h1\",\"$h2\",\"$h2\"]" "$work/shared/first/run_record.json" ||
  { echo "FAILED: the checkpoint directory's run record does not list both hosts"; failed=1; }
exit $failed
