#!/usr/bin/env bash
# Fails fast, naming what is missing, when the test suites or the tools the tests need are
# absent: the shared suites ($SYSY_SUITES, default ../shared/suites: functional,
# hidden_functional, performance, final_performance), then, after scripts/setup.sh has tried to
# install them, qemu-riscv64, the riscv64 cross gcc and libc, clang-14 and llvm-14, gcc.
# .ci/run runs it before building anything; the tests themselves apply the same rule when
# SYSY_REQUIRE_SUITES=1 (src/suite/require.rs).
set -uo pipefail
cd "$(dirname "$0")/../.."

suites="${SYSY_SUITES:-../shared/suites}"
missing=()
for s in functional hidden_functional performance final_performance; do
  if ! compgen -G "$suites/$s/*.sy" >/dev/null; then
    missing+=("$suites/$s")
  fi
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "preflight: MISSING test suites (no .sy files): ${missing[*]}" >&2
  echo "preflight: put the shared suites at ../shared/suites or set SYSY_SUITES=/path/to/suites" >&2
  exit 1
fi

scripts/setup.sh || echo "preflight: scripts/setup.sh failed; checking what is missing" >&2
tools=()
for t in qemu-riscv64 riscv64-linux-gnu-gcc clang-14 llc-14 lli-14 gcc ar cargo; do
  command -v "$t" >/dev/null 2>&1 || tools+=("$t")
done
[ -e /usr/riscv64-linux-gnu/lib/libc.a ] || tools+=("riscv64 libc (libc6-dev-riscv64-cross)")
if [ "${#tools[@]}" -gt 0 ]; then
  echo "preflight: MISSING tools: ${tools[*]} (scripts/setup.sh installs them with apt-get)" >&2
  exit 1
fi
n=$(find "$suites" -name '*.sy' | wc -l)
echo "preflight: suites at $suites ($n programs) and all tools present"
