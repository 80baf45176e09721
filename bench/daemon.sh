# shellcheck shell=bash
# bench/daemon.sh - sourced by the GPU bench scripts (h100.sh, hip_nvidia.sh, throughput.sh,
# two_gpus.sh, wave.sh, report_gpu.sh): fdtuned from the STATIC=1 build on the cuda backend
# (or $BACKEND), started one way everywhere; a command's output kept with the command; a
# solver's runs on one problem.

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

# run NAME COMMAND...: COMMAND (at most $LIMIT seconds where that is set), its output headed
# by the command and followed by its exit status, appended to $OUT/NAME.txt and shown.
run() {
    local name=$1
    shift
    { echo "\$ $*"; timeout "${LIMIT:-0}" "$@" 2>&1; echo "exit status: $?"; echo; } |
        tee -a "$OUT/$name.txt"
}

# solver_runs NAME HEAT PROBLEM...: the problem (fdtune's arguments) tuned through fdtuned
# and its answer, then the heat solver HEAT on it twice (the second start's module from the
# disk cache) and with kernel 1, $STEPS steps (200) each.
solver_runs() {
    local name=$1 heat=$2
    shift 2
    run "$name" "$FDTUNE" tune "$@" --wait
    run "$name" "$FDTUNE" query "$@"
    run "$name" "$heat" "$@" --steps "${STEPS:-200}"
    run "$name" "$heat" "$@" --steps "${STEPS:-200}"
    run "$name" "$heat" "$@" --steps "${STEPS:-200}" --kernel1
}
