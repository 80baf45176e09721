# tap.sh - the result lines of the shell tests, sourced by test_daemon.sh and
# test_install.sh: "ok - NAME", "FAIL - NAME" followed by the tail of a log, "skip - NAME",
# and check, which runs a command and keeps its output in $scratch/out. The sourcing script
# sets scratch and starts passed, failed and skipped at 0.

ok() {
    passed=$((passed + 1))
    echo "ok - $1"
}

not_ok() {
    failed=$((failed + 1))
    echo "FAIL - $1"
    [ -n "${2:-}" ] && [ -f "$2" ] && sed 's/^/    /' "$2" | tail -20
    return 0
}

skip() {
    skipped=$((skipped + 1))
    echo "skip - $1"
}

# check NAME COMMAND...: the command succeeds.
check() {
    name=$1
    shift
    if "$@" >"$scratch/out" 2>&1; then ok "$name"; else not_ok "$name" "$scratch/out"; fi
}
