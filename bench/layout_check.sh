#!/bin/bash
# bench/layout_check.sh - issue 31, item 2's aftermath on the lent GPU. (1) The Laplacian's
# figures with the pitch in every kernel's signature and the run-time alignment test in the
# vector families: the variants that won earlier runs, each timed beside its device copy
# (bench/results/h200/issue16/benches_2.txt, issue31/ring), to compare. (2) ncu of the
# short-row problem's best (96x96x2048, radius 1) dense and in the head-aligned layout,
# and of the interior copy there: what bounds them. Needs build-static/ (make STATIC=1).
# Usage: OUT=DIR bash bench/layout_check.sh
set -u
OUT=${OUT:-bench/out}
mkdir -p "$OUT"
. bench/daemon.sh
F=build-static/fdtune
quick="--samples 7 --leaders 3 --leader-samples 30"
for args in "1024 1024 64 --precision double --variant zmarch:256x4x1:mz64" \
    "512 512 512 --precision float --variant zvec:32x16x1:mz4" \
    "100 200 300 --precision double --variant zvec:64x8x1:mz2:lb" \
    "512 512 512 --radius 4 --precision double --family ring $quick --top 3" \
    "512 512 512 --radius 4 --precision float --family ring $quick --top 3" \
    "512 512 512 --radius 4 --precision float --family ring $quick --top 3 --offset 4"; do
    LIMIT=120 run figures $F bench $args --backend cuda
done
metrics=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum
metrics+=,dram__throughput.avg.pct_of_peak_sustained_elapsed
metrics+=,sm__warps_active.avg.pct_of_peak_sustained_active
metrics+=,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum
metrics+=,launch__registers_per_thread,launch__grid_size,launch__block_size
for s in barrier long_scoreboard short_scoreboard wait not_selected lg_throttle; do
    metrics+=,smsp__average_warps_issue_stalled_${s}_per_issue_active.ratio
done
# The 6th launch of the kernel is inside the variant's timed samples.
for v in "zvec:16x8x1:mz2 --precision float" "zvec:64x4x1:mz4:lb --precision double" \
    "tiled:128x1x2:m4:asc:lb --precision float --pitch 96 --offset 7"; do
    LIMIT=60 run ncu /usr/local/cuda/bin/ncu --cache-control none --clock-control none \
        -k regex:fdt_laplacian --launch-skip 5 --launch-count 1 --metrics "$metrics" \
        $F bench 96 96 2048 --backend cuda --variant $v --samples 5 --leaders 0 --top 1
done
LIMIT=60 run ncu /usr/local/cuda/bin/ncu --cache-control none --clock-control none \
    -k regex:fdt_interior_copy --launch-skip 5 --launch-count 1 --metrics "$metrics" \
    $F bench 96 96 2048 --backend cuda --precision float --variant naive:256x1x1 --samples 5 \
    --leaders 1 --top 1
