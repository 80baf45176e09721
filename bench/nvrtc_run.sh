#!/bin/bash
# bench/nvrtc_run.sh - NVRTC's cost per compile on the GPU host (see nvrtc_cost.c): three
# families with and without candidate options on one thread, then 1, 4 and 16 threads of one
# process and 16 processes at once. Output on stdout.
set -u
nvcc -O2 -o /tmp/nvrtc_cost bench/nvrtc_cost.c -lnvrtc -lpthread 2>&1 | tail -3
D="-DFDT_REAL=double -DFDT_IDX=int -DFDT_RADIUS=1 -DFDT_BX=32 -DFDT_BY=8 -DFDT_BZ=1 -DFDT_M=1 -DFDT_MZ=2 -DFDT_ORDER=0 -DFDT_LB=1 -DFDT_NT=0 -DFDT_MAP=0 -DFDT_BAND=0 -DFDT_BUG=0"
cat kernels_src/common.h kernels_src/zvec.hip >/tmp/zvec.cu
for t in 1 4 16; do
    echo "== zvec, $t threads"
    THREADS=$t /tmp/nvrtc_cost /tmp/zvec.cu 8 "$D" "" "-minimal"
done
for opt in "" "-minimal"; do
    t0=$(date +%s%N)
    for i in $(seq 16); do /tmp/nvrtc_cost /tmp/zvec.cu 8 "$D" "$opt" >/tmp/p$i.txt & done
    wait
    echo "16 processes x 8 compiles, options '$opt': $((($(date +%s%N) - t0) / 1000000)) ms"
    cat /tmp/p1.txt
done
