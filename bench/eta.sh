#!/bin/sh
# eta.sh - how true a job's ETA is: a real fdtuned on the cpu backend tunes two shapes one
# after the other with the guided search and the default patience, while this script asks
# each job's status every half second. At the first answer past 25, 50 and 75% of a job
# (its evaluations done over those it expects), it prints the ETA the daemon gave, the
# time the job then really took to end, and the error between them. The first job is the
# daemon's first (no leaders' round timed on the device yet), the second follows it. A
# transcript of `fdtune tune --wait` of a third shape, and of `fdtune watch` of a fourth,
# go to $OUT as well.
# Usage: OUT=DIR [SHAPE="48 40 36"] sh bench/eta.sh   (build/ from make)
set -u
B=${B:-build}
OUT=${OUT:-.}
SHAPE=${SHAPE:-48 40 36}
dir=$(mktemp -d /tmp/fdt-eta-XXXXXX)
export FDTUNE_SOCKET=$dir/sock
"$B/fdtuned" --socket "$FDTUNE_SOCKET" --db "$dir/store.db" --backend cpu 2>"$OUT/eta_daemon.log" &
daemon=$!
trap 'kill $daemon 2>/dev/null; rm -rf "$dir"' EXIT
i=0
until "$B/fdtune" status >/dev/null 2>&1; do
    i=$((i + 1)); [ $i -gt 600 ] && { echo "fdtuned did not answer" >&2; exit 1; }
    sleep 0.1
done
# measure NX NY NZ TAG LABEL: tunes the shape, asks its status every half second, and prints
# the ETA's error at 25, 50 and 75% of the job.
measure() {
    t0=$(date +%s.%N)
    job=$("$B/fdtune" tune "$1" "$2" "$3" --json | sed -n 's/.*"job":\([0-9]*\).*/\1/p')
    : >"$dir/polls"
    while :; do
        now=$(date +%s.%N)
        "$B/fdtune" status "$job" --json >"$dir/one" || break
        python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))["job"]; c = j.get("cost", {})
print(sys.argv[2], j["state"], j["done"], c.get("expected", j["total"]), j["total"], c.get("eta_s", -1))' \
            "$dir/one" "$(echo "$now - $t0" | bc)" >>"$dir/polls"
        grep -q '"state":"\(done\|failed\|cancelled\)"' "$dir/one" && break
        sleep 0.5
    done
    cp "$dir/polls" "$OUT/eta_polls_$4.txt"
    python3 - "$dir/polls" "$1x$2x$3, $5" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1])]
end = float(rows[-1][0])
print("# %s: %d polls (t state done expected total eta_s: eta_polls_*.txt), the job ended "
      "at %.1f s (%s)" % (sys.argv[2], len(rows), end, rows[-1][1]))
for mark in (0.25, 0.5, 0.75):
    for t, state, done, expected, total, eta in rows:
        t, done, expected, eta = float(t), int(done), int(expected), float(eta)
        if state == "running" and expected and done / expected >= mark and eta >= 0:
            left = end - t
            print("at %2d%% (%d/%d of %s, %.1f s): ETA %.1f s, took %.1f s more: error %+.0f%%"
                  % (mark * 100, done, expected, total, t, eta, left, 100 * (eta - left) / left))
            break
PY
}
# shellcheck disable=SC2086
set -- $SHAPE
{
    measure "$1" "$2" "$3" first "the daemon's first job (no leaders' round timed on the device yet)"
    measure "$(($1 - 4))" "$2" "$3" second "its second job"
} | tee "$OUT/eta_summary.txt"
script -qec "$B/fdtune tune $(($1 + 4)) $2 $3 --wait" /dev/null >"$OUT/eta_tune_wait.txt" 2>&1
job=$("$B/fdtune" tune $(($1 + 8)) "$2" "$3" --json | sed -n 's/.*"job":\([0-9]*\).*/\1/p')
"$B/fdtune" watch "$job" >"$OUT/eta_watch.txt" 2>&1
echo "watch exit $?" >>"$OUT/eta_watch.txt"
