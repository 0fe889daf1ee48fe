#!/usr/bin/env bash
# The loop-kernel benchmark: every perf/kernels/*.sy (PolyBench-style kernels written for sysyc:
# matrix products, stencils, a triangular solve, LU, Floyd-Warshall, reductions, a convolution,
# a histogram with a counting sort; int and float) compiled by sysyc -O2 and by riscv64 gcc -O2,
# run under qemu with their .in, outputs checked against .out, and compared in estimated U74
# cycles (our model and llvm-mca) and executed instructions. Prints the per-kernel table and
# the distribution of the ratios (scripts/bench_summary.py); the JSON goes to $KERNELS_JSON
# (default perf/results/kernels-<commit>.json). Extra arguments go to `sysyc bench`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo build --release --quiet
COMMIT=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
KERNELS_JSON=${KERNELS_JSON:-perf/results/kernels-$COMMIT.json}
target/release/sysyc bench perf/kernels --reference gcc --runs 0 -j "${BENCH_JOBS:-2}" \
    --save "$KERNELS_JSON" "$@"
python3 scripts/bench_summary.py "$KERNELS_JSON"
