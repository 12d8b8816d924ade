#!/usr/bin/env bash
# Outputs fail early or not at all: a metrics file that can no longer grow gives one
# warning and the run trains to the end with exit 0, the file cut back to whole lines;
# a --save-dir or --checkpoint-dir whose filesystem is too small for the model's weights
# stops the run before step 1, naming the directory and leaving nothing there; so does a
# --checkpoint-dir too small for the checkpoints the run will keep (whole checkpoints with
# the optimizer state, not the weights alone).
# The full filesystem is a 64 KiB tmpfs mounted for the test; where mounting is not
# allowed (not root, a container without the capability) only /dev/full (every write
# fails with ENOSPC) is tried and the test reports itself skipped (77).
# usage: output_space.sh LLMFT SOURCE_DIR WORK_DIR
set -euo pipefail
llmft=$1 source_dir=$2 work=$3
expect=$source_dir/tests/launch/expect_failure.sh

rm -rf "$work"
mkdir -p "$work"
"$llmft" prepare --input "$source_dir/examples/data/val.txt" --output "$work/text.tok" > /dev/null
run=("$llmft" --data "$work/text.tok" --seq-len 16 --micro-batch 1 --threads 1 --log-every 1)
failed=0

# Trains 12 steps with --metrics $1; checks exit 0, one warning and the 12th step.
metrics_run() {
  local code=0
  "${run[@]}" --steps 12 --metrics "$1" > "$work/metrics.out" 2> "$work/metrics.err" || code=$?
  cat "$work/metrics.err"
  local warnings
  warnings=$(grep -c "warning: cannot write to metrics file" "$work/metrics.err" || true)
  if [[ $code -eq 0 && $warnings -eq 1 ]] && grep -q "step *12/12" "$work/metrics.out"; then
    echo "ok: exit 0, one warning, 12 steps"
  else
    echo "FAILED: exit $code, $warnings warnings"
    failed=1
  fi
}

echo "== metrics on /dev/full"
metrics_run /dev/full

small=$work/small
mkdir -p "$small"
if ! mount -t tmpfs -o size=64k tmpfs "$small" 2> /dev/null; then
  echo "cannot mount a small tmpfs here: the full-filesystem part is skipped"
  [[ $failed -eq 0 ]] && exit 77
  exit 1
fi
trap 'umount "$small"' EXIT

echo "== metrics on a filesystem with one page left"
dd if=/dev/zero of="$small/filler" bs=4096 count=15 status=none
metrics_run "$small/metrics.jsonl"
bytes=$(stat -c %s "$small/metrics.jsonl")
if [[ $bytes -gt 0 && $(tail -c 1 "$small/metrics.jsonl" | od -An -c | tr -d ' ') == '\n' ]] &&
   python3 -c "import json, sys; [json.loads(l) for l in open(sys.argv[1])]" "$small/metrics.jsonl"; then
  echo "ok: $bytes bytes of whole JSON lines"
else
  echo "FAILED: the metrics file does not end in a whole line: $(tail -c 80 "$small/metrics.jsonl")"
  failed=1
fi
rm -f "$small/filler" "$small/metrics.jsonl"

for option in --save-dir --checkpoint-dir; do
  echo "== $option on a 64 KiB filesystem"
  bash "$expect" "$option .*small/out: its filesystem has .* free but .* take" --one-line \
    --absent "$small/out" -- "${run[@]}" --steps 2 "$option" "$small/out" || failed=1
done

# Room for the weights (3.28 MiB) but not for the checkpoints the run writes: two of about
# 10.4 MiB each (AdamW's moments and the weights; --keep-checkpoints 2 keeps both). Refused
# at start, not at step 4's write.
umount "$small"
mount -t tmpfs -o size=16m tmpfs "$small"
echo "== --checkpoint-dir with room for the weights but not the checkpoints kept"
bash "$expect" "--checkpoint-dir .*small/ckpt: its filesystem has .* free but 2 more checkpoints of .* \\(with --keep-checkpoints 2, 0 already there\\) alone take" \
  --one-line --absent "$small/ckpt" -- "${run[@]}" --steps 4 --checkpoint-every 2 \
  --checkpoint-dir "$small/ckpt" || failed=1
exit "$failed"
