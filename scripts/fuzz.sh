#!/usr/bin/env bash
# Coverage-guided fuzzing of sysyc with cargo-fuzz (libFuzzer): scripts/fuzz.sh [SECONDS] [TARGET...]
#
# Targets (fuzz/fuzz_targets/): `frontend` (bytes -> lexer, parser, sema: sysyc::frontend::check)
# and `compile` (bytes -> sysyc::driver::compile at -O2, RISC-V asm or LLVM IR, verifier on).
# Each target runs SECONDS (default 60) with a 20 s per-input timeout and a 4 GiB RSS limit.
# Only stable Rust exists here, so cargo-fuzz runs with RUSTC_BOOTSTRAP=1; it is installed with
# `cargo install cargo-fuzz` when missing. Builds use -O with debug assertions (so arithmetic
# overflow in the compiler panics) and no sanitizer (safe Rust; a panic is what we look for).
#
# Seed corpus (fuzz/corpus/TARGET, created on first run): the shared suites' programs under 16 KiB,
# fixtures/, and generated programs (sysyc::fuzzgen). Crashes, timeouts and OOMs that libFuzzer
# saves under fuzz/artifacts/TARGET/ are copied to fixtures/hostile/fuzz-TARGET-HASH.sy, which
# tests/hostile.rs then compiles in every mode. Prints executions per second for each target.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
SECONDS_EACH=${1:-60}
shift || true
TARGETS=("$@")
[ ${#TARGETS[@]} -eq 0 ] && TARGETS=(frontend compile)
SUITES=${SYSY_SUITES:-$ROOT/../shared/suites}
export RUSTC_BOOTSTRAP=1

if ! cargo fuzz --help >/dev/null 2>&1; then
    echo "installing cargo-fuzz" >&2
    cargo install cargo-fuzz
fi

seed_corpus() {
    local dir=$1
    mkdir -p "$dir"
    [ -n "$(ls -A "$dir" 2>/dev/null)" ] && return 0
    echo "seeding $dir" >&2
    local n=0
    for f in "$SUITES"/functional/*.sy "$SUITES"/hidden_functional/*.sy "$ROOT"/fixtures/*/*.sy; do
        [ -f "$f" ] || continue
        [ "$(stat -c %s "$f")" -le 16384 ] || continue
        cp "$f" "$dir/$(basename "$(dirname "$f")")_$(basename "$f")"
        n=$((n + 1))
    done
    # Generated programs: valid, and rich in what the optimizer sees.
    cargo test --release --test differential --no-run >/dev/null 2>&1 || true
    local bin
    bin=$(ls -t target/release/deps/differential-* 2>/dev/null | grep -v '\.d$' | head -1 || true)
    if [ -n "$bin" ]; then
        for s in $(seq 1000000 1000039); do
            SYSYC_GEN_SEED=$s SYSYC_GEN_OUT="$dir/gen$s.sy" "$bin" --ignored --exact print_program -q >/dev/null 2>&1 || true
            n=$((n + 1))
        done
    fi
    echo "$n seed inputs" >&2
}

cd fuzz
cargo fuzz build -O -a -s none >&2
status=0
for t in "${TARGETS[@]}"; do
    corpus=corpus/$t
    seed_corpus "$ROOT/fuzz/$corpus"
    mkdir -p "artifacts/$t"
    log=$(mktemp)
    echo "== fuzzing $t for ${SECONDS_EACH}s" >&2
    set +e
    cargo fuzz run -O -a -s none "$t" "$corpus" -- \
        -max_total_time="$SECONDS_EACH" -timeout=20 -rss_limit_mb=4096 -max_len=16384 \
        -dict=sysy.dict -print_final_stats=1 -close_fd_mask=3 2>&1 | tee "$log" | grep -E "^#[0-9]+.*(pulse|DONE)|ERROR|panicked|stat::" >&2
    rc=${PIPESTATUS[0]}
    set -e
    execs=$(grep -oE "stat::number_of_executed_units: *[0-9]+" "$log" | grep -oE "[0-9]+$" | tail -1 || true)
    secs=$(grep -oE "Done [0-9]+ runs in [0-9]+ second" "$log" | grep -oE "in [0-9]+" | grep -oE "[0-9]+" | tail -1 || true)
    if [ -n "$execs" ] && [ -n "$secs" ] && [ "$secs" -gt 0 ]; then
        echo "$t: $execs executions in ${secs}s = $((execs / secs)) exec/s" >&2
    elif [ -n "$execs" ]; then
        echo "$t: $execs executions in about ${SECONDS_EACH}s = $((execs / SECONDS_EACH)) exec/s" >&2
    fi
    for a in artifacts/"$t"/*; do
        [ -f "$a" ] || continue
        h=$(sha1sum "$a" | cut -c1-12)
        dest="$ROOT/fixtures/hostile/fuzz-$t-$h.sy"
        if [ ! -f "$dest" ]; then
            cp "$a" "$dest"
            echo "NEW FINDING: $a -> fixtures/hostile/fuzz-$t-$h.sy" >&2
        fi
    done
    if [ "$rc" -ne 0 ]; then
        echo "$t: libFuzzer stopped with status $rc (see the artifact above)" >&2
        status=1
    fi
    rm -f "$log"
done
exit $status
