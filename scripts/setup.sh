#!/usr/bin/env bash
# Installs what sysyc's tests and tools need, only what is missing; quiet when all is present.
#   qemu-user (qemu-riscv64), gcc-riscv64-linux-gnu + libc6-dev-riscv64-cross (assemble, link),
#   clang-14 + llvm-14 (--emit-llvm tests, clang reference), gcc (host runtime, qemu plugin).
# Options: --bench also installs `time` (GNU time, for peak memory in bench_compile.sh).
# Safe to rerun; uses apt-get (as root, or through sudo), running `apt-get update` once first.
set -euo pipefail

bench=0
for a in "$@"; do
  case "$a" in
    --bench) bench=1 ;;
    *) echo "usage: scripts/setup.sh [--bench]" >&2; exit 2 ;;
  esac
done

have() { command -v "$1" >/dev/null 2>&1; }
need=()
have qemu-riscv64 || need+=(qemu-user)
have riscv64-linux-gnu-gcc || need+=(gcc-riscv64-linux-gnu)
[ -e /usr/riscv64-linux-gnu/lib/libc.a ] || need+=(libc6-dev-riscv64-cross)
have clang-14 || need+=(clang-14)
{ have llc-14 && have lli-14; } || need+=(llvm-14)
have gcc || need+=(gcc)
have ar || need+=(binutils)
if [ "$bench" = 1 ] && [ ! -x /usr/bin/time ]; then need+=(time); fi

if [ "${#need[@]}" -gt 0 ]; then
  echo "setup: installing ${need[*]}" >&2
  if ! have apt-get; then
    echo "setup: no apt-get here; please install: ${need[*]}" >&2
    exit 1
  fi
  sudo=()
  if [ "$(id -u)" -ne 0 ]; then sudo=(sudo); fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -qq >/dev/null
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  # Check again: a package that installed but did not provide the tool is an error here.
  for t in qemu-riscv64 riscv64-linux-gnu-gcc clang-14 llc-14 lli-14 gcc; do
    have "$t" || { echo "setup: $t still missing after install" >&2; exit 1; }
  done
fi

if ! have cargo; then
  echo "setup: cargo not found: install a Rust toolchain (rustup) first" >&2
  exit 1
fi
