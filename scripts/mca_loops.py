#!/usr/bin/env python3
"""Innermost loops of two compilers' assembly, costed by llvm-mca-14 for the SiFive U74.

    scripts/mca_loops.py OLD_SYSYC NEW_SYSYC CASE.sy... [--opt -O2] [--csv FILE]

Compiles each case with both compilers, finds the innermost loops of each function (a label
and the last backward branch or jump to it, with no other such loop inside and no call), and
runs each loop's text through `llvm-mca-14 -mtriple=riscv64 -mcpu=sifive-u74
-iterations=100`. Loops are matched by function and label (labels are block numbers, the same
for both compilers when only scheduling or layout differ). Prints cycles per iteration before
and after, per loop and as a distribution of the ratios (after / before). Static only: loops
are not weighted by how often they run.
"""
import math
import os
import re
import subprocess
import sys
import tempfile

BRANCH = re.compile(r"^\t(beq|bne|blt|bge|beqz|bnez|j)\t(?:.*, )?(\.L\S+)$")


def loops(asm):
    """{(function, label): [lines]} for the innermost loops of `asm`."""
    out = {}
    func, lines = None, []

    def flush():
        if func is None:
            return
        labels = {l[:-1]: k for k, l in enumerate(lines) if l.startswith(".L") and l.endswith(":")}
        cands = {}
        for k, l in enumerate(lines):
            m = BRANCH.match(l)
            if m and m.group(2) in labels and labels[m.group(2)] < k:
                cands[m.group(2)] = (labels[m.group(2)], k)  # the last back edge wins
        spans = sorted(cands.items(), key=lambda x: x[1])
        for lab, (s, e) in spans:
            inner = any(s <= s2 and e2 <= e and (s2, e2) != (s, e) for _, (s2, e2) in spans)
            body = lines[s : e + 1]
            if inner or any(l.startswith("\tcall") for l in body):
                continue
            out[(func, lab)] = body

    for l in asm.splitlines():
        if l.startswith("\t.type") and "@function" in l:
            flush()
            func, lines = l.split()[1].rstrip(","), []
        elif func is not None:
            lines.append(l)
    flush()
    return out


def mca(body):
    with tempfile.NamedTemporaryFile("w", suffix=".s", delete=False) as f:
        f.write("\n".join(body) + "\n")
        path = f.name
    try:
        r = subprocess.run(
            ["llvm-mca-14", "-mtriple=riscv64", "-mcpu=sifive-u74", "-iterations=100", path],
            capture_output=True,
            text=True,
        )
        m = re.search(r"Total Cycles:\s+(\d+)", r.stdout)
        return int(m.group(1)) / 100 if m else None
    finally:
        os.unlink(path)


def compile(cc, src, opt):
    with tempfile.NamedTemporaryFile(suffix=".s", delete=False) as f:
        out = f.name
    try:
        r = subprocess.run([cc, "-S", opt, "-o", out, src], capture_output=True)
        return open(out).read() if r.returncode == 0 else None
    finally:
        os.unlink(out)


def main():
    args = sys.argv[1:]
    opt, csv = "-O2", None
    if "--opt" in args:
        k = args.index("--opt")
        opt = args[k + 1]
        del args[k : k + 2]
    if "--csv" in args:
        k = args.index("--csv")
        csv = args[k + 1]
        del args[k : k + 2]
    old, new, cases = args[0], args[1], args[2:]
    rows = []
    for src in cases:
        a, b = compile(old, src, opt), compile(new, src, opt)
        if a is None or b is None:
            print(f"{src}: compile failed", file=sys.stderr)
            continue
        la, lb = loops(a), loops(b)
        name = os.path.basename(src)[:-3]
        for key in sorted(set(la) & set(lb)):
            ca, cb = mca(la[key]), mca(lb[key])
            if ca and cb:
                rows.append((name, key[0], key[1], len(la[key]), len(lb[key]), ca, cb))
        for key in sorted(set(la) ^ set(lb)):
            side = "before" if key in la else "after"
            print(f"{name} {key[0]} {key[1]}: only {side}", file=sys.stderr)
    if csv:
        with open(csv, "w") as f:
            f.write("case,function,label,lines_before,lines_after,cycles_before,cycles_after\n")
            for r in rows:
                f.write(",".join(map(str, r)) + "\n")
    ratios = sorted(r[6] / r[5] for r in rows)
    if not ratios:
        print("no loops")
        return
    n = len(ratios)
    q = lambda p: ratios[min(n - 1, int(p * n))]
    geo = math.exp(sum(math.log(x) for x in ratios) / n)
    print(f"loops: {n}  geomean after/before: {geo:.4f}")
    print(
        f"min {ratios[0]:.3f}  p10 {q(0.1):.3f}  p25 {q(0.25):.3f}  median {q(0.5):.3f}  "
        f"p75 {q(0.75):.3f}  p90 {q(0.9):.3f}  max {ratios[-1]:.3f}"
    )
    print(
        f"faster: {sum(x < 0.999 for x in ratios)}  same: {sum(abs(x - 1) <= 0.001 for x in ratios)}"
        f"  slower: {sum(x > 1.001 for x in ratios)}"
    )
    print(f"total cycles/iteration: {sum(r[5] for r in rows):.1f} -> {sum(r[6] for r in rows):.1f}")
    worst = sorted(rows, key=lambda r: r[5] / r[6])[:8]
    for r in worst:
        print(f"  slower: {r[0]} {r[1]} {r[2]}: {r[5]:.2f} -> {r[6]:.2f}")


if __name__ == "__main__":
    main()
