#!/usr/bin/env bash
# Two simulated hosts (tests/cluster/multinode_hosts.sh) train as one host does:
#  - Open MPI starts the ranks on both hosts: `hostname` and MPI_Get_processor_name name
#    each rank's host, and the ranks sharing memory (llmft's node) are those of one host;
#  - 2 hosts x 1 rank (dp 2), 2 hosts x 2 ranks (dp 4) and the same with --tp 2 (dp 2 x
#    tp 2) write the same losses, bit for bit, as the same ranks on this machine alone
#    (same ranks, same reduction order: only the transport between the hosts differs),
#    and the run record lists each rank's host;
#  - the tensor-parallel groups stay within a host, also when mpirun deals the ranks out
#    round-robin (--map-by node): rank 0's stderr names each group's ranks and host.
# usage: multinode_losses.sh LLMFT WHOAMI SOURCE_DIR WORK_DIR MPIEXEC [MPIEXEC_FLAGS...]
set -uo pipefail
llmft=$1 whoami=$2 source_dir=$3 work=$4
shift 4
mpiexec=("$@")
# shellcheck source=tests/cluster/multinode_hosts.sh
source "$source_dir/tests/cluster/multinode_hosts.sh"
rm -rf "$work"
mkdir -p "$work"
multinode_start 2 "${mpiexec[@]}"
h1=${MULTINODE_HOSTS[0]} h2=${MULTINODE_HOSTS[1]}
"$llmft" prepare --input "$source_dir/examples/data/val.txt" --output "$work/text.tok" > /dev/null
failed=0
fail() {
  echo "FAILED: $*"
  failed=1
}

# Where the ranks run, as the system and as MPI see it.
names=$(multinode_mpirun 2 hostname | sort | uniq -c | awk '{print $2 "x" $1}' | paste -sd' ')
[[ $names == "${h1}x2 ${h2}x2" ]] || fail "hostname per rank: '$names', expected ${h1}x2 ${h2}x2"
places=$(multinode_mpirun 2 "$whoami")
expected_places="rank 0: processor $h1, node rank 0 of 2
rank 1: processor $h1, node rank 1 of 2
rank 2: processor $h2, node rank 0 of 2
rank 3: processor $h2, node rank 1 of 2"
[[ $places == "$expected_places" ]] || fail "MPI's places: '$places', expected '$expected_places'"
echo "$places"

training=(--model llama-tiny --data "$work/text.tok" --seq-len 32 --micro-batch 2 --steps 6
  --lr 3e-3 --warmup 2 --seed 7 --threads 1 --log-every 1)
losses() { grep '"step"' "$1" | sed -nE 's/.*"loss":([^,]*),.*/\1/p'; }

# compare CASE RANKS_PER_HOST HOSTS_JSON [MPIRUN_OPTIONS...] -- [LLMFT_OPTIONS...]
compare() {
  local case=$1 per_host=$2 hosts_json=$3 mpirun_options=() dir="$work/$1"
  shift 3
  while [[ $1 != -- ]]; do mpirun_options+=("$1"); shift; done
  shift
  mkdir -p "$dir"
  if ! timeout -k 10 120 "${mpiexec[@]}" -n $((2 * per_host)) --bind-to none "$llmft" \
    "${training[@]}" --metrics "$dir/one_host.jsonl" "$@" > "$dir/one_host.log" 2>&1; then
    fail "$case: the one-host run failed:"
    cat "$dir/one_host.log"
    return
  fi
  if ! multinode_mpirun "$per_host" --bind-to none "${mpirun_options[@]}" "$llmft" \
    "${training[@]}" --metrics "$dir/two_hosts.jsonl" "$@" > "$dir/two_hosts.log" 2>&1; then
    fail "$case: the two-host run failed:"
    cat "$dir/two_hosts.log"
    return
  fi
  losses "$dir/one_host.jsonl" > "$dir/one_host.loss"
  losses "$dir/two_hosts.jsonl" > "$dir/two_hosts.loss"
  if [[ $(wc -l < "$dir/two_hosts.loss") -ne 6 ]]; then
    fail "$case: the two-host run did not log 6 steps"
  elif cmp -s "$dir/one_host.loss" "$dir/two_hosts.loss"; then
    echo "$case: losses identical on one and two hosts: $(paste -sd' ' "$dir/two_hosts.loss")"
  else
    fail "$case: the losses differ (one host | two hosts):"
    paste "$dir/one_host.loss" "$dir/two_hosts.loss"
  fi
  head -n 1 "$dir/two_hosts.jsonl" | grep -qF "\"hosts\":$hosts_json" ||
    fail "$case: the run record does not list the hosts $hosts_json: $(head -c 600 "$dir/two_hosts.jsonl")"
}

compare dp2 1 "[\"$h1\",\"$h2\"]" --
compare dp4 2 "[\"$h1\",\"$h1\",\"$h2\",\"$h2\"]" --
compare dp2_tp2 2 "[\"$h1\",\"$h1\",\"$h2\",\"$h2\"]" -- --tp 2
compare dp2_tp2_round_robin 2 "[\"$h1\",\"$h2\",\"$h1\",\"$h2\"]" --map-by node -- --tp 2
for case in dp2_tp2 dp2_tp2_round_robin; do
  groups=$(grep -o 'tensor-parallel groups: .*' "$work/$case/two_hosts.log")
  [[ $groups == "tensor-parallel groups: "*"ranks 0,"*" on $h1"*" on $h2"* &&
    $groups != *" on $h1,$h2"* && $groups != *" on $h2,$h1"* ]] ||
    fail "$case: the tensor-parallel groups are not one per host: '$groups'"
done
exit $failed
