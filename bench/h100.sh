#!/bin/bash
# bench/h100.sh PHASE - the GPU measurements quoted in bench/results/, run on a lent NVIDIA
# H100 over a STATIC=1 build (make STATIC=1; carry build-static/). Each command's output
# goes to $OUT/<name>.txt headed by the exact command, so results keep their provenance.
set -u
FDTUNE=build-static/fdtune
SANITIZER=${SANITIZER:-/usr/local/cuda/bin/compute-sanitizer}
OUT=${OUT:-bench/out}
mkdir -p "$OUT"

# run NAME COMMAND...: runs COMMAND, output to $OUT/NAME.txt (appended) and to stdout.
run() {
    local name=$1
    shift
    { echo "\$ $*"; "$@" 2>&1; echo "exit status: $?"; echo; } | tee -a "$OUT/$name.txt"
}

device() {
    run device nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv
    run device "$FDTUNE" variants 512 512 512 --backend cuda
}

# Every variant of every family, verified on odd shapes; the first run of a new build.
verify() {
    run verify "$FDTUNE" bench 13 17 11 --backend cuda --samples 2 --leader-samples 5 --min-sample-ms 0.05 --top 5
    run verify "$FDTUNE" bench 33 9 21 --backend cuda --radius 4 --precision float --samples 2 --leader-samples 5 --min-sample-ms 0.05 --top 5
}

memcheck() {
    local shape=$1 subset=$2
    for family in naive tiled zmarch smem; do
        run memcheck "$SANITIZER" --tool memcheck --leak-check full --error-exitcode 99 \
            "$FDTUNE" bench $shape --backend cuda --family "$family" --subset "$subset" \
            --samples 1 --leaders 1 --leader-samples 1 --min-sample-ms 0.01 --top 3
    done
}

case "${1:-}" in
smoke)
    device
    verify
    run cube512 "$FDTUNE" bench 512 512 512 --backend cuda --top 25
    memcheck "13 17 11" 30
    ;;
shapes)
    run cube256 "$FDTUNE" bench 256 256 256 --backend cuda --top 15
    for shape in "768 512 512" "1024 1024 64" "100 200 300"; do
        run shapes "$FDTUNE" bench $shape --backend cuda --top 10
    done
    run variants512 "$FDTUNE" bench 512 512 512 --backend cuda --precision float --top 10
    run variants512 "$FDTUNE" bench 512 512 512 --backend cuda --radius 4 --precision float --top 10
    run variants512 "$FDTUNE" bench 512 512 512 --backend cuda --radius 4 --precision double --top 10
    ;;
memcheck)
    memcheck "13 17 11" 1000000
    memcheck "100 200 300" 40
    ;;
*)
    echo "usage: bench/h100.sh smoke|shapes|memcheck" >&2
    exit 2
    ;;
esac
