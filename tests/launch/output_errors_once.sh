#!/usr/bin/env bash
# An output that cannot be written fails a 2-rank job once (docs/REFERENCE.md, "Checked at startup";
# comm/mpi_lead_decision.h): rank 0 alone prepares the output directories and opens the
# metrics file, and every rank learns the outcome, so stderr holds one "error:" line from
# rank 0 (no "rank 0:" prefix), no second error from rank 1 and no MPI_Abort report
# (expect_failure.sh --once); the job exits 1 and leaves nothing behind (the path it was to
# create is absent, a file or directory in the way is left as it was).
# Before, rank 0 failed alone and printed "rank 0: error: ...", rank 1 then reported its
# aborted all_reduce as "rank 1: error: ..." and the job ended through MPI_Abort.
#   plain:   --checkpoint-dir under a regular file (cannot be created), --checkpoint-dir
#            and --save-dir that are regular files, --metrics that is a directory;
#   mounted: --checkpoint-dir and --save-dir on a read-only tmpfs (root ignores permission
#            bits, so only a read-only mount is unwritable for root) and on a 64 KiB tmpfs
#            (too small); exits 77 (skipped) where this test cannot mount.
# usage: output_errors_once.sh LLMFT SOURCE_DIR WORK_DIR plain|mounted MPIEXEC [FLAGS...]
set -euo pipefail
llmft=$1 source_dir=$2 work=$3 cases=$4
shift 4
mpiexec=("$@")
expect=$source_dir/tests/launch/expect_failure.sh

mounted=()
cleanup() {
  local dir
  for dir in "${mounted[@]}"; do umount "$dir" 2> /dev/null || umount -l "$dir" || true; done
}
trap cleanup EXIT

rm -rf "$work"
mkdir -p "$work"
"$llmft" prepare --input "$source_dir/examples/data/val.txt" --output "$work/text.tok" > /dev/null
failed=0

# snapshot PATH: what the failing job must leave as it was (nothing, if PATH is absent).
snapshot() { if [[ -e $1 ]]; then find "$1" -printf '%p %y %s %T@\n' | sort; fi; }
# refused PATTERN KEEP OPTIONS...: a 2-rank job with OPTIONS fails once with an error
# matching PATTERN, leaves no metrics file behind and KEEP as it was (absent stays absent).
refused() {
  local pattern=$1 keep=$2
  shift 2
  echo "== $*"
  local before
  before=$(snapshot "$keep")
  local metrics=(--metrics "$work/metrics.jsonl")
  if [[ " $* " == *" --metrics "* ]]; then metrics=(); fi
  local report
  report=$(bash "$expect" "^error: $pattern" --once --absent "$work/metrics.jsonl" -- \
    timeout -k 5 60 "${mpiexec[@]}" -n 2 "$llmft" --model gpt2-tiny --data "$work/text.tok" \
    --threads 1 --seq-len 32 --micro-batch 2 --steps 2 "${metrics[@]}" "$@") || failed=1
  echo "$report"
  grep -q "^exit code 1;" <<< "$report" || { echo "FAILED: the exit code is not 1"; failed=1; }
  if [[ $(snapshot "$keep") != "$before" ]]; then
    echo "FAILED: $keep was changed or left behind: $(snapshot "$keep")"
    failed=1
  fi
}

case $cases in
  plain)
    echo "a regular file" > "$work/file"
    mkdir "$work/directory"
    refused "--checkpoint-dir .*/file/checkpoints: cannot create the directory \(Not a directory\)" \
      "$work/file" --checkpoint-dir "$work/file/checkpoints"
    refused "--checkpoint-dir .*/file: .*Not a directory" "$work/file" --checkpoint-dir "$work/file"
    refused "--save-dir .*/file: .*Not a directory" "$work/file" --save-dir "$work/file"
    refused "cannot open metrics file .*/directory: Is a directory" "$work/directory" \
      --metrics "$work/directory"
    ;;
  mounted)
    mkdir -p "$work/read_only" "$work/small"
    # Large enough that the free space is no reason to refuse it.
    if ! mount -t tmpfs -o size=64m,ro tmpfs "$work/read_only" 2> /dev/null; then
      echo "cannot mount a tmpfs here: skipped"
      exit 77
    fi
    mounted+=("$work/read_only")
    mount -t tmpfs -o size=64k tmpfs "$work/small"
    mounted+=("$work/small")
    refused "--checkpoint-dir .*/read_only/checkpoints: cannot create the directory \(Read-only file system\)" \
      "$work/read_only/checkpoints" --checkpoint-dir "$work/read_only/checkpoints"
    refused "--save-dir .*/read_only is not writable \(Read-only file system\)" "$work/read_only" \
      --save-dir "$work/read_only"
    refused "--checkpoint-dir .*/small/checkpoints: its filesystem has 64.00 KiB free but .* take" \
      "$work/small/checkpoints" --checkpoint-dir "$work/small/checkpoints"
    refused "--save-dir .*/small/model: its filesystem has 64.00 KiB free but the model's f32 weights alone take" \
      "$work/small/model" --save-dir "$work/small/model"
    ;;
  *) echo "output_errors_once.sh: unknown cases '$cases'" >&2; exit 2 ;;
esac
exit "$failed"
