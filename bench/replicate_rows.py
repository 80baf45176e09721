#!/usr/bin/env python3
# replicate_rows.py SRC DST ROWS - an export of results made ROWS rows long, for the import
# and export benchmarks (import_bench.sh, slurm_export.sh): SRC's rows (one job's, as
# `fdtune export --what results` writes them, a row a line) copied as the jobs of as many
# other stores as it takes, so that every row passes an import's checks and none is the
# same row twice. DST is written in export's own layout.
import json
import sys

src, dst, want = sys.argv[1], sys.argv[2], int(sys.argv[3])
job = [json.loads(line.rstrip(",\n")) for line in open(src) if line.startswith("{")]
with open(dst, "w") as f:
    f.write("[\n")
    n = 0
    while n < want:
        store = "%032x" % (n // len(job) + 1)
        for row in job:
            if n == want:
                break
            f.write((",\n" if n else "") + json.dumps(dict(row, store=store)))
            n += 1
    f.write("\n]\n")
