#!/bin/sh
# test_layers.sh - the parts keep their layers (docs/architecture.md): no source file sits
# directly in tuner/, a tuner/ header is included by its folder's name ("engine/wire.h"), a
# header named *_int.h is seen only in its own folder, and no file includes a header of a
# part above its own, so that no circle can form between the parts. A part may include:
#
#   common/          common: the vocabulary and helpers every part shares
#   tuner/backends/  backends, common
#   tuner/engine/    engine, backends, common
#   tuner/search/    search, engine, backends, common
#   db/              db, common (problems, devices and result rows are common's words)
#   config/          config, common
#   tuner/daemon/    daemon, search, engine, backends, db, config, common
#   cli/             cli, search, engine, backends, db, config, common: fdtune reaches the
#                    daemon only through its socket
#
# One include is let through: tuner/engine/worker.c, fdtune-worker's main, opens the store
# read-only for its code cache. Nothing includes a main, so no circle closes through it.
# Usage: sh tests/test_layers.sh, from the repository root.
set -u
failed=0

fail() {
    failed=$((failed + 1))
    echo "FAIL - $1"
}

# The parts a part may include, as above.
allowed() {
    case $1 in
    common) echo "common" ;;
    backends) echo "backends common" ;;
    engine) echo "engine backends common" ;;
    search) echo "search engine backends common" ;;
    db) echo "db common" ;;
    config) echo "config common" ;;
    daemon) echo "daemon search engine backends db config common" ;;
    cli) echo "cli search engine backends db config common" ;;
    esac
}

part_of() {
    case $1 in
    tuner/*/*) p=${1#tuner/}; echo "${p%%/*}" ;;
    common/*) echo common ;;
    db/*) echo db ;;
    config/*) echo config ;;
    cli/*) echo cli ;;
    *) echo none ;;
    esac
}

# Where the compiler finds "name" from file: the file's folder, then the Makefile's -I list.
resolve() {
    for dir in "$(dirname "$1")" tuner cli cli/include db config common; do
        if [ -f "$dir/$2" ]; then
            echo "$dir/$2"
            return
        fi
    done
}

if [ ! -d tuner ]; then
    echo "FAIL - run from the repository root"
    exit 1
fi

loose=$(find tuner -maxdepth 1 -type f -name '*.[ch]')
for f in $loose; do
    fail "$f sits directly in tuner/; it belongs in the folder of its part"
done

files=$(find common tuner db config cli -type f -name '*.[ch]' | sort)
for f in $files; do
    part=$(part_of "$f")
    [ "$part" = none ] && continue # in tuner/ itself: reported above
    may=$(allowed "$part")
    if [ -z "$may" ]; then
        fail "$f: $part is not a part this test knows; add it to its table and to docs/architecture.md"
        continue
    fi
    for name in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
        target=$(resolve "$f" "$name")
        if [ -z "$target" ]; then
            fail "$f: #include \"$name\" is not found where the Makefile looks"
            continue
        fi
        target=${target#./}
        to=$(part_of "$target")
        case $target in
        tuner/*) [ "tuner/$name" = "$target" ] ||
            fail "$f: #include \"$name\" names ${target#tuner/} without its folder" ;;
        esac
        case ${target##*/} in
        *_int.h) [ "$(dirname "$target")" = "$(dirname "$f")" ] ||
            fail "$f: $target is private to $(dirname "$target")/" ;;
        esac
        [ "$f:$target" = "tuner/engine/worker.c:db/store.h" ] && continue
        case " $may " in
        *" $to "*) ;;
        *) fail "$f: #include \"$name\": $part may not include $to ($target)" ;;
        esac
    done
done

echo "$(echo "$files" | wc -w) files checked, $failed broken rule(s)"
[ "$failed" -eq 0 ]
