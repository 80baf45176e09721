#!/usr/bin/env python3
"""bench/per_job.py ONE.json TWO.json [TWO.log] - the jobs of one batch run twice (`fdtune
jobs --json`, e.g. on one GPU and on two), side by side by shape: wall, GPU time, GPU busy
and compile wall of each job, and when it ran in the second run; then the sums; with the
second run's fdtuned log, each device's (lane's) jobs, GPU time and GPU busy."""
import json
import re
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
if len(sys.argv) > 3:
    with open(sys.argv[3]) as f:
        lane_of = {int(m[1]): int(m[2]) for m in
                   re.finditer(r"job (\d+) running on device (\d+)", f.read())}
    for lane in sorted(set(lane_of.values())):
        mine = [j for j in two.values() if lane_of.get(j["id"]) == lane]
        wall = sum(j["cost"]["wall_s"] for j in mine)
        gpu = sum(j["cost"]["gpu_s"] for j in mine)
        print("two, device %d: %d jobs, job walls %.1f s, GPU time %.1f s, GPU busy %.0f%%" % (
            lane, len(mine), wall, gpu, 100 * gpu / wall if wall else 0))
