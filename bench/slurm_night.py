#!/usr/bin/env python3
"""slurm_night.py - how long fdtune-slurm takes over 1800 problems on a cluster
(docs/cluster.md), from measured figures alone:

- each problem's tuning wall: the 20 jobs of the H100 batch of bench/shapes20.txt
  (bench/results/h100/issue14/final/batch/batch.txt: guided, double R=1, a fresh store),
  the list 90 times over, as docs/throughput.md takes a site's 1800 problems;
- dealt as fdtune-slurm deals them: the smallest grid first, round-robin over the tasks;
- a task's export after each shape: the k-th carries k shapes' rows, 70 a shape (1320
  evaluations over 20 jobs, and the leaders), at the cost a row measured on a 2-core host
  (bench/results/issue33/slurm_export.txt);
- a task's fixed cost: fdtuned's start with its balance (about a second, README.md) and a
  freshly started node's first cold compile (6 s, bench/results/README.md, "Issue 14");
- the merge: fdtuned's start, the import (bench/results/issue33/import_bench.txt) and the
  export of every row.

With several GPUs a node, a task a GPU: the lower figure has each task's host work on cores
of its own (it divides), the upper has the node's host work one after another (it does
not), as docs/throughput.md bounds a node of several GPUs. Slurm's own start of the jobs,
which a site's queue sets, is not counted.
Usage: python3 bench/slurm_night.py
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
ROWS_A_SHAPE = 70
EXPORT_S_A_ROW = 47.4e-6  # slurm_export.txt, the fastest at 7910 rows
IMPORT_ROWS_A_S = 15113  # import_bench.txt, JSON
START_S = 1.0 + 6.0
PROBLEMS = 1800


def jobs():
    path = os.path.join(HERE, "results/h100/issue14/final/batch/batch.txt")
    line = next(l for l in open(path) if l.startswith('{"v":1,"jobs"'))
    return [(j["cost"]["wall_s"], j["cost"]["gpu_s"], j["nx"] * j["ny"] * j["nz"])
            for j in json.loads(line)["jobs"]]


def task_s(mine):
    n = len(mine)
    export = sum(k * ROWS_A_SHAPE * EXPORT_S_A_ROW for k in range(1, n + 1))
    return START_S + sum(w for w, _, _ in mine) + export, export


def main():
    js = jobs()
    problems = sorted(js * (PROBLEMS // len(js)), key=lambda j: j[2])
    rows = PROBLEMS * ROWS_A_SHAPE
    merge = 1.0 + rows / IMPORT_ROWS_A_S + rows * EXPORT_S_A_ROW
    print("1800 problems (bench/shapes20.txt x 90, H100 job walls), fdtune-slurm's dealing")
    print("merge job: %.0f s (%d rows)" % (merge, rows))
    print("nodes GPUs tasks shapes/task  tasks: longest  mean  shortest  export(longest)"
          "  night (longest task + merge)")
    for nodes, gpus in ((1, 1), (16, 1), (16, 4), (256, 1), (256, 4)):
        tasks = min(nodes * gpus, PROBLEMS)
        dealt = [problems[i::tasks] for i in range(tasks)]
        times = [task_s(m) for m in dealt]
        longest = max(times)
        mean = sum(t for t, _ in times) / tasks
        low = longest[0] + merge
        text = "%.1f min" % (low / 60)
        if gpus > 1:
            # the node's host work one after another, its GPUs' work side by side
            node = []
            for n in range(nodes):
                mine = dealt[n * gpus:(n + 1) * gpus]
                host = sum(w - g for m in mine for w, g, _ in m)
                gpu = max(sum(g for _, g, _ in m) for m in mine)
                node.append(START_S + host + gpu + max(task_s(m)[1] for m in mine))
            text += " to %.1f min" % ((max(node) + merge) / 60)
        print("%5d %4d %5d %7d        %7.0f s %5.0f s %6.0f s  %6.1f s        %s"
              % (nodes, gpus, tasks, len(dealt[0]), longest[0], mean, min(times)[0],
                 longest[1], text))


if __name__ == "__main__":
    main()
