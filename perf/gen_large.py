#!/usr/bin/env python3
"""Generates a large, valid, deterministic SysY program for compile-speed benchmarks.

    perf/gen_large.py --lines 100000 [--seed 1] [--depth 3] [--func-lines 200] -o big.sy

The program has many functions with long bodies and nested while loops, int and float locals,
global and local arrays, short-circuit conditions and calls to a few leaf helpers; `main`
calls every function and prints a checksum, so the program also runs (in well under a second
natively) and its output can be compared across compilers. Every value is kept small with
`%`, divisors are non-zero constants and array indices are reduced into range, so the
program is free of overflow and undefined behaviour and reads the same as C (it uses no
`const` array bounds, so gcc accepts it with `-include runtime/sylib.h`).
"""
import argparse
import random
import sys

ARR = 64  # length of every array


def leaf_helpers(out):
    out.append("int h_mix(int a, int b) {\n  return (a * 31 + b * 17 + 7) % 10007;\n}\n")
    out.append("float h_scale(float x, int k) {\n  return x * 0.5 + k % 10;\n}\n")
    out.append(
        "int h_sum(int a[], int n) {\n  int s = 0;\n  int i = 0;\n  while (i < n) {\n"
        "    s = (s + a[i]) % 10007;\n    i = i + 1;\n  }\n  return s;\n}\n"
    )


class Func:
    def __init__(self, rng, name, target_lines, depth, num_globals):
        self.rng, self.name, self.target, self.depth = rng, name, target_lines, depth
        self.num_globals = num_globals
        self.lines = []

    def emit(self, indent, text):
        self.lines.append("  " * indent + text)

    def var(self):
        return "v%d" % self.rng.randrange(8)

    def expr(self):
        r = self.rng
        a, b = self.var(), self.var()
        forms = [
            "(%s * %d + %s) %% 10007" % (a, r.randrange(2, 50), b),
            "(%s - %s * %d) %% 10007" % (a, b, r.randrange(2, 9)),
            "(%s + arr[(%s %% %d + %d) %% %d]) %% 10007" % (a, b, ARR, ARR, ARR),
            "h_mix(%s, %s)" % (a, b),
            "(%s / %d + %s %% %d) %% 10007" % (a, r.randrange(1, 20), b, r.randrange(2, 30)),
            "(g%d[(%s %% %d + %d) %% %d] + %d) %% 10007"
            % (r.randrange(self.num_globals), a, ARR, ARR, ARR, r.randrange(100)),
        ]
        return r.choice(forms)

    def stmt(self, indent):
        r = self.rng
        k = r.randrange(7)
        v = self.var()
        if k == 0:
            self.emit(indent, "if (%s > %s && %s < %d || !(%s == 0)) {" % (v, self.var(), self.var(), r.randrange(5000), self.var()))
            self.emit(indent + 1, "%s = %s;" % (self.var(), self.expr()))
            self.emit(indent, "} else {")
            self.emit(indent + 1, "%s = %s;" % (self.var(), self.expr()))
            self.emit(indent, "}")
        elif k == 1:
            self.emit(indent, "arr[(%s %% %d + %d) %% %d] = %s;" % (v, ARR, ARR, ARR, self.expr()))
        elif k == 2:
            self.emit(indent, "f0 = h_scale(f0, %s);" % v)
            w = self.var()
            self.emit(indent, "%s = %s + f0;" % (w, v))
            self.emit(indent, "%s = %s %% 10007;" % (w, w))
        elif k == 3:
            g = r.randrange(self.num_globals)
            self.emit(indent, "g%d[(%s %% %d + %d) %% %d] = %s;" % (g, v, ARR, ARR, ARR, self.expr()))
        else:
            self.emit(indent, "%s = %s;" % (v, self.expr()))

    def loop_nest(self, indent, depth, budget):
        """A while nest `depth` deep whose innermost body has `budget` statements."""
        i = "i%d" % depth
        self.emit(indent, "%s = 0;" % i)
        self.emit(indent, "while (%s < %d) {" % (i, 2 if depth > 1 else 3))
        if depth > 1:
            self.loop_nest(indent + 1, depth - 1, budget)
        else:
            for _ in range(budget):
                self.stmt(indent + 1)
        self.emit(indent + 1, "%s = %s + 1;" % (i, i))
        self.emit(indent, "}")

    def generate(self):
        self.emit(0, "int %s(int p0, int p1, int arr[]) {" % self.name)
        self.emit(1, "int v0 = p0; int v1 = p1; int v2 = 3; int v3 = 4;")
        self.emit(1, "int v4 = p0 % 17; int v5 = 6; int v6 = p1 % 13; int v7 = 8;")
        self.emit(1, "float f0 = 1.5;")
        self.emit(1, "int " + ", ".join("i%d = 0" % d for d in range(1, self.depth + 1)) + ";")
        self.emit(1, "int local[%d] = {1, 2, 3, p0 %% 7};" % ARR)
        self.emit(1, "local[v0 %% %d] = h_sum(arr, %d);" % (ARR, ARR))
        while len(self.lines) < self.target - 3:
            if self.rng.random() < 0.3:
                self.loop_nest(1, self.rng.randrange(1, self.depth + 1), self.rng.randrange(2, 6))
            else:
                self.stmt(1)
        self.emit(1, "return (v0 + v1 + v2 + v3 + v4 + v5 + v6 + v7 + local[3]) % 10007;")
        self.emit(0, "}")
        return self.lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=100000, help="approximate program length")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--depth", type=int, default=3, help="deepest loop nest")
    ap.add_argument("--func-lines", type=int, default=200, help="approximate lines per function")
    ap.add_argument("--globals", type=int, default=8, help="number of global arrays")
    ap.add_argument("-o", "--output", default="-")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    out = ["// Generated by perf/gen_large.py --lines %d --seed %d --depth %d --func-lines %d"
           % (args.lines, args.seed, args.depth, args.func_lines)]
    for g in range(args.globals):
        out.append("int g%d[%d];" % (g, ARR))
    leaf_helpers(out)
    nfuncs = max(1, args.lines // (args.func_lines + 2))
    for k in range(nfuncs):
        out.append("\n".join(Func(rng, "f%d" % k, args.func_lines, args.depth, args.globals).generate()))
    out.append("int main() {")
    out.append("  int arr[%d];" % ARR)
    out.append("  int i = 0;")
    out.append("  while (i < %d) {\n    arr[i] = i * 7 %% 101;\n    i = i + 1;\n  }" % ARR)
    out.append("  int s = 0;")
    for k in range(nfuncs):
        out.append("  s = (s + f%d(%d, s, arr)) %% 10007;" % (k, k % 1000))
    out.append("  putint(s);\n  putch(10);\n  return s % 256;\n}")
    text = "\n".join(out) + "\n"
    if args.output == "-":
        sys.stdout.write(text)
    else:
        with open(args.output, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
