# tap.sh - the result lines of the shell tests, sourced by the test_*.sh scripts: "ok -
# NAME", "FAIL - NAME" followed by the tail of a log, and check and expect_exit, which run a
# command and keep its output in $scratch/out. There is no skip: a check that cannot run fails (see
# require). The sourcing script sets scratch and starts passed and failed at 0, or has
# daemon_test do it. For the scripts that start a daemon: daemon_test, wait_answering and
# stop_daemon, on $pid, $FDTUNE and $LOG.

# daemon_test NAME: what a script that runs fdtuned on a temporary socket sets first:
# FDTUNED and FDTUNE from $BUILD (default build), a new folder $dir (/tmp/fdt-NAME-*) that
# is the scratch and holds the socket (FDTUNE_SOCKET) and $LOG, the counts at 0; and at
# exit the daemon $pid killed, then whatever $also_kill lists, then $dir removed.
# The cpu backend's kernels run on one OpenMP thread: tests run side by side, and a worker
# whose two threads meet at every launch's barrier on an oversubscribed host waits a time
# slice there, stretching a launch, and a sample calibrated from one, tens of times (two
# copies of test_watchdog.sh side by side sat 9 minutes in a leaders round of 12 s).
daemon_test() {
    BUILD=${BUILD:-build}
    FDTUNED=$BUILD/fdtuned
    FDTUNE=$BUILD/fdtune
    export OMP_NUM_THREADS=1
    dir=$(mktemp -d "/tmp/fdt-$1-XXXXXX")
    scratch=$dir
    export FDTUNE_SOCKET="$dir/fdtuned.sock"
    LOG=$dir/fdtuned.log
    pid=""
    also_kill=""
    passed=0
    failed=0
    trap end_daemon_test EXIT
}

end_daemon_test() {
    [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
    for p in $also_kill; do kill "$p" 2>/dev/null; done
    rm -rf "$dir"
}

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

# require COMMAND...: the commands a test cannot check without; one missing ends the run
# at once as a failure naming it (scripts/install-deps.sh installs them all), never a skip
# that leaves the run green.
require() {
    for c in "$@"; do
        if ! command -v "$c" >/dev/null 2>&1; then
            echo "FAIL - $0 needs $c, which is not installed: run scripts/install-deps.sh"
            exit 1
        fi
    done
}

# root_or_userns ARGS: what a script that needs other uids runs first, with its own
# arguments. Run by root, it returns; run by anyone else, it runs the script again as root
# of a user namespace of its own (unshare --map-auto --map-root-user), where the user's
# subordinate uids are the other users, or fails saying why: it never skips.
root_or_userns() {
    [ "$(id -u)" -eq 0 ] && return 0
    require unshare newuidmap
    if [ -n "${FDT_IN_USERNS:-}" ]; then
        echo "FAIL - root inside the user namespace: still uid $(id -u)"
        exit 1
    fi
    # exec failing ends the script with unshare's error: a failure, never a skip.
    FDT_IN_USERNS=1 exec unshare --map-auto --map-root-user sh "$0" "$@"
}

# check NAME COMMAND...: the command succeeds.
check() {
    name=$1
    shift
    if "$@" >"$scratch/out" 2>&1; then ok "$name"; else not_ok "$name" "$scratch/out"; fi
}

# expect_exit NAME WANT_RC TEXT COMMAND...: the command exits WANT_RC and says TEXT (a
# fixed string) on stdout or stderr.
expect_exit() {
    name=$1 want=$2 text=$3
    shift 3
    "$@" >"$scratch/out" 2>&1
    rc=$?
    if [ $rc -eq "$want" ] && grep -qF -- "$text" "$scratch/out"; then
        ok "$name"
    else
        echo "(exit $rc, wanted $want and: $text)" >>"$scratch/out"
        not_ok "$name" "$scratch/out"
    fi
}

# answering PID NAME LOG COMMAND...: waits until COMMAND (a status through the daemon PID)
# succeeds; if the daemon exits first or never answers, NAME fails with LOG's tail and the
# answer is 1. Ten minutes at most: a first start measures each device's balance before it
# opens its socket, a second unloaded and far longer when other tests share the cores with
# its worker (nice 19); a daemon that exits is seen at once.
answering() {
    answer_pid=$1 answer_name=$2 answer_log=$3
    shift 3
    i=0
    until "$@" >/dev/null 2>&1; do
        i=$((i + 1))
        if [ $i -gt 6000 ] || ! kill -0 "$answer_pid" 2>/dev/null; then
            not_ok "$answer_name" "$answer_log"
            return 1
        fi
        sleep 0.1
    done
}

# wait_answering: until the daemon $pid answers `$FDTUNE status`, else the test ends.
wait_answering() {
    answering "$pid" "fdtuned starts" "$LOG" "$FDTUNE" status || exit 1
}

# field NAME: the value of a string or number field in a one-line JSON answer on stdin.
field() {
    sed -n "s/.*\"$1\":\"\{0,1\}\([^\",}]*\).*/\1/p" | head -1
}

# job_state JOB, job_finished JOB: a job's state as `fdtune status` gives it; whether it ended.
job_state() {
    "$FDTUNE" status "$1" --json | field state
}

job_finished() {
    case $(job_state "$1") in done | failed | cancelled) return 0 ;; *) return 1 ;; esac
}

# wait_until SECONDS COMMAND...: 0 once COMMAND succeeds, 1 if it has not within SECONDS.
wait_until() {
    limit=$1
    shift
    i=0
    while ! "$@" >/dev/null 2>&1; do
        i=$((i + 1))
        [ $i -gt $((limit * 10)) ] && return 1
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
