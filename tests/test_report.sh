#!/bin/sh
# test_report.sh - fdtune report (issue 32, item 6), against a real fdtuned on the cpu backend
# with a temporary socket and store: three small problems tuned (one before the device's
# stored copy is raised out of reach, so that the two after it are doubtful, as on a device
# slowed since its balance was measured), then `fdtune report -o`; headless Chromium renders
# the page inside a wrapper page of the test's, whose script measures every plot's marks
# (their boxes of nonzero size, within their svg) and counts them by kind; the counts must
# be the store's (export's rows): bars the best rows' figures, points the evaluations that
# ran right, heatmap cells their distinct (bx, by), lines the jobs (against evaluations and
# against the seconds they took) and their vertices the evaluations; doubt is shown, in the table and on the bars. The device's name holds markup
# (the daemon runs in a mount namespace of its own whose /proc/cpuinfo names the cpu so),
# which the page shows as text; the page names nothing outside itself. Refusals: no -o, a
# target that cannot be written, a full file system (the old page left as it was, no part
# of the new one anywhere), bad --device values.
# Usage: BUILD=build sh tests/test_report.sh
set -u
. "$(dirname "$0")/tap.sh"
daemon_test report
require chromium python3 unshare mount
DB=$dir/fdtuned.db
NAME='Evil <script>alert("x")</script> & Co'
SHOTS=$dir/chromium

# --- the daemon, its cpu named NAME --------------------------------------------------------
python3 - "$NAME" "$dir/cpuinfo" <<'EOF'
import sys
lines = [l for l in open("/proc/cpuinfo") if not l.startswith("model name")]
open(sys.argv[2], "w").write("model name\t: %s\n" % sys.argv[1] + "".join(lines))
EOF
# Few samples: the rows are what the test is about, not their precision.
printf '[tuning]\nsamples = 3\nmin_sample_ms = 0.1\nleaders = 2\nleader_samples = 5\n' \
    >"$dir/fdtuned.conf"

# $OWN_MOUNTS COMMAND...: COMMAND in a mount namespace of its own (for a user other than
# root, as root of a user namespace of its own), where its mounts stay. A command prefix,
# not a function: started in the background, $! is then the command's own pid (unshare
# and sh exec), which stop_daemon signals, not a subshell's.
OWN_MOUNTS="unshare --mount --propagation private"
[ "$(id -u)" -eq 0 ] || OWN_MOUNTS="unshare --map-root-user --mount --propagation private"

# shellcheck disable=SC2086 # $OWN_MOUNTS is a command and its options
start_daemon() {
    $OWN_MOUNTS sh -c 'mount --bind "$1" /proc/cpuinfo && exec "$2" --config "$3" \
        --socket "$4" --db "$5" --backend cpu' sh "$dir/cpuinfo" "$FDTUNED" \
        "$dir/fdtuned.conf" "$FDTUNE_SOCKET" "$DB" 2>>"$LOG" &
    pid=$!
    wait_answering
}

start_daemon
check "tiled on 24x20x16" "$FDTUNE" tune 24 20 16 --family tiled --subset 8 --wait
stop_daemon
# The device's copy as its balance stored it, raised far beyond what the device copies:
# the jobs after it judge their figures doubtful.
check "the stored balance copy is raised" python3 -c '
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
n = db.execute("UPDATE devices SET copy_gbps = 1e6 WHERE balance_measured > 0").rowcount
db.commit()
sys.exit(n != 1)' "$DB"
start_daemon
check "zmarch on 20x16x12" "$FDTUNE" tune 20 16 12 --family zmarch --subset 8 --wait
check "every family on 16x12x10" "$FDTUNE" tune 16 12 10 --subset 10 --wait

# --- the report ------------------------------------------------------------------------------
check "fdtune report -o writes the page" "$FDTUNE" report -o "$dir/report.html"
"$FDTUNE" export --what best --format json -o "$dir/best.json"
"$FDTUNE" export --what results --format json -o "$dir/results.json"

# Nothing outside the page: no address, no source, no link but to its own sections.
grep -Eio '(https?|ftp|file|data):|src=|url\(|@import|<script|<link|<iframe|<img' \
    "$dir/report.html" >"$dir/out"
grep -o 'href="[^"]*"' "$dir/report.html" | grep -v '^href="#' >>"$dir/out"
if [ -s "$dir/report.html" ] && [ ! -s "$dir/out" ]; then
    ok "the page names nothing outside itself (no URL, no src, no link out, no script)"
else
    not_ok "the page names nothing outside itself" "$dir/out"
fi
if ! grep -qF "$NAME" "$dir/report.html" &&
    grep -qF 'Evil &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; Co' "$dir/report.html" &&
    grep -qF 'the device&#39;s balance' "$dir/report.html"; then
    ok "the device's name and the doubt are escaped"
else
    grep -n "Evil\|device.s balance" "$dir/report.html" | head -5 >"$dir/out"
    not_ok "the device's name and the doubt are escaped" "$dir/out"
fi

# --- the page as Chromium renders it ---------------------------------------------------------
# The wrapper loads the page in a frame of the same origin and writes what it measured into
# its own DOM, which --dump-dom prints.
cat >"$dir/wrapper.html" <<'EOF'
<!DOCTYPE html>
<html><head><meta charset="utf-8"></head><body>
<pre id="counts">not measured</pre>
<iframe id="report" src="report.html" style="width:1400px;height:900px"></iframe>
<script>
var kinds = ['bar', 'point', 'cell', 'line', 'doubt'];
function plot(fig) {
  var svg = fig.querySelector('svg'), box = svg.getBoundingClientRect();
  var device = fig.closest('section.device'), problem = fig.closest('section.problem');
  var p = problem && problem.dataset;
  var rec = {id: fig.id, plot: fig.dataset.plot, fingerprint: device.dataset.fingerprint,
             problem: p ? [p.stencil, +p.radius, p.precision, p.cache, p.shape] : null,
             bar: 0, point: 0, cell: 0, line: 0, doubt: 0, vertices: 0, bad: []};
  svg.querySelectorAll('.mark').forEach(function (m) {
    var kind = kinds.filter(function (k) { return m.classList.contains(k); })[0];
    var b = m.getBBox(), r = m.getBoundingClientRect();
    var sized = kind === 'line' ? b.width > 0 : b.width > 0 && b.height > 0;
    var inside = r.left >= box.left - 0.5 && r.right <= box.right + 0.5 &&
                 r.top >= box.top - 0.5 && r.bottom <= box.bottom + 0.5;
    if (!kind || !sized || !inside) {
      rec.bad.push(m.outerHTML.slice(0, 160));
      return;
    }
    rec[kind]++;
    if (kind === 'line')
      rec.vertices += m.points.numberOfItems;
  });
  return rec;
}
document.getElementById('report').addEventListener('load', function () {
  var doc = this.contentDocument, out = {plots: [], doubts: [], names: []};
  doc.querySelectorAll('figure.plot').forEach(function (f) { out.plots.push(plot(f)); });
  doc.querySelectorAll('tr.doubt td.doubt').forEach(function (td) {
    var r = td.getBoundingClientRect();
    out.doubts.push({text: td.textContent, width: r.width, height: r.height});
  });
  doc.querySelectorAll('section.device > h2').forEach(function (h) {
    out.names.push(h.textContent);
  });
  document.getElementById('counts').textContent = JSON.stringify(out);
});
</script>
</body></html>
EOF
render() { # render PAGE: the DOM of PAGE once loaded, on stdout
    timeout 120 chromium --headless --no-sandbox --disable-gpu --allow-file-access-from-files \
        --user-data-dir="$SHOTS" --virtual-time-budget=10000 --dump-dom "file://$1" \
        2>"$dir/chromium.log"
}
render "$dir/wrapper.html" >"$dir/dom.html"
python3 - "$dir/dom.html" "$dir/counts.json" <<'EOF'
import html, sys
dom = open(sys.argv[1]).read()
start = dom.find('<pre id="counts">') + len('<pre id="counts">')
open(sys.argv[2], "w").write(html.unescape(dom[start:dom.find("</pre>", start)]))
EOF
if python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$dir/counts.json" 2>/dev/null; then
    ok "Chromium renders the page and the wrapper measures it"
else
    cat "$dir/counts.json" "$dir/chromium.log" >"$dir/out" 2>&1
    not_ok "Chromium renders the page and the wrapper measures it" "$dir/out"
fi

# judge ASPECT: one aspect of the rendered counts against the store's rows as export gives
# them; says what differs.
cat >"$dir/judge.py" <<'EOF'
import json, re, sys
aspect, counts, best, results, name = sys.argv[1:]
page = json.load(open(counts))
best, results = json.load(open(best)), json.load(open(results))
plots = page["plots"]
failures = []

def expect(what, got, want):
    if got != want:
        failures.append("%s: the page has %r, the store %r" % (what, got, want))

def key(row):
    shape = "%dx%dx%d" % (row["nx"], row["ny"], row["nz"])
    return (row["fingerprint"], row["stencil"], row["radius"], row["precision"], row["cache"], shape)

problems = {}
for row in results:
    problems.setdefault(key(row), []).append(row)

def rendered(problem, kind):
    found = [p for p in plots if p["problem"] and (p["fingerprint"], *p["problem"]) == problem
             and p["plot"] == kind]
    if len(found) != 1:
        failures.append("%s of %s: %d plots" % (kind, problem, len(found)))
    return found[0] if found else {"bar": 0, "point": 0, "cell": 0, "line": 0, "vertices": 0}

def evaluations(rows):
    return [r for r in rows if not r["leader"]]

def ran_right(rows):
    return [r for r in evaluations(rows) if r["status"] == "ok" and r["gbps"] > 0]

if aspect == "marks":
    for p in plots:
        if p["bad"]:
            failures.append("%s: marks of no size or outside the plot: %s" % (p["id"], p["bad"][:3]))
    marks = sum(p["bar"] + p["point"] + p["cell"] + p["line"] for p in plots)
    if marks == 0:
        failures.append("no mark drawn at all")
elif aspect == "sections":
    drawn = {(p["fingerprint"], *p["problem"]) for p in plots if p["problem"]}
    expect("problems", sorted(drawn), sorted(problems))
    for problem in problems:
        for kind in ("block", "m", "mz", "heatmap", "progress", "progress-time"):
            rendered(problem, kind)
elif aspect == "bars":
    for fingerprint in {b["fingerprint"] for b in best}:
        rows = [b for b in best if b["fingerprint"] == fingerprint]
        figures = sum(1 for b in rows for f in ("gbps", "kernel1_gbps", "copy_gbps",
                                                   "interior_copy_gbps") if b[f] > 0)
        bars = [p for p in plots if p["plot"] == "best" and p["fingerprint"] == fingerprint]
        expect("bars of device " + fingerprint, sum(p["bar"] for p in bars), figures)
        expect("doubt marks of device " + fingerprint, sum(p["doubt"] for p in bars),
               sum(1 for b in rows if b["doubt"]))
elif aspect == "points":
    for problem, rows in problems.items():
        for kind in ("block", "m", "mz"):
            expect("%s points of %s" % (kind, problem), rendered(problem, kind)["point"],
                   len(ran_right(rows)))
    if not any(ran_right(rows) for rows in problems.values()):
        failures.append("no evaluation ran right: nothing to plot")
elif aspect == "cells":
    for problem, rows in problems.items():
        pairs = {re.match(r"[a-z0-9]+:(\d+)x(\d+)x", r["variant"]).groups() for r in ran_right(rows)}
        expect("heatmap cells of %s" % (problem,), rendered(problem, "heatmap")["cell"], len(pairs))
elif aspect == "lines":
    for problem, rows in problems.items():
        for kind in ("progress", "progress-time"):
            line = rendered(problem, kind)
            expect("%s lines of %s" % (kind, problem), line["line"],
                   len({r["job"] for r in evaluations(rows)}))
            expect("%s line vertices of %s" % (kind, problem), line["vertices"],
                   2 * len(evaluations(rows)))
elif aspect == "doubt":
    doubtful = sorted(b["doubt"] for b in best if b["doubt"])
    shown = sorted(d["text"].lstrip("\u26a0 ") for d in page["doubts"] if d["width"] > 0 and d["height"] > 0)
    expect("doubts shown", shown, doubtful)
    if not doubtful:
        failures.append("no best row is doubtful: the raised balance copy made none")
elif aspect == "name":
    expect("device names", page["names"], [name])
else:
    failures.append("no aspect " + aspect)
print("\n".join(failures))
sys.exit(1 if failures else 0)
EOF
judge() {
    python3 "$dir/judge.py" "$1" "$dir/counts.json" "$dir/best.json" "$dir/results.json" "$NAME"
}
check "every mark drawn has a size and lies within its plot" judge marks
check "a section for every problem, each with its six plots" judge sections
check "bars: each best row's GB/s, kernel 1, copy and interior copy" judge bars
check "points: every evaluation that ran right, by block, m and mz" judge points
check "heatmap: a cell for every (bx, by) that ran right" judge cells
check "lines: a job's best so far against evaluations and against seconds, a step for every evaluation" judge lines
check "doubt: shown in the table and marked on the bars" judge doubt
check "the device's name is shown as the text it is" judge name

# --- standard output, and --device ------------------------------------------------------------
marks() { grep -o 'class="mark [a-z]*"' | sort | uniq -c; }
"$FDTUNE" report -o - 2>"$dir/err" | marks >"$dir/stdout.marks"
marks <"$dir/report.html" >"$dir/file.marks"
if [ -s "$dir/file.marks" ] && cmp -s "$dir/stdout.marks" "$dir/file.marks"; then
    ok "report -o - writes the same page to standard output"
else
    not_ok "report -o - writes the same page to standard output" "$dir/err"
fi
fingerprint=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[0]["fingerprint"])' \
    "$dir/best.json")
for device in 0 "$fingerprint"; do
    "$FDTUNE" report --device "$device" -o "$dir/one.html" 2>"$dir/err"
    if [ $? -eq 0 ] && [ "$(marks <"$dir/one.html")" = "$(cat "$dir/file.marks")" ]; then
        ok "report --device $device: the one device's page"
    else
        not_ok "report --device $device: the one device's page" "$dir/err"
    fi
done

# --- refusals -----------------------------------------------------------------------------------
refused() { # refused NAME CODE TEXT ARGS...: fdtune report ARGS exits CODE saying TEXT
    name=$1 code=$2 text=$3
    shift 3
    "$FDTUNE" report "$@" >"$dir/out" 2>&1
    rc=$?
    if [ "$rc" -eq "$code" ] && grep -qF -- "$text" "$dir/out"; then
        ok "$name: exit $rc, '$text'"
    else
        not_ok "$name: exit $rc, expected $code and '$text'" "$dir/out"
    fi
}
refused "no -o" 2 "expected -o FILE" --device 0
refused "--json" 2 "--json does not go with it" --json -o "$dir/x.html"
refused "an argument" 2 "unexpected argument 'extra'" -o "$dir/x.html" extra
refused "--device of neither kind" 2 "--device must be the daemon's device index or a" \
    --device gpu0 -o "$dir/x.html"
refused "--device no daemon has" 1 "the daemon has no device 7" --device 7 -o "$dir/x.html"
refused "--device of a fingerprint nowhere" 1 "no device of fingerprint 0123456789abcdef" \
    --device 0123456789abcdef -o "$dir/x.html"
refused "a target in a folder that does not exist" 1 "cannot write $dir/none/r.html" \
    -o "$dir/none/r.html"
mkdir "$dir/folder"
touch "$dir/folder/inside"
refused "a target that is a folder" 1 "writing $dir/folder:" -o "$dir/folder"
if [ -f "$dir/folder/inside" ] && [ -z "$(ls "$dir" | grep '^folder\.')" ] && [ ! -e "$dir/x.html" ]; then
    ok "refused reports leave no file, the folder as it was and no temporary file"
else
    ls -la "$dir" >"$dir/out"
    not_ok "refused reports leave no file, the folder as it was and no temporary file" "$dir/out"
fi
# A file system too small for the page: the write fails part way; the page that was there
# stays whole and no part of the new one is left (checked inside the mount namespace, where
# the small file system is).
# shellcheck disable=SC2086
$OWN_MOUNTS sh -c 'mount -t tmpfs -o size=8k tmpfs "$1" && echo old >"$1/r.html" &&
    { "$2" report -o "$1/r.html"; echo "exit $?"; ls -A "$1"; cat "$1/r.html"; }' \
    sh "$dir/folder" "$FDTUNE" >"$dir/out" 2>&1
if grep -q "^fdtune report: writing $dir/folder/r.html: No space left on device" "$dir/out" &&
    [ "$(sed -n '/^exit/,$p' "$dir/out" | tr '\n' ' ')" = "exit 1 r.html old " ]; then
    ok "a full file system: exit 1, the old page whole, no part of the new one left"
else
    not_ok "a full file system: exit 1, the old page whole, no part of the new one left" "$dir/out"
fi

# --- one shape in three layouts: three problems, each named with its layout ----------------
check "pitch auto on 13x11x9" "$FDTUNE" tune 13 11 9 --family naive --subset 2 --pitch auto \
    --wait
"$FDTUNE" report -o "$dir/layouts.html" 2>"$dir/err"
sections=$(grep -c '<section class="problem" id=.*data-shape="13x11x9"' "$dir/layouts.html")
if [ "$sections" = 3 ] &&
    grep -q '<h3>13x11x9 pitch 16 offset 0, laplacian radius 1' "$dir/layouts.html" &&
    grep -q '<h3>13x11x9 pitch 16 offset 3, laplacian radius 1' "$dir/layouts.html"; then
    ok "the layouts of one shape are three problems of the report, each named with its layout"
else
    grep -o '<h3>13x11x9[^<]*' "$dir/layouts.html" >"$dir/out"
    not_ok "each layout is a problem of its own ($sections sections)" "$dir/out"
fi

echo "# $passed passed, $failed failed"
[ "$failed" -eq 0 ]
