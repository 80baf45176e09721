#!/bin/sh
# run_test.sh - runs one test for `make test`, whose tests run side by side: the test's
# output goes to LOGDIR/NAME.log and is printed whole when it ends, under a line with its
# name, its result and how long it took, so that two tests' lines never interleave. It runs
# at nice 19, where the daemons under test put their workers: a test's compiles and kernels
# share the host evenly with the workers of the tests beside it instead of starving them.
#
# The test runs in a session of its own, and fails if it leaves a process of that session
# running a minute after it ends (a daemon, a worker, a peer it forgot to kill), which is
# then killed: a process left behind holds the descriptors it was given and can keep make
# waiting for ever.
# Usage: sh tests/run_test.sh LOGDIR NAME COMMAND [ARG...]; exits with COMMAND's status.
set -u
logdir=$1
name=$2
shift 2
mkdir -p "$logdir"
log=$logdir/$name.log
for tool in setsid flock ps; do
    if ! command -v $tool >/dev/null 2>&1; then
        echo "== $name: FAILED: $tool is not installed (scripts/install-deps.sh)"
        exit 1
    fi
done
rm -f "$log.sid"
start=$(date +%s)
# shellcheck disable=SC2016
setsid -w sh -c 'echo $$ >"$0.sid"; exec nice -n 19 "$@"' "$log" "$@" >"$log" 2>&1 </dev/null
rc=$?
took=$(($(date +%s) - start))
left() { ps -o pid= -s "$(cat "$log.sid")" 2>/dev/null | tr -s ' \n' ' '; }
i=0
while [ -n "$(left)" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
if [ -n "$(left)" ]; then
    { echo "FAIL - $name left processes running:"; ps -o pid,user,args -s "$(cat "$log.sid")"; } >>"$log"
    # shellcheck disable=SC2046
    kill -9 $(left) 2>/dev/null
    [ $rc -eq 0 ] && rc=1
fi
rm -f "$log.sid"
if [ $rc -eq 0 ]; then verdict=passed; else verdict="FAILED (exit $rc)"; fi
# Printed under a lock, so that a report reaches make's output in one piece.
{ echo "== $name: $verdict in ${took} s"; cat "$log"; } >"$log.report"
flock "$logdir/.print" cat "$log.report"
rm -f "$log.report"
exit $rc
