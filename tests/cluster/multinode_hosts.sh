# shellcheck shell=bash
# Simulated hosts on one machine, for the multi-node tests (docs/MULTINODE.md): sourced by
# a test script (bash), which then calls
#   multinode_start COUNT MPIEXEC [MPIEXEC_FLAGS...]
#       COUNT hosts, each a network namespace named like its host name
#       (lmn<test's pid>h<i>) with an address on a private bridge and an /etc/hosts naming
#       every host; sets MULTINODE_HOSTS and MULTINODE_SUBNET. Exits 77 (skipped) where
#       namespaces cannot be made here (not root, no CAP_SYS_ADMIN or CAP_NET_ADMIN).
#   multinode_on HOST COMMAND...      COMMAND (words, quoted as given) on HOST, under its
#                                     host name (tests/cluster/multinode_agent.sh), ended
#                                     after MULTINODE_TIMEOUT seconds (default 120) if still
#                                     running (exit 124), so that no test waits unbounded
#   multinode_mpirun RANKS_PER_HOST ARGS...
#                                     mpirun on the first host, RANKS_PER_HOST ranks on each
#                                     host (filled host by host), Open MPI launching its
#                                     daemons through the agent and talking TCP over the
#                                     bridge only; ARGS: more mpirun options, the program.
#                                     Waiting ranks yield the CPU (mpi_yield_when_idle):
#                                     the hosts share this machine's cores, which Open MPI,
#                                     counting each host's slots, would not know, and
#                                     ranks spinning in MPI calls starve the others (a
#                                     10 MB checkpoint of 4 ranks on 2 cores: 40 s, 1.6 s
#                                     yielding)
#   multinode_kill_host HOST          SIGKILL to every process in HOST's namespace
# Everything is removed when the script exits, however it exits (the EXIT trap, which the
# harness owns; INT and TERM exit through it): the processes in the namespaces, the
# namespaces, the bridge and its veths, the hosts files. A run killed outright (SIGKILL,
# no trap) is swept by the next multinode_start: its names carry a pid no longer alive.

multinode_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
multinode_agent=$multinode_dir/multinode_agent.sh
MULTINODE_HOSTS=()
MULTINODE_SUBNET=
multinode_id=
multinode_mpiexec=()

multinode_skip() {
  echo "skipped: simulated hosts cannot be made here: $*"
  exit 77
}

# Removes the namespaces, bridge and hosts files of run ID (hosts lmnIDh*, bridge lmnIDbr),
# after killing every process in its namespaces (bounded: 10 s for them to go).
multinode_remove() {
  local id=$1 ns pids tries
  for ns in $(ip netns list | awk '{print $1}' | grep -x "lmn${id}h[0-9]*"); do
    for ((tries = 0; tries < 100; ++tries)); do
      pids=$(ip netns pids "$ns" 2> /dev/null)
      [[ -z $pids ]] && break
      # shellcheck disable=SC2086  # one pid a word
      kill -KILL $pids 2> /dev/null
      sleep 0.1
    done
    ip netns del "$ns" 2> /dev/null
    rm -rf "/etc/netns/$ns"
  done
  ip link del "lmn${id}br" 2> /dev/null
  return 0
}

multinode_stop() {
  [[ -n $multinode_id ]] && multinode_remove "$multinode_id"
  multinode_id=
}

# The runs whose test process is gone (killed without its trap) leave their names behind.
multinode_sweep() {
  local id
  for id in $(ip netns list | awk '{print $1}' | sed -nE 's/^lmn([0-9]+)h[0-9]+$/\1/p' | sort -u); do
    kill -0 "$id" 2> /dev/null || multinode_remove "$id"
  done
}

# A /24 of 10.213.0.0/16 that no address or route of this machine's own namespace covers
# (a default route aside), so that the hosts' addresses cannot shadow one in use.
multinode_free_subnet() {
  local x third
  for ((x = 0; x < 256; ++x)); do
    third=$(((multinode_id + x) % 256))
    # shellcheck disable=SC2143  # grep -q could end ip early, failing the pipe (pipefail)
    if [[ -z $(ip -4 -o addr show | grep "inet 10\.213\.$third\.") &&
      -z $(ip -4 route show match "10.213.$third.1" | grep -v '^default') ]]; then
      echo "10.213.$third"
      return 0
    fi
  done
  return 1
}

multinode_start() {
  local count=$1 i h ns prefix
  shift
  multinode_mpiexec=("$@")
  [[ $(id -u) -eq 0 ]] || multinode_skip "network namespaces need root"
  if ! command -v ip > /dev/null || ! command -v unshare > /dev/null; then
    multinode_skip "ip (iproute2) or unshare (util-linux) is missing; run scripts/install_deps.sh"
  fi
  multinode_sweep
  multinode_id=$$
  trap multinode_stop EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  prefix=$(multinode_free_subnet) || { echo "FAILED: no free /24 in 10.213.0.0/16"; exit 1; }
  MULTINODE_SUBNET=$prefix.0/24
  ip link add "lmn${multinode_id}br" type bridge 2> /dev/null ||
    multinode_skip "cannot create a bridge (needs CAP_NET_ADMIN)"
  ip link set "lmn${multinode_id}br" up
  MULTINODE_HOSTS=()
  for ((i = 1; i <= count; ++i)); do MULTINODE_HOSTS+=("lmn${multinode_id}h$i"); done
  for ((i = 1; i <= count; ++i)); do
    ns=${MULTINODE_HOSTS[i - 1]}
    ip netns add "$ns" 2> /dev/null || multinode_skip "cannot create a network namespace"
    ip link add "lmn${multinode_id}v$i" type veth peer name eth0 netns "$ns" 2> /dev/null ||
      multinode_skip "cannot create a veth pair"
    ip link set "lmn${multinode_id}v$i" master "lmn${multinode_id}br" up
    ip -n "$ns" addr add "$prefix.$((10 + i))/24" dev eth0
    ip -n "$ns" link set lo up
    ip -n "$ns" link set eth0 up
    mkdir -p "/etc/netns/$ns"
    {
      echo "127.0.0.1 localhost"
      for ((h = 1; h <= count; ++h)); do echo "$prefix.$((10 + h)) ${MULTINODE_HOSTS[h - 1]}"; done
    } > "/etc/netns/$ns/hosts"
  done
  multinode_on "${MULTINODE_HOSTS[0]}" true 2> /dev/null ||
    multinode_skip "cannot enter a namespace with its own host name (unshare --uts)"
}

multinode_on() {
  local host=$1
  shift
  timeout -k 10 "${MULTINODE_TIMEOUT:-120}" "$multinode_agent" "$host" "$(printf '%q ' "$@")"
}

multinode_mpirun() {
  local per_host=$1 hosts=() host
  shift
  for host in "${MULTINODE_HOSTS[@]}"; do hosts+=("$host:$per_host"); done
  multinode_on "${MULTINODE_HOSTS[0]}" "${multinode_mpiexec[@]}" \
    -n $((per_host * ${#MULTINODE_HOSTS[@]})) --host "$(IFS=,; echo "${hosts[*]}")" \
    --mca plm_rsh_agent "$multinode_agent" --mca plm_rsh_no_tree_spawn 1 \
    --mca btl_tcp_if_include "$MULTINODE_SUBNET" --mca oob_tcp_if_include "$MULTINODE_SUBNET" \
    --mca mpi_yield_when_idle 1 "$@"
}

multinode_kill_host() {
  local pids
  pids=$(ip netns pids "$1")
  # shellcheck disable=SC2086  # one pid a word
  [[ -z $pids ]] || kill -KILL $pids 2> /dev/null
  return 0
}
