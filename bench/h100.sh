#!/bin/bash
# bench/h100.sh PHASE - the GPU measurements quoted in bench/results/, run on a lent NVIDIA
# H100 over a STATIC=1 build (make STATIC=1; carry build-static/). Each command's output
# goes to $OUT/<name>.txt headed by the exact command, so results keep their provenance.
set -u
FDTUNE=${FDTUNE:-build-static/fdtune}
SANITIZER=${SANITIZER:-/usr/local/cuda/bin/compute-sanitizer}
OUT=${OUT:-bench/out}
mkdir -p "$OUT"
. bench/daemon.sh


device() {
    run device nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv
    run device "$FDTUNE" variants 512 512 512 --backend cuda
}

# Every variant of every family, verified on odd shapes; the first run of a new build.
verify() {
    run verify "$FDTUNE" bench 13 17 11 --backend cuda --samples 2 --leader-samples 5 --min-sample-ms 0.05 --top 5
    run verify "$FDTUNE" bench 33 9 21 --backend cuda --radius 4 --precision float --samples 2 --leader-samples 5 --min-sample-ms 0.05 --top 5
}

# memcheck SHAPE SUBSET: every family, or those named in $FAMILIES (a new family alone).
memcheck() {
    local shape=$1 subset=$2
    for family in ${FAMILIES:-naive tiled zmarch zvec zroll smem xytile}; do
        run memcheck "$SANITIZER" --tool memcheck --leak-check full --error-exitcode 99 \
            "$FDTUNE" bench $shape --backend cuda --family "$family" --subset "$subset" \
            --samples 1 --leaders 1 --leader-samples 1 --min-sample-ms 0.01 --top 3
    done
}

# problem_of SHAPE: fdtune's problem arguments for "NXxNYxNZ[/PRECISION[/RADIUS]]", double
# R=1 unless said.
problem_of() {
    local dims precision radius
    IFS=/ read -r dims precision radius <<<"$1"
    echo "${dims//x/ } --precision ${precision:-double} --radius ${radius:-1}"
}

# start_daemon NAME [fdtuned options]: a cuda-backend fdtuned on a socket and store of its
# own under /tmp, its log kept as $OUT/NAME.log.
start_daemon() {
    local name=$1
    shift
    DAEMON_DIR=/tmp/fdt-$name
    rm -rf "$DAEMON_DIR"
    mkdir -p "$DAEMON_DIR"
    export FDTUNE_SOCKET=$DAEMON_DIR/fdtuned.sock
    daemon_start "$OUT/$name.log" --db "${STORE:-$DAEMON_DIR/fdtuned.db}" "$@"
}

stop_daemon() {
    run "$1" "$FDTUNE" shutdown
    wait "$DAEMON_PID"
    echo "fdtuned exit status: $?" >>"$OUT/$1.log"
}

# The service end to end: tune 512^3 through fdtuned, then ask it. Then the test-only
# families on a real GPU: a variant that takes an illegal address (the worker's CUDA context
# is lost for good) and one that never ends; the job must go on past both.
daemon() {
    start_daemon daemon
    run daemon "$FDTUNE" devices
    run daemon "$FDTUNE" tune 512 512 512 --wait
    run daemon "$FDTUNE" query 512 512 512
    run daemon "$FDTUNE" query 512 512 512 --json
    run daemon "$FDTUNE" query 256 256 256
    run daemon "$FDTUNE" status 1
    run daemon "$FDTUNE" export --what best --format csv
    stop_daemon daemon
    printf '[worker]\ntest_families = true\nvariant_deadline_ms = 20000\n' >/tmp/fdt-faults.conf
    start_daemon faults --config /tmp/fdt-faults.conf
    run faults "$FDTUNE" tune 64 64 64 --family fault --wait
    run faults "$FDTUNE" tune 64 64 64 --family spin --wait
    run faults "$FDTUNE" export --what results --format csv
    run faults "$FDTUNE" status
    stop_daemon faults
}

# bench/ceiling.cu, built on the lent machine (nvcc is there), as /tmp/fdt-ceiling.
build_ceiling() {
    /usr/local/cuda/bin/nvcc -O3 -arch=sm_90 -o /tmp/fdt-ceiling bench/ceiling.cu || exit 1
}

# bench/kernel3_sweep.cu, built on the lent machine, as /tmp/fdt-kernel3-sweep.
build_sweep3() {
    /usr/local/cuda/bin/nvcc -O3 -arch=sm_90 -o /tmp/fdt-kernel3-sweep bench/kernel3_sweep.cu || exit 1
}

# The recorded spaces that fdtune replay reads: exhaustive tunes through fdtuned of the
# problems in SHAPES ("NXxNYxNZ[/PRECISION[/RADIUS]] ...", double R=1 unless said; TUNE_FLAGS
# "--strategy exhaustive" since guided is the default), on the store $STORE (in a folder of
# its own: fdtuned refuses a store in /tmp itself, which others can write), which the
# caller carries from one call to the next; tunes stop being started after $SPACE_BUDGET_S
# seconds so the call ends within the device tool's limit. Then every result row as CSV,
# and the store without its code cache (compiled code, megabytes) back to $OUT for the next
# call.
spaces() {
    start_daemon spaces
    run spaces "$FDTUNE" devices
    local start=$SECONDS
    for shape in $SHAPES; do
        if [ $((SECONDS - start)) -gt "${SPACE_BUDGET_S:-380}" ]; then
            echo "not started (time): $shape" | tee -a "$OUT/spaces.txt"
            continue
        fi
        run spaces "$FDTUNE" tune $(problem_of "$shape") ${TUNE_FLAGS:-} --wait
    done
    run spaces "$FDTUNE" export --what best --format csv
    "$FDTUNE" export --what results --format csv -o "$OUT/space_results.csv"
    stop_daemon spaces
    python3 -c 'import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("DELETE FROM code_cache"); db.commit()
db.execute("VACUUM INTO ?", (sys.argv[2],))' "$STORE" "$OUT/store.db"
}

# now: seconds since the epoch, with decimals.
now() {
    date +%s.%N
}

# The default (guided) strategy on the shapes of $SHAPES, each warm-started from the others'
# exhaustive results: the store the spaces phase left ($STORE, carried), where a shape tuned
# again leaves its own earlier results out of its warm start. Wall time of each `tune
# --wait`, the job as it ended, and the best rows before and after (exhaustive, guided).
# Then a shape nothing has tuned: the instant answer, tune_if_missing, the answer once the
# quick job's winner is stored, and the job.
guided() {
    start_daemon guided
    run guided "$FDTUNE" export --what best --format csv
    for shape in $SHAPES; do
        local t0
        t0=$(now)
        run guided "$FDTUNE" tune ${shape//x/ } --wait
        echo "wall_s $shape $(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }')" |
            tee -a "$OUT/guided.txt"
    done
    run guided "$FDTUNE" jobs --limit 20 --json
    run guided "$FDTUNE" export --what best --format csv
    local fresh="640 480 200" t0 job
    run guided "$FDTUNE" query $fresh --json
    t0=$(now)
    job=$("$FDTUNE" query $fresh --tune-if-missing --json | sed -n 's/.*"job":\([0-9]*\).*/\1/p')
    echo "tune_if_missing: job $job" | tee -a "$OUT/guided.txt"
    until "$FDTUNE" query $fresh --json | grep -q '"match":"exact"'; do sleep 0.2; done
    echo "exact after $(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }') s" |
        tee -a "$OUT/guided.txt"
    run guided "$FDTUNE" query $fresh --json
    until "$FDTUNE" status "$job" --json | grep -q '"state":"done"'; do sleep 0.5; done
    echo "job done after $(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }') s" |
        tee -a "$OUT/guided.txt"
    run guided "$FDTUNE" status "$job" --json
    run guided "$FDTUNE" query $fresh --json
    "$FDTUNE" export --what results --format csv -o "$OUT/guided_results.csv"
    stop_daemon guided
}

# libfdtune inside a solver (examples/heat.c) for each shape of $SOLVER_SHAPES
# ("NXxNYxNZ[/PRECISION]"): tuned first through fdtuned (on a copy of $STORE when given, so
# the guided search starts warm), then what fdtuned stored, the solver's first start (an
# empty module cache: it compiles), its second start (the module from the disk cache) and
# the same solver with kernel 1. Then compute-sanitizer memcheck of one tuned solver run.
solver() {
    if [ -n "${STORE:-}" ]; then
        local copy
        copy=$(mktemp -d)
        cp "$STORE" "$copy/fdtuned.db"
        STORE=$copy/fdtuned.db
    fi
    start_daemon solver
    run solver "$FDTUNE" devices
    export FDTUNE_CACHE_DIR=/tmp/fdt-solver-cache
    rm -rf "$FDTUNE_CACHE_DIR"
    local heat=build-static/examples/heat
    for shape in ${SOLVER_SHAPES:-512x512x512 256x256x256 100x200x300}; do
        IFS=/ read -r dims precision <<<"$shape"
        solver_runs solver "$heat" ${dims//x/ } --precision "${precision:-double}"
    done
    # Cache mode persist: the answer's set-up step run by the library on f.
    run solver "$FDTUNE" tune 256 256 256 --cache persist --wait
    run solver "$FDTUNE" query 256 256 256 --cache persist
    run solver "$heat" 256 256 256 --cache persist --steps "${STEPS:-200}"
    run solver_memcheck "$SANITIZER" --tool memcheck --leak-check full --error-exitcode 99 \
        "$heat" 100 200 300 --steps 3
    run solver_memcheck "$SANITIZER" --tool memcheck --leak-check full --error-exitcode 99 \
        "$heat" 256 256 256 --cache persist --steps 3
    stop_daemon solver
}

# Two builds of fdtune bench side by side, alternating, on each shape of $AB_SHAPES
# ("NXxNYxNZ ..."): $OLD (a binary carried from before a change) and this build, over the
# family $FAMILY; their summaries and leaders.
ab() {
    for shape in $AB_SHAPES; do
        for bin in "$OLD" "$FDTUNE"; do
            run ab "$bin" bench ${shape//x/ } --backend cuda --family "$FAMILY" --top 3
        done
    done
}

# A new family alone ($FAMILY): every variant verified on odd shapes, rows aligned to 16
# bytes and not, R = 1 to 4; then memcheck over a subset at two of them.
family_check() {
    for shape in 13x17x11/double/1 46x30x21/double/1 47x31x21/float/2 33x9x21/float/4 \
        45x70x29/double/4 64x20x19/float/1; do
        run family "$FDTUNE" bench $(problem_of "$shape") --backend cuda --family "$FAMILY" \
            --samples 2 --leader-samples 5 --min-sample-ms 0.05 --top 3
    done
    FAMILIES=$FAMILY memcheck "45 70 29 --radius 2" 8
    FAMILIES=$FAMILY memcheck "47 31 21 --precision float" 8
}

# The whole space of each shape of $BENCH_SHAPES ("NXxNYxNZ[/PRECISION[/RADIUS]] ...",
# double R=1 unless said), or only $FAMILY's: fdtune bench's table and summary, with both
# ceilings (device copy, interior copy) timed beside the leaders.
benches() {
    for shape in $BENCH_SHAPES; do
        run benches "$FDTUNE" bench $(problem_of "$shape") --backend cuda --top 5 \
            ${FAMILY:+--family "$FAMILY"}
    done
}

case "${1:-}" in
benches)
    benches
    ;;
family)
    family_check
    ;;
ab)
    ab
    ;;
solver)
    solver
    ;;
guided)
    guided
    ;;
spaces)
    spaces
    ;;
daemon)
    daemon
    ;;
daemon_persist)
    # Cache mode persist through fdtuned: tune 256^3 in it, then what a solver is told, and
    # that the hot key stays apart.
    start_daemon daemon_persist
    run daemon_persist "$FDTUNE" devices
    run daemon_persist "$FDTUNE" tune 256 256 256 --cache persist --wait
    run daemon_persist "$FDTUNE" query 256 256 256 --cache persist
    run daemon_persist "$FDTUNE" query 256 256 256 --cache persist --json
    run daemon_persist "$FDTUNE" query 256 256 256
    stop_daemon daemon_persist
    ;;
daemon_auto)
    # Cache mode auto through fdtuned (the default): tune 100x200x300, whose short rows gain
    # from persist, then what a solver is told in auto and in hot, and the rows stored.
    start_daemon daemon_auto
    run daemon_auto "$FDTUNE" tune 100 200 300 --family zvec --subset 60 --wait
    run daemon_auto "$FDTUNE" query 100 200 300 --json
    run daemon_auto "$FDTUNE" query 100 200 300 --cache hot --json
    run daemon_auto "$FDTUNE" export --what best --format csv
    stop_daemon daemon_auto
    ;;
auto)
    # Cache mode auto (issue 12): the leaders and the copy timed hot and persist side by side
    # on each shape of $BENCH_SHAPES, the state chosen; then the switching under memcheck.
    for shape in $BENCH_SHAPES; do
        run auto "$FDTUNE" bench $(problem_of "$shape") --backend cuda --cache auto --top 5
    done
    run auto_memcheck "$SANITIZER" --tool memcheck --leak-check full --error-exitcode 99 \
        "$FDTUNE" bench 45 70 29 --backend cuda --cache auto --family zvec --subset 8 \
        --samples 1 --leaders 2 --leader-samples 5 --min-sample-ms 0.01 --top 3
    ;;
variants)
    # Named variants of $VARIANTS, in the space or not, on each shape of $BENCH_SHAPES
    # (shapes as benches takes them).
    for shape in $BENCH_SHAPES; do
        for v in $VARIANTS; do
            run variants "$FDTUNE" bench $(problem_of "$shape") --backend cuda --variant "$v" \
                --top 1
        done
    done
    ;;
smoke)
    device
    verify
    memcheck "13 17 11" 30
    ;;
shapes)
    run variants512 "$FDTUNE" bench 512 512 512 --backend cuda --precision float --top 10
    run variants512 "$FDTUNE" bench 512 512 512 --backend cuda --radius 4 --precision float --top 10
    for shape in "768 512 512" "1024 1024 64" "100 200 300"; do
        run shapes "$FDTUNE" bench $shape --backend cuda --top 10
    done
    ;;
final)
    device
    run cube512 "$FDTUNE" bench 512 512 512 --backend cuda --top 25
    run cube256 "$FDTUNE" bench 256 256 256 --backend cuda --top 15
    run variants512 "$FDTUNE" bench 512 512 512 --backend cuda --radius 4 --precision double --top 10
    ;;
memcheck)
    memcheck "13 17 11" 120
    memcheck "100 200 300" 24
    ;;
ceiling)
    # What a copy of only f's interior costs beside a whole copy (bench/ceiling.cu).
    build_ceiling
    for shape in "256 256 256" "512 512 512"; do
        run ceiling /tmp/fdt-ceiling $shape
    done
    ;;
cache)
    # Cache mode persist through fdtune bench: 256^3 hot and persist side by side, 512^3
    # persist, and memcheck of a persist run (the kernel's prefetches and releases).
    run cache256 "$FDTUNE" bench 256 256 256 --backend cuda --top 15
    run cache256 "$FDTUNE" bench 256 256 256 --backend cuda --cache persist --top 15
    run cache512 "$FDTUNE" bench 512 512 512 --backend cuda --cache persist --top 10
    run memcheck_persist "$SANITIZER" --tool memcheck --leak-check full --error-exitcode 99 \
        "$FDTUNE" bench 100 200 300 --backend cuda --cache persist --family zvec --subset 12 \
        --samples 1 --leaders 1 --leader-samples 1 --min-sample-ms 0.01 --top 3
    ;;
cache_shapes)
    # Cache mode persist on the other shapes of the issue: where it pays and where not.
    for shape in "768 512 512" "1024 1024 64" "100 200 300"; do
        run cache_shapes "$FDTUNE" bench $shape --backend cuda --cache persist --top 5
    done
    ;;
sweep3)
    # A plain sweep of the seeds' kernel 3 over blocks, m and launch bounds (issue 12), with
    # the device copy and kernel 1 beside its best, on each shape of $BENCH_SHAPES
    # ("NXxNYxNZ ..."), in $PRECISION (default double); about 1.5 minutes a shape.
    build_sweep3
    for shape in $BENCH_SHAPES; do
        run sweep3 /tmp/fdt-kernel3-sweep ${shape//x/ } "${PRECISION:-double}"
    done
    ;;
persist)
    # The L2 state of cache mode "persist" (kernels_src/persist.hip) on the ceiling's copies:
    # made, released, made again, reset; then whether it outlives the process that made it.
    build_ceiling
    run persist_sass /usr/local/cuda/bin/cuobjdump -sass -fun fdt_persist_edges /tmp/fdt-ceiling
    for shape in "256 256 256" "512 512 512"; do
        run persist_state /tmp/fdt-ceiling $shape 0 persist
    done
    run persist_state /tmp/fdt-ceiling 256 256 256 0 leave
    run persist_state /tmp/fdt-ceiling 256 256 256 0 plain
    ;;
profile)
    # Where the time goes at 256^3 against 512^3: DRAM bytes, L2 hits, occupancy, waves.
    # The 6th fdt_laplacian launch is inside the variant's timed samples (the reference
    # kernel, the verification run, warm-up and estimate come first).
    for shape in "256 256 256" "512 512 512"; do
        for variant in tiled:64x2x2:m8:seed naive:256x1x1 zmarch:64x4x1:mz16; do
            run profile /usr/local/cuda/bin/ncu --cache-control none --clock-control none \
                -k regex:fdt_laplacian --launch-skip 5 --launch-count 1 \
                --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,sm__warps_active.avg.pct_of_peak_sustained_active,launch__waves_per_multiprocessor,launch__occupancy_limit_registers,dram__throughput.avg.pct_of_peak_sustained_elapsed \
                "$FDTUNE" bench $shape --backend cuda --variant $variant --samples 5 --leaders 0 --top 1
        done
    done
    ;;
balance)
    # What bounds the named $VARIANTS on each shape of $BENCH_SHAPES (issue 16; shapes as
    # benches takes them): DRAM and L2 bytes, L1 hits, the L2 throughput broken down by
    # sub-unit, occupancy and warp stalls. The 6th fdt_laplacian launch is inside the
    # variant's timed samples.
    device
    for shape in $BENCH_SHAPES; do
        problem=$(problem_of "$shape")
        for v in $VARIANTS; do
            run balance "$FDTUNE" bench $problem --backend cuda --variant "$v" --top 1
            run balance /usr/local/cuda/bin/ncu --cache-control none --clock-control none \
                -k regex:fdt_laplacian --launch-skip 5 --launch-count 1 \
                --section SpeedOfLight --section WarpStateStats --section Occupancy \
                --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum,lts__t_requests_srcunit_tex_op_read.sum,l1tex__t_sector_hit_rate.pct,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,launch__registers_per_thread,breakdown:lts__throughput.avg.pct_of_peak_sustained_elapsed,breakdown:l1tex__throughput.avg.pct_of_peak_sustained_elapsed \
                "$FDTUNE" bench $problem --backend cuda --variant "$v" --samples 5 --leaders 0 --top 1
        done
    done
    ;;
*)
    echo "usage: bench/h100.sh balance|benches|family|ab|solver|auto|daemon_auto|variants|spaces|guided|smoke|shapes|final|memcheck|ceiling|sweep3|persist|cache|cache_shapes|profile|daemon|daemon_persist" >&2
    exit 2
    ;;
esac
