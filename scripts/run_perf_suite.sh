#!/usr/bin/env bash
# Compiles and runs every performance case (performance/ and final_performance/) under qemu,
# checking its output, and records per-case times (compile, run, and the program's own timer)
# in a table and in perf/results/perf-suite-<date>.json. Exit 1 if any case fails.
#   [JOBS=N] [TIMEOUT=S] scripts/run_perf_suite.sh [-O0|-O1|-O2] [--filter PAT]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo build --release --quiet
suites="${SYSY_SUITES:-../shared/suites}"
mkdir -p perf/results
json="perf/results/perf-suite-$(date -u +%Y%m%d-%H%M%S).json"
set +e
target/release/sysyc test "$suites/performance" "$suites/final_performance" \
  --timeout "${TIMEOUT:-600}" -j "${JOBS:-1}" --times --json "$json" "$@"
code=$?
set -e
echo "per-case results: $json"
exit $code
