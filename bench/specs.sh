#!/bin/sh
# specs.sh - the six example stencil specs (examples/specs/) tuned with fdtune bench on a
# GPU, at 512^3 and at a non-cubic shape, in double: each spec's best over its ideal-bytes
# copy (best_over_copy: the spec's ideal bytes over the time, against the device copy) and
# over its kernel 1 (snaive, block 256x1x1); and the Laplacian at 512^3 beside them, whose
# answer and speed the specs must not change. One summary line per run goes to $OUT.
# Usage: OUT=DIR BACKEND=cuda sh bench/specs.sh   (build-static/ from make STATIC=1)
set -u
B=${B:-build-static}
OUT=${OUT:-.}
BACKEND=${BACKEND:-cuda}
LIMIT=${LIMIT:-300}
shapes=${SHAPES:-"512 512 512;480 320 200"}
log="$OUT/specs.log"
: >"$log"
bench() {
    echo "# fdtune bench $*" >>"$log"
    timeout "$LIMIT" "$B/fdtune" bench "$@" --backend "$BACKEND" --top 5 >>"$log" 2>&1
    echo "# exit $?" >>"$log"
}
bench 512 512 512 --precision double
for spec in ${SPECS:-laplacian_r1 anisotropic div_k_grad acoustic8 gradient4 box27}; do
    echo "$shapes" | tr ';' '\n' | while read -r nx ny nz; do
        bench "$nx" "$ny" "$nz" --precision double --spec "examples/specs/$spec.json"
    done
done
grep -E '^# fdtune|^summary' "$log" >"$OUT/specs_summary.txt"
