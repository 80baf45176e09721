#!/bin/sh
# report_gpu.sh - an fdtuned on the GPU tunes a few shapes with its defaults (the guided
# search), then `fdtune report` draws them: the page bench/report_screenshots.sh shoots.
# Usage: OUT=DIR [B=build-static] [TAG=h100] sh bench/report_gpu.sh
set -u
B=${B:-build-static}
OUT=${OUT:-.}
TAG=${TAG:-gpu}
dir=$(mktemp -d /tmp/fdt-report-XXXXXX)
export FDTUNE_SOCKET=$dir/sock
"$B/fdtuned" --socket "$FDTUNE_SOCKET" --db "$dir/store.db" 2>"$OUT/daemon_$TAG.log" &
daemon=$!
trap 'kill $daemon 2>/dev/null; rm -rf "$dir"' EXIT
i=0
until "$B/fdtune" status >/dev/null 2>&1; do
    i=$((i + 1)); [ $i -gt 900 ] && { echo "fdtuned did not answer" >&2; exit 1; }
    sleep 0.1
done
{
    for args in "512 512 512" "480 320 200" "96 96 2048" "512 512 512 --precision float" \
        "512 512 512 --radius 4" "480 320 200 --spec examples/specs/acoustic8.json"; do
        echo "\$ fdtune tune $args --wait"
        # shellcheck disable=SC2086
        timeout 150 "$B/fdtune" tune $args --wait 2>&1 | tr '\r' '\n' | tail -2
    done
    "$B/fdtune" jobs
    "$B/fdtune" devices
} >"$OUT/tunes_$TAG.txt" 2>&1
"$B/fdtune" report -o "$OUT/report_$TAG.html"
"$B/fdtune" export --what results --format csv | gzip >"$OUT/results_$TAG.csv.gz"
