//! End-to-end tests: hand-built IR compiled, assembled and linked with a small C runtime by
//! `riscv64-linux-gnu-gcc -static`, run under `qemu-riscv64`, output compared. Skipped (with a
//! message on stderr) when the cross tools are missing.

use super::*;
use crate::ir::{
    Block, Builder, CmpCond, FuncId, GlobalData, GlobalInit, Module, Opcode, Signature, Type, Value,
};
use std::path::PathBuf;
use std::process::Command;

const RUNTIME: &str = r#"
#include <stdio.h>
#include <stdlib.h>
int getint(void) { int x; if (scanf("%d", &x) != 1) return -1; return x; }
int getch(void) { return getchar(); }
void putint(int x) { printf("%d", x); }
void putch(int c) { putchar(c); }
void putfloat(float f) { printf("%a", (double)f); }
void putf(char *fmt, ...);
"#;

fn tools_present() -> bool {
    let ok = |c: &str| Command::new(c).arg("--version").output().is_ok();
    if ok("riscv64-linux-gnu-gcc") && ok("qemu-riscv64") {
        true
    } else {
        eprintln!("SKIPPED: riscv64-linux-gnu-gcc or qemu-riscv64 missing");
        false
    }
}

/// Compiles `m`, links with the runtime plus `extra_c`, runs, returns (stdout, exit code).
pub(super) fn run(name: &str, m: &Module, extra_c: &str, stdin: &str) -> Option<(String, i32)> {
    run_isa(name, m, extra_c, stdin, isa::Isa::default()).map(|(out, code, _)| (out, code))
}

/// `run` for a target with `isa`'s extensions (qemu emulates a CPU that has them); also
/// returns the assembly.
fn run_isa(
    name: &str,
    m: &Module,
    extra_c: &str,
    stdin: &str,
    isa: isa::Isa,
) -> Option<(String, i32, String)> {
    if !tools_present() {
        return None;
    }
    crate::ir::verify::module(m).unwrap_or_else(|e| panic!("bad test IR: {e}"));
    let asm = compile_module(
        m,
        &RiscvOptions {
            opt_level: 2,
            check_regalloc: true,
            isa,
            ..Default::default()
        },
    );
    let dir: PathBuf =
        std::env::temp_dir().join(format!("sysyc-rv-{}-{}", name, std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let s = dir.join("out.s");
    let c = dir.join("rt.c");
    let exe = dir.join("a.out");
    std::fs::write(&s, &asm).unwrap();
    std::fs::write(&c, format!("{RUNTIME}\n{extra_c}")).unwrap();
    let o = Command::new("riscv64-linux-gnu-gcc")
        .args(["-static", "-O1", "-o"])
        .arg(&exe)
        .arg(&s)
        .arg(&c)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "link failed:\n{}\n--- asm ---\n{asm}",
        String::from_utf8_lossy(&o.stderr)
    );
    let mut child = Command::new("qemu-riscv64")
        .args(crate::suite::toolchain::qemu_cpu(isa))
        .arg(&exe)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    Some((
        String::from_utf8_lossy(&out.stdout).into_owned(),
        out.status.code().unwrap_or(-1),
        asm,
    ))
}

fn sig(params: Vec<Type>, ret: Type) -> Signature {
    Signature {
        params,
        ret,
        variadic: false,
    }
}

struct Rt {
    putint: FuncId,
    putch: FuncId,
    putfloat: FuncId,
    getint: FuncId,
}

fn runtime(m: &mut Module) -> Rt {
    Rt {
        putint: m.declare_func("putint", sig(vec![Type::I32], Type::Void), false),
        putch: m.declare_func("putch", sig(vec![Type::I32], Type::Void), false),
        putfloat: m.declare_func("putfloat", sig(vec![Type::F32], Type::Void), false),
        getint: m.declare_func("getint", sig(vec![], Type::I32), false),
    }
}

fn blocks(f: &mut crate::ir::Function, n: usize) -> Vec<Block> {
    (0..n)
        .map(|_| {
            let b = f.make_block();
            f.append_block(b);
            b
        })
        .collect()
}

fn print_int(b: &mut Builder, rt: &Rt, v: Value) {
    b.call(rt.putint, Type::Void, &[v]);
    let nl = b.iconst(10);
    b.call(rt.putch, Type::Void, &[nl]);
}

#[test]
fn loop_sum_and_swap_phis() {
    let mut m = Module::new();
    let rt = runtime(&mut m);
    let main = m.declare_func("main", sig(vec![], Type::I32), true);
    let f = &mut m.funcs[main];
    let bb = blocks(f, 3);
    let (i, s, x, y) = (
        f.append_block_param(bb[1], Type::I32),
        f.append_block_param(bb[1], Type::I32),
        f.append_block_param(bb[1], Type::I32),
        f.append_block_param(bb[1], Type::I32),
    );
    let mut b = Builder::at_end(f, bb[0]);
    let zero = b.iconst(0);
    let one = b.iconst(1);
    let two = b.iconst(2);
    b.jump(bb[1], &[zero, zero, one, two]);
    b.switch_to(bb[1]);
    let s2 = b.binary(Opcode::Add, s, i);
    let i2 = b.binary(Opcode::Add, i, one);
    let n = b.iconst(100);
    let c = b.icmp(CmpCond::Lt, i2, n);
    // (x, y) swap every iteration: the lost-copy/swap problem.
    b.brif(c, bb[1], &[i2, s2, y, x], bb[2], &[]);
    b.switch_to(bb[2]);
    print_int(&mut b, &rt, s2);
    print_int(&mut b, &rt, x);
    print_int(&mut b, &rt, i);
    let r = b.iconst(3);
    b.ret(Some(r));
    let Some((out, code)) = run("loop", &m, "", "") else {
        return;
    };
    assert_eq!(out, "4950\n2\n99\n");
    assert_eq!(code, 3);
}

#[test]
fn recursion_and_division() {
    let mut m = Module::new();
    let rt = runtime(&mut m);
    let fib = m.declare_func("fib", sig(vec![Type::I32], Type::I32), true);
    let main = m.declare_func("main", sig(vec![], Type::I32), true);
    {
        let f = &mut m.funcs[fib];
        let bb = blocks(f, 3);
        let n = f.append_block_param(bb[0], Type::I32);
        let mut b = Builder::at_end(f, bb[0]);
        let two = b.iconst(2);
        let c = b.icmp(CmpCond::Lt, n, two);
        b.brif(c, bb[1], &[], bb[2], &[]);
        b.switch_to(bb[1]);
        b.ret(Some(n));
        b.switch_to(bb[2]);
        let one = b.iconst(1);
        let n1 = b.binary(Opcode::Sub, n, one);
        let n2 = b.binary(Opcode::Sub, n, two);
        let a = b.call(fib, Type::I32, &[n1]).unwrap();
        let c = b.call(fib, Type::I32, &[n2]).unwrap();
        let r = b.binary(Opcode::Add, a, c);
        b.ret(Some(r));
    }
    let f = &mut m.funcs[main];
    let bb = blocks(f, 1);
    let mut b = Builder::at_end(f, bb[0]);
    let x = b.iconst(20);
    let r = b.call(fib, Type::I32, &[x]).unwrap();
    print_int(&mut b, &rt, r);
    let a = b.call(rt.getint, Type::I32, &[]).unwrap();
    let d = b.call(rt.getint, Type::I32, &[]).unwrap();
    for op in [
        Opcode::Sdiv,
        Opcode::Srem,
        Opcode::Mul,
        Opcode::Shl,
        Opcode::Ashr,
        Opcode::Lshr,
    ] {
        let q = b.binary(op, a, d);
        print_int(&mut b, &rt, q);
    }
    let big = b.iconst(100000);
    let q = b.binary(Opcode::Mul, a, big);
    let q = b.binary(Opcode::Mul, q, big);
    print_int(&mut b, &rt, q);
    let ret = b.binary(Opcode::Sub, a, d);
    b.ret(Some(ret));
    let Some((out, code)) = run("fib", &m, "", "-7 2") else {
        return;
    };
    assert_eq!(out, "6765\n-3\n-1\n-14\n-28\n-2\n1073741822\n-1280523264\n");
    assert_eq!(code, 247);
}

#[test]
fn many_args_both_ways() {
    // main calls C `check` with 10 floats then 10 ints, and C calls our `sum` with 12 ints
    // interleaved with 10 floats.
    let mut m = Module::new();
    let rt = runtime(&mut m);
    let mut ctys = vec![Type::F32; 10];
    ctys.extend(vec![Type::I32; 10]);
    let check = m.declare_func("check", sig(ctys.clone(), Type::I32), false);
    let mut stys = Vec::new();
    for k in 0..22 {
        stys.push(if k % 2 == 1 && k < 20 {
            Type::F32
        } else {
            Type::I32
        });
    }
    let sum = m.declare_func("sum", sig(stys.clone(), Type::F32), true);
    let main = m.declare_func("main", sig(vec![], Type::I32), true);
    let drive = m.declare_func("drive", sig(vec![], Type::Void), false);
    {
        let f = &mut m.funcs[sum];
        let bb = blocks(f, 1);
        let ps: Vec<Value> = stys
            .iter()
            .map(|&t| f.append_block_param(bb[0], t))
            .collect();
        let mut b = Builder::at_end(f, bb[0]);
        let mut acc = b.fconst(0.0);
        for (k, &p) in ps.iter().enumerate() {
            let x = if stys[k] == Type::I32 {
                b.unary(Opcode::Sitofp, Type::F32, p)
            } else {
                p
            };
            let w = b.fconst((k + 1) as f32);
            let x = b.binary(Opcode::Fmul, x, w);
            acc = b.binary(Opcode::Fadd, acc, x);
        }
        b.ret(Some(acc));
    }
    let f = &mut m.funcs[main];
    let bb = blocks(f, 1);
    let mut b = Builder::at_end(f, bb[0]);
    let mut args = Vec::new();
    for k in 0..10 {
        args.push(b.fconst(k as f32 + 0.5));
    }
    for k in 0..10 {
        args.push(b.iconst(100 + k));
    }
    let r = b.call(check, Type::I32, &args).unwrap();
    print_int(&mut b, &rt, r);
    b.call(drive, Type::Void, &[]);
    let z = b.iconst(0);
    b.ret(Some(z));
    let c = r#"
int check(float f0, float f1, float f2, float f3, float f4, float f5, float f6, float f7,
          float f8, float f9, int i0, int i1, int i2, int i3, int i4, int i5, int i6, int i7,
          int i8, int i9) {
    float f[10] = {f0, f1, f2, f3, f4, f5, f6, f7, f8, f9};
    int i[10] = {i0, i1, i2, i3, i4, i5, i6, i7, i8, i9};
    int bad = 0;
    for (int k = 0; k < 10; k++) { if (f[k] != k + 0.5f) bad |= 1 << k; if (i[k] != 100 + k) bad |= 1 << (k + 10); }
    return bad;
}
extern float sum(int, float, int, float, int, float, int, float, int, float, int, float, int,
    float, int, float, int, float, int, float, int, int) __asm__("sy.sum");
void drive(void) {
    float r = sum(1, 2.f, 3, 4.f, 5, 6.f, 7, 8.f, 9, 10.f, 11, 12.f, 13, 14.f, 15, 16.f, 17, 18.f,
                  19, 20.f, 21, 22);
    printf("%g\n", r);
}
"#;
    let Some((out, _)) = run("args", &m, c, "") else {
        return;
    };
    // sum of k*k for k = 1..22 = 3795
    assert_eq!(out, "0\n3795\n");
}

#[test]
fn arrays_globals_and_big_frames() {
    let mut m = Module::new();
    let rt = runtime(&mut m);
    let g = m.add_global(GlobalData {
        name: "tab".into(),
        size: 4000,
        elem: Type::I32,
        init: GlobalInit::Words(vec![5, 0, 0, 7]),
        is_const: false,
    });
    let main = m.declare_func("main", sig(vec![], Type::I32), true);
    let f = &mut m.funcs[main];
    let bb = blocks(f, 3);
    let i = f.append_block_param(bb[1], Type::I32);
    let s = f.append_block_param(bb[1], Type::I32);
    let mut b = Builder::at_end(f, bb[0]);
    let big = b.alloca(4_000_000, 4);
    let small = b.alloca(16, 4);
    let gp = b.gaddr(g);
    let zero = b.iconst(0);
    let nine = b.iconst(9);
    let p = b.offset(small, 8);
    b.store(nine, p);
    b.jump(bb[1], &[zero, zero]);
    b.switch_to(bb[1]);
    let p = b.gep(big, i, 4);
    b.store(i, p);
    let p2 = b.gep(big, i, 4);
    let v = b.load(Type::I32, p2);
    let s2 = b.binary(Opcode::Add, s, v);
    let gq = b.gep(gp, i, 4);
    let gv = b.load(Type::I32, gq);
    let s3 = b.binary(Opcode::Add, s2, gv);
    let one = b.iconst(1);
    let i2 = b.binary(Opcode::Add, i, one);
    let n = b.iconst(1000);
    let c = b.icmp(CmpCond::Lt, i2, n);
    b.brif(c, bb[1], &[i2, s3], bb[2], &[]);
    b.switch_to(bb[2]);
    let last = b.offset(big, 3_999_996);
    b.store(s3, last);
    let lv = b.load(Type::I32, last);
    print_int(&mut b, &rt, lv);
    print_int(&mut b, &rt, s3);
    let p = b.offset(small, 8);
    let v = b.load(Type::I32, p);
    print_int(&mut b, &rt, v);
    b.ret(Some(zero));
    let Some((out, _)) = run("arrays", &m, "", "") else {
        return;
    };
    assert_eq!(out, "499512\n499512\n9\n");
}

#[test]
fn register_pressure_and_floats() {
    let mut m = Module::new();
    let rt = runtime(&mut m);
    let main = m.declare_func("main", sig(vec![], Type::I32), true);
    let f = &mut m.funcs[main];
    let bb = blocks(f, 1);
    let mut b = Builder::at_end(f, bb[0]);
    let x = b.call(rt.getint, Type::I32, &[]).unwrap();
    // 60 ints and 40 floats live at once, across a call.
    let mut ints = Vec::new();
    let mut fls = Vec::new();
    for k in 0..60 {
        let c = b.iconst(k * 3 + 1);
        ints.push(b.binary(Opcode::Mul, x, c));
    }
    let xf = b.unary(Opcode::Sitofp, Type::F32, x);
    for k in 0..40 {
        let c = b.fconst(k as f32 * 0.25);
        fls.push(b.binary(Opcode::Fadd, xf, c));
    }
    let y = b.call(rt.getint, Type::I32, &[]).unwrap();
    let mut acc = y;
    for &v in ints.iter().rev() {
        acc = b.binary(Opcode::Add, acc, v);
    }
    let mut facc = b.fconst(0.0);
    for &v in &fls {
        facc = b.binary(Opcode::Fadd, facc, v);
    }
    print_int(&mut b, &rt, acc);
    b.call(rt.putfloat, Type::Void, &[facc]);
    let nl = b.iconst(10);
    b.call(rt.putch, Type::Void, &[nl]);
    let t = b.unary(Opcode::Fptosi, Type::I32, facc);
    print_int(&mut b, &rt, t);
    let neg = b.unary(Opcode::Fneg, Type::F32, facc);
    let t = b.unary(Opcode::Fptosi, Type::I32, neg);
    print_int(&mut b, &rt, t);
    let cb = b.fcmp(CmpCond::Lt, neg, facc);
    let c = b.unary(Opcode::Zext, Type::I32, cb);
    print_int(&mut b, &rt, c);
    let sel = b.select(cb, x, y);
    print_int(&mut b, &rt, sel);
    b.ret(Some(sel));
    let Some((out, code)) = run("pressure", &m, "", "2 5") else {
        return;
    };
    // acc = 5 + 2 * sum(3k+1, k<60) = 5 + 2 * 5370; floats: 40*2 + 0.25 * 780 = 275
    assert_eq!(out, "10745\n0x1.13p+8\n275\n-275\n1\n2\n");
    assert_eq!(code, 2);
}

#[test]
fn tail_calls_run_in_constant_stack() {
    // sum(n, acc) = n == 0 ? acc : sum(n - 1, acc + n), 10^7 deep: only works as a loop.
    let mut m = Module::new();
    let rt = runtime(&mut m);
    let sum = m.declare_func("sum", sig(vec![Type::I32, Type::I32], Type::I32), true);
    let main = m.declare_func("main", sig(vec![], Type::I32), true);
    {
        let f = &mut m.funcs[sum];
        let bb = blocks(f, 3);
        let n = f.append_block_param(bb[0], Type::I32);
        let acc = f.append_block_param(bb[0], Type::I32);
        let mut b = Builder::at_end(f, bb[0]);
        let zero = b.iconst(0);
        let c = b.icmp(CmpCond::Eq, n, zero);
        b.brif(c, bb[1], &[], bb[2], &[]);
        b.switch_to(bb[1]);
        b.ret(Some(acc));
        b.switch_to(bb[2]);
        let one = b.iconst(1);
        let n1 = b.binary(Opcode::Sub, n, one);
        let a1 = b.binary(Opcode::Add, acc, n);
        let r = b.call(sum, Type::I32, &[n1, a1]).unwrap();
        b.ret(Some(r));
    }
    let f = &mut m.funcs[main];
    let bb = blocks(f, 1);
    let mut b = Builder::at_end(f, bb[0]);
    let n = b.iconst(10_000_000);
    let z = b.iconst(0);
    let r = b.call(sum, Type::I32, &[n, z]).unwrap();
    print_int(&mut b, &rt, r);
    b.ret(Some(z));
    let asm = compile_module(&m, &RiscvOptions::default());
    assert!(asm.contains("\ttail\tsy.sum"), "{asm}");
    let Some((out, _)) = run("tail", &m, "", "") else {
        return;
    };
    assert_eq!(
        out,
        format!("{}\n", (50000005000000i64 as u64 as u32) as i32)
    );
}

#[test]
fn output_is_identical_for_any_thread_count() {
    let mut m = Module::new();
    let rt = runtime(&mut m);
    for k in 0..12 {
        let id = m.declare_func(&format!("f{k}"), sig(vec![Type::I32], Type::I32), true);
        let f = &mut m.funcs[id];
        let bb = blocks(f, 1);
        let x = f.append_block_param(bb[0], Type::I32);
        let mut b = Builder::at_end(f, bb[0]);
        let c = b.iconst(k);
        let y = b.binary(Opcode::Mul, x, c);
        b.call(rt.putint, Type::Void, &[y]);
        b.ret(Some(y));
    }
    let opts = RiscvOptions {
        opt_level: 2,
        check_regalloc: true,
        ..Default::default()
    };
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap()
        .install(|| compile_module(&m, &opts));
    let four = rayon::ThreadPoolBuilder::new()
        .num_threads(4)
        .build()
        .unwrap()
        .install(|| compile_module(&m, &opts));
    assert_eq!(one, four);
}

/// `SYSY_STATS=a.sy:b.sy cargo test --release stats_report -- --ignored --nocapture` prints the
/// static counts of each function (the benchmark's view of allocation quality).
#[test]
#[ignore]
fn stats_report() {
    let files = std::env::var("SYSY_STATS").unwrap_or_default();
    for path in files.split(':').filter(|p| !p.is_empty()) {
        let src = std::fs::read(path).unwrap();
        let mut m = crate::frontend::compile_to_ir(&src, path).unwrap();
        let popts = crate::passes::PassOptions {
            opt_level: 2,
            verify_each: false,
            print_after: Vec::new(),
            opt_bisect: None,
        };
        crate::passes::optimize(&mut m, &popts);
        for s in stats(
            &m,
            &RiscvOptions {
                opt_level: 2,
                check_regalloc: true,
                ..Default::default()
            },
        ) {
            println!(
                "{path} {:<24} insts {:>5} spill-ld {:>4} spill-st {:>4} moves {:>4} frame {:>8} spilled {:>4}",
                s.name, s.insts, s.spill_loads, s.spill_stores, s.moves, s.frame_size, s.spilled_vregs
            );
        }
    }
}

#[test]
fn variadic_calls_pass_doubles_in_integer_registers() {
    // show("..", d0, i0, d1, i1, ...) with 6 doubles and 6 ints: registers, then the stack.
    let mut m = Module::new();
    let rt = runtime(&mut m);
    let s = m.add_global(GlobalData {
        name: "fmt".into(),
        size: 3,
        elem: Type::I1,
        init: GlobalInit::Bytes(b"%d".to_vec()),
        is_const: true,
    });
    let show = m.declare_func(
        "show",
        Signature {
            params: vec![Type::Ptr],
            ret: Type::I32,
            variadic: true,
        },
        false,
    );
    let main = m.declare_func("main", sig(vec![], Type::I32), true);
    let f = &mut m.funcs[main];
    let bb = blocks(f, 1);
    let mut b = Builder::at_end(f, bb[0]);
    let p = b.gaddr(s);
    let mut args = vec![p];
    for k in 0..6 {
        let x = b.fconst(k as f32 + 0.25);
        args.push(b.unary(Opcode::Fpext, Type::F64, x));
        args.push(b.iconst(10 * k));
    }
    let r = b.call(show, Type::I32, &args).unwrap();
    print_int(&mut b, &rt, r);
    let z = b.iconst(0);
    b.ret(Some(z));
    let c = r#"
#include <stdarg.h>
int show(char *fmt, ...) {
    va_list ap; va_start(ap, fmt);
    int bad = fmt[0] != '%' || fmt[1] != 'd' || fmt[2] != 0;
    for (int k = 0; k < 6; k++) {
        double d = va_arg(ap, double); int i = va_arg(ap, int);
        if (d != k + 0.25 || i != 10 * k) bad |= 2 << k;
    }
    va_end(ap);
    return bad;
}
"#;
    let Some((out, _)) = run("variadic", &m, c, "") else {
        return;
    };
    assert_eq!(out, "0\n");
}

/// Zba/Zbb selection: scaled addresses, zero extension, shifted adds, inverted logic and
/// min/max selects give the new instructions, and the program computes what rv64gc code does.
#[test]
fn zba_zbb_selection_runs() {
    let text = "declare @getint() -> i32
declare @putint(i32) -> void
declare @putch(i32) -> void

func @main() -> i32 {
bb0:
    v0 = iconst.i32 0
    v1 = iconst.i32 32
    v2 = alloca 64, align 8
    v3 = call.i32 @getint()
    v4 = call.i32 @getint()
    v5 = iconst.i32 7
    v30 = and.i32 v4, v5
    v6 = gep v2, v30, 4
    store v3, v6
    v7 = load.i32 v6
    v8 = icmp.lt v3, v4
    v9 = select.i32 v8, v3, v4
    v10 = select.i32 v8, v4, v3
    v11 = icmp.ge v3, v4
    v12 = select.i32 v11, v4, v3
    v13 = iconst.i32 -1
    v14 = xor.i32 v4, v13
    v15 = and.i32 v3, v14
    v16 = xor.i32 v4, v13
    v17 = or.i32 v3, v16
    v18 = xor.i32 v4, v13
    v19 = xor.i32 v3, v18
    v20 = zext.i64 v3
    v21 = iconst.i64 3
    v22 = sext.i64 v4
    v23 = shl.i64 v22, v21
    v24 = add.i64 v20, v23
    v25 = iconst.i64 16
    v26 = lshr.i64 v24, v25
    v27 = trunc.i32 v26
    v28 = trunc.i32 v24
    call.void @putint(v7)
    call.void @putch(v1)
    call.void @putint(v9)
    call.void @putch(v1)
    call.void @putint(v10)
    call.void @putch(v1)
    call.void @putint(v12)
    call.void @putch(v1)
    call.void @putint(v15)
    call.void @putch(v1)
    call.void @putint(v17)
    call.void @putch(v1)
    call.void @putint(v19)
    call.void @putch(v1)
    call.void @putint(v27)
    call.void @putch(v1)
    call.void @putint(v28)
    ret v0
}
";
    let m = crate::ir::parse::module(text).unwrap_or_else(|e| panic!("{}: {}", e.line, e.message));
    let both = isa::Isa {
        zba: true,
        zbb: true,
    };
    for (x, y) in [(-7, 3), (3, -7), (5, 5), (i32::MIN, i32::MAX), (-1, -2)] {
        let input = format!("{x} {y}");
        let want = {
            let z = (x as u32 as u64).wrapping_add((y as i64 as u64) << 3);
            format!(
                "{x} {} {} {} {} {} {} {} {}",
                x.min(y),
                x.max(y),
                x.min(y),
                x & !y,
                x | !y,
                x ^ !y,
                (z >> 16) as i32,
                z as i32
            )
        };
        let Some((plain, _, _)) = run_isa("zb-plain", &m, "", &input, isa::Isa::default()) else {
            return;
        };
        let (out, code, asm) = run_isa("zb", &m, "", &input, both).unwrap();
        assert_eq!((out.as_str(), code), (want.as_str(), 0), "{asm}");
        assert_eq!(plain, want);
        for op in [
            "sh2add", "sh3add", "add.uw", "min", "max", "andn", "orn", "xnor",
        ] {
            assert!(asm.contains(&format!("\t{op}\t")), "no {op}:\n{asm}");
        }
    }
}

#[test]
fn wide_constants_live_only_in_the_loop_nests_that_read_them() {
    // One 64-bit constant read by two loops, each after a call: it is built once before
    // each loop (after the call), not at the entry, where it would live across both.
    let text = "declare @getint() -> i32
declare @putint(i32) -> void
declare @putch(i32) -> void

func @main() -> i32 {
bb0:
    v0 = iconst.i64 81985529216486895
    v1 = iconst.i32 0
    v2 = iconst.i32 1
    v3 = iconst.i64 40
    v4 = iconst.i32 10
    v5 = call.i32 @getint()
    jump bb1(v1, v1)
bb1(v10: i32, v11: i32):
    v12 = sext.i64 v10
    v13 = mul.i64 v12, v0
    v14 = lshr.i64 v13, v3
    v15 = trunc.i32 v14
    v16 = add.i32 v11, v15
    v17 = add.i32 v10, v2
    v18 = icmp.lt v17, v5
    brif v18, bb1(v17, v16), bb2
bb2:
    call.void @putint(v16)
    call.void @putch(v4)
    v20 = call.i32 @getint()
    jump bb3(v1, v1)
bb3(v30: i32, v31: i32):
    v32 = sext.i64 v30
    v33 = add.i64 v32, v0
    v34 = lshr.i64 v33, v3
    v35 = trunc.i32 v34
    v36 = xor.i32 v31, v35
    v37 = add.i32 v36, v30
    v38 = add.i32 v30, v2
    v39 = icmp.lt v38, v20
    brif v39, bb3(v38, v37), bb4
bb4:
    call.void @putint(v37)
    ret v1
}
";
    let m = crate::ir::parse::module(text).unwrap_or_else(|e| panic!("{}: {}", e.line, e.message));
    let c = 81985529216486895i64;
    let (n1, n2) = (9, 13);
    let mut s1 = 0i32;
    for i in 0..n1 {
        s1 = s1.wrapping_add(((i as i64).wrapping_mul(c) as u64 >> 40) as i32);
    }
    let mut s2 = 0i32;
    for i in 0..n2 {
        s2 = (s2 ^ (((i as i64).wrapping_add(c) as u64 >> 40) as i32)).wrapping_add(i);
    }
    let Some((out, code, asm)) = run_isa("wide-const", &m, "", "9 13", isa::Isa::default()) else {
        return;
    };
    assert_eq!((out, code), (format!("{s1}\n{s2}"), 0), "{asm}");
    let lines: Vec<&str> = asm.lines().collect();
    let at = |pat: &str| -> Vec<usize> {
        let hits = lines.iter().enumerate().filter(|(_, l)| l.contains(pat));
        hits.map(|(k, _)| k).collect()
    };
    let (builds, calls) = (at(", 81985529216486895"), at("call\tgetint"));
    assert_eq!(builds.len(), 2, "{asm}");
    assert!(builds[0] > calls[0] && builds[1] > calls[1], "{asm}");
}

#[test]
fn a_float_constant_is_built_once_where_its_first_block_dominates() {
    // `3.0` is a value of its own in each block (as after inlining); the blocks after the
    // entry reuse the register the entry built it in, even across the branches.
    let text = "declare @getint() -> i32
declare @putint(i32) -> void
declare @putch(i32) -> void

func @main() -> i32 {
bb0:
    v0 = call.i32 @getint()
    v1 = sitofp.f32 v0
    v2 = fconst.f32 3.0
    v3 = fmul.f32 v1, v2
    v4 = iconst.i32 0
    v5 = icmp.gt v0, v4
    brif v5, bb1, bb2
bb1:
    v10 = fconst.f32 3.0
    v11 = fadd.f32 v3, v10
    jump bb3(v11)
bb2:
    v20 = fconst.f32 3.0
    v21 = fsub.f32 v3, v20
    jump bb3(v21)
bb3(v30: f32):
    v31 = fconst.f32 3.0
    v32 = fmul.f32 v30, v31
    v33 = fptosi.i32 v32
    call.void @putint(v33)
    ret v4
}
";
    let m = crate::ir::parse::module(text).unwrap_or_else(|e| panic!("{}: {}", e.line, e.message));
    for (input, expect) in [("5", "54"), ("-2", "-27")] {
        let Some((out, code, asm)) = run_isa("float-const", &m, "", input, isa::Isa::default())
        else {
            return;
        };
        assert_eq!((out.as_str(), code), (expect, 0), "{asm}");
        let builds = asm.lines().filter(|l| l.contains(", 1077936128")).count();
        assert_eq!(builds, 1, "{asm}");
    }
}

#[test]
fn zero_words_of_an_aligned_local_become_one_doubleword_store() {
    let text = "declare @getint() -> i32
declare @putint(i32) -> void
declare @putch(i32) -> void

func @main() -> i32 {
bb0:
    v0 = alloca 16, align 16
    v1 = iconst.i32 0
    v2 = iconst.i32 32
    v3 = offset v0, 4
    v4 = offset v0, 8
    v5 = offset v0, 12
    v6 = call.i32 @getint()
    store v6, v0
    store v6, v3
    store v6, v4
    store v6, v5
    call.void @putint(v6)
    store v1, v3
    store v1, v5
    store v1, v4
    v10 = load.i32 v0
    v11 = load.i32 v3
    v12 = load.i32 v4
    v13 = load.i32 v5
    call.void @putint(v10)
    call.void @putch(v2)
    call.void @putint(v11)
    call.void @putch(v2)
    call.void @putint(v12)
    call.void @putch(v2)
    call.void @putint(v13)
    ret v1
}
";
    let m = crate::ir::parse::module(text).unwrap_or_else(|e| panic!("{}: {}", e.line, e.message));
    let Some((out, code, asm)) = run_isa("zero-words", &m, "", "-5", isa::Isa::default()) else {
        return;
    };
    assert_eq!((out.as_str(), code), ("-5-5 0 0 0", 0), "{asm}");
    // Words 8 and 12 share an aligned doubleword; word 4 does not pair with word 0.
    assert_eq!(asm.matches("\tsd\tzero, ").count(), 1, "{asm}");
    assert_eq!(asm.matches("\tsw\tzero, ").count(), 1, "{asm}");
}

#[test]
fn an_address_inside_a_stack_object_is_recomputed_not_spilled() {
    // `&a[10]` is one `addi` from sp: the allocator may recompute it instead of storing and
    // reloading it (its definition is recorded as the rematerialization).
    let text = "declare @putarray(i32, ptr) -> void

func @main() -> i32 {
bb0:
    v0 = alloca 64, align 4
    v1 = offset v0, 40
    v2 = iconst.i32 6
    call.void @putarray(v2, v1)
    ret v2
}
";
    let m = crate::ir::parse::module(text).unwrap_or_else(|e| panic!("{}: {}", e.line, e.message));
    let f = m
        .funcs
        .iter()
        .map(|(_, f)| f)
        .find(|f| f.name == "main")
        .unwrap();
    let mf = isel::select(f, &m.cx, isa::Isa::default());
    let recomputed = mf.insts.iter().any(|mi| {
        mi.op == MOp::Addi
            && mi.rs1 == minst::Reg::SP
            && mi.fref == minst::FrameRef::Object
            && mi.imm == 40
            && mf.remat[mi.rd.as_vreg()] == Some(*mi)
    });
    assert!(recomputed, "{:?}", mf.insts);
}

#[test]
fn multiplications_by_two_powers_plus_or_minus_one() {
    // `x * 3`, `* 7`, `* 9`, `* 31`, `* 65537` (wrapping) and a 64-bit `* (2^32 + 1)` become a
    // shift and an addition or subtraction, and a loop counting by 7 stays exact.
    let factors = [3, 7, 9, 31, 65537];
    let mut text = String::from(
        "declare @getint() -> i32
declare @putint(i32) -> void
declare @putch(i32) -> void

func @main() -> i32 {
bb0:
    v0 = call.i32 @getint()
    v1 = call.i32 @getint()
    v2 = iconst.i32 10
",
    );
    for (k, c) in factors.iter().enumerate() {
        let (cv, pv) = (10 + 2 * k, 11 + 2 * k);
        text += &format!(
            "    v{cv} = iconst.i32 {c}\n    v{pv} = mul.i32 v0, v{cv}\n    \
             call.void @putint(v{pv})\n    call.void @putch(v2)\n"
        );
    }
    text += "    v23 = sext.i64 v0
    v24 = iconst.i64 4294967297
    v25 = mul.i64 v23, v24
    v26 = iconst.i64 32
    v27 = ashr.i64 v25, v26
    v28 = trunc.i32 v27
    call.void @putint(v28)
    call.void @putch(v2)
    v5 = iconst.i32 7
    v20 = icmp.le v0, v1
    v21 = iconst.i32 0
    v22 = iconst.i32 100
    brif v20, bb1(v21), bb3(v21)
bb1(v30: i32):
    v31 = add.i32 v30, v5
    v32 = icmp.lt v31, v22
    brif v32, bb2, bb3(v31)
bb2:
    brif v20, bb1(v31), bb3(v31)
bb3(v40: i32):
    call.void @putint(v40)
    ret v21
}
";
    let m = crate::ir::parse::module(&text).unwrap_or_else(|e| panic!("{}: {}", e.line, e.message));
    for (x, y, last) in [(123456i32, 123457, 105), (-98765, -98766, 0)] {
        let want: Vec<String> = factors
            .iter()
            .map(|&c| x.wrapping_mul(c).to_string())
            .chain([((x as i64).wrapping_mul(4294967297) >> 32).to_string()])
            .chain([last.to_string()])
            .collect();
        let stdin = format!("{x} {y}");
        let Some((out, code, asm)) = run_isa("mul-shift", &m, "", &stdin, isa::Isa::default())
        else {
            return;
        };
        assert_eq!((out, code), (want.join("\n"), 0), "{asm}");
        assert!(!asm.contains("\tmul"), "{asm}");
    }
}
