# tap.sh - the result lines of the shell tests, sourced by test_daemon.sh, test_balance.sh,
# test_export.sh and test_install.sh: "ok - NAME", "FAIL - NAME" followed by the tail of a
# log, "skip - NAME", and check, which runs a command and keeps its output in $scratch/out.
# The sourcing script sets scratch and starts passed, failed and skipped at 0. For the
# scripts that start a daemon: wait_answering and stop_daemon, on $pid, $FDTUNE and $LOG.

ok() {
    passed=$((passed + 1))
    echo "ok - $1"
}

not_ok() {
    failed=$((failed + 1))
    echo "FAIL - $1"
    [ -n "${2:-}" ] && [ -f "$2" ] && sed 's/^/    /' "$2" | tail -20
    return 0
}

skip() {
    skipped=$((skipped + 1))
    echo "skip - $1"
}

# check NAME COMMAND...: the command succeeds.
check() {
    name=$1
    shift
    if "$@" >"$scratch/out" 2>&1; then ok "$name"; else not_ok "$name" "$scratch/out"; fi
}

# wait_answering: until the daemon $pid answers `$FDTUNE status` (30 s at most); if it exits
# or never answers, the tail of $LOG and exit 1.
wait_answering() {
    i=0
    while ! "$FDTUNE" status >/dev/null 2>&1; do
        i=$((i + 1))
        if [ $i -gt 300 ] || ! kill -0 "$pid" 2>/dev/null; then
            echo "fdtuned did not start:"
            tail -20 "$LOG"
            exit 1
        fi
        sleep 0.1
    done
}

# stop_daemon: SIGTERM to $pid; returns its exit status and forgets it.
stop_daemon() {
    kill -TERM "$pid"
    wait "$pid"
    rc=$?
    pid=""
    return $rc
}
