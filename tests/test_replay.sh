#!/bin/sh
# test_replay.sh - fdtune replay on files no clean export gives it (issue 28): a recording
# whose every row is repeated, 200,000 rows in all, replays exactly as the recording does
# (the same space per problem, the same figures), and /dev/zero, a 1 MB field, a line of
# 80 kB in fields within their bound and a gzip bomb are refused, naming the file and line, each run under a bound on its memory and a
# timeout (a guard against a hang, never a measure of speed). --budget-s holds each run to
# the seconds the recording says its variants took, and refuses what is not a budget.
# Specs of one device warm-start each other, and each row names its stencil (issue 30).
# Usage: BUILD=build sh tests/test_replay.sh
set -u
. "$(dirname "$0")/tap.sh"
require python3
BUILD=${BUILD:-build}
FDTUNE=$BUILD/fdtune
scratch=$(mktemp -d /tmp/fdt-replay-XXXXXX)
trap 'rm -rf "$scratch"' EXIT
passed=0
failed=0
skipped=0
RECORDED=bench/results/h100/spaces/h100_double_r1.csv.gz
# 128 MiB: the fixed replay of the 200,000 rows runs in under 64 MiB of address space (28
# MiB of RSS under AddressSanitizer); a loader whose memory follows its longest field
# passes 128 MiB within a second of /dev/zero.
BOUND_MB=128
# AddressSanitizer reserves terabytes of address space, so a sanitized build is held to the
# bound by its own RSS limit (which aborts the run) instead of ulimit -v.
if ldd "$FDTUNE" | grep -q libasan; then
    export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}hard_rss_limit_mb=$BOUND_MB"
    BOUND_KB=unlimited
    bound="$BOUND_MB MiB of RSS"
else
    BOUND_KB=$((BOUND_MB * 1024))
    bound="$BOUND_MB MiB of address space"
fi

# replay_bounded ARGS...: fdtune replay ARGS within the bound and a 300 s timeout, its
# output in $scratch/out.
replay_bounded() {
    (ulimit -v "$BOUND_KB" && exec timeout 300 "$FDTUNE" replay "$@") >"$scratch/out" 2>&1
}

# exits CODE NAME MESSAGE ARGS...: replay ARGS exits CODE with MESSAGE, within the bound.
exits() {
    want=$1 name=$2 message=$3
    shift 3
    replay_bounded "$@"
    rc=$?
    if [ $rc -eq "$want" ] && grep -Fq -- "$message" "$scratch/out"; then
        ok "$name"
    else
        echo "    exit $rc, want $want and: $message" >>"$scratch/out"
        not_ok "$name" "$scratch/out"
    fi
}

# refused NAME MESSAGE ARGS...: replay ARGS fails (exit 1) with MESSAGE.
refused() { exits 1 "$@"; }

# The recording with each row once, and with each row 18 times in a row (202,897 lines).
zcat "$RECORDED" >"$scratch/once.csv"
awk 'NR == 1 { print; next } { for (i = 0; i < 18; i++) print }' "$scratch/once.csv" \
    >"$scratch/repeated.csv"
rows=$(wc -l <"$scratch/repeated.csv")
[ "$rows" -gt 200000 ] || { echo "FAIL - the generated file has $rows lines"; exit 1; }

# The figures depend on the space alone: with its rows merged, the repeated recording must
# print what the recording prints, space column (the variants each problem counts) first.
replay_bounded "$scratch/once.csv" --seeds 2 --budget 200
cp "$scratch/out" "$scratch/once.out"
if grep -q '^replay problems=8 ' "$scratch/once.out"; then
    ok "replay: the recording once"
else
    not_ok "replay: the recording once" "$scratch/once.out"
fi
replay_bounded "$scratch/repeated.csv" --seeds 2 --budget 200
rc=$?
if [ $rc -eq 0 ] && cmp -s "$scratch/once.out" "$scratch/out"; then
    ok "replay: $rows rows, each repeated 18 times, within $bound: the recording's own spaces and figures"
else
    diff "$scratch/once.out" "$scratch/out" >"$scratch/diff.all"
    { grep '^<' "$scratch/diff.all" | head -3; grep '^>' "$scratch/diff.all" | head -3; } \
        >"$scratch/diff"
    echo "    exit $rc; what differs from the recording once:" >>"$scratch/diff"
    not_ok "replay: $rows rows, each repeated 18 times, within $bound" "$scratch/diff"
fi

# stopped_mean: the mean evaluations of the runs, from the "stopped:" line of $scratch/out.
stopped_mean() {
    sed -n 's/^stopped: evaluations mean \([0-9.]*\) max .*/\1/p' "$scratch/out"
}

# --budget-s: a recorded variant costs a few hundredths to a few tenths of a second (its
# compile_ms, and samples x reps x median_ms), so 2 s stop a run after some batches, 8 s
# later, and a budget the recording never reaches stops nothing: random measures the whole
# space, as with a budget of evaluations it never reaches.
replay_bounded "$scratch/once.csv" --seeds 2 --budget-s 2
two=$(stopped_mean)
replay_bounded "$scratch/once.csv" --seeds 2 --budget-s 8
eight=$(stopped_mean)
replay_bounded "$scratch/once.csv" --seeds 1 --strategy random --budget-s 1000000
never=$(stopped_mean)
replay_bounded "$scratch/once.csv" --seeds 1 --strategy random --budget 100000000
space=$(stopped_mean)
if awk -v a="${two:-0}" -v b="${eight:-0}" -v c="${never:-0}" -v s="${space:-0}" \
    'BEGIN { exit !(a >= 8 && a < b && b < s && c == s) }'; then
    ok "replay --budget-s: runs stop by the recorded seconds (2 s: $two, 8 s: $eight evaluations; never reached: $never, the space)"
else
    echo "    2 s: '$two', 8 s: '$eight', never reached: '$never', space '$space' evaluations" \
        >>"$scratch/out"
    not_ok "replay --budget-s: runs stop by the recorded seconds" "$scratch/out"
fi

# --patience: the ETA's count at 25, 50 and 75% of every run (8 problems, 2 seeds), each
# mark's median error and its share of runs within 25%.
replay_bounded "$scratch/once.csv" --seeds 2 --patience 48
if grep -Eq '^eta count: at 25% median [-+][0-9]+%, [0-9]+% of 16 runs within 25%; at 50% .* of 16 runs within 25%; at 75% .* of 16 runs within 25%;$' "$scratch/out"; then
    ok "replay --patience: how true the ETA's count is ($(sed -n 's/^eta count: //p' "$scratch/out" | cut -c1-60)...)"
else
    not_ok "replay --patience: how true the ETA's count is" "$scratch/out"
fi

# usage_refused NAME MESSAGE ARGS...: replay ARGS exits 2 (usage) with MESSAGE.
usage_refused() { exits 2 "$@"; }
for bad in 0 -1 abc 2s 1e9 nan; do
    usage_refused "replay --budget-s $bad refused" \
        "fdtune replay: --budget-s must be a number of seconds above 0, at most 31536000, got '$bad'" \
        "$scratch/once.csv" --budget-s "$bad"
done
# The columns a replay needs, and none of a variant's cost: nothing to count seconds with.
awk -F, 'BEGIN { OFS = "," } { print $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $20 }' \
    "$scratch/once.csv" >"$scratch/costless.csv"
usage_refused "replay --budget-s refused on a recording without costs" \
    "fdtune replay: --budget-s needs what each variant cost" "$scratch/costless.csv" --budget-s 2

# Operators of one device lend each other a warm start (issue 30): the three specs of a
# recording on one shape, each the only problem of its stencil, are each warm-started from
# the other two (their variants are named alike), so the model has an instant answer for
# every one; and the table names each row's stencil, as rows of one shape and radius are
# otherwise alike.
SPECS=bench/results/h100/issue30/record2/spec_results.csv.gz
zcat "$SPECS" | awk -F, 'NR == 1 || ($6 == 256 && $7 == 256 && $8 == 256)' >"$scratch/specs.csv"
replay_bounded "$scratch/specs.csv" --seeds 1
stencils=$(zcat "$SPECS" | awk -F, 'NR > 1 { print $3 }' | sort -u)
named=0
for s in $stencils; do
    grep -q "^256x256x256 *$s " "$scratch/out" && named=$((named + 1))
done
instant_worst=$(sed -n 's/.* instant_worst=\([0-9.]*\).*/\1/p' "$scratch/out")
if grep -q '^replay problems=3 ' "$scratch/out" && [ "$named" -eq 3 ] &&
    awk -v w="${instant_worst:-0}" 'BEGIN { exit !(w > 0.5) }'; then
    ok "replay: three specs of one shape warm-start each other (instant worst $instant_worst), each row named by its stencil"
else
    echo "    rows naming their stencil: $named of 3; instant worst '$instant_worst'" >>"$scratch/out"
    not_ok "replay: three specs of one shape warm-start each other, each row named" "$scratch/out"
fi

refused "replay: /dev/zero refused within $bound" \
    "fdtune replay: /dev/zero:1: a field longer than 4096 bytes" /dev/zero
head -1 "$scratch/once.csv" >"$scratch/wide.csv"
head -c 1048576 /dev/zero | tr '\0' 'x' >>"$scratch/wide.csv"
echo ",D,laplacian,1,double,8,8,8,hot,1,naive:64x1x1,ok,0,10" >>"$scratch/wide.csv"
refused "replay: a field of 1 MB refused within $bound" \
    "$scratch/wide.csv:2: a field longer than 4096 bytes" "$scratch/wide.csv"
# A line of 20 fields of 4000 bytes each: every field within its bound, the line past its own.
head -1 "$scratch/once.csv" >"$scratch/long.csv"
python3 -c "print(','.join(['x' * 4000] * 20))" >>"$scratch/long.csv"
refused "replay: a line of 80 kB in fields of 4000 bytes refused" \
    "$scratch/long.csv:2: a line longer than 65536 bytes" "$scratch/long.csv"
# 512 MiB of NUL bytes compressed to half a megabyte
head -c 536870912 /dev/zero | gzip -1 >"$scratch/bomb.csv.gz"
refused "replay: a gzip bomb refused within $bound" \
    "$scratch/bomb.csv.gz:1: a field longer than 4096 bytes" "$scratch/bomb.csv.gz"

echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
