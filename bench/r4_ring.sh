#!/bin/bash
# bench/r4_ring.sh - issue 31's ring design (bench/r4_ring.cu) beside xytile's prototype
# (bench/r4_tile.cu), built and run on the lent GPU, each shape's device copy timed in the
# same run. Usage: OUT=DIR bash bench/r4_ring.sh "512 512 512" "768 384 256" ...
set -u
OUT=${OUT:-bench/out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader >"$OUT/gpu.txt"
for prog in r4_ring r4_tile; do
    timeout 120 nvcc -O3 -arch=sm_90 -o "/tmp/$prog" "bench/$prog.cu" || exit 1
done
for shape in "$@"; do
    for prog in r4_ring r4_tile; do
        echo "# /tmp/$prog $shape  (nvcc -O3 -arch=sm_90 bench/$prog.cu)"
        timeout 200 "/tmp/$prog" $shape
    done
done >"$OUT/runs.txt" 2>&1
