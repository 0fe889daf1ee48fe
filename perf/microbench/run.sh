#!/bin/sh
# Microbenchmarks of the U74 model, cross-checked with llvm-mca-14 -mcpu=sifive-u74.
#
# 1. perf/microbench/*.s: loop bodies as LLVM-MCA-BEGIN/END regions, each costed in steady state
#    (the region repeated back to back) by our model and by llvm-mca (`sysyc cost`).
# 2. perf/microbench/programs/*.s: whole loops run under qemu with the block-profile plugin and
#    costed the way `sysyc bench` costs a run (steady state of each block, plus 1 cycle per
#    taken transfer and 3 per misprediction); printed per iteration, as the difference between
#    runs of 200000 and 100000 iterations so start-up and exit cancel.
#
# Usage: perf/microbench/run.sh [path/to/sysyc]   (default: target/release/sysyc)
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
sysyc=${1:-$root/target/release/sysyc}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "== loop bodies in steady state: cycles per iteration =="
"$sysyc" cost "$root"/perf/microbench/*.s

plugin="$work/insn_count.so"
${CC:-gcc} -O2 -shared -fPIC "$root/perf/qemu-plugin/insn_count.c" -o "$plugin"

# cost EXE ITER -> "cycles mca taken mispredicted" for one run
cost() {
    qemu-riscv64 -plugin "$plugin,outfile=$work/counts,profile=$work/profile" "$1" >/dev/null
    "$sysyc" cost --exe "$1" --profile "$work/profile" |
        awk '/^cycles:/ {c=$2} /^cycles \(mca\):/ {m=$3} /^taken:/ {t=$2} /^mispredicted:/ {p=$2}
             END {print c, m, t, p}'
}

echo
echo "== whole loops under qemu: per iteration (model, llvm-mca; branch terms included) =="
printf '%-20s %8s %8s %8s %8s\n' program model mca taken mispred
for s in "$root"/perf/microbench/programs/*.s; do
    name=$(basename "$s" .s)
    for n in 100000 200000; do
        riscv64-linux-gnu-gcc -static -Wa,--defsym,ITER=$n -x assembler-with-cpp "$s" -o "$work/$name.$n" 2>/dev/null ||
            riscv64-linux-gnu-gcc -static -Wa,--defsym,ITER=$n "$s" -o "$work/$name.$n"
        cost "$work/$name.$n" > "$work/$name.$n.cost"
    done
    paste "$work/$name.100000.cost" "$work/$name.200000.cost" |
        awk -v name="$name" '{printf "%-20s %8.2f %8.2f %8.2f %8.2f\n", name,
            ($5-$1)/100000, ($6-$2)/100000, ($7-$3)/100000, ($8-$4)/100000}'
done
