#!/bin/bash
# bench/sass/sass.sh SOURCE... - each xytile source compiled as NVRTC would for one variant
# (R=4 double, 16x4x1 m4 mz16 lb) with nvcc -cubin for sm_90, and its SASS opcode counts.
set -u
D="-DFDT_REAL=double -DFDT_IDX=int -DFDT_RADIUS=${RADIUS:-4} -DFDT_BX=16 -DFDT_BY=4 -DFDT_BZ=1 -DFDT_M=4 -DFDT_MZ=16 -DFDT_ORDER=0 -DFDT_LB=1 -DFDT_NT=0 -DFDT_MAP=0 -DFDT_BUG=0"
for s in "$@"; do
    cat kernels_src/common.h "$s" > /tmp/k.cu
    nvcc -std=c++17 -cubin -arch=sm_90 $D -o /tmp/k.cubin /tmp/k.cu || continue
    cuobjdump -sass /tmp/k.cubin > "$OUT/$(basename $s .hip).sass"
    echo "== $s: $(grep -cE '^\s+/\*[0-9a-f]{4}\*/' "$OUT/$(basename $s .hip).sass") instructions"
    grep -E '^\s+/\*[0-9a-f]{4}\*/' "$OUT/$(basename $s .hip).sass" | sed 's/.*\*\/ *//; s/^@!\?U\?P[0-9T] *//' |
        awk '{split($1,a,"."); print a[1]}' | sort | uniq -c | sort -rn | head -25 | tr '\n' ' '
    echo
done
