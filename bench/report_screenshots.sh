#!/bin/sh
# report_screenshots.sh - an fdtune report page (fdtune report -o FILE) as PNG screenshots
# rendered by headless Chromium, for the results pages (bench/results/): the page's top, then
# each device's section and each problem's from its anchor, at 1280x2000 (WINDOW=W,H for
# another size). No daemon and no GPU: the page holds all there is to draw.
# Usage: sh bench/report_screenshots.sh REPORT.html [OUTDIR]   (OUTDIR: REPORT's folder)
set -eu
if [ $# -lt 1 ] || [ ! -f "$1" ]; then
    echo "usage: $0 REPORT.html [OUTDIR]" >&2
    exit 2
fi
command -v chromium >/dev/null || { echo "$0: needs chromium (scripts/install-deps.sh)" >&2; exit 1; }
page=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
out=${2:-$(dirname "$page")}
base=$(basename "$page" .html)
mkdir -p "$out"
scratch=$(mktemp -d /tmp/fdt-shots-XXXXXX)
trap 'rm -rf "$scratch"' EXIT

# shot NAME URL: URL as OUT/BASE-NAME.png.
shot() {
    timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
        --allow-file-access-from-files --user-data-dir="$scratch/profile" \
        --window-size="${WINDOW:-1280,2000}" --virtual-time-budget=5000 \
        --screenshot="$out/$base-$1.png" "$2" >/dev/null 2>&1
    echo "$out/$base-$1.png"
}

shot top "file://$page"
# Headless Chromium shoots a page scrolled to an anchor as blank above it; a frame the size
# of the window, scrolled to the anchor, is shot whole.
for anchor in $(grep -o '<section class="[a-z]*" id="[a-z]*-[0-9]*"' "$page" | sed 's/.*id="//; s/"$//'); do
    printf '<!DOCTYPE html><html><head><style>body{margin:0}iframe{border:0;width:100vw;
height:100vh}</style></head><body><iframe src="file://%s#%s"></iframe></body></html>\n' \
        "$page" "$anchor" >"$scratch/$anchor.html"
    shot "$anchor" "file://$scratch/$anchor.html"
done
