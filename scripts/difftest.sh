#!/usr/bin/env bash
# Differential testing at scale: scripts/difftest.sh [N] [START]
# Generates N programs (seeds START..START+N, default 2000 from 1000, above the seeds the CI test
# uses), runs each through the host C compiler (the oracle) and through sysyc -O0 / -O2 on
# RISC-V under qemu and -O2 --emit-llvm with clang, and compares stdout and exit code.
# Failing programs land in target/difftest/seedN.sy with the failure in seedN.txt; reduce one
# with scripts/reduce.sh target/difftest/seedN.sy. SYSYC_DIFF_JOBS sets the parallelism
# (default: one per core).
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-2000}
START=${2:-1000}
mkdir -p target/difftest
SYSYC_DIFF_N=$N SYSYC_DIFF_START=$START \
    cargo test --release --test differential -- --ignored --exact differential_many --nocapture
