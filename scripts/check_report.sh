#!/usr/bin/env bash
# Checks the benchmark's HTML report the way a person sees it: renders it in headless Chromium
# (Debian's package, installed if missing) and checks the rendered page, not the source text.
#
#   scripts/check_report.sh [REPORT.html]
#
# Without an argument it first makes a small report: `sysyc bench --reference gcc --runs 3`
# over the bundled example and some of our fixture programs, twice, the second time with the
# first as baseline and the directory of both as --history (so the trend view is drawn too).
# Checks:
#   1. the DOM after rendering holds a chart per metric present (instructions at least), each
#      on a log axis with one bar (<rect>) per case with a ratio, the geomean line and label;
#   2. the case table has a row per case with a status, sortable headers and the filter box,
#      and the script ran (the page's own script adds nothing, so its errors show as a missing
#      table id; chromium's console errors are checked in its log);
#   3. the trend view (when made) has a chart per metric with a point per saved run;
#   4. the screenshot is a real picture: PNG of the requested size with many distinct colours
#      (a blank or failed page has one or two).
# Leaves the screenshot in perf/out/report.png for a look.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh

if ! command -v chromium >/dev/null 2>&1; then
    echo "installing chromium (headless checks of the HTML report)..."
    if [ "$(id -u)" = 0 ]; then
        apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
    else
        sudo apt-get update -qq >/dev/null && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
    fi
fi

mkdir -p perf/out
report="${1:-}"
if [ -z "$report" ]; then
    cargo build --release --quiet
    report=perf/out/check-report.html
    hist=perf/out/check-report-history
    rm -rf "$hist" && mkdir -p "$hist"
    cases=(fixtures/example fixtures/sysy/control fixtures/sysy/io)
    SYSY_COMMIT=run-1 target/release/sysyc bench --runs 3 --reference gcc -j 2 \
        --save "$hist/1.json" "${cases[@]}" >/dev/null
    SYSY_COMMIT=run-2 target/release/sysyc bench --runs 3 --reference gcc -j 2 \
        --baseline "$hist/1.json" --history "$hist" --html "$report" \
        --save perf/out/check-report.json --junit perf/out/check-report.xml \
        "${cases[@]}" >/dev/null || [ $? = 1 ]   # 1: a timer may regress beyond its noise
fi
[ -f "$report" ] || { echo "no report at $report" >&2; exit 1; }

profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
       --disable-background-networking --disable-component-update --disable-sync
       --user-data-dir="$profile" --window-size=1200,900)
url="file://$(realpath "$report")"

chromium "${flags[@]}" --enable-logging=stderr --v=0 --dump-dom "$url" >"$profile/dom.html" 2>"$profile/log.txt"
if grep -E "Uncaught|SyntaxError|ReferenceError|TypeError" "$profile/log.txt"; then
    echo "the report's script failed in chromium" >&2
    exit 1
fi
chromium "${flags[@]}" --screenshot="perf/out/report.png" "$url" >/dev/null 2>&1

python3 - "$profile/dom.html" perf/out/report.png <<'EOF'
import re, sys, zlib, struct
dom_path, png_path = sys.argv[1], sys.argv[2]
dom = open(dom_path, encoding="utf-8").read()
# 1. The rendered DOM: a chart per metric on a log axis, bars and the geomean line.
metrics = re.findall(r'<svg class="chart" data-metric="(\w+)"', dom)
assert "insns" in metrics, f"no instruction chart (charts: {metrics})"
bars = cases = 0
for m in re.finditer(r'<svg class="chart" data-metric="(\w+)"(.*?)</svg>', dom, re.S):
    body = m.group(2)
    b = len(re.findall(r"<rect\b", body))
    c = len(re.findall(r"<title>[^<]*: [0-9.]+</title>", body))
    assert b >= 1 and b == c, f"{m.group(1)}: {b} bars for {c} cases"
    assert "geomean" in body and "(log scale)" in body, f"{m.group(1)}: no geomean or log axis"
    bars, cases = bars + b, cases + c
# 2. The table: rows with a status, sortable headers, the filter box.
table = re.search(r'<table id="cases">(.*?)</table>', dom, re.S)
assert table, "no case table"
rows = re.findall(r"<tr[^>]*><td>", table.group(1))
assert len(rows) >= 1, "no rows in the case table"
assert 'id="filter"' in dom and "<th>status</th>" in dom and "<th>reference</th>" in dom
# 3. The trend view, when there is history.
trends = re.findall(r'<svg class="trend" data-metric="(\w+)"(.*?)</svg>', dom, re.S)
for m, body in trends:
    assert len(re.findall(r"<circle\b", body)) >= 2, f"trend {m}: fewer than 2 points"
# 2. The screenshot: inflate the PNG scanlines and count distinct pixel samples (filtered bytes,
#    which for a blank page are nearly all alike).
data = open(png_path, "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "screenshot is not a PNG"
w, h, depth, ctype = struct.unpack(">IIBB", data[16:26])
idat = b""
pos = 8
while pos < len(data):
    n, = struct.unpack(">I", data[pos:pos + 4]); kind = data[pos + 4:pos + 8]
    if kind == b"IDAT":
        idat += data[pos + 8:pos + 8 + n]
    pos += 12 + n
raw = zlib.decompress(idat)
bpp = {2: 3, 6: 4}.get(ctype, 4)
stride = w * bpp + 1
colours = set()
for y in range(0, h, 7):
    row = raw[y * stride + 1:(y + 1) * stride]
    for x in range(0, w * bpp, bpp * 5):
        colours.add(row[x:x + 3])
assert (w, h) == (1200, 900), f"screenshot is {w}x{h}"
assert len(colours) >= 8, f"screenshot looks blank ({len(colours)} colours sampled)"
print(f"report ok: charts for {', '.join(metrics)} ({bars} bars on log axes, geomean lines), "
      f"table of {len(rows)} cases, {len(trends)} trend chart(s), "
      f"screenshot {w}x{h} with {len(colours)}+ colours ({png_path})")
EOF
