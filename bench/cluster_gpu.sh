#!/bin/bash
# bench/cluster_gpu.sh - issue 33 on a lent GPU host, over a STATIC=1 build (carry
# build-static/): two fdtuned with private stores, one per GPU where the host has two
# (CUDA_VISIBLE_DEVICES), else one after the other, each tune 3 of 6 shapes tuned nowhere
# before and export their results; a fourth, merging, imports both exports and exports the
# merged file; a third, with a fresh store, imports the merged file and is asked all 6
# shapes: each answered exact, with the figures its tuning daemon answered. Everything goes
# to $OUT/cluster_transcript.txt, each command with its output.
# Usage: OUT=DIR bash bench/cluster_gpu.sh
set -u
OUT=${OUT:-bench/out}
mkdir -p "$OUT"
. bench/daemon.sh
T=$OUT/cluster_transcript.txt
dir=$(mktemp -d /tmp/fdt-cluster-XXXXXX)
pids=""
trap 'kill $pids 2>/dev/null; rm -rf "$dir"' EXIT
SHAPES=("320 288 256" "400 200 160" "256 256 384" "288 320 192" "352 240 200" "448 224 176")
gpus=$(nvidia-smi -L | wc -l)
# node N GPU SHAPE...: daemon N on GPU (a private socket and store), tunes the shapes one
# after the other, exports its results to $dir/N.json.
node() {
    local n=$1 gpu=$2
    shift 2
    (
        export FDTUNE_SOCKET=$dir/$n.sock CUDA_VISIBLE_DEVICES=$gpu
        daemon_start "$dir/$n.log" --db "$dir/$n.db"
        for s in "$@"; do
            run "node$n" build-static/fdtune tune $s --wait
            run "node$n" build-static/fdtune query $s --json
        done
        run "node$n" build-static/fdtune export --what results -o "$dir/$n.json"
        build-static/fdtune shutdown >/dev/null
        wait "$DAEMON_PID"
    )
}
{ echo "# $(date -u), $(nvidia-smi -L | head -2 | tr '\n' ' ')"; echo "# $gpus GPU(s)"; } >"$T"
if [ "$gpus" -ge 2 ]; then
    node 1 0 "${SHAPES[@]:0:3}" &
    p1=$!
    node 2 1 "${SHAPES[@]:3:3}" &
    p2=$!
    wait "$p1" "$p2"
else
    node 1 0 "${SHAPES[@]:0:3}"
    node 2 0 "${SHAPES[@]:3:3}"
fi
cat "$OUT/node1.txt" "$OUT/node2.txt" >>"$T"
# The merge: any backend serves (it tunes nothing); the cpu one needs no GPU.
export FDTUNE_SOCKET=$dir/merge.sock
BACKEND=cpu daemon_start "$dir/merge.log" --db "$dir/merge.db"
pids="$pids $DAEMON_PID"
run merge build-static/fdtune import "$dir/1.json" "$dir/2.json"
run merge build-static/fdtune export --what results -o "$dir/merged.json"
cat "$OUT/merge.txt" >>"$T"
export FDTUNE_SOCKET=$dir/third.sock CUDA_VISIBLE_DEVICES=0
daemon_start "$dir/third.log" --db "$dir/third.db"
pids="$pids $DAEMON_PID"
run third build-static/fdtune import "$dir/merged.json"
for s in "${SHAPES[@]}"; do
    run third build-static/fdtune query $s --json
done
cat "$OUT/third.txt" >>"$T"
# Each answer of the third against its tuning node's: exact, the same variant and GB/s.
python3 - "$OUT/node1.txt" "$OUT/node2.txt" "$OUT/third.txt" <<'PYEOF' | tee -a "$T"
import json, sys
def answers(path):
    out = []
    for line in open(path):
        if line.startswith('{"v":1,"match"'):
            a = json.loads(line)
            out.append(((a["from"]["nx"], a["from"]["ny"], a["from"]["nz"]), a))
    return out
tuned = dict(answers(sys.argv[1]) + answers(sys.argv[2]))
third = answers(sys.argv[3])
same = 0
for shape, a in third:
    t = tuned[shape]
    ok = (a["match"] == "exact" and a["config"]["variant"] == t["config"]["variant"]
          and a["gbps"] == t["gbps"] and a["measured"]["imported"] > 0)
    same += ok
    print("%-14s third: %s %s %.1f GB/s (imported from %s job %d) | tuning node: %s %.1f GB/s: %s"
          % ("x".join(map(str, shape)), a["match"], a["config"]["variant"], a["gbps"],
             a["measured"]["host"], a["measured"]["job"], t["config"]["variant"], t["gbps"],
             "same" if ok else "DIFFERENT"))
print("%d of %d shapes answered exact with the imported figures" % (same, len(third)))
PYEOF
