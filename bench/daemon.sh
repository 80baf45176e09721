# shellcheck shell=bash
# bench/daemon.sh - sourced by the GPU bench scripts (h100.sh, throughput.sh, two_gpus.sh):
# fdtuned from the STATIC=1 build on the cuda backend (or $BACKEND), started one way everywhere.

# daemon_start LOG [fdtuned options]: fdtuned on $FDTUNE_SOCKET (the caller's), its stderr
# appended to LOG, in a session of its own so that a signal meant for the script does not
# reach it (and a SIGKILL meant for it reaches it alone); returns once it answers, its pid in
# DAEMON_PID, or exits the script if fdtuned exits first.
daemon_start() {
    local log=$1
    shift
    setsid build-static/fdtuned --socket "$FDTUNE_SOCKET" --backend "${BACKEND:-cuda}" "$@" 2>>"$log" &
    DAEMON_PID=$!
    until build-static/fdtune status >/dev/null 2>&1; do
        kill -0 "$DAEMON_PID" 2>/dev/null || { echo "fdtuned exited: $log" >&2; exit 1; }
        sleep 0.2
    done
}
