#!/usr/bin/env bash
# An output directory belongs to one job at a time (io/directory_lock.h): two jobs started
# on the same --checkpoint-dir or --save-dir used to mix their files (a published
# checkpoint holding tensors of both, config.json of one model beside the weights of the
# other, both exiting 0). Checks, while job A trains on a checkpoint directory D and a save
# directory S:
#  - job B on D, and job B on S (another --seed), on 1 rank and on 2 ranks, is refused at
#    startup with exit 1 and one error line naming the directory, A's pid and "in use by
#    another llmft job" (printed once on 2 ranks, without MPI_Abort's report), and leaves
#    D and S as they were (their entries, sizes and A's lock file);
#  - after A is killed with SIGKILL (its lock file stays behind, stale), job C on D and S
#    takes both locks over and trains to the end with exit 0.
# Before the locks, B trained on D or S and exited 0, so each refusal fails there.
# usage: directory_lock.sh LLMFT SOURCE_DIR WORK_DIR MPIEXEC [MPIEXEC_FLAGS...]
set -euo pipefail
llmft=$1 source_dir=$2 work=$3
shift 3
mpiexec=("$@")
expect=$source_dir/tests/launch/expect_failure.sh

a_launcher=""  # the pid of A's `timeout`
a_pid=""       # the pid of A's llmft process, which holds the locks
cleanup() {
  for pid in $a_pid $a_launcher; do kill -9 "$pid" 2> /dev/null || true; done
}
trap cleanup EXIT

rm -rf "$work"
mkdir -p "$work"
"$llmft" prepare --input "$source_dir/examples/data/val.txt" --output "$work/text.tok" > /dev/null
run=(--model gpt2-tiny --data "$work/text.tok" --threads 1 --seq-len 32 --micro-batch 2)
D=$work/D S=$work/S
failed=0

# A trains far longer than the test lasts; `timeout` ends it even if this script is killed.
timeout -s KILL 120 "$llmft" "${run[@]}" --steps 100000 --log-every 1000 --checkpoint-dir "$D" \
  --save-dir "$S" --metrics "$work/A.jsonl" > "$work/A.log" 2>&1 &
a_launcher=$!
for _ in $(seq 600); do
  if [[ -s $work/A.jsonl ]] || ! kill -0 "$a_launcher" 2> /dev/null; then break; fi
  sleep 0.05
done
a_pid=$(pgrep -P "$a_launcher" -x llmft || true)
if [[ ! -s $work/A.jsonl || -z $a_pid ]]; then
  echo "FAILED: job A did not start training"
  cat "$work/A.log"
  exit 1
fi
echo "job A (pid $a_pid) trains on $D and $S"

# What B must leave as it was: the entries of D and S with their sizes, and A's lock files.
snapshot() {
  local dir
  for dir in "$D" "$S"; do
    (cd "$dir" && find . -printf '%p %y %s\n' | sort && cat .llmft.lock)
  done
}
# The text as an extended regular expression that matches it literally.
literally() { sed -E 's/[][\.*^$+?(){}|]/\\&/g' <<< "$1"; }

# refused RANKS OPTION DIR: job B with OPTION DIR on RANKS ranks is refused and leaves D and
# S unchanged.
refused() {
  local ranks=$1 option=$2 dir=$3 launch=() check=--one-line
  if [[ $ranks -gt 1 ]]; then launch=("${mpiexec[@]}" -n "$ranks"); check=--once; fi
  echo "== job B: $option on $ranks rank(s)"
  local before
  before=$(snapshot)
  local report
  report=$(bash "$expect" "^error: $option $(literally "$dir") is in use by another llmft job \(pid $a_pid on .*\)" \
    "$check" -- timeout -k 5 60 "${launch[@]}" "$llmft" "${run[@]}" --steps 2 --seed 99 \
    "$option" "$dir") || failed=1
  echo "$report"
  grep -q "^exit code 1;" <<< "$report" || { echo "FAILED: the exit code is not 1"; failed=1; }
  if [[ $(snapshot) != "$before" ]]; then
    echo "FAILED: job B changed what job A owns:"
    diff <(echo "$before") <(snapshot) || true
    failed=1
  fi
}
refused 1 --checkpoint-dir "$D"
refused 1 --save-dir "$S"
refused 2 --checkpoint-dir "$D"
refused 2 --save-dir "$S"

echo "== job A killed with SIGKILL; job C takes its stale locks over"
if ! kill -0 "$a_pid" 2> /dev/null; then
  echo "FAILED: job A ended while the others were refused"
  cat "$work/A.log"
  exit 1
fi
killed=$a_pid
kill -9 "$a_pid"
wait "$a_launcher" 2> /dev/null || true
a_pid="" a_launcher=""
code=0
timeout -k 5 60 "$llmft" "${run[@]}" --steps 2 --checkpoint-dir "$D" --save-dir "$S" \
  > "$work/C.log" 2>&1 || code=$?
if [[ $code -eq 0 && -f $D/step_00000002.h5 && -f $S/config.json ]] &&
   grep -q "^pid [0-9]* on " "$D/.llmft.lock" && grep -q "^pid [0-9]* on " "$S/.llmft.lock" &&
   ! grep -q "^pid $killed " "$D/.llmft.lock" "$S/.llmft.lock"; then
  echo "ok: job C trained 2 steps (exit 0), saved step 2 in D and the model in S; the locks name it"
else
  echo "FAILED: job C: exit code $code; D: $(ls -A "$D"); S: $(ls -A "$S")"
  cat "$work/C.log"
  failed=1
fi
exit "$failed"
