cd "$(dirname "$0")"
for p in perf_*; do case $p in *.cu) continue;; esac; ./$p; done | sort -k2,2
