#!/bin/bash
# bench/hip_nvidia.sh PHASE - the hip backend and libfdtune's hip path run on a lent NVIDIA
# GPU through the test-only HIP platform (tests/hip_nvidia/, `make STATIC=1 all hip-nvidia`
# here; carry build-static/): its libamdhip64.so comes first on LD_LIBRARY_PATH, so every
# hip call of our code runs, mapped onto CUDA as HIP's NVIDIA platform maps it. Each
# command's output goes to $OUT/<phase>.txt headed by the exact command (issue 29).
set -u
# The lent machine has Ubuntu's ROCm 5 runtime and comgr installed, which a host with HIP's
# NVIDIA platform would not: the hip backend would fall back to that runtime wherever ours
# lacked a function, and would ask that comgr, which knows no sm_ target. So everything runs
# in a mount namespace of its own where each ROCm library reads as empty.
if [ -z "${FDT_ROCM_HIDDEN:-}" ]; then
    exec env FDT_ROCM_HIDDEN=1 unshare -m bash -c '
        for lib in $(ldconfig -p | awk "/amdhip64|hiprtc|amd_comgr/ { print \$NF }"); do
            mount --bind /dev/null "$(readlink -f "$lib")" || exit 1
        done
        exec "$0" "$@"' "$0" "$@"
fi
# A ROCm on $LD_LIBRARY_PATH is not in ldconfig's cache, so it cannot be hidden: refuse it.
for dir in $(echo "${LD_LIBRARY_PATH:-}" | tr : " "); do
    for lib in "$dir"/libamdhip64.so* "$dir"/libhiprtc.so* "$dir"/libamd_comgr.so*; do
        if [ -e "$lib" ]; then
            echo "bench/hip_nvidia.sh: $lib (on LD_LIBRARY_PATH) would be loaded" >&2
            exit 1
        fi
    done
done
FDTUNE=${FDTUNE:-build-static/fdtune}
SANITIZER=${SANITIZER:-/usr/local/cuda/bin/compute-sanitizer}
OUT=${OUT:-bench/out}
LIMIT=${LIMIT:-280} # seconds any one command may take
mkdir -p "$OUT"
export LD_LIBRARY_PATH=$PWD/build-static/hip-nvidia${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
. bench/daemon.sh


# Each shape of $SHAPES (NXxNYxNZ) benched whole on hip, then on cuda, $REPS times
# alternating: every variant verified and timed, the device copy timed beside the leaders
# in each run; the summary lines side by side with hip's best over cuda's.
pair() {
    for shape in ${SHAPES:-100x200x300 512x512x512}; do
        for _ in $(seq "${REPS:-1}"); do
            for backend in hip cuda; do
                run pair "$FDTUNE" bench ${shape//x/ } --backend $backend --top 5
            done
        done
    done
    grep '^summary' "$OUT/pair.txt" | awk '
        { for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] } }
        f["backend"] == "hip" { hip = f["best_gbps"] }
        f["backend"] == "cuda" { printf "%s hip %.1f cuda %.1f hip/cuda %.4f\n", f["shape"],
                                 hip, f["best_gbps"], hip / f["best_gbps"] }' |
        tee -a "$OUT/pair.txt"
}

# Every variant of every family on odd shapes.
verify() {
    run verify "$FDTUNE" bench 13 17 11 --backend hip --samples 2 --leader-samples 5 --min-sample-ms 0.05 --top 3
    run verify "$FDTUNE" bench 33 9 21 --backend hip --radius 4 --precision float --samples 2 --leader-samples 5 --min-sample-ms 0.05 --top 3
}

# compute-sanitizer memcheck over a subset of each family of $FAMILIES (all by default).
memcheck() {
    for family in ${FAMILIES:-naive tiled zmarch zvec zroll smem xytile}; do
        run memcheck "$SANITIZER" --tool memcheck --leak-check full --error-exitcode 99 \
            "$FDTUNE" bench 45 70 29 --radius 2 --backend hip --family "$family" --subset "${SUBSET:-6}" \
            --samples 1 --leaders 1 --leader-samples 1 --min-sample-ms 0.01 --top 2
    done
}

# The AMD profile of the space (L2-sized bands, long z-walks, wpe), which an NVIDIA device
# never offers itself, asked for by name: every family's variants verified on odd shapes and
# timed at 256^3 beside the profile NVIDIA gets (wpe means nothing to NVRTC: docs/kernels.md).
amd_space() {
    run amd_space "$FDTUNE" bench 45 70 29 --backend hip --space amd --samples 2 --leader-samples 5 --min-sample-ms 0.05 --top 3
    run amd_space "$FDTUNE" bench 47 31 37 --backend hip --space amd --radius 4 --precision float --subset "${SUBSET:-300}" --samples 2 --leader-samples 5 --min-sample-ms 0.05 --top 3
    run amd_space "$FDTUNE" bench 256 256 256 --backend hip --space amd --subset "${SUBSET:-300}" --top 5
}

# fdtuned on the hip backend: a guided tune and an exact query; then the test-only families,
# a variant that faults and one that never ends, each to be stored as crashed or timeout
# while the job goes on with a new worker.
daemon() {
    export FDTUNE_SOCKET=/tmp/fdt-hip/fdtuned.sock
    rm -rf /tmp/fdt-hip && mkdir -p /tmp/fdt-hip
    BACKEND=hip daemon_start "$OUT/daemon.log" --db /tmp/fdt-hip/fdtuned.db
    run daemon "$FDTUNE" devices
    run daemon "$FDTUNE" tune 512 512 512 --wait
    run daemon "$FDTUNE" query 512 512 512 --json
    run daemon "$FDTUNE" shutdown
    wait "$DAEMON_PID"
    printf '[worker]\ntest_families = true\nvariant_deadline_ms = 20000\n' >/tmp/fdt-faults.conf
    BACKEND=hip daemon_start "$OUT/daemon.log" --db /tmp/fdt-hip/fdtuned.db --config /tmp/fdt-faults.conf
    run daemon "$FDTUNE" tune 64 64 64 --family fault --wait
    run daemon "$FDTUNE" tune 64 64 64 --family spin --wait
    run daemon "$FDTUNE" export --what results --format csv
    run daemon "$FDTUNE" status
    run daemon "$FDTUNE" shutdown
    wait "$DAEMON_PID"
}

# The heat solver through libfdtune, which takes hip first: tuned through a hip fdtuned, its
# answer, the solver twice (the second start's module from the disk cache) and with kernel
# 1, and one tuned run under memcheck; then with no daemon (the fallback, same path), once
# under memcheck.
solver() {
    export FDTUNE_SOCKET=/tmp/fdt-hip-solver/fdtuned.sock FDTUNE_CACHE_DIR=/tmp/fdt-hip-cache
    rm -rf /tmp/fdt-hip-solver "$FDTUNE_CACHE_DIR" && mkdir -p /tmp/fdt-hip-solver
    BACKEND=hip daemon_start "$OUT/solver.log" --db /tmp/fdt-hip-solver/fdtuned.db
    local heat=build-static/examples/heat
    for shape in ${SOLVER_SHAPES:-512x512x512 100x200x300}; do
        solver_runs solver "$heat" ${shape//x/ } --precision double
    done
    run solver "$SANITIZER" --tool memcheck --leak-check full --error-exitcode 99 \
        "$heat" 100 200 300 --steps 3
    run solver "$FDTUNE" shutdown
    wait "$DAEMON_PID"
    run solver "$heat" 256 256 256 --steps "${STEPS:-200}"
    run solver "$SANITIZER" --tool memcheck --leak-check full --error-exitcode 99 \
        "$heat" 100 200 300 --steps 3
}

case "${1:-}" in
pair | verify | memcheck | amd_space | daemon | solver) "$1" ;;
*)
    echo "usage: bench/hip_nvidia.sh pair|verify|memcheck|amd_space|daemon|solver" >&2
    exit 2
    ;;
esac
