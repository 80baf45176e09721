#!/bin/sh
# test_watchdog.sh - what the node does to a running fdtuned must not cost a healthy worker
# or a stored result: the daemon paused (SIGSTOP) past its workers' heartbeat timeout, a
# SIGHUP that shortens the heartbeat under a running worker, and a store on a file system
# that fills during a job and has room again later. A real daemon on the cpu backend, a
# temporary socket and store.
# Usage: BUILD=build sh tests/test_watchdog.sh (as root or not: the store's small file system
# is mounted in a mount namespace of the test's own, inside a user namespace when not root).
set -u

# The whole script runs in a private mount namespace, so that the tmpfs it mounts is seen by
# its daemon alone and goes with it; unshare failing fails the test.
if [ -z "${FDT_WATCHDOG_NS:-}" ]; then
    export FDT_WATCHDOG_NS=1
    if [ "$(id -u)" -eq 0 ]; then
        exec unshare -m --propagation private sh "$0" "$@"
    fi
    exec unshare --map-auto --map-root-user -m sh "$0" "$@"
fi

. "$(dirname "$0")/tap.sh"
daemon_test watchdog
CONF=$dir/fdtuned.conf

# write_config HEARTBEAT_MS TIMEOUT_MS [LEADER_SAMPLES] [MIN_SAMPLE_MS]: few samples so that
# the cpu backend is quick (unless told how long a sample lasts), no bound on a measurement's
# spread (a loaded host would fail the jobs these tests need done), a deadline far beyond any
# variant here.
write_config() {
    cat >"$CONF.new" <<EOF
[worker]
heartbeat_ms = $1
heartbeat_timeout_ms = $2
variant_deadline_ms = 600000
[tuning]
samples = 3
min_sample_ms = ${4:-0.1}
leaders = 2
leader_samples = ${3:-4}
max_spread = 0
EOF
    mv "$CONF.new" "$CONF"
}

start_daemon() { # start_daemon DB
    : >"$LOG"
    "$FDTUNED" --config "$CONF" --socket "$FDTUNE_SOCKET" --db "$1" --backend cpu 2>>"$LOG" &
    pid=$!
    wait_answering
}

job_has_progress() { # job_has_progress JOB N: at least N variants measured
    done_count=$("$FDTUNE" status "$1" --json | field done)
    [ "${done_count:-0}" -ge "$2" ]
}

log_has() { grep -q "$1" "$LOG"; }

# The daemon runs: its process exists and is no zombie waiting to be reaped.
daemon_alive() {
    [ -e "/proc/$pid" ] && ! grep -q '^[0-9]* ([^)]*) Z' "/proc/$pid/stat"
}


# The pid of device 0's worker, 0 when it has none.
worker_pid() {
    "$FDTUNE" status --json | sed -n 's/.*"workers":\[{[^]]*"pid":\([0-9]*\).*/\1/p'
}

# first-pass result rows of the export, one "job,variant,status" per line
first_pass_rows() {
    "$FDTUNE" export --what results --format csv >"$dir/export.csv" || return 1
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
             $col["leader"] == 0 { print $col["job"] "," $col["variant"] "," $col["status"] }' \
        "$dir/export.csv"
}

# job_kept_whole JOB: the job is done and every variant of it is stored once, none timed out
# or crashed; says what it found otherwise.
job_kept_whole() {
    first_pass_rows >"$dir/rows"
    state=$(job_state "$1")
    total=$("$FDTUNE" status "$1" --json | field total)
    rows=$(grep -c "^$1," "$dir/rows")
    distinct=$(grep "^$1," "$dir/rows" | cut -d, -f2 | sort -u | wc -l)
    bad=$(grep -c "^$1,[^,]*,\(timeout\|crashed\)$" "$dir/rows")
    echo "job $1: $state, $rows results ($distinct variants) for $total, $bad timeout or crashed"
    [ "$state" = done ] && [ "$rows" -eq "${total:-0}" ] && [ "$distinct" -eq "$rows" ] &&
        [ "$bad" -eq 0 ]
}

# worker_kept NAME JOB: the job finished without a worker killed by the daemon.
worker_kept() {
    if wait_until 600 job_finished "$2" && job_kept_whole "$2" >"$dir/out" &&
        ! log_has "killing it"; then
        ok "$1 ($(cat "$dir/out"))"
    else
        grep -e "killing it" -e "fired" -e "stopped answering" "$LOG" >>"$dir/out"
        not_ok "$1" "$dir/out"
    fi
}

# --- the daemon paused for 1.2 times the heartbeat timeout ------------------------------------
# Its worker beats every 100 ms meanwhile, into a pipe the stopped daemon does not read: after
# SIGCONT those lines are read before the worker is judged, and the pause is not counted as
# the worker's silence.
write_config 100 2000
start_daemon "$dir/fdtuned.db"
job=$("$FDTUNE" tune 33 17 11 --family naive --subset 24 --json | field job)
if wait_until 300 job_has_progress "$job" 1 && [ "$(worker_pid)" -gt 0 ]; then
    kill -STOP "$pid"
    sleep 2.4
    kill -CONT "$pid"
    worker_kept "a daemon stopped for 1.2 times the heartbeat timeout keeps its healthy worker" "$job"
    if log_has "fired [0-9]* ms late"; then ok "the daemon saw its own pause"
    else not_ok "the daemon saw its own pause" "$LOG"; fi
else
    not_ok "the job to pause the daemon under started" "$LOG"
fi
stop_daemon

# --- SIGHUP shortens the heartbeat under a running worker ---------------------------------------
# The worker beats every 1000 ms, as it was started; the new settings (a beat every 100 ms,
# silent after 300) are for the workers started after the reload. Each sample lasts 1.5 s,
# so that while a variant is timed the worker sends its beats alone, 1000 ms apart: silent
# far past 300 ms, again and again, whatever the host's load; judged by the new timeout
# instead of its own, it would be killed.
write_config 1000 5000 4 1500
start_daemon "$dir/fdtuned.db"
job=$("$FDTUNE" tune 35 17 11 --family naive --subset 4 --json | field job)
if wait_until 300 job_has_progress "$job" 1 && [ "$(worker_pid)" -gt 0 ]; then
    old_worker=$(worker_pid)
    write_config 100 300 4 1500
    kill -HUP "$pid"
    if wait_until 60 log_has "SIGHUP: reloaded"; then
        worker_kept "a worker started with a 1000 ms beat is not judged by a reloaded 300 ms timeout" "$job"
    else
        not_ok "SIGHUP reloads the heartbeat settings" "$LOG"
    fi
    job=$("$FDTUNE" tune 37 17 11 --family naive --subset 2 --json | field job)
    wait_until 300 job_has_progress "$job" 1
    new_worker=$(worker_pid)
    if [ "${new_worker:-0}" -gt 0 ] && [ "$new_worker" != "$old_worker" ] &&
        tr '\0' ' ' <"/proc/$new_worker/cmdline" | grep -q -- "--heartbeat-ms 100 "; then
        ok "a worker started after the reload beats every 100 ms"
    else
        not_ok "a worker started after the reload beats every 100 ms (pid ${new_worker:-none})" "$LOG"
    fi
    wait_until 300 job_finished "$job"
else
    not_ok "the job to reload the daemon under started" "$LOG"
fi
stop_daemon

# --- the store's file system fills during a job ---------------------------------------------------
# A tmpfs of 16 MiB holds the store; once a batch has results a filler file takes every byte
# left. The daemon must neither crash nor lose a result: it pauses the jobs, says why, answers
# status and queries, and once the filler is gone the jobs resume and finish with every
# variant stored. Twice: with the running worker's next results the first writes refused;
# then in the first job's leaders round (long: 500 samples a leader) with the worker killed,
# frozen first so that it writes nothing more, and its replacement's first step, which blames
# no variant, the first write refused.
disk=$dir/disk
job_in_leaders() { "$FDTUNE" status "$1" --json | grep -q '"phase":"leaders"'; }
fill_disk_under_a_batch() { # fill_disk_under_a_batch WHEN SHAPE1 SHAPE2
    when=$1
    printf '%s\n%s\n' "$2" "$3" >"$dir/shapes"
    jobs=$("$FDTUNE" batch "$dir/shapes" --family naive --subset 24 --json |
        sed -n 's/.*"jobs":\[\([0-9,]*\)\].*/\1/p' | tr ',' ' ')
    first=${jobs%% *}
    case $when in
    "results coming") wait_for="job_has_progress $first 2" ;;
    *) wait_for="job_in_leaders $first" ;;
    esac
    if [ -z "$first" ] || ! wait_until 300 $wait_for; then
        not_ok "$when: the batch to fill the disk under started" "$LOG"
        return
    fi
    worker=$(worker_pid)
    pauses=$(grep -c "every job paused" "$LOG")
    [ "$when" = "a worker restarting" ] && kill -STOP "$worker"
    dd if=/dev/zero of="$disk/filler" bs=4k >/dev/null 2>&1 # to the last page
    [ "$when" = "a worker restarting" ] && kill -9 "$worker"
    # The log alone is read until the store refuses a write: a status request would try a
    # write of its own first.
    if wait_until 300 paused_or_gone &&
        daemon_alive && "$FDTUNE" status --json | grep -q '"writable":false' &&
        "$FDTUNE" status >"$dir/out" 2>&1 && "$FDTUNE" query 39 17 11 >>"$dir/out" 2>&1; then
        ok "$when, a full disk: the daemon pauses its jobs, says why, answers status and queries"
    else
        daemon_alive || { wait "$pid"; echo "fdtuned exited with status $?" >>"$LOG"; }
        not_ok "$when, a full disk: the daemon pauses its jobs, says why, answers status and queries" "$LOG"
    fi
    rm -f "$disk/filler"
    for job in $jobs; do
        if daemon_alive && wait_until 600 job_finished "$job" &&
            job_kept_whole "$job" >"$dir/out"; then
            ok "$when, with room again $(cat "$dir/out")"
        else
            not_ok "$when, with room again job $job finishes with every result stored" "$LOG"
        fi
    done
}
paused_or_gone() { ! daemon_alive || [ "$(grep -c "every job paused" "$LOG")" -gt "$pauses" ]; }
mkdir "$disk"
if mount -t tmpfs -o size=16m,mode=0700 tmpfs "$disk"; then
    write_config 100 2000 500
    start_daemon "$disk/fdtuned.db"
    fill_disk_under_a_batch "results coming" "39 17 11" "41 17 11"
    daemon_alive && fill_disk_under_a_batch "a worker restarting" "43 17 11" "45 17 11"
    daemon_alive && stop_daemon
    pid=""
    umount "$disk"
else
    not_ok "mount a tmpfs for the store (root, or a user namespace mapping root)"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
