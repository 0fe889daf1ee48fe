#!/usr/bin/env bash
# The generated-program benchmark: scripts/bench_generated.sh [COUNT] [FIRST]
#
# Writes COUNT programs of the `programs` profile of sysyc's generator (src/fuzzgen/programs.rs;
# seeds FIRST..FIRST+COUNT, default 300 from 1; the generator and the seed list are the
# benchmark) to $GEN_DIR (default target/bench-generated/programs), each with its expected output
# from the host gcc and clang (`sysyc gen --expect`; kept while the program is unchanged), then
# measures sysyc -O2 against riscv64 gcc -O2 under qemu with `sysyc bench --reference gcc`. The
# gcc half is reused from the previous run for unchanged programs (--reference-from), so a rerun
# measures only sysyc (FRESH_REFERENCE=1 measures gcc again). Every program is also a correctness check: a sysyc output that differs
# from the expected one is listed as a failure (and the script exits 1).
#
# Prints, for every metric the bench JSON has (executed instructions `insns`; estimated U74
# cycles `cycles` and `cycles_mca` when `sysyc bench` measures them), the ratio sysyc / gcc:
# geomean, total (sum over sum), median, worst, the distribution and the worst ten.
# Results: $GEN_JSON (default perf/results/generated-<commit>.json). BENCH_JOBS (default 2) sets
# `sysyc bench -j`; extra arguments after `--` go to `sysyc bench`.
set -euo pipefail
cd "$(dirname "$0")/.."
COUNT=${1:-300}
FIRST=${2:-1}
shift $(($# > 2 ? 2 : $#))
[ "${1:-}" = "--" ] && shift
GEN_DIR=${GEN_DIR:-target/bench-generated/programs}
JOBS=${BENCH_JOBS:-2}
COMMIT=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
GEN_JSON=${GEN_JSON:-perf/results/generated-$COMMIT.json}
LAST=target/bench-generated/last.json

scripts/setup.sh
cargo build --release --quiet
SYSYC=target/release/sysyc

# Programs of other seed ranges (an earlier, larger run) would be measured too: start clean
# when the range differs.
RANGE="$FIRST $COUNT"
if [ -f "$GEN_DIR/.range" ] && [ "$(cat "$GEN_DIR/.range")" != "$RANGE" ]; then
    rm -rf "$GEN_DIR"
fi
mkdir -p "$GEN_DIR" "$(dirname "$GEN_JSON")"
echo "$RANGE" >"$GEN_DIR/.range"
$SYSYC gen -o "$GEN_DIR" --profile programs --first "$FIRST" --count "$COUNT" --expect -j "$JOBS"

# The gcc half of the last run is reused, unless FRESH_REFERENCE is set or this sysyc bench
# estimates cycles and the saved run has none.
REUSE=()
if [ -f "$LAST" ] && [ -z "${FRESH_REFERENCE:-}" ]; then
    if $SYSYC bench --help 2>&1 | grep -qi cycles && ! grep -q '"cycles"' "$LAST"; then
        echo "measuring gcc again: the saved reference has no cycles" >&2
    else
        REUSE=(--reference-from "$LAST")
    fi
fi
set +e
$SYSYC bench "$GEN_DIR" --reference gcc "${REUSE[@]}" --runs 0 -j "$JOBS" --save "$GEN_JSON" "$@" \
    >target/bench-generated/table.txt
status=$?
set -e
cp "$GEN_JSON" "$LAST"
python3 scripts/bench_summary.py "$GEN_JSON"
echo "table: target/bench-generated/table.txt; JSON: $GEN_JSON"
exit $status
