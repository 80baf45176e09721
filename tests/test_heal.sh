#!/bin/sh
# test_heal.sh - a tuner that heals what the host does to it: a real fdtuned on the cpu
# backend with a temporary socket and store. Code objects stored damaged in the code cache
# are dropped and compiled afresh, the fresh ones replace the rows, and the job that needed
# them succeeds; a compiler that stops itself (SIGSTOP) is killed at the compile deadline,
# the variant stored as timeout, and the job goes on with nothing left stopped.
# Usage: BUILD=build sh tests/test_heal.sh
set -u
. "$(dirname "$0")/tap.sh"
daemon_test heal
DB=$dir/fdtuned.db
CONF=$dir/fdtuned.conf

if ! command -v sqlite3 >/dev/null 2>&1; then
    not_ok "the sqlite3 command is installed (scripts/install-deps.sh)"
    exit 1
fi

# A compile deadline of 60 s, from the config file the daemon hands its workers: the stopped
# compiler is found within a minute, and a compile slowed by a loaded host (the tests run
# side by side at nice 19) still ends in time. Few samples and no bound on the spread, so
# that the cpu backend is quick and a loaded host fails no job (tests/test_noisy.sh tests
# the bound).
cat >"$CONF" <<EOF
[worker]
compile_deadline_ms = 60000
heartbeat_ms = 200
[tuning]
samples = 3
min_sample_ms = 0.1
leaders = 2
leader_samples = 4
max_spread = 0
EOF

# The host compiler, except that the first compile of a variant after $dir/armed appears
# stops itself (its pid in $dir/stopped) until it is killed: a compiler stopped or hung on
# an NFS include. Kernels of 256 threads in x are left alone: kernel 1's check and the
# runner's own kernels, which the worker compiles itself, without the deadline (runner.c).
cat >"$dir/cxx" <<EOF
#!/bin/sh
case " \$* " in
*" FDT_BX=256 "*) ;;
*" -o "*) if mv "$dir/armed" "$dir/fired" 2>/dev/null; then
              echo \$\$ >"$dir/stopped"
              kill -STOP \$\$
          fi ;;
esac
exec c++ "\$@"
EOF
chmod +x "$dir/cxx"

start_daemon() {
    CXX=$dir/cxx "$FDTUNED" --config "$CONF" --socket "$FDTUNE_SOCKET" --db "$DB" \
        --backend cpu 2>>"$LOG" &
    pid=$!
    wait_answering
}

# A job's first-pass rows, one "status,message" per line.
job_rows() {
    "$FDTUNE" export --what results --format csv >"$dir/export.csv" || return 1
    awk -F, -v job="$1" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
                         $col["job"] == job && $col["leader"] == 0 {
                             print $col["status"] "," $col["message"] }' "$dir/export.csv"
}

code_rows() { # code_rows WHERE: how many code cache rows match
    sqlite3 "$DB" "SELECT count(*) FROM code_cache WHERE $1"
}

# A process that is gone, or a zombie no one has reaped yet.
process_gone() {
    [ ! -e "/proc/$1" ] || grep -q '^[0-9]* ([^)]*) Z' "/proc/$1/stat"
}

start_daemon

# --- a damaged code cache heals --------------------------------------------------------------
check "tune 13x17x11 --wait fills the code cache" \
    "$FDTUNE" tune 13 17 11 --family naive --subset 4 --wait
stop_daemon
sqlite3 "$DB" "UPDATE code_cache SET code = X'00000000000000000000000000000000'"
damaged=$(code_rows "code = X'00000000000000000000000000000000'")
start_daemon
job=$("$FDTUNE" tune 13 17 11 --family naive --subset 4 --json | field job)
if [ -n "$job" ] && wait_until 600 job_finished "$job" && [ "$(job_state "$job")" = done ] &&
    [ "$(job_rows "$job" | grep -c '^ok,')" -ge 1 ]; then
    ok "tuned again over $damaged damaged code rows: the job is done, $(job_rows "$job" | grep -c '^ok,') variants ok"
else
    not_ok "tuned again over $damaged damaged code rows: job '$job' $(job_state "$job")" "$LOG"
    job_rows "$job" | head -5
fi
elf=$(code_rows "substr(code, 1, 4) = X'7F454C46'")
all=$(code_rows "1")
if [ "$damaged" -ge 1 ] && [ "$elf" -eq "$all" ]; then
    ok "the damaged rows are replaced by fresh objects ($elf of $all rows are ELF)"
else
    not_ok "the damaged rows are replaced by fresh objects ($elf of $all rows are ELF, $damaged damaged)"
fi

# --- a stopped compiler meets the compile deadline ----------------------------------------
# In float: code keys the cache does not hold, so the variants are compiled.
: >"$dir/armed"
job=$("$FDTUNE" tune 15 13 11 --precision float --family naive --subset 4 --json | field job)
if [ -n "$job" ] && wait_until 600 job_finished "$job" && [ "$(job_state "$job")" = done ]; then
    ok "a job whose compiler stopped finishes"
else
    not_ok "a job whose compiler stopped finishes (job '$job': $(job_state "$job"), compiler stopped: $(cat "$dir/stopped" 2>/dev/null))" "$LOG"
fi
if job_rows "$job" | grep -q '^timeout,.*deadline of 60000 ms'; then
    ok "the stopped compile is stored as timeout, naming the deadline"
else
    not_ok "the stopped compile is stored as timeout, naming the deadline"
    job_rows "$job" | sed 's/^/    /'
fi
if grep -q 'compile deadline of 60000 ms' "$LOG"; then
    ok "the log names the compile that passed its deadline"
else
    not_ok "the log names the compile that passed its deadline" "$LOG"
fi
stopped=$(cat "$dir/stopped" 2>/dev/null)
if [ -n "$stopped" ] && wait_until 30 process_gone "$stopped" &&
    ! ps -eo stat=,args= | grep "^T.*$dir" | grep -v grep; then
    ok "the stopped compiler is gone, and nothing else of the test is stopped"
else
    not_ok "the stopped compiler ('$stopped') is gone, and nothing else of the test is stopped"
    [ -n "$stopped" ] && kill -KILL "$stopped" 2>/dev/null
fi

stop_daemon
echo "# $passed passed, $failed failed"
[ "$failed" -eq 0 ]
