#!/bin/bash
# bench/layout_ab.sh - the vector families before and after the layout (issue 31, item 2),
# side by side on the lent GPU: the same variants timed by the fdtune built before the
# pitch joined the kernels' signature (BEFORE, default build-static/fdtune-before-layout,
# made from 3c8d140 with make STATIC=1) and by this build, alternately, twice each, every run
# beside its own device copy; then the zvec family's best in each. Needs build-static/
# (make STATIC=1).
# Usage: OUT=DIR bash bench/layout_ab.sh; results in $OUT/ab.txt.
set -u
OUT=${OUT:-bench/out}
mkdir -p "$OUT"
. bench/daemon.sh
BEFORE=${BEFORE:-build-static/fdtune-before-layout}
quick="--samples 15 --leaders 1 --leader-samples 50 --top 1"
for args in "512 512 512 --precision float --variant zvec:32x16x1:mz4" \
    "100 200 300 --precision double --variant zvec:64x8x1:mz2:lb" \
    "512 512 512 --precision double --variant zroll:64x4x1:m1:mz8:lb" \
    "512 512 512 --radius 4 --precision double --variant xytile:16x4x1:m4:mz16:lb" \
    "512 512 512 --precision float --variant zvec:32x16x1:mz1" \
    "512 512 512 --precision double --variant zvec:64x4x1:mz4"; do
    for round in 1 2; do
        for f in "$BEFORE" build-static/fdtune; do
            LIMIT=60 run ab "$f" bench $args --backend cuda $quick
        done
    done
done
# The whole zvec family, whose variants' registers moved most: its best, before and after.
for precision in float double; do
    for f in "$BEFORE" build-static/fdtune; do
        LIMIT=120 run ab "$f" bench 512 512 512 --precision $precision --family zvec \
            --backend cuda --samples 7 --leaders 3 --leader-samples 30 --top 3
    done
done
