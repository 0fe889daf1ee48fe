#!/usr/bin/env python3
"""A `sysyc bench --reference gcc --save` JSON beside ../shared/anchors/cmmc-vs-gcc-O2.csv.

Prints per case: our ratios to gcc -O2 (executed instructions, U74 cycles by our in-order model,
by llvm-mca) and CMMC's three beside them, then geomeans, the cases above 1.0 and the worst ones.

Usage: perf/anchors_table.py RESULT.json... [--anchors ANCHORS.csv] [--markdown]
(several JSON files are read as one run: e.g. one saved per case)
"""
import csv
import json
import math
import os
import sys


def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def main():
    argv = sys.argv[1:]
    anchors_arg = None
    if "--anchors" in argv:
        i = argv.index("--anchors")
        anchors_arg = argv[i + 1] if i + 1 < len(argv) else None
        del argv[i:i + 2]
    args = [a for a in argv if not a.startswith("--")]
    markdown = "--markdown" in argv
    if not args:
        print(__doc__, file=sys.stderr)
        return 2
    here = os.path.dirname(os.path.abspath(__file__))
    # Default: ../shared/anchors beside the repository (or beside the worktrees' parent).
    candidates = [os.path.join(here, *[".."] * up, "shared", "anchors", "cmmc-vs-gcc-O2.csv")
                  for up in (2, 3)]
    anchors = anchors_arg or next(
        (c for c in candidates if os.path.exists(c)), candidates[0])
    cases = []
    for path in args:
        cases += json.load(open(path))["cases"]
    cmmc = {}
    with open(anchors) as f:
        for row in csv.DictReader(f):
            cmmc[f"{row['suite']}/{row['case']}"] = (
                float(row["cmmc_over_gcc_insns"]),
                float(row["cmmc_over_gcc_cycles_mca"]),
                float(row["cmmc_over_gcc_cycles_inorder"]),
            )
    rows = []
    for c in sorted(cases, key=lambda c: c["name"]):
        s, r = c["sysyc"], c.get("reference") or {}
        def ratio(k):
            a, b = s.get(k), r.get(k)
            if s.get("status") != "ok" or r.get("status") != "ok" or not a or not b:
                return None
            return a / b
        rows.append((c["name"], ratio("insns"), ratio("cycles"), ratio("cycles_mca"),
                     cmmc.get(c["name"]), s.get("status")))
    fmt = (lambda x: "-" if x is None else f"{x:.3g}" if x < 0.01 else f"{x:.3f}")
    head = ["case", "insns", "cycles", "mca", "cmmc insns", "cmmc cycles", "cmmc mca"]
    if markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
    else:
        print(f"{head[0]:<42} " + " ".join(f"{h:>11}" for h in head[1:]))
    for name, i, cy, m, cm, status in rows:
        cells = [fmt(i), fmt(cy), fmt(m)]
        cells += [fmt(cm[0]), fmt(cm[2]), fmt(cm[1])] if cm else ["-"] * 3
        if status != "ok":
            cells.append(f"[{status}]")
        if markdown:
            print(f"| {name} | " + " | ".join(cells) + " |")
        else:
            print(f"{name:<42} " + " ".join(f"{x:>11}" for x in cells))
    both = [r for r in rows if r[4] and r[2] is not None and r[3] is not None]
    print()
    print(f"cases: {len(rows)}, with all ratios and an anchor: {len(both)}")
    for label, k, ck in [("insns", 1, 0), ("cycles (model)", 2, 2), ("cycles (mca)", 3, 1)]:
        ours = [r[k] for r in rows if r[k] is not None]
        above = sum(1 for x in ours if x > 1.0)
        theirs = [r[4][ck] for r in rows if r[4]]
        c_above = sum(1 for x in theirs if x > 1.0)
        print(f"geomean {label:<15} sysyc {geomean(ours):.3f} ({above} above 1.0, max "
              f"{max(ours) if ours else float('nan'):.3f})   cmmc {geomean(theirs):.3f} "
              f"({c_above} above 1.0)")
    faster = sum(1 for r in both if r[4][2] < r[2])
    print(f"CMMC needs fewer cycles (model) than sysyc on {faster} of {len(both)} cases; "
          f"by mca on {sum(1 for r in both if r[4][1] < r[3])}")
    worst = sorted((r for r in rows if r[2] is not None), key=lambda r: -r[2])[:15]
    print("worst by the model: " + ", ".join(f"{r[0].split('/')[-1]} {r[2]:.2f}" for r in worst))
    return 0


if __name__ == "__main__":
    sys.exit(main())
