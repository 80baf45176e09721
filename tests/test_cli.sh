#!/bin/sh
# test_cli.sh - fdtune as a user runs it: bad input gets a clear message and exit code 2,
# a missing device exit code 1, and real runs on the cpu backend print the summary line.
# Usage: FDTUNE=build/fdtune sh tests/test_cli.sh
set -u
FDTUNE=${FDTUNE:-build/fdtune}
passed=0
failed=0
out=$(mktemp)
trap 'rm -f "$out"' EXIT

# expect CODE PATTERN -- ARGS: fdtune ARGS exits CODE and its output matches PATTERN.
expect() {
    code=$1 pattern=$2
    shift 3
    "$FDTUNE" "$@" >"$out" 2>&1
    got=$?
    if [ "$got" -eq "$code" ] && grep -Eq -- "$pattern" "$out"; then
        passed=$((passed + 1))
        echo "ok - fdtune $*"
    else
        failed=$((failed + 1))
        echo "FAIL - fdtune $*: exit $got (want $code), output:"
        sed 's/^/    /' "$out" | head -20
    fi
}

expect 2 'usage: fdtune COMMAND' --
expect 2 "unknown command 'frobnicate'" -- frobnicate
expect 0 'bench NX NY NZ' -- help
expect 0 'precision float.double' -- bench --help
expect 2 'expected the grid shape NX NY NZ' -- bench
expect 2 'expected the grid shape NX NY NZ' -- bench 64 64
expect 2 'NX must be a whole number from 1 to 65536' -- bench 0 64 64
expect 2 'NY must be a whole number from 1 to 65536' -- bench 64 1099511627776 64
expect 2 "NZ must be a whole number from 1 to 65536, not '12abc'" -- bench 64 64 12abc
expect 2 'nx = 2 is out of range' -- bench 2 64 64
expect 2 'nz = 8 is out of range: each side must be 9' -- bench 64 64 8 --radius 4
expect 2 "--precision must be float or double, not 'half'" -- bench 64 64 64 --precision half
expect 2 '--radius must be a whole number from 1 to 4' -- bench 64 64 64 --radius 5
expect 2 "--backend must be auto, hip, cuda or cpu, not 'opencl'" -- bench 64 64 64 --backend opencl
expect 2 "unknown kernel family 'warp'" -- bench 64 64 64 --family warp
expect 2 "unknown option or missing value: '--bogus'" -- bench 64 64 64 --bogus
expect 2 "unknown option or missing value: '--top'" -- bench 64 64 64 --top
expect 2 '--timeout-ms must be a positive number' -- bench 64 64 64 --timeout-ms -1
expect 2 '--samples must be a whole number' -- bench 64 64 64 --samples 0

# Every broken test variant is caught (three wrong, one that does not compile); nothing is
# ok, so there is no best.
expect 0 '^summary shape=13x17x11 precision=double radius=1 backend=cpu variants=4 ok=0 wrong=3 failed=1 .* best=none$' \
    -- bench 13 17 11 --backend cpu --family broken --test-families --samples 2 --leader-samples 2 --min-sample-ms 0.01
# A real run: every variant of the subset verified and timed; the summary is the last line.
expect 0 '^summary shape=21x10x14 precision=float radius=2 backend=cpu variants=4 ok=4 wrong=0 failed=0 copy_gbps=[0-9.]+ kernel1_gbps=[0-9.]+ best_gbps=[0-9.]+ best_over_copy=[0-9.]+ best_over_kernel1=[0-9.]+ best=zmarch:' \
    -- bench 21 10 14 --backend cpu --family zmarch --precision float --radius 2 --subset 4 --samples 2 --leader-samples 3 --min-sample-ms 0.01
if [ "$(tail -n 1 "$out" | cut -c1-8)" != "summary " ]; then
    failed=$((failed + 1))
    echo "FAIL - the summary is not the last line"
fi
expect 0 '^total: [0-9]+ variants for 512x512x512 double radius 1' -- variants 512 512 512 --backend cpu
expect 0 '^tiled:32x2x1:m1:seed$' -- variants 64 64 64 --backend cpu --family tiled --list

# A kernel that outlives --timeout-ms is a timeout, reported, and the run fails cleanly
# (here the reference kernel, which every run checks first).
expect 1 'kernels took [0-9.]+ ms, over the [0-9.]+ ms limit' \
    -- bench 13 17 11 --backend cpu --family naive --subset 2 --timeout-ms 0.000001

# With no GPU, the GPU backends say so and exit 1 instead of crashing.
if ! ls /dev/nvidia0 >/dev/null 2>&1; then
    expect 1 'cuda backend: ' -- bench 64 64 64 --backend cuda
fi
if ! ls /dev/kfd >/dev/null 2>&1; then
    expect 1 'hip backend: ' -- bench 64 64 64 --backend hip
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
