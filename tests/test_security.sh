#!/bin/sh
# test_security.sh - the socket's directory as another local user could leave it (issue 13,
# items 1 and 2): a real fdtuned on the cpu backend refuses a directory that others can
# write, one that is a symbolic link and one that another uid owns, and a store directory
# that others can write, exiting 1 with a message naming it; a directory it makes is private, and the socket is born with
# socket_mode and given socket_group without a chmod or chown by path. Other uids holding
# every connection slot leave root its own, and one uid cannot take them all (item 9); a
# live socket of another type at the socket path is refused, never removed (item 13). A uid
# the daemon does not trust may ask but not change: fdtune's tune, batch, cancel, shutdown
# and query --tune-if-missing exit 4, forbidden, naming who may; so does any command of a uid
# the socket does not admit.
# The rights are checked with other uids, whoever runs this: root uses real ones; anyone
# else has the whole script run again as root of a user namespace of its own, with 65536
# uids mapped from /etc/subuid and /etc/subgid (newuidmap, of the uidmap package). Where
# neither can be, the test fails saying what it needs: it never skips.
# Usage: BUILD=build sh tests/test_security.sh
set -u
if [ "$(id -u)" -ne 0 ]; then
    if [ -n "${FDT_SECURITY_USERNS:-}" ] ||
        ! why=$(unshare --map-auto --map-root-user true 2>&1); then
        echo "FAIL - $0 needs other uids to check rights with: run it as root, or as a user with"
        echo "    ranges in /etc/subuid and /etc/subgid and the uidmap package, so that"
        echo "    'unshare --map-auto --map-root-user' works (here: ${why:-still not root inside it})"
        exit 1
    fi
    FDT_SECURITY_USERNS=1 exec unshare --map-auto --map-root-user sh "$0" "$@"
fi
BUILD=${BUILD:-build}
FDTUNED=$BUILD/fdtuned
FDTUNE=$BUILD/fdtune
dir=$(mktemp -d /tmp/fdt-security-XXXXXX)
DB=$dir/store/fdtuned.db
pid=""
peers=""
passed=0
failed=0

cleanup() {
    [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
    for p in $peers; do kill "$p" 2>/dev/null; done
    rm -rf "$dir"
}
trap cleanup EXIT

scratch=$dir
: >"$dir/empty.conf"
. "$(dirname "$0")/tap.sh"
require setpriv strace "${CC:-cc}"

# as UID COMMAND...: COMMAND as UID, its group UID too and no other.
as() {
    uid=$1
    shift
    setpriv --reuid="$uid" --regid="$uid" --clear-groups "$@"
}

mode_of() { stat -c %a "$1"; }

# refused NAME SOCKETDIR TEXT: fdtuned exits 1 before it binds, and says TEXT about the
# directory it names.
refused() {
    "$FDTUNED" --socket "$2/fdtuned.sock" --db "$DB" --backend cpu >"$dir/out" 2>&1
    rc=$?
    if [ $rc -eq 1 ] && grep -qF "$2" "$dir/out" && grep -qF "$3" "$dir/out" &&
        [ ! -e "$2/fdtuned.sock" ]; then
        ok "$1"
    else
        echo "(exit $rc)" >>"$dir/out"
        not_ok "$1" "$dir/out"
    fi
}

# serve SOCKET [CONFIG [trace]]: a daemon answering on SOCKET, its stderr in $dir/log; with
# trace, strace watches it for any chmod or chown of a path ($pid is then strace's).
serve() {
    set -- "$1" "${2:-$dir/empty.conf}" "${3:-}"
    tracer=""
    [ "$3" = trace ] &&
        tracer="strace -f -qq -o $dir/trace -e trace=chmod,fchmodat,chown,lchown,fchownat"
    $tracer "$FDTUNED" --config "$2" --socket "$1" --db "$DB" --backend cpu 2>"$dir/log" &
    pid=$!
    answering "$pid" "fdtuned starts on $1" "$dir/log" "$FDTUNE" status --socket "$1"
}

# Through the socket, since $pid may be strace's.
stop() {
    "$FDTUNE" shutdown --socket "$1" >/dev/null 2>&1
    wait "$pid"
    pid=""
}

# --- directories that are not private are refused --------------------------------------
mkdir -m 0700 "$dir/open"
chmod 0777 "$dir/open"
refused "a socket directory others can write (0777): exit 1 naming it, its owner and mode" \
    "$dir/open" "(owner uid $(id -u), mode 0777) can be written by its group or others"

mkdir -m 0700 "$dir/real"
ln -s "$dir/real" "$dir/link"
refused "a socket directory that is a symbolic link to another: exit 1 naming it" \
    "$dir/link" "is a symbolic link"

mkdir -m 0700 "$dir/theirs"
chown 65534 "$dir/theirs"
refused "a socket directory another uid owns (even 0700): exit 1 naming it and its owner" \
    "$dir/theirs" "belongs to uid 65534 (mode 0700), not to uid 0 or root"

# The store's directory is held to the same rules, before the store is opened.
mkdir -m 0700 "$dir/openstore"
chmod 0777 "$dir/openstore"
"$FDTUNED" --socket "$dir/sd/fdtuned.sock" --db "$dir/openstore/fdtuned.db" --backend cpu \
    >"$dir/out" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -qF "$dir/openstore" "$dir/out" &&
    grep -qF "can be written by its group or others" "$dir/out" &&
    [ ! -e "$dir/openstore/fdtuned.db" ]; then
    ok "a store directory others can write (0777): exit 1 naming it, no store made"
else
    echo "(exit $rc)" >>"$dir/out"
    not_ok "a store directory others can write (0777): exit 1 naming it, no store made" "$dir/out"
fi

# --- a directory fdtuned makes, with the default settings --------------------------------
if serve "$dir/fresh/run/fdtuned.sock"; then
    if [ "$(mode_of "$dir/fresh/run")" = 700 ] && [ "$(mode_of "$dir/fresh")" = 700 ] &&
        [ "$(mode_of "$dir/store")" = 700 ]; then
        ok "the directories fdtuned makes for its socket and store are 0700"
    else
        ls -ld "$dir/fresh" "$dir/fresh/run" "$dir/store" >"$dir/out"
        not_ok "the directories fdtuned makes for its socket and store are 0700" "$dir/out"
    fi
    if [ "$(mode_of "$dir/fresh/run/fdtuned.sock")" = 660 ]; then
        ok "the socket has the default socket_mode 0660"
    else
        ls -l "$dir/fresh/run/fdtuned.sock" >"$dir/out"
        not_ok "the socket has the default socket_mode 0660" "$dir/out"
    fi
    stop "$dir/fresh/run/fdtuned.sock"
fi

# --- socket_mode and socket_group from a config file --------------------------------------
# Root may give the socket any group.
if getent group nogroup >/dev/null; then group=nogroup; else group=$(id -gn); fi
printf '[daemon]\nsocket_mode = 0600\nsocket_group = %s\n' "$group" >"$dir/fdtuned.conf"
if serve "$dir/grouped/fdtuned.sock" "$dir/fdtuned.conf" trace; then
    sock=$dir/grouped/fdtuned.sock
    if [ "$(stat -c %a:%G "$sock")" = "600:$group" ] &&
        [ "$(stat -c %a:%G "$dir/grouped")" = "750:$group" ]; then
        ok "socket_mode 0600 and socket_group: socket 0600 and directory 0750, both $group"
    else
        ls -ld "$dir/grouped" "$sock" >"$dir/out"
        not_ok "socket_mode 0600 and socket_group: socket 0600 and directory 0750" "$dir/out"
    fi
    stop "$sock"
    if grep -q 'chmod\|chown(\|lchown(' "$dir/trace" ||
        ! grep -q "fchownat(.*\"fdtuned.sock\", -1, [0-9]*, AT_SYMLINK_NOFOLLOW) = 0" "$dir/trace"; then
        not_ok "no chmod or chown by path: the group is given by fchownat, not following links" \
            "$dir/trace"
    else
        ok "no chmod or chown by path: the socket is born 0600, its group given by fchownat"
    fi
fi

# --- peers of the socket: a tiny C program, built here (cc is a build dependency) --------
cat >"$dir/peer.c" <<'EOF'
/* "hold PATH N": N stream connections, one after another, each asked for a ping and its
 * answer printed (or "closed"); then "holding", the connections kept open until killed.
 * "bind TYPE PATH": a socket of TYPE (stream, seqpacket, datagram) bound at PATH, not
 * listening; then "bound", until killed. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static struct sockaddr_un addr;

static void answer(int fd, int i)
{
    char line[512];
    size_t n = 0;
    /* A connection refused may be closed before the ping is written (EPIPE): the answer
     * sent before the close is still there to read. */
    const ssize_t sent = write(fd, "{\"op\":\"ping\"}\n", 14);
    (void)sent;
    while (n < sizeof line - 1 && read(fd, line + n, 1) == 1 && line[n] != '\n')
        n++;
    line[n] = '\0';
    printf("%d %s\n", i, n ? line : "closed");
}

int main(int argc, char **argv)
{
    const int hold = argc == 4 && strcmp(argv[1], "hold") == 0;
    const int type = strcmp(argv[2], "datagram") == 0 ? SOCK_DGRAM
                   : strcmp(argv[2], "seqpacket") == 0 ? SOCK_SEQPACKET : SOCK_STREAM;
    addr.sun_family = AF_UNIX;
    snprintf(addr.sun_path, sizeof addr.sun_path, "%s", hold ? argv[2] : argv[3]);
    setvbuf(stdout, NULL, _IOLBF, 0);
    signal(SIGPIPE, SIG_IGN);
    for (int i = 1; hold && i <= atoi(argv[3]); i++) {
        const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
        if (connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0)
            printf("%d cannot connect\n", i);
        else
            answer(fd, i);
    }
    if (!hold && bind(socket(AF_UNIX, type, 0), (struct sockaddr *)&addr, sizeof addr) != 0)
        return perror("bind"), 1;
    puts(hold ? "holding" : "bound");
    pause();
    return 0;
}
EOF
${CC:-cc} -o "$dir/peer" "$dir/peer.c" >"$dir/out" 2>&1 ||
    not_ok "the test's socket peer builds" "$dir/out"

# peer OUT UID ARGS...: the peer in the background as UID (as ourselves when empty), its
# output in OUT; 0 once it says it is done ("holding" or "bound"), 1 after 10 s.
peer() {
    out=$1 who=$2
    shift 2
    rm -f "$out" # what an earlier peer wrote there must not be read as this one's
    if [ -n "$who" ]; then
        # setpriv itself, not the function as(): $! must be the peer's pid (setpriv execs
        # it), not a subshell's, or stop_peers kills the subshell and leaves the peer
        # running, holding whatever descriptors the test was given (make's jobserver).
        setpriv --reuid="$who" --regid="$who" --clear-groups "$dir/peer" "$@" >"$out" 2>&1 &
    else
        "$dir/peer" "$@" >"$out" 2>&1 &
    fi
    peers="$peers $!"
    i=0
    until grep -q '^holding$\|^bound$' "$out" 2>/dev/null; do
        i=$((i + 1))
        if [ $i -gt 100 ] || ! kill -0 "$!" 2>/dev/null; then return 1; fi
        sleep 0.1
    done
}

# answered OUT N TEXT: the peer's connection N was answered with a line matching TEXT.
answered() { grep -q "^$2 .*$3" "$1"; }

# The peers started so far are killed; their connections close with them.
stop_peers() {
    for p in $peers; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
    peers=""
}

# root_served SOCKET NAME: root's status and then shutdown are answered and the daemon exits
# 0; killed if it does not stop.
root_served() {
    if "$FDTUNE" status --socket "$1" >"$dir/out" 2>&1 &&
        "$FDTUNE" shutdown --socket "$1" >>"$dir/out" 2>&1 && wait "$pid"; then
        ok "$2"
    else
        kill -9 "$pid" 2>/dev/null
        not_ok "$2" "$dir/out"
    fi
    pid=""
}

# --- connection slots (item 9) -------------------------------------------------------------
chmod 0711 "$dir" # other uids pass through to the socket and the peer program
printf '[daemon]\nsocket_mode = 0666\nmax_clients = 2\n' >"$dir/full.conf"
sock=$dir/full/fdtuned.sock
if serve "$sock" "$dir/full.conf"; then
    if peer "$dir/p-full" 65534 hold "$sock" 3 && answered "$dir/p-full" 2 '"pong":true' &&
        answered "$dir/p-full" 3 '"code":"busy".*too many clients'; then
        ok "another uid takes every slot of max_clients = 2; its third connection: busy"
    else
        not_ok "another uid takes every slot of max_clients = 2; its third: busy" "$dir/p-full"
    fi
    root_served "$sock" \
        "with every slot taken by another uid, root's status and shutdown are still served"
    stop_peers
fi

# Three uids of three connections each: two each are served, the first two uids'
# thirds exceed max_clients_per_uid, the third uid's finds the 6 slots taken.
printf '[daemon]\nsocket_mode = 0666\nmax_clients = 6\nmax_clients_per_uid = 2\n' \
    >"$dir/peruid.conf"
sock=$dir/peruid/fdtuned.sock
if serve "$sock" "$dir/peruid.conf"; then
    for u in 65534 65533 65532; do
        peer "$dir/p-$u" $u hold "$sock" 3 && answered "$dir/p-$u" 2 '"pong":true' ||
            not_ok "uid $u's first two connections are served" "$dir/p-$u"
    done
    if answered "$dir/p-65534" 3 '"code":"busy".*uid 65534 holds 2 connections.*max_clients_per_uid' &&
        answered "$dir/p-65533" 3 '"code":"busy".*uid 65533 holds 2 connections'; then
        ok "max_clients_per_uid = 2: a uid's third connection is answered busy, naming the limit"
    else
        cat "$dir/p-65534" "$dir/p-65533" >"$dir/out"
        not_ok "max_clients_per_uid = 2: a uid's third connection is busy" "$dir/out"
    fi
    if answered "$dir/p-65532" 3 '"code":"busy".*too many clients'; then
        ok "a third uid gets the two slots left of max_clients = 6, then busy"
    else
        not_ok "a third uid gets the two slots left of max_clients = 6, then busy" "$dir/p-65532"
    fi
    if peer "$dir/p-own" "" hold "$sock" 3 && answered "$dir/p-own" 3 '"pong":true'; then
        ok "the daemon's own uid is held to neither limit while other uids fill theirs"
    else
        not_ok "the daemon's own uid is held to neither limit" "$dir/p-own"
    fi
    root_served "$sock" "with every other slot taken, root's status and shutdown are served"
    stop_peers
fi

# --- a uid the socket does not admit: fdtune exits 4 and says how to get in -----------------
# The default socket_mode (0660) admits the daemon's user and its socket_group; uid 4321 is
# neither. Its fdtune is told it may not (exit 4, forbidden), not to start a daemon (3).
sock=$dir/closed/fdtuned.sock
if serve "$sock"; then
    as 4321 "$FDTUNE" status --socket "$sock" >"$dir/out" 2>&1
    rc=$?
    if [ $rc -eq 4 ] && grep -q "uid 4321 may not use this socket" "$dir/out" &&
        grep -q "socket_group" "$dir/out" && ! grep -q "is fdtuned running" "$dir/out"; then
        ok "a uid the socket does not admit: exit 4, naming socket_group"
    else
        echo "(exit $rc)" >>"$dir/out"
        not_ok "a uid the socket does not admit: exit 4, naming socket_group" "$dir/out"
    fi
    stop "$sock"
fi

# --- a uid the daemon does not trust: fdtune exits 4 -----------------------------------------
# The socket admits every uid (socket_mode 0666), so uid 4321 (not the daemon's, not root, no
# admin_group) is answered: its status is served, and whatever would change the daemon's
# work is refused, forbidden, fdtune's exit 4, naming who may. Root's job is left as it was.
# forbidden NAME ARGS...: fdtune ARGS as uid 4321 exits 4 with the daemon's reason.
forbidden() {
    name=$1
    shift
    as 4321 "$FDTUNE" "$@" --socket "$sock" >"$dir/out" 2>&1
    rc=$?
    if [ $rc -eq 4 ] && grep -q "is allowed only to uid $(id -u), root or the admin group\|needs the rights of tune" "$dir/out" &&
        grep -q "(forbidden)" "$dir/out"; then
        ok "$name: exit 4, forbidden, saying who may"
    else
        echo "(exit $rc)" >>"$dir/out"
        not_ok "$name: exit 4, forbidden" "$dir/out"
    fi
}
printf '[daemon]\nsocket_mode = 0666\n[search]\nbudget = 100000\n' >"$dir/open.conf"
sock=$dir/rights/fdtuned.sock
if serve "$sock" "$dir/open.conf"; then
    job=$("$FDTUNE" tune 13 17 11 --socket "$sock" --json | sed -n 's/.*"job":\([0-9]*\).*/\1/p')
    check "another uid's status is served" as 4321 "$FDTUNE" status --socket "$sock"
    forbidden "another uid's tune" tune 13 17 11
    forbidden "another uid's batch" batch --sweep 13 17 11
    forbidden "another uid's query --tune-if-missing" query 15 15 15 --tune-if-missing
    forbidden "another uid's cancel of root's job ${job:-none}" cancel "${job:-1}"
    forbidden "another uid's shutdown" shutdown
    if grep -q "warning: refused uid 4321 (pid [0-9]*): tune: forbidden: 'tune' is allowed only" \
        "$dir/log"; then
        ok "the daemon logs each refusal with the uid and pid that asked"
    else
        not_ok "the daemon logs each refusal with the uid and pid that asked" "$dir/log"
    fi
    if [ -n "$job" ] && "$FDTUNE" status "$job" --socket "$sock" | grep -q "queued\|running" &&
        [ "$("$FDTUNE" jobs --socket "$sock" --json | grep -o '"id":' | wc -l)" -eq 1 ]; then
        ok "after them root's job $job still runs and no other job was queued"
    else
        "$FDTUNE" jobs --socket "$sock" --json >"$dir/out" 2>&1
        not_ok "after them root's job ${job:-none} still runs and no other job was queued" "$dir/out"
    fi
    check "root cancels its job" "$FDTUNE" cancel "${job:-1}" --socket "$sock"
    root_served "$sock" "after another uid's shutdown was refused, the daemon still serves root"
fi

# --- a live socket of another type at the socket path (item 13) ----------------------------
# refused_live TYPE: a socket of TYPE bound (not listening) at the socket path; fdtuned
# exits 1 naming the path, and the socket file is still the peer's. timeout: a daemon that
# took the path over would serve on it.
refused_live() {
    mkdir -m 0700 "$dir/$1"
    live=$dir/$1/fdtuned.sock
    if ! peer "$dir/p-$1" "" bind "$1" "$live"; then
        not_ok "a $1 socket is bound at the socket path" "$dir/p-$1"
        return
    fi
    before=$(stat -c %i "$live")
    timeout 30 "$FDTUNED" --config "$dir/empty.conf" --socket "$live" --db "$DB" \
        --backend cpu >"$dir/out" 2>&1
    rc=$?
    if [ $rc -eq 1 ] && grep -qF "$live, or another program is bound to it" "$dir/out" &&
        [ -S "$live" ] && [ "$(stat -c %i "$live")" = "$before" ]; then
        ok "a live $1 socket at the socket path: exit 1 naming it, the socket left in place"
    else
        echo "(exit $rc)" >>"$dir/out"
        not_ok "a live $1 socket at the socket path: exit 1 naming it, left in place" "$dir/out"
    fi
    stop_peers
}
refused_live datagram
refused_live seqpacket
refused_live stream # bound, not listening yet: a stream connect alone is refused

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
