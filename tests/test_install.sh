#!/bin/sh
# test_install.sh - make install as a packager runs it, and a solver built from the
# installed tree alone: make install into a staging root (DESTDIR) puts every file where it
# belongs; libfdtune exports fdtune_* alone and carries its soname; the C and Fortran heat
# solvers, copied out of the installed share/ and built with nothing but pkg-config, run
# without a daemon (fallback), against the installed fdtuned (tuned; the module cache
# reused, a damaged module rebuilt, an unsafe cache dir ignored) and against a hostile
# daemon that names a source and sends other text (fallback); wave.c and wave.f90 run their
# own stencil spec, tuned by the installed fdtuned (and kernel 1 with none); make uninstall
# removes it all and keeps an fdtuned.conf the administrator edited. No GPU needed (cpu backend).
# Usage: BUILD=build SANFLAGS= MAKE=make sh tests/test_install.sh
#        (the sanitizer build: BUILD=build-san SANFLAGS="-fsanitize=..." ...)
# shellcheck disable=SC2086 # $SHAPE, $SANFLAGS and pkg-config's flags are lists of words
set -u
BUILD=${BUILD:-build}
SANFLAGS=${SANFLAGS:-}
MAKE=${MAKE:-make}
CHECKOUT=$(pwd)
CC=${CC:-cc}
FORTRAN=gfortran
SHAPE="24 20 16"
RUN_LIMIT=120 # seconds, for a solver run and a tuning job: a hang fails, it does not stall
tmp=$(mktemp -d /tmp/fdt-install-XXXXXX)
root=$tmp/root
P=/usr/local
R=$root$P
pid=""
fake=""
passed=0
failed=0
start_s=$(date +%s)

cleanup() {
    [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
    [ -n "$fake" ] && kill -9 "$fake" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

scratch=$tmp
. "$(dirname "$0")/tap.sh"
require python3

# make install installs the build under test, named to make on its command line (the
# Makefile sets BUILD itself, so from the environment it would install build/); SAN=1 and
# STATIC=1 bring their flags. The sanitizer build's programs and the solvers built here
# inherit the sanitizer settings of the Makefile's test target (set here too when the test
# is run by hand).
make_san=""
case $BUILD in
build-san) make_san="SAN=1" ;;
build-static) make_san="STATIC=1" ;;
esac
if [ -n "$SANFLAGS" ]; then
    export LSAN_OPTIONS="${LSAN_OPTIONS:-intercept_tls_get_addr=0:suppressions=$CHECKOUT/tests/lsan.supp}"
    export ASAN_OPTIONS="${ASAN_OPTIONS:-use_sigaltstack=0}"
fi

# --- 1. make install ------------------------------------------------------------------
install_tree() { # install_tree LOG
    $MAKE --no-print-directory install BUILD="$BUILD" $make_san DESTDIR="$root" PREFIX=$P >"$1" 2>&1
}
if install_tree "$tmp/install.log"; then
    ok "make install DESTDIR=... PREFIX=$P${make_san:+ $make_san}"
else
    not_ok "make install DESTDIR=... PREFIX=$P${make_san:+ $make_san}" "$tmp/install.log"
    echo "# nothing else can be tested without the installed tree"
    echo "# $passed passed, $failed failed"
    exit 1
fi

missing=""
for f in bin/fdtuned bin/fdtune bin/fdtune-slurm libexec/fdtuned/fdtune-worker lib/libfdtune.a \
    lib/libfdtune.so.2 lib/libfdtune.so lib/pkgconfig/fdtune.pc include/fdtune.h \
    include/fdtune_kernel.h include/fdtune.mod share/fdtuned/kernels/common.h \
    share/fdtuned/examples/heat.c share/fdtuned/examples/heat.f90 \
    share/fdtuned/examples/wave.c share/fdtuned/examples/wave.f90 \
    share/fdtuned/examples/specs/acoustic8.json \
    share/fdtuned/fortran/fdtune.f90 share/fdtuned/fdtuned.conf \
    lib/systemd/system/fdtuned.service; do
    [ -f "$R/$f" ] || missing="$missing $P/$f"
done
for k in "$CHECKOUT"/kernels_src/*.hip; do
    b=$(basename "$k")
    cmp -s "$k" "$R/share/fdtuned/kernels/$b" || missing="$missing $P/share/fdtuned/kernels/$b"
done
[ -f "$root/etc/fdtuned/fdtuned.conf" ] || missing="$missing /etc/fdtuned/fdtuned.conf"
if [ -z "$missing" ]; then
    ok "every file is installed"
else
    not_ok "every file is installed: missing$missing"
fi

# The build installed is this one ($BUILD: the sanitizer build installs its own objects).
bad=""
for f in fdtuned fdtune fdtune-slurm fdtune-worker libfdtune.so.2 libfdtune.a; do
    for g in bin/$f libexec/fdtuned/$f lib/$f; do
        [ -f "$R/$g" ] && { cmp -s "$BUILD/$f" "$R/$g" || bad="$bad $g"; }
    done
done
if [ -z "$bad" ]; then ok "the files installed are $BUILD's"; else not_ok "not $BUILD's:$bad"; fi

bad=""
for f in bin/fdtuned bin/fdtune bin/fdtune-slurm libexec/fdtuned/fdtune-worker; do
    [ -x "$R/$f" ] || bad="$bad $f"
done
if [ -z "$bad" ]; then ok "the programs are executable"; else not_ok "not executable:$bad"; fi

if [ -L "$R/lib/libfdtune.so" ] && [ "$(readlink "$R/lib/libfdtune.so")" = libfdtune.so.2 ]; then
    ok "lib/libfdtune.so is a relative link to libfdtune.so.2"
else
    ls -l "$R/lib/" >"$tmp/out" 2>&1
    not_ok "lib/libfdtune.so is a relative link to libfdtune.so.2" "$tmp/out"
fi

unit=$R/lib/systemd/system/fdtuned.service
if grep -q "^ExecStart=$P/bin/fdtuned --config /etc/fdtuned/fdtuned.conf " "$unit" 2>/dev/null &&
    ! grep -q '@[A-Z]*@' "$unit" && ! grep -q "$tmp" "$unit" &&
    [ -f "$R/lib/sysusers.d/fdtuned.conf" ]; then
    ok "fdtuned.service: ExecStart=$P/bin/fdtuned with /etc's settings; its sysusers.d entry"
else
    not_ok "fdtuned.service: ExecStart=$P/bin/fdtuned with /etc's settings" "$unit"
fi

# The manual: each page renders with no warning, and says what the programs know: fdtune(1)
# every command of `fdtune help`, fdtune-slurm(1) every option of its --help,
# fdtuned.conf(5) every key of the settings file, libfdtune(3) every function of the
# installed headers.
man_dir=$R/share/man
: >"$tmp/man.out"
for page in man1/fdtune.1 man1/fdtune-slurm.1 man8/fdtuned.8 man5/fdtuned.conf.5 \
    man3/libfdtune.3; do
    if ! MANWIDTH=80 man --warnings -l "$man_dir/$page" >"$tmp/page" 2>"$tmp/warn" ||
        [ -s "$tmp/warn" ] || [ ! -s "$tmp/page" ]; then
        { echo "$page:"; cat "$tmp/warn"; } >>"$tmp/man.out"
    fi
done
missing=""
for c in $("$R/bin/fdtune" help | sed -n 's/^  \([a-z][a-z]*\) .*/\1/p'); do
    grep -Eq "^\.B[IR]? \"?$c([ \"]|\$)" "$man_dir/man1/fdtune.1" || missing="$missing fdtune.1:$c"
done
sed 's/\\-/-/g' "$man_dir/man1/fdtune-slurm.1" >"$tmp/slurm.1"
for o in $("$R/bin/fdtune-slurm" --help |
    sed -n 's/^  \(-[a-zA-Z], \)\{0,1\}\(--[a-z-]*\).*/\2/p'); do
    grep -Eq -- "^\.B[IR]? (.* )?\"?$o([ \"]|\$)" "$tmp/slurm.1" ||
        missing="$missing fdtune-slurm.1:$o"
done
grep -q '^\.BI "resubmit ' "$tmp/slurm.1" || missing="$missing fdtune-slurm.1:resubmit"
for k in $(sed -n 's/^\([a-z_]*\) =.*/\1/p' "$CHECKOUT/config/fdtuned.conf"); do
    grep -q "^\\\\fB$k\\\\fR = " "$man_dir/man5/fdtuned.conf.5" || missing="$missing fdtuned.conf.5:$k"
done
for f in $(grep -ho 'fdtune_[a-z_]*(' "$R/include/fdtune.h" "$R/include/fdtune_kernel.h" |
    tr -d '(' | sort -u); do
    grep -q "$f" "$man_dir/man3/libfdtune.3" || missing="$missing libfdtune.3:$f"
done
if [ ! -s "$tmp/man.out" ] && [ -z "$missing" ]; then
    ok "man pages fdtune(1), fdtune-slurm(1), fdtuned(8), fdtuned.conf(5), libfdtune(3)\
 render and name every command, option, key and function"
else
    echo "missing:$missing" >>"$tmp/man.out"
    not_ok "man pages render and name every command, key and function" "$tmp/man.out"
fi

# Bash completion from the installed file: a command's name, then its options.
completion=$R/share/bash-completion/completions/fdtune
got=$(bash -c '. "$1"; COMP_WORDS=("$2" wa); COMP_CWORD=1; _fdtune; echo "${COMPREPLY[*]}";
    COMP_WORDS=("$2" tune 8 8 8 --pat); COMP_CWORD=5; _fdtune; echo "${COMPREPLY[*]}"' \
    sh "$completion" "$R/bin/fdtune" 2>&1)
if [ "$got" = "watch
--patience" ]; then
    ok "bash completion: 'fdtune wa' to watch, 'fdtune tune ... --pat' to --patience"
else
    echo "$got" >"$tmp/out"
    not_ok "bash completion: 'fdtune wa' to watch, 'fdtune tune ... --pat' to --patience" "$tmp/out"
fi

pc=$R/lib/pkgconfig/fdtune.pc
if grep -qx "prefix=$P" "$pc" 2>/dev/null && ! grep -q '@' "$pc" && ! grep -q "$tmp" "$pc" &&
    ! grep -q "$CHECKOUT" "$pc" && ! grep -q "rpath" "$pc"; then
    ok "fdtune.pc names $P, not the staging root or the checkout, and bakes in no run path"
else
    not_ok "fdtune.pc names $P, not the staging root or the checkout, and bakes in no run path" "$pc"
fi

if cmp -s "$CHECKOUT/config/fdtuned.conf" "$root/etc/fdtuned/fdtuned.conf"; then
    ok "/etc/fdtuned/fdtuned.conf is the documented default"
else
    not_ok "/etc/fdtuned/fdtuned.conf is the documented default"
fi

# --- 2. what libfdtune exports ----------------------------------------------------------
so=$R/lib/libfdtune.so.2
nm -D --defined-only "$so" >"$tmp/nm" 2>&1
awk 'NF >= 2 { print $NF }' "$tmp/nm" | grep -v '^fdtune_' >"$tmp/out"
if [ -s "$tmp/nm" ] && [ ! -s "$tmp/out" ] && grep -q ' fdtune_kernel_open$' "$tmp/nm"; then
    ok "libfdtune.so.2 exports fdtune_* only ($(wc -l <"$tmp/nm") symbols)"
else
    not_ok "libfdtune.so.2 exports fdtune_* only; others:" "$tmp/out"
fi
nm -g --defined-only "$R/lib/libfdtune.a" >"$tmp/nm" 2>&1
awk 'NF >= 3 { print $NF }' "$tmp/nm" | grep -v '^fdtune_' >"$tmp/out"
if grep -q ' fdtune_kernel_open$' "$tmp/nm" && [ ! -s "$tmp/out" ]; then
    ok "libfdtune.a defines global fdtune_* only"
else
    not_ok "libfdtune.a defines global fdtune_* only; others:" "$tmp/out"
fi
readelf -d "$so" >"$tmp/out" 2>&1
if grep -q '(SONAME).*\[libfdtune\.so\.2\]' "$tmp/out"; then
    ok "libfdtune.so.2 has SONAME libfdtune.so.2"
else
    not_ok "libfdtune.so.2 has SONAME libfdtune.so.2" "$tmp/out"
fi

# --- 3. the solvers, built from the installed tree with pkg-config alone ----------------
src=$tmp/src
mkdir -p "$src"
cp "$R/share/fdtuned/examples/heat.c" "$R/share/fdtuned/examples/heat.f90" \
    "$R/share/fdtuned/examples/wave.c" "$R/share/fdtuned/examples/wave.f90" "$src/" 2>/dev/null
spec=$R/share/fdtuned/examples/specs/acoustic8.json
# pkg-config finds fdtune.pc in the staging root only (LIBDIR replaces the system's
# fdtune.pc directories; PKG_CONFIG_PATH would be searched first, so it goes); the system's
# directories stay after it for jansson, libelf and msgpack, which fdtune.pc requires.
syspc=$(pkg-config --variable pc_path pkg-config 2>/dev/null)
pkgconf() (
    unset PKG_CONFIG_PATH
    PKG_CONFIG_SYSROOT_DIR="$root" PKG_CONFIG_LIBDIR="$R/lib/pkgconfig${syspc:+:$syspc}" \
        pkg-config "$@"
)
if pkgconf --cflags --libs fdtune >"$tmp/flags" 2>&1; then
    ok "pkg-config --cflags --libs fdtune: $(cat "$tmp/flags")"
else
    not_ok "pkg-config --cflags --libs fdtune" "$tmp/flags"
fi
flags=$(cat "$tmp/flags")
if grep -q -- "-I$R/include" "$tmp/flags" && grep -q -- "-L$R/lib" "$tmp/flags" &&
    ! grep -qF "$CHECKOUT" "$tmp/flags"; then
    ok "the flags point into the staging root, nowhere into the checkout"
else
    not_ok "the flags point into the staging root, nowhere into the checkout ($CHECKOUT)" \
        "$tmp/flags"
fi
(cd "$src" && unset CPATH C_INCLUDE_PATH LIBRARY_PATH &&
    $CC $SANFLAGS heat.c $flags -lm -o heat) >"$tmp/out" 2>&1
if [ -x "$src/heat" ]; then ok "heat.c builds from the installed tree"; else not_ok "heat.c builds from the installed tree" "$tmp/out"; fi
(cd "$src" && unset CPATH C_INCLUDE_PATH LIBRARY_PATH &&
    $CC $SANFLAGS wave.c $flags -lm -o wave) >"$tmp/out" 2>&1
if [ -x "$src/wave" ]; then ok "wave.c builds from the installed tree"; else not_ok "wave.c builds from the installed tree" "$tmp/out"; fi
(cd "$src" && unset CPATH LIBRARY_PATH &&
    $FORTRAN $SANFLAGS heat.f90 $flags -o heat_f) >"$tmp/out" 2>&1
if [ -x "$src/heat_f" ]; then ok "heat.f90 builds from the installed tree"; else not_ok "heat.f90 builds from the installed tree" "$tmp/out"; fi
(cd "$src" && unset CPATH LIBRARY_PATH &&
    $FORTRAN $SANFLAGS -cpp wave.f90 $flags -o wave_f) >"$tmp/out" 2>&1
if [ -x "$src/wave_f" ]; then ok "wave.f90 builds from the installed tree"; else not_ok "wave.f90 builds from the installed tree" "$tmp/out"; fi

export LD_LIBRARY_PATH="$R/lib"
for prog in heat heat_f wave wave_f; do
    [ -x "$src/$prog" ] || continue
    ldd "$src/$prog" >"$tmp/out" 2>&1
    if grep -q "libfdtune\.so\.2 => $R/lib/libfdtune\.so\.2 " "$tmp/out"; then
        ok "ldd $prog: libfdtune.so.2 resolves into the staging root"
    else
        not_ok "ldd $prog: libfdtune.so.2 resolves into the staging root" "$tmp/out"
    fi
done


# heat_ok NAME PROG SOURCE PRECISION [VARIANT] [ARGS...]: PROG exits 0 and its last line
# has that shape, precision, steps and source (and variant), and error <= error_bound.
heat_ok() {
    name=$1 prog=$2 want_source=$3 want_prec=$4 want_variant=${5:-}
    shift 5
    if [ ! -x "$src/$prog" ]; then
        not_ok "$name: $prog was not built"
        return 1
    fi
    timeout $RUN_LIMIT "$src/$prog" $SHAPE --steps 20 --precision "$want_prec" "$@" \
        >"$tmp/run.out" 2>&1
    code=$?
    last=$(tail -1 "$tmp/run.out")
    why=""
    [ $code -eq 124 ] && why="$why ran over $RUN_LIMIT s;"
    [ $code -eq 0 ] || why="$why exit $code;"
    case " $last " in *" shape=24x20x16 "*) ;; *) why="$why shape;" ;; esac
    case " $last " in *" precision=$want_prec "*) ;; *) why="$why precision;" ;; esac
    case " $last " in *" steps=20 "*) ;; *) why="$why steps;" ;; esac
    case " $last " in *" source=$want_source "*) ;; *) why="$why not source=$want_source;" ;; esac
    if [ -n "$want_variant" ]; then
        case " $last " in *" variant=$want_variant "*) ;; *) why="$why not variant=$want_variant;" ;; esac
    fi
    echo "$last" | awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } }
        END { e = v["error"]; b = v["error_bound"];
              num = "^[0-9]+([.][0-9]*)?([eE][-+]?[0-9]+)?$";
              exit !(e ~ num && b ~ num && e + 0 <= b + 0) }' ||
        why="$why error > error_bound;"
    if [ -z "$why" ]; then
        ok "$name"
        return 0
    fi
    not_ok "$name:$why" "$tmp/run.out"
    return 1
}

modules_line_says() { # modules_line_says TEXT: the last run's modules: line has TEXT
    grep '^modules:' "$tmp/run.out" | grep -q "$1"
}

last_layout_is() { # last_layout_is PITCH OFFSET: the last run's last line says that layout
    case " $(tail -1 "$tmp/run.out") " in *" pitch=$1 offset=$2 "*) return 0 ;; esac
    return 1
}

# layout_ok NAME PROG PREC VARIANT PITCH OFFSET [ARGS...]: PROG in a padded layout of its
# own, without a daemon: its fields at that pitch and offset, its error within its bound
# (a kernel or solver kernel reading rows at nx, not at the pitch, is far outside it).
layout_ok() {
    name=$1 prog=$2 prec=$3 variant=$4 pitch=$5 offset=$6
    shift 6
    heat_ok "$name" "$prog" fallback "$prec" "$variant" --pitch "$pitch" --offset "$offset" \
        "$@" || return 1
    if last_layout_is "$pitch" "$offset"; then
        ok "$name: it says pitch=$pitch offset=$offset"
    else
        not_ok "$name: it says pitch=$pitch offset=$offset" "$tmp/run.out"
    fi
}

# --- 4. no daemon: the fallback kernel --------------------------------------------------
export FDTUNE_SOCKET="$tmp/missing.sock"
export FDTUNE_CACHE_DIR="$tmp/cache-nodaemon"
# Asked with pitch auto and answered by nobody, the solvers run dense.
heat_ok "no daemon: heat asks pitch auto and runs dense" heat fallback double ""
if last_layout_is 24 0; then ok "no daemon: heat says pitch=24 offset=0"
else not_ok "no daemon: heat says pitch=24 offset=0" "$tmp/run.out"; fi
layout_ok "no daemon: heat double at pitch 29 offset 3" heat double "" 29 3
layout_ok "no daemon: heat float at pitch 40 offset 61" heat float "" 40 61
layout_ok "no daemon: wave double at pitch 33 offset 5" wave double snaive:256x1x1 33 5 \
    --spec "$spec"
for prec in double float; do
    heat_ok "no daemon: heat $prec runs kernel 1 (source=fallback)" heat fallback $prec ""
    heat_ok "no daemon: heat_f $prec runs kernel 1 (source=fallback)" heat_f fallback $prec ""
    heat_ok "no daemon: wave $prec runs its spec's kernel 1 (source=fallback)" wave fallback \
        $prec snaive:256x1x1 --spec "$spec"
    heat_ok "no daemon: wave_f $prec runs its spec's kernel 1 (source=fallback)" wave_f \
        fallback $prec snaive:256x1x1 --spec "$spec"
done

# --- 5. the installed fdtuned -----------------------------------------------------------
export FDTUNE_SOCKET="$tmp/s.sock"
FDTUNED=$R/bin/fdtuned
FDTUNE=$R/bin/fdtune
printf '[search]\nbudget = 6\n[tuning]\nsamples = 3\nmin_sample_ms = 0.1\nmax_spread = 0\n' >"$tmp/conf"
"$FDTUNED" --socket "$FDTUNE_SOCKET" --db "$tmp/store.db" --backend cpu --config "$tmp/conf" \
    2>"$tmp/fdtuned.log" &
pid=$!
i=0
up=1
while ! "$FDTUNE" status >/dev/null 2>&1; do
    i=$((i + 1))
    if [ $i -gt 6000 ] || ! kill -0 "$pid" 2>/dev/null; then # see tap.sh's wait_answering
        up=0
        break
    fi
    sleep 0.1
done
if [ $up -eq 1 ]; then
    ok "the installed fdtuned starts and fdtune status answers"
else
    not_ok "the installed fdtuned starts and fdtune status answers (waited $((i / 10)) s)" "$tmp/fdtuned.log"
fi

variant_double=""
variant_float=""
if [ $up -eq 1 ]; then
    # While the first job runs: the worker is the installed one, which fdtuned found by
    # itself in libexec (it stops the worker once idle, so it is looked at meanwhile).
    timeout $RUN_LIMIT "$FDTUNE" tune $SHAPE --wait >"$tmp/tune.out" 2>&1 &
    tuner=$!
    wexe=""
    while [ -z "$wexe" ] && kill -0 "$tuner" 2>/dev/null; do
        wpid=$("$FDTUNE" status --json 2>/dev/null |
            sed -n 's/.*"workers":\[{[^]]*"pid":\([1-9][0-9]*\).*/\1/p')
        [ -n "$wpid" ] && wexe=$(readlink "/proc/$wpid/exe" 2>/dev/null)
        [ -n "$wexe" ] || sleep 0.05
    done
    if wait "$tuner"; then ok "fdtune tune $SHAPE --wait"; else not_ok "fdtune tune $SHAPE --wait" "$tmp/tune.out"; fi
    if [ "$wexe" = "$R/libexec/fdtuned/fdtune-worker" ]; then
        ok "fdtuned runs the installed $P/libexec/fdtuned/fdtune-worker"
    else
        not_ok "fdtuned runs the installed $P/libexec/fdtuned/fdtune-worker (the worker seen: '$wexe')" "$tmp/fdtuned.log"
    fi
    check "fdtune tune $SHAPE --precision float --wait" \
        timeout $RUN_LIMIT "$FDTUNE" tune $SHAPE --precision float --wait
    "$FDTUNE" query $SHAPE --json >"$tmp/answer.json" 2>&1
    "$FDTUNE" query $SHAPE --precision float --json >"$tmp/answer_float.json" 2>&1
    variant_double=$(sed -n 's/.*"variant":"\([^"]*\)".*/\1/p' "$tmp/answer.json" | head -1)
    variant_float=$(sed -n 's/.*"variant":"\([^"]*\)".*/\1/p' "$tmp/answer_float.json" | head -1)
    if grep -q '"match":"exact"' "$tmp/answer.json" && [ -n "$variant_double" ] &&
        grep -q '"match":"exact"' "$tmp/answer_float.json" && [ -n "$variant_float" ]; then
        ok "fdtune query: exact answers ($variant_double, float $variant_float)"
    else
        cat "$tmp/answer.json" "$tmp/answer_float.json" >"$tmp/out"
        not_ok "fdtune query: exact answers" "$tmp/out"
    fi
    # A stencil of the solver's own: the wave update's spec, tuned, answered, and run by
    # the wave solver built from the installed tree.
    check "fdtune tune $SHAPE --spec acoustic8.json --wait" \
        timeout $RUN_LIMIT "$FDTUNE" tune $SHAPE --spec "$spec" --wait
    "$FDTUNE" query $SHAPE --spec "$spec" --json >"$tmp/answer_spec.json" 2>&1
    variant_spec=$(sed -n 's/.*"variant":"\([^"]*\)".*/\1/p' "$tmp/answer_spec.json" | head -1)
    if grep -q '"match":"exact"' "$tmp/answer_spec.json" && grep -q '"entry":"fdt_spec"' \
        "$tmp/answer_spec.json"; then
        ok "fdtune query --spec: exact ($variant_spec)"
    else
        not_ok "fdtune query --spec: exact" "$tmp/answer_spec.json"
    fi
    heat_ok "daemon: wave runs the tuned $variant_spec" wave tuned double "$variant_spec" \
        --spec "$spec"
    heat_ok "daemon: wave_f runs the tuned $variant_spec" wave_f tuned double \
        "$variant_spec" --spec "$spec"
fi

if [ $up -eq 1 ] && [ -n "$variant_double" ]; then
    export FDTUNE_CACHE_DIR="$tmp/cache"
    if heat_ok "daemon: heat double runs the tuned $variant_double" heat tuned double "$variant_double"; then
        if modules_line_says '0 from the disk cache, 1 compiled'; then
            ok "first run: the module is compiled (1 compiled)"
        else
            not_ok "first run: the module is compiled (1 compiled)" "$tmp/run.out"
        fi
        # Asked with pitch auto, the answer's layout is the run's: a row pitch from nx
        # (an fdtuned older than layouts answers none: dense, pitch nx), an offset under
        # 256 bytes, and the layout line says the same.
        layout=$(tail -1 "$tmp/run.out" |
            sed -n 's/.* pitch=\([0-9]*\) offset=\([0-9]*\) .*/\1 \2/p')
        if [ -n "$layout" ] && [ "${layout% *}" -ge 24 ] && [ "${layout% *}" -le 4120 ] &&
            [ "${layout#* }" -lt 32 ] &&
            grep -q "^layout: *pitch ${layout% *} (nx 24), offset ${layout#* }" "$tmp/run.out"
        then
            ok "daemon: heat runs in the answer's layout (pitch ${layout% *}, offset ${layout#* })"
        else
            not_ok "daemon: heat runs in the answer's layout" "$tmp/run.out"
        fi
    fi
    if heat_ok "daemon: heat double again, same cache" heat tuned double "$variant_double"; then
        if modules_line_says '1 from the disk cache, 0 compiled'; then
            ok "second run: the module comes from the disk cache (0 compiled)"
        else
            not_ok "second run: the module comes from the disk cache (0 compiled)" "$tmp/run.out"
        fi
    fi
    nmods=0
    for m in "$FDTUNE_CACHE_DIR"/*.mod; do
        [ -f "$m" ] || continue
        size=$(wc -c <"$m")
        printf 'DAMAGED!' | dd of="$m" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
        nmods=$((nmods + 1))
    done
    if [ $nmods -ge 1 ]; then
        ok "damaged the $nmods cached module(s)"
    else
        ls -la "$FDTUNE_CACHE_DIR" >"$tmp/out" 2>&1
        not_ok "the cache holds modules to damage" "$tmp/out"
    fi
    if heat_ok "daemon: heat double with damaged modules still runs the tuned kernel" heat tuned double "$variant_double"; then
        if modules_line_says '0 from the disk cache, 1 compiled'; then
            ok "the damaged module is detected and compiled again (1 compiled)"
        else
            not_ok "the damaged module is detected and compiled again (1 compiled)" "$tmp/run.out"
        fi
    fi
    heat_ok "daemon: heat float runs the tuned $variant_float" heat tuned float "$variant_float"
    heat_ok "daemon: heat_f double runs the tuned $variant_double" heat_f tuned double "$variant_double"
    heat_ok "daemon: heat_f float runs the tuned $variant_float" heat_f tuned float "$variant_float"

    # A cache directory others may write is not used, and the run still passes.
    open=$tmp/cache-open
    mkdir -p "$open" && chmod 0777 "$open"
    export FDTUNE_CACHE_DIR="$open"
    if heat_ok "daemon: heat with a mode 0777 cache dir still runs the tuned kernel" heat tuned double "$variant_double"; then
        if modules_line_says '0 from the disk cache, 1 compiled' && [ -z "$(ls -A "$open")" ]; then
            ok "the mode 0777 cache dir is left unused"
        else
            { cat "$tmp/run.out"; ls -la "$open"; } >"$tmp/out" 2>&1
            not_ok "the mode 0777 cache dir is left unused" "$tmp/out"
        fi
    fi

    # Ranks started together on one node: one compiles, the others wait and read its
    # module, so the node compiles the Laplacian once.
    export FDTUNE_CACHE_DIR="$tmp/cache-ranks"
    ranks="1 2 3 4 5 6"
    rank_pids=""
    for r in $ranks; do
        timeout $RUN_LIMIT "$src/heat" $SHAPE --steps 4 >"$tmp/rank$r.out" 2>&1 &
        rank_pids="$rank_pids $!"
    done
    for p in $rank_pids; do
        wait "$p"
    done
    compiled=0 tuned=0
    for r in $ranks; do
        n=$(sed -n 's/^modules:.*, \([0-9]*\) compiled$/\1/p' "$tmp/rank$r.out")
        compiled=$((compiled + ${n:-99}))
        tail -1 "$tmp/rank$r.out" | grep -q " source=tuned " && tuned=$((tuned + 1))
    done
    if [ "$compiled" -eq 1 ] && [ "$tuned" -eq 6 ]; then
        ok "6 ranks started at once: all tuned, the Laplacian compiled once"
    else
        cat "$tmp"/rank*.out >"$tmp/out"
        not_ok "6 ranks started at once: all tuned, the Laplacian compiled once ($compiled compiles, $tuned tuned)" "$tmp/out"
    fi
fi
if [ -n "$pid" ]; then
    kill -TERM "$pid" 2>/dev/null
    wait "$pid"
    code=$?
    pid=""
    if [ $code -eq 0 ]; then ok "fdtuned stops cleanly on SIGTERM"; else not_ok "fdtuned stops cleanly on SIGTERM (exit $code)" "$tmp/fdtuned.log"; fi
fi

# --- 6. a hostile daemon: a source that is not the one it names -------------------------
# A real answer's shape (section 5) when there is one, with the hash changed; else one
# written here. Either is for double precision, radius 1.
if grep -q '"source_hash":"[0-9a-f]*"' "$tmp/answer.json" 2>/dev/null; then
    sed 's/"source_hash":"[0-9a-f]*"/"source_hash":"00000000000000000000000000000000"/g' \
        "$tmp/answer.json" >"$tmp/fake_answer.json"
else
    cat >"$tmp/fake_answer.json" <<'EOF'
{"v":1,"ok":true,"match":"exact","device_match":"fingerprint","from":{"nx":24,"ny":20,"nz":16,"device":"cpu","driver":"","compiler":"c++"},"distance":0,"config":{"variant":"naive:32x4x1","family":"naive","sources":["common.h","naive.hip"],"source_hash":"00000000000000000000000000000000","entry":"fdt_laplacian","params":{"bx":32,"by":4,"bz":1,"m":1,"mz":1,"order":"asc","lb":false,"nt":false,"map":false},"block":[32,4,1],"grid":[1,5,16],"defines":["FDT_REAL=double","FDT_IDX=int","FDT_RADIUS=1","FDT_BX=32","FDT_BY=4","FDT_BZ=1"]},"gbps":1.0,"copy_gbps":1.0,"kernel1_gbps":1.0,"kernels_current":true}
EOF
fi
cat >"$tmp/fake.py" <<'EOF'
import json, os, socket, sys, threading
path, answer_file = sys.argv[1], sys.argv[2]
with open(answer_file) as f:
    answer = json.loads(f.read())
def serve(conn):
    buf = b""
    with conn:
        while True:
            data = conn.recv(65536)
            if not data:
                return
            buf += data
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                try:
                    req = json.loads(line)
                except ValueError:
                    req = {}
                if req.get("op") == "source":
                    out = {"v": 1, "ok": True, "hash": req.get("hash", ""), "text": "garbage"}
                else:
                    out = answer
                conn.sendall(json.dumps(out, separators=(",", ":")).encode() + b"\n")
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(path)
s.listen(16)
open(path + ".ready", "w").close()  # connects succeed from here on, not from the bind
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
EOF
export FDTUNE_SOCKET="$tmp/fake.sock"
export FDTUNE_CACHE_DIR="$tmp/cache-fake"
python3 "$tmp/fake.py" "$FDTUNE_SOCKET" "$tmp/fake_answer.json" 2>"$tmp/fake.log" &
fake=$!
i=0
while [ ! -e "$FDTUNE_SOCKET.ready" ] && [ $i -lt 600 ] && kill -0 "$fake" 2>/dev/null; do
    i=$((i + 1))
    sleep 0.1
done
if [ -e "$FDTUNE_SOCKET.ready" ]; then
    if heat_ok "hostile daemon: heat falls back to kernel 1" heat fallback double ""; then
        if grep -q '^laplacian:.*fallback.*fdtuned sent a source whose hash is' "$tmp/run.out"; then
            ok "hostile daemon: the reason names the hash mismatch"
        else
            not_ok "hostile daemon: the reason names the hash mismatch" "$tmp/run.out"
        fi
    fi
else
    not_ok "the fake daemon listens" "$tmp/fake.log"
fi
kill -9 "$fake" 2>/dev/null
wait "$fake" 2>/dev/null
fake=""

# --- 7. make uninstall ------------------------------------------------------------------
uninstall_tree() { # uninstall_tree LOG
    $MAKE --no-print-directory uninstall BUILD="$BUILD" $make_san DESTDIR="$root" PREFIX=$P >"$1" 2>&1
}
check "make uninstall" uninstall_tree "$tmp/uninstall.log"
find "$root" ! -type d >"$tmp/out" 2>&1
if [ ! -s "$tmp/out" ]; then
    ok "nothing but directories is left under the staging root"
else
    not_ok "nothing but directories is left under the staging root; left:" "$tmp/out"
fi

conf=$root/etc/fdtuned/fdtuned.conf
check "make install again" install_tree "$tmp/install.log"
printf '\n# edited by the administrator\n[search]\nbudget = 7\n' >>"$conf"
cp "$conf" "$tmp/edited.conf"
check "make install over an edited fdtuned.conf" install_tree "$tmp/install.log"
if cmp -s "$conf" "$tmp/edited.conf"; then
    ok "make install keeps the edited fdtuned.conf"
else
    not_ok "make install keeps the edited fdtuned.conf" "$conf"
fi
check "make uninstall with an edited fdtuned.conf" uninstall_tree "$tmp/uninstall.log"
find "$root" ! -type d >"$tmp/out" 2>&1
if cmp -s "$conf" "$tmp/edited.conf" && [ "$(cat "$tmp/out")" = "$conf" ]; then
    ok "make uninstall leaves the edited fdtuned.conf, and only it"
else
    not_ok "make uninstall leaves the edited fdtuned.conf, and only it; left:" "$tmp/out"
fi

echo "# $passed passed, $failed failed ($(($(date +%s) - start_s)) s)"
[ "$failed" -eq 0 ]
