//! Emitter tests: IR text -> LLVM IR -> `clang-14` (with a tiny C runtime) -> run and compare
//! stdout and exit code. Skipped, loudly, when clang-14 is not installed.

use super::{emit_module, Target};
use crate::ir::{parse, verify};
use std::io::Write;
use std::process::{Command, Stdio};

/// A minimal SysY runtime for the tests.
pub(crate) const RUNTIME_C: &str = r#"
#include <stdio.h>
#include <stdarg.h>
int getint(void) { int x = 0; scanf("%d", &x); return x; }
int getch(void) { return getchar(); }
float getfloat(void) { float x = 0; scanf("%a", &x); return x; }
int getarray(int a[]) { int n = 0; scanf("%d", &n); for (int i = 0; i < n; i++) scanf("%d", &a[i]); return n; }
int getfarray(float a[]) { int n = 0; scanf("%d", &n); for (int i = 0; i < n; i++) scanf("%a", &a[i]); return n; }
void putint(int a) { printf("%d", a); }
void putch(int a) { putchar(a); }
void putarray(int n, int a[]) { printf("%d:", n); for (int i = 0; i < n; i++) printf(" %d", a[i]); printf("\n"); }
void putfloat(float a) { printf("%a", a); }
void putfarray(int n, float a[]) { printf("%d:", n); for (int i = 0; i < n; i++) printf(" %a", a[i]); printf("\n"); }
void putf(char a[], ...) { va_list ap; va_start(ap, a); vprintf(a, ap); va_end(ap); }
void _sysy_starttime(int l) { (void)l; }
void _sysy_stoptime(int l) { (void)l; }
"#;

fn have_clang() -> bool {
    let ok = Command::new("clang-14")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok();
    if !ok {
        eprintln!("SKIPPED: clang-14 not found; LLVM emitter tests did not run");
    }
    ok
}

/// Parses `ir`, emits LLVM, builds it at `opt` and runs it; returns (stdout, exit code).
fn run(name: &str, ir: &str, opt: &str, input: &str) -> (String, i32) {
    let m = parse::module(ir).unwrap_or_else(|e| panic!("{e}"));
    verify::module(&m).unwrap_or_else(|e| panic!("{e}"));
    let ll = emit_module(&m, Target::Host);
    let dir = std::env::temp_dir().join(format!("sysyc-llvm-{}-{name}{opt}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (llf, rt, exe) = (dir.join("m.ll"), dir.join("rt.c"), dir.join("a.out"));
    std::fs::write(&llf, &ll).unwrap();
    std::fs::write(&rt, RUNTIME_C).unwrap();
    let out = Command::new("clang-14")
        .arg(opt)
        .args(["-w", "-x", "ir"])
        .arg(&llf)
        .args(["-x", "c"])
        .arg(&rt)
        .arg("-o")
        .arg(&exe)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "clang failed:\n{}\n{ll}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut child = Command::new(&exe)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        out.status.code().unwrap_or(-1),
    )
}

fn check(name: &str, ir: &str, input: &str, stdout: &str, code: i32) {
    if !have_clang() {
        return;
    }
    for opt in ["-O0", "-O2"] {
        let (o, c) = run(name, ir, opt, input);
        assert_eq!((o.as_str(), c), (stdout, code), "{name} at {opt}");
    }
}

#[test]
fn loops_globals_and_calls() {
    let ir = r#"
global @a: 5 x i32 = [3, -1, 4, 1]
global @big: 1000 x i32 = [7]
global @zero: 10 x f32 = zero
declare @putint(i32) -> void
declare @putch(i32) -> void

func @main() -> i32 {
bb0:
    v0 = gaddr @a
    v1 = iconst.i32 5
    v2 = call.i32 @sum(v0, v1)
    call.void @putint(v2)
    v3 = iconst.i32 10
    call.void @putch(v3)
    v4 = gaddr @big
    v5 = load.i32 v4
    v6 = offset v4, 3996
    v7 = load.i32 v6
    v8 = add.i32 v5, v7
    v9 = call.i32 @fact(v3)
    call.void @putint(v9)
    call.void @putch(v3)
    ret v8
}

func @sum(ptr, i32) -> i32 {
bb0(v0: ptr, v1: i32):
    v2 = iconst.i32 0
    jump bb1(v2, v2)
bb1(v3: i32, v4: i32):
    v5 = icmp.lt v3, v1
    brif v5, bb2, bb3(v4)
bb2:
    v6 = gep v0, v3, 4
    v7 = load.i32 v6
    v8 = add.i32 v4, v7
    v9 = iconst.i32 1
    v10 = add.i32 v3, v9
    jump bb1(v10, v8)
bb3(v11: i32):
    ret v11
}

func @fact(i32) -> i32 {
bb0(v0: i32):
    v1 = iconst.i32 1
    v2 = icmp.le v0, v1
    brif v2, bb1, bb2
bb1:
    ret v1
bb2:
    v3 = sub.i32 v0, v1
    v4 = call.i32 @fact(v3)
    v5 = mul.i32 v0, v4
    ret v5
}
"#;
    check("loops", ir, "", "7\n3628800\n", 7);
}

#[test]
fn brif_to_one_block_with_different_arguments() {
    let ir = r#"
declare @getint() -> i32
func @main() -> i32 {
bb0:
    v0 = call.i32 @getint()
    v1 = iconst.i32 0
    v2 = icmp.gt v0, v1
    v3 = iconst.i32 11
    v4 = iconst.i32 22
    brif v2, bb1(v3), bb1(v4)
bb1(v5: i32):
    ret v5
}
"#;
    if !have_clang() {
        return;
    }
    assert_eq!(run("brif1", ir, "-O0", "5").1, 11);
    assert_eq!(run("brif2", ir, "-O0", "-5").1, 22);
    assert_eq!(run("brif3", ir, "-O2", "-5").1, 22);
}

#[test]
fn arithmetic_floats_and_io() {
    let ir = include_str!("../../../fixtures/programs/arith.ir");
    check(
        "arith",
        ir,
        "3 0x1.8p+1",
        "-2\n-1\n-3\n-0x1.333334p-2\n0\n-0x1.8p+1\n10\n4: -1 -1 -1 -1\n3 3.000000\n-25\n536870911\n3\n",
        3,
    );
}

#[test]
fn unreachable_blocks_and_pointer_values() {
    let ir = r#"
global @g: 2 x i32 = [5, 6]
func @main() -> i32 {
bb0:
    v0 = alloca 8, align 8
    v1 = gaddr @g
    store v1, v0
    v2 = load.ptr v0
    v3 = offset v2, 4
    v4 = load.i32 v3
    v5 = icmp.eq v2, v1
    brif v5, bb1(v4), bb2
bb2:
    unreachable
bb3(v6: i32):
    v8 = add.i32 v9, v6
    v9 = add.i32 v8, v6
    jump bb1(v9)
bb1(v7: i32):
    ret v7
}
"#;
    check("unreach", ir, "", "", 6);
}

/// The same output runs under `lli` (the runtime as an extra module compiled to bitcode).
#[test]
fn runs_under_lli() {
    if !have_clang()
        || Command::new("lli-14")
            .arg("--version")
            .stdout(Stdio::null())
            .status()
            .is_err()
    {
        eprintln!("SKIPPED: lli-14 not found");
        return;
    }
    let ir = r#"
declare @getint() -> i32
declare @putint(i32) -> void
func @main() -> i32 {
bb0:
    v0 = call.i32 @getint()
    v1 = iconst.i32 6
    v2 = mul.i32 v0, v1
    call.void @putint(v2)
    ret v0
}
"#;
    let m = parse::module(ir).unwrap();
    let dir = std::env::temp_dir().join(format!("sysyc-lli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("m.ll"), emit_module(&m, Target::Host)).unwrap();
    std::fs::write(dir.join("rt.c"), RUNTIME_C).unwrap();
    let st = Command::new("clang-14")
        .args(["-w", "-S", "-emit-llvm", "-o"])
        .arg(dir.join("rt.ll"))
        .arg(dir.join("rt.c"))
        .status()
        .unwrap();
    assert!(st.success());
    let mut child = Command::new("lli-14")
        .arg(format!("-extra-module={}", dir.join("rt.ll").display()))
        .arg(dir.join("m.ll"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"7").unwrap();
    let out = child.wait_with_output().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(
        (
            String::from_utf8_lossy(&out.stdout).as_ref(),
            out.status.code()
        ),
        ("42", Some(7))
    );
}
