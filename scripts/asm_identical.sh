#!/usr/bin/env bash
# Checks that two sysyc binaries generate byte-identical assembly for every public case.
#
#   scripts/asm_identical.sh OLD_BIN NEW_BIN [-O2] [-j N]
#
# Compiles every `*.sy` of the suites (`SYSY_SUITES`, default ../shared/suites) with both
# binaries and the given flags (default -O2), and compares the outputs byte for byte. Lists
# the cases that differ or fail to compile with one binary; exits 1 if any does.
set -uo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 2 ]; then
  sed -n '2,8p' "$0"
  exit 2
fi
old=$1
new=$2
shift 2
flags=("$@")
[ ${#flags[@]} -eq 0 ] && flags=(-O2)
suites="${SYSY_SUITES:-../shared/suites}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
bad=0
for f in "$suites"/*/*.sy; do
  n=$((n + 1))
  "$old" -S -w "${flags[@]}" -o "$tmp/old.s" "$f" 2> /dev/null || echo "old binary failed: $f"
  "$new" -S -w "${flags[@]}" -o "$tmp/new.s" "$f" 2> /dev/null || echo "new binary failed: $f"
  if ! cmp -s "$tmp/old.s" "$tmp/new.s"; then
    echo "differs: $f"
    bad=$((bad + 1))
  fi
  rm -f "$tmp/old.s" "$tmp/new.s"
done
echo "$n cases, $bad differ (flags: ${flags[*]})"
[ "$bad" -eq 0 ]
