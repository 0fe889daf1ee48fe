#!/usr/bin/env bash
# Benchmarks the generated code: builds sysyc (release) and runs `sysyc bench` over the
# performance suites against gcc -O2, saving JSON and an HTML report under perf/results/.
# When perf/results/baseline.json exists it is the baseline (regressions -> exit 1).
#   scripts/bench.sh [extra sysyc bench options, e.g. --filter fft --runs 3]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo build --release --quiet
suites="${SYSY_SUITES:-../shared/suites}"
mkdir -p perf/results
name="bench-$(date -u +%Y%m%d-%H%M%S)-$(git rev-parse --short HEAD 2>/dev/null || echo nogit)"
args=(--reference gcc --runs "${RUNS:-1}" --save "perf/results/$name.json" --html "perf/results/$name.html")
[ -f perf/results/baseline.json ] && args+=(--baseline perf/results/baseline.json)
set +e
target/release/sysyc bench "$suites/performance" "$suites/final_performance" "${args[@]}" "$@"
code=$?
set -e
echo "saved perf/results/$name.json and perf/results/$name.html"
echo "(to make it the baseline: cp perf/results/$name.json perf/results/baseline.json)"
exit $code
