#!/bin/sh
# test_import.sh - fdtune import (issue 33, item 1), against real fdtuned daemons on the cpu
# backend with temporary sockets and stores: results one daemon tuned and exported (JSON,
# and CSV gzip-compressed) are merged into another's store and answer its queries exactly,
# with where they were measured; importing twice is once, in either format; a file with one
# bad row merges nothing and names the line; a newer format, another kind of export,
# another program's file, a tampered fingerprint and a truncated gzip are refused, each
# with what it is, and nothing stored is lost; a winner measured here is never replaced by
# an imported one; of two imported winners the later measured one stands; with
# confirm_imported an imported winner is answered "imported" until a job here has timed it.
# The site store
# (site_store): its winners answer, saying so, after the node's own; it is never written;
# SIGHUP reads it again, and a bad file leaves the rows in force.
# Usage: BUILD=build sh tests/test_import.sh
set -u
. "$(dirname "$0")/tap.sh"
daemon_test import
require python3 gzip

# start NAME [fdtuned options]: a daemon of its own (socket $dir/NAME.sock, store
# $dir/NAME.db); its pid in pid_NAME, the ones to kill at the end in also_kill.
start() {
    start_name=$1
    shift
    "$FDTUNED" "$@" --socket "$dir/$start_name.sock" --db "$dir/$start_name.db" --backend cpu \
        2>"$dir/$start_name.log" &
    eval "pid_$start_name=$!"
    also_kill="$also_kill $!"
    answering "$!" "fdtuned $start_name starts" "$dir/$start_name.log" \
        "$FDTUNE" --socket "$dir/$start_name.sock" status || exit 1
}
# on NAME ARGS...: fdtune against daemon NAME.
on() {
    on_daemon=$1
    shift
    "$FDTUNE" --socket "$dir/$on_daemon.sock" "$@"
}
# results NAME: how many result rows daemon NAME's store holds.
results() {
    on "$1" export --what results --format csv | tail -n +2 | wc -l
}
# refused NAME FILE WHAT: importing FILE into NAME fails, saying WHAT, and its rows stay.
refused() {
    before=$(results "$1")
    if on "$1" import "$2" >"$dir/out" 2>&1; then
        not_ok "$3: refused" "$dir/out"
    elif ! grep -q "$3" "$dir/out"; then
        not_ok "$3: the refusal says so" "$dir/out"
    elif [ "$(results "$1")" != "$before" ]; then
        not_ok "$3: nothing merged, nothing lost ($before rows before, $(results "$1") after)"
    else
        ok "refused, nothing merged: $(grep -m1 "$3" "$dir/out" | cut -c1-110)"
    fi
}
# edit IN OUT PYTHON: OUT is IN's rows (one JSON object a line) with PYTHON run on each row
# r (its 1-based index i), as export writes them.
edit() {
    python3 - "$1" "$2" "$3" <<'PYEOF'
import json, sys
src, dst, code = sys.argv[1:4]
rows = [json.loads(l.rstrip(",\n")) for l in open(src) if l.startswith("{")]
for i, r in enumerate(rows, 1):
    exec(code)
with open(dst, "w") as f:
    f.write("[\n" + ",\n".join(json.dumps(r) for r in rows) + "\n]\n")
PYEOF
}

# --- one daemon tunes two shapes and exports them -----------------------------------------
start a
for shape in "20 18 16" "24 18 16"; do
    on a tune $shape --wait >/dev/null 2>&1 || not_ok "daemon a tunes $shape" "$dir/a.log"
done
on a export --what results -o "$dir/a.json" &&
    on a export --what results --format csv -o "$dir/a.csv" && gzip -k "$dir/a.csv" &&
    on a export --what best -o "$dir/best.json"
rows=$(grep -c '^{' "$dir/a.json")
[ "$rows" -gt 10 ] && ok "daemon a exports $rows result rows" ||
    not_ok "daemon a exports" "$dir/a.log"

# --- merged into another daemon's store -----------------------------------------------------
start b
check "import of a's JSON" on b import "$dir/a.json"
grep -q "$rows rows: $rows added" "$scratch/out" && ok "every row added: $(cat "$scratch/out")" ||
    not_ok "every row added" "$scratch/out"
for shape in "20 18 16" "24 18 16"; do
    on b query $shape --json >"$dir/q" 2>&1
    if python3 -c 'import json, sys
a = json.load(open(sys.argv[1])); m = a.get("measured", {})
sys.exit(not (a["match"] == "exact" and m.get("imported", 0) > 0 and m.get("job", 0) > 0
              and m.get("fdtuned")))' "$dir/q"; then
        ok "$shape answered exact from the import, with where it was measured"
    else
        not_ok "$shape answered exact from the import" "$dir/q"
    fi
done
on b query 20 18 16 >"$dir/q" 2>&1
grep -q "^measured  on .*imported" "$dir/q" &&
    ok "query says where and when: $(grep measured "$dir/q")" ||
    not_ok "query says where it was measured" "$dir/q"
on b export --what results >"$dir/b.json"
python3 -c 'import json, sys
rows = [json.loads(l.rstrip(",\n")) for l in open(sys.argv[1]) if l.startswith("{")]
a = {(r["store"], r["job"], r["variant"], r["leader"]) for r in
     (json.loads(l.rstrip(",\n")) for l in open(sys.argv[2]) if l.startswith("{"))}
b = {(r["store"], r["job"], r["variant"], r["leader"]) for r in rows}
sys.exit(not a <= b)' "$dir/b.json" "$dir/a.json" &&
    ok "b's export keeps each row's store and job as a's" ||
    not_ok "b's export keeps each row's provenance" "$dir/b.json"

on b status 1 >"$dir/status" 2>&1
grep -q "^  imported  from .*its job 1 there" "$dir/status" &&
    grep -q "ended     by import" "$dir/status" &&
    ok "an imported job says where it was measured: $(grep imported "$dir/status")" ||
    not_ok "an imported job's status says where it came from" "$dir/status"

# --- twice is once --------------------------------------------------------------------------
before=$(results b)
check "the JSON imported again" on b import "$dir/a.json"
grep -q "$rows rows: 0 added, $rows here already; 0 jobs" "$scratch/out" &&
    ok "twice is once: $(cat "$scratch/out")" || not_ok "twice is once" "$scratch/out"
check "the same rows as gzip'd CSV" on b import "$dir/a.csv.gz"
grep -q "0 added" "$scratch/out" && [ "$(results b)" = "$before" ] &&
    ok "the CSV of the same rows adds nothing either ($before rows)" ||
    not_ok "the CSV adds nothing" "$scratch/out"

# --- a bad row refuses the whole file -------------------------------------------------------
start c
edit "$dir/a.json" "$dir/bad.json" 'r["gbps"] = "fast" if i == 7 else r["gbps"]'
refused c "$dir/bad.json" "line 8: 'gbps' must be a number"
[ "$(results c)" = 0 ] && ok "a file with one bad row merges none of its rows" ||
    not_ok "a bad file merges nothing: $(results c) rows"
edit "$dir/a.json" "$dir/newer.json" 'r["format"] = "fdtuned-results/3"'
refused b "$dir/newer.json" "written by a newer fdtuned (format 3"
refused b "$dir/best.json" "a best export"
printf 'name,value\nx,1\n' >"$dir/foreign.csv"
refused b "$dir/foreign.csv" "not an fdtuned results export"
edit "$dir/a.json" "$dir/tampered.json" 'r["memory_bytes"] = r["memory_bytes"] + (i == 3)'
refused b "$dir/tampered.json" "line 4: fingerprint"
head -c 2000 "$dir/a.csv.gz" >"$dir/truncated.csv.gz"
refused b "$dir/truncated.csv.gz" "truncated or corrupt"
refused b "$dir/none.json" "No such file"

# --- the protocol's own refusals: a set not begun, more sets than the daemon stages ------
# ask SOCKET LINE...: each request line on one connection, each answer line printed.
ask() {
    python3 - "$@" <<'PYEOF'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
f = s.makefile("rw")
for line in sys.argv[2:]:
    f.write(line + "\n")
    f.flush()
    print(f.readline().strip())
PYEOF
}
ask "$dir/c.sock" '{"op":"import","set":999,"rows":[],"last":true}' >"$dir/ask"
grep -q '"ok":false.*no import set 999 here' "$dir/ask" &&
    ok "a page of a set never begun is refused, naming it" ||
    not_ok "a page of a set never begun is refused" "$dir/ask"
page='{"op":"import","rows":[],"last":false}'
ask "$dir/c.sock" "$page" "$page" "$page" "$page" "$page" "$page" "$page" "$page" "$page" \
    >"$dir/ask"
[ "$(grep -c '"ok":true' "$dir/ask")" = 8 ] &&
    tail -1 "$dir/ask" | grep -q '"ok":false.*8 imports are under way already' &&
    ok "a ninth file staged at once is refused; eight are staged" ||
    not_ok "at most eight files are staged at once" "$dir/ask"

# --- the layout travels with its rows; a format 1 file (no layout) was measured dense -------
edit "$dir/a.json" "$dir/padded.json" 'r["pitch"], r["offset"] = r["nx"] + 4, 3'
edit "$dir/a.json" "$dir/v1.json" \
    'r["format"] = "fdtuned-results/1"; del r["pitch"]; del r["offset"]'
edit "$dir/a.json" "$dir/odd.json" 'r["offset"] = 32 if i == 5 else r["offset"]'
start l
refused l "$dir/odd.json" "line 6: offset 32 is out of range"
check "import of a padded layout's rows" on l import "$dir/padded.json"
check "import of a format 1 file" on l import "$dir/v1.json"
ask "$dir/l.sock" '{"op":"query","nx":20,"ny":18,"nz":16,"pitch":24,"offset":3}' \
    '{"op":"query","nx":20,"ny":18,"nz":16}' '{"op":"query","nx":20,"ny":18,"nz":16,"offset":3}' \
    >"$dir/ask"
sed -n 1p "$dir/ask" | grep -q '"match":"exact".*"layout":{"pitch":24,"offset":3}' &&
    sed -n 2p "$dir/ask" | grep -q '"match":"exact".*"layout":{"pitch":20,"offset":0}' &&
    sed -n 3p "$dir/ask" | grep -q '"match":"nearest"' &&
    ok "each layout's rows answer their own layout exactly, another nearly" ||
    not_ok "the layout travels with the rows" "$dir/ask"

# --- which winner stands --------------------------------------------------------------------
# A winner measured here stays: daemon d tunes 20x18x16 itself, then imports a's, as if
# measured a day after d's (from another store), which would win were it imported.
edit "$dir/a.json" "$dir/later.json" 'r["store"] = "f" * 32; r["measured"] += 86400'
start d
on d tune 20 18 16 --wait >/dev/null 2>&1
check "d imports a's results over its own" on d import "$dir/later.json"
on d query 20 18 16 --json >"$dir/q"
python3 -c 'import json, sys
sys.exit(json.load(open(sys.argv[1]))["measured"]["imported"] != 0)' "$dir/q" &&
    grep -q "kept as stored" "$scratch/out" &&
    ok "a winner measured here is never replaced by an imported one" ||
    not_ok "the local winner stays" "$dir/q"
# Of two imported winners, the later measured stands: a's rows as from another store,
# measured a day later, then a day earlier.
edit "$dir/a.json" "$dir/earlier.json" 'r["store"] = "e" * 32; r["measured"] -= 86400'
at() { on b query 20 18 16 --json | python3 -c 'import json, sys
print(json.load(sys.stdin)["measured"]["at"])'; }
first=$(at)
on b import "$dir/later.json" >/dev/null 2>&1
later=$(at)
on b import "$dir/earlier.json" >/dev/null 2>&1
after=$(at)
[ "$later" -eq $((first + 86400)) ] && [ "$after" = "$later" ] &&
    ok "of two imported winners the later measured stands ($first, then $later, kept $after)" ||
    not_ok "the later imported winner stands: $first, $later, $after"

# --- confirm_imported: an imported winner of this device's kind is timed here first -------
printf '[daemon]\nconfirm_imported = true\n' >"$dir/confirm.conf"
start f --config "$dir/confirm.conf"
check "f imports a's results" on f import "$dir/a.json"
match=$(on f query 20 18 16 --json | field match)
grep -q "queued to be timed here" "$scratch/out" && [ "$match" = imported ] &&
    ok "an imported winner of this device's kind answers as imported, queued to be timed" ||
    not_ok "an imported winner waits for its confirmation: $match" "$scratch/out"
confirmed() { [ "$(on f query 20 18 16 --json | field match)" = exact ]; }
if wait_until 600 confirmed; then
    on f query 20 18 16 --json | python3 -c 'import json, sys
sys.exit(json.load(sys.stdin)["measured"]["imported"] != 0)' &&
        ok "once timed here, its own winner answers as exact" ||
        not_ok "the confirmed winner is this node's" "$dir/f.log"
else
    not_ok "the confirming job ends and its winner answers" "$dir/f.log"
fi

# --- the site store: read only, answering what the node's own store does not ------------
printf '[daemon]\nsite_store = %s\n' "$dir/a.json" >"$dir/site.conf"
sum=$(cksum <"$dir/a.json")
start s --config "$dir/site.conf"
source_of() { # source_of SHAPE...: "MATCH SOURCE HOST-OR-SITE" of daemon s's answer
    on s query "$@" --json | python3 -c 'import json, sys
a = json.load(sys.stdin); m = a.get("measured", {})
print(a["match"], a.get("source"), "site" in m and m["site"] == sys.argv[1])' "$dir/a.json"
}
[ "$(source_of 20 18 16)" = "exact site True" ] &&
    ok "the site store answers exact, saying so and naming its file" ||
    not_ok "the site store answers: $(source_of 20 18 16)" "$dir/s.log"
[ "$(results s)" = 0 ] && [ "$(cksum <"$dir/a.json")" = "$sum" ] &&
    ok "the site store is never written, nor copied into the node's store" ||
    not_ok "the site store is left alone: $(results s) rows in the node's store"
on s tune 20 18 16 --wait >/dev/null 2>&1
[ "$(source_of 20 18 16)" = "exact store False" ] &&
    ok "the node's own winner answers before the site's" ||
    not_ok "the node's own winner first: $(source_of 20 18 16)" "$dir/s.log"
# SIGHUP: a file that cannot be read keeps the rows in force; a new one is read.
printf '[daemon]\nsite_store = %s\n' "$dir/bad.json" >"$dir/site.conf"
kill -HUP "$pid_s"
wait_until 30 grep -q "site store: .*line 8.*keeping the rows in force" "$dir/s.log" &&
    [ "$(source_of 24 18 16)" = "exact site True" ] &&
    ok "SIGHUP with a bad site file keeps the rows in force" ||
    not_ok "a bad site file at SIGHUP keeps the rows: $(source_of 24 18 16)" "$dir/s.log"
on c tune 28 18 16 --wait >/dev/null 2>&1
on c export --what results -o "$dir/c.json"
printf '[daemon]\nsite_store = %s\n' "$dir/c.json" >"$dir/site.conf"
kill -HUP "$pid_s"
wait_until 30 grep -q "site store $dir/c.json" "$dir/s.log" &&
    [ "$(on s query 28 18 16 --json | field match)" = exact ] &&
    [ "$(source_of 24 18 16)" != "exact site True" ] &&
    ok "SIGHUP reads the site file named now, and only it" ||
    not_ok "SIGHUP reads the new site file" "$dir/s.log"

echo "# $passed passed, $failed failed"
[ "$failed" -eq 0 ]
