#!/bin/sh
# test_service.sh - fdtuned as systemd runs it (issue 32, item 3). The unit that make install
# writes passes `systemd-analyze verify`, and `systemd-analyze security --offline=true` rates
# it under 3.0 (the score is printed); its sysusers.d entry is one systemd-sysusers takes.
# The daemon speaks the notify protocol as Type=notify needs, to a real datagram socket
# named by NOTIFY_SOCKET: READY=1 only once its socket answers, a STATUS line per job,
# WATCHDOG=1 at half of WATCHDOG_USEC while the loop runs, STOPPING=1 at SIGTERM. Its log
# lines carry their level: as priorities for journald where stderr is the journal, with the
# time and the level in the foreground. And the
# account the unit runs as: systemd-sysusers makes fdtuned and fdtune from the installed
# entry (into copies of /etc/passwd and /etc/group, bound over the host's in a mount
# namespace of the test's own: the host's are untouched); a daemon run as fdtuned:fdtune, as
# the unit says, is trusted and answered by a user in fdtune, and refused (exit 4) to one
# who is not. Root runs it with real uids; anyone else as root of a user namespace of its
# own (tap.sh's root_or_userns).
# Usage: BUILD=build MAKE=make sh tests/test_service.sh
set -u
. "$(dirname "$0")/tap.sh"
root_or_userns "$@"
daemon_test service
require systemd-analyze systemd-sysusers python3 setpriv unshare
prefix=$dir/prefix

# --- the installed unit --------------------------------------------------------------------
# The build under test, as tests/test_install.sh installs it.
make_san=""
case $BUILD in
build-san) make_san="SAN=1" ;;
build-static) make_san="STATIC=1" ;;
esac
${MAKE:-make} --no-print-directory install BUILD="$BUILD" $make_san PREFIX="$prefix" \
    >"$dir/install.log" 2>&1 || { not_ok "make install PREFIX=$prefix" "$dir/install.log"; exit 1; }
unit=$prefix/lib/systemd/system/fdtuned.service
if systemd-analyze verify "$unit" >"$dir/verify" 2>&1 && [ ! -s "$dir/verify" ]; then
    ok "systemd-analyze verify: fdtuned.service has nothing to fix"
else
    not_ok "systemd-analyze verify: fdtuned.service has nothing to fix" "$dir/verify"
fi
systemd-analyze security --offline=true "$unit" >"$dir/security" 2>&1
score=$(sed -n 's/.*Overall exposure level for fdtuned.service: \([0-9.]*\).*/\1/p' "$dir/security")
if [ -n "$score" ] && python3 -c "import sys; sys.exit(not float('$score') < 3.0)"; then
    ok "systemd-analyze security --offline=true rates the unit $score, under 3.0"
else
    not_ok "systemd-analyze security rates the unit '${score:-?}', not under 3.0" "$dir/security"
fi
check "systemd-sysusers takes the sysusers.d entry" \
    systemd-sysusers --dry-run "$prefix/lib/sysusers.d/fdtuned.conf"

# --- the notify protocol -------------------------------------------------------------------
# A listener on NOTIFY_SOCKET writes each datagram as a line to $dir/notes; at READY=1 it
# asks the daemon's socket for a ping at once and notes whether the answer came.
python3 -c 'import socket, sys
notify, daemon, notes = sys.argv[1:4]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(notify)
out = open(notes, "w", buffering=1)
while True:
    for line in s.recv(4096).decode().split("\n"):
        out.write(line + "\n")
        if line == "READY=1":
            c = socket.socket(socket.AF_UNIX)
            try:
                c.connect(daemon)
                c.sendall(b"{\"op\":\"ping\"}\n")
                out.write("ping answered: %s\n" % (b"pong" in c.recv(4096)))
            except OSError as e:
                out.write("ping failed: %s\n" % e)
        if line == "STOPPING=1":
            sys.exit(0)' "$dir/notify" "$FDTUNE_SOCKET" "$dir/notes" &
listener=$!
also_kill=$listener
wait_until 30 test -S "$dir/notify"
# WATCHDOG_PID must be the daemon's own: a shell that execs it keeps its pid.
NOTIFY_SOCKET=$dir/notify WATCHDOG_USEC=400000 sh -c 'WATCHDOG_PID=$$ exec "$0" "$@"' \
    "$FDTUNED" --socket "$FDTUNE_SOCKET" --db "$dir/store.db" --backend cpu 2>"$LOG" &
pid=$!
daemon=$pid
wait_answering
if wait_until 60 grep -q "^ping answered" "$dir/notes" &&
    grep -q "^ping answered: True" "$dir/notes"; then
    ok "READY=1 comes once the socket answers"
else
    not_ok "READY=1 comes once the socket answers" "$dir/notes"
fi
job=$("$FDTUNE" tune 13 11 9 --family naive --subset 2 --json | field job)
if wait_until 300 grep -q "^STATUS=job $job done" "$dir/notes" &&
    grep -q "^STATUS=job $job running on device 0: 13x11x9" "$dir/notes"; then
    ok "STATUS says when job $job runs and when it is done"
else
    not_ok "STATUS says when job $job runs and when it is done" "$dir/notes"
fi
sleep 1
pings=$(grep -c "^WATCHDOG=1$" "$dir/notes")
if [ "$pings" -ge 3 ]; then
    ok "the loop pings the watchdog at half of WATCHDOG_USEC ($pings pings)"
else
    not_ok "the loop pings the watchdog at half of WATCHDOG_USEC ($pings pings)" "$dir/notes"
fi
if stop_daemon && wait "$listener" && grep -q "^STOPPING=1$" "$dir/notes"; then
    ok "SIGTERM: STOPPING=1, then a clean stop"
else
    not_ok "SIGTERM: STOPPING=1, then a clean stop" "$dir/notes"
fi
also_kill=""

# --- the log's lines ----------------------------------------------------------------------------
# In the foreground: the local time, the program and pid, the level. With JOURNAL_STREAM
# naming stderr (as systemd sets it when stderr is the journal): the priority, for journald.
stamp='[0-9]\{4\}-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9]\.[0-9]\{3\}'
if grep -q "^$stamp fdtuned\[$daemon\] info: serving $FDTUNE_SOCKET" "$LOG" &&
    grep -q "^$stamp fdtuned\[$daemon\] notice: stopping: SIGTERM" "$LOG"; then
    ok "foreground lines: time to the millisecond, program and pid, level"
else
    not_ok "foreground lines: time to the millisecond, program and pid, level" "$LOG"
fi
journal=$dir/journal
: >"$journal"
JOURNAL_STREAM=$(stat -c '%d:%i' "$journal") "$FDTUNED" --socket "$FDTUNE_SOCKET" \
    --db "$dir/store.db" --backend cpu 2>>"$journal" &
pid=$!
LOG=$journal
wait_answering
kill -HUP "$pid"
wait_until 30 grep -q "SIGHUP" "$journal"
# A refused request is logged with what it asked: a line break in it must not start a line
# of the client's making, at a priority of its choosing.
python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(b"{\"op\":\"x\\n<0>forged emergency\"}\n")
s.recv(4096)' "$FDTUNE_SOCKET"
wait_until 30 grep -q "refused uid" "$journal"
stop_daemon
if grep -q "^<6>serving $FDTUNE_SOCKET" "$journal" &&
    grep -q "^<4>SIGHUP: no config file to reload" "$journal" &&
    grep -q "^<5>stopped$" "$journal"; then
    ok "to the journal: <6> info, <4> warning, <5> notice, for journald"
else
    not_ok "to the journal: <6> info, <4> warning, <5> notice, for journald" "$journal"
fi
if grep -q "^<5>refused uid $(id -u) (pid [0-9]*): x?<0>forged emergency: unknown_op" "$journal" &&
    ! grep -q "^<0>" "$journal"; then
    ok "a client's line break in a logged request cannot forge a journal line"
else
    not_ok "a client's line break in a logged request cannot forge a journal line" "$journal"
fi

# --- the service's account ------------------------------------------------------------------
sysroot=$dir/sysroot
mkdir -p "$sysroot/etc" "$dir/run"
cp /etc/passwd /etc/group "$sysroot/etc/"
check "systemd-sysusers makes fdtuned and fdtune" \
    systemd-sysusers --root="$sysroot" "$prefix/lib/sysusers.d/fdtuned.conf"
chmod 0711 "$dir" # the service's uid and the users pass through to run/, nothing more
cat >"$dir/account.sh" <<'EOF'
# account.sh DIR FDTUNED FDTUNE: in a mount namespace of its own, with the sysroot's
# passwd and group; prints "member EXIT" and "stranger EXIT" for the daemon in run/ (its
# parent DIR only root writes, as /run), then "squatted EXIT" for one the account runs in
# a directory it made in open/, which everyone may write (as /tmp).
set -u
dir=$1 fdtuned=$2 fdtune=$3
mount --bind "$dir/sysroot/etc/passwd" /etc/passwd || exit 1
mount --bind "$dir/sysroot/etc/group" /etc/group || exit 1
uid=$(id -u fdtuned) gid=$(getent group fdtune | cut -d: -f3)
mkdir -p "$dir/open/sub"
chmod 1777 "$dir/open"
for d in "$dir/run" "$dir/open/sub"; do
    chown "$uid:$gid" "$d"
    chmod 0755 "$d"
done
# serve SOCKET: the account's daemon there, until its socket exists; its pid in $daemon.
serve() {
    setpriv --reuid="$uid" --regid="$gid" --clear-groups env -u FDTUNE_SOCKET \
        "$fdtuned" --socket "$1" --db "${1%/*}/store.db" --backend cpu 2>>"$dir/run/log" &
    daemon=$!
    i=0
    until [ -S "$1" ] || [ $i -gt 6000 ]; do i=$((i + 1)); sleep 0.1; done
}
serve "$dir/run/fdtuned.sock"
setpriv --reuid=4321 --regid=4321 --groups="$gid" "$fdtune" status --socket "$dir/run/fdtuned.sock" \
    >"$dir/member" 2>&1
echo "member $?"
setpriv --reuid=4322 --regid=4322 --clear-groups "$fdtune" status --socket "$dir/run/fdtuned.sock" \
    >"$dir/stranger" 2>&1
echo "stranger $?"
kill -TERM "$daemon"
wait "$daemon"
serve "$dir/open/sub/fdtuned.sock"
setpriv --reuid=4321 --regid=4321 --groups="$gid" "$fdtune" status \
    --socket "$dir/open/sub/fdtuned.sock" >"$dir/squatted" 2>&1
echo "squatted $?"
kill -TERM "$daemon"
wait "$daemon"
EOF
unshare --mount sh "$dir/account.sh" "$dir" "$PWD/$FDTUNED" "$PWD/$FDTUNE" >"$dir/account" 2>&1
cat "$dir/member" "$dir/stranger" "$dir/squatted" "$dir/run/log" >>"$dir/account" 2>/dev/null
if grep -q "^member 0$" "$dir/account" && grep -q "^stranger 4$" "$dir/account" &&
    grep -q "uid 4322 may not use this socket" "$dir/account"; then
    ok "a daemon run as fdtuned:fdtune answers a user in fdtune; one outside it gets exit 4"
else
    not_ok "a daemon run as fdtuned:fdtune answers a user in fdtune; one outside it gets exit 4" \
        "$dir/account"
fi
if grep -q "^squatted 3$" "$dir/account" &&
    grep -q "service account fdtuned, which is trusted only at a socket" "$dir/account"; then
    ok "the account's daemon in a directory under one everyone may write (as /tmp): refused"
else
    not_ok "the account's daemon in a directory under one everyone may write: refused" \
        "$dir/account"
fi

echo "# test_service: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
