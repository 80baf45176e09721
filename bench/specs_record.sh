#!/bin/bash
# specs_record.sh - recorded spaces of users' stencils for fdtune replay: fdtuned on the GPU
# tunes each spec of $SPECS exhaustively at each shape of $SHAPES (one tune after another,
# none started after $BUDGET_S seconds so that the call ends within the device tool's limit),
# then every result row is exported as CSV (gzip) to $OUT, with the log and the jobs' lines.
# Usage: OUT=DIR bash bench/specs_record.sh   (build-static/ from make STATIC=1)
set -u
OUT=${OUT:-.}
SPECS=${SPECS:-"acoustic8 div_k_grad box27"}
SHAPES=${SHAPES:-"256,256,256 512,512,512 384,256,192 640,320,160 200,300,400 960,240,120"}
BUDGET_S=${BUDGET_S:-420}
. "$(dirname "$0")/daemon.sh"
work=$(mktemp -d "$HOME/fdt-record-XXXXXX") # the store's folder must be private, not /tmp
chmod 700 "$work"
export FDTUNE_SOCKET=$work/fdtuned.sock
FDTUNE=build-static/fdtune
daemon_start "$OUT/record.log" --db "$work/fdtuned.db"
start=$SECONDS
for shape in $SHAPES; do
    for spec in $SPECS; do
        if [ $((SECONDS - start)) -gt "$BUDGET_S" ]; then
            echo "not started (time): $spec $shape" >>"$OUT/record.txt"
            continue
        fi
        run record "$FDTUNE" tune ${shape//,/ } --spec "examples/specs/$spec.json" \
            --strategy exhaustive --wait
    done
done
"$FDTUNE" export --what results --format csv -o "$work/results.csv"
gzip -c "$work/results.csv" >"$OUT/spec_results.csv.gz"
kill -TERM "$DAEMON_PID"
wait "$DAEMON_PID"
rm -rf "$work"
