# shellcheck shell=bash
# Sourced by the batch scripts in examples/slurm/, never run on its own: finds the
# repository and the llmft binary from any submit directory, builds llmft's command line
# from environment variables (each defaulting to the calling script's value) and the
# arguments given after the script's name, and runs the job step with the batch shell's
# SIGUSR1 passed on to it.
#
# Environment variables, with the defaults of the calling script (see its header):
#   DATA          token file made by `llmft prepare` (required)
#   WEIGHTS       the model directory or .safetensors to start from (required; `none` starts
#                 from random weights, e.g. for a smoke test)
#   MODEL         a preset or a directory with config.json (default: the config.json of
#                 WEIGHTS, as `llmft --init-from` takes it)
#   DEVICE        cuda or cpu                       (default cuda)
#   DTYPE         fp32, bf16 or fp16                (default bf16)
#   OPTIMIZER     adamw, sgd, lomo or adalomo       (default adamw)
#   SEQ_LEN 2048, GLOBAL_BATCH 64, STEPS 1000, LR 2e-5, WARMUP 50 (unless the script
#                 names others)
#   RUN           the run's name: its outputs are RUN/ and RUN.jsonl, or RUN/... for
#                 requeue.sbatch (default run-JOBID; requeue.sbatch: run-JOBNAME)
#   LLMFT_HOME    the repository (default: the one the submitted script is in, from
#                 `scontrol show job`'s Command=, else the submit directory)
#   LLMFT         the binary (default build/llmft in that repository)
#   SRUN_MPI      srun's --mpi plugin (default pmix: Debian's and most Open MPI builds;
#                 pmi2 for MPICH or Intel MPI built for it; `srun --mpi=list` says which)
# Arguments after the script's name go to llmft after these; an option named there
# replaces the variable's (`sbatch single_node_srun.sbatch --steps 10 --tp 2`).
# Relative paths (DATA, WEIGHTS, RUN) are relative to the submit directory, where the
# job runs.

# The repository this file is in, and the binary.
llmft_repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
llmft=${LLMFT:-$llmft_repo/build/llmft}
if [[ ! -x $llmft ]]; then
  echo "llmft job: no llmft binary at $llmft: build it (scripts/build.sh), or set LLMFT to" \
    "the binary or LLMFT_HOME to the repository" >&2
  exit 1
fi

export OMP_NUM_THREADS=${SLURM_CPUS_PER_TASK:-1}

# mpirun sends a signalled job's ranks SIGTERM, then SIGKILL this many s later: time to save.
export OMPI_MCA_odls_base_sigkill_timeout=${OMPI_MCA_odls_base_sigkill_timeout:-30}

# The launchers: srun through PMIx (or SRUN_MPI), or Open MPI's mpirun filling nodes in
# order (ranks numbered node by node, so tensor-parallel groups stay inside a node).
# shellcheck disable=SC2034  # used by the scripts that source this file
srun_step=(srun "--mpi=${SRUN_MPI:-pmix}" --cpu-bind=none --distribution=block:block)
mpirun_step=(mpirun -np "$SLURM_NTASKS" --bind-to none -x OMP_NUM_THREADS)
# Without --ntasks-per-node, mpirun fills the allocation's slots node by node itself.
[[ -z ${SLURM_NTASKS_PER_NODE:-} ]] || mpirun_step+=(--map-by "ppr:$SLURM_NTASKS_PER_NODE:node")
# Open MPI refuses root (a container's user) unless told; srun needs nothing.
[[ $(id -u) -ne 0 ]] || mpirun_step+=(--allow-run-as-root)

# llmft_args ARGS...: sets `llmft_args` to the workload of the variables, then ARGS; a
# variable's option is left out when ARGS name it.
llmft_args() {
  llmft_forwarded=("$@")
  llmft_args=()
  : "${DATA:?set DATA to a token file made by llmft prepare}"
  : "${WEIGHTS:?set WEIGHTS to the model directory or .safetensors to start from (none: random weights)}"
  local weights=$WEIGHTS
  [[ $weights != none ]] || weights=""
  llmft_option --device "${DEVICE:-cuda}"
  llmft_option --model "${MODEL:-}"
  llmft_option --init-from "$weights"
  llmft_option --data "$DATA"
  llmft_option --dtype "${DTYPE:-bf16}"
  llmft_option --optimizer "${OPTIMIZER:-adamw}"
  llmft_option --seq-len "${SEQ_LEN:-2048}"
  llmft_option --global-batch "${GLOBAL_BATCH:-64}"
  llmft_option --steps "${STEPS:-1000}"
  llmft_option --lr "${LR:-2e-5}"
  llmft_option --warmup "${WARMUP:-50}"
  llmft_args+=("${llmft_forwarded[@]}")
}

# llmft_option NAME VALUE: adds NAME VALUE to `llmft_args` unless VALUE is empty or the
# arguments given to llmft_args name NAME (as NAME or NAME=...).
llmft_option() {
  local arg
  [[ -n $2 ]] || return 0
  for arg in "${llmft_forwarded[@]}"; do
    [[ $arg != "$1" && $arg != "$1="* ]] || return 0
  done
  llmft_args+=("$1" "$2")
}

# run_step COMMAND...: runs the job step (srun or mpirun) in the background and returns
# its exit code. A SIGUSR1 that reaches the batch shell alone (`--signal=B:USR1@...`,
# `scancel --signal=USR1 --batch`) goes on to the step, which srun and mpirun forward to
# every rank, and the ranks save and stop; the shell lives on to see how the step ended.
# SIGTERM is left alone: it reaches the shell when the job is cancelled or out of time,
# and then the job ends (the ranks get it too, and save).
run_step() {
  "$@" &
  local step=$! code=0
  # shellcheck disable=SC2064  # the step's pid, fixed now
  trap "kill -USR1 $step 2> /dev/null" USR1
  wait "$step" || code=$?
  # A trapped signal ends `wait` early: wait again until the step itself has ended.
  while kill -0 "$step" 2> /dev/null; do
    code=0
    wait "$step" || code=$?
  done
  trap - USR1
  return "$code"
}
