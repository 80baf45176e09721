#!/bin/bash
# report_gpu.sh - an fdtuned on the GPU tunes a few shapes with its defaults (the guided
# search), then `fdtune report` draws them: the page bench/report_screenshots.sh shoots.
# Usage: OUT=DIR [TAG=h100] bash bench/report_gpu.sh   (build-static/ from make STATIC=1)
set -u
OUT=${OUT:-.}
TAG=${TAG:-gpu}
LIMIT=${LIMIT:-150}
. "$(dirname "$0")/daemon.sh"
work=$(mktemp -d "$HOME/fdt-report-XXXXXX") # the store's folder must be private, not /tmp
chmod 700 "$work"
export FDTUNE_SOCKET=$work/fdtuned.sock
FDTUNE=build-static/fdtune
daemon_start "$OUT/daemon_$TAG.log" --db "$work/fdtuned.db"
trap 'kill $DAEMON_PID 2>/dev/null; rm -rf "$work"' EXIT
for args in "512 512 512" "480 320 200" "96 96 2048" "512 512 512 --precision float" \
    "512 512 512 --radius 4" "480 320 200 --spec examples/specs/acoustic8.json"; do
    # shellcheck disable=SC2086
    run "tunes_$TAG" "$FDTUNE" tune $args --wait
done
run "tunes_$TAG" "$FDTUNE" jobs
run "tunes_$TAG" "$FDTUNE" devices
"$FDTUNE" report -o "$OUT/report_$TAG.html"
"$FDTUNE" export --what results --format csv | gzip >"$OUT/results_$TAG.csv.gz"
