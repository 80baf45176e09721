#!/bin/bash
# bench/layout_gpu.sh - issue 31, item 2 on the lent GPU: layout advice. A fresh fdtuned
# (cuda backend, private store) tunes each problem with --pitch auto (a guided job in each
# candidate layout: dense, rows padded to whole sectors, and those moved so that each row's
# first interior point starts a sector) and answers the fastest, with what it gains on the
# dense layout; each job's leaders are timed beside its device copy, so every figure below
# is a ratio of one run. Then the heat solver (libfdtune) on the first problem, in the
# answer's layout and in the dense one. Needs build-static/ (make STATIC=1).
# Usage: OUT=DIR bash bench/layout_gpu.sh "96x96x2048/double/1 64x256x2048/float/1 ..."
#        (each NXxNYxNZ/PRECISION/RADIUS[/FAMILY]); results in $OUT/layout.txt (the commands
#        and their output) and $OUT/answers.jsonl (each auto answer, as it came).
set -u
OUT=${OUT:-bench/out}
mkdir -p "$OUT"
. bench/daemon.sh
F=build-static/fdtune
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader >"$OUT/gpu.txt"
dir=$(mktemp -d /tmp/fdt-layout-XXXXXX) # private: fdtuned refuses a store others may write
export FDTUNE_SOCKET=$dir/fdtuned.sock
daemon_start "$OUT/fdtuned.log" --db "$dir/fdtuned.db"
first=
for p in "$@"; do
    IFS=/ read -r dims precision radius family <<<"$p"
    args=(${dims//x/ } --precision "$precision" --radius "$radius" --pitch auto)
    LIMIT=${JOB_LIMIT:-150} run layout $F tune "${args[@]}" ${family:+--family $family} --wait
    run layout $F query "${args[@]}"
    $F query "${args[@]}" --json >>"$OUT/answers.jsonl"
    first=${first:-$dims/$precision}
done
if [ -n "$first" ] && [ -x build-static/examples/heat ]; then
    IFS=/ read -r dims precision <<<"$first"
    for layout in "--pitch auto" "--pitch 0"; do
        LIMIT=60 run layout build-static/examples/heat ${dims//x/ } --precision "$precision" \
            --steps "${STEPS:-200}" $layout
    done
fi
kill "$DAEMON_PID"
wait "$DAEMON_PID"
