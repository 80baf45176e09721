#!/bin/bash
# bench/throughput.sh PHASE - what tuning costs on a lent GPU (issue 14), over a STATIC=1
# build (carry build-static/). Output goes to $OUT/<phase>/ with each command written first.
#
# exhaustive: one exhaustive tune of $SHAPE (default 512x512x512, double R=1) through a fresh
#   fdtuned, twice: with an empty code cache, then again (every variant a cache hit). Each
#   job's wall, compile and GPU time as the job reports them, and beside it an independent
#   figure: nvidia-smi's utilization.gpu sampled every 100 ms over the same wall time (the
#   share of time a kernel ran, from the driver, not from our events).
# batch, batch_wait: the 20 shapes of bench/shapes20.txt (or $SHAPES_FILE) as one batch with
#   the default strategy; `fdtune status --json` sampled every 2 s for the batch's ETA; then
#   each job.
# kill: its first $KILL_SHAPES (8) shapes on a fresh store, fdtuned killed with SIGKILL once
#   $KILL_AFTER (5) jobs
#   have ended, started again on the store; then what every job measured, and whether any
#   (job, variant) was measured twice or a result lost.
set -u
PHASE=${1:?usage: bench/throughput.sh exhaustive|batch|batch_wait|kill}
OUT=${OUT:-/tmp/fdt-out}/$PHASE
mkdir -p "$OUT"
FDTUNE=build-static/fdtune
DIR=/tmp/fdt-throughput
export FDTUNE_SOCKET=$DIR/fdtuned.sock
. bench/daemon.sh

run() { # run NAME COMMAND...: COMMAND's output to $OUT/NAME.txt, headed by the command
    local name=$1
    shift
    echo "\$ $*" >>"$OUT/$name.txt"
    "$@" >>"$OUT/$name.txt" 2>&1
    local rc=$?
    echo "(exit $rc)" >>"$OUT/$name.txt"
    return $rc
}

now() { date +%s.%N; }

start_daemon() { # start_daemon NAME [fresh]: fdtuned on $DIR/store.db, its log $DIR/NAME.log
    [ "${2:-}" = fresh ] && rm -rf "$DIR"
    mkdir -p "$DIR"
    daemon_start "$DIR/$1.log" --db "$DIR/store.db"
}

stop_daemon() {
    "$FDTUNE" shutdown >/dev/null
    wait "$DAEMON_PID"
}

# smi_start NAME / smi_stop: nvidia-smi's utilization every 100 ms into $OUT/NAME.smi.csv.
smi_start() {
    nvidia-smi --query-gpu=timestamp,utilization.gpu --format=csv,noheader,nounits -lms 100 \
        >"$OUT/$1.smi.csv" 2>/dev/null &
    SMI_PID=$!
}

smi_stop() {
    kill "$SMI_PID" 2>/dev/null
    wait "$SMI_PID" 2>/dev/null
}

# The mean of nvidia-smi's utilization.gpu samples in $OUT/NAME.smi.csv.
smi_mean() {
    awk -F', *' '{ s += $2; n++ } END { if (n) printf "%.1f%% over %d samples", s / n, n }' \
        "$OUT/$1.smi.csv"
}

one_exhaustive() { # one_exhaustive NAME JOB: a tune of $SHAPE, timed, and what the job says
    local name=$1 nx ny nz
    IFS=x read -r nx ny nz <<<"$SHAPE"
    smi_start "$name"
    local t0 t1
    t0=$(now)
    run "$name" "$FDTUNE" tune "$nx" "$ny" "$nz" --strategy exhaustive --wait
    t1=$(now)
    smi_stop
    run "$name" "$FDTUNE" status "$2" --json
    {
        echo "wall (client, tune --wait): $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s"
        echo "nvidia-smi utilization.gpu: $(smi_mean "$name")"
    } | tee -a "$OUT/$name.txt"
}

exhaustive() {
    SHAPE=${SHAPE:-512x512x512}
    start_daemon exhaustive fresh
    run exhaustive "$FDTUNE" devices
    one_exhaustive cold 1
    one_exhaustive cached 2
    stop_daemon
}

# Samples of the daemon's status, one JSON line every 2 s, until no job is queued or running.
sample_status() {
    while :; do
        local line
        line=$("$FDTUNE" status --json 2>/dev/null) || break
        echo "$(now) $line" >>"$OUT/$1.status"
        echo "$line" | grep -q '"queued":0,"running":0' && break
        sleep 2
    done
}

# A batch outlasts one call of the device tool (10 minutes): `batch` starts it and samples
# until $BATCH_LIMIT_S, leaving fdtuned and nvidia-smi running (setsid) when it is not done;
# `batch_wait`, the next call on the same warm machine, samples on until it is, then writes
# the summary. Samples and the start time live under $DIR, which the machine keeps.
batch() {
    start_daemon batch fresh
    nvidia-smi --query-gpu=timestamp,utilization.gpu --format=csv,noheader,nounits -lms 100 \
        >"$DIR/batch.smi.csv" 2>/dev/null &
    echo $! >"$DIR/smi.pid"
    now >"$DIR/batch.start"
    run batch "$FDTUNE" batch "${SHAPES_FILE:-bench/shapes20.txt}"
    batch_wait
}

batch_wait() {
    local deadline
    deadline=$(($(date +%s) + ${BATCH_LIMIT_S:-560}))
    while [ "$(date +%s)" -lt "$deadline" ]; do
        local line
        line=$("$FDTUNE" status --json 2>/dev/null) || break
        echo "$(now) $line" >>"$DIR/batch.status"
        if echo "$line" | grep -q '"queued":0,"running":0'; then
            batch_summary
            return
        fi
        sleep 2
    done
    cp "$DIR/batch.status" "$OUT/batch.status"
    echo "not done after ${BATCH_LIMIT_S:-560} s: run the phase batch_wait" | tee -a "$OUT/batch.txt"
}

batch_summary() {
    local t0 t1
    t0=$(cat "$DIR/batch.start")
    t1=$(now)
    kill "$(cat "$DIR/smi.pid")" 2>/dev/null
    cp "$DIR/batch.smi.csv" "$OUT/batch.smi.csv"
    echo "start $t0 end $t1" >>"$DIR/batch.status"
    cp "$DIR/batch.status" "$OUT/batch.status"
    run batch "$FDTUNE" jobs --limit 100
    run batch "$FDTUNE" jobs --limit 100 --json
    echo "batch wall: $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s; nvidia-smi utilization.gpu: $(smi_mean batch)" |
        tee -a "$OUT/batch.txt"
    "$FDTUNE" shutdown >/dev/null
}

kill_test() {
    start_daemon kill fresh
    head -"${KILL_SHAPES:-8}" "${SHAPES_FILE:-bench/shapes20.txt}" >"$DIR/kill_shapes.txt"
    run kill "$FDTUNE" batch "$DIR/kill_shapes.txt"
    until [ "$("$FDTUNE" jobs --state done --json | grep -o '"id"' | wc -l)" -ge "${KILL_AFTER:-5}" ]; do
        sleep 1
    done
    sleep 3 # into the next job's measuring
    run kill "$FDTUNE" status
    kill -9 "$DAEMON_PID"
    wait "$DAEMON_PID" 2>/dev/null
    pkill -9 -f fdtune-worker
    echo "killed fdtuned with SIGKILL at $(now)" | tee -a "$OUT/kill.txt"
    run kill "$FDTUNE" status # refused: nothing listens
    start_daemon kill
    sample_status kill
    run kill "$FDTUNE" jobs --limit 100
    "$FDTUNE" export --what results --format csv >"$OUT/kill_results.csv"
    {
        echo "result rows: $(($(wc -l <"$OUT/kill_results.csv") - 1))"
        echo "first-pass rows per (job, variant) above 1: $(awk -F, 'NR > 1 && $13 == 0 { n[$10 "," $11]++ } END { for (k in n) if (n[k] > 1) d++; print d + 0 }' "$OUT/kill_results.csv")"
        echo "stores refused as measured before (the log's 'already'): $(grep -c already "$DIR"/kill.log)"
    } | tee -a "$OUT/kill.txt"
    stop_daemon
}

trap 'cp "$DIR"/*.log "$OUT"/ 2>/dev/null' EXIT

case $PHASE in
exhaustive) exhaustive ;;
batch) batch ;;
batch_wait) batch_wait ;;
kill) kill_test ;;
*) echo "unknown phase $PHASE" >&2; exit 2 ;;
esac
