#!/bin/sh
# test_daemon.sh - fdtuned as users run it, through the fdtune command: a real daemon on the
# cpu backend with a temporary socket and database. Tune and query; restart and the answer
# is still there; kill -9 during a batch and the batch resumes without losing or measuring
# again a finished result; a worker killed mid-job, a variant that faults and one that
# hangs: the job completes; a second SIGTERM hurries a stop and the store is still closed
# cleanly; cancel; SIGHUP, with a bad config file and with a FIFO; one daemon per store and
# its files' modes; a worker that sends bad code frames; a worker that prints on stdout; a
# bad config file.
# Usage: BUILD=build sh tests/test_daemon.sh
set -u
. "$(dirname "$0")/tap.sh"
require python3 sqlite3
daemon_test daemon
DB=$dir/fdtuned.db
CONF=$dir/fdtuned.conf
worker_bin=$(cd "$BUILD" && pwd)/fdtune-worker

# The real worker behind a tap: each task line the daemon sends it is copied to
# tasks.<daemon pid>.<worker pid>, so that the test sees every variant the daemon asked to
# have measured. The store keeps one first-pass result per variant and refuses a second,
# so its rows alone could never show a variant measured twice. A probe has no tasks fd.
# No open of the FIFO may block: the shell holds it read-write (fd 5) while tee and the
# worker open their ends, so that a tee killed before it opened its end (a worker stopped
# as it starts) cannot leave the shell waiting in open() for ever; the worker's end is
# read-only, so it sees the end of the tasks when tee's end closes.
cat >"$dir/tapped-worker" <<EOF
#!/bin/sh
case "\$*" in *"--tasks-fd 3"*) ;; *) exec "$worker_bin" "\$@" ;; esac
fifo="$dir/tasks-fifo.\$\$"
mkfifo "\$fifo" || exit 1
exec 5<>"\$fifo"
rm -f "\$fifo"
tee "$dir/tasks.\$PPID.\$\$" <&3 >&5 3<&- 5>&- &
exec "$worker_bin" "\$@" 3</proc/self/fd/5 5<&-
EOF
chmod +x "$dir/tapped-worker"

# A short heartbeat and deadline so that a hung variant is found in seconds; few samples so
# that the cpu backend is quick. test_families offers the fault and spin families. No bound
# on a measurement's spread: a loaded test host would make leaders noisy and fail jobs that
# these tests need done (tests/test_noisy.sh tests the bound).
cat >"$CONF" <<EOF
[worker]
worker_path = $dir/tapped-worker
heartbeat_ms = 200
heartbeat_timeout_ms = 5000
variant_deadline_ms = 4000
test_families = true
[tuning]
samples = 3
min_sample_ms = 0.1
leaders = 2
leader_samples = 4
max_spread = 0
[search]
budget = 32
EOF

start_daemon() { # start_daemon [CONFIG]
    "$FDTUNED" --config "${1:-$CONF}" --socket "$FDTUNE_SOCKET" --db "$DB" --backend cpu 2>>"$LOG" &
    pid=$!
    wait_answering
}

job_warm() { # a job's warm start: the job ids and row counts it draws on
    "$FDTUNE" status "$1" --json | sed -n 's/.*"warm":"\([0-9,:]*\)".*/\1/p'
}

job_has_progress() { # job_has_progress JOB N: at least N variants measured
    done_count=$("$FDTUNE" status "$1" --json | field done)
    [ "${done_count:-0}" -ge "$2" ]
}

# The pid of device 0's worker, 0 when it has none.
worker_pid() {
    "$FDTUNE" status --json | sed -n 's/.*"workers":\[{[^]]*"pid":\([0-9]*\).*/\1/p'
}

# A process that is gone, or a zombie no one has reaped yet.
process_gone() {
    [ ! -e "/proc/$1" ] || grep -q '^[0-9]* ([^)]*) Z' "/proc/$1/stat"
}

# first-pass result rows of the export, one "job,variant,status,median" per line
first_pass_rows() {
    "$FDTUNE" export --what results --format csv >"$dir/export.csv" || return 1
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
             $col["leader"] == 0 { print $col["job"] "," $col["variant"] "," $col["status"] "," $col["median_ms"] }' \
        "$dir/export.csv"
}

# stored JOB...: the jobs' first-pass results in the store, "job,variant,status,median" a
# line; read beside a daemon or, after kill -9, before the next one starts (the store is in
# WAL mode), so that nothing the next daemon measures is taken for what was there before.
stored() {
    sqlite3 "$DB" "SELECT job_id || ',' || variant || ',' || status || ',' || ifnull(median_ms, '')
                   FROM results WHERE leader = 0 AND job_id IN ($(echo "$*" | tr ' ' ,))
                   ORDER BY 1"
}

# sent_again JOB BEFORE: the variants of BEFORE (stored's lines, kept before a restart)
# that the daemon $pid sent its worker to measure again for JOB, one a line.
sent_again() {
    shape=$(sqlite3 "$DB" "SELECT nx, ny, nz, precision FROM jobs WHERE id = $1")
    python3 -c 'import glob, json, sys
tasks, job, before, shape = sys.argv[1:5]
stored = {line.split(",")[1] for line in open(before) if line.startswith(job + ",")}
for path in sorted(glob.glob(tasks)):
    for line in open(path):
        task = json.loads(line)
        p = task.get("problem", {})
        if task.get("op") == "measure" and \
                "|".join(str(p.get(k)) for k in ("nx", "ny", "nz", "precision")) == shape:
            for v in task["variants"]:
                if v in stored:
                    print(v)' "$dir/tasks.$pid.*" "$1" "$2" "$shape"
}

# measured_nothing_twice NAME BEFORE JOB...: none of the jobs' results kept in BEFORE is lost
# or changed, none was sent to be measured again by the daemon $pid, and the store refused
# no second result (it keeps the first and says so in the log).
measured_nothing_twice() {
    name=$1 before=$2
    shift 2
    stored "$@" >"$dir/after"
    lost=$(comm -23 "$before" "$dir/after" | wc -l)
    : >"$dir/again"
    for j in "$@"; do sent_again "$j" "$before" | sed "s/^/job $j: sent again: /" >>"$dir/again"; done
    grep "already has a first-pass result" "$LOG" >>"$dir/again"
    if [ -s "$before" ] && [ "$lost" -eq 0 ] && [ ! -s "$dir/again" ]; then
        ok "$name ($(wc -l <"$before") results kept, none measured again)"
    else
        not_ok "$name: $lost lost, $(grep -c . "$dir/again") lines of measuring again" "$dir/again"
    fi
}

# settled JOB: the job ended, or the store refused a second result of a variant: a job that
# measures again what it measured need not be waited for until the bound.
settled() {
    job_finished "$1" || grep -q "already has a first-pass result" "$LOG"
}

start_daemon

# --- tune and query ---------------------------------------------------------------------
check "tune 13x17x11 --wait finishes" "$FDTUNE" tune 13 17 11 --family naive --subset 4 --wait
"$FDTUNE" query 13 17 11 --json >"$dir/q"
if grep -q '"match":"exact"' "$dir/q" && grep -q '"variant":"naive:' "$dir/q"; then
    ok "query 13x17x11 is an exact answer"
else
    not_ok "query 13x17x11 is an exact answer" "$dir/q"
fi
# The job's leaders round timed the interior copy beside the device copy: the answer and the
# export carry the figure stored with the winner.
icopy=$(field interior_copy_gbps <"$dir/q")
"$FDTUNE" export --format csv >"$dir/best.csv"
icopy_export=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
                        $col["nx"] == 13 && $col["ny"] == 17 && $col["nz"] == 11 &&
                        $col["cache"] == "auto" { print $col["interior_copy_gbps"] }' "$dir/best.csv")
if awk -v a="${icopy:-0}" -v b="${icopy_export:-0}" 'BEGIN { exit !(a > 0 && a == b) }'; then
    ok "the answer and the export carry the job's interior copy ($icopy GB/s)"
else
    not_ok "the answer and the export carry the job's interior copy ('$icopy', '$icopy_export')" "$dir/q"
fi
# Tuned in the default mode, auto: on a device that cannot persist the leaders are timed hot
# alone, and the choice, hot, is stored under auto beside the hot winner.
states=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
                  $col["nx"] == 13 && $col["ny"] == 17 && $col["nz"] == 11 {
                      printf "%s=%s ", $col["cache"], $col["state"] }' "$dir/best.csv")
if [ "$states" = "auto=hot hot=hot " ] && grep -q '"cache":"hot"' "$dir/q" &&
    "$FDTUNE" jobs --json | grep -q '"cache":"auto"'; then
    ok "an auto job stores its choice (hot here) beside the hot winner"
else
    not_ok "an auto job stores its choice (hot here) beside the hot winner ('$states')" "$dir/q"
fi
"$FDTUNE" query 26 17 11 --json >"$dir/q"
if grep -q '"match":"nearest"' "$dir/q" && grep -q '"from":{"nx":13,"ny":17,"nz":11' "$dir/q"; then
    ok "query 26x17x11 answers from the nearest tuned shape"
else
    not_ok "query 26x17x11 answers from the nearest tuned shape" "$dir/q"
fi

# The solver a solver author copies, built through pkg-config against libfdtune: it runs
# the tuned variant the daemon names, within the scheme's error.
variant=$("$FDTUNE" query 13 17 11 --json | sed -n 's/.*"variant":"\([^"]*\)".*/\1/p')
FDTUNE_CACHE_DIR="$dir/modules" "$BUILD/examples/heat" 13 17 11 --steps 10 >"$dir/q" 2>&1
if [ $? -eq 0 ] && tail -n 1 "$dir/q" | grep -q "source=tuned variant=$variant "; then
    ok "the heat solver runs the tuned $variant"
else
    not_ok "the heat solver runs the tuned $variant" "$dir/q"
fi

# --- restart: the answer is still there -----------------------------------------------------
if stop_daemon && [ ! -e "$FDTUNE_SOCKET" ]; then
    ok "SIGTERM stops fdtuned with status 0 and removes its socket"
else
    not_ok "SIGTERM stops fdtuned with status 0 and removes its socket" "$LOG"
fi
start_daemon
"$FDTUNE" query 13 17 11 --json >"$dir/q"
if grep -q '"match":"exact"' "$dir/q"; then ok "after a restart the answer is still exact"
else not_ok "after a restart the answer is still exact" "$dir/q"; fi
# Tuning the same problem again measures again, but compiles nothing: the code objects of
# the first run are in the store's cache.
check "tuning 13x17x11 again" "$FDTUNE" tune 13 17 11 --family naive --subset 4 --wait
if grep -q 'done: .* 4 of 4 variants from the code cache' "$LOG"; then
    ok "the second tuning takes all 4 code objects from the cache"
else
    not_ok "the second tuning takes all 4 code objects from the cache" "$LOG"
fi

# --- kill -9 during a batch ---------------------------------------------------------------
printf '# three shapes\n15 15 15\n\n17 13 11\n11 11 19\n' >"$dir/shapes"
"$FDTUNE" batch "$dir/shapes" --family tiled --subset 6 --json >"$dir/batch"
jobs=$(sed -n 's/.*"jobs":\[\([0-9,]*\)\].*/\1/p' "$dir/batch" | tr ',' ' ')
first=${jobs%% *}
last=${jobs##* }
if [ -z "$first" ] || ! wait_until 120 job_has_progress "$first" 2; then
    not_ok "the batch started" "$dir/batch"
fi
kill -9 "$pid"
wait "$pid" 2>/dev/null
pid=""
stored $jobs >"$dir/before"
start_daemon # on a socket file left behind: the stale file is replaced
if wait_until 300 settled "$last" && job_finished "$last"; then
    ok "after kill -9 the batch resumes and finishes"
else
    not_ok "after kill -9 the batch resumes and finishes" "$LOG"
fi
measured_nothing_twice "no result measured before kill -9 is lost or measured again" \
    "$dir/before" $jobs
first_pass_rows >"$dir/after"
for j in $jobs; do
    total=$("$FDTUNE" status "$j" --json | field total)
    rows=$(grep -c "^$j," "$dir/after")
    if [ "$(job_state "$j")" = done ] && [ "$rows" -eq "$total" ]; then
        ok "batch job $j: done, $rows results for $total variants"
    else
        not_ok "batch job $j: $(job_state "$j"), $rows results for $total variants"
    fi
done

# --- the guided search: a budget, a warm start, kill -9 mid-job, the quick job ---------------
job=$("$FDTUNE" tune 21 19 17 --strategy guided --budget 20 --json | field job)
if wait_until 300 job_finished "$job" && [ "$(job_state "$job")" = done ]; then
    rows=$(first_pass_rows | grep -c "^$job,")
    warm=$(job_warm "$job")
    if [ "$rows" -le 20 ] && [ "$rows" -gt 0 ] && [ -n "$warm" ] &&
        "$FDTUNE" query 21 19 17 --json | grep -q '"match":"exact"'; then
        ok "a guided tune with --budget 20 measures $rows variants, warm-started from jobs $warm, and answers exact"
    else
        not_ok "a guided tune with --budget 20: $rows variants, warm '$warm'" "$LOG"
    fi
else
    not_ok "a guided tune with --budget 20 ends $(job_state "$job")" "$LOG"
fi
"$FDTUNE" query 23 21 19 --json >"$dir/q"
if grep -q '"match":"nearest"' "$dir/q" && grep -q '"chosen_by":"model"' "$dir/q" &&
    grep -q '"neighbours":[1-9]' "$dir/q"; then
    ok "an untuned shape is answered by the guided model over its tuned neighbours"
else
    not_ok "an untuned shape is answered by the guided model" "$dir/q"
fi
job=$("$FDTUNE" tune 25 23 19 --budget 40 --json | field job)
wait_until 120 job_has_progress "$job" 10
warm_before=$(job_warm "$job")
kill -9 "$pid"
wait "$pid" 2>/dev/null
pid=""
stored "$job" >"$dir/before"
start_daemon
if wait_until 300 settled "$job" && [ "$(job_state "$job")" = done ]; then
    warm_after=$(job_warm "$job")
    if [ "$(stored "$job" | wc -l)" -le 40 ] && [ "$warm_before" = "$warm_after" ]; then
        ok "a guided job killed with -9 resumes with its warm start ($warm_after) within its budget"
    else
        not_ok "guided after kill -9: $(stored "$job" | wc -l) results, warm '$warm_before' then '$warm_after'"
    fi
else
    not_ok "a guided job killed with -9 ends $(job_state "$job")" "$LOG"
fi
measured_nothing_twice "a guided job killed with -9 measures nothing twice" "$dir/before" "$job"
# A daemon whose space differs (test families now off) resumes a job: its rebuilt search goes
# another way than the one that stored the rows, and must still measure nothing twice.
job=$("$FDTUNE" tune 29 19 17 --budget 40 --patience 0 --json | field job)
wait_until 120 job_has_progress "$job" 12
stop_daemon
stored "$job" >"$dir/before"
sed 's/^test_families = true/test_families = false/' "$CONF" >"$dir/no-test-families.conf"
start_daemon "$dir/no-test-families.conf"
if wait_until 300 settled "$job" && [ "$(job_state "$job")" = done ] &&
    [ "$(stored "$job" | wc -l)" -le 40 ]; then
    ok "a job resumed in a changed space finishes within its budget"
else
    not_ok "a job resumed in a changed space ends $(job_state "$job")" "$LOG"
fi
measured_nothing_twice "a job resumed in a changed space measures nothing twice" "$dir/before" "$job"
# A warm list that the store holds damaged (its first entry cut after the id's colon): the
# resumed job reads it up to the damage, keeps it as it is, and finishes, measuring nothing
# twice.
job=$("$FDTUNE" tune 31 19 17 --budget 40 --patience 0 --json | field job)
wait_until 120 job_has_progress "$job" 12
stop_daemon
sqlite3 "$DB" "UPDATE jobs SET warm = substr(warm, 1, instr(warm, ':')) || 'x,' || warm
               WHERE id = $job"
stored "$job" >"$dir/before"
start_daemon
if wait_until 300 settled "$job" && [ "$(job_state "$job")" = done ] &&
    "$FDTUNE" status "$job" --json | grep -q '"warm":"[0-9]*:x,' &&
    ! grep -q "job $job: cannot" "$LOG" && [ "$(stored "$job" | wc -l)" -le 40 ]; then
    ok "a job whose stored warm list is damaged resumes, reads it up to the damage, and finishes"
else
    not_ok "a job with a damaged warm list ends $(job_state "$job")" "$LOG"
fi
measured_nothing_twice "a job with a damaged warm list measures nothing twice" "$dir/before" "$job"
stop_daemon
start_daemon
"$FDTUNE" query 27 21 19 --tune-if-missing --json >"$dir/q"
job=$(field job <"$dir/q")
if [ -n "$job" ] && wait_until 300 job_finished "$job" && [ "$(job_state "$job")" = done ] &&
    grep -q "job $job: the quick job's winner .* is stored; the search goes on" "$LOG" &&
    "$FDTUNE" query 27 21 19 --json | grep -q '"match":"exact"'; then
    ok "tune_if_missing runs the quick job first, stores its winner, then searches on"
else
    not_ok "tune_if_missing's quick job (job ${job:-none})" "$LOG"
fi

# --- a worker killed mid-job --------------------------------------------------------------
# 100 variants are many batches: after the first batch's results the worker is still busy.
job=$("$FDTUNE" tune 19 13 11 --family tiled --subset 100 --json | field job)
wait_until 120 job_has_progress "$job" 1
worker=$(worker_pid)
if [ -n "$worker" ] && [ "$worker" -gt 0 ] && kill -9 "$worker"; then
    if wait_until 180 job_finished "$job" && [ "$(job_state "$job")" = done ]; then
        ok "a worker killed mid-job: the job still completes"
    else
        not_ok "a worker killed mid-job: the job ends $(job_state "$job")" "$LOG"
    fi
else
    not_ok "found the worker's pid to kill" "$LOG"
fi

# --- a frozen worker: no heartbeat, killed, replaced -------------------------------------------
# Float: nothing of it is in the code cache yet, so the worker is busy compiling for seconds.
job=$("$FDTUNE" tune 23 13 11 --family tiled --subset 100 --precision float --json | field job)
wait_until 120 job_has_progress "$job" 1
worker=$(worker_pid)
if [ -n "$worker" ] && [ "$worker" -gt 0 ] && kill -STOP "$worker"; then
    if wait_until 180 job_finished "$job" && [ "$(job_state "$job")" = done ] &&
        grep -Eq "worker 0 \(pid $worker\) (sent nothing|spent over)" "$LOG"; then
        ok "a frozen worker is killed by its watchdog and the job completes"
    else
        not_ok "a frozen worker: the job ends $(job_state "$job")" "$LOG"
    fi
else
    not_ok "found the worker's pid to freeze" "$LOG"
fi

# --- a variant that faults, one that hangs --------------------------------------------------
for family in fault spin; do
    case $family in fault) want=crashed ;; spin) want=timeout ;; esac
    job=$("$FDTUNE" tune 13 17 11 --family $family --json | field job)
    if wait_until 180 job_finished "$job" && [ "$(job_state "$job")" = done ]; then
        first_pass_rows >"$dir/rows"
        bad=$(grep -c "^$job,$family:64x1x1,$want," "$dir/rows")
        good=$(grep -c "^$job,$family:[0-9x]*,ok," "$dir/rows")
        if [ "$bad" -eq 1 ] && [ "$good" -eq 3 ]; then
            ok "$family: $family:64x1x1 is stored $want, the other three ok, the job done"
        else
            not_ok "$family: $bad $want and $good ok" "$dir/rows"
        fi
    else
        not_ok "$family: the job ends $(job_state "$job")" "$LOG"
    fi
done
best=$("$FDTUNE" query 13 17 11 --json | field variant)
case $best in fault:64* | spin:64*) not_ok "a failed variant never wins ($best)" ;;
*) ok "a failed variant never wins" ;; esac

# --- a worker does not outlive its daemon ----------------------------------------------------
# After spin:32x1x1 the worker is inside spin:64x1x1, which never returns: only the death of
# its daemon can end it before the daemon's deadline would (the parent-death signal the
# worker asks for, or its next heartbeat into a pipe no one reads).
job=$("$FDTUNE" tune 13 17 12 --family spin --json | field job)
wait_until 120 job_has_progress "$job" 1
orphan=$(worker_pid)
kill -9 "$pid"
wait "$pid" 2>/dev/null
pid=""
if [ "${orphan:-0}" -gt 0 ] && wait_until 60 process_gone "$orphan"; then
    ok "a worker stuck in a kernel that never ends dies with its daemon (kill -9)"
else
    not_ok "a worker stuck in a kernel dies with its daemon (pid ${orphan:-none})"
    [ "${orphan:-0}" -gt 0 ] && kill -9 "$orphan"
fi
start_daemon

# --- a second SIGTERM hurries the stop ---------------------------------------------------------
# A client that sends requests and does not read its answers holds the stop up: the daemon lets
# answers drain before it closes a connection. A second SIGTERM hurries it: exit 3, answers left
# undelivered, the store still closed cleanly (intact, its WAL checkpointed), the running job
# back in the queue with its results, and the next start resumes it.
draining_only() { # draining_only JOB WORKER: a stop done but for the answers it drains
    [ ! -e "$FDTUNE_SOCKET" ] && process_gone "$2" &&
        [ "$(sqlite3 "$DB" "SELECT state FROM jobs WHERE id = $1")" = queued ]
}
result_count() { # result_count JOB: the job's rows in the store
    sqlite3 "$DB" "SELECT count(*) FROM results WHERE job_id = $1"
}
# The client asks for a kernel's source SOURCES times in one write: some 20 KB of requests,
# which the socket's buffers take whole, so the write returns; their answers, about 8.6 KB
# each, come to 3.4 MB, far more than the buffers hold: the daemon answers until they are
# full and then holds the rest. Once its first answer has begun to arrive it
# says so in $dir/answering; only at SIGUSR1 does it read, to the end, and write to
# $dir/delivered how many lines came and how many of them were whole source answers.
SOURCES=400
job=$("$FDTUNE" tune 17 13 11 --family zmarch --subset 40 --json | field job)
wait_until 120 job_has_progress "$job" 1
hash=$("$FDTUNE" query 13 17 11 --json | field source_hash)
rm -f "$dir/answering" "$dir/delivered"
python3 -c 'import signal, socket, sys
path, source_hash, count, answering, delivered = sys.argv[1:6]
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
s = socket.socket(socket.AF_UNIX)
s.settimeout(600)
s.connect(path)
s.sendall(b"{\"op\":\"source\",\"hash\":\"%s\"}\n" % source_hash.encode() * int(count))
s.recv(1, socket.MSG_PEEK)
open(answering, "w").close()
signal.sigtimedwait({signal.SIGUSR1}, 600)
data = bytearray()
while chunk := s.recv(1 << 20):
    data += chunk
lines = bytes(data).split(b"\n")[:-1]
whole = sum(b"\"ok\":true" in line and b"\"text\":" in line for line in lines)
open(delivered, "w").write("%d %d\n" % (len(lines), whole))' \
    "$FDTUNE_SOCKET" "$hash" "$SOURCES" "$dir/answering" "$dir/delivered" &
reader=$!
also_kill=$reader
wait_until 120 test -e "$dir/answering"
running=$(job_state "$job")
worker=$(worker_pid)
stops=$(grep -c 'stopped$' "$LOG") # the earlier daemons' stops
kill -TERM "$pid"
# The stop has done all it does but drain the answers: the socket is gone, the worker has
# exited and the job is back in the queue. Then only the client that does not read holds
# the daemon, which must still be there, not stopped.
wait_until 120 draining_only "$job" "$worker"
held=no
kill -0 "$pid" 2>/dev/null && [ "$(grep -c 'stopped$' "$LOG")" -eq "$stops" ] && held=yes
kill -TERM "$pid"
wait "$pid"
rc=$?
pid=""
kill -USR1 "$reader"
wait "$reader"
also_kill=""
read -r lines whole <"$dir/delivered" || { lines=none; whole=0; }
wal=$(stat -c %s "$DB-wal" 2>/dev/null || echo 0)
if [ "$running" = running ] && [ "$held" = yes ] && [ "$rc" -eq 3 ] &&
    [ "$lines" = "$whole" ] && [ "$whole" -gt 0 ] && [ "$whole" -lt "$SOURCES" ] &&
    [ "$wal" -eq 0 ] && [ "$(sqlite3 "$DB" 'PRAGMA integrity_check')" = ok ] &&
    [ "$(sqlite3 "$DB" "SELECT state FROM jobs WHERE id = $job")" = queued ] &&
    grep -q 'SIGTERM while stopping: hurrying' "$LOG"; then
    ok "a second SIGTERM hurries a held-up stop: exit 3, $whole of $SOURCES answers delivered, the store intact and checkpointed, job $job queued"
else
    not_ok "a second SIGTERM: job '$running', held '$held', exit $rc, $whole whole of $lines lines of $SOURCES answers, -wal $wal bytes" "$LOG"
fi
kept=$(result_count "$job")
start_daemon
if wait_until 300 job_finished "$job" && [ "$(job_state "$job")" = done ] &&
    [ "$kept" -gt 0 ] && [ "$(result_count "$job")" -ge "$kept" ]; then
    ok "the next start resumes the job the hurried stop left ($kept results kept)"
else
    not_ok "the job left by a hurried stop: $(job_state "$job"), $kept results kept" "$LOG"
fi

# --- cancel -------------------------------------------------------------------------------
job=$("$FDTUNE" tune 31 29 23 --json | field job)
if "$FDTUNE" cancel "$job" >/dev/null && [ "$(job_state "$job")" = cancelled ]; then
    ok "cancel stops a job"
else
    not_ok "cancel stops a job: $(job_state "$job")"
fi
"$FDTUNE" cancel "$job" >"$dir/out" 2>&1
if [ $? -eq 1 ] && grep -q 'cancelled already' "$dir/out"; then ok "cancelling twice is refused"
else not_ok "cancelling twice is refused" "$dir/out"; fi

# --- SIGHUP -------------------------------------------------------------------------------
# Each SIGHUP is followed by its log line, waited for: how soon it comes is not the question.
echo "bogus_key = 1" >>"$CONF"
kill -HUP "$pid"
if wait_until 60 grep -q "unknown key 'bogus_key'" "$LOG" && "$FDTUNE" status >/dev/null; then
    ok "SIGHUP with a bad config file keeps the settings in force"
else
    not_ok "SIGHUP with a bad config file keeps the settings in force" "$LOG"
fi
sed -i '/bogus_key/d' "$CONF"
kill -HUP "$pid"
# The socket, store and backend came from flags, which still rule after the reload: nothing
# asks for a restart.
if wait_until 60 grep -q "SIGHUP: reloaded" "$LOG" &&
    ! grep -q "take effect at the next start" "$LOG"; then
    ok "SIGHUP reloads the config file; the flags still rule, no restart asked"
else not_ok "SIGHUP reloads the config file; the flags still rule, no restart asked" "$LOG"; fi
# A config replaced by a FIFO no one writes to would block the daemon inside its handler.
mv "$CONF" "$CONF.saved"
mkfifo "$CONF"
kill -HUP "$pid"
if wait_until 60 grep -q "SIGHUP: cannot read $CONF: not a regular file" "$LOG" &&
    timeout 60 "$FDTUNE" status >/dev/null; then
    ok "SIGHUP with the config file a FIFO: refused at once, the daemon keeps answering"
else
    not_ok "SIGHUP with the config file a FIFO: refused at once, the daemon keeps answering" "$LOG"
fi
rm -f "$CONF"
mv "$CONF.saved" "$CONF"

# --- one daemon per store ---------------------------------------------------------------------
timeout 60 "$FDTUNED" --config "$CONF" --socket "$dir/second.sock" --db "$DB" --backend cpu \
    >"$dir/out" 2>&1
if [ $? -eq 1 ] && grep -q "pid $pid holds the lock file $DB.lock" "$dir/out" &&
    "$FDTUNE" status >/dev/null; then
    ok "a second fdtuned on the same store exits 1 naming the first's pid and the lock file"
else
    not_ok "a second fdtuned on the same store exits 1 naming the first's pid and the lock file" \
        "$dir/out"
fi
if [ "$(stat -c %a "$DB" "$DB-wal" "$DB.lock" | sort -u)" = 600 ]; then
    ok "the store, its -wal and its lock file are private (0600)"
else
    stat -c '%a %n' "$DB" "$DB-wal" "$DB.lock" >"$dir/out" 2>&1
    not_ok "the store, its -wal and its lock file are private (0600)" "$dir/out"
fi

check "shutdown stops the daemon" "$FDTUNE" shutdown
if wait "$pid"; then ok "after shutdown fdtuned exits 0"; else not_ok "after shutdown fdtuned exits 0" "$LOG"; fi
pid=""

# --- a worker that dies at every start ------------------------------------------------------
# It probes like the real one (so the daemon starts) and exits at once otherwise: the job
# fails after max_restarts deaths in a row, with the reason, and the daemon stays up.
cat >"$dir/dying-worker" <<EOF
#!/bin/sh
case "\$*" in *--probe*) exec "$worker_bin" "\$@" ;; esac
exit 1
EOF
chmod +x "$dir/dying-worker"
printf '[worker]\nworker_path = %s\nmax_restarts = 2\n' "$dir/dying-worker" >"$dir/dying.conf"
"$FDTUNED" --config "$dir/dying.conf" --socket "$FDTUNE_SOCKET" --db "$DB" --backend cpu 2>>"$LOG" &
pid=$!
wait_until 20 "$FDTUNE" status
job=$("$FDTUNE" tune 9 9 9 --subset 1 --json | field job)
if wait_until 60 job_finished "$job" && [ "$(job_state "$job")" = failed ] &&
    "$FDTUNE" status "$job" | grep -q "failed 3 times in a row: the worker exited with status 1"; then
    ok "a worker that dies at every start fails the job after max_restarts, with the reason"
else
    "$FDTUNE" status "$job" >"$dir/out" 2>&1
    not_ok "a worker that dies at every start: the job ends $(job_state "$job")" "$dir/out"
fi
if stop_daemon; then ok "fdtuned still stops cleanly"; else not_ok "fdtuned still stops cleanly" "$LOG"; fi

# --- a worker that sends bad code frames ----------------------------------------------------
# A code object travels as a msgpack bin after the line that announces it (common/frame.h).
# This worker announces one over the limit at its first start, sends a frame of another
# msgpack type at its second, and ends partway through a frame at its third: each is logged
# with what was wrong, the first two workers are killed at once (their streams cannot be
# read on), not left to the watchdog, nothing hangs, and the job fails after max_restarts as
# with any worker that keeps dying. This daemon logs to a file of its own, which no earlier
# watchdog's kill is in.
cat >"$dir/framing-worker" <<EOF
#!/bin/sh
case "\$*" in *--probe*) exec "$worker_bin" "\$@" ;; esac
n=\$(cat "$dir/framing.n" 2>/dev/null || echo 0)
echo \$((n + 1)) >"$dir/framing.n"
echo '{"ev":"hello"}' >&4
read -r task <&3
case \$n in
0) printf '{"ev":"code","key":"k","bytes":300000000}\n' >&4 ;;
1) printf '{"ev":"code","key":"k","bytes":3}\n\243abc' >&4 ;;
*) printf '{"ev":"code","key":"k","bytes":100}\n\304\144abc' >&4; exit 0 ;;
esac
exec sleep 60
EOF
chmod +x "$dir/framing-worker"
printf '[worker]\nworker_path = %s\nmax_restarts = 2\n' "$dir/framing-worker" >"$dir/framing.conf"
framing_log=$dir/framing.log
"$FDTUNED" --config "$dir/framing.conf" --socket "$FDTUNE_SOCKET" --db "$DB" --backend cpu 2>>"$framing_log" &
pid=$!
wait_until 20 "$FDTUNE" status
job=$("$FDTUNE" tune 9 9 11 --subset 1 --json | field job)
if wait_until 60 job_finished "$job" && [ "$(job_state "$job")" = failed ] &&
    grep -q "sent a code event the daemon cannot read (a frame of 300000000 bytes is over the limit of 268435456): killing it" "$framing_log" &&
    grep -q "sent an unreadable code frame (a frame must be a msgpack bin (first byte 0xc4, 0xc5 or 0xc6), not an object whose first byte is 0xa3): killing it" "$framing_log" &&
    grep -q "ended partway through a code frame (5 of its bytes read, for a code object of 100): the code object is dropped" "$framing_log" &&
    ! grep -q "sent nothing for" "$framing_log" && "$FDTUNE" status >/dev/null; then
    ok "code frames over the limit, of another type or cut short: logged, refused, the daemon serves"
else
    "$FDTUNE" status "$job" >"$dir/out" 2>&1
    cat "$framing_log" >>"$dir/out"
    not_ok "code frames over the limit, of another type or cut short: the job ends $(job_state "$job")" "$dir/out"
fi
if stop_daemon; then ok "fdtuned beside a worker of bad frames stops cleanly"; else not_ok "fdtuned beside a worker of bad frames stops cleanly" "$framing_log"; fi
cat "$framing_log" >>"$LOG"

# --- a worker that prints on stdout ----------------------------------------------------------
# As a vendor library may, this one prints a JSON object (a device list naming no device,
# which a probe read from stdout took for its answer) and junk on stdout at every start: the
# protocol runs on fds of its own, so the daemon probes and tunes, and logs what was printed.
cat >"$dir/noisy-worker" <<EOF
#!/bin/sh
echo '{"ev":"devices","backend":"cpu","devices":[]}'
echo 'noisy-worker: not JSON'
exec "$worker_bin" "\$@"
EOF
chmod +x "$dir/noisy-worker"
{ grep -v '^worker_path' "$CONF"; printf '[worker]\nworker_path = %s\n' "$dir/noisy-worker"; } >"$dir/noisy.conf"
"$FDTUNED" --config "$dir/noisy.conf" --socket "$FDTUNE_SOCKET" --db "$DB" --backend cpu 2>>"$LOG" &
pid=$!
if wait_until 20 "$FDTUNE" status &&
    "$FDTUNE" tune 11 9 7 --family naive --subset 2 --wait >"$dir/out" 2>&1 &&
    [ "$(grep -c 'noisy-worker: not JSON' "$LOG")" -ge 2 ]; then
    ok "a worker that prints JSON and junk on stdout: the daemon probes, tunes and logs the prints"
else
    not_ok "a worker that prints JSON and junk on stdout: the daemon probes, tunes and logs the prints" "$LOG"
fi
if stop_daemon; then ok "fdtuned beside a noisy worker stops cleanly"; else not_ok "fdtuned beside a noisy worker stops cleanly" "$LOG"; fi
# The channel is never stdin, stdout or stderr, and an events fd that is not open is said.
"$worker_bin" --probe --backend cpu --events-fd 1 >"$dir/out" 2>&1
rc1=$?
"$worker_bin" --probe --backend cpu --events-fd 9 >"$dir/out2" 2>&1
rc2=$?
if [ $rc1 -eq 2 ] && grep -q -- '--events-fd must be a whole number from 3' "$dir/out" &&
    [ $rc2 -eq 1 ] && grep -q 'cannot write events to fd 9' "$dir/out2"; then
    ok "fdtune-worker refuses fds 0 to 2 for its channel and names an events fd that is not open"
else
    cat "$dir/out2" >>"$dir/out"
    not_ok "fdtune-worker refuses fds 0 to 2 and names an events fd that is not open" "$dir/out"
fi

# --- its own flags --------------------------------------------------------------------------------
version=$(sed -n 's/^#define FDT_VERSION "\(.*\)"/\1/p' common/version.h)
if [ "$("$FDTUNED" -V)" = "fdtuned $version" ] && [ "$("$FDTUNED" --version)" = "fdtuned $version" ] &&
    "$FDTUNED" -h | grep -q "^usage: fdtuned" &&
    [ "$("$worker_bin" --version)" = "fdtune-worker $version" ]; then
    ok "fdtuned -V, --version and -h; fdtune-worker --version"
else
    not_ok "fdtuned -V, --version and -h: '$("$FDTUNED" -V 2>&1)'" "$LOG"
fi

# --- bad configuration -----------------------------------------------------------------------
printf '[daemon]\nsocket_mode = 0999\n' >"$dir/bad.conf"
"$FDTUNED" --config "$dir/bad.conf" --socket "$FDTUNE_SOCKET" --db "$DB" >"$dir/out" 2>&1
if [ $? -eq 2 ] && grep -q "bad.conf:2" "$dir/out" && grep -q socket_mode "$dir/out"; then
    ok "a bad config value: exit 2 naming file, line and key"
else
    not_ok "a bad config value: exit 2 naming file, line and key" "$dir/out"
fi
mkfifo "$dir/fifo.conf"
timeout 60 "$FDTUNED" --config "$dir/fifo.conf" --socket "$FDTUNE_SOCKET" --db "$DB" >"$dir/out" 2>&1
if [ $? -eq 2 ] && grep -q "fifo.conf: not a regular file" "$dir/out"; then
    ok "a config file that is a FIFO: exit 2 at once with a message"
else
    not_ok "a config file that is a FIFO: exit 2 at once with a message" "$dir/out"
fi
printf 'not a socket\n' >"$dir/not-a-socket"
"$FDTUNED" --socket "$dir/not-a-socket" --db "$DB" --backend cpu >"$dir/out" 2>&1
if [ $? -eq 1 ] && grep -q "exists and is not a socket" "$dir/out" &&
    [ "$(cat "$dir/not-a-socket")" = "not a socket" ]; then
    ok "a socket path that names a file: exit 1 with a message, the file untouched"
else
    not_ok "a socket path that names a file: exit 1 with a message, the file untouched" "$dir/out"
fi
printf 'not a database, but a file someone cares about\n' >"$dir/precious"
cp "$dir/precious" "$dir/precious.orig"
"$FDTUNED" --socket "$FDTUNE_SOCKET" --db "$dir/precious" --backend cpu >"$dir/out" 2>&1
if [ $? -eq 1 ] && grep -q "fdtuned:" "$dir/out" && cmp -s "$dir/precious" "$dir/precious.orig"; then
    ok "a file that is not a database: exit 1 with a message, the file untouched"
else
    not_ok "a file that is not a database: exit 1 with a message, the file untouched" "$dir/out"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
