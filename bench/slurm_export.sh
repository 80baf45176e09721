#!/bin/sh
# slurm_export.sh - what fdtune-slurm's export after each shape costs a task (issue 33, item
# 2, docs/cluster.md): a task's fdtuned exports every result of its store after each shape,
# so the k-th export carries k shapes' rows. A real fdtuned on the cpu backend tunes one
# small shape; its rows are copied into stores of ROWS rows (each copy a job of another
# store, as bench/import_bench.sh makes them), imported into a fresh daemon, and
# `fdtune export --what results --format json -o FILE` is timed three times with the wall
# clock. The defaults are a task's store after 113, 452 and 1800 shapes of 70 rows each
# (an H100 guided tune's evaluations and leaders: bench/results/README.md, "Issue 14").
# Usage: [ROWS="7910 31640 126000"] sh bench/slurm_export.sh   (build/ from make)
set -u
B=${B:-build}
ROWS=${ROWS:-7910 31640 126000}
dir=$(mktemp -d /tmp/fdt-slurmexp-XXXXXX)
pids=""
trap 'kill $pids 2>/dev/null; rm -rf "$dir"' EXIT
. bench/cpu_daemons.sh
start source
"$B/fdtune" --socket "$dir/source.sock" tune 20 18 16 --wait >/dev/null 2>&1 || exit 1
"$B/fdtune" --socket "$dir/source.sock" export --what results -o "$dir/one.json"
echo "# $(date -u), $(nproc) cores, $(git rev-parse --short HEAD 2>/dev/null):" \
    "ROWS=\"$ROWS\" sh bench/slurm_export.sh"
for rows in $ROWS; do
    python3 bench/replicate_rows.py "$dir/one.json" "$dir/rows.json" "$rows"
    start "s$rows"
    "$B/fdtune" --socket "$dir/s$rows.sock" import "$dir/rows.json" >/dev/null || exit 1
    times=""
    for i in 1 2 3; do
        times="$times $(seconds "$B/fdtune" --socket "$dir/s$rows.sock" export --what results \
            --format json -o "$dir/out.json")"
    done
    best=$(echo "$times" | tr ' ' '\n' | grep . | sort -n | head -1)
    echo "$rows rows ($(du -h "$dir/out.json" | cut -f1)): export in$times s;" \
        "$(echo "scale=1; $best * 1000000 / $rows" | bc) us a row at the fastest"
done
