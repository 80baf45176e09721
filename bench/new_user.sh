#!/bin/sh
# new_user.sh - fdtuned tried as a new user would (issue 32): a fresh clone of this tree, the
# README's first command (install-deps.sh, then `make run`, fdtuned in the foreground with
# its embedded defaults), the README's next two commands from another shell, and every
# command's --help, all into one transcript. The ETA's error at 25, 50 and 75% of a job and
# transcripts of `tune --wait` and `watch` come from bench/eta.sh beside it.
# Usage: OUT=DIR sh bench/new_user.sh   (as an ordinary user, whose daemon's socket and store
# go under $XDG_RUNTIME_DIR and $XDG_STATE_HOME, here private to the run; root's would be the
# system's /run/fdtuned and /var/lib/fdtuned. The packages must be installed or installable
# (sudo apt); about two minutes on 2 cores)
set -u
[ "$(id -u)" -ne 0 ] || { echo "$0: run it as an ordinary user (root's daemon is the system's)" >&2; exit 2; }
repo=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-.}
mkdir -p "$OUT"
log=$OUT/new_user_transcript.txt
home=$(mktemp -d /tmp/fdt-newuser-XXXXXX)
trap 'kill "$daemon" 2>/dev/null; rm -rf "$home"' EXIT
daemon=""
# say CMD...: the command as typed, then what it printed and its exit status.
say() {
    echo "\$ $*" >>"$log"
    "$@" >>"$log" 2>&1
    echo "[exit $?]" >>"$log"
}
: >"$log"
echo "# $(date -u) on $(uname -n): $(getconf _NPROCESSORS_ONLN) cores, $(. /etc/os-release && echo "$PRETTY_NAME")" >>"$log"
# A home of the run's own, whose git config trusts the tree: it may belong to another user
# (a checkout shared on a cluster), and git takes safe.directory from a global config only.
export HOME="$home"
git config --global --add safe.directory "$repo/.git"
say git clone -q "$repo" "$home/fdtuned"
cd "$home/fdtuned" || exit 1
# The run's own state, as a user without a session's runtime dir would have it.
export XDG_RUNTIME_DIR="$home/run" XDG_STATE_HOME="$home/state"
mkdir -m 0700 "$XDG_RUNTIME_DIR"
echo "\$ ./scripts/install-deps.sh && make run   (in the background; its first lines below)" >>"$log"
./scripts/install-deps.sh >"$home/deps.log" 2>&1 && { make run >"$home/run.log" 2>&1 & daemon=$!; }
i=0
until build/fdtune status >/dev/null 2>&1; do
    i=$((i + 1))
    [ $i -gt 3000 ] && { echo "fdtuned did not answer in 300 s" >>"$log"; tail "$home/run.log" >>"$log"; exit 1; }
    sleep 0.1
done
grep "fdtuned\[" "$home/run.log" | head -8 >>"$log"
say build/fdtune tune 128 128 128 --wait
say build/fdtune query 128 128 128
say build/fdtune status 1
for cmd in $(build/fdtune help | sed -n 's/^  \([a-z][a-z]*\) .*/\1/p'); do
    say build/fdtune "$cmd" --help
done
say build/fdtuned --help
say build/fdtuned --version
say build/fdtune-worker --version
say build/fdtune shutdown
wait "$daemon"
echo "[make run ended: exit $?]" >>"$log"
daemon=""
