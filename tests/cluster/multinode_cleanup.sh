#!/usr/bin/env bash
# The harness (tests/cluster/multinode_hosts.sh) removes what it made however a test ends.
# A child test makes 2 hosts and leaves an MPI job running on both (mpirun, its daemon, a
# rank each), then
#  - is sent SIGTERM (ctest's timeout, a user's kill): its EXIT trap must kill every
#    process in its hosts and remove the namespaces, the bridge and the hosts files;
#  - is sent SIGKILL (no trap runs): the next multinode_start must sweep all of that.
# Each wait is bounded (30 s for the child's job to start, 20 s for it to end).
# usage: multinode_cleanup.sh SOURCE_DIR WORK_DIR MPIEXEC [MPIEXEC_FLAGS...]
set -uo pipefail
source_dir=$1 work=$2
shift 2
harness=$source_dir/tests/cluster/multinode_hosts.sh
# shellcheck source=tests/cluster/multinode_hosts.sh
source "$harness"
rm -rf "$work"
mkdir -p "$work"
failed=0
fail() {
  echo "FAILED: $*"
  failed=1
}

# child_test: a test of its own that starts the hosts and a job on both, writes its id
# (the names' pid) to started, and waits.
child_test() {
  bash -c 'source "$1"; shift; multinode_start 2 "$@"
    multinode_mpirun 1 sleep 600 &
    echo $$ > "'"$work"'/started"; wait' child "$harness" "$@" > "$work/child.log" 2>&1 &
  child=$!
  for ((waited = 0; waited < 300; ++waited)); do
    [[ -s $work/started ]] && id=$(< "$work/started") &&
      [[ $(ip netns pids "lmn${id}h2" 2> /dev/null | wc -l) -ge 2 ]] && return 0  # daemon, rank
    sleep 0.1
  done
  fail "the child test did not start its job on both hosts:"
  cat "$work/child.log"
  exit 1
}

# running PID: whether PID is a process that has not ended (a zombie, killed but not yet
# reaped by its parent, has).
running() {
  local state
  state=$(awk '{print $3}' "/proc/$1/stat" 2> /dev/null)
  [[ -n $state && $state != Z ]]
}

# left_behind ID PIDS...: what of run ID is still there, once PIDS have had 10 s to end
# (SIGKILL takes effect when the kernel next schedules them).
left_behind() {
  local id=$1 pid waited
  shift
  for pid in "$@"; do
    for ((waited = 0; waited < 100; ++waited)); do
      running "$pid" || break
      sleep 0.1
    done
    running "$pid" && echo "process $pid ($(cat "/proc/$pid/comm" 2> /dev/null))"
  done
  ip netns list | awk '{print $1}' | grep "^lmn${id}h"
  ip -o link show | grep -oE "lmn${id}(br|v[0-9]+)\b"
  ls -d /etc/netns/lmn"${id}"h* 2> /dev/null
}

for signal in TERM KILL; do
  rm -f "$work/started"
  child_test "$@"
  mapfile -t pids < <(ip netns pids "lmn${id}h1"; ip netns pids "lmn${id}h2")
  kill -"$signal" "$child"
  for ((waited = 0; waited < 200; ++waited)); do
    kill -0 "$child" 2> /dev/null || break
    sleep 0.1
  done
  wait "$child"
  # After SIGKILL nothing ran the trap: the next start sweeps.
  if [[ $signal == KILL ]]; then multinode_start 1 "$@"; fi
  left=$(left_behind "$id" "${pids[@]}")
  if [[ -n $left ]]; then
    fail "SIG$signal left behind: $(echo "$left" | paste -sd' ')"
  else
    echo "SIG$signal: the ${#pids[@]} processes, 2 namespaces, bridge and hosts files are gone"
  fi
done
exit $failed
