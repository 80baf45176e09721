#!/bin/bash
# bench/two_gpus.sh - issue 15 on a machine of two GPUs, over a STATIC=1 build (carry
# build-static/): the 20 shapes of bench/shapes20.txt as one batch (double R=1, the default
# strategy) through a fresh fdtuned and store, first on GPU 0 alone (CUDA_VISIBLE_DEVICES=0),
# then on both; `fdtune status --json` every 0.2 s during the second, for the two lanes
# busy at once; then every shape queried on each GPU. Each run's first-pass results (compile
# ms per variant) are kept as results.csv. Summary on stdout, everything in
# $OUT/two_gpus.tgz, the jobs side by side in $OUT/per_job.txt (bench/per_job.py); with
# PAIRS=N, N pairs of batches, the later ones in one_gpu_N/, two_gpus_N/, per_job_N.txt.
set -u
OUT=${OUT:?}
FDTUNE=build-static/fdtune
DIR=/tmp/fdt-two
export FDTUNE_SOCKET=$DIR/fdtuned.sock
. bench/daemon.sh
now() { date +%s.%N; }

# one_batch NAME [CONFIG]: a fresh fdtuned (with whatever GPUs the environment shows, and
# the config file's text CONFIG), the batch, waited for while its status is sampled; the
# daemon is left running for queries.
one_batch() {
    local name=$1 t0 t1
    rm -rf "$DIR" && mkdir -p "$DIR" "$OUT/$name"
    printf '%b' "${2:-}" >"$DIR/conf"
    daemon_start "$OUT/$name/fdtuned.log" --config "$DIR/conf" --db "$DIR/store.db"
    "$FDTUNE" devices >"$OUT/$name/devices.txt"
    t0=$(now)
    "$FDTUNE" batch bench/shapes20.txt >"$OUT/$name/batch.txt"
    while :; do
        "$FDTUNE" status --json >"$DIR/s" 2>/dev/null || break
        echo "$(now) $(cat "$DIR/s")" >>"$OUT/$name/status.txt"
        grep -q '"queued":0,"running":0' "$DIR/s" && break
        # The wall ends at the first sample that finds nothing left: a 1 s period added
        # up to 1 s to each wall, a share twice as large of the two-GPU one's.
        sleep 0.2
    done
    t1=$(now)
    "$FDTUNE" jobs --limit 100 >>"$OUT/$name/batch.txt"
    "$FDTUNE" jobs --limit 100 --json >"$OUT/$name/jobs.json"
    python3 -c 'import csv, sqlite3, sys
rows = sqlite3.connect(sys.argv[1]).execute("select job_id, variant, status, compile_ms, "
    "median_ms, samples from results where leader = 0 order by id")
csv.writer(sys.stdout).writerows(rows)' "$DIR/store.db" >"$OUT/$name/results.csv"
    awk -v a="$t0" -v b="$t1" -v n="$name" 'BEGIN { printf "%s: batch wall %.1f s\n", n, b - a }' |
        tee "$OUT/$name/wall.txt"
}

nvidia-smi -L | tee "$OUT/gpus.txt"
# A freshly started machine runs its first batch 15 to 30% slower whatever the settings
# (bench/results/README.md, issue 15): WARMUP=1 runs the batch on both GPUs first, untimed,
# so that the timed batches all run warm.
for d in 0 1; do
    CUDA_VISIBLE_DEVICES=$d "$FDTUNE" bench 128 128 128 --subset 64 --leaders 0 >/dev/null 2>&1
done
if [ "${WARMUP:-0}" = 1 ]; then
    one_batch warmup
    "$FDTUNE" shutdown >/dev/null; sleep 1
fi
# pair SUFFIX: the batch on GPU 0 alone, then on both, then each shape asked of each GPU.
pair() {
    local one=one_gpu$1 two=two_gpus$1 exact=0
    CUDA_VISIBLE_DEVICES=0 one_batch "$one"
    "$FDTUNE" shutdown >/dev/null; sleep 1
    one_batch "$two"
    echo "status samples with both lanes busy: $(grep -c '"state":"busy".*"state":"busy"' "$OUT/$two/status.txt")" |
        tee -a "$OUT/$two/wall.txt"
    while read -r nx ny nz; do
        for d in 0 1; do
            "$FDTUNE" query "$nx" "$ny" "$nz" --device $d --json | grep -q '"match":"exact"' &&
                exact=$((exact + 1))
        done
    done <bench/shapes20.txt
    echo "exact answers: $exact of 40 (20 shapes on each GPU)" | tee -a "$OUT/$two/wall.txt"
    grep -c "running on device 0" "$OUT/$two/fdtuned.log" | sed 's/^/jobs on device 0: /'
    grep -c "running on device 1" "$OUT/$two/fdtuned.log" | sed 's/^/jobs on device 1: /'
    "$FDTUNE" shutdown >/dev/null; sleep 1
    python3 bench/per_job.py "$OUT/$one/jobs.json" "$OUT/$two/jobs.json" "$OUT/$two/fdtuned.log" |
        tee "$OUT/per_job$1.txt"
}

# PAIRS=N: N pairs of batches, one GPU then two, alternating; a guided search's length
# varies from run to run (1024^3: 56 to 200 evaluations), so one pair can mislead.
pair ""
for ((i = 2; i <= ${PAIRS:-1}; i++)); do
    pair "_$i"
done
# ONE_GPU_CONFIG: the one-GPU batch once more, in that config (fewer compile threads, or
# a comment line for the same again).
if [ -n "${ONE_GPU_CONFIG:-}" ]; then
    sleep 1
    CUDA_VISIBLE_DEVICES=0 one_batch one_gpu_config "$ONE_GPU_CONFIG"
    "$FDTUNE" shutdown >/dev/null
    python3 bench/per_job.py "$OUT/one_gpu_config/jobs.json" "$OUT/two_gpus/jobs.json" \
        >"$OUT/per_job_config.txt"
fi
cd "$OUT" || exit 1
tar czf two_gpus.tgz gpus.txt one_gpu* two_gpus two_gpus_[0-9]* warmup 2>/dev/null
rm -rf one_gpu* two_gpus two_gpus_[0-9]* warmup
