#!/usr/bin/env bash
# The one test command: installs missing tools, checks formatting and clippy (no warnings),
# then builds and runs every test in release
# mode (the suites run many programs; the IR verifier stays on in the tests). All test binaries
# run even when one fails, so a run reports every failure.
# Extra arguments go to `cargo test`, e.g. `scripts/test.sh --test suites functional_o2`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo fmt --check
cargo clippy --release --all-targets --quiet -- -D warnings
cargo test --release --no-fail-fast "$@"
