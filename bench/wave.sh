#!/bin/bash
# wave.sh - the wave solver (examples/wave.c) on a GPU against fdtuned: its spec
# (examples/specs/acoustic8.json) tuned exhaustively at each shape of $SHAPES, the answer,
# then the solver run with the tuned kernel and with kernel 1; its stencil_gbps (the spec's
# ideal bytes over the kernel's time inside the solver) beside the stored figure.
# Usage: OUT=DIR bash bench/wave.sh   (build-static/ from make STATIC=1)
set -u
OUT=${OUT:-.}
SHAPES=${SHAPES:-"512,512,512 480,320,200"}
STEPS=${STEPS:-200}
SPEC=examples/specs/acoustic8.json
. "$(dirname "$0")/daemon.sh"
work=$(mktemp -d "$HOME/fdt-wave-XXXXXX") # the store's folder must be private, not /tmp
chmod 700 "$work"
export FDTUNE_SOCKET=$work/fdtuned.sock FDTUNE_CACHE_DIR=$work/cache
FDTUNE=build-static/fdtune
daemon_start "$OUT/wave.log" --db "$work/fdtuned.db"
for shape in $SHAPES; do
    s=${shape//,/ }
    run wave "$FDTUNE" tune $s --spec "$SPEC" --strategy exhaustive --wait
    run wave "$FDTUNE" query $s --spec "$SPEC"
    run wave build-static/examples/wave $s --spec "$SPEC" --steps "$STEPS"
    run wave build-static/examples/wave $s --spec "$SPEC" --steps "$STEPS"
    run wave build-static/examples/wave $s --spec "$SPEC" --steps "$STEPS" --kernel1
done
kill -TERM "$DAEMON_PID"
wait "$DAEMON_PID"
rm -rf "$work"
