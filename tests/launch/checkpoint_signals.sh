#!/usr/bin/env bash
# Preemption on 2 ranks: a signal makes the job save after the step it interrupts and exit
# with code 75, and resuming then continues the uninterrupted run bit for bit.
#  - SIGUSR1 to mpiexec (forwarded to every rank) during training;
#  - SIGTERM to one rank alone (the other learns of it at the step boundary);
#  - SIGUSR1 while a checkpoint is being written (--checkpoint-every 1): the job stops after
#    that write, before another step;
#  - a second signal: the rank exits at once (128 + 10), saying so, the last complete
#    checkpoint is untouched, and --resume continues from it;
#  - a signal to a job without --checkpoint-dir: it stops after the step, saying that
#    nothing is saved, with exit code 130;
#  - SIGINT and SIGTERM to mpiexec alone (started with setsid, as `kill` or a scheduler
#    sends them; Ctrl-C at a terminal reaches mpiexec alone too). Open MPI 4.1's mpiexec does
#    not forward them: it ends the job, sending the ranks SIGTERM after
#    odls_base_sigkill_timeout seconds and SIGKILL as long again, and exits 1 whatever the
#    ranks returned. With that grace raised to 3 s (examples/slurm sets 30) the ranks save
#    after the step SIGTERM interrupts and say so on stderr. A validation of 768 windows
#    every step makes a step last about 0.4-1 s on 2 cores, so that the job is still
#    training 3 s after the signal (with 192 windows steps took 0.1-0.16 s, and one CI run
#    finished all 30 before SIGTERM came) and a step and the save fit in the 3 s before
#    SIGKILL; the validation does not change the curve.
# Each stopped job says on stderr after which step it stopped and that the state is saved,
# its newest checkpoint is that step, and no partial file is left. (Before, that line went
# to stdout.)
# usage: checkpoint_signals.sh LLMFT SOURCE_DIR WORK_DIR MPIEXEC [MPIEXEC_FLAGS...]
set -euo pipefail
llmft=$1 source_dir=$2 work=$3
shift 3
mpiexec=("$@")
steps=30

rm -rf "$work"
mkdir -p "$work"
"$llmft" prepare --input "$source_dir/examples/data/val.txt" --output "$work/text.tok" > /dev/null
common=(--model llama-tiny --data "$work/text.tok" --steps "$steps" --lr 3e-3 --seed 7 --threads 1
        --log-every 100)
shape=(--seq-len 32 --micro-batch 2)
failed=0
losses() { sed -nE 's/.*"loss":([^,]*),.*/\1/p' "$1"; }
# steps_logged FILE: how many steps a metrics file holds.
steps_logged() { if [[ -f $1 ]]; then grep -c '"step"' "$1" || true; else echo 0; fi; }
# newest_step DIR: the step of the newest complete checkpoint's name.
newest_step() { ls "$1" | sed -nE 's/^step_0*([0-9]+)\.h5$/\1/p' | sort -n | tail -n 1; }

timeout 120 "${mpiexec[@]}" -n 2 "$llmft" "${common[@]}" "${shape[@]}" --metrics "$work/uninterrupted.jsonl" \
  > "$work/uninterrupted.log" 2>&1
losses "$work/uninterrupted.jsonl" > "$work/uninterrupted.loss"

# The background job is signalled directly (not through `timeout`, which would take the
# signals itself): a watchdog ends it after 120 s, or when this script ends.
job=""
trap 'if [[ -n $job ]]; then kill -TERM "$job" 2> /dev/null || true; fi' EXIT
watchdog() {
  (timeout 120 tail --pid="$job" -f /dev/null || { kill -TERM "$job"; sleep 10; kill -KILL "$job"; }
  ) > /dev/null 2>&1 &
}

# start NAME OPTIONS...: the job in the background (the shape above unless OPTIONS give
# their own), stdout in NAME.log and stderr in NAME.err; its pid in $job. The words in the
# array $launch (none by default) come before the job's command.
launch=()
start() {
  local name=$1
  shift
  local own_shape=("${shape[@]}")
  if [[ " $* " == *" --micro-batch "* ]]; then own_shape=(); fi
  "${launch[@]}" "${mpiexec[@]}" -n 2 "$llmft" "${common[@]}" "${own_shape[@]}" \
    --checkpoint-dir "$work/$name" --metrics "$work/$name.jsonl" "$@" > "$work/$name.log" \
    2> "$work/$name.err" &
  job=$!
  watchdog
}
# finish NAME EXPECTED_CODE: waits for the job (mpiexec's exit code must be EXPECTED_CODE),
# checks that it said on stderr that it stopped after its last logged step with the state
# saved, that its newest checkpoint is that step and that no partial file is left, then
# resumes it to the end and compares.
finish() {
  local name=$1 expected=$2 code=0
  wait "$job" || code=$?
  local stopped
  stopped=$(steps_logged "$work/$name.jsonl")
  if [[ $code -ne $expected ]]; then
    echo "FAILED: $name: exit code $code, expected $expected"
    tail -n 20 "$work/$name.log" "$work/$name.err"
    failed=1
    return
  fi
  local saved
  saved=$(newest_step "$work/$name")
  echo "$name: exit code $code after $stopped of $steps steps; newest checkpoint: step ${saved:-none}"
  if ! grep -E "^llmft: stopping after step $stopped \(.*\); the state is saved in " "$work/$name.err"; then
    echo "FAILED: $name: stderr does not say that it stopped after step $stopped with the state saved"
    cat "$work/$name.err"
    failed=1
  fi
  if [[ ${saved:-0} -ne $stopped ]]; then
    echo "FAILED: $name: stopped after step $stopped but saved step ${saved:-none}"
    failed=1
    return
  fi
  if compgen -G "$work/$name/.*.partial" > /dev/null; then
    echo "FAILED: $name: partial files left: $(ls -A "$work/$name")"
    failed=1
  fi
  timeout 120 "${mpiexec[@]}" -n 2 "$llmft" "${common[@]}" "${shape[@]}" --checkpoint-dir "$work/$name" --resume \
    --metrics "$work/$name.resumed.jsonl" > "$work/$name.resumed.log" 2>&1 ||
    { echo "FAILED: $name: the resume failed"; cat "$work/$name.resumed.log"; failed=1; return; }
  # The resumed run starts after the newest checkpoint: its steps continue the curve.
  head -n "$saved" <(losses "$work/$name.jsonl") > "$work/$name.loss"
  losses "$work/$name.resumed.jsonl" >> "$work/$name.loss"
  if cmp -s "$work/uninterrupted.loss" "$work/$name.loss"; then
    echo "$name: steps 1-$saved, then $((steps - saved)) resumed, equal the uninterrupted run bit for bit"
  else
    echo "FAILED: $name: the interrupted and resumed curve differs from the uninterrupted one"
    paste "$work/uninterrupted.loss" "$work/$name.loss"
    failed=1
  fi
}
# wait_for_steps NAME N: until the job has logged N steps (or has ended).
wait_for_steps() {
  for _ in $(seq 600); do
    if [[ $(steps_logged "$work/$1.jsonl") -ge $2 ]] || ! kill -0 "$job" 2> /dev/null; then return; fi
    sleep 0.05
  done
}

start usr1-to-mpiexec
wait_for_steps usr1-to-mpiexec 3
kill -USR1 "$job"
finish usr1-to-mpiexec 75

start term-to-one-rank
wait_for_steps term-to-one-rank 3
rank=$(pgrep -P "$job" -x llmft | tail -n 1 || true)
kill -TERM "$rank"
finish term-to-one-rank 75

start usr1-during-write --checkpoint-every 1
for _ in $(seq 600); do
  if compgen -G "$work/usr1-during-write/.step_*.partial" > /dev/null; then break; fi
  sleep 0.01
done
kill -USR1 "$job"
finish usr1-during-write 75

# Long steps (many windows) so that both signals land in one step, after step 2's
# checkpoint; the rank that gets the second exits with 128 + SIGUSR1 (10). The second is
# sent once rank 0 (the lowest pid) has said it got the first, not after a fixed pause,
# which a loaded machine can stretch past the end of the step; the first waits 0.3 s into
# step 4 (a step of 16384 tokens takes over a second), away from step 3's end.
start second-signal --checkpoint-every 2 --micro-batch 64 --seq-len 128
wait_for_steps second-signal 3
sleep 0.3
rank=$(pgrep -P "$job" -x llmft | head -n 1 || true)
kill -USR1 "$rank"
for _ in $(seq 1000); do
  grep -q "^llmft: got SIGUSR1" "$work/second-signal.err" 2> /dev/null && break
  sleep 0.005
done
kill -USR1 "$rank"
code=0
wait "$job" || code=$?
if [[ $code -eq 138 && ! -f $work/second-signal/step_00000003.h5 && -f $work/second-signal/step_00000002.h5 ]] &&
  grep -q "^llmft: a second SIGUSR1: ending at once without saving" "$work/second-signal.err"; then
  echo "second-signal: exit code 138 at once, said so; step_00000002.h5 kept, no step 3 checkpoint"
else
  echo "FAILED: second-signal: exit code $code (expected 138); checkpoints: $(ls -A "$work/second-signal")"
  tail -n 20 "$work/second-signal.log" "$work/second-signal.err"
  failed=1
fi

# No --checkpoint-dir: the job stops after the step all the same, saying nothing is saved.
"${mpiexec[@]}" -n 2 "$llmft" "${common[@]/#$steps/100000}" "${shape[@]}" \
  --metrics "$work/no-dir.jsonl" > "$work/no-dir.log" 2> "$work/no-dir.err" &
job=$!
watchdog
for _ in $(seq 600); do
  [[ $(steps_logged "$work/no-dir.jsonl") -ge 3 ]] && break
  sleep 0.05
done
kill -USR1 "$job"
code=0
wait "$job" || code=$?
if [[ $code -eq 130 ]] && grep -q "^llmft: stopping after step [0-9]* (.*); nothing is saved: this run has no --checkpoint-dir (exit code 130)" "$work/no-dir.err"; then
  echo "no-dir: exit code 130, said that nothing is saved"
else
  echo "FAILED: no-dir: exit code $code (expected 130)"
  cat "$work/no-dir.err"
  failed=1
fi

# SIGINT and SIGTERM to mpiexec alone; it exits 1, the ranks save.
for signal in INT TERM; do
  name=${signal,,}-to-mpiexec
  launch=(env OMPI_MCA_odls_base_sigkill_timeout=3 setsid)
  start "$name" --val-data "$work/text.tok" --eval-every 1 --eval-windows 768
  launch=()
  wait_for_steps "$name" 1
  # setsid runs mpiexec in the same process (it forks only when it leads its process
  # group, which a background job of this script does not), so $job is mpiexec's pid.
  comm=$(ps -o comm= -p "$job" || true)
  if [[ $comm != "$(basename "${mpiexec[0]}" | cut -c 1-15)" ]]; then
    echo "FAILED: $name: the background job is '$comm', not ${mpiexec[0]}"
    failed=1
    kill -TERM "$job" 2> /dev/null || true
    wait "$job" || true
    continue
  fi
  kill -"$signal" "$job"
  finish "$name" 1
done
exit $failed
