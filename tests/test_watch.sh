#!/bin/sh
# test_watch.sh - following a job (issue 32, item 1), against a real fdtuned on the cpu
# backend: a guided job says how many variants it expects to measure (what its search takes
# before patience ends it, not its whole space) and an ETA for them; `fdtune watch` follows
# a job queued before to its end; Ctrl-C on a wait ends the wait, never the job, and says
# how to follow it again; a cancelled job says who cancelled it; jobs and devices print as
# tables, CSV or JSON; bad job ids are refused with a message.
# Usage: BUILD=build sh tests/test_watch.sh
set -u
. "$(dirname "$0")/tap.sh"
daemon_test watch
"$FDTUNED" --socket "$FDTUNE_SOCKET" --db "$dir/store.db" --backend cpu 2>"$LOG" &
pid=$!
wait_answering

# --- a guided job's outlook ---------------------------------------------------------------
# Patience 8 over a space of some 1500 variants: the search ends after tens of them.
job=$("$FDTUNE" tune 24 20 16 --strategy guided --patience 8 --json | field job)
outlook() { # outlook JOB FILE: "done expected total eta_s" into FILE while the job runs
    "$FDTUNE" status "$1" --json | python3 -c 'import json, sys
j = json.load(sys.stdin)["job"]; c = j["cost"]
if j["state"] != "running" or "expected" not in c or "eta_s" not in c or j["done"] < 2:
    sys.exit(1)
print(j["done"], c["expected"], j["total"], c["eta_s"])' >"$2"
}
"$FDTUNE" watch "$job" >"$dir/watch" 2>&1 &
watcher=$!
also_kill=$watcher
if wait_until 300 outlook "$job" "$dir/outlook"; then
    read -r done expected total eta <"$dir/outlook"
    if [ "$expected" -ge "$done" ] && [ "$expected" -lt "$total" ] &&
        python3 -c "import sys; sys.exit(not 0 <= $eta < 3600)"; then
        ok "a guided job expects $expected of $total variants ($done done), ETA ${eta} s"
    else
        not_ok "a guided job's outlook: done $done, expected $expected of $total, ETA $eta" "$LOG"
    fi
else
    not_ok "a running guided job says what it expects and when it ends" "$LOG"
fi
wait "$watcher"
rc=$?
also_kill=""
if [ "$rc" -eq 0 ] && grep -q "done" "$dir/watch" && [ "$(job_state "$job")" = done ]; then
    ok "fdtune watch follows job $job to its end (exit 0)"
else
    not_ok "fdtune watch follows job $job to its end (exit $rc)" "$dir/watch"
fi
# Its status says how it searched, not that it measured every variant, why it ended, and
# on which device.
"$FDTUNE" status "$job" >"$dir/status" 2>&1
if grep -q "^  search    guided over every family ($total variants), patience 8$" "$dir/status" &&
    grep -q "^  ended     by patience, after [0-9]* of $total variants$" "$dir/status" &&
    grep -q "^  ran on    device 0$" "$dir/status" && grep -q "^  elapsed   [0-9]* s$" "$dir/status"
then
    ok "status: searched guided over $total variants with patience 8, ended by patience, on device 0"
else
    not_ok "status: searched guided with patience 8, ended by patience, on device 0" "$dir/status"
fi

# --- Ctrl-C ends the wait, not the job ------------------------------------------------------
# A script's background job starts with SIGINT ignored, which fdtune keeps: this one is
# started with it restored, as a terminal's foreground job has it. Its first progress line
# says it waits, its handler in place.
python3 -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execvp(sys.argv[1], sys.argv[1:])' "$FDTUNE" tune 28 20 16 --strategy exhaustive --wait \
    >"$dir/out" 2>"$dir/err" &
waiting=$!
also_kill=$waiting
job=""
wait_until 120 grep -q "^fdtune tune: " "$dir/err"
job=$(sed -n 's/^job \([0-9]*\) .*/\1/p' "$dir/out")
kill -INT "$waiting"
wait "$waiting"
rc=$?
also_kill=""
state=$(job_state "$job")
if [ "$rc" -eq 130 ] && grep -q "fdtune watch $job" "$dir/err" && [ "$state" = running ]; then
    ok "Ctrl-C on tune --wait: exit 130, job $job goes on, and the message names fdtune watch"
else
    not_ok "Ctrl-C on tune --wait: exit $rc, job '$job' $state" "$dir/err"
fi
"$FDTUNE" cancel "$job" >/dev/null
"$FDTUNE" status "$job" --json >"$dir/cancelled"
if grep -q '"state":"cancelled"' "$dir/cancelled" &&
    grep -q "\"error\":\"by uid $(id -u) (pid [0-9]*)\"" "$dir/cancelled" &&
    grep -q "notice: job $job cancelled: by uid $(id -u) (pid [0-9]*)" "$LOG"; then
    ok "job $job says who cancelled it, and the log too"
else
    cat "$LOG" >>"$dir/cancelled"
    not_ok "job $job says who cancelled it, and the log too" "$dir/cancelled"
fi

# --- tables -------------------------------------------------------------------------------------
# jobs and devices as a table sized to its contents, as CSV with or without its header, or
# as the daemon's JSON.
"$FDTUNE" jobs --format csv >"$dir/csv" 2>&1
if [ "$(head -1 "$dir/csv")" = "JOB,STATE,SHAPE,PREC,R,CACHE,DEV,VARIANTS,BEST,GB/s" ] &&
    grep -q "^$job,cancelled,28x20x16,double,1,auto,kind," "$dir/csv" &&
    grep -q "^1,done,24x20x16,double,1,auto,kind,[0-9]*/[0-9]*,[a-z]*:" "$dir/csv" &&
    [ "$("$FDTUNE" jobs --format csv --noheader | wc -l)" -eq 2 ] &&
    "$FDTUNE" jobs | head -1 | grep -q "^JOB STATE  *SHAPE  *PREC" &&
    "$FDTUNE" jobs --noheader | head -1 | grep -q "^ *$job cancelled" &&
    "$FDTUNE" devices --format json | python3 -c 'import json, sys
assert json.load(sys.stdin)["devices"][0]["backend"] == "cpu"' &&
    "$FDTUNE" devices --format csv --noheader | grep -q "^0,cpu,"; then
    ok "jobs and devices: --format table, csv and json, and --noheader"
else
    { "$FDTUNE" jobs; "$FDTUNE" devices; } >>"$dir/csv" 2>&1
    not_ok "jobs and devices: --format table, csv and json, and --noheader" "$dir/csv"
fi
# status: words by default, or one row: the job as jobs lists it, or the daemon's counts.
"$FDTUNE" status 1 --format csv >"$dir/status" 2>&1
if [ "$(head -1 "$dir/status")" = "JOB,STATE,SHAPE,PREC,R,CACHE,DEV,VARIANTS,BEST,GB/s" ] &&
    [ "$(sed -n 2p "$dir/status")" = "$("$FDTUNE" jobs --format csv | grep '^1,')" ] &&
    [ "$("$FDTUNE" status --format csv --noheader | cut -d, -f5-)" = "0,0,1,0,1" ] &&
    "$FDTUNE" status --format table | head -1 | grep -q "^VERSION  *PID  *BACKEND" &&
    "$FDTUNE" status "$job" --format json | grep -q "\"id\":$job," &&
    "$FDTUNE" status "$job" --format text | grep -q "^job $job: cancelled"; then
    ok "status: --format text, table, csv and json, and --noheader"
else
    { "$FDTUNE" status; "$FDTUNE" status --format csv; } >>"$dir/status" 2>&1
    not_ok "status: --format text, table, csv and json, and --noheader" "$dir/status"
fi

# --- bad ids ----------------------------------------------------------------------------------
"$FDTUNE" watch >"$dir/out" 2>&1
rc=$?
if [ "$rc" -eq 2 ] && grep -q "expected the JOB" "$dir/out"; then
    ok "watch with no job: exit 2 and why"
else
    not_ok "watch with no job: exit $rc" "$dir/out"
fi
"$FDTUNE" watch 999 >"$dir/out" 2>&1
rc=$?
if [ "$rc" -eq 1 ] && grep -qi "999" "$dir/out"; then
    ok "watch of a job that does not exist: exit 1 and its id"
else
    not_ok "watch of a job that does not exist: exit $rc" "$dir/out"
fi

if stop_daemon; then ok "fdtuned stops cleanly"; else not_ok "fdtuned stops cleanly" "$LOG"; fi
echo "# test_watch: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
