#!/usr/bin/env python3
"""Reduce a SysY program that sysyc miscompiles (or crashes on) while keeping the failure.

usage: scripts/reduce.py PROGRAM.sy [--mode=-O2] [--input IN] [--out REDUCED.sy] [--timeout S] [--sysyc BIN]

The failure is judged like the differential test: the program read as C by the host gcc and
clang (`-O1 -fwrapv -ffp-contract=off`, float literals made single precision, UBSan on so a
reduction that introduces undefined behaviour is rejected; both must agree) gives the expected
stdout and exit code; sysyc
in MODE (`-O0`, `-O2`: RISC-V under qemu; add `--emit-llvm` for LLVM IR + clang natively) must
give something else, or crash. Without --mode every mode is tried and the first failing one is
kept. A candidate is interesting only if it fails the *same way* (wrong output / compiler crash
/ program crash) as the original. A compiler crash is judged by compiling alone (fast); the
oracle is consulted once at the end for the expected output.

Passes, repeated until nothing changes: delete chunks of lines (halving the chunk size down to
one line), delete whole `{ ... }` statements (an `if`, `else`, `while` or block with its body),
replace parenthesised sub-expressions by `1`, and drop unused declarations on a line.
Writes REDUCED.sy (default PROGRAM.reduced.sy), REDUCED.out (the expected output) and
REDUCED.in (a copy of the input, if any; PROGRAM.in is used when it exists).
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def sysy_as_c(src):
    """Float literals get an `f` suffix (SysY floats are single precision); like runner::sysy_as_c."""
    out = []
    i, n = 0, len(src)
    ident = lambda c: c.isalnum() or c == "_"
    while i < n:
        c = src[i]
        nxt = src[i + 1] if i + 1 < n else ""
        start = i
        if c == "/" and nxt == "/":
            while i < n and src[i] != "\n":
                i += 1
        elif c == "/" and nxt == "*":
            j = src.find("*/", i + 2)
            i = n if j < 0 else j + 2
        elif c in "\"'":
            i += 1
            while i < n and src[i] != c:
                i += 2 if src[i] == "\\" else 1
            i = min(i + 1, n)
        elif ident(c) and not c.isdigit():
            while i < n and ident(src[i]):
                i += 1
        elif c.isdigit() or (c == "." and nxt.isdigit()):
            hexa = c == "0" and nxt in "xX"
            i += 1
            while i < n:
                d = src[i]
                if d in "+-" and src[i - 1] in ("pP" if hexa else "eE"):
                    i += 1
                elif ident(d) or d == ".":
                    i += 1
                else:
                    break
            tok = src[start:i]
            is_float = "." in tok or (any(x in tok for x in "pP") if hexa else any(x in tok for x in "eE"))
            out.append(tok + ("f" if is_float and not tok.endswith(("f", "F")) else ""))
            continue
        else:
            i += 1
        out.append(src[start:i])
    return "".join(out)


class Judge:
    def __init__(self, work, timeout, sysyc=None, stdin=None):
        self.work = work
        self.stdin = stdin
        self.timeout = timeout
        self.sysyc = sysyc or os.path.join(ROOT, "target", "release", "sysyc")
        if not sysyc and not os.path.exists(self.sysyc):
            subprocess.run(["cargo", "build", "--release"], cwd=ROOT, check=True)
        self.header = os.path.join(ROOT, "runtime", "sylib.h")
        self.host_lib = self.build_lib("gcc", "host.o")
        self.rv_lib = self.build_lib("riscv64-linux-gnu-gcc", "rv.o")
        self.tests = 0

    def build_lib(self, cc, name):
        obj = os.path.join(self.work, name)
        subprocess.run([cc, "-O2", "-w", "-c", os.path.join(ROOT, "runtime", "sylib.c"), "-o", obj], check=True)
        return obj

    def run(self, cmd, timeout=None, feed=False):
        stdin = open(self.stdin, "rb") if feed and self.stdin else subprocess.DEVNULL
        try:
            p = subprocess.run(cmd, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               timeout=timeout or self.timeout)
            return p.returncode, p.stdout, p.stderr
        except subprocess.TimeoutExpired:
            return "timeout", b"", b""
        finally:
            if stdin is not subprocess.DEVNULL:
                stdin.close()

    @staticmethod
    def text(rc, stdout):
        t = stdout
        if t and not t.endswith(b"\n"):
            t += b"\n"
        return norm(t + b"%d\n" % (rc & 255))

    def oracle(self, src):
        """The expected text: gcc -O1 (with UBSan), cross-checked by clang -O1; None if either
        rejects or fails the program, or they disagree (gcc 12 misfolds some signed zeros)."""
        c = os.path.join(self.work, "o.c")
        with open(c, "w") as f:
            f.write(sysy_as_c(src))
        texts = []
        for cc in ("gcc", "clang-14"):
            exe = os.path.join(self.work, "o.exe")
            rc, _, _ = self.run([cc, "-x", "c", "-O1", "-fwrapv", "-ffp-contract=off", "-w",
                                 "-Werror=return-type", "-Werror=implicit-function-declaration",
                                 "-fsanitize=undefined", "-fno-sanitize-recover=all",
                                 "-include", self.header, c, "-x", "none", self.host_lib, "-o", exe], 60)
            if rc != 0:
                return None
            rc, out, _ = self.run([exe], feed=True)
            if not isinstance(rc, int) or rc < 0:
                return None
            texts.append(self.text(rc, out))
        return texts[0] if texts[0] == texts[1] else None

    def sysyc_run(self, src, mode, compile_only=False):
        """('panic'|'compile error'|'crash'|'timeout'|'ok', text)."""
        sy = os.path.join(self.work, "p.sy")
        with open(sy, "w") as f:
            f.write(src)
        llvm = "--emit-llvm" in mode
        asm = os.path.join(self.work, "p.ll" if llvm else "p.s")
        exe = os.path.join(self.work, "p.exe")
        rc, _, err = self.run([self.sysyc, "-S", "-o", asm] + mode.split() + [sy], 120)
        if rc == "timeout":
            return "compile timeout", b""
        if rc != 0:
            return ("panic" if rc != 1 or b"panicked" in err else "compile error"), err
        if compile_only:
            return "ok", b""
        if llvm:
            link = ["clang-14", "-Wno-override-module", "-x", "ir", asm, "-x", "none", self.host_lib, "-o", exe]
            cmd = ["sh", "-c", 'ulimit -s 1048576 2>/dev/null; exec "$0"', exe]
        else:
            link = ["riscv64-linux-gnu-gcc", "-static", asm, self.rv_lib, "-o", exe]
            cmd = ["qemu-riscv64", exe]
        rc, _, err = self.run(link, 120)
        if rc != 0:
            return "link error", err
        rc, out, _ = self.run(cmd, feed=True)
        if rc == "timeout":
            return "timeout", b""
        if rc < 0:
            return "crash", b""
        return "ok", self.text(rc, out)

    def verdict(self, src, mode, panic_only=False):
        """The failure kind of `src` in `mode`, or None when it passes or the oracle rejects it.
        With `panic_only` a compiler crash is judged alone (no oracle: much faster)."""
        self.tests += 1
        if panic_only:
            kind, _ = self.sysyc_run(src, mode, compile_only=True)
            return (kind if kind == "panic" else None), None
        want = self.oracle(src)
        if want is None:
            return None, None
        kind, got = self.sysyc_run(src, mode)
        if kind == "ok":
            return ("wrong output" if got != want else None), want
        if kind == "compile error":
            return None, want  # valid C but not SysY: a reduction artefact
        return kind, want


def norm(t):
    lines = [l.rstrip() for l in t.replace(b"\r\n", b"\n").split(b"\n")]
    return b"\n".join(lines).rstrip() + b"\n"


def block_spans(lines):
    """(start, end) line ranges of statements with a braced body: from a line ending in `{` to its
    matching `}` line, extended over `} else {` / `} else` continuations."""
    spans = []
    for i, l in enumerate(lines):
        if not l.rstrip().endswith("{"):
            continue
        depth = 0
        for j in range(i, len(lines)):
            depth += lines[j].count("{") - lines[j].count("}")
            if depth <= 0:
                end = j
                # `} else {` keeps the depth at 1; a final `}` closes.
                spans.append((i, end))
                break
    return spans


def paren_spans(line):
    """Balanced (...) spans that are not call argument lists."""
    spans, stack = [], []
    for k, c in enumerate(line):
        if c == "(":
            stack.append(k)
        elif c == ")" and stack:
            s = stack.pop()
            before = line[:s].rstrip()
            if before and (before[-1].isalnum() or before[-1] == "_"):
                continue  # a call, or `if (`/`while (`
            spans.append((s, k + 1))
    spans.sort(key=lambda s: s[0] - s[1])  # largest first
    return spans


def reduce(src, mode, kind, judge, log, save=lambda text: None):
    lines = src.split("\n")
    say = log

    def log(msg):
        say(msg)
        save("\n".join(lines))

    def ok(cand):
        k, _ = judge.verdict("\n".join(cand), mode, panic_only=(kind == "panic"))
        return k == kind

    def protected(ls, i):
        # A function's final `return` (C would make `main` return 0 without it; SysY need not).
        return ls[i].strip().startswith("return") and i + 1 < len(ls) and ls[i + 1].startswith("}")

    changed = True
    while changed:
        changed = False
        # Chunks of lines.
        chunk = max(1, len(lines) // 2)
        while chunk >= 1:
            i = 0
            while i < len(lines):
                cand = lines[:i] + lines[i + chunk:]
                if any(protected(lines, j) for j in range(i, min(i + chunk, len(lines)))):
                    i += chunk
                    continue
                if cand and ok(cand):
                    lines = cand
                    changed = True
                    log(f"lines: -{chunk} -> {len(lines)} lines")
                else:
                    i += chunk
            chunk //= 2
        # Whole braced statements, and braces kept with the body inlined.
        i = 0
        while True:
            spans = [s for s in block_spans(lines) if s[0] >= i]
            if not spans:
                break
            s, e = spans[0]
            cand = lines[:s] + lines[e + 1:]
            if ok(cand):
                lines = cand
                changed = True
                log(f"block: -{e - s + 1} -> {len(lines)} lines")
                continue
            i = s + 1
        # Parenthesised sub-expressions -> 1.
        for li in range(len(lines)):
            done = False
            while not done:
                done = True
                for s, e in paren_spans(lines[li]):
                    if lines[li][s:e] == "(1)":
                        continue
                    cand = lines[:li] + [lines[li][:s] + "1" + lines[li][e:]] + lines[li + 1:]
                    if ok(cand):
                        lines = cand
                        changed = True
                        done = False
                        log(f"expr: line {li + 1} -> {len(lines[li])} chars")
                        break
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("program")
    ap.add_argument("--mode", help='sysyc flags, e.g. "-O2" or "-O2 --emit-llvm" (default: find one)')
    ap.add_argument("--out")
    ap.add_argument("--timeout", type=float, default=10.0, help="seconds per program run")
    ap.add_argument("--sysyc", help="the compiler binary (default target/release/sysyc)")
    ap.add_argument("--input", help="stdin of the program (default: PROGRAM.in if it exists)")
    args = ap.parse_args()
    src = open(args.program).read()
    work = tempfile.mkdtemp(prefix="sysyc-reduce-")
    try:
        stdin = args.input
        if stdin is None and os.path.exists(re.sub(r"\.sy$", "", args.program) + ".in"):
            stdin = re.sub(r"\.sy$", "", args.program) + ".in"
        judge = Judge(work, args.timeout, args.sysyc, stdin and os.path.abspath(stdin))
        modes = [args.mode] if args.mode else ["-O2", "-O0", "-O2 --emit-llvm", "-O0 --emit-llvm"]
        mode = kind = None
        for m in modes:
            k, want = judge.verdict(src, m)
            if want is None:
                sys.exit("the oracle rejects the program (it does not build or run cleanly as C)")
            if k:
                mode, kind = m, k
                break
        if not mode:
            sys.exit("no failure to reduce: sysyc agrees with the oracle in " + ", ".join(modes))
        print(f"reducing a `{kind}` in mode `{mode}` ({len(src.splitlines())} lines)", file=sys.stderr)
        out = args.out or re.sub(r"\.sy$", "", args.program) + ".reduced.sy"

        def save(text):  # the best so far, so an interrupted run still leaves a result
            with open(out, "w") as f:
                f.write(text if text.endswith("\n") else text + "\n")

        small = reduce(src, mode, kind, judge, lambda m: print(m, file=sys.stderr), save)
        save(small)
        k, want = judge.verdict(small, mode)
        if kind == "panic" and want is None:
            # A crash needs no expected output; the oracle may reject what is left.
            k, want = judge.verdict(small, mode, panic_only=True)[0], b""
        assert k == kind, "the reduced program lost the failure"
        with open(out, "w") as f:
            f.write(small if small.endswith("\n") else small + "\n")
        if want:
            with open(re.sub(r"\.sy$", "", out) + ".out", "wb") as f:
                f.write(want)
        if stdin:
            shutil.copy(stdin, re.sub(r"\.sy$", "", out) + ".in")
        print(f"{out}: {len(small.splitlines())} lines, `{kind}` with sysyc -S {mode} "
              f"({judge.tests} tests)", file=sys.stderr)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
