#!/usr/bin/env bash
# The launch agent onto a simulated host of tests/cluster/multinode_hosts.sh, standing in
# for ssh: `multinode_agent.sh HOST COMMAND...` joins COMMAND's words with spaces and runs
# them through sh, as ssh's remote shell would, inside HOST's network namespace (its
# address on the private bridge; `ip netns exec` puts the namespace's own hosts file over
# /etc/hosts) and a UTS namespace of its own whose host name is HOST. Open MPI's rsh
# launcher calls it (--mca plm_rsh_agent) to start its daemon on each host but the first;
# the tests call it to start mpirun itself on the first host.
set -euo pipefail
if [[ $# -lt 2 ]]; then
  echo "usage: multinode_agent.sh HOST COMMAND..." >&2
  exit 2
fi
host=$1
shift
if ! ip netns list | awk '{print $1}' | grep -qx -- "$host"; then
  echo "multinode_agent.sh: '$host' is no simulated host (no network namespace of that name);" \
    "start the hosts with multinode_start in tests/cluster/multinode_hosts.sh" >&2
  exit 2
fi
# shellcheck disable=SC2016  # expanded by the inner shell
exec ip netns exec "$host" unshare --uts -- sh -c 'hostname "$1" && shift && exec sh -c "$*"' \
  multinode_agent "$host" "$@"
