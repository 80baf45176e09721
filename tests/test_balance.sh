#!/bin/sh
# test_balance.sh - each device's balance (the copy's and the L2's bandwidth), as fdtuned
# measures it once per device: a real daemon on the cpu backend with a temporary socket and
# store answers `devices` with both figures measured and the L2 size; a second start on the
# same store measures nothing and answers the same; the worker's balance task, asked
# directly; and a measurement that fails (the compiler, a worker that dies, one that
# answers nonsense, one that cannot start) is logged, the daemon serves anyway, and the next
# start measures it.
# Usage: BUILD=build sh tests/test_balance.sh
set -u
. "$(dirname "$0")/tap.sh"
daemon_test balance
WORKER=$(cd "$BUILD" && pwd)/fdtune-worker
CONF=$dir/fdtuned.conf

# Few samples, so that the cpu backend measures in a second; a launch may take minutes
# before it counts as hung, since a loaded host starves the worker (nice 19): 5 s, the
# default, failed the balance there.
printf '[tuning]\nsamples = 3\nmin_sample_ms = 0.1\ntimeout_ms = 600000\n' >"$CONF"

start_daemon() { # start_daemon DB [CONFIG]: the log of this start alone in $LOG
    : >"$LOG"
    "$FDTUNED" --config "${2:-$CONF}" --socket "$FDTUNE_SOCKET" --db "$1" --backend cpu \
        2>"$LOG" &
    pid=$!
    wait_answering
}

# The value of a number field in a one-line JSON answer (the first of that name).
field() {
    sed -n "s/.*\"$1\":\([0-9.e+-]*\).*/\1/p" | head -1
}

positive() {
    awk -v v="${1:-0}" 'BEGIN { exit !(v > 0) }'
}

zero() {
    [ -n "$1" ] && awk -v v="$1" 'BEGIN { exit !(v == 0) }'
}

# --- measured once, at the first start -----------------------------------------------------
start_daemon "$dir/one.db"
"$FDTUNE" devices --json >"$dir/devices1"
copy=$(field copy_gbps <"$dir/devices1")
l2=$(field l2_gbps <"$dir/devices1")
l2_bytes=$(field l2_bytes <"$dir/devices1")
measured=$(field measured <"$dir/devices1")
if positive "$copy" && positive "$l2" && positive "$l2_bytes" && positive "$measured"; then
    ok "devices answers the balance: copy $copy GB/s, L2 of $l2_bytes bytes at $l2 GB/s"
else
    not_ok "devices answers the balance (copy '$copy', l2 '$l2', l2_bytes '$l2_bytes', measured '$measured')" "$dir/devices1"
fi
if [ "$(grep -c 'balance stored' "$LOG")" -eq 1 ] &&
    grep -q "device 0: balance stored: copy .* GB/s, L2 .* MiB at .* GB/s, measured" "$LOG"; then
    ok "the first start measures and stores the balance, and says so"
else
    not_ok "the first start measures and stores the balance, and says so" "$LOG"
fi
"$FDTUNE" devices >"$dir/table"
if grep -q "COPY GB/s *L2 GB/s" "$dir/table" &&
    awk 'NR == 2 { for (i = 1; i <= NF; i++) if ($i == "MiB") exit !($(i + 1) > 0 && $(i + 2) > 0); exit 1 }' "$dir/table"; then
    ok "fdtune devices shows the copy and L2 bandwidth beside the L2 size"
else
    not_ok "fdtune devices shows the copy and L2 bandwidth beside the L2 size" "$dir/table"
fi
stop_daemon

# A second start on the same store, a second later: nothing is measured again, and the
# answer is the stored one, time included.
sleep 1
start_daemon "$dir/one.db"
"$FDTUNE" devices --json >"$dir/devices2"
if [ "$(field measured <"$dir/devices2")" = "$measured" ] &&
    [ "$(field copy_gbps <"$dir/devices2")" = "$copy" ] &&
    [ "$(field l2_gbps <"$dir/devices2")" = "$l2" ] &&
    ! grep -q "measuring its balance\|balance stored" "$LOG" &&
    grep -q "fingerprint [0-9a-f]*; copy .* GB/s, L2 .* MiB at .* GB/s, measured" "$LOG"; then
    ok "a second start measures nothing: the stored balance and its time are answered"
else
    cat "$dir/devices1" "$dir/devices2" >>"$LOG"
    not_ok "a second start measures nothing: the stored balance and its time are answered" "$LOG"
fi
stop_daemon

# --- the worker's balance task ---------------------------------------------------------------
timing='"timing":{"samples":2,"min_sample_ms":0.1,"timeout_ms":60000,"max_spread":0}'
printf '{"op":"balance","task":4,%s}\n{"op":"balance","task":5}\n{"op":"balance"}\n' "$timing" |
    "$WORKER" --backend cpu --device 0 --tasks-fd 3 --events-fd 4 3<&0 4>"$dir/worker" 2>"$dir/worker.err"
if grep -q '"ev":"begin","task":4,"variant":"balance"' "$dir/worker" &&
    positive "$(grep '"ev":"done","task":4' "$dir/worker" | field l2_gbps)" &&
    grep -q '"ev":"failed","task":5,"message":"timing: missing"' "$dir/worker" &&
    grep -q '"ev":"error","message":"'"'"'task'"'"' must be an integer' "$dir/worker"; then
    ok "the worker answers a balance task, and refuses one without timing or a number"
else
    not_ok "the worker answers a balance task, and refuses one without timing or a number" "$dir/worker"
fi

# --- measurements that fail --------------------------------------------------------------------
# The compiler fails (it still says its version, which the device's fingerprint holds): the
# daemon serves, devices answers no balance, and the next start, the compiler mended,
# measures it.
cat >"$dir/cxx" <<EOF
#!/bin/sh
case "\$*" in *-dumpfullversion*|*--version*) exec c++ "\$@" ;; esac
if [ -e "$dir/cxx-broken" ]; then echo "the compiler is broken today" >&2; exit 1; fi
exec c++ "\$@"
EOF
chmod +x "$dir/cxx"
touch "$dir/cxx-broken"
CXX=$dir/cxx
export CXX
start_daemon "$dir/two.db"
"$FDTUNE" devices --json >"$dir/devices3"
"$FDTUNE" devices >"$dir/table"
if grep -q "device 0: balance not measured (the next start tries again): .*the compiler is broken today" "$LOG" &&
    zero "$(field measured <"$dir/devices3")" && zero "$(field copy_gbps <"$dir/devices3")" &&
    zero "$(field l2_gbps <"$dir/devices3")" &&
    awk 'NR == 2 { for (i = 1; i <= NF; i++) if ($i == "MiB") exit !($(i + 1) == "-" && $(i + 2) == "-"); exit 1 }' "$dir/table" &&
    grep -q "fingerprint [0-9a-f]*; balance not measured" "$LOG"; then
    ok "a balance that cannot be measured is logged; the daemon serves without it"
else
    not_ok "a balance that cannot be measured is logged; the daemon serves without it" "$LOG"
fi
stop_daemon
rm "$dir/cxx-broken"
start_daemon "$dir/two.db"
"$FDTUNE" devices --json >"$dir/devices4"
if positive "$(field measured <"$dir/devices4")" && grep -q "balance stored" "$LOG" &&
    [ "$(grep -o '"fingerprint":"[0-9a-f]*"' "$dir/devices4")" = \
      "$(grep -o '"fingerprint":"[0-9a-f]*"' "$dir/devices3")" ]; then
    ok "the next start measures the same device's balance, which could not be measured"
else
    not_ok "the next start measures the same device's balance, which could not be measured" "$LOG"
fi
stop_daemon
unset CXX

# Workers that probe like the real one (so that the daemon starts) and then fail otherwise.
fake_worker() { # fake_worker NAME BODY: BODY runs for every start but the probe
    cat >"$dir/$1" <<EOF
#!/bin/sh
case "\$*" in *--probe*) exec "$WORKER" "\$@" ;; esac
$2
EOF
    chmod +x "$dir/$1"
    printf '[worker]\nworker_path = %s\n' "$dir/$1" >"$dir/$1.conf"
}

fake_worker dying 'exit 1'
start_daemon "$dir/three.db" "$dir/dying.conf"
if grep -q "balance not measured (the next start tries again): the worker exited with status 1" "$LOG" &&
    zero "$("$FDTUNE" devices --json | field measured)"; then
    ok "a worker that dies before it answers: logged, the daemon serves"
else
    not_ok "a worker that dies before it answers: logged, the daemon serves" "$LOG"
fi
stop_daemon

# It speaks on the protocol's fds (3 tasks in, 4 events out), as the real one does.
fake_worker nonsense 'echo "{\"ev\":\"hello\"}" >&4; read -r task <&3
echo "{\"ev\":\"done\",\"task\":1,\"balance\":{\"copy_gbps\":-1,\"l2_gbps\":1,\"measured\":1}}" >&4
read -r quit <&3'
start_daemon "$dir/three.db" "$dir/nonsense.conf"
if grep -q "balance not measured (the next start tries again): the worker's answer is unreadable: 'copy_gbps' must be from 0" "$LOG" &&
    zero "$("$FDTUNE" devices --json | field measured)"; then
    ok "a worker whose answer is unreadable: logged, nothing stored, the daemon serves"
else
    not_ok "a worker whose answer is unreadable: logged, nothing stored, the daemon serves" "$LOG"
fi
stop_daemon

# This one removes itself once it has probed: the measuring worker cannot be started.
cat >"$dir/vanishing" <<EOF
#!/bin/sh
"$WORKER" "\$@"
rc=\$?
rm -f "\$0"
exit \$rc
EOF
chmod +x "$dir/vanishing"
printf '[worker]\nworker_path = %s\n' "$dir/vanishing" >"$dir/vanishing.conf"
start_daemon "$dir/three.db" "$dir/vanishing.conf"
if grep -q "balance not measured (the next start tries again): cannot start $dir/vanishing" "$LOG" &&
    zero "$("$FDTUNE" devices --json | field measured)"; then
    ok "a worker that cannot be started: logged, the daemon serves"
else
    not_ok "a worker that cannot be started: logged, the daemon serves" "$LOG"
fi
stop_daemon

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
