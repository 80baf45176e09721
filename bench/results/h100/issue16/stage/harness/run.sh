cd "$(dirname "$0")"
for d in dbg_lb0 dbg_lb1 dbg_lb1_O0; do echo "$d"; ./$d | tail -3; done
for p in perf_*; do case $p in *.cu) continue;; esac; ./$p; done | sort -k1,1
