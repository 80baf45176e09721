#!/bin/bash
# bench/compile_latency.sh - issue 15: how the wall of one round of compiles (a task's
# misses, all started at once) grows with the compiles running on the host at once, in one
# process's helpers and in two processes side by side (two workers). Over a STATIC=1 build
# with build-static/compile_rate (its build command is in bench/compile_rate.c); each line
# is compile_rate's second round, whose helpers are warm.
set -u
B=build-static/compile_rate
lscpu | grep -E "^CPU\(s\)|Thread|Core|Socket|Model name|NUMA node\(s\)"
round() { "$B" cuda 256 256 256 "$1" "$2" | sed -n 2p; }
for nt in "8 8" "16 16" "32 32" "64 16" "64 32" "128 32"; do
    echo "one process: $(round $nt)"
done
for nt in "8 8" "16 16" "64 16"; do
    round $nt >/tmp/cl.a & round $nt >/tmp/cl.b; wait
    echo "two at once: $(cat /tmp/cl.a) | $(cat /tmp/cl.b)"
done
