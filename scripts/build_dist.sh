#!/usr/bin/env bash
# Builds the shipped compiler, `target/dist/sysyc`: the release build with whole-program LTO in
# one codegen unit (`[profile.dist]`), optimized with a profile of its own runs (PGO).
#
#   scripts/build_dist.sh [--no-pgo] [--force]
#
# Steps: an instrumented build (target/pgo-gen); training runs of it on programs of our own (the
# `programs` and `fuzz` generators of `sysyc gen`, a `perf/gen_large.py` program, the fixtures),
# at -O2, -Og and -O0, in parallel as users run it; the profile merged by the toolchain's
# `llvm-profdata` (rustup's `llvm-tools` component, added when missing); the final build with
# the profile. Nothing of the contest's suites and none of the benchmark inputs is used for
# training. The output of the compiler does not depend on how it was built: the tests check
# the dist binary's assembly against the release binary's (`scripts/test.sh --dist`).
#
# `--no-pgo` (or no way to get `llvm-profdata`) builds the dist profile without a profile.
# Rerun-safe: does nothing when target/dist/sysyc is newer than every source, Cargo.toml,
# Cargo.lock and this script, unless `--force`.
set -euo pipefail
cd "$(dirname "$0")/.."
pgo=1
force=0
for a in "$@"; do
  case "$a" in
    --no-pgo) pgo=0 ;;
    --force) force=1 ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "build_dist: unknown argument $a" >&2; exit 2 ;;
  esac
done
target="${CARGO_TARGET_DIR:-target}"
bin="$target/dist/sysyc"
if [ "$force" = 0 ] && [ -x "$bin" ] \
  && [ -z "$(find src Cargo.toml Cargo.lock "$0" -newer "$bin" -print -quit)" ]; then
  echo "build_dist: $bin is up to date"
  exit 0
fi

profdata_tool() {
  local bin
  bin="$(rustc --print sysroot)/lib/rustlib/$(rustc -vV | sed -n 's/^host: //p')/bin/llvm-profdata"
  if [ ! -x "$bin" ] && command -v rustup > /dev/null; then
    rustup component add llvm-tools > /dev/null 2>&1 || true
  fi
  [ -x "$bin" ] && echo "$bin"
}

if [ "$pgo" = 1 ]; then
  tool=$(profdata_tool) || tool=
  if [ -z "$tool" ]; then
    echo "build_dist: no llvm-profdata for this toolchain (rustup component llvm-tools): building without PGO" >&2
    pgo=0
  fi
fi
if [ "$pgo" = 0 ]; then
  RUSTFLAGS= cargo build --profile dist --quiet
  echo "build_dist: $bin (LTO, no PGO)"
  exit 0
fi

work="$target/pgo"
rm -rf "$work/raw" "$work/train"
mkdir -p "$work/raw" "$work/train"
echo "build_dist: instrumented build"
RUSTFLAGS="-Cprofile-generate=$(pwd)/$work/raw" \
  cargo build --profile dist --quiet --target-dir "$target/pgo-gen"
gen="$target/pgo-gen/dist/sysyc"

echo "build_dist: training runs"
"$gen" gen -o "$work/train/programs" --first 100001 --count 120 > /dev/null 2>&1
"$gen" gen -o "$work/train/fuzz" --profile fuzz --first 100001 --count 60 > /dev/null 2>&1
python3 perf/gen_large.py --lines 20000 --seed 100001 -o "$work/train/large.sy"
for o in 2 1 0; do
  "$gen" build --opt-level "$o" -o "$work/train/out-O$o" "$work/train/programs" "$work/train/fuzz" \
    fixtures > /dev/null 2>&1 || true
done
for o in -O2 -O0; do
  "$gen" -S -w "$o" -o "$work/train/large.s" "$work/train/large.sy"
done
# Diagnostics: the invalid fixtures one by one (each stops at its errors).
for f in fixtures/invalid/*.sy fixtures/warn/*.sy; do
  "$gen" -S -o "$work/train/diag.s" "$f" > /dev/null 2>&1 || true
done

profile="$work/sysyc.profdata"
"$tool" merge -o "$profile" "$work/raw"
# The profile's digest in the flags: a new profile rebuilds everything it optimizes.
digest=$(cksum < "$profile" | cut -d' ' -f1)
cp "$profile" "$work/sysyc-$digest.profdata"
echo "build_dist: optimized build"
RUSTFLAGS="-Cprofile-use=$(pwd)/$work/sysyc-$digest.profdata -Cllvm-args=-pgo-warn-missing-function=false" \
  cargo build --profile dist --quiet
find "$work" -name 'sysyc-*.profdata' ! -name "sysyc-$digest.profdata" -delete
touch "$bin"
echo "build_dist: $bin (LTO, PGO)"
