#!/usr/bin/env bash
# Compile time of a whole suite: sysyc -S -O2 against gcc -O2 -S (RISC-V, the .sy read as C with
# -include runtime/sylib.h; clang -O2 stands in for the files gcc rejects, as in `sysyc bench`).
# Each file is compiled by both tools back to back, ROUNDS times, and the CPU time (user + sys,
# from GNU time) is summed per tool: CPU time is steadier than wall time on a shared machine.
#
#   scripts/bench_compile_suite.sh [--rounds N] [--release] [DIR...]
#                                  (default: the performance suites)
#
# sysyc is the shipped build, target/dist/sysyc (scripts/build_dist.sh: LTO and PGO, built when
# missing or stale); `--release` measures target/release/sysyc instead.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=3
profile=dist
dirs=()
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    --release) profile=release; shift ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) dirs+=("$1"); shift ;;
  esac
done
suites="${SYSY_SUITES:-../shared/suites}"
[ "${#dirs[@]}" -gt 0 ] || dirs=("$suites/performance" "$suites/final_performance")
scripts/setup.sh --bench
if [ "$profile" = dist ]; then
  scripts/build_dist.sh
else
  cargo build --release --quiet
fi
sysyc="${CARGO_TARGET_DIR:-target}/$profile/sysyc"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cpu() { # prints user+sys seconds of the command, or FAIL
  if /usr/bin/time -f '%U %S' -o "$tmp/t" "$@" > /dev/null 2> "$tmp/err"; then
    awk '{ printf "%.3f", $1 + $2 }' "$tmp/t"
  else
    echo FAIL
  fi
}
gcc_flags=(-O2 -S -w -x c -march=rv64gc -mabi=lp64d -include runtime/sylib.h)
total_s=0 total_r=0 n=0 clang_n=0
printf '%-48s %9s %9s %8s\n' file sysyc_s ref_s ratio
for d in "${dirs[@]}"; do
  for f in "$d"/*.sy; do
    s=0 r=0 ref=gcc
    for _ in $(seq "$rounds"); do
      a=$(cpu "$sysyc" -S -O2 -o "$tmp/a.s" "$f")
      b=$(cpu riscv64-linux-gnu-gcc "${gcc_flags[@]}" -o "$tmp/b.s" "$f")
      if [ "$b" = FAIL ]; then
        ref=clang
        b=$(cpu clang-14 --target=riscv64-linux-gnu -march=rv64gc -O2 -S -w -x c -include runtime/sylib.h -o "$tmp/b.s" "$f")
      fi
      [ "$a" != FAIL ] && [ "$b" != FAIL ] || { echo "$f: a compiler failed" >&2; exit 1; }
      s=$(awk -v x="$s" -v y="$a" 'BEGIN { print x + y }')
      r=$(awk -v x="$r" -v y="$b" 'BEGIN { print x + y }')
    done
    [ "$ref" = clang ] && clang_n=$((clang_n + 1))
    printf '%-48s %9.3f %9.3f %8s%s\n' "$(basename "$(dirname "$f")")/$(basename "$f")" "$s" "$r" \
      "$(awk -v a="$s" -v b="$r" 'BEGIN { printf "%.3f", (b > 0 ? a / b : 0) }')" \
      "$([ "$ref" = clang ] && echo '  (clang)')"
    total_s=$(awk -v x="$total_s" -v y="$s" 'BEGIN { print x + y }')
    total_r=$(awk -v x="$total_r" -v y="$r" 'BEGIN { print x + y }')
    n=$((n + 1))
  done
done
echo "files: $n ($clang_n with clang -O2 as the reference), rounds: $rounds"
echo "total CPU seconds: sysyc -O2 $total_s, reference -O2 $total_r"
awk -v a="$total_s" -v b="$total_r" 'BEGIN { printf "sysyc / reference compile time: %.4f\n", a / b }'
