#!/bin/sh
# bench/query_bench.sh - how fast fdtuned answers queries while it tunes: starts a daemon
# (cpu backend, temporary socket and database), tunes one small shape so that exact answers
# exist, reads the idle resident memory, starts a bigger tuning job, runs querybench with 1
# and 32 clients during it, then 1 client while a 10,000-shape batch is queued, and prints
# one block with the targets met or not. It writes no
# result file: redirect its output, e.g.
#
#   make build/fdtuned build/fdtune-worker build/fdtune build/querybench
#   sh bench/query_bench.sh > bench/results/query_$(hostname)_$(date +%Y%m%d).txt
#
# BUILD (default build) names the build directory; SECONDS_EACH (default 10) the length of
# each measured run. Exit status: 0 when both runs completed without errors, whatever the
# targets say; 1 otherwise.
set -eu

BUILD=${BUILD:-build}
SECONDS_EACH=${SECONDS_EACH:-10}
TARGET_QPS=50000
TARGET_P99_US=1000
TARGET_RSS_KB=16384
TARGET_BATCH_P99_US=10000

for prog in fdtuned fdtune-worker fdtune querybench; do
    if [ ! -x "$BUILD/$prog" ]; then
        echo "query_bench.sh: $BUILD/$prog is missing; make $BUILD/$prog" >&2
        exit 1
    fi
done

tmp=$(mktemp -d /tmp/query_bench.XXXXXX)
daemon_pid=
cleanup() {
    if [ -n "$daemon_pid" ]; then
        kill "$daemon_pid" 2>/dev/null || true
        wait "$daemon_pid" 2>/dev/null || true
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

die() {
    echo "query_bench.sh: $*" >&2
    if [ -s "$tmp/fdtuned.log" ]; then
        echo "--- fdtuned's log:" >&2
        tail -n 20 "$tmp/fdtuned.log" >&2
    fi
    exit 1
}

# fdtune finds the daemon through FDTUNE_SOCKET, wherever its options go.
export FDTUNE_SOCKET="$tmp/fdtuned.sock"
"$BUILD/fdtuned" ${CONFIG:+--config "$CONFIG"} --socket "$FDTUNE_SOCKET" \
    --db "$tmp/fdtuned.db" --backend cpu > "$tmp/fdtuned.log" 2>&1 &
daemon_pid=$!

tries=0
until "$BUILD/fdtune" status > /dev/null 2>&1; do
    kill -0 "$daemon_pid" 2>/dev/null || { daemon_pid=; die "fdtuned exited at start"; }
    tries=$((tries + 1))
    [ "$tries" -le 300 ] || die "fdtuned did not answer within 30 s"
    sleep 0.1
done

"$BUILD/fdtune" tune 13 17 11 --subset 4 --wait > "$tmp/tune.log" 2>&1 ||
    die "tuning 13 17 11 failed: $(tail -n 3 "$tmp/tune.log")"
exact=$("$BUILD/fdtune" query 13 17 11 --json 2>&1) || die "query 13 17 11 failed: $exact"
case $exact in
*'"match":"exact"'*) ;;
*) die "13 17 11 has no exact answer after tuning: $exact" ;;
esac

idle_rss_kb=$(awk '/^VmRSS:/ { print $2 }' "/proc/$daemon_pid/status")

# All families of a bigger shape: enough variants to keep the worker busy through both runs.
queued=$("$BUILD/fdtune" tune 64 64 64 --json 2>&1) || die "queueing 64 64 64 failed: $queued"
job=$(printf '%s\n' "$queued" | sed -n 's/.*"job":\([0-9]*\).*/\1/p')
[ -n "$job" ] || die "no job id in: $queued"

# "state,done,total" of the background job.
job_progress() {
    "$BUILD/fdtune" status "$job" --json 2>/dev/null |
        sed -n 's/.*"state":"\([a-z]*\)".*"total":\([0-9]*\),"done":\([0-9]*\).*/\1,\3,\2/p'
}
tries=0
until case $(job_progress) in running,*) true ;; *) false ;; esac; do
    tries=$((tries + 1))
    [ "$tries" -le 300 ] || die "the 64 64 64 job did not start within 30 s: $(job_progress)"
    sleep 0.1
done
progress_before=$(job_progress)

# querybench prints its line even when it fails; its first errors go to stderr.
bench() {
    "$BUILD/querybench" --socket "$FDTUNE_SOCKET" --clients "$1" --seconds "$SECONDS_EACH" || true
}
q1=$(bench 1)
q32=$(bench 32)
progress_after=$(job_progress)

# One client querying while a 10,000-shape batch is queued (issue 13, item 8): querybench
# runs 4 s, the batch goes in 2 s into it (its warm-up is 1 s), one request of 10,000 jobs.
awk 'BEGIN { for (i = 0; i < 10000; i++) print 8 + i % 100, 9 + int(i / 100), 10 }' \
    > "$tmp/shapes.txt"
"$BUILD/querybench" --socket "$FDTUNE_SOCKET" --clients 1 --seconds 4 > "$tmp/qbatch.txt" 2>&1 &
querier=$!
sleep 2
batch_start=$(date +%s.%N)
"$BUILD/fdtune" batch "$tmp/shapes.txt" --family naive --subset 1 > "$tmp/batch.txt" 2>&1 ||
    die "the 10,000-shape batch failed: $(tail -n 3 "$tmp/batch.txt")"
batch_s=$(awk -v a="$batch_start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }')
wait "$querier" || true
qbatch=$(cat "$tmp/qbatch.txt")

field() { printf '%s\n' "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
run_errors=0
for line in "$q1" "$q32" "$qbatch"; do
    [ "$(field "$line" errors)" = 0 ] && [ "$(field "$line" queries)" != 0 ] || run_errors=1
done
qps=$(field "$q32" qps)
p99=$(field "$q32" p99_us)
verdict() { # value op limit
    if awk -v v="$1" -v l="$3" "BEGIN { exit !(v $2 l) }"; then echo met; else echo "NOT met"; fi
}

cpu_model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
echo "== fdtuned query benchmark ($(date -u +%Y-%m-%dT%H:%M:%SZ))"
echo "host: $(hostname), nproc=$(nproc), cpu: ${cpu_model:-unknown}, $(uname -sr)"
echo "fdtuned: $("$BUILD/fdtuned" --version), cpu backend; querybench's shapes (13x17x11" \
     "tuned, the others nearest answers); 1 s warm-up, ${SECONDS_EACH} s measured per run"
echo "idle_rss_kb=$idle_rss_kb (after tuning 13 17 11, before the background job)"
echo "background job $job, 64 64 64 all families (state,done,total):" \
     "before the runs $progress_before, after $progress_after"
echo "$q1"
echo "$q32"
echo "during a 10,000-shape batch ($(tail -n 1 "$tmp/batch.txt" | cut -c1-40); fdtune batch took $batch_s s):"
echo "$qbatch"
echo "targets:"
echo "  qps >= $TARGET_QPS at 32 clients: $qps, $(verdict "$qps" '>=' "$TARGET_QPS")"
echo "  p99 <= $TARGET_P99_US us at 32 clients: $p99, $(verdict "$p99" '<=' "$TARGET_P99_US")"
echo "  p99 <= $TARGET_BATCH_P99_US us during the batch: $(field "$qbatch" p99_us)," \
     "$(verdict "$(field "$qbatch" p99_us)" '<=' "$TARGET_BATCH_P99_US")"
echo "  idle RSS <= $((TARGET_RSS_KB / 1024)) MB: $idle_rss_kb kB," \
     "$(verdict "$idle_rss_kb" '<=' "$TARGET_RSS_KB")"
exit "$run_errors"
