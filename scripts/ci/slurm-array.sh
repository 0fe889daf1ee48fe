#!/usr/bin/env bash
# Slurm job array: one task per shard. Slurm sets SLURM_ARRAY_TASK_ID (here 1..4),
# SLURM_ARRAY_TASK_MIN and SLURM_ARRAY_TASK_COUNT, which sysyc reads as --shard
# (ID - MIN + 1)/COUNT. A dependent job merges the results:
#   jobid=$(sbatch --parsable scripts/ci/slurm-array.sh)
#   sbatch --dependency=afterany:$jobid --wrap \
#     'sysyc merge results/test-*.json -o all-tests.json --junit all-tests.xml &&
#      sysyc merge results/bench-*.json -o all-bench.json --html report.html'
#SBATCH --job-name=sysyc-suites
#SBATCH --array=1-4
#SBATCH --cpus-per-task=2
#SBATCH --time=01:00:00
#SBATCH --output=results/slurm-%A_%a.log
set -euo pipefail
suites="${SYSY_SUITES:-../shared/suites}"
export SYSY_REQUIRE_SUITES=1
mkdir -p results
status=0
sysyc test "$suites/functional" "$suites/hidden_functional" -j "${SLURM_CPUS_PER_TASK:-2}" \
    --json "results/test-$SLURM_ARRAY_TASK_ID.json" \
    --junit "results/test-$SLURM_ARRAY_TASK_ID.xml" || status=$?
sysyc bench "$suites/performance" --runs 3 --reference gcc \
    --save "results/bench-$SLURM_ARRAY_TASK_ID.json" || status=$?
exit "$status"
