# shellcheck shell=bash
# Sourced by the SLURM cluster test: a two-node SLURM cluster on this host, run by the
# current user from one directory: munged with its own key and socket, slurmctld and one
# slurmd per node (node1, node2), all on free ports, with no systemd, cgroups or
# accounting daemon (proctrack/linuxproc, task/none, select/cons_tres,
# accounting_storage/none).
#   slurm_start DIR   writes DIR/slurm.conf for this host, starts the daemons and waits
#                     (bounded) for the nodes to be idle; exports SLURM_CONF so that sbatch,
#                     squeue and scontrol use this cluster. Returns 77, saying why, when a
#                     daemon cannot start here; 1 on any other failure.
#   slurm_stop        cancels every job, stops the daemons (SIGTERM, a bounded wait, then
#                     SIGKILL) and removes DIR; safe to call twice and from an EXIT trap.
# A requeued job waits cred_expire + 1 seconds before it starts again (SLURM's rule, so
# that no step credential of the earlier run is replayed): the default 120 s is set to
# slurm_cred_expire here. Nothing schedules it when that wait ends but the main scheduling
# loop, every sched_interval seconds (60 by default, a minute lost per requeue): 2 here.
slurm_dir=""
slurm_pids=()
slurm_cred_expire=10
# The nodes: slurm_nodes slurmd daemons on this host (Debian's slurmd runs several, one per
# node name, each on its own port), each with all of this host's CPUs.
slurm_nodes=2
slurm_cpus=$(nproc)
slurm_node_names=()

# A TCP port nobody listens on now.
slurm_free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("", 0)); print(s.getsockname()[1])'
}

slurm_write_conf() {
  local host=$1 user=$2
  local memory_mib
  memory_mib=$(awk '/^MemTotal:/ { print int($2 / 1024 / 2) }' /proc/meminfo)
  cat > "$slurm_dir/slurm.conf" <<EOF
ClusterName=llmfttest
SlurmctldHost=$host
SlurmctldPort=$(slurm_free_port)
SlurmdPort=$(slurm_free_port)
SlurmUser=$user
SlurmdUser=$user
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$slurm_dir/munge/socket,cred_expire=$slurm_cred_expire
StateSaveLocation=$slurm_dir/state
SlurmdSpoolDir=$slurm_dir/spool/%n
SlurmctldPidFile=$slurm_dir/slurmctld.pid
SlurmdPidFile=$slurm_dir/slurmd-%n.pid
SlurmctldLogFile=$slurm_dir/slurmctld.log
SlurmdLogFile=$slurm_dir/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
SchedulerParameters=sched_interval=2
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
KillWait=30
MinJobAge=600
InactiveLimit=0
EOF
  local node
  for node in "${slurm_node_names[@]}"; do
    echo "NodeName=$node NodeHostname=$host Port=$(slurm_free_port) CPUs=$slurm_cpus" \
      "RealMemory=$memory_mib State=UNKNOWN" >> "$slurm_dir/slurm.conf"
  done
  local nodes="${slurm_node_names[*]}"
  echo "PartitionName=test Nodes=${nodes// /,} Default=YES MaxTime=INFINITE State=UP" \
    >> "$slurm_dir/slurm.conf"
}

# slurm_wait_for SECONDS COMMAND...: runs COMMAND once a second until it succeeds; fails
# after SECONDS.
slurm_wait_for() {
  local seconds=$1
  shift
  local i
  for ((i = 0; i < seconds; ++i)); do
    "$@" > /dev/null 2>&1 && return 0
    sleep 1
  done
  return 1
}

slurm_nodes_idle() { [[ $(sinfo -h -N -o '%T' | grep -cx idle) -eq $slurm_nodes ]]; }
slurm_no_jobs() { [[ -z $(squeue -h -o '%i' 2> /dev/null) ]]; }

# slurm_skip WHY LOG: reports the test skipped (77) with the log's last lines.
slurm_skip() {
  echo "skipped: $1"
  [[ ! -f $2 ]] || tail -n 5 "$2"
  return 77
}

slurm_start() {
  slurm_dir=$1
  local tool
  for tool in munged slurmctld slurmd sbatch squeue scontrol sinfo python3; do
    command -v "$tool" > /dev/null ||
      { echo "skipped: no $tool here (scripts/install_deps.sh installs it)"; return 77; }
  done
  mkdir -p "$slurm_dir/munge" "$slurm_dir/state" "$slurm_dir/spool"
  chmod 700 "$slurm_dir" "$slurm_dir/munge"
  local host user
  host=$(hostname -s)
  user=$(id -un)
  local i node
  slurm_node_names=()
  for ((i = 1; i <= slurm_nodes; ++i)); do slurm_node_names+=("node$i"); done
  slurm_write_conf "$host" "$user"
  export SLURM_CONF=$slurm_dir/slurm.conf

  head -c 1024 /dev/urandom > "$slurm_dir/munge/key"
  chmod 400 "$slurm_dir/munge/key"
  munged --force --key-file="$slurm_dir/munge/key" --socket="$slurm_dir/munge/socket" \
    --pid-file="$slurm_dir/munge/pid" --log-file="$slurm_dir/munge/log" \
    --seed-file="$slurm_dir/munge/seed" ||
    { slurm_skip "munged cannot start here" "$slurm_dir/munge/log"; return; }
  slurm_pids+=("$(cat "$slurm_dir/munge/pid")")

  slurmctld -i -f "$SLURM_CONF" ||
    { slurm_skip "slurmctld cannot start here" "$slurm_dir/slurmctld.log"; return; }
  slurm_wait_for 20 test -s "$slurm_dir/slurmctld.pid" ||
    { slurm_skip "slurmctld wrote no pid file in 20 s" "$slurm_dir/slurmctld.log"; return; }
  slurm_pids+=("$(cat "$slurm_dir/slurmctld.pid")")
  for node in "${slurm_node_names[@]}"; do
    mkdir -p "$slurm_dir/spool/$node"
    slurmd -N "$node" -f "$SLURM_CONF" ||
      { slurm_skip "slurmd for $node cannot start here" "$slurm_dir/slurmd-$node.log"; return; }
    slurm_wait_for 20 test -s "$slurm_dir/slurmd-$node.pid" ||
      { slurm_skip "slurmd wrote no pid file in 20 s" "$slurm_dir/slurmd-$node.log"; return; }
    slurm_pids+=("$(cat "$slurm_dir/slurmd-$node.pid")")
  done
  slurm_wait_for 60 slurm_nodes_idle ||
    { slurm_skip "the nodes are not idle after 60 s: $(sinfo -h -N -o '%N %T %E' | paste -sd' ')" \
        "$slurm_dir/slurmctld.log"; return; }
  echo "slurm: nodes ${slurm_node_names[*]} on $host idle ($slurm_cpus CPUs each)," \
    "configuration $SLURM_CONF"
}

slurm_stop() {
  [[ -n $slurm_dir ]] || return 0
  if [[ ${#slurm_pids[@]} -gt 1 ]]; then
    scancel --partition=test > /dev/null 2>&1 || true
    slurm_wait_for 40 slurm_no_jobs || echo "slurm: jobs still there after 40 s: $(squeue -h)"
  fi
  local pid i
  # Newest first: slurmd, slurmctld, munged.
  for ((i = ${#slurm_pids[@]} - 1; i >= 0; --i)); do
    pid=${slurm_pids[$i]}
    kill -TERM "$pid" 2> /dev/null || continue
    slurm_wait_for 15 bash -c "! kill -0 $pid" || kill -KILL "$pid" 2> /dev/null || true
  done
  slurm_pids=()
  rm -rf "$slurm_dir"
  slurm_dir=""
}
