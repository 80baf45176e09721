#!/bin/sh
# import_bench.sh - how long fdtune import takes for 100,000 result rows (issue 33): a real
# fdtuned on the cpu backend tunes one small shape and exports its results; the rows are
# copied into ROWS rows of as many jobs of other stores (bench/replicate_rows.py: every
# row passes the daemon's checks), written as JSON and as gzip'd CSV; each file is imported
# into a fresh daemon, and again (every row then already there), each timed with the wall
# clock. Prints the seconds and rows a second.
# Usage: [ROWS=100000] [OUT=DIR] sh bench/import_bench.sh   (build/ from make)
set -u
B=${B:-build}
ROWS=${ROWS:-100000}
OUT=${OUT:-.}
dir=$(mktemp -d /tmp/fdt-importbench-XXXXXX)
pids=""
trap 'kill $pids 2>/dev/null; rm -rf "$dir"' EXIT
. bench/cpu_daemons.sh
start source
"$B/fdtune" --socket "$dir/source.sock" tune 20 18 16 --wait >/dev/null
"$B/fdtune" --socket "$dir/source.sock" export --what results -o "$dir/one.json"
python3 bench/replicate_rows.py "$dir/one.json" "$dir/rows.json" "$ROWS"
start csvsource
"$B/fdtune" --socket "$dir/csvsource.sock" import "$dir/rows.json" >/dev/null
"$B/fdtune" --socket "$dir/csvsource.sock" export --what results --format csv -o "$dir/rows.csv"
gzip "$dir/rows.csv"
rows=$(grep -c '^{' "$dir/rows.json")
echo "# $(date -u), $(nproc) cores, $(git rev-parse --short HEAD 2>/dev/null): OUT=DIR ROWS=$ROWS sh bench/import_bench.sh"
for f in rows.json rows.csv.gz; do
    start "into_${f%%.*}_${f##*.}"
    sock="$dir/into_${f%%.*}_${f##*.}.sock"
    first=$(seconds "$B/fdtune" --socket "$sock" import "$dir/$f")
    echo "$f ($rows rows, $(du -h "$dir/$f" | cut -f1)): imported in $first s, $(echo "$rows / $first" | bc) rows/s: $(sed 's/.*: //' "$dir/last")"
    again=$(seconds "$B/fdtune" --socket "$sock" import "$dir/$f")
    echo "$f again: $again s: $(sed 's/.*: //' "$dir/last")"
done
