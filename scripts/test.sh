#!/usr/bin/env bash
# The one test command: installs missing tools, checks formatting and clippy (no warnings),
# then builds and runs every test in release mode (the suites run many programs; the IR
# verifier stays on in the tests), and compiles the fixture programs and public suites with a
# debug build, and checks that the shipped build (scripts/build_dist.sh: LTO and PGO) writes the
# same assembly as the release build. All test binaries run even when one fails, so a run
# reports every failure.
# Extra arguments go to `cargo test`, e.g. `scripts/test.sh --test suites functional_o2`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo fmt --check
cargo clippy --release --all-targets --quiet -- -D warnings
cargo test --release --no-fail-fast "$@"
# A debug build checks more on every compile (each analysis request against a fresh
# computation, the debug assertions): it compiles our fixture programs and the public suites
# at -O0, -O1 and -O2 (about two minutes with its build). Skipped when arguments select tests.
if [ $# -eq 0 ]; then
  cargo build --quiet
  target="${CARGO_TARGET_DIR:-target}"
  suites="${SYSY_SUITES:-../shared/suites}"
  dirs=(fixtures/sysy)
  if [ -d "$suites" ]; then
    dirs+=("$suites")
  else
    echo "test.sh: SKIPPING the public suites in the debug build: none at $suites" >&2
  fi
  for level in 0 1 2; do
    log="$target/debug-compile-O$level.log"
    if ! "$target/debug/sysyc" build --opt-level "$level" -o "$target/debug-compile" \
      "${dirs[@]}" > "$log" 2>&1; then
      grep -v '\] ok ' "$log" | tail -60 >&2
      echo "test.sh: the debug build failed to compile some programs at -O$level (above)" >&2
      exit 1
    fi
    grep '^built ' "$log"
  done
fi
# The shipped compiler (LTO, PGO; about five minutes to build on two cores) must write what the
# release build writes: the fixtures and the public suites at -O2 and -O0, byte for byte.
# SYSYC_SKIP_DIST=1 skips this check on a developer's machine (loudly); CI always runs it.
skip_dist=0
if [ "${SYSYC_SKIP_DIST:-0}" = 1 ]; then
  if [ "${SYSY_REQUIRE_SUITES:-0}" = 1 ]; then
    echo "test.sh: SYSYC_SKIP_DIST is ignored under CI (SYSY_REQUIRE_SUITES=1)" >&2
  else
    skip_dist=1
    echo "test.sh: SKIPPING the dist build check (SYSYC_SKIP_DIST=1)" >&2
  fi
fi
if [ $# -eq 0 ] && [ "$skip_dist" = 0 ]; then
  cargo build --release --quiet
  scripts/build_dist.sh
  for level in 2 0; do
    for build in release dist; do
      rm -rf "$target/dist-check/$build"
      if ! "$target/$build/sysyc" build --opt-level "$level" -o "$target/dist-check/$build" \
        "${dirs[@]}" > "$target/dist-check-$build.log" 2>&1; then
        grep -v '\] ok ' "$target/dist-check-$build.log" | tail -20 >&2
        echo "test.sh: the $build build failed to compile some programs at -O$level" >&2
        exit 1
      fi
    done
    if ! diff -r -q "$target/dist-check/release" "$target/dist-check/dist" >&2; then
      echo "test.sh: the dist build's assembly differs from the release build's at -O$level" >&2
      exit 1
    fi
    echo "dist build: assembly identical to the release build at -O$level ($(find "$target/dist-check/dist" -name '*.s' | wc -l) files)"
  done
fi
