#!/usr/bin/env bash
# The batch scripts of examples/slurm/ on a real SLURM: a two-node cluster of this host
# (tests/cluster/slurm_daemons.sh: munged, slurmctld and two slurmd started by this test,
# configuration generated for this host), each script submitted with sbatch in its CPU
# form (the resources on sbatch's command line, DEVICE=cpu, llama-tiny with random
# weights, a few steps) from a directory outside the repository, so that the scripts find
# the repository themselves. Each job must end COMPLETED with exit code 0:0 and leave its
# outputs (step lines in the metrics, the model directory, the ablation's table):
#  - single_node_srun (srun --mpi=pmix) and single_node_mpirun (mpirun inside the
#    allocation) train the same losses, bit for bit;
#  - multi_node_mpirun runs on both nodes (-N2, a rank on each: mpirun starts its daemon
#    on the second node through srun), multi_node_srun on one (-N1: two steps of one job
#    on one host collide in SLURM's PMIx plugin, which names its directory by job and
#    step only), same losses again;
#  - ablation: the workload pins every layout option, so the plan has one candidate and
#    the ablation one run: exit 0, since the timing verdict compares the planner's choice
#    with itself (with two layouts it would depend on this machine's timings);
#  - requeue through a time limit: --time=1 --signal=USR1@52 (SLURM checks time limits
#    every 30 s, so the signal lands 8-38 s in; a probe of 20 steps sizes the run to
#    train about 75 s on this machine, 50 s when a step runs a third faster in the job),
#    the ranks save and exit 75, the script requeues,
#    the job waits cred_expire + 1 s and resumes from its named run directory, as often
#    as the time limit comes again; it ends COMPLETED with Restarts >= 1, and every
#    step's loss equals an uninterrupted run's (mpiexec outside SLURM, same options) bit
#    for bit;
#  - requeue through `scancel --signal=USR1 --batch` (the batch shell alone is signalled
#    and passes it on to the step) once the job has trained a step: the same outcome.
# Exits 77 (skipped) where the daemons cannot start. The daemons are stopped and their
# state removed however the test ends (EXIT trap; every wait is bounded).
# usage: slurm_cluster.sh LLMFT SOURCE_DIR WORK_DIR MPIEXEC [MPIEXEC_FLAGS...]
set -euo pipefail
llmft=$1 source_dir=$2 work=$3
shift 3
mpiexec=("$@")
scripts=$source_dir/examples/slurm

# shellcheck source=tests/cluster/slurm_daemons.sh
source "$source_dir/tests/cluster/slurm_daemons.sh"
rm -rf "$work"
mkdir -p "$work/submit"
trap slurm_stop EXIT
trap 'exit 1' INT TERM
# The daemons' state, its munge socket path short enough for a Unix socket.
slurm_start "$(mktemp -d)" || exit $?

"$llmft" prepare --input "$source_dir/examples/data/val.txt" --output "$work/text.tok" > /dev/null
failed=0
fail() { echo "FAILED: $*"; failed=1; }

# What every job trains (environment for llmft_job.sh), and its CPU resources.
export LLMFT=$llmft DATA=$work/text.tok WEIGHTS=none MODEL=llama-tiny DEVICE=cpu DTYPE=fp32 \
  SEQ_LEN=32 GLOBAL_BATCH=8 STEPS=4 LR=3e-3 WARMUP=1
export LLMFT_CALIBRATION_CACHE=$work/calibration.json
cpu=(--gpus-per-node=0 --nodes=1 --ntasks-per-node=2 --cpus-per-task=1 --time=5)
pinned=(--no-calibrate --seed 7 --threads 1)

# submit SBATCH_ARGS...: submits from the submit directory; prints the job id.
submit() { (cd "$work/submit" && sbatch --parsable "$@"); }
# field JOB NAME: a field of `scontrol show job`.
field() { scontrol show job -o "$1" | grep -o " $2=[^ ]*" | cut -d= -f2-; }
# finish JOB SECONDS: waits until the job has ended (bounded); prints its final state.
finish() {
  local job=$1 seconds=$2 state i
  for ((i = 0; i < seconds; ++i)); do
    state=$(field "$job" JobState)
    case $state in
      COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | BOOT_FAIL | DEADLINE)
        echo "$state"
        return ;;
    esac
    sleep 1
  done
  echo "still $state after $seconds s"
  scancel "$job" || true
}
# check_job JOB NAME SECONDS: the job ended COMPLETED with exit code 0:0.
check_job() {
  local job=$1 name=$2 state code
  state=$(finish "$job" "$3")
  code=$(field "$job" ExitCode)
  echo "$name (job $job on $(field "$job" NodeList)): $state, exit code $code," \
    "restarts $(field "$job" Restarts)"
  if [[ $state != COMPLETED || $code != 0:0 ]]; then
    fail "$name ended $state with exit code $code; its output:"
    cat "$work/submit/"*"-$job.out" || true
    return 1
  fi
}
losses() { sed -nE 's/.*"loss":([^,]*),.*/\1/p' "$1"; }
# step_losses FILE: "step loss" for every step, the last line of a step logged twice.
step_losses() {
  sed -nE 's/.*"step":([0-9]+),.*"loss":([^,]*),.*/\1 \2/p' "$1" | sort -n -s -k1,1 |
    awk '{ loss[$1] = $2 } END { for (s in loss) print s, loss[s] }' | sort -n
}

# --- The four training scripts: COMPLETED, their steps and model written, equal losses.
declare -A jobs
for script in single_node_srun single_node_mpirun multi_node_srun; do
  jobs[$script]=$(submit "${cpu[@]}" "$scripts/$script.sbatch" "${pinned[@]}")
done
jobs[multi_node_mpirun]=$(submit "${cpu[@]}" --nodes=2 --ntasks-per-node=1 \
  "$scripts/multi_node_mpirun.sbatch" "${pinned[@]}")
for script in single_node_srun single_node_mpirun multi_node_srun multi_node_mpirun; do
  job=${jobs[$script]}
  check_job "$job" "$script" 180 || continue
  run=$work/submit/run-$job
  [[ $(losses "$run.jsonl" | wc -l) -eq $STEPS ]] || fail "$script: not $STEPS steps in $run.jsonl"
  [[ -s $run/model.safetensors && -s $run/config.json ]] || fail "$script: no model in $run"
  losses "$run.jsonl" > "$work/$script.loss"
done
for script in single_node_mpirun multi_node_srun multi_node_mpirun; do
  cmp -s "$work/single_node_srun.loss" "$work/$script.loss" ||
    fail "$script's losses differ from single_node_srun's"
done
[[ $failed -ne 0 ]] || echo "the four training scripts: same losses $(paste -sd' ' "$work/single_node_srun.loss")"

# --- The ablation: one layout (every layout option pinned), exit 0, its table written.
job=$(submit "${cpu[@]}" "$scripts/ablation.sbatch" --steps 2 -- \
  --device cpu --model llama-tiny --data "$DATA" --seq-len "$SEQ_LEN" \
  --global-batch "$GLOBAL_BATCH" --no-calibrate --tp 1 --zero 0 --micro-batch 4 \
  --activation-checkpointing=none --offload-optimizer=off --sequence-parallel=off)
if check_job "$job" ablation 180; then
  table=$work/submit/ablation-$job/ablation.txt
  grep -q "^runs: 1, failed: none" "$table" || fail "ablation: not one successful run in $table"
  grep -q "choice within 10% of the fastest: PASS" "$table" || fail "ablation: no verdict in $table"
fi

# --- Requeue. The time-limit job must still be training when the signal comes, 8-38 s
# in: a probe measures this machine's step time, and the job trains for about 75 s; the
# batch-signal job for about 10 s. Each is compared with an uninterrupted run of as many
# steps (mpiexec outside SLURM, the options llmft_job.sh gives).
# outside NAME STEPS: that run; its metrics in NAME.jsonl, every step's loss in NAME.loss.
outside() {
  "${mpiexec[@]}" -n 2 "$llmft" --auto-plan --device cpu --model llama-tiny --data "$DATA" \
    --dtype fp32 --optimizer adamw --seq-len "$SEQ_LEN" --global-batch "$GLOBAL_BATCH" \
    --steps "$2" --lr "$LR" --warmup "$WARMUP" "${pinned[@]}" --metrics "$work/$1.jsonl" \
    > "$work/$1.log" 2>&1 || { cat "$work/$1.log"; fail "the run $1 outside SLURM"; exit 1; }
  step_losses "$work/$1.jsonl" > "$work/$1.loss"
}
outside probe 20
# A step's seconds: steps 2-20 (step 1 warms up).
step_seconds=$(sed -nE 's/.*"elapsed_seconds":([^,}]*).*/\1/p' "$work/probe.jsonl" |
  awk 'NR == 1 { first = $1 } { last = $1 } END { print (last - first) / (NR - 1) }')
timelimit_steps=$(awk -v s="$step_seconds" 'BEGIN { n = int(75 / s); print (n < 100 ? 100 : n) }')
batch_signal_steps=$(awk -v s="$step_seconds" 'BEGIN { n = int(10 / s); print (n < 40 ? 40 : n) }')
echo "a step takes $step_seconds s: the time-limit job trains $timelimit_steps steps," \
  "the batch-signal job $batch_signal_steps"
outside uninterrupted-timelimit "$timelimit_steps"
outside uninterrupted-batch-signal "$batch_signal_steps"

# check_requeued JOB NAME: COMPLETED after at least one requeue, every step's loss that of
# the uninterrupted run of as many steps.
check_requeued() {
  local job=$1 name=$2 run=$work/submit/run-$2
  check_job "$job" "$name" 480 || return 0
  [[ $(field "$job" Restarts) -ge 1 ]] || fail "$name: the job was never requeued"
  grep -q "requeueing job $job" "$work/submit/llmft-requeue-$job.out" ||
    fail "$name: the script did not requeue the job"
  step_losses "$run/metrics.jsonl" > "$work/$name.loss"
  if cmp -s "$work/uninterrupted-$name.loss" "$work/$name.loss"; then
    echo "$name: all $(wc -l < "$work/$name.loss") steps' losses equal the uninterrupted" \
      "run's, the last $(tail -n 1 "$work/$name.loss")"
  else
    fail "$name: the losses differ from the uninterrupted run's (step, uninterrupted, requeued):"
    join "$work/uninterrupted-$name.loss" "$work/$name.loss" | awk '$2 != $3' | head
  fi
}

# The time limit: SIGUSR1 to the tasks 52 s before the 1-minute limit.
job=$(export RUN=run-timelimit STEPS=$timelimit_steps
      submit "${cpu[@]/--time=5/--time=1}" --signal=USR1@52 "$scripts/requeue.sbatch" "${pinned[@]}")
check_requeued "$job" timelimit

# SIGUSR1 to the batch shell alone, once the job has trained a step.
job=$(export RUN=run-batch-signal STEPS=$batch_signal_steps
      submit "${cpu[@]}" "$scripts/requeue.sbatch" "${pinned[@]}")
for ((i = 0; i < 240; ++i)); do
  grep -qs '"step":2,' "$work/submit/run-batch-signal/metrics.jsonl" && break
  sleep 0.5
done
scancel --batch --signal=USR1 "$job"
check_requeued "$job" batch-signal

exit "$failed"
