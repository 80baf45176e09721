#!/usr/bin/env python3
"""bench/per_job.py ONE.json TWO.json - the jobs of one batch run twice (`fdtune jobs
--json`, e.g. on one GPU and on two), side by side by shape: wall, GPU time, GPU busy and
compile wall of each job, and when it ran in the second run; then the sums."""
import json
import sys


def jobs(path):
    with open(path) as f:
        return {(j["nx"], j["ny"], j["nz"]): j for j in json.load(f)["jobs"]}


one, two = jobs(sys.argv[1]), jobs(sys.argv[2])
t0 = min(j["started"] for j in two.values())
print("shape             one: wall   gpu  busy compile | two: wall   gpu  busy compile  start..end (s)")
for shape in sorted(one, key=lambda s: one[s]["id"]):
    a, b = one[shape]["cost"], two[shape]["cost"]
    print("%-16s %10.1f %5.1f %4.0f%% %7.1f | %9.1f %5.1f %4.0f%% %7.1f  %4d..%3d" % (
        "x".join(map(str, shape)), a["wall_s"], a["gpu_s"], 100 * a["gpu_busy"],
        a["compile_s"], b["wall_s"], b["gpu_s"], 100 * b["gpu_busy"], b["compile_s"],
        two[shape]["started"] - t0, two[shape]["finished"] - t0))
for name, run in (("one", one), ("two", two)):
    print("%s: sum of job walls %.1f s, of GPU time %.1f s, of compile walls %.1f s" % (
        name, sum(j["cost"]["wall_s"] for j in run.values()),
        sum(j["cost"]["gpu_s"] for j in run.values()),
        sum(j["cost"]["compile_s"] for j in run.values())))
