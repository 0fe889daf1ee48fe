#!/usr/bin/env python3
"""Builds a large SysY program out of the public contest programs, for compile-speed runs.

    perf/gen_suite_large.py --lines 1000000 [--suites DIR] -o suite-large.sy

Every distinct program of DIR/*/*.sy (byte-identical sources are taken once; DIR defaults to
$SYSY_SUITES, else ../shared/suites next to the repository) is appended again and again, in
path order, until the output has at least N lines. Each copy gets its own prefix (`s0_`,
`s1_`, ...) on every identifier token that names one of the program's top-level functions,
global variables or constants, so the copies do not clash; a local that shadows a top-level
name is renamed with it, which keeps the scoping the same. Keywords and the runtime library's
functions are never renamed. A final `main` calls every copy's renamed `main` in order.

The output is meant to be compiled, not run (every copy's `main` reads its own input). It is
valid SysY; gcc rejects the copies of programs that use a `const int` as a global array
bound (as it rejects those suite files), clang accepts them.
"""
import argparse
import os
import re
import sys

KEYWORDS = {
    "int", "float", "void", "const", "if", "else", "while", "break", "continue", "return",
}
RUNTIME = {
    "getint", "getch", "getfloat", "getarray", "getfarray", "putint", "putch", "putfloat",
    "putarray", "putfarray", "putf", "starttime", "stoptime", "_sysy_starttime",
    "_sysy_stoptime",
}
TYPES = {"int", "float", "void"}

# One token per match: comments, string literals, numbers (pp-number shaped, so `1e-6`,
# `0x1.8p+1` and `.5` stay whole), identifiers, whitespace, and any other single character.
TOKEN = re.compile(
    r"""
    (?P<comment>//[^\n]*|/\*.*?\*/)
  | (?P<string>"(?:[^"\\\n]|\\.)*")
  | (?P<number>\.?[0-9](?:[eEpP][+-]|[0-9A-Za-z_.])*)
  | (?P<ident>[A-Za-z_][A-Za-z_0-9]*)
  | (?P<space>\s+)
  | (?P<other>.)
    """,
    re.VERBOSE | re.DOTALL,
)


def tokenize(src):
    """(kind, text) pairs covering `src` exactly."""
    out = []
    pos = 0
    while pos < len(src):
        m = TOKEN.match(src, pos)
        if m is None or m.end() == pos:
            raise ValueError("cannot tokenize at offset %d" % pos)
        out.append((m.lastgroup, m.group()))
        pos = m.end()
    return out


def top_level_names(tokens):
    """Names declared at file scope: the identifier after a type keyword, or after a comma
    outside parentheses, brackets and initializer braces, at brace depth 0."""
    names = set()
    braces = parens = brackets = 0
    prev = None  # previous significant token text
    for kind, text in tokens:
        if kind in ("comment", "space"):
            continue
        if text == "{":
            braces += 1
        elif text == "}":
            braces -= 1
        elif text == "(":
            parens += 1
        elif text == ")":
            parens -= 1
        elif text == "[":
            brackets += 1
        elif text == "]":
            brackets -= 1
        elif (
            kind == "ident"
            and text not in KEYWORDS
            and braces == 0
            and parens == 0
            and brackets == 0
            and (prev in TYPES or prev == ",")
        ):
            names.add(text)
        prev = text
    return names


def renamed(tokens, names, prefix):
    return "".join(
        prefix + text if kind == "ident" and text in names else text for kind, text in tokens
    )


def load_programs(suites):
    """(path, tokens, top-level names) of each distinct program, in path order."""
    seen = set()
    programs = []
    folders = sorted(d for d in os.listdir(suites) if os.path.isdir(os.path.join(suites, d)))
    for folder in folders:
        for name in sorted(os.listdir(os.path.join(suites, folder))):
            if not name.endswith(".sy"):
                continue
            path = os.path.join(suites, folder, name)
            with open(path, encoding="utf-8", errors="surrogateescape") as f:
                src = f.read().replace("\r\n", "\n").replace("\r", "\n")
            if src in seen:
                continue
            seen.add(src)
            if not src.endswith("\n"):
                src += "\n"
            tokens = tokenize(src)
            names = top_level_names(tokens)
            clash = names & RUNTIME
            if clash:
                sys.exit("%s defines runtime function(s) %s" % (path, ", ".join(sorted(clash))))
            if "main" not in names:
                sys.exit("%s has no top-level main" % path)
            for kind, text in tokens:
                if kind == "ident" and re.match(r"s[0-9]+_", text):
                    sys.exit("%s uses identifier %s, which looks like a copy prefix" % (path, text))
            programs.append((path, tokens, names, src.count("\n")))
    if not programs:
        sys.exit("no .sy files under %s" % suites)
    return programs


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    default_suites = os.environ.get("SYSY_SUITES") or os.path.join(here, "..", "..", "shared", "suites")
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lines", type=int, default=1000000, help="minimum number of output lines")
    ap.add_argument("--suites", default=default_suites, help="folder of suite folders of .sy files")
    ap.add_argument("-o", "--output", required=True)
    args = ap.parse_args()

    programs = load_programs(args.suites)
    parts = []
    mains = []
    lines = 0
    copy = 0
    while lines < args.lines:
        path, tokens, names, n = programs[copy % len(programs)]
        prefix = "s%d_" % copy
        rel = os.path.relpath(path, args.suites)
        parts.append("// copy %d: %s\n" % (copy, rel))
        parts.append(renamed(tokens, names, prefix))
        mains.append(prefix + "main")
        lines += n + 1
        copy += 1
    parts.append("int main() {\n")
    parts.extend("  %s();\n" % m for m in mains)
    parts.append("  return 0;\n}\n")
    out_dir = os.path.dirname(args.output)
    if out_dir:
        os.makedirs(out_dir, exist_ok=True)
    with open(args.output, "w", encoding="utf-8", errors="surrogateescape") as f:
        f.write("".join(parts))


if __name__ == "__main__":
    main()
