#!/bin/sh
# test_cli.sh - fdtune as a user runs it: bad input gets a clear message and exit code 2,
# a missing device exit code 1, and real runs on the cpu backend print the summary line;
# the daemon commands without a daemon: usage errors before any connection, and exit code 3
# when fdtuned cannot be reached (tests/test_daemon.sh runs them against a live one).
# Usage: FDTUNE=build/fdtune sh tests/test_cli.sh
set -u
FDTUNE=${FDTUNE:-build/fdtune}
passed=0
failed=0
out=$(mktemp)
dir=$(mktemp -d)
scratch=$dir
. "$(dirname "$0")/tap.sh"
require python3
peer=
trap 'rm -f "$out"; rm -rf "$dir"; [ -z "$peer" ] || kill "$peer" 2>/dev/null' EXIT

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

expect 2 'usage: fdtune .*COMMAND' --
expect 2 "unknown command 'frobnicate'" -- frobnicate
version=$(sed -n 's/^#define FDT_VERSION "\(.*\)"/\1/p' common/version.h)
expect 0 "^fdtune $version\$" -- --version
expect 0 "^fdtune $version\$" -- -V
expect 2 "expected a COMMAND after '--json'" -- --socket /nowhere --json
expect 2 "--format must be table, csv or json, not 'yaml'" -- jobs --format yaml
expect 2 "--format must be table, csv or json, not 'xml'" -- devices --format xml
expect 2 "--format must be text, table, csv or json, not 'yaml'" -- status --format yaml
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
expect 2 "--cache must be hot, persist or auto, not 'warm'" -- bench 64 64 64 --cache warm
expect 2 "--backend must be auto, hip, cuda or cpu, not 'opencl'" -- bench 64 64 64 --backend opencl
expect 2 "unknown kernel family 'warp'" -- bench 64 64 64 --family warp
expect 2 "--space must be auto, nvidia or amd, not 'AMD'" -- bench 64 64 64 --space AMD
expect 0 'amd space' -- variants 64 64 64 --backend cpu --space amd
# The AMD profile's variants (L2 bands, long walks, wpe) computed right, on the cpu backend.
expect 0 'wrong=0 failed=0' -- bench 21 19 37 --backend cpu --space amd --subset 20 --samples 1 --leaders 0 --min-sample-ms 0.01
# A user's stencil spec (docs/stencils.md), generated, verified and timed on the cpu backend;
# a spec that cannot be read or makes no sense is refused with where and why.
expect 0 'wrong=0 failed=0 .* stencil=spec-[0-9a-f]{16}' \
    -- bench 19 14 12 --backend cpu --spec examples/specs/acoustic8.json --subset 6 --samples 1 --leaders 0 --min-sample-ms 0.01
expect 0 'smarch:' -- variants 64 64 64 --backend cpu --spec examples/specs/gradient4.json --list
expect 2 "--spec $dir/none.json: No such file or directory" -- bench 64 64 64 --spec "$dir/none.json"
printf '{"fdtune_stencil": 1, "name": "x", "inputs": ["u"], "outputs": {"f": [{"tap": "u", "at": [0, 0, 9]}]}}' >"$dir/far.json"
expect 2 "--spec $dir/far.json: outputs.f\\[0\\].at" -- bench 64 64 64 --spec "$dir/far.json"
expect 2 'a spec.s radius is its reach' -- bench 64 64 64 --radius 2 --spec examples/specs/box27.json
# A spec file past the 64 KiB bound, even by trailing blanks, is refused whole, never cut short.
python3 -c "import sys; s = open(sys.argv[1]).read().rstrip(); print(s + ' ' * (65537 - len(s)))" \
    examples/specs/box27.json >"$dir/big.json"
expect 2 "--spec $dir/big.json: spec: 65537 bytes: the most is 65536" -- bench 64 64 64 --spec "$dir/big.json"
expect 2 "unknown option or missing value: '--bogus'" -- bench 64 64 64 --bogus
expect 2 "unknown option or missing value: '--top'" -- bench 64 64 64 --top
expect 2 '--timeout-ms must be a positive number' -- bench 64 64 64 --timeout-ms -1
expect 2 '--samples must be a whole number' -- bench 64 64 64 --samples 0

# Cold-cache measurement is not built: refused before anything is measured.
expect 1 'cold-cache measurement is not built yet' -- bench 13 17 11 --backend cpu --cache cold --subset 2
# Cache mode persist needs NVIDIA's L2 eviction priorities: the cpu backend refuses it,
# naming the device, before anything is measured.
expect 1 'cache mode persist needs L2 eviction priorities \(NVIDIA sm_80 or later\); .* \([^,]+, cpu backend\) has none' \
    -- bench 13 17 11 --backend cpu --cache persist --subset 2
# Cache mode auto on a device that cannot persist: everything timed hot, and said so.
# The runs here check what is verified and reported, not timing noise: one sample a
# variant and no leaders, so that no median can lie above a fastest sample and the noise
# bound cannot mark a variant noisy on a loaded host (tests/test_noisy.sh tests it).
expect 0 'auto cache_chosen=hot hot_gbps=[0-9.]+ persist_gbps=0.0' \
    -- bench 13 17 11 --backend cpu --cache auto --subset 2 --samples 1 --leaders 0

# Every broken test variant is caught (three wrong, one that does not compile); nothing is
# ok, so there is no best.
expect 0 '^summary shape=13x17x11 precision=double radius=1 backend=cpu variants=4 ok=0 wrong=3 failed=1 .* best=none stencil=laplacian$' \
    -- bench 13 17 11 --backend cpu --family broken --test-families --samples 2 --leader-samples 2 --min-sample-ms 0.01
# A real run: every variant of the subset verified and timed, and the interior copy timed
# beside them (its row; its speed on a loaded 2-core host can round to 0.0 GB/s); the
# summary is the last line.
expect 0 '^summary shape=21x10x14 precision=float radius=2 backend=cpu variants=4 ok=4 wrong=0 failed=0 copy_gbps=[0-9.]+ interior_copy_gbps=[0-9.]+ kernel1_gbps=[0-9.]+ best_gbps=[0-9.]+ best_over_copy=[0-9.]+ best_over_interior_copy=[0-9.]+ best_over_kernel1=[0-9.]+ best=zmarch:' \
    -- bench 21 10 14 --backend cpu --family zmarch --precision float --radius 2 --subset 4 --samples 1 --leaders 0 --min-sample-ms 0.01
if [ "$(tail -n 1 "$out" | cut -c1-8)" != "summary " ]; then
    failed=$((failed + 1))
    echo "FAIL - the summary is not the last line"
fi
if ! grep -Eq '^ *icopy +interior copy \(fastest shape\) +[0-9]+\.[0-9]+ ' "$out"; then
    failed=$((failed + 1))
    echo "FAIL - no timed interior copy row"
fi
# A compile killed with its process (kill -9) leaves its folder under TMPDIR, named for the
# compiling process, with the compiler's own temporary files inside it; the next process's
# first compile removes the folders of processes that are gone, and nothing else: not a
# live process's, not a name that is not ours, not a link or a file by such a name.
tmpd="$dir/tmp"
mkdir -m 700 "$tmpd" "$tmpd/fdt-cpu-$$-Live00" "$tmpd/fdt-cpu-notapid" "$dir/keep"
: >"$dir/keep/precious"
ln -s "$dir/keep" "$tmpd/fdt-cpu-999999-Link00"
: >"$tmpd/fdt-cpu-999998-File00"
stale() { ls "$tmpd" | grep -v -e "^fdt-cpu-$$-Live00\$" -e '^fdt-cpu-notapid$' -e Link00 -e File00; }
compiling() { stale | sed -n 's/^fdt-cpu-\([0-9]*\)-.*/\1/p'; }
# In a session of its own, so that kill -9 of its group takes the compilers too.
TMPDIR="$tmpd" setsid sh -c 'echo $$ >"$1"; shift; exec "$@"' sh "$dir/victim" "$FDTUNE" \
    bench 13 17 11 --backend cpu --subset 40 --samples 1 --leaders 0 >/dev/null 2>&1 &
victim=$!
i=0
while [ -z "$(compiling)" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
pids=$(compiling)
kill -9 -"$(cat "$dir/victim")"
wait "$victim" 2>/dev/null
for pid in $pids; do
    i=0
    while kill -0 "$pid" 2>/dev/null && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
done
left=$(stale)
TMPDIR="$tmpd" "$FDTUNE" bench 13 17 11 --backend cpu --variant naive:64x1x1 --samples 1 \
    --leaders 0 >"$out" 2>&1
if [ -n "$left" ] && [ -z "$(stale)" ] && [ -d "$tmpd/fdt-cpu-$$-Live00" ] &&
    [ -d "$tmpd/fdt-cpu-notapid" ] && [ -L "$tmpd/fdt-cpu-999999-Link00" ] &&
    [ -f "$dir/keep/precious" ] && [ -f "$tmpd/fdt-cpu-999998-File00" ] &&
    grep -q '^summary .* ok=1 ' "$out"; then
    passed=$((passed + 1))
    echo "ok - kill -9 left $(echo $left | wc -w) compile folder(s); the next compile removed them"
else
    failed=$((failed + 1))
    echo "FAIL - stale compile folders: left by kill -9 '$left', after the next compile '$(stale)'"
    ls -la "$tmpd" | sed 's/^/    /'
fi
# A TMPDIR that cannot hold a work folder: the run fails naming it.
TMPDIR="$dir/none" expect 1 "mkdtemp $dir/none/fdt-cpu-[0-9]+-.*: No such file or directory" \
    -- bench 13 17 11 --backend cpu --variant naive:64x1x1 --samples 1 --leaders 0
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

# The daemon commands. Bad usage is caught before any connection: exit 2 even with no
# daemon at the socket (so a bad batch queues nothing).
none="$dir/none.sock"
expect 0 '3  cannot reach the daemon' -- --help
expect 0 'tune-if-missing' -- query --help
expect 2 "query: expected the grid shape NX NY NZ" -- query 64 64 --socket "$none"
expect 2 "NZ must be a whole number from 1 to 65536, not 'x'" -- query 64 64 x --socket "$none"
expect 2 'nx = 4 is out of range: each side must be 5' -- query 4 64 64 --radius 2 --socket "$none"
expect 2 "--cache must be hot, cold, persist or auto, not 'warm'" -- query 64 64 64 --cache warm --socket "$none"
expect 2 "--precision must be float or double, not 'half'" -- tune 64 64 64 --precision half --socket "$none"
expect 2 "unknown kernel family 'warp'" -- tune 64 64 64 --family warp --socket "$none"
expect 2 '--subset must be a whole number from 1' -- tune 64 64 64 --subset 0 --socket "$none"
expect 2 '--timeout must be a whole number from 1' -- status --timeout 0 --socket "$none"
expect 2 "unknown option or missing value: '--wait'" -- query 64 64 64 --wait --socket "$none"
expect 2 'pitch 12 is out of range: a row pitch must be nx \(13\) to nx \+ 4096' -- \
    query 13 64 64 --pitch 12 --socket "$none"
expect 2 'offset 32 is out of range: 0 to 31 points' -- query 64 64 64 --offset 32 --socket "$none"
expect 2 "--pitch must be a whole number from 1 to 69632, not 'wide'" -- \
    query 64 64 64 --pitch wide --socket "$none"
expect 2 'pitch auto chooses the offset too' -- tune 64 64 64 --pitch auto --offset 1 --socket "$none"
expect 2 "JOB must be a whole number from 1 to [0-9]+, not 'abc'" -- status abc --socket "$none"
expect 2 "unexpected argument '13'" -- status 12 13 --socket "$none"
expect 2 'cancel: expected the JOB to cancel' -- cancel --socket "$none"
expect 2 "--state must be queued, running, done, failed or cancelled, not 'lost'" -- jobs --state lost --socket "$none"
expect 2 '--limit must be a whole number from 1 to 10000' -- jobs --limit 10001 --socket "$none"
expect 2 "unexpected argument 'gpu'" -- devices gpu --socket "$none"
expect 2 "--what must be best or results, not 'all'" -- export --what all --socket "$none"
expect 2 "--format must be csv or json, not 'xml'" -- export --format xml --socket "$none"
expect 2 'does not go with -o' -- export --json -o "$dir/x.csv" --socket "$none"
expect 2 "unexpected argument 'now'" -- shutdown now --socket "$none"
expect 2 'report: expected -o FILE' -- report --socket "$none"
expect 2 "--device must be the daemon's device index or a" -- report --device gpu -o "$dir/r.html" --socket "$none"
expect 2 'batch: expected one FILE of shapes' -- batch --socket "$none"
expect 2 'batch: --sweep expects three comma lists' -- batch --sweep 64,128 64 --socket "$none"
expect 2 "each value of NY_LIST must be a whole number from 1 to 65536, not ''" -- batch --sweep 64 64,,128 64 --socket "$none"
expect 2 "the sweep's shape 64x64x2: nz = 2 is out of range" -- batch --sweep 64 64 64,2 --socket "$none"
expect 2 'the sweep makes 10200 shapes, more than the 10000' -- batch --sweep "$(seq -s, 3 104)" 64,128 "$(seq -s, 3 52)" --socket "$none"
expect 2 "cannot read $dir/missing.txt" -- batch "$dir/missing.txt" --socket "$none"
printf '# shapes to tune\n64 64 64\n\n128 128 128   # a comment\n256 x 256\n' >"$dir/bad.txt"
expect 2 "$dir/bad.txt:5: NY must be a whole number from 1 to 65536, not 'x'" -- batch "$dir/bad.txt" --socket "$none"
printf '64 64 64\n128 128\n' >"$dir/short.txt"
expect 2 "$dir/short.txt:2: expected NX NY NZ, found 2 fields" -- batch "$dir/short.txt" --socket "$none"
printf '64 64 64\n64 64 4\n' >"$dir/small.txt"
expect 2 '\(stdin\):2: nz = 4 is out of range: each side must be 5' -- batch - --radius 2 --socket "$none" <"$dir/small.txt"
printf '# only a comment\n\n' >"$dir/empty.txt"
expect 2 "$dir/empty.txt holds no shape" -- batch "$dir/empty.txt" --socket "$none"

# No daemon: exit 3, naming the socket and how to start fdtuned; FDTUNE_SOCKET is where
# the commands look when --socket is not given.
expect 3 "cannot connect to fdtuned at $none: no such file or directory" -- status --socket "$none"
expect 3 "fdtune status: cannot connect to fdtuned at $none" -- --json --socket "$none" status
expect 3 "fdtune jobs: cannot connect to fdtuned at $none" -- --socket="$none" jobs --json
expect 3 "fdtuned at $none" -- --timeout 1 --socket "$none" tune 64 64 64 --wait
expect 3 "Start it \(fdtuned --socket $none" -- query 64 64 64 --socket "$none"
expect 3 "at $none: " -- tune 64 64 64 --wait --socket "$none"
expect 3 "at $none: " -- batch "$dir/small.txt" --socket "$none"
expect 3 "at $none: " -- export --format csv -o "$dir/export.csv" --socket "$none"
if [ -e "$dir/export.csv" ]; then
    failed=$((failed + 1))
    echo "FAIL - a failed export left $dir/export.csv behind"
fi
expect 3 "fdtune report: cannot connect to fdtuned at $none" -- report -o "$dir/report.html" --socket "$none"
if ls "$dir"/report.html* >/dev/null 2>&1; then
    failed=$((failed + 1))
    echo "FAIL - a report that reached no daemon left $(ls "$dir"/report.html*) behind"
fi
export FDTUNE_SOCKET="$dir/env.sock"
expect 3 "cannot connect to fdtuned at $dir/env.sock" -- jobs
unset FDTUNE_SOCKET
long=$(printf '%0200d' 0)
expect 3 'socket path is longer than 107 bytes' -- devices --socket "$dir/$long.sock"

# A socket nobody listens on (a daemon that died), and one whose daemon accepts but never
# answers: exit 3 too, the latter after --timeout, not never. The hung peer holds every
# connection open and reads nothing; it says it is ready once it listens (a connect between
# its bind and its listen would be refused, another case).
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$dir/dead.sock"
expect 3 "cannot connect to fdtuned at $dir/dead.sock: connection refused" -- status --socket "$dir/dead.sock"
python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(8)
open(sys.argv[2], "w").close()
peers = []
while True:
    peers.append(s.accept())' "$dir/hung.sock" "$dir/hung.ready" &
peer=$!
i=0
while [ ! -e "$dir/hung.ready" ] && [ $i -lt 600 ] && kill -0 "$peer"; do sleep 0.1; i=$((i + 1)); done
expect 3 "fdtuned at $dir/hung.sock did not answer within 1 s" -- status --timeout 1 --socket "$dir/hung.sock"
expect 3 "did not answer within 1 s" -- query 64 64 64 --timeout 1 --json --socket "$dir/hung.sock"
kill "$peer" 2>/dev/null
peer=

# fdtune replay: strategies compared on the recorded H100 spaces, on the CPU. Each problem
# is replayed with itself left out of the warm start; guided must come within 1% of the
# recording's best in at most 3% of the space (median over seeds) on every problem, and in
# at most 6% for 18 of 20 seeds (the worst problem's 90th percentile).
recorded=bench/results/h100/spaces/h100_double_r1.csv.gz
expect 0 '^replay problems=8 seeds=20 strategy=guided ' -- replay "$recorded"
worst=$(sed -n 's/.* worst_median_pct_to_1pct=\([0-9.]*\).*/\1/p' "$out")
p90=$(sed -n 's/.* p90_pct_to_1pct=\([0-9.]*\).*/\1/p' "$out")
if awk -v w="${worst:-100}" -v p="${p90:-100}" 'BEGIN { exit !(w <= 3 && p <= 6) }'; then
    passed=$((passed + 1))
    echo "ok - replay: guided's worst median ${worst}% and worst p90 ${p90}% of the space"
else
    failed=$((failed + 1))
    echo "FAIL - replay: guided's worst median ${worst:-?}%, worst p90 ${p90:-?}% of the space"
fi
expect 0 'strategy=random median_pct_to_1pct' -- replay "$recorded" --strategy random --seeds 3
expect 0 '1024x1024x64 .* miss' -- replay "$recorded" --strategy exhaustive --seeds 1 --budget 10
expect 0 '^stopped: evaluations mean [0-9.]+ max [0-9]+; .* worst (0\.99|1\.0000)' -- replay "$recorded" --seeds 2 --patience 48
# --without-nearest: two problems, each the other's nearest; held back, neither has a warm
# start left, so the model has nothing to answer with (instant 0).
zcat bench/results/h100/spaces/space2052/h100_double_r1.csv.gz |
    awk -F, 'NR == 1 || $8 == 64 || $8 == 256' >"$dir/pair.csv"
expect 0 'instant_worst=1\.0000' -- replay "$dir/pair.csv" --seeds 1
expect 0 'instant_worst=0\.0000' -- replay "$dir/pair.csv" --seeds 1 --without-nearest 1
expect 2 '--without-nearest must be a whole number' -- replay "$dir/pair.csv" --without-nearest -1
expect 2 "unknown strategy 'annealing'" -- replay "$recorded" --strategy annealing
expect 2 'name at least one recorded file' -- replay
expect 2 '--seeds must be a whole number' -- replay "$recorded" --seeds 0
expect 1 "$dir/none.csv: No such file" -- replay "$dir/none.csv"
printf 'nx,ny,nz\n1,2,3\n' >"$dir/notexport.csv"
expect 1 'not an export of results .* no column fingerprint' -- replay "$dir/notexport.csv"
expect 2 "--strategy must be guided, random or exhaustive, got 'best'" -- tune 64 64 64 --strategy best
expect 2 '--budget-s must be a number of seconds' -- tune 64 64 64 --budget-s -3
expect 2 '--patience must be a whole number' -- batch --sweep 64 64 64 --patience x

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
