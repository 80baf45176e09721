#!/bin/sh
# test_client_trust.sh - the client's side of the socket's trust (issue 28, class 1): a real
# fdtuned run by another uid (4321), with a tuned answer in its store, is refused by
# `fdtune` and by libfdtune (the heat example) with a message naming the socket and the
# uid, whether its path was given (--socket, FDTUNE_SOCKET) or is the default one that uid
# made first (/tmp/fdtuned-UID/, for a victim uid of ours with no daemon); the solver runs
# kernel 1 instead and nothing of the daemon's is compiled. FDTUNE_TRUST_UID names a
# service's uid to trust. Our own daemon's socket is refused in a directory that others can
# write, that is a symbolic link, or that another uid owns, and root's is answered to a
# user who may only search its directory (0711).
# Root runs it with real uids; anyone else as root of a user namespace of its own
# (unshare --map-auto --map-root-user), where its subordinate uids are the other users.
# Usage: BUILD=build sh tests/test_client_trust.sh
set -u
. "$(dirname "$0")/tap.sh"
root_or_userns "$@"
BUILD=${BUILD:-build}
FDTUNED=$BUILD/fdtuned
FDTUNE=$BUILD/fdtune
HEAT=$BUILD/examples/heat
THEM=4321
dir=$(mktemp -d /tmp/fdt-trust-XXXXXX)

scratch=$dir
pid=""
mine=""
victim_dir=""
passed=0
failed=0

cleanup() {
    for p in $pid $mine; do kill -9 "$p" 2>/dev/null; done
    [ -n "$victim_dir" ] && rm -rf "$victim_dir"
    rm -rf "$dir"
}
trap cleanup EXIT
require setpriv

# A victim uid of ours with no daemon, whose default socket directory, /tmp/fdtuned-UID/
# (no XDG_RUNTIME_DIR), nobody has made: the other uid makes it first.
victim=4322
while [ -e "/tmp/fdtuned-$victim" ]; do victim=$((victim + 1)); done
victim_dir=/tmp/fdtuned-$victim
sock=$victim_dir/fdtuned.sock

# as UID COMMAND...: COMMAND run by UID, with none of our environment's paths; CLEAN_ENV
# alone for a command in the background, whose $! must be the command's own pid.
CLEAN_ENV="env -u XDG_RUNTIME_DIR -u HOME -u XDG_CACHE_HOME -u FDTUNE_SOCKET -u FDTUNE_CACHE_DIR
    -u FDTUNE_TRUST_UID"
as() {
    who=$1
    shift
    $CLEAN_ENV setpriv --reuid="$who" --regid="$who" --clear-groups "$@"
}

# heat_refuses NAME UID TEXT [VAR=VALUE...]: the heat example run by UID with those
# variables ran kernel 1, saying TEXT: it compiled nothing the daemon named.
heat_refuses() {
    name=$1 who=$2 text=$3
    shift 3
    as "$who" env "$@" "$HEAT" 16 16 16 --steps 2 >"$dir/heat.out" 2>&1
    rc=$?
    if [ $rc -eq 0 ] && grep -q '^heat .* source=fallback variant=naive:256x1x1 ' "$dir/heat.out" &&
        grep -qF -- "$text" "$dir/heat.out"; then
        ok "$name"
    else
        echo "(exit $rc, wanted source=fallback and: $text)" >>"$dir/heat.out"
        not_ok "$name" "$dir/heat.out"
    fi
}

# --- the other uid's daemon, where our victim's default socket would be ----------------
chmod 0711 "$dir" # the other uids pass through to their store and to the programs' scratch
mkdir -m 0700 "$dir/them"
chown "$THEM:$THEM" "$dir/them"
printf '[daemon]\nsocket_mode = 0666\n[search]\nbudget = 6\n[tuning]\nsamples = 3\nmin_sample_ms = 0.1\nmax_spread = 0\n' \
    >"$dir/them/conf"
$CLEAN_ENV setpriv --reuid="$THEM" --regid="$THEM" --clear-groups "$FDTUNED" \
    --config "$dir/them/conf" --socket "$sock" --db "$dir/them/store/fdtuned.db" --backend cpu \
    >"$dir/them/log" 2>&1 &
pid=$!
answering "$pid" "the other uid's fdtuned starts on $sock" "$dir/them/log" \
    as "$THEM" "$FDTUNE" status --socket "$sock" || exit 1
# Its answer for 16^3 is a tuned variant: what a solver that trusted it would compile.
if as "$THEM" timeout 300 "$FDTUNE" tune 16 16 16 --wait --socket "$sock" >"$dir/out" 2>&1 &&
    as "$THEM" "$FDTUNE" query 16 16 16 --json --socket "$sock" >>"$dir/out" 2>&1 &&
    grep -q '"match":"exact"' "$dir/out"; then
    ok "the other uid's fdtuned has tuned 16^3"
else
    not_ok "the other uid's fdtuned has tuned 16^3" "$dir/out"
fi

# --- refused by path, by root ----------------------------------------------------------
why="fdtuned at $sock is run by uid $THEM, not by you (uid 0), root or the service account fdtuned: refused"
expect_exit "fdtune query refuses another uid's daemon named by --socket (exit 3, naming it)" \
    3 "$why" "$FDTUNE" query 16 16 16 --socket "$sock"
expect_exit "fdtune status refuses it named by FDTUNE_SOCKET" \
    3 "$why" env FDTUNE_SOCKET="$sock" "$FDTUNE" status
mkdir -m 0700 "$dir/cache-root"
heat_refuses "libfdtune (heat) refuses it too: kernel 1, the reason naming uid $THEM" \
    0 "$why" FDTUNE_SOCKET="$sock" FDTUNE_CACHE_DIR="$dir/cache-root"

# --- refused at the default path, by the victim uid ------------------------------------
expect_exit "fdtune query refuses the daemon at the default /tmp/fdtuned-UID/ another uid made" \
    3 "fdtuned at $sock is run by uid $THEM, not by you (uid $victim), root or the service account fdtuned: refused" \
    as "$victim" "$FDTUNE" query 16 16 16
heat_refuses "libfdtune (heat) refuses it at the default path too" \
    "$victim" "fdtuned at $sock is run by uid $THEM, not by you (uid $victim), root or the service account fdtuned"

# --- a service's uid trusted by name ---------------------------------------------------
expect_exit "FDTUNE_TRUST_UID=$THEM: its daemon is answered (exit 0)" \
    0 '"match":"exact"' env FDTUNE_TRUST_UID=$THEM "$FDTUNE" query 16 16 16 --json --socket "$sock"
expect_exit "FDTUNE_TRUST_UID that is not a uid: a clear error, nothing asked" \
    3 "FDTUNE_TRUST_UID must be a uid, a whole number, not 'fdtuned'" \
    env FDTUNE_TRUST_UID=fdtuned "$FDTUNE" query 16 16 16 --socket "$sock"

# --- our own daemon, its socket's directory as others could leave it -------------------
# socket_mode 0666: the directory fdtuned makes is 0711, which other users may only search.
"$FDTUNED" --config "$dir/them/conf" --socket "$dir/mine/fdtuned.sock" \
    --db "$dir/mine-store/fdtuned.db" --backend cpu >"$dir/mine.log" 2>&1 &
mine=$!
answering "$mine" "our own fdtuned starts on $dir/mine" "$dir/mine.log" \
    "$FDTUNE" status --socket "$dir/mine/fdtuned.sock" || exit 1
ok "our own daemon in a private directory is answered"
expect_exit "root's daemon is answered to another user, who may only search its directory (0711)" \
    0 "socket    $dir/mine/fdtuned.sock" as "$victim" "$FDTUNE" status --socket "$dir/mine/fdtuned.sock"
chmod 0777 "$dir/mine"
expect_exit "our daemon's socket in a directory others can write: refused, naming it" \
    3 "$dir/mine (owner uid 0, mode 0777) can be written by its group or others" \
    "$FDTUNE" status --socket "$dir/mine/fdtuned.sock"
chmod 0711 "$dir/mine"
ln -s "$dir/mine" "$dir/link"
expect_exit "our daemon's socket through a directory that is a symbolic link: refused" \
    3 "$dir/link is a symbolic link" "$FDTUNE" status --socket "$dir/link/fdtuned.sock"
chown "$THEM" "$dir/mine"
expect_exit "our daemon's socket in a directory another uid owns: refused, naming the owner" \
    3 "$dir/mine belongs to uid $THEM (mode 0711), not to uid 0 or root" \
    "$FDTUNE" status --socket "$dir/mine/fdtuned.sock"
expect_exit "... unless FDTUNE_TRUST_UID names that owner" \
    0 "" env FDTUNE_TRUST_UID=$THEM "$FDTUNE" status --socket "$dir/mine/fdtuned.sock"
chown 0 "$dir/mine"

echo "# $passed passed, $failed failed"
[ "$failed" -eq 0 ]
