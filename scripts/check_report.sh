#!/usr/bin/env bash
# Checks the benchmark's HTML report the way a person sees it: renders it in headless Chromium
# (Debian's package, installed if missing) and checks the rendered page, not the source text.
#
#   scripts/check_report.sh [REPORT.html]
#
# Without an argument it first makes a small report: `sysyc bench --reference gcc` over the
# bundled example and our own fixture programs. Checks:
#   1. the DOM after rendering holds the chart: one bar (<rect>) per case with a ratio, and the
#      geomean line and label;
#   2. the screenshot is a real picture: PNG of the requested size with many distinct colours
#      (a blank or failed page has one or two).
# Leaves the screenshot in perf/out/report.png for a look.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh

if ! command -v chromium >/dev/null 2>&1; then
    echo "installing chromium (headless checks of the HTML report)..."
    if [ "$(id -u)" = 0 ]; then
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
    else
        sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
    fi
fi

mkdir -p perf/out
report="${1:-}"
if [ -z "$report" ]; then
    cargo build --release --quiet
    report=perf/out/check-report.html
    target/release/sysyc bench --runs 1 --reference gcc -j 2 \
        --html "$report" --save perf/out/check-report.json \
        fixtures/example fixtures/sysy/control >/dev/null
fi
[ -f "$report" ] || { echo "no report at $report" >&2; exit 1; }

profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
       --disable-background-networking --disable-component-update --disable-sync
       --user-data-dir="$profile" --window-size=1200,900)
url="file://$(realpath "$report")"

chromium "${flags[@]}" --dump-dom "$url" >"$profile/dom.html" 2>/dev/null
chromium "${flags[@]}" --screenshot="perf/out/report.png" "$url" >/dev/null 2>&1

python3 - "$profile/dom.html" perf/out/report.png <<'EOF'
import re, sys, zlib, struct
dom_path, png_path = sys.argv[1], sys.argv[2]
dom = open(dom_path, encoding="utf-8").read()
# 1. The rendered DOM: bars and the geomean line.
bars = len(re.findall(r"<rect\b", dom))
cases = len(re.findall(r"<title>[^<]*: [0-9.]+</title>", dom))
assert "<svg" in dom, "no chart in the rendered page"
assert bars >= 1 and bars >= cases, f"{bars} bars for {cases} cases"
assert "geomean" in dom, "no geomean line in the rendered chart"
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
print(f"report ok: {bars} bars for {cases} cases, geomean line present, "
      f"screenshot {w}x{h} with {len(colours)}+ colours ({png_path})")
EOF
