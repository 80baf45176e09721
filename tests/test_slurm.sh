#!/bin/sh
# test_slurm.sh - fdtune-slurm (issue 33, item 2) on a real one-node Slurm cluster of the
# test's own (tests/slurm_cluster.sh: slurmctld and slurmd as its children, as the user who
# runs it), every fdtuned on the cpu backend. First what needs no cluster: bad usage, a
# missing or bad shapes file, no sbatch, an output directory used before, and --dry-run's
# job scripts. Then an array of 3 tasks over 6 shapes and its merge job: task 1 is held
# (its fdtune client stopped) while it tunes its second shape, after its first was
# exported, and killed with scancel; its trap stops its fdtuned and removes its scratch;
# the merge job fails naming the shape left; `fdtune-slurm resubmit` submits task 1 alone
# and a new merge job, and is refused while they are queued; the resubmitted task skips
# the shape exported before and tunes the other alone (its fdtuned's jobs), and no shape's
# results are in two exports. Last what needs `fdtune import`: the merge job's
# merged.json, imported into a fourth fdtuned the test runs (--import-to), which then
# answers each of the 6 shapes `exact`. The cluster is stopped and nothing is left
# running, on failure too.
# Usage: BUILD=build sh tests/test_slurm.sh   (as root, or as any user: the cluster is its)
set -u
BUILD=${BUILD:-build}
. "$(dirname "$0")/tap.sh"
. "$(dirname "$0")/slurm_cluster.sh"
require python3
FDTUNED=$BUILD/fdtuned
FDTUNE=$BUILD/fdtune
TOOL=$BUILD/fdtune-slurm
export OMP_NUM_THREADS=1 # as tap.sh's daemon_test: see there
start_s=$(date +%s)
# A short path: the cluster's, the tasks' and the fourth fdtuned's sockets live under it.
dir=$(mktemp -d /tmp/fdsl-XXXXXX)
scratch=$dir
passed=0
failed=0
pid=""

cleanup() {
    cluster_stop
    [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
    rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# Six shapes of the size tests/test_watch.sh tunes (each side at least 16): task 0 takes
# shapes 0 and 3, task 1 shapes 1 and 4, task 2 shapes 2 and 5. Six variants a shape, each
# sample at least 100 ms: a shape takes seconds on any host, never less than the few the
# samples add up to, so the test holds task 1 in its second shape whatever the host's speed.
cat >"$dir/shapes" <<EOF
# the test's six shapes
16 16 16
20 16 16
24 20 16
16 24 20 # task 1's second
20 20 20
28 20 16
EOF
shape_list="16x16x16 20x16x16 24x20x16 16x24x20 20x20x20 28x20x16"
cat >"$dir/conf" <<EOF
[search]
budget = 6
[tuning]
samples = 3
min_sample_ms = 100
leaders = 2
leader_samples = 3
max_spread = 0
EOF

# --- 1. what needs no cluster -------------------------------------------------------------
expect_exit "no arguments: exit 2, asks for SHAPES and OUTDIR" 2 "expected SHAPES and OUTDIR" \
    "$TOOL"
expect_exit "--help: exit 0, names resubmit and every option" 0 "--import-to SOCKET" "$TOOL" --help
expect_exit "--version" 0 "fdtune-slurm " "$TOOL" --version
expect_exit "a missing shapes file: exit 2, named" 2 \
    "cannot read the shapes file '$dir/nope': no such file" \
    "$TOOL" --tasks 3 "$dir/nope" "$dir/o1"
printf '16 16 16\n20 16\n' >"$dir/bad"
expect_exit "a shapes file with a bad line: exit 2, fdtune batch names the line" 2 \
    "$dir/bad:2: expected NX NY NZ, found 2 fields" "$TOOL" --tasks 3 "$dir/bad" "$dir/o1"
printf '4 4 4\n' >"$dir/small"
expect_exit "a shape too small for --radius 4: exit 2, named" 2 "each side must be 9 to 65536" \
    "$TOOL" --tasks 1 --radius 4 "$dir/small" "$dir/o1"
expect_exit "--precision half: exit 2, fdtune's message" 2 "--precision must be float or double" \
    "$TOOL" --tasks 3 --precision half "$dir/shapes" "$dir/o1"
expect_exit "an unknown option: exit 2, named" 2 "unknown option '--frobnicate'" \
    "$TOOL" --tasks 3 --frobnicate "$dir/shapes" "$dir/o1"
expect_exit "no --tasks: exit 2, says so" 2 "--tasks N is missing" "$TOOL" "$dir/shapes" "$dir/o1"
expect_exit "--tasks 0: exit 2" 2 "--tasks must be at least 1, not '0'" \
    "$TOOL" --tasks 0 "$dir/shapes" "$dir/o1"
expect_exit "--backend gpu: exit 2" 2 "--backend must be auto, hip, cuda or cpu, not 'gpu'" \
    "$TOOL" --tasks 3 --backend gpu "$dir/shapes" "$dir/o1"
expect_exit "--sbatch-arg that is not an option: exit 2" 2 "is not an sbatch option" \
    "$TOOL" --tasks 3 --sbatch-arg qos=long "$dir/shapes" "$dir/o1"
expect_exit "--sbatch-arg --array=...: exit 2, the array is fdtune-slurm's" 2 \
    "the array is fdtune-slurm's own" \
    "$TOOL" --tasks 3 --sbatch-arg=--array=0-9 "$dir/shapes" "$dir/o1"
expect_exit "--bindir that is not a directory: exit 2" 2 "--bindir $dir/nope is not a directory" \
    "$TOOL" --tasks 3 --bindir "$dir/nope" "$dir/shapes" "$dir/o1"
expect_exit "resubmit of a directory that holds no submission: exit 2" 2 "holds no task.sbatch" \
    "$TOOL" resubmit "$dir"
if [ ! -e "$dir/o1" ]; then
    ok "nothing was written by the refused commands"
else
    ls -R "$dir/o1" >"$dir/out" 2>&1
    not_ok "nothing was written by the refused commands" "$dir/out"
fi

# A PATH without Slurm's client: every command of /usr/bin but slurm-client's.
mkdir "$dir/nobin"
for f in /usr/bin/*; do
    case ${f##*/} in
    sacct | sacctmgr | salloc | sattach | sbatch | sbcast | scancel | scontrol | sdiag | sinfo | \
        sprio | squeue | sreport | srun | sshare | sstat | strigger) ;;
    *) ln -s "$f" "$dir/nobin/" ;;
    esac
done
no_slurm() (
    PATH=$dir/nobin
    "$@"
)
expect_exit "no sbatch on PATH: exit 1, says where to run" 1 "sbatch is not on PATH" \
    no_slurm "$TOOL" --tasks 3 "$dir/shapes" "$dir/o1"

# --dry-run, with no Slurm at all: the job scripts, every option in its #SBATCH line.
{ echo "32 32 32"; cat "$dir/shapes"; echo "20 20 20 # again"; } >"$dir/shapes7"
expect_exit "--dry-run with no sbatch on PATH: exit 0, prints the sbatch commands" 0 \
    "sbatch --parsable --dependency=afterany:<array job id> $dir/dry/merge.sbatch" \
    no_slurm "$TOOL" --tasks 3 --dry-run --partition gpu --account proj1 --time 1:00:00 \
    --gpus-per-task 1 --constraint h100 --sbatch-arg=--qos=long \
    "--sbatch-arg=--comment=a b" --merge-partition cpu --precision double,float --budget 6 \
    "$dir/shapes7" "$dir/dry"
cp "$dir/out" "$dir/dry.out"
bad=""
for line in "--partition=gpu" "--account=proj1" "--time=1:00:00" "--gpus-per-task=1" \
    "--constraint=h100" "--qos=long" '"--comment=a b"' "--ntasks=1" "--job-name=fdtune" \
    "--output=$dir/dry/logs/task-%a.%A.out"; do
    grep -qxF "#SBATCH $line" "$dir/dry/task.sbatch" || bad="$bad task.sbatch:$line"
done
for line in "--partition=cpu" "--account=proj1" "--qos=long" "--job-name=fdtune-merge"; do
    grep -qxF "#SBATCH $line" "$dir/dry/merge.sbatch" || bad="$bad merge.sbatch:$line"
done
grep -q "gpus-per-task" "$dir/dry/merge.sbatch" && bad="$bad merge.sbatch:gpus-per-task"
grep -qF "sbatch --parsable --array=0-2 $dir/dry/task.sbatch" "$dir/dry.out" ||
    bad="$bad (the array's command)"
sh -n "$dir/dry/task.sbatch" 2>>"$dir/dry.out" || bad="$bad (task.sbatch: sh -n)"
sh -n "$dir/dry/merge.sbatch" 2>>"$dir/dry.out" || bad="$bad (merge.sbatch: sh -n)"
# 7 shapes (the repeated one kept once) at 2 precisions: 14 problems, the smallest first.
[ "$(wc -l <"$dir/dry/shapes.txt")" -eq 14 ] || bad="$bad (shapes.txt: not 14 lines)"
[ "$(head -1 "$dir/dry/shapes.txt")" = "16 16 16 double -" ] &&
    [ "$(tail -1 "$dir/dry/shapes.txt")" = "32 32 32 float -" ] ||
    bad="$bad (shapes.txt: not the smallest first)"
grep -q "1 repeated shape(s) kept once" "$dir/dry.out" || bad="$bad (the repeat not said)"
[ -e "$dir/dry/jobs" ] && bad="$bad (a jobs file: something was submitted)"
if [ -z "$bad" ]; then
    ok "--dry-run: #SBATCH lines for each option (the merge job's without GPUs); 14 problems,\
 the smallest first"
else
    echo "wrong:$bad" >>"$dir/dry.out"
    not_ok "--dry-run: #SBATCH lines for each option" "$dir/dry.out"
fi
expect_exit "a second submission into the same OUTDIR: exit 2, points to resubmit" 2 \
    "holds a submission already" \
    no_slurm "$TOOL" --tasks 3 --dry-run "$dir/shapes" "$dir/dry"
expect_exit "--resubmit OUTDIR --dry-run after a dry run: the whole array, and the merge job" 0 \
    "sbatch --parsable --array=0,1,2 $dir/dry/task.sbatch" \
    no_slurm "$TOOL" --resubmit "$dir/dry" --dry-run
expect_exit "--tasks 20 over 6 shapes: 6 tasks" 0 "6 shapes: 6 tasks, not 20" \
    no_slurm "$TOOL" --tasks 20 --dry-run "$dir/shapes" "$dir/dry20"

# --- 2. the cluster, and the fourth fdtuned ---------------------------------------------
if cluster_start "$dir/c"; then
    ok "a one-node Slurm cluster starts ($(sinfo -h -N -o '%N %c CPUs %t'))"
else
    echo "$cluster_why" >"$dir/out"
    tail -5 "$dir/c/ctld.log" "$dir/c/slurmd.log" >>"$dir/out" 2>&1
    not_ok "a one-node Slurm cluster starts: $cluster_why" "$dir/out"
    echo "# $passed passed, $failed failed"
    exit 1
fi
# The jobs inherit the environment (sbatch --export=ALL): their scratch goes under $TMPDIR.
export TMPDIR="$dir/t"
mkdir "$TMPDIR"
main=$dir/main.sock
"$FDTUNED" --socket "$main" --db "$dir/main.db" --backend cpu --config "$dir/conf" \
    2>"$dir/main.log" &
pid=$!
answering "$pid" "the fourth fdtuned starts" "$dir/main.log" "$FDTUNE" --socket "$main" status ||
    exit 1

# slurm_state JOB: the job's (or array task's, JOB_TASK) state, as scontrol shows it.
slurm_state() {
    scontrol show job "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' | head -1
}

# slurm_ended JOB...: every one of them has ended.
slurm_ended() {
    for j in "$@"; do
        case $(slurm_state "$j") in
        COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | PREEMPTED) ;;
        *) return 1 ;;
        esac
    done
}

# job_ids FILE: "ARRAY MERGE", the ids fdtune-slurm printed.
job_ids() {
    printf '%s %s\n' "$(sed -n 's/^array job \([0-9]*\):.*/\1/p' "$1")" \
        "$(sed -n 's/^merge job \([0-9]*\):.*/\1/p' "$1")"
}

# shapes_in FILE: the shapes FILE (an export) has rows of, sorted, one a line.
shapes_in() {
    sed -n 's/.*"nx":\([0-9]*\),"ny":\([0-9]*\),"nz":\([0-9]*\),.*/\1x\2x\3/p' "$1" | sort -u
}

# --- 3. the array, with task 1 killed midway ---------------------------------------------
out=$dir/out.d
expect_exit "a partition Slurm does not have: exit 1, sbatch's error" 1 "invalid partition" \
    "$TOOL" --tasks 3 --partition nosuch "$dir/shapes" "$out"
if [ ! -e "$out" ] && [ -z "$(squeue -h -o %i)" ]; then
    ok "nothing was submitted, and the OUTDIR it made is gone"
else
    ls -R "$out" >"$dir/out" 2>&1
    not_ok "nothing was submitted, and the OUTDIR it made is gone" "$dir/out"
fi
expect_exit "fdtune-slurm submits an array of 3 tasks over 6 shapes and a merge job" 0 \
    "merge job " "$TOOL" --tasks 3 --backend cpu --config "$dir/conf" --time 10 \
    --import-to "$main" --sbatch-arg=--comment=fdtune-slurm-test "$dir/shapes" "$out"
cp "$dir/out" "$dir/submit.out"
read -r array merge <<EOF
$(job_ids "$dir/submit.out")
EOF
if [ -n "$array" ] && [ -n "$merge" ] && [ "$(slurm_state "$merge")" = PENDING ]; then
    ok "it prints the array job's id ($array) and the merge job's ($merge, pending on it)"
else
    not_ok "it prints the array job's id and the merge job's" "$dir/submit.out"
fi

# Task 1 exports shape 1, then tunes shape 4: its fdtune client is stopped there (so the
# task cannot export shape 4 however fast the host), and the task cancelled.
log1=$out/logs/task-1.$array.out
client=""
find_client() { # the pid of task 1's fdtune tune 20 20 20 --wait
    client=$(ps -eo pid= -o args= |
        awk -v s="$TMPDIR/fdtune-slurm." '/fdtune --socket/ && index($0, s) &&
            / tune 20 20 20 --wait/ { print $1 }' | head -1)
    [ -n "$client" ]
}
if wait_until 240 grep -q "shape 4 (20x20x20): tuning" "$log1" &&
    wait_until 60 find_client && kill -STOP "$client" && [ -e "$out/results/shape-1.done" ] &&
    [ ! -e "$out/results/shape-4.done" ]; then
    ok "task 1 exported shape 1 and is held tuning shape 4 (its client $client stopped)"
else
    { ls -l "$out/results"; ps -eo pid,args | grep fdtune; } >>"$log1" 2>&1
    not_ok "task 1 exported shape 1 and is held tuning shape 4" "$log1"
fi
check "scancel ${array}_1" scancel "${array}_1"
if wait_until 120 slurm_ended "${array}_0" "${array}_1" "${array}_2" "$merge"; then
    ok "the array and its merge job end"
else
    squeue >"$dir/out" 2>&1
    not_ok "the array and its merge job end" "$dir/out"
fi
states="$(slurm_state "${array}_0") $(slurm_state "${array}_1") $(slurm_state "${array}_2")"
if [ "$states" = "COMPLETED CANCELLED COMPLETED" ]; then
    ok "tasks 0 and 2 completed, task 1 was cancelled"
else
    echo "states: $states" >"$dir/out"
    not_ok "tasks 0 and 2 completed, task 1 was cancelled" "$dir/out"
fi
# The trap: task 1 stopped its fdtuned and removed its scratch; no fdtuned of a task is left.
ps -eo pid= -o args= | grep "fdtuned --socket $TMPDIR/" | grep -v grep >"$dir/left"
if grep -q "stopped by SIGTERM" "$log1" && grep -q "fdtuned [0-9]* stopped" "$log1" &&
    [ -z "$(ls -A "$TMPDIR")" ] && [ ! -s "$dir/left" ]; then
    ok "task 1's trap stopped its fdtuned and removed its scratch; no task's fdtuned is left"
else
    { cat "$dir/left"; ls -la "$TMPDIR"; } >>"$log1" 2>&1
    not_ok "task 1's trap stopped its fdtuned and removed its scratch" "$log1"
fi
done_shapes=""
for k in 0 1 2 3 4 5; do [ -e "$out/results/shape-$k.done" ] && done_shapes="$done_shapes $k"; done
if [ "$done_shapes" = " 0 1 2 3 5" ]; then
    ok "shapes 0 1 2 3 5 are exported, shape 4 is not"
else
    ls -l "$out/results" >"$dir/out" 2>&1
    not_ok "shapes 0 1 2 3 5 are exported, shape 4 is not (exported:$done_shapes)" "$dir/out"
fi
mlog=$out/logs/merge.$merge.out
if [ "$(slurm_state "$merge")" = FAILED ] &&
    grep -q "no export for 1 of the 6 shapes: shape 4 (20x20x20) of task 1" "$mlog" &&
    grep -qF "fdtune-slurm resubmit $out" "$mlog"; then
    ok "the merge job fails, naming shape 4 of task 1 and the resubmit command"
else
    not_ok "the merge job fails, naming shape 4 of task 1 ($(slurm_state "$merge"))" "$mlog"
fi

# --- 4. fdtune-slurm resubmit ------------------------------------------------------------
expect_exit "fdtune-slurm resubmit: task 1 alone, and a new merge job" 0 \
    "shapes with no export: 4; their tasks: 1" "$TOOL" resubmit "$out"
cp "$dir/out" "$dir/resubmit.out"
read -r array2 merge2 <<EOF
$(job_ids "$dir/resubmit.out")
EOF
expect_exit "resubmit again while they are queued: exit 1, names them" 1 \
    "are still queued or running: ${array2}_" "$TOOL" resubmit "$out"
if [ -n "$array2" ] && [ -n "$merge2" ] &&
    wait_until 240 slurm_ended "${array2}_1" "$merge2"; then
    ok "the resubmitted task ($array2) and merge job ($merge2) end"
else
    squeue >>"$dir/resubmit.out" 2>&1
    not_ok "the resubmitted task and merge job end" "$dir/resubmit.out"
fi
log2=$out/logs/task-1.$array2.out
tuned=$(sed -n 's/^  [0-9]*,done,\([0-9x]*\),.*/\1/p' "$log2" | tr '\n' ' ')
if [ "$(slurm_state "${array2}_1")" = COMPLETED ] &&
    grep -q "shape 1 (20x16x16): exported before (task-1\.[0-9]*\.json): skipped" "$log2" &&
    grep -q "shape 4 (20x20x20): exported to results/" "$log2" &&
    ! grep -q "shape 1 (20x16x16): tuning" "$log2" && [ "$tuned" = "20x20x20 " ]; then
    ok "the resubmitted task 1 skips shape 1 and tunes shape 4 alone (its fdtuned's jobs: $tuned)"
else
    not_ok "the resubmitted task 1 skips shape 1 and tunes shape 4 alone (jobs: $tuned)" "$log2"
fi
# Nothing measured twice: each shape's rows are in exactly one task's export.
: >"$dir/twice"
for s in $shape_list; do
    n=0
    for f in "$out"/results/task-*.json; do
        shapes_in "$f" | grep -qx "$s" && n=$((n + 1))
    done
    [ $n -eq 1 ] || echo "$s: in $n exports" >>"$dir/twice"
done
missing=""
for k in 0 1 2 3 4 5; do [ -e "$out/results/shape-$k.done" ] || missing="$missing $k"; done
if [ ! -s "$dir/twice" ] && [ -z "$missing" ]; then
    ok "every shape is exported, each in exactly one task's export: none measured twice"
else
    echo "not exported:$missing" >>"$dir/twice"
    not_ok "every shape is exported, each in exactly one task's export" "$dir/twice"
fi

# --- 5. the merge and the import (fdtune import) ---------------------------------------
echo "# the merge and the import: fdtune import (the merge job imports every task's export)"
mlog2=$out/logs/merge.$merge2.out
if [ "$(slurm_state "$merge2")" = COMPLETED ]; then
    ok "the new merge job completes"
else
    not_ok "the new merge job completes ($(slurm_state "$merge2"))" "$mlog2"
fi
if [ -f "$out/merged.json" ] &&
    [ "$(shapes_in "$out/merged.json" | tr '\n' ' ')" = "16x16x16 16x24x20 20x16x16 20x20x20 \
24x20x16 28x20x16 " ]; then
    ok "merged.json holds the results of the 6 shapes"
else
    not_ok "merged.json holds the results of the 6 shapes" "$mlog2"
fi
if grep -qF "imported into the fdtuned at $main" "$mlog2"; then
    ok "the merge job imported merged.json into the fourth fdtuned (--import-to)"
else
    not_ok "the merge job imported merged.json into the fourth fdtuned (--import-to)" "$mlog2"
fi
: >"$dir/queries"
for s in $shape_list; do
    # shellcheck disable=SC2046 # the shape's three sides
    "$FDTUNE" --socket "$main" query $(echo "$s" | tr x ' ') --json >"$dir/answer" 2>&1
    grep -q '"match":"exact"' "$dir/answer" || { echo "$s:"; cat "$dir/answer"; } >>"$dir/queries"
done
if [ ! -s "$dir/queries" ]; then
    ok "the fourth fdtuned answers each of the 6 shapes exact"
else
    not_ok "the fourth fdtuned answers each of the 6 shapes exact" "$dir/queries"
fi
expect_exit "resubmit once all is merged: nothing to resubmit" 0 "nothing to resubmit" \
    "$TOOL" resubmit "$out"

# --backend auto (the default) on a node with no GPU: the task fails, saying so.
echo "16 16 16" >"$dir/one"
expect_exit "a submission with the default backend" 0 "merge job " \
    "$TOOL" --tasks 1 --config "$dir/conf" "$dir/one" "$dir/auto"
read -r array3 merge3 <<EOF
$(job_ids "$dir/out")
EOF
log3=$dir/auto/logs/task-0.$array3.out
if wait_until 240 slurm_ended "${array3}_0" "$merge3" &&
    [ "$(slurm_state "${array3}_0")" = FAILED ] &&
    grep -q "backend auto found no GPU on .*--gpus-per-task 1), or tune on the host's cores" \
        "$log3" && grep -q "fdtuned [0-9]* stopped" "$log3"; then
    ok "--backend auto on a node with no GPU: the task fails, naming what to do; fdtuned stopped"
else
    not_ok "--backend auto on a node with no GPU: the task fails, saying so" "$log3"
fi

# --- 6. the end ---------------------------------------------------------------------------
ctld=$cluster_ctld slurmd_pid=$cluster_slurmd
cluster_stop
if ! kill -0 "$ctld" 2>/dev/null && ! kill -0 "$slurmd_pid" 2>/dev/null &&
    [ -z "$(cluster_steps)" ]; then
    ok "scontrol shutdown stops the cluster; no slurmstepd of it is left"
else
    ps -eo pid,stat,args | grep slurm >"$dir/out" 2>&1
    not_ok "scontrol shutdown stops the cluster" "$dir/out"
fi
kill -TERM "$pid"
wait "$pid"
rc=$?
pid=""
if [ $rc -eq 0 ]; then
    ok "the fourth fdtuned stops"
else
    not_ok "the fourth fdtuned stops (exit $rc)" "$dir/main.log"
fi

echo "# $passed passed, $failed failed ($(($(date +%s) - start_s)) s)"
[ "$failed" -eq 0 ]
