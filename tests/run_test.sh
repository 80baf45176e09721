#!/bin/sh
# run_test.sh - runs one test for `make test`, whose tests run side by side: the test's
# output goes to LOGDIR/NAME.log and is printed whole when it ends, under a line with its
# name, its result and how long it took, so that two tests' lines never interleave. It runs
# at nice 19, where the daemons under test put their workers: a test's compiles and kernels
# share the host evenly with the workers of the tests beside it instead of starving them.
# Usage: sh tests/run_test.sh LOGDIR NAME COMMAND [ARG...]; exits with COMMAND's status.
set -u
logdir=$1
name=$2
shift 2
mkdir -p "$logdir"
log=$logdir/$name.log
start=$(date +%s)
nice -n 19 "$@" >"$log" 2>&1 </dev/null
rc=$?
took=$(($(date +%s) - start))
if [ $rc -eq 0 ]; then verdict=passed; else verdict="FAILED (exit $rc)"; fi
# Printed under a lock, so that a report reaches make's output in one piece.
{ echo "== $name: $verdict in ${took} s"; cat "$log"; } >"$log.report"
flock "$logdir/.print" cat "$log.report"
rm -f "$log.report"
exit $rc
