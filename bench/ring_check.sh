#!/bin/bash
# bench/ring_check.sh - issue 31 on the lent GPU: the ring's best and xytile's best at 512^3
# R = 4 in double profiled side by side (ncu, the metrics of designs/run4_ncu), then a
# guided tuning job on a fresh fdtuned for that problem: does the search find the ring's
# best? Needs build-static/ (make STATIC=1).
# Usage: OUT=DIR [SKIP_PROFILE=1] bash bench/ring_check.sh
set -u
OUT=${OUT:-bench/out}
mkdir -p "$OUT"
. bench/daemon.sh
F=build-static/fdtune
metrics=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum
metrics+=,dram__throughput.avg.pct_of_peak_sustained_elapsed
metrics+=,l1tex__throughput.avg.pct_of_peak_sustained_active
metrics+=,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum
metrics+=,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum
metrics+=,sm__warps_active.avg.pct_of_peak_sustained_active
metrics+=,smsp__issue_active.avg.pct_of_peak_sustained_active
metrics+=,sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active
metrics+=,smsp__inst_executed.sum,smsp__inst_executed_op_shared_ld.sum
metrics+=,launch__registers_per_thread,launch__occupancy_limit_registers
metrics+=,launch__occupancy_limit_shared_mem
for s in barrier long_scoreboard short_scoreboard wait math_pipe_throttle not_selected \
    mio_throttle lg_throttle; do
    metrics+=,smsp__average_warps_issue_stalled_${s}_per_issue_active.ratio
done
# The 6th fdt_laplacian launch is inside the variant's timed samples (h100.sh's profile).
[ -z "${SKIP_PROFILE:-}" ] && for v in ring:16x8x1:m2:mz32:lb xytile:16x4x1:m4:mz16:lb; do
    LIMIT=45 run ncu /usr/local/cuda/bin/ncu --cache-control none --clock-control none \
        -k regex:fdt_laplacian --launch-skip 5 --launch-count 1 --metrics "$metrics" \
        $F bench 512 512 512 --radius 4 --backend cuda --variant $v --samples 5 --leaders 0 \
        --top 1
done
dir=$(mktemp -d /tmp/fdt-ring-XXXXXX) # private: fdtuned refuses a store others may write
export FDTUNE_SOCKET=$dir/fdtuned.sock
daemon_start "$OUT/fdtuned.log" --db "$dir/fdtuned.db"
LIMIT=80 run guided $F tune 512 512 512 --radius 4 --wait
run guided $F query 512 512 512 --radius 4
run guided $F status 1
kill "$DAEMON_PID"
wait "$DAEMON_PID"
