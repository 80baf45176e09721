#!/bin/sh
# test_export.sh - fdtune export of a large store (issue 13, item 7), against a real daemon
# on the cpu backend with a temporary socket and store: 1,000,000 result rows are exported
# in pages, whole, while another client's status is answered (every time, however slow the
# host: the slowest is reported, not judged) and the daemon's peak memory stays under 200 MB; a client that goes away mid-export, and one
# that reads one page and closes, leave the daemon serving; cursors and page sizes the
# daemon could not have made are refused; a daemon that stops mid-export fails the export
# and leaves no truncated file behind.
# Usage: BUILD=build sh tests/test_export.sh
set -u
. "$(dirname "$0")/tap.sh"
daemon_test export
# Under AddressSanitizer (make SAN=1 test) freed memory is held in a quarantine of 256 MB
# before reuse, which the RSS bound below would count; a small one keeps the bound about
# the daemon, not the sanitizer.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=8"
DB=$dir/fdtuned.db
ROWS=1000000
HWM_KB=204800

# A helper of this test alone: "sql DB SQL" runs SQL on the store (the sqlite3 command is
# not among the project's dependencies, libsqlite3 is); "ask SOCKET LINE" sends one request
# line, prints the first answer line and closes, mid-answer or not.
cat >"$dir/helper.c" <<'CEOF'
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int sql(const char *db, const char *text)
{
    sqlite3 *h;
    char *err = NULL;
    if (sqlite3_open(db, &h) != SQLITE_OK || sqlite3_exec(h, text, NULL, NULL, &err) != 0) {
        fprintf(stderr, "sql: %s\n", err ? err : sqlite3_errmsg(h));
        return 1;
    }
    return sqlite3_close(h) != SQLITE_OK;
}

static int ask(const char *path, const char *line)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    strncpy(sa.sun_path, path, sizeof sa.sun_path - 1);
    const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0)
        return 1;
    if (write(fd, line, strlen(line)) < 0 || write(fd, "\n", 1) != 1)
        return 1;
    char c;
    while (read(fd, &c, 1) == 1 && c != '\n')
        putchar(c);
    putchar('\n');
    close(fd);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "sql") == 0)
        return sql(argv[2], argv[3]);
    if (argc == 4 && strcmp(argv[1], "ask") == 0)
        return ask(argv[2], argv[3]);
    return 2;
}
CEOF
if ! cc -O2 -o "$dir/helper" "$dir/helper.c" -lsqlite3 2>"$dir/cc.log"; then
    not_ok "the test's helper builds" "$dir/cc.log"
    exit 1
fi
HELPER=$dir/helper

# No bound on a measurement's spread: the tuning job only provides rows, and a loaded host
# must not fail it (tests/test_noisy.sh tests the bound).
printf '[tuning]\nmax_spread = 0\n' >"$dir/fdtuned.conf"
start_daemon() {
    "$FDTUNED" --config "$dir/fdtuned.conf" --socket "$FDTUNE_SOCKET" --db "$DB" --backend cpu \
        2>>"$LOG" &
    pid=$!
    wait_answering
}

hwm_kb() {
    sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$pid/status"
}

now_ms() {
    echo $(($(date +%s%N) / 1000000))
}

# One tuned problem gives the rows a real job and device; then a million copies of its
# first result, each its own variant, in one transaction, with the daemon stopped.
start_daemon
check "a tuning job stores results" "$FDTUNE" tune 13 17 11 --family naive --subset 2 --wait
stop_daemon
t0=$(now_ms)
cols="job_id, device_id, stencil, radius, precision, nx, ny, nz, cache, kernels, variant,
      status, leader, median_ms, min_ms, q1_ms, q3_ms, gbps, compile_ms, samples, reps, vgprs,
      sgprs, scratch_bytes, shared_bytes, message, measured"
check "a store of $ROWS results" "$HELPER" sql "$DB" "
BEGIN;
CREATE TEMP TABLE one AS SELECT * FROM results ORDER BY id LIMIT 1;
DELETE FROM results;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $ROWS)
INSERT INTO results ($cols)
SELECT job_id, device_id, stencil, radius, precision, nx, ny, nz, cache, kernels,
       variant || ':copy' || i, status, leader, median_ms, min_ms, q1_ms, q3_ms, gbps,
       compile_ms, samples, reps, vgprs, sgprs, scratch_bytes, shared_bytes, message, measured
FROM one, n;
CREATE TEMP TABLE b AS SELECT * FROM best;
UPDATE b SET nx = nx + 100;
INSERT INTO best SELECT * FROM b;
COMMIT;"
echo "# the store was filled in $(($(now_ms) - t0)) ms"
start_daemon

# The export, and beside it another client's status, again and again until the export ends:
# each must be answered (a generous --timeout: a hang fails, a slow host does not).
t0=$(now_ms)
"$FDTUNE" export --what results --format csv -o "$dir/results.csv" 2>"$dir/export.err" &
export_pid=$!
worst=0
samples=0
unanswered=0
while kill -0 "$export_pid" 2>/dev/null; do
    s=$(now_ms)
    "$FDTUNE" status --timeout 120 >/dev/null 2>&1 || unanswered=$((unanswered + 1))
    took=$(($(now_ms) - s))
    [ "$took" -gt "$worst" ] && worst=$took
    samples=$((samples + 1))
done
wait "$export_pid"
rc=$?
took=$(($(now_ms) - t0))
lines=$(wc -l <"$dir/results.csv" 2>/dev/null || echo 0)
echo "# export of $ROWS rows: ${took} ms, exit $rc, $lines lines; status: $samples answers, slowest ${worst} ms"
if [ "$rc" -eq 0 ] && [ "$lines" -eq $((ROWS + 1)) ]; then
    ok "export --what results --format csv writes $ROWS rows and the header"
else
    not_ok "export --what results --format csv writes $ROWS rows and the header" "$dir/export.err"
fi
if [ "$(head -c 24 "$dir/results.csv")" = "format,fingerprint,devic" ] &&
    [ "$(grep -c ':copy' "$dir/results.csv")" -eq "$ROWS" ]; then
    ok "the CSV has one header and every row once"
else
    not_ok "the CSV has one header and every row once"
fi
if [ "$unanswered" -eq 0 ]; then
    ok "status is answered every time during the export ($samples answers, slowest ${worst} ms)"
else
    not_ok "status is answered every time during the export ($unanswered of $samples unanswered)"
fi
hwm=$(hwm_kb)
echo "# the daemon's peak RSS (VmHWM): ${hwm} kB"
if [ "$hwm" -lt "$HWM_KB" ]; then
    ok "the daemon's peak memory stays under $((HWM_KB / 1024)) MB (${hwm} kB)"
else
    not_ok "the daemon's peak memory stays under $((HWM_KB / 1024)) MB (${hwm} kB)"
fi

# Clients that go away mid-export: killed after a second, and one that closes after the
# first page. The daemon goes on serving and its memory does not grow.
timeout 1 "$FDTUNE" export --what results --format csv -o "$dir/cut.csv" >/dev/null 2>&1
first=$("$HELPER" ask "$FDTUNE_SOCKET" '{"op":"export","what":"results","format":"csv"}')
case $first in
*'"count":1000'*'"next":'*) ok "the first page holds 1000 rows and a cursor" ;;
*) not_ok "the first page holds 1000 rows and a cursor: $(echo "$first" | head -c 300)" ;;
esac
if "$FDTUNE" status >/dev/null 2>&1 && [ "$(hwm_kb)" -lt "$HWM_KB" ]; then
    ok "clients that leave mid-export leave the daemon serving, under $((HWM_KB / 1024)) MB"
else
    not_ok "clients that leave mid-export leave the daemon serving, under $((HWM_KB / 1024)) MB" "$LOG"
fi

# The best rows page the same way: pages of one row, each cursor starting the next, until
# a page comes without one; every row once (the tuned problem's and its copy's, under cache
# hot and auto).
req='{"op":"export","what":"best","limit":1}'
pages=0
: >"$dir/best.pages"
while [ "$pages" -lt 10 ]; do
    page=$("$HELPER" ask "$FDTUNE_SOCKET" "$req")
    echo "$page" >>"$dir/best.pages"
    pages=$((pages + 1))
    cursor=$(echo "$page" | sed -n 's/.*"next":\(\[[^]]*\]\).*/\1/p')
    [ -z "$cursor" ] && break
    req="{\"op\":\"export\",\"what\":\"best\",\"limit\":1,\"after\":$cursor}"
done
if [ "$pages" -eq 4 ] && [ "$(grep -c '"count":1,' "$dir/best.pages")" -eq 4 ] &&
    [ "$(grep -c '"nx":13,' "$dir/best.pages")" -eq 2 ] &&
    [ "$(grep -c '"nx":113,' "$dir/best.pages")" -eq 2 ]; then
    ok "best rows page by their key: 4 pages of one row, the last without a cursor"
else
    not_ok "best rows page by their key: 4 pages of one row, the last without a cursor" \
        "$dir/best.pages"
fi
"$FDTUNE" export --what best --format json -o "$dir/best.json" 2>"$dir/export.err"
if [ "$(grep -c '"variant"' "$dir/best.json")" -eq 4 ] && [ "$(head -1 "$dir/best.json")" = "[" ] &&
    [ "$(tail -1 "$dir/best.json")" = "]" ]; then
    ok "export --what best --format json writes one array, one row per line"
else
    not_ok "export --what best --format json writes one array, one row per line" "$dir/export.err"
fi

refused() { # refused NAME REQUEST TEXT: answered bad_request naming TEXT
    answer=$("$HELPER" ask "$FDTUNE_SOCKET" "$2")
    case $answer in
    *'"code":"bad_request"'*"$3"*) ok "$1" ;;
    *) not_ok "$1: $answer" ;;
    esac
}
refused "a results cursor that is not an id is refused" \
    '{"op":"export","what":"results","after":"x"}' "'after' must be the 'next' of a results"
refused "a negative results cursor is refused" \
    '{"op":"export","what":"results","after":-1}' "'after'"
refused "a best cursor that is not a key is refused" \
    '{"op":"export","what":"best","after":[1,"laplacian",1,"double","tepid",13,17,11]}' \
    "'after' must be the 'next' of a best"
refused "a page of 0 rows is refused" '{"op":"export","limit":0}' "'limit' must be"
refused "a page over 1000 rows is refused" '{"op":"export","limit":1001}' "'limit' must be"

# A daemon that stops mid-export: the export fails and removes its truncated file. The
# output is a FIFO the test reads from, so that the export cannot finish before the stop:
# it has written a first page and waits for the test to read on; the daemon stops; then
# the test reads all there is. The test holds both ends (fd 3), so that no open waits on
# the other side, whatever the export does.
mkfifo "$dir/stopped.csv"
exec 3<>"$dir/stopped.csv"
"$FDTUNE" export --what results --format csv -o "$dir/stopped.csv" 2>"$dir/export.err" &
export_pid=$!
timeout 120 head -c 1 <&3 >/dev/null
stop_daemon
cat <&3 >/dev/null &
drain=$!
wait "$export_pid"
rc=$?
kill "$drain"
exec 3<&-
if [ "$rc" -ne 0 ] && [ ! -e "$dir/stopped.csv" ]; then
    ok "an export the daemon stops fails (exit $rc) and leaves no truncated file"
else
    not_ok "an export the daemon stops fails (exit $rc) and leaves no truncated file" "$dir/export.err"
fi

echo "# $passed passed, $failed failed"
[ "$failed" -eq 0 ]
