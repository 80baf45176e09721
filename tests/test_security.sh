#!/bin/sh
# test_security.sh - the socket's directory as another local user could leave it (issue 13,
# items 1 and 2): a real fdtuned on the cpu backend refuses a directory that others can
# write, one that is a symbolic link and one that another uid owns, and a store directory
# that others can write, exiting 1 with a message naming it; a directory it makes is private, and the socket is born with
# socket_mode and given socket_group without a chmod or chown by path.
# Usage: BUILD=build sh tests/test_security.sh
set -u
BUILD=${BUILD:-build}
FDTUNED=$BUILD/fdtuned
FDTUNE=$BUILD/fdtune
dir=$(mktemp -d /tmp/fdt-security-XXXXXX)
DB=$dir/store/fdtuned.db
pid=""
passed=0
failed=0
skipped=0

cleanup() {
    [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
    rm -rf "$dir"
}
trap cleanup EXIT

scratch=$dir
: >"$dir/empty.conf"
. "$(dirname "$0")/tap.sh"

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

# serve SOCKET [CONFIG]: a daemon answering on SOCKET, its stderr in $dir/log; strace
# watches it, when there is one, for any chmod or chown of a path.
serve() {
    set -- "$1" "${2:-$dir/empty.conf}"
    tracer=""
    command -v strace >/dev/null 2>&1 &&
        tracer="strace -f -qq -o $dir/trace -e trace=chmod,fchmodat,chown,lchown,fchownat"
    $tracer "$FDTUNED" --config "$2" --socket "$1" --db "$DB" --backend cpu 2>"$dir/log" &
    pid=$!
    i=0
    while ! "$FDTUNE" status --socket "$1" >/dev/null 2>&1; do
        i=$((i + 1))
        if [ $i -gt 200 ] || ! kill -0 "$pid" 2>/dev/null; then
            not_ok "fdtuned starts on $1" "$dir/log"
            return 1
        fi
        sleep 0.1
    done
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

if [ "$(id -u)" -eq 0 ]; then
    mkdir -m 0700 "$dir/theirs"
    chown 65534 "$dir/theirs"
    refused "a socket directory another uid owns (even 0700): exit 1 naming it and its owner" \
        "$dir/theirs" "belongs to uid 65534 (mode 0700), not to uid 0 or root"
else
    skip "a socket directory another uid owns: making one needs root"
fi

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
# Root may give the socket any group; anyone else one of their own.
if [ "$(id -u)" -eq 0 ] && getent group nogroup >/dev/null; then group=nogroup
else group=$(id -gn); fi
printf '[daemon]\nsocket_mode = 0600\nsocket_group = %s\n' "$group" >"$dir/fdtuned.conf"
if serve "$dir/grouped/fdtuned.sock" "$dir/fdtuned.conf"; then
    sock=$dir/grouped/fdtuned.sock
    if [ "$(stat -c %a:%G "$sock")" = "600:$group" ] &&
        [ "$(stat -c %a:%G "$dir/grouped")" = "750:$group" ]; then
        ok "socket_mode 0600 and socket_group: socket 0600 and directory 0750, both $group"
    else
        ls -ld "$dir/grouped" "$sock" >"$dir/out"
        not_ok "socket_mode 0600 and socket_group: socket 0600 and directory 0750" "$dir/out"
    fi
    stop "$sock"
    if [ -z "$tracer" ]; then
        skip "no chmod or chown by path: strace is not installed"
    elif grep -q 'chmod\|chown(\|lchown(' "$dir/trace" ||
        ! grep -q "fchownat(.*\"fdtuned.sock\", -1, [0-9]*, AT_SYMLINK_NOFOLLOW) = 0" "$dir/trace"; then
        not_ok "no chmod or chown by path: the group is given by fchownat, not following links" \
            "$dir/trace"
    else
        ok "no chmod or chown by path: the socket is born 0600, its group given by fchownat"
    fi
fi

echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
