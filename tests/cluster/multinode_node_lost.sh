#!/usr/bin/env bash
# A node lost mid-run ends the whole job, with a nonzero exit, within the comm timeout:
# 2 simulated hosts x 1 rank (tests/cluster/multinode_hosts.sh) train with
# --comm-timeout 20; once both have logged a step, every process of the second host
# (its Open MPI daemon and its rank) is killed. The job must end, nonzero, before
# the timeout and a margin for the abort to reach every rank (the bounded wait below);
# a job still running then has hung, the failure this test exists to catch.
# usage: multinode_node_lost.sh LLMFT SOURCE_DIR WORK_DIR MPIEXEC [MPIEXEC_FLAGS...]
set -uo pipefail
llmft=$1 source_dir=$2 work=$3
shift 3
comm_timeout=20
# After the timeout: MPI_Abort's teardown of the remaining ranks, seconds on a loaded
# machine.
margin=30
# shellcheck source=tests/cluster/multinode_hosts.sh
source "$source_dir/tests/cluster/multinode_hosts.sh"
rm -rf "$work"
mkdir -p "$work"
multinode_start 2 "$@"
"$llmft" prepare --input "$source_dir/examples/data/val.txt" --output "$work/text.tok" > /dev/null

MULTINODE_TIMEOUT=300 multinode_mpirun 1 --bind-to none "$llmft" --model llama-tiny \
  --data "$work/text.tok" --seq-len 32 --micro-batch 2 --steps 100000 --threads 1 \
  --log-every 1 --comm-timeout "$comm_timeout" --metrics "$work/metrics.jsonl" \
  > "$work/job.log" 2>&1 &
job=$!
steps() {
  local count
  count=$(grep -c '"step"' "$work/metrics.jsonl" 2> /dev/null)
  echo "${count:-0}"
}
for ((waited = 0; waited < 600 && $(steps) < 2; ++waited)); do
  kill -0 "$job" 2> /dev/null || break
  sleep 0.1
done
if [[ $(steps) -lt 2 ]]; then
  echo "FAILED: the job did not reach step 2:"
  cat "$work/job.log"
  exit 1
fi
multinode_kill_host "${MULTINODE_HOSTS[1]}"
killed_at=$SECONDS
for ((waited = 0; waited < (comm_timeout + margin) * 10; ++waited)); do
  kill -0 "$job" 2> /dev/null || break
  sleep 0.1
done
if kill -0 "$job" 2> /dev/null; then
  echo "FAILED: the job still runs $((comm_timeout + margin)) s after its second host was lost:"
  tail -n 20 "$work/job.log"
  exit 1
fi
wait "$job"
status=$?
echo "the job ended $((SECONDS - killed_at)) s after its second host was lost, exit $status:"
tail -n 5 "$work/job.log"
if [[ $status -eq 0 ]]; then
  echo "FAILED: the job exited 0 without one of its hosts"
  exit 1
fi
exit 0
