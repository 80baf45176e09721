#!/bin/bash
# bench/issue14_run.sh - issue 14's GPU figures in one device call, over a STATIC=1 build
# (carry build-static/): bench/throughput.sh's exhaustive 512^3 (cold, then cached), the
# 20-shape batch and the kill -9 test, a summary on stdout and everything in $OUT/all.tgz
# (the device tool brings back at most 8 files).
OUT0=${OUT:?}
OUT=$OUT0 bash bench/throughput.sh exhaustive >/dev/null 2>&1
grep -h "wall (client\|nvidia-smi" "$OUT0"/exhaustive/c*.txt
grep -ho '"cost":{[^}]*}' "$OUT0"/exhaustive/c*.txt
grep -h "done:" /tmp/fdt-throughput/exhaustive.log
OUT=$OUT0 BATCH_LIMIT_S=400 bash bench/throughput.sh batch >/dev/null 2>&1
tail -1 "$OUT0/batch/batch.txt"
OUT=$OUT0 bash bench/throughput.sh kill >/dev/null 2>&1
tail -3 "$OUT0/kill/kill.txt"
cd "$OUT0" && tar czf all.tgz exhaustive batch kill && rm -rf exhaustive batch kill
