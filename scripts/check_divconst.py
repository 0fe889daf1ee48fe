#!/usr/bin/env python3
"""Finds integer divisions and remainders by a constant in compiled RISC-V assembly.

Usage: scripts/check_divconst.py DIR...   (the .s files of `sysyc build`, searched recursively)

A divisor counts as constant when it is `zero`, or a register whose every definition in the
function is an `li` (a hoisted constant feeding a division inside a loop counts too). Prints
each hit as `file:line: instruction` and exits 1 if there is any.
"""
import os
import re
import sys

DIVS = {"div", "divw", "divu", "divuw", "rem", "remw", "remu", "remuw"}
# Instructions whose first operand is not a destination register.
NO_DEST = re.compile(r"^(s[bhwd]|fs[wd]|b\w*|j|jr|ret|call|tail|fence|ecall)$")


def functions(lines):
    """Splits a file into functions at `.type NAME, @function` ... `.size NAME`."""
    cur = None
    for no, line in enumerate(lines, 1):
        if "@function" in line:
            cur = []
        elif cur is not None and line.strip().startswith(".size"):
            yield cur
            cur = None
        elif cur is not None:
            cur.append((no, line))


def hits(path):
    lines = open(path).read().splitlines()
    for body in functions(lines):
        defs = {}
        insts = []
        for no, line in body:
            s = line.split("#")[0].strip()
            if not s or s.endswith(":") or s.startswith("."):
                continue
            parts = s.replace(",", " ").split()
            op, args = parts[0], parts[1:]
            insts.append((no, op, args, s))
            if args and not NO_DEST.match(op):
                defs.setdefault(args[0], set()).add(op)
        for no, op, args, s in insts:
            if op in DIVS and len(args) == 3:
                d = args[2]
                if d == "zero" or defs.get(d) == {"li"}:
                    yield no, s


def main():
    found = 0
    for top in sys.argv[1:]:
        for root, _, files in os.walk(top):
            for name in sorted(files):
                if name.endswith(".s"):
                    path = os.path.join(root, name)
                    for no, s in hits(path):
                        print(f"{path}:{no}: {s}")
                        found += 1
    print(f"{found} division(s) by a constant", file=sys.stderr)
    sys.exit(1 if found else 0)


if __name__ == "__main__":
    main()
