# slurm_cluster.sh - a one-node Slurm cluster of a test's own, sourced by tests/test_slurm.sh:
# slurmctld and slurmd run in the foreground (-D) as children of the test, under a
# temporary directory, with AuthType=auth/none (no munged: any local process may claim any
# uid, so the cluster is for a throwaway test alone), on two free ports, as the user that
# runs the test (its SlurmUser and SlurmdUser: a non-root slurmd runs its own user's jobs
# alone). The settings are those /work/shared/slurm.md found to work on Debian 12's Slurm
# 22.05; every path is short, since Slurm's and fdtuned's Unix sockets are limited to 108
# bytes. Clients find it through SLURM_CONF, which cluster_start exports.
#
#   cluster_start DIR   starts it under DIR (made if missing), returns 0 once the node is
#                       idle; else 1, after naming what failed in $cluster_why
#   cluster_stop        scontrol shutdown, then the daemons waited for; what is left of
#                       them, or of their jobs, is killed by pid
#
# The daemons' pids are in $cluster_ctld and $cluster_slurmd; their logs are DIR/ctld.log
# and DIR/slurmd.log.
cluster_ctld=""
cluster_slurmd=""
cluster_dir=""
cluster_why=""

# cluster_free_port: a TCP port nothing listens on now (the kernel's pick for a bind to port
# 0 on every address, closed again). Another process may take it before slurmctld does:
# cluster_start then tries other ports.
cluster_free_port() {
    python3 -c 'import socket
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.bind(("", 0))
print(s.getsockname()[1])
s.close()'
}

# cluster_conf DIR HOST USER CTLD_PORT SLURMD_PORT NODE_LINE: writes DIR/slurm.conf and
# DIR/cgroup.conf. Each line is one slurm.md names: the scheduler runs every second
# (batch_sched_delay=0) and places jobs by core (cons_tres, CR_Core) so that two run at
# once on two cores; finished jobs stay in scontrol for 10 minutes and in sacct -c's file
# (JobCompType=jobcomp/filetxt: no slurmdbd).
cluster_conf() {
    cat >"$1/slurm.conf" <<EOF
ClusterName=fdt
SlurmctldHost=$2(127.0.0.1)
SlurmctldPort=$4
SlurmdPort=$5
SlurmUser=$3
SlurmdUser=$3
AuthType=auth/none
CredType=cred/none
StateSaveLocation=$1/state
SlurmdSpoolDir=$1/spool
SlurmctldPidFile=$1/ctld.pid
SlurmdPidFile=$1/slurmd.pid
SlurmctldLogFile=$1/ctld.log
SlurmdLogFile=$1/slurmd.log
MailProg=/bin/true
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/filetxt
JobCompLoc=$1/jobcomp
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerParameters=batch_sched_delay=0
MinJobAge=600
ReturnToService=2
KillWait=10
$6
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
    printf 'CgroupPlugin=cgroup/v1\nCgroupAutomount=no\n' >"$1/cgroup.conf"
}

# cluster_node_state: the node's state as sinfo gives it (idle, mixed, alloc, down...).
cluster_node_state() {
    sinfo -h -N -o '%t' 2>/dev/null | head -1
}

# cluster_try DIR HOST USER: one start on two fresh ports; 0 once the node is idle, 1
# (the daemons stopped) if either exits or the node is not idle within 30 s.
cluster_try() {
    if ! ctld_port=$(cluster_free_port) || ! slurmd_port=$(cluster_free_port); then
        cluster_why="no free port (python3 could not bind one)"
        return 1
    fi
    [ "$ctld_port" != "$slurmd_port" ] || slurmd_port=$(cluster_free_port)
    node=$(slurmd -C 2>/dev/null | sed -n 's/ RealMemory=[0-9]*//; /^NodeName=/p')
    if [ -z "$node" ]; then
        cluster_why="slurmd -C does not describe the node"
        return 1
    fi
    # The node's name must be the one slurmd is started as (-N).
    node=$(echo "$node" | sed "s/^NodeName=[^ ]*/NodeName=$2/")
    cluster_conf "$1" "$2" "$3" "$ctld_port" "$slurmd_port" "$node"
    rm -rf "$1/state" "$1/spool"
    mkdir -p "$1/state" "$1/spool"
    export SLURM_CONF="$1/slurm.conf"
    slurmctld -D -f "$SLURM_CONF" >>"$1/ctld.out" 2>&1 &
    cluster_ctld=$!
    slurmd -D -N "$2" -f "$SLURM_CONF" >>"$1/slurmd.out" 2>&1 &
    cluster_slurmd=$!
    i=0
    while [ "$(cluster_node_state)" != idle ]; do
        i=$((i + 1))
        if [ $i -gt 300 ] || ! kill -0 "$cluster_ctld" 2>/dev/null ||
            ! kill -0 "$cluster_slurmd" 2>/dev/null; then
            cluster_why="the node is not idle (ports $ctld_port and $slurmd_port): $(
                cluster_node_state) after $((i / 10)) s"
            cluster_kill
            return 1
        fi
        sleep 0.1
    done
    return 0
}

# cluster_start DIR: the cluster under DIR, up and idle; three tries on fresh ports, since
# a port found free may be taken by another process before the daemon binds it.
cluster_start() {
    cluster_dir=$1
    mkdir -p "$cluster_dir" || { cluster_why="cannot make $cluster_dir"; return 1; }
    # slurmctld and slurmd are in /usr/sbin, which a user's PATH may lack.
    PATH=$PATH:/usr/sbin:/sbin
    host=$(hostname -s)
    user=$(id -un)
    for c in slurmctld slurmd sbatch squeue scontrol scancel sinfo sacct; do
        if ! command -v "$c" >/dev/null 2>&1; then
            cluster_why="$c is not installed (scripts/install-deps.sh installs slurmctld, \
slurmd and slurm-client)"
            return 1
        fi
    done
    for try in 1 2 3; do
        cluster_try "$cluster_dir" "$host" "$user" && return 0
        echo "# cluster start $try failed: $cluster_why" >&2
    done
    return 1
}

# cluster_kill: the daemons killed with SIGKILL and reaped, by pid.
cluster_kill() {
    for p in $cluster_slurmd $cluster_ctld; do
        kill -KILL "$p" 2>/dev/null
        wait "$p" 2>/dev/null
    done
    cluster_slurmd=""
    cluster_ctld=""
}

# cluster_steps: the pids of the live slurmstepd processes of this cluster (a step has
# the cluster's SLURM_CONF in its environment, which slurmd passed on); never found by name
# alone, since other clusters may run beside this one. A step that has exited is left: a
# zombie of PID 1, whose parent slurmd left it, and nothing a kill can end.
cluster_steps() {
    for p in $(ps -eo pid= -o stat= -o comm= | awk '$3 == "slurmstepd" && $2 !~ /^Z/ {
        print $1 }'); do
        tr '\0' '\n' 2>/dev/null <"/proc/$p/environ" | grep -qx "SLURM_CONF=$SLURM_CONF" &&
            echo "$p"
    done
}

# cluster_stop: waits (30 s at most) for the queue to empty, since a slurmstepd left with a
# running job ignores SIGTERM; then scontrol shutdown and the daemons reaped (30 s at
# most); then anything left, daemons or steps, killed by pid.
cluster_stop() {
    [ -n "$cluster_ctld$cluster_slurmd" ] || return 0
    i=0
    while [ -n "$(squeue -h -o %i 2>/dev/null)" ] && [ $i -lt 300 ]; do
        i=$((i + 1))
        sleep 0.1
    done
    for job in $(squeue -h -o %i 2>/dev/null); do scancel "$job" 2>/dev/null; done
    scontrol shutdown >/dev/null 2>&1
    for p in $cluster_slurmd $cluster_ctld; do
        i=0
        while kill -0 "$p" 2>/dev/null && [ $i -lt 300 ]; do
            i=$((i + 1))
            sleep 0.1
        done
    done
    for p in $(cluster_steps); do kill -KILL "$p" 2>/dev/null; done
    cluster_kill
}
