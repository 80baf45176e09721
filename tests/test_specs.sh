#!/bin/sh
# test_specs.sh - a user's stencil spec through fdtuned, as users run it: a real daemon on
# the cpu backend with a temporary socket and store. fdtune tune --spec tunes it (the
# worker is sent the spec with the problem, generates the kernels, verifies them against
# the spec's reference), fdtune query --spec answers the stored winner as exact with the
# spec's entry point, the same answer after a restart (the store keeps the spec) and after
# one on a store of an older build's hashes (its device adopted, its spec renamed), the
# Laplacian's answers apart from it; a bad spec, a spec with --radius or with a radius, a
# spec that is not an object and a spec the families cannot serve are refused with where
# and why, and lose nothing stored.
# Usage: BUILD=build sh tests/test_specs.sh
set -u
. "$(dirname "$0")/tap.sh"
require python3
daemon_test specs
DB=$dir/fdtuned.db
CONF=$dir/fdtuned.conf
SPEC=examples/specs/acoustic8.json

# Few samples so that the cpu backend is quick; no bound on a measurement's spread (a
# loaded host would fail the job this test needs done; test_noisy.sh tests the bound).
cat >"$CONF" <<EOF
[tuning]
samples = 2
min_sample_ms = 0.1
leaders = 2
leader_samples = 4
max_spread = 0
[search]
budget = 16
EOF

start_daemon() {
    "$FDTUNED" --config "$CONF" --socket "$FDTUNE_SOCKET" --db "$DB" --backend cpu 2>>"$LOG" &
    pid=$!
    wait_answering
}

start_daemon
"$FDTUNE" tune 23 14 19 --spec "$SPEC" --wait --json >"$dir/tune" 2>&1
if grep -q '"state":"done"' "$dir/tune"; then ok "tune --spec: the job is done"
else not_ok "tune --spec: the job is done" "$dir/tune"; fi

"$FDTUNE" query 23 14 19 --spec "$SPEC" --json >"$dir/query" 2>&1
match=$(field match <"$dir/query")
variant=$(field variant <"$dir/query")
entry=$(field entry <"$dir/query")
case "$match:$variant:$entry" in
exact:snaive:*:fdt_spec | exact:smarch:*:fdt_spec | exact:szwin:*:fdt_spec | exact:svec:*:fdt_spec | \
    exact:stile:*:fdt_spec)
    ok "query --spec: exact, a spec family's winner" ;;
*) not_ok "query --spec: exact, a spec family's winner (got $match $variant $entry)" "$dir/query" ;;
esac

# The stored rows name the stencil by its pattern, none is wrong, and the store keeps the spec.
if python3 - "$DB" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
names = {r[0] for r in db.execute("SELECT stencil FROM results")}
bad = db.execute("SELECT count(*) FROM results WHERE status = 'wrong'").fetchone()[0]
kept = db.execute("SELECT count(*) FROM stencils").fetchone()[0]
ok = len(names) == 1 and next(iter(names)).startswith("spec-") and bad == 0 and kept == 1
sys.exit(0 if ok else 1)
PY
then ok "the results are the spec's, none wrong, and the store keeps its spec"
else not_ok "the results are the spec's, none wrong, and the store keeps its spec" "$LOG"; fi

"$FDTUNE" query 23 14 19 --radius 4 --json >"$dir/laplacian" 2>&1
if [ "$(field match <"$dir/laplacian")" = default ]; then ok "the Laplacian of the same shape is not the spec's"
else not_ok "the Laplacian of the same shape is not the spec's" "$dir/laplacian"; fi

stop_daemon || not_ok "fdtuned stops cleanly" "$LOG"
start_daemon
"$FDTUNE" query 23 14 19 --spec "$SPEC" --json >"$dir/again" 2>&1
if [ "$(field match <"$dir/again")" = exact ] && [ "$(field variant <"$dir/again")" = "$variant" ]
then ok "after a restart the spec's answer is the same"
else not_ok "after a restart the spec's answer is the same" "$dir/again"; fi

# The store as a build of other hashes left it (FNV-1a before XXH3): the device and the spec
# under names of its own. The start adopts the device's row and renames the spec in every
# row, and the answer is the same.
stop_daemon || not_ok "fdtuned stops cleanly before the store is aged" "$LOG"
python3 - "$DB" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
name = db.execute("SELECT name FROM stencils").fetchone()[0]
for table, column in (("stencils", "name"), ("jobs", "stencil"), ("results", "stencil"),
                      ("best", "stencil")):
    db.execute(f"UPDATE {table} SET {column} = 'spec-0123456789abcdef' WHERE {column} = ?",
               (name,))
db.execute("UPDATE devices SET fingerprint = '0123456789abcdef'")
db.commit()
PY
start_daemon
"$FDTUNE" query 23 14 19 --spec "$SPEC" --json >"$dir/aged" 2>&1
if [ "$(field match <"$dir/aged")" = exact ] && [ "$(field variant <"$dir/aged")" = "$variant" ]
then ok "a store of older hashes: the spec's answer is the same"
else not_ok "a store of older hashes: the spec's answer is the same" "$dir/aged"; fi
if python3 - "$DB" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
old = sum(db.execute(f"SELECT count(*) FROM {table} WHERE {column} = 'spec-0123456789abcdef'")
          .fetchone()[0] for table, column in (("stencils", "name"), ("jobs", "stencil"),
                                               ("results", "stencil"), ("best", "stencil")))
devices = [r[0] for r in db.execute("SELECT fingerprint FROM devices")]
sys.exit(0 if old == 0 and len(devices) == 1 and devices[0] != "0123456789abcdef" else 1)
PY
then ok "a store of older hashes: one device, adopted, and no row under the spec's old name"
else not_ok "a store of older hashes: one device, adopted, and no row under the spec's old name" \
    "$LOG"; fi
if grep -q "stored stencil spec-0123456789abcdef is the pattern of spec-.*renamed to it" "$LOG"
then ok "the rename is logged"; else not_ok "the rename is logged" "$LOG"; fi

# expect_refused NAME PATTERN REQUEST: the daemon's one answer line to REQUEST matches.
expect_refused() {
    printf '%s\n' "$3" | python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(sys.stdin.buffer.read())
print(s.makefile().readline(), end="")' "$FDTUNE_SOCKET" >"$dir/refused" 2>&1
    if grep -Eq "$2" "$dir/refused"; then ok "$1"; else not_ok "$1" "$dir/refused"; fi
}
far='{"fdtune_stencil":1,"name":"x","inputs":["u"],"outputs":{"f":[{"tap":"u","at":[0,0,9]}]}}'
five='{"fdtune_stencil":1,"name":"x","inputs":["u"],"outputs":{"f":[{"tap":"u","at":[0,0,5]}]}}'
expect_refused "a spec whose tap is out of reach" '"ok":false.*spec: outputs.f\[0\].at\[2\]' \
    "{\"v\":1,\"op\":\"query\",\"nx\":20,\"ny\":20,\"nz\":20,\"spec\":$far}"
expect_refused "a spec the families do not serve (reach 5)" '"ok":false.*reaches 5 points' \
    "{\"v\":1,\"op\":\"query\",\"nx\":20,\"ny\":20,\"nz\":20,\"spec\":$five}"
expect_refused "a spec with a radius" '"ok":false.*send neither' \
    "{\"v\":1,\"op\":\"query\",\"nx\":20,\"ny\":20,\"nz\":20,\"radius\":2,\"spec\":$far}"
expect_refused "a spec that is not an object" '"ok":false.*must be a stencil spec' \
    '{"v":1,"op":"tune","nx":20,"ny":20,"nz":20,"spec":"laplacian"}'
"$FDTUNE" query 23 14 19 --spec "$SPEC" --json >"$dir/kept" 2>&1
if [ "$(field variant <"$dir/kept")" = "$variant" ]; then ok "the refusals lost nothing"
else not_ok "the refusals lost nothing" "$dir/kept"; fi

if "$FDTUNE" query 23 14 19 --spec "$SPEC" --radius 2 >"$dir/both" 2>&1; then
    not_ok "fdtune refuses --spec with --radius" "$dir/both"
elif grep -q "a spec's radius is its reach" "$dir/both"; then ok "fdtune refuses --spec with --radius"
else not_ok "fdtune refuses --spec with --radius" "$dir/both"; fi

stop_daemon || not_ok "fdtuned stops cleanly at the end" "$LOG"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
