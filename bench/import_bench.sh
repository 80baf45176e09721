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
start() { # start NAME: a daemon on $dir/NAME.sock
    "$B/fdtuned" --socket "$dir/$1.sock" --db "$dir/$1.db" --backend cpu 2>"$dir/$1.log" &
    pids="$pids $!"
    i=0
    until "$B/fdtune" --socket "$dir/$1.sock" status >/dev/null 2>&1; do
        i=$((i + 1)); [ $i -gt 600 ] && { echo "fdtuned $1 did not answer" >&2; exit 1; }
        sleep 0.1
    done
}
seconds() { # seconds COMMAND...: runs it, prints its wall seconds
    t0=$(date +%s.%N)
    "$@" >"$dir/last" 2>&1 || { cat "$dir/last" >&2; exit 1; }
    t1=$(date +%s.%N)
    echo "$t1 - $t0" | bc
}
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
