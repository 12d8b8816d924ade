#!/usr/bin/env bash
# Node-local placement on two simulated hosts (tests/cluster/multinode_hosts.sh):
#  - --threads 0 shares a host's CPUs among that host's ranks only (launch/cpu_share.h):
#    one rank on each of 2 hosts takes every CPU, as one rank alone does, where 2 ranks on
#    one host take half each; 2 ranks on each host take half each;
#  - the plan (--auto-plan --plan-only) counts each host's ranks as its devices per node;
#  - the calibration (its own cache) measures the intra-node link
#    over the ranks of a host and the inter-node link across hosts, each only where it
#    exists: the cache entry has an intra-node all-reduce bandwidth only where a host has
#    2 ranks, an inter-node one only on 2 hosts (an unmeasured link's bandwidth is 0,
#    launch/calibration_cache.h).
# usage: multinode_placement.sh LLMFT SOURCE_DIR WORK_DIR MPIEXEC [MPIEXEC_FLAGS...]
set -uo pipefail
llmft=$1 source_dir=$2 work=$3
shift 3
mpiexec=("$@")
# shellcheck source=tests/cluster/multinode_hosts.sh
source "$source_dir/tests/cluster/multinode_hosts.sh"
rm -rf "$work"
mkdir -p "$work"
multinode_start 2 "${mpiexec[@]}"
"$llmft" prepare --input "$source_dir/examples/data/val.txt" --output "$work/text.tok" > /dev/null
failed=0
fail() {
  echo "FAILED: $*"
  failed=1
}

# launch HOSTS RANKS_PER_HOST PROGRAM...: on this machine alone (HOSTS 1) or on the
# simulated hosts (HOSTS 2), ranks not bound (each may run on every CPU).
launch() {
  local host_count=$1 per_host=$2
  shift 2
  if [[ $host_count -eq 1 ]]; then
    timeout -k 10 120 "${mpiexec[@]}" -n "$per_host" --bind-to none "$@"
  else
    multinode_mpirun "$per_host" --bind-to none "$@"
  fi
}

all=$(nproc)
half=$((all / 2 > 0 ? all / 2 : 1))
# threads HOSTS RANKS_PER_HOST EXPECTED
threads() {
  local line
  line=$(launch "$1" "$2" "$llmft" --data "$work/text.tok" --seq-len 16 --micro-batch 1 \
    --steps 1 2>&1 | grep -o 'cpu, [0-9]* threads per rank')
  if [[ $line == "cpu, $3 threads per rank" ]]; then
    echo "$1 host(s) x $2 rank(s): $line"
  else
    fail "$1 host(s) x $2 rank(s): '$line', expected $3 threads per rank"
  fi
}
threads 1 2 "$half"
threads 2 1 "$all"
threads 2 2 "$half"

# links HOSTS RANKS_PER_HOST INTRA INTER: whether the calibration measured each link
# (yes: an all-reduce bandwidth above 0; no: 0).
links() {
  local cache="$work/calibration_$1x$2.json" measured
  if ! LLMFT_CALIBRATION_CACHE=$cache launch "$1" "$2" "$llmft" --auto-plan --plan-only \
    --model llama-tiny --data "$work/text.tok" --seq-len 32 --global-batch 8 --threads 1 \
    > "$work/plan_$1x$2.log" 2>&1; then
    fail "$1 host(s) x $2 rank(s): the plan failed:"
    cat "$work/plan_$1x$2.log"
    return
  fi
  measured=$(python3 -c '
import json, sys
entry = next(iter(json.load(open(sys.argv[1]))["entries"].values()))
print(" ".join("yes" if entry[link]["all_reduce"]["bandwidth"] > 0 else "no"
               for link in ("intra_node", "inter_node")))' "$cache")
  grep -q "^devices: $(($1 * $2)) x cpu, .*, $2 per node" "$work/plan_$1x$2.log" ||
    fail "$1 host(s) x $2 rank(s): the plan does not count $2 device(s) per node:" \
      "$(grep '^devices:' "$work/plan_$1x$2.log")"
  if [[ $measured == "$3 $4" ]]; then
    echo "$1 host(s) x $2 rank(s): intra-node link measured: $3, inter-node: $4"
  else
    fail "$1 host(s) x $2 rank(s): intra-node, inter-node measured: '$measured', expected '$3 $4'"
  fi
}
links 1 2 yes no
links 2 1 no yes
links 2 2 yes yes
exit $failed
