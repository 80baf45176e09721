#!/bin/bash
# bench/xytile_ring.sh - issue 31: builds of xytile side by side (BUILDS, static builds
# under build-static/gpu/NAME), each over the whole xytile space on the same lent GPU, one
# after the other, each with its own device copy timed beside its leaders.
# Usage: OUT=DIR BUILDS="old new" bash bench/xytile_ring.sh "512x512x512/double/4 ..."
set -u
OUT=${OUT:-bench/out}
mkdir -p "$OUT"
. bench/daemon.sh
problem_of() {
    local dims precision radius
    IFS=/ read -r dims precision radius <<<"$1"
    echo "${dims//x/ } --precision ${precision:-double} --radius ${radius:-1}"
}
for p in $1; do
    for b in ${BUILDS:-old new}; do
        run "xytile_$b" timeout 150 build-static/gpu/$b/fdtune bench $(problem_of "$p") \
            --backend cuda --family xytile --top 5
    done
done
