# shellcheck shell=sh
# bench/cpu_daemons.sh - sourced by the cpu-backend benchmarks that run several daemons of
# their own (import_bench.sh, slurm_export.sh): each daemon in the caller's $dir from the
# build $B, and a command's wall seconds. The caller sets B and dir, pids to "", and kills
# $pids at exit.

# start NAME: fdtuned on $dir/NAME.sock with its store $dir/NAME.db, once it answers.
start() {
    "$B/fdtuned" --socket "$dir/$1.sock" --db "$dir/$1.db" --backend cpu 2>"$dir/$1.log" &
    pids="$pids $!"
    i=0
    until "$B/fdtune" --socket "$dir/$1.sock" status >/dev/null 2>&1; do
        i=$((i + 1)); [ $i -gt 600 ] && { echo "fdtuned $1 did not answer" >&2; exit 1; }
        sleep 0.1
    done
}

# seconds COMMAND...: runs it (its output to $dir/last), prints its wall seconds; a command
# that fails ends the benchmark with its output.
seconds() {
    t0=$(date +%s.%N)
    "$@" >"$dir/last" 2>&1 || { cat "$dir/last" >&2; exit 1; }
    t1=$(date +%s.%N)
    echo "$t1 - $t0" | bc
}
