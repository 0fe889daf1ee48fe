//! Hostile and extreme input through the real `sysyc` binary: deep nesting, huge initialisers and
//! identifiers, out-of-range literals, empty and non-UTF-8 files, missing inputs and unwritable
//! outputs, and every file of `fixtures/hostile/` (inputs that once crashed or hung a stage).
//!
//! The rule for every run: exit code 0 with an output file, or exit code 1 with a diagnostic
//! (`file:line:col: error: ...` when the problem is in the source) and *no* output file (an old
//! one is removed, as gcc does); exit code 2 only for a wrong command line; never a panic (exit
//! 101, "panicked" or "internal compiler error" on stderr), never more than `TIME_LIMIT`, and
//! never more than 8 GiB of address space (the runs are capped with `ulimit -v`, so a blow-up
//! fails the test instead of the machine).
//!
//! Tests marked `#[ignore = "known bug: ..."]` reproduce open bugs; un-ignore them with the fix.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
use sysyc::suite::exec::{self, Status};

const TIME_LIMIT: Duration = Duration::from_secs(60);
/// Address-space cap in KiB (the compiler reserves a 1 GiB stack and per-thread stacks).
const MEM_LIMIT_KB: u64 = 8 << 20;

struct Run {
    status: Status,
    stdout: Vec<u8>,
    stderr: String,
    elapsed: Duration,
}

/// A private directory for one test, removed at the end.
struct Tmp(PathBuf);

impl Tmp {
    fn new(name: &str) -> Tmp {
        let p = std::env::temp_dir().join(format!("sysyc-hostile-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        Tmp(p)
    }
    fn file(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let p = self.0.join(name);
        std::fs::write(&p, bytes).unwrap();
        p
    }
    fn entries(&self) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(&self.0)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }
}

impl Drop for Tmp {
    fn drop(&mut self) {
        let _ = make_writable(&self.0);
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn make_writable(p: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    for e in std::fs::read_dir(p)?.flatten() {
        if e.file_type()?.is_dir() {
            std::fs::set_permissions(e.path(), std::fs::Permissions::from_mode(0o755))?;
        }
    }
    Ok(())
}

/// Runs the binary with `args` (under the memory cap and the time limit).
fn sysyc(args: &[&str], stdin: Option<&Path>) -> Run {
    let mut cmd = Command::new("sh");
    cmd.arg("-c").arg(format!(
        "ulimit -v {MEM_LIMIT_KB} 2>/dev/null; exec \"$0\" \"$@\""
    ));
    cmd.arg(env!("CARGO_BIN_EXE_sysyc")).args(args);
    let out = exec::run(&mut cmd, stdin, Some(TIME_LIMIT)).expect("running sysyc");
    Run {
        status: out.status,
        stdout: out.stdout,
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        elapsed: out.elapsed,
    }
}

fn describe(what: &str, r: &Run) -> String {
    let cut: String = r.stderr.chars().take(2000).collect();
    format!(
        "{what}: {} after {:.1?}\nstderr:\n{cut}",
        r.status, r.elapsed
    )
}

/// Never a panic, a crash or a timeout; exit 0 or 1.
fn assert_clean(what: &str, r: &Run) {
    let ok = matches!(r.status, Status::Exited(0) | Status::Exited(1));
    assert!(
        ok && !r.stderr.contains("panicked") && !r.stderr.contains("internal compiler error"),
        "{}",
        describe(what, r)
    );
    if r.status == Status::Exited(1) {
        assert!(
            !r.stderr.trim().is_empty(),
            "exit 1 without a diagnostic: {}",
            describe(what, r)
        );
    }
}

/// Exit 1 with a `file:line:col: error:` diagnostic naming `file` (and `needle` if given).
fn assert_diag(what: &str, r: &Run, file: &str, needle: &str) {
    assert_clean(what, r);
    assert_eq!(r.status, Status::Exited(1), "{}", describe(what, r));
    // The diagnostic names the path as given, which ends in `file`.
    let located = r.stderr.lines().any(|l| {
        let Some(at) = l.find(&format!("{file}:")) else {
            return false;
        };
        let path_ok = at == 0 || l[..at].ends_with('/');
        path_ok
            && Some(&l[at + file.len()..])
                .and_then(|rest| rest.strip_prefix(':'))
                .is_some_and(|rest| {
                    let mut parts = rest.splitn(3, ':');
                    let line = parts.next().unwrap_or("");
                    let col = parts.next().unwrap_or("");
                    !line.is_empty()
                        && line.bytes().all(|b| b.is_ascii_digit())
                        && !col.is_empty()
                        && col.bytes().all(|b| b.is_ascii_digit())
                        && parts
                            .next()
                            .is_some_and(|m| m.trim_start().starts_with("error"))
                })
    });
    assert!(
        located,
        "no `{file}:line:col: error` diagnostic: {}",
        describe(what, r)
    );
    assert!(
        r.stderr.contains(needle),
        "diagnostic lacks {needle:?}: {}",
        describe(what, r)
    );
}

const MODES: &[&[&str]] = &[&["-O0"], &["-O2"], &["-O2", "--emit-llvm"]];

/// Compiles `source` (as `name`) in every mode into a fresh output path and checks the rule,
/// including that a failure leaves no output file and a success leaves a non-empty one. Returns
/// the runs (one per mode).
fn compile_all(t: &Tmp, name: &str, source: &[u8]) -> Vec<Run> {
    let input = t.file(name, source);
    let mut runs = Vec::new();
    for (k, mode) in MODES.iter().enumerate() {
        let out = t.0.join(format!("{name}.{k}.out"));
        let mut args: Vec<&str> = vec!["-S", "-o", out.to_str().unwrap()];
        args.extend_from_slice(mode);
        args.push(input.to_str().unwrap());
        let r = sysyc(&args, None);
        let what = format!("{name} {}", mode.join(" "));
        assert_clean(&what, &r);
        match r.status {
            Status::Exited(0) => {
                let len = std::fs::metadata(&out).map(|m| m.len()).unwrap_or(0);
                assert!(len > 0, "{what}: success but no output file");
            }
            _ => assert!(!out.exists(), "{what}: failed but left an output file"),
        }
        let stray: Vec<String> = t
            .entries()
            .into_iter()
            .filter(|e| e.contains(".tmp"))
            .collect();
        assert!(
            stray.is_empty(),
            "{what}: temporary files left behind: {stray:?}"
        );
        runs.push(r);
    }
    runs
}

/// Compiles in every mode; each must succeed or give a located diagnostic containing `needle`.
fn ok_or_diag(t: &Tmp, name: &str, source: &[u8], needle: &str) {
    for (r, mode) in compile_all(t, name, source).iter().zip(MODES) {
        if r.status != Status::Exited(0) {
            assert_diag(&format!("{name} {}", mode.join(" ")), r, name, needle);
        }
    }
}

fn must_diag(t: &Tmp, name: &str, source: &[u8], needle: &str) {
    for (r, mode) in compile_all(t, name, source).iter().zip(MODES) {
        assert_diag(&format!("{name} {}", mode.join(" ")), r, name, needle);
    }
}

fn must_succeed(t: &Tmp, name: &str, source: &[u8]) {
    for (r, mode) in compile_all(t, name, source).iter().zip(MODES) {
        assert_eq!(
            r.status,
            Status::Exited(0),
            "{}",
            describe(&format!("{name} {}", mode.join(" ")), r)
        );
    }
}

const DEEP: usize = 100_000;

// ---- deep nesting ----

#[test]
fn deep_parentheses() {
    let t = Tmp::new("parens");
    let src = format!(
        "int main() {{ return {}1{}; }}\n",
        "(".repeat(DEEP + 1),
        ")".repeat(DEEP + 1)
    );
    must_diag(&t, "parens.sy", src.as_bytes(), "nesting too deep");
    let src = format!(
        "int main() {{ return {}1{}; }}\n",
        "(".repeat(DEEP - 10),
        ")".repeat(DEEP - 10)
    );
    ok_or_diag(&t, "parens_limit.sy", src.as_bytes(), "nesting");
    // Unbalanced: many opened, none closed.
    let src = format!("int main() {{ return {}1; }}\n", "(".repeat(DEEP));
    let runs = compile_all(&t, "parens_open.sy", src.as_bytes());
    for r in &runs {
        assert_diag("parens_open.sy", r, "parens_open.sy", "error");
    }
}

#[test]
fn deep_blocks() {
    let t = Tmp::new("blocks");
    let src = format!(
        "int main() {{ {}{} return 0; }}\n",
        "{".repeat(DEEP + 1),
        "}".repeat(DEEP + 1)
    );
    must_diag(&t, "blocks.sy", src.as_bytes(), "nesting too deep");
    let src = format!(
        "int main() {{ int x = 1; {} putint(x); {} return 0; }}\n",
        "{ int x = x + 1;".repeat(20_000),
        "}".repeat(20_000)
    );
    must_succeed(&t, "blocks_shadow.sy", src.as_bytes());
}

#[test]
fn deep_if_else_chain() {
    let t = Tmp::new("ifelse");
    let chain: String = (0..DEEP)
        .map(|i| format!("if (x == {i}) x = {}; else ", i + 1))
        .collect();
    let src = format!("int main() {{ int x = getint(); {chain} x = 0; return x; }}\n");
    ok_or_diag(&t, "ifelse.sy", src.as_bytes(), "nesting too deep");
}

#[test]
fn deep_unary_and_calls() {
    let t = Tmp::new("unary");
    let src = format!("int main() {{ return {}1; }}\n", "-".repeat(DEEP + 1));
    must_diag(&t, "neg.sy", src.as_bytes(), "nesting too deep");
    let src = format!(
        "int main() {{ if ({}1) return 1; return 0; }}\n",
        "!".repeat(DEEP + 1)
    );
    must_diag(&t, "not.sy", src.as_bytes(), "nesting too deep");
    let src = format!(
        "int f(int a) {{ return a + 1; }}\nint main() {{ return {}1{}; }}\n",
        "f(".repeat(DEEP + 1),
        ")".repeat(DEEP + 1)
    );
    must_diag(&t, "calls.sy", src.as_bytes(), "nesting too deep");
    let src = format!(
        "int main() {{ int a[2]; a[0] = 0; return {}0{}; }}\n",
        "a[".repeat(DEEP + 1),
        "]".repeat(DEEP + 1)
    );
    must_diag(&t, "index.sy", src.as_bytes(), "nesting too deep");
}

#[test]
fn long_flat_expressions() {
    let t = Tmp::new("flat");
    // Left-deep trees as deep as the limit allows, but written without any nesting.
    let src = format!(
        "int main() {{ int x = getint(); return {}; }}\n",
        vec!["x"; 50_000].join(" + ")
    );
    ok_or_diag(&t, "sum.sy", src.as_bytes(), "nesting");
    let src = format!(
        "int main() {{ int x = getint(); if ({}) return 1; return 0; }}\n",
        vec!["x"; 20_000].join(" && ")
    );
    ok_or_diag(&t, "and.sy", src.as_bytes(), "nesting");
    let many: String = (0..20_000).map(|i| format!("  x = x + {i};\n")).collect();
    let src = format!("int main() {{ int x = getint();\n{many}  return x; }}\n");
    must_succeed(&t, "stmts.sy", src.as_bytes());
}

// ---- big sizes ----

#[test]
fn million_element_initialiser() {
    let t = Tmp::new("init");
    let elems: Vec<String> = (0..1_000_000).map(|i| (i % 1000).to_string()).collect();
    let src = format!(
        "int a[1000000] = {{{}}};\nint main() {{ return a[999999] % 256; }}\n",
        elems.join(",")
    );
    must_succeed(&t, "init.sy", src.as_bytes());
    // Too many elements for the array.
    let src = format!(
        "int a[999999] = {{{}}};\nint main() {{ return 0; }}\n",
        elems.join(",")
    );
    must_diag(&t, "init_excess.sy", src.as_bytes(), "error");
    // A local one, of floats, at -O0 (-O2: see below).
    let src = format!(
        "int main() {{ float a[1000000] = {{{}}}; return a[5]; }}\n",
        elems.join(",")
    );
    let input = t.file("init_local.sy", src.as_bytes());
    let out = t.0.join("init_local.s");
    let r = sysyc(
        &[
            "-S",
            "-O0",
            "-o",
            out.to_str().unwrap(),
            input.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(
        r.status,
        Status::Exited(0),
        "{}",
        describe("init_local.sy -O0", &r)
    );
}

#[test]
fn million_element_local_initialiser() {
    let t = Tmp::new("localinit");
    let elems: Vec<String> = (0..1_000_000).map(|i| (i % 1000).to_string()).collect();
    let src = format!(
        "int main() {{ float a[1000000] = {{{}}}; return a[5]; }}\n",
        elems.join(",")
    );
    must_succeed(&t, "init_local.sy", src.as_bytes());
}

#[test]
fn huge_arrays() {
    let t = Tmp::new("huge");
    ok_or_diag(
        &t,
        "huge_global.sy",
        b"int a[100000000];\nint main() { a[99999999] = 1; return a[99999999]; }\n",
        "error",
    );
    ok_or_diag(
        &t,
        "huge_dims.sy",
        b"int a[65536][65536][65536];\nint main() { return 0; }\n",
        "too large",
    );
    must_diag(
        &t,
        "negative_dim.sy",
        b"int a[-1];\nint main() { return 0; }\n",
        "error",
    );
    must_diag(
        &t,
        "zero_div_dim.sy",
        b"const int z = 0;\nint a[1 / z];\nint main() { return 0; }\n",
        "error",
    );
}

#[test]
fn hundred_thousand_character_identifiers() {
    let t = Tmp::new("ident");
    let a = "a".repeat(DEEP);
    let b = "_".repeat(DEEP - 1) + "b";
    let src = format!("int {a} = 3;\nint f{b}(int {b}) {{ return {b}; }}\nint main() {{ int {b} = 4; return {a} + f{b}({b}); }}\n");
    must_succeed(&t, "ident.sy", src.as_bytes());
    let src = format!("int main() {{ return {a}; }}\n");
    must_diag(&t, "ident_undefined.sy", src.as_bytes(), "error");
}

// ---- literals and bytes ----

#[test]
fn integer_literals_out_of_range() {
    let t = Tmp::new("intlit");
    for (k, lit) in [
        "99999999999",
        "4294967296",
        "0x1FFFFFFFF",
        "077777777777",
        "123456789012345678901234567890",
    ]
    .iter()
    .enumerate()
    {
        let src = format!("int main() {{\n  return {lit};\n}}\n");
        let name = format!("lit{k}.sy");
        must_diag(&t, &name, src.as_bytes(), "out of range");
        // The position is the literal's: line 2, column 10.
        let r = &compile_all(&t, &name, src.as_bytes())[0];
        assert!(
            r.stderr.contains(&format!("/{name}:2:10:")),
            "{}",
            describe(&name, r)
        );
    }
    for (k, lit) in ["1e999", "0x1p99999", "1e-99999"].iter().enumerate() {
        let src = format!("int main() {{ float f = {lit}; return 0; }}\n");
        ok_or_diag(&t, &format!("flit{k}.sy"), src.as_bytes(), "float literal");
    }
    // The largest literals are fine.
    must_succeed(&t, "max.sy", b"int main() { int a = 2147483647; int b = 0x7fffffff; int c = 017777777777; return a - b + c - a; }\n");
}

#[test]
fn empty_and_blank_files() {
    let t = Tmp::new("empty");
    must_diag(&t, "empty.sy", b"", "main");
    must_diag(&t, "blank.sy", b"  \n\t\n\r\n", "main");
    must_diag(&t, "comment.sy", b"// nothing here\n/* at all */", "main");
}

#[test]
fn non_utf8_and_control_bytes() {
    let t = Tmp::new("bytes");
    must_diag(
        &t,
        "latin1.sy",
        b"int main() { int \xe9t\xe9 = 1; return 0; }\n",
        "error",
    );
    must_diag(&t, "ff.sy", b"int main() { \xff\xfe return 0; }\n", "error");
    must_diag(&t, "nul.sy", b"int main() { return 0; }\n\0\0\0", "error");
    must_diag(
        &t,
        "bom.sy",
        b"\xef\xbb\xbfint main() { return 0; }\n",
        "error",
    );
    must_diag(
        &t,
        "truncated_utf8.sy",
        b"int main() { return 0; } \xe4\xb8",
        "error",
    );
    // In comments anything goes.
    must_succeed(
        &t,
        "comment_bytes.sy",
        b"// \xff\xfe\x00\x01\n/* \xc3\x28 \x80 */ int main() { return 0; }\n",
    );
    must_diag(
        &t,
        "unterminated_comment.sy",
        b"int main() { return 0; } /* \xff",
        "error",
    );
    must_diag(
        &t,
        "unterminated_string.sy",
        b"int main() { putf(\"abc); return 0; }\n",
        "error",
    );
    must_diag(&t, "stray.sy", b"int main() { return 0 @ 1; }\n", "error");
    must_diag(
        &t,
        "preprocessor.sy",
        b"#include <stdio.h>\nint main() { return 0; }\n",
        "error",
    );
}

/// The caret diagnostic echoes the source line: raw bytes that are not UTF-8, NUL, an ESC
/// sequence and bidirectional overrides must come out escaped (`<FF>`, `<U+001B>`), so the
/// terminal is not garbled, and the caret must still point at the offending byte.
#[test]
fn diagnostics_escape_raw_bytes() {
    let t = Tmp::new("diagbytes");
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/hostile/diag_raw_bytes.sy");
    let src = std::fs::read(path).unwrap();
    for (r, mode) in compile_all(&t, "raw.sy", &src).iter().zip(MODES) {
        let what = format!("raw.sy {}", mode.join(" "));
        assert_diag(&what, r, "raw.sy", "invalid character");
        // Valid UTF-8 (the lossy conversion added nothing), no control character but newline and
        // tab, no bidirectional or zero-width format character.
        assert!(
            !r.stderr.contains('\u{FFFD}'),
            "not UTF-8: {}",
            describe(&what, r)
        );
        let bad = r.stderr.chars().find(|&c| {
            (c.is_control() && c != '\n' && c != '\t')
                || matches!(c as u32, 0x200B..=0x200F | 0x202A..=0x202E | 0x2066..=0x2069)
        });
        assert!(
            bad.is_none(),
            "{bad:?} reaches the terminal: {}",
            describe(&what, r)
        );
        // Each `invalid character byte 0xNN` has its caret under the escape of that byte.
        let lines: Vec<&str> = r.stderr.lines().collect();
        let mut checked = 0;
        for (k, l) in lines.iter().enumerate() {
            let Some(hex) = l.split("invalid character byte 0x").nth(1) else {
                continue;
            };
            let byte = u8::from_str_radix(hex.trim(), 16).unwrap();
            let (shown, caret) = (lines[k + 1], lines[k + 2]);
            let col = caret.chars().position(|c| c == '^').unwrap();
            let at: String = shown.chars().skip(col).collect();
            let escape = if byte < 0x80 {
                format!("<U+{byte:04X}>")
            } else {
                format!("<{byte:02X}>")
            };
            assert!(
                at.starts_with(&escape),
                "caret not under {escape}:\n{shown}\n{caret}"
            );
            checked += 1;
        }
        assert!(
            checked >= 4,
            "expected diagnostics on the raw bytes: {}",
            describe(&what, r)
        );
    }
}

#[test]
fn garbage_bytes() {
    // Pseudo-random byte strings and token soups: never a panic.
    let t = Tmp::new("garbage");
    let mut x: u64 = 0x1234_5678_9abc_def0;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let tokens = [
        "int", "float", "void", "const", "if", "else", "while", "break", "continue", "return",
        "main", "(", ")", "{", "}", "[", "]", ";", ",", "=", "+", "-", "*", "/", "%", "!", "&&",
        "||", "<", ">=", "==", "x", "a", "1", "0x1p3", "1.5", "\"s\"", "/*", "*/", "//", "\n",
    ];
    let mut srcs = Vec::new();
    for _ in 0..8 {
        let len = next() % 400;
        srcs.push((0..len).map(|_| next() as u8).collect::<Vec<u8>>());
        let len = next() % 300;
        let soup: Vec<&str> = (0..len)
            .map(|_| tokens[(next() % tokens.len() as u64) as usize])
            .collect();
        srcs.push(format!("int main() {{ {} }}", soup.join(" ")).into_bytes());
    }
    for (k, s) in srcs.iter().enumerate() {
        compile_all(&t, &format!("g{k}.sy"), s);
    }
}

// ---- files and paths ----

#[test]
fn missing_and_unreadable_input() {
    let t = Tmp::new("input");
    let out = t.0.join("out.s");
    let r = sysyc(
        &[
            "-S",
            "-o",
            out.to_str().unwrap(),
            t.0.join("missing.sy").to_str().unwrap(),
        ],
        None,
    );
    assert_clean("missing input", &r);
    assert_eq!(
        r.status,
        Status::Exited(1),
        "{}",
        describe("missing input", &r)
    );
    assert!(
        r.stderr.contains("missing.sy"),
        "{}",
        describe("missing input", &r)
    );
    assert!(!out.exists());
    let r = sysyc(
        &["-S", "-o", out.to_str().unwrap(), t.0.to_str().unwrap()],
        None,
    );
    assert_eq!(
        r.status,
        Status::Exited(1),
        "{}",
        describe("directory as input", &r)
    );
    assert!(!out.exists());
    let r = sysyc(&["-S", "-o", out.to_str().unwrap()], None);
    assert_eq!(r.status, Status::Exited(2), "{}", describe("no input", &r));
    assert!(!out.exists());
}

#[test]
fn stdin_input() {
    let t = Tmp::new("stdin");
    let input = t.file("in.sy", b"int main() { return 3; }\n");
    let r = sysyc(&["-S", "-O2", "--", "-"], Some(&input));
    assert_eq!(r.status, Status::Exited(0), "{}", describe("stdin", &r));
    assert!(String::from_utf8_lossy(&r.stdout).contains("main"));
    let bad = t.file("bad.sy", b"int main() { return x; }\n");
    let r = sysyc(&["-S", "--", "-"], Some(&bad));
    assert_diag("stdin with an error", &r, "<stdin>", "error");
}

#[test]
fn stdin_input_plain_dash() {
    let t = Tmp::new("stdin_dash");
    let input = t.file("in.sy", b"int main() { return 3; }\n");
    let r = sysyc(&["-S", "-"], Some(&input));
    assert_eq!(
        r.status,
        Status::Exited(0),
        "{}",
        describe("sysyc -S -", &r)
    );
}

#[test]
fn unwritable_output_paths() {
    let t = Tmp::new("output");
    let input = t.file("ok.sy", b"int main() { return 0; }\n");
    let inp = input.to_str().unwrap();
    for path in [
        "/nonexistent/dir/out.s",
        "/proc/sysyc-hostile.s",
        "/dev/null/out.s",
    ] {
        let r = sysyc(&["-S", "-o", path, inp], None);
        assert_clean(path, &r);
        assert_eq!(r.status, Status::Exited(1), "{}", describe(path, &r));
        assert!(r.stderr.contains("cannot write"), "{}", describe(path, &r));
        assert!(!Path::new(path).exists());
    }
    // A read-only directory (root may write anyway: then it must simply work).
    use std::os::unix::fs::PermissionsExt;
    let ro = t.0.join("ro");
    std::fs::create_dir(&ro).unwrap();
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
    let privileged = std::fs::write(ro.join("probe"), b"x").is_ok();
    let _ = std::fs::remove_file(ro.join("probe"));
    let out = ro.join("out.s");
    let r = sysyc(&["-S", "-o", out.to_str().unwrap(), inp], None);
    assert_clean("read-only dir", &r);
    if privileged {
        assert_eq!(
            r.status,
            Status::Exited(0),
            "{}",
            describe("read-only dir (as root)", &r)
        );
    } else {
        assert_eq!(
            r.status,
            Status::Exited(1),
            "{}",
            describe("read-only dir", &r)
        );
        assert!(!out.exists());
    }
    let left: Vec<_> = std::fs::read_dir(&ro)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(
        left.iter().all(|n| !n.to_string_lossy().contains(".tmp")),
        "temporary files left: {left:?}"
    );
}

#[test]
fn output_path_is_a_directory() {
    let t = Tmp::new("outdir");
    let input = t.file("ok.sy", b"int main() { return 0; }\n");
    let dir = t.0.join("d");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("keep"), b"keep").unwrap();
    let before = t.entries();
    let r = sysyc(
        &["-S", "-o", dir.to_str().unwrap(), input.to_str().unwrap()],
        None,
    );
    assert_clean("output is a directory", &r);
    assert_eq!(
        r.status,
        Status::Exited(1),
        "{}",
        describe("output is a directory", &r)
    );
    assert!(dir.is_dir() && std::fs::read(dir.join("keep")).unwrap() == b"keep");
    assert_eq!(t.entries(), before, "stray files left beside the output");
}

#[test]
fn failed_compile_removes_the_old_output() {
    let t = Tmp::new("atomic");
    let out = t.file("out.s", b"OLD");
    let bad = t.file("bad.sy", b"int main() { return 1 +; }\n");
    let r = sysyc(
        &["-S", "-o", out.to_str().unwrap(), bad.to_str().unwrap()],
        None,
    );
    assert_diag("bad.sy", &r, bad.to_str().unwrap(), "error");
    assert!(!out.exists(), "a failed compile left the old output");
    assert_eq!(t.entries(), vec!["bad.sy"]);
    let good = t.file("good.sy", b"int main() { return 1; }\n");
    let r = sysyc(
        &["-S", "-o", out.to_str().unwrap(), good.to_str().unwrap()],
        None,
    );
    assert_eq!(r.status, Status::Exited(0), "{}", describe("good.sy", &r));
    assert!(std::fs::read(&out).unwrap().len() > 3);
}

#[test]
fn bad_command_lines() {
    for args in [
        &["--no-such-flag", "x.sy"][..],
        &["-O9"],
        &["-o"],
        &["--opt-level", "banana", "x.sy"],
    ] {
        let r = sysyc(args, None);
        assert_eq!(
            r.status,
            Status::Exited(2),
            "{}",
            describe(&format!("{args:?}"), &r)
        );
        assert!(
            !r.stderr.contains("panicked") && r.stderr.contains("error"),
            "{}",
            describe(&format!("{args:?}"), &r)
        );
    }
}

// ---- fixtures ----

/// Every `fixtures/hostile/*.sy` in every mode: no panic, no hang.
#[test]
fn hostile_fixtures() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/hostile");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "sy"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    let t = Tmp::new("fixtures");
    for f in &files {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        compile_all(&t, &name, &std::fs::read(f).unwrap());
    }
    eprintln!("{} hostile fixtures compiled", files.len());
}

/// `fixtures/hostile/known/*.sy`: reproducers of open bugs (hangs, blow-ups); move a file up to
/// `fixtures/hostile/` when its bug is fixed.
#[test]
#[ignore = "known bugs: see fixtures/hostile/known/README"]
fn known_hostile_fixtures() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/hostile/known");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "sy"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    let t = Tmp::new("known");
    for f in &files {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        compile_all(&t, &name, &std::fs::read(f).unwrap());
    }
}

// ---- known blow-ups (deep, but within the parser's limit) ----

fn nested_whiles(n: usize) -> String {
    format!(
        "int main() {{ int x = 0; {} x = x + 1; return x; }}\n",
        "while (x < 1) ".repeat(n)
    )
}

#[test]
fn moderately_nested_loops() {
    let t = Tmp::new("loops");
    must_succeed(&t, "whiles16.sy", nested_whiles(16).as_bytes());
}

#[test]
fn deeply_nested_loops() {
    let t = Tmp::new("deeploops");
    must_succeed(&t, "whiles40.sy", nested_whiles(40).as_bytes());
    must_succeed(&t, "whiles1000.sy", nested_whiles(1000).as_bytes());
}

#[test]
fn long_if_else_chain_within_limit() {
    let t = Tmp::new("ifchain");
    let chain: String = (0..40_000)
        .map(|i| format!("if (x == {i}) x = {}; else ", i + 1))
        .collect();
    let src = format!("int main() {{ int x = getint(); {chain} x = 0; return x; }}\n");
    must_succeed(&t, "ifelse40k.sy", src.as_bytes());
}
