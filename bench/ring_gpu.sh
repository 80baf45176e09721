#!/bin/bash
# bench/ring_gpu.sh - issue 31's ring family on the lent GPU: with SANITIZE=1,
# compute-sanitizer (memcheck and racecheck) over two ring variants on a small shape; then
# fdtune bench of the ring family (and xytile beside it where XYTILE=1) at R = 4, each run
# with its device copy timed beside its leaders. Needs build-static/ (make STATIC=1).
# QUICK: fdtune bench's sampling options (default: few samples, 3 leaders).
# Usage: OUT=DIR [SANITIZE=1] [XYTILE=1] [QUICK=...] bash bench/ring_gpu.sh "512x512x512/double ...";
# results go to $OUT/sanitizer.txt and are added to $OUT/bench.txt.
set -u
OUT=${OUT:-bench/out}
mkdir -p "$OUT"
F=build-static/fdtune
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader >"$OUT/gpu.txt"
quick=${QUICK-"--samples 7 --leaders 3 --leader-samples 30"}
[ -n "${SANITIZE:-}" ] && for v in ring:16x8x1:m2:mz32:lb/double ring:16x4x1:m4:mz32:lb/float; do
    for tool in memcheck racecheck; do
        echo "# compute-sanitizer --tool $tool $F bench 100 60 40 --radius 4 --variant ${v%/*} --precision ${v#*/}"
        timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 $F bench 100 60 40 \
            --radius 4 --backend cuda --variant "${v%/*}" --precision "${v#*/}" --samples 2 \
            --leaders 1 --leader-samples 5 --top 1 2>&1 | grep -E "^=========|^summary" | head -40
        echo "# exit ${PIPESTATUS[0]}"
    done
done >"$OUT/sanitizer.txt" 2>&1
for p in "$@"; do
    IFS=/ read -r dims precision <<<"$p"
    for family in ring ${XYTILE:+xytile}; do
        echo "# $F bench ${dims//x/ } --radius 4 --precision $precision --backend cuda --family $family $quick --top 3"
        timeout 120 $F bench ${dims//x/ } --radius 4 --precision "$precision" --backend cuda \
            --family $family $quick --top 3 2>&1 | tail -12
    done
done >>"$OUT/bench.txt" 2>&1
