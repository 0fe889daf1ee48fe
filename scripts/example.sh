#!/usr/bin/env bash
# End to end on the bundled example: installs missing tools, builds sysyc, compiles
# fixtures/example/hello.sy to RISC-V assembly, links it with our runtime, runs it under qemu
# and checks its output. Usage: scripts/example.sh [FILE.sy] [-O0|-O1|-O2]
set -euo pipefail
cd "$(dirname "$0")/.."
src=fixtures/example/hello.sy
opt=-O2
for a in "$@"; do
  case "$a" in
    -O*) opt="$a" ;;
    *) src="$a" ;;
  esac
done
scripts/setup.sh
cargo build --release --quiet
out=target/example
mkdir -p "$out"
name=$(basename "$src" .sy)

# The runtime library: built by sysyc on first use too; built here directly so this script
# shows every step.
rt=target/sysy-runtime/riscv64
if [ ! -f "$rt/libsysy.a" ] || [ runtime/sylib.c -nt "$rt/libsysy.a" ] || [ runtime/sylib.h -nt "$rt/libsysy.a" ]; then
  mkdir -p "$rt"
  riscv64-linux-gnu-gcc -O2 -c runtime/sylib.c -o "$rt/sylib.o"
  riscv64-linux-gnu-ar rcs "$rt/libsysy.a" "$rt/sylib.o"
fi

echo "+ sysyc -S -o $out/$name.s $src $opt"
target/release/sysyc -S -o "$out/$name.s" "$src" "$opt"
echo "+ riscv64-linux-gnu-gcc -static -o $out/$name $out/$name.s $rt/libsysy.a"
riscv64-linux-gnu-gcc -static -o "$out/$name" "$out/$name.s" "$rt/libsysy.a"
input=/dev/null
[ -f "${src%.sy}.in" ] && input="${src%.sy}.in"
echo "+ qemu-riscv64 $out/$name < $input"
set +e
qemu-riscv64 "$out/$name" < "$input" > "$out/$name.stdout"
code=$?
set -e
cat "$out/$name.stdout"
echo "(exit code $code)"
expected="${src%.sy}.out"
if [ -f "$expected" ]; then
  # The suites' rule: stdout, a newline if missing, the exit code; trailing whitespace ignored.
  norm() { sed -e 's/\r$//' -e 's/[[:space:]]*$//' | sed -e ':a' -e '/^\n*$/{$d;N;ba' -e '}'; }
  { cat "$out/$name.stdout"; [ -s "$out/$name.stdout" ] && [ -n "$(tail -c1 "$out/$name.stdout")" ] && echo; echo "$code"; } | norm > "$out/$name.actual"
  norm < "$expected" > "$out/$name.expected"
  if diff -u "$out/$name.expected" "$out/$name.actual"; then
    echo "output matches $expected"
  else
    echo "output differs from $expected" >&2
    exit 1
  fi
fi
