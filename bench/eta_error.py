#!/usr/bin/env python3
"""bench/eta_error.py STATUS - how right a batch's ETA was: STATUS is bench/throughput.sh's
batch.status (one `fdtune status --json` a line after its unix time, every 2 s, then a line
`start T0 end T1`; plain or gzip). For the samples nearest 25%, 50% and 75% of the batch's
wall time, and the first ones at or past those shares of its work done, the ETA status gave
against the time the batch really took from there."""
import gzip
import json
import sys


def read(path):
    opener = gzip.open if path.endswith(".gz") else open
    samples, start, end = [], None, None
    with opener(path, "rt") as f:
        for line in f:
            if line.startswith("start"):
                words = line.split()
                start, end = float(words[1]), float(words[3])
                continue
            t, text = line.split(" ", 1)
            batches = json.loads(text).get("batches") or []
            if batches and "eta_s" in batches[0]:
                samples.append((float(t), batches[0]))
    return samples, start, end


def report(label, t, b, start, end):
    left = end - t
    err = b["eta_s"] - left
    print(f"  {label}: at {t - start:5.1f} s, share {b['done_share']:.3f} "
          f"({b['ended']}/{b['jobs']} jobs ended): ETA {b['eta_s']:5.1f} s, "
          f"took {left:5.1f} s, error {err:+5.1f} s ({err / left:+.0%})")


def main():
    samples, start, end = read(sys.argv[1])
    wall = end - start
    print(f"batch wall {wall:.1f} s, {len(samples)} status samples with an ETA")
    print("at 25%, 50% and 75% of the wall time:")
    for q in (0.25, 0.5, 0.75):
        t, b = min(samples, key=lambda s: abs(s[0] - start - q * wall))
        report(f"{q:.0%}", t, b, start, end)
    print("at the first sample whose share done reached 25%, 50%, 75%:")
    for q in (0.25, 0.5, 0.75):
        hit = next(((t, b) for t, b in samples if b["done_share"] >= q), None)
        if hit:
            report(f"{q:.0%}", *hit, start, end)


if __name__ == "__main__":
    main()
