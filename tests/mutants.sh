#!/bin/sh
# mutants.sh - the tests' own test: makes, one at a time, the bugs that issue 28 found the
# tests could not see, and checks that the test meant to catch each one fails. Run it as
# root and as any other user (the rights tests then act inside a user namespace).
#
# It works on a copy of the committed tree (git archive HEAD) in a temporary directory,
# built once; each mutant changes one file, the build redoes what depends on it, the test
# runs, and the file is put back. A mutation that no longer applies (the code moved) fails
# the run: it must be brought up to date, never skipped.
# Usage: sh tests/mutants.sh [NAME...]   (default: every mutant. On 2 cores each takes a few
# minutes but resume_measures_again, under which test_daemon.sh waits out its bounds: half
# an hour or more)
set -u
repo=$(cd "$(dirname "$0")/.." && pwd)
dir=$(mktemp -d /tmp/fdt-mutants-XXXXXX)
trap 'rm -rf "$dir"' EXIT
: >"$dir/tally"

# The mutants: name, file, the line as it is (a fixed string), the line as the bug makes it,
# and the test that must fail.
mutants() {
    cat <<'EOF'
cache_takes_others_files|cli/module_cache.c|    else if (st->st_uid != geteuid())|    else if (0 && st->st_uid != geteuid())|build/tests/test_kernel
tolerance_loosened|tuner/engine/runner.c|static const double float_tolerance = 1e-5, double_tolerance = 1e-12;|static const double float_tolerance = 1e-5, double_tolerance = 1e-5;|build/tests/test_cpu_backend test_tolerances_are_pinned
resume_measures_again|tuner/daemon/job_search.c|    for (size_t i = 0; i < n; i++) {|    for (size_t i = 1; i < n; i++) {|sh tests/test_daemon.sh
rights_check_removed|tuner/daemon/ops.c|        if (ops[i].admin && !fdt_peer_is_admin(c->d, c->peer))|        if (0 && ops[i].admin && !fdt_peer_is_admin(c->d, c->peer))|sh tests/test_security.sh
smem_boundary|kernels_src/smem.hip|        if (p < TX * TY && gi >= 0 && gi < t.nx && gj >= 0 && gj < t.ny)|        if (p < TX * TY && gi >= 0 && gi < t.nx - 1 && gj >= 0 && gj < t.ny)|build/tests/test_cpu_backend test_barrier_families_verify_on_odd_shapes
xytile_boundary|kernels_src/xytile.hip|        in[q] = i < nx && j < ny;|        in[q] = i < nx && j < ny - 1;|build/tests/test_cpu_backend test_barrier_families_verify_on_odd_shapes
EOF
}

# mutate FILE FROM TO: replaces the one line that is FROM; 1 when there is not exactly one.
mutate() {
    python3 - "$dir/tree/$1" "$2" "$3" <<'EOF'
import sys
path, old, new = sys.argv[1:]
lines = open(path).read().split("\n")
at = [i for i, line in enumerate(lines) if line == old]
if len(at) != 1:
    sys.exit(1)
lines[at[0]] = new
open(path, "w").write("\n".join(lines))
EOF
}

build() { make -C "$dir/tree" -j"$(nproc)" all build/tests/test_kernel build/tests/test_cpu_backend >"$dir/build.log" 2>&1; }

mkdir -p "$dir/tree"
# safe.directory: the copy is read, never written, so a tree of another uid will do.
git -c safe.directory="$repo" -C "$repo" archive HEAD | tar -x -C "$dir/tree"
if ! build; then
    tail -n 20 "$dir/build.log"
    echo "FAIL - the unmutated tree does not build"
    exit 1
fi
wanted=" $* "
mutants | while IFS='|' read -r name file from to test; do
    [ $# -eq 0 ] || case $wanted in *" $name "*) ;; *) continue ;; esac
    cp "$dir/tree/$file" "$dir/original"
    if ! mutate "$file" "$from" "$to"; then
        echo "FAIL - $name: the mutation no longer applies to $file (update tests/mutants.sh)"
        echo missed >>"$dir/tally"
        continue
    fi
    if ! build; then
        echo "FAIL - $name: the mutant does not build"
        echo missed >>"$dir/tally"
    # shellcheck disable=SC2086
    elif (cd "$dir/tree" && BUILD=build FDT_BUILD=build FDTUNE_REPORT_DIR=build $test) \
        >"$dir/$name.log" 2>&1; then
        echo "FAIL - $name: $test passed with the bug in $file"
        echo missed >>"$dir/tally"
    else
        echo "ok - $name: caught by $test"
        grep -m 3 -E 'FAIL|ERROR|FAILED' "$dir/$name.log" | sed 's/^/    /'
        echo caught >>"$dir/tally"
    fi
    cp "$dir/original" "$dir/tree/$file"
done
caught=$(grep -c caught "$dir/tally" 2>/dev/null)
missed=$(grep -c missed "$dir/tally" 2>/dev/null)
echo "# $caught caught, $missed missed, as uid $(id -u)"
[ "$missed" -eq 0 ] && [ "$caught" -gt 0 ]
