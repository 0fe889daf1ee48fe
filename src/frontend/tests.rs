//! Frontend tests: the contest suites must pass, `fixtures/invalid` must give the expected first
//! diagnostic, and random or mutated input and very deep nesting must never panic.

use super::*;
use std::path::{Path, PathBuf};

fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The shared suites directory (`SYSY_SUITES`, default `../shared/suites`), if present.
pub(crate) fn suites_dir() -> Option<PathBuf> {
    let dir = match std::env::var_os("SYSY_SUITES") {
        Some(d) => PathBuf::from(d),
        None => manifest_dir().join("../shared/suites"),
    };
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!(
            "\n*** SKIPPED: suites directory {} not found (set SYSY_SUITES) ***\n",
            dir.display()
        );
        None
    }
}

/// All `.sy` files under `dir`, recursively, sorted.
pub(crate) fn sy_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "sy") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn suites_pass_sema() {
    let Some(dir) = suites_dir() else { return };
    let files = sy_files(&dir);
    assert!(!files.is_empty());
    let mut failures = Vec::new();
    for f in &files {
        let src = std::fs::read(f).unwrap();
        let name = f.display().to_string();
        let r = with_big_stack(move || check(&src, &name).map(|_| ()));
        if let Err(e) = r {
            failures.push(e);
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} files failed:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
    eprintln!("checked {} suite files", files.len());
}

/// Lowers `src` and runs the verifier on every function; `Err` is diagnostics or verifier output.
pub(crate) fn lower_and_verify(src: Vec<u8>, name: String) -> Result<crate::ir::Module, String> {
    with_big_stack(move || {
        let m = compile_to_ir(&src, &name)?;
        crate::ir::verify::module(&m).map_err(|e| format!("{name}: {e}"))?;
        Ok(m)
    })
}

#[test]
fn suites_lower_and_verify() {
    let Some(dir) = suites_dir() else { return };
    let files = sy_files(&dir);
    let mut failures = Vec::new();
    for f in &files {
        let src = std::fs::read(f).unwrap();
        if let Err(e) = lower_and_verify(src, f.display().to_string()) {
            failures.push(e);
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} files failed:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
}

/// Our own programs (`fixtures/sysy/**`) lower and verify, and each has its expected output.
#[test]
fn sysy_fixtures_lower_and_verify() {
    let files = sy_files(&manifest_dir().join("fixtures/sysy"));
    assert!(
        files.len() >= 25,
        "expected at least 25 programs, found {}",
        files.len()
    );
    for f in &files {
        assert!(
            f.with_extension("out").is_file(),
            "{} has no .out",
            f.display()
        );
        let src = std::fs::read(f).unwrap();
        if let Err(e) = lower_and_verify(src, f.display().to_string()) {
            panic!("{e}");
        }
    }
}

/// Lowering one function at a time from bodies of their own, on demand from bodies of their own
/// (`-O0`) and in parallel from shared ones give the same module and the same diagnostics.
#[test]
fn lowering_schedules_agree() {
    let mut files = Vec::new();
    for dir in ["fixtures/sysy", "fixtures/warn", "fixtures/invalid"] {
        files.extend(sy_files(&manifest_dir().join(dir)));
    }
    files.extend(suites_dir().map_or_else(Vec::new, |d| sy_files(&d)));
    assert!(files.len() >= 60, "found only {} programs", files.len());
    for f in files {
        let src = std::fs::read(&f).unwrap();
        let name = f.display().to_string();
        let (parallel, sequential, lazy) = with_big_stack(move || {
            let opts = diag::DiagOptions::default();
            let t = Timings::off();
            let text = |schedule| {
                let out = run_timed(&src, &name, &opts, schedule, &t);
                let ir = out.module.as_ref().map(crate::ir::print::module);
                (ir, out.diagnostics)
            };
            let lazy = match run_lazy(&src, &name, &opts, &t) {
                Ok((mut m, lazy)) => {
                    // Built in reverse order: the order of building must not matter. Eager
                    // lowering compacts the tables; lazy lowering leaves that out.
                    for (_, f) in m.funcs.iter_mut().rev() {
                        lazy.build(f);
                        f.compact();
                    }
                    let ir = crate::ir::print::module(&m);
                    (Some(ir), lazy.finish(&src, &name, &t))
                }
                Err(diagnostics) => (None, diagnostics),
            };
            (
                text(lower::Schedule::Parallel),
                text(lower::Schedule::Sequential),
                lazy,
            )
        });
        assert!(
            parallel == sequential && parallel == lazy,
            "{}: the schedules differ",
            f.display()
        );
    }
}

/// Every `NAME.sy` under `dir` compiled with the default options: its complete rendered
/// diagnostics must equal `NAME.<ext>` (`BLESS=1` rewrites them), and it must be rejected
/// (`fails`) or accepted. Returns the number of files.
fn ui_fixtures(dir: &str, ext: &str, fails: bool) -> usize {
    let files = sy_files(&manifest_dir().join(dir));
    let mut failures = Vec::new();
    // With one worker thread sema checks each item after parsing it; with two, while the
    // parser goes on (`check_overlapped`): the diagnostics must be the same.
    for threads in [1, 2] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .stack_size(STACK_SIZE)
            .build()
            .unwrap();
        for f in &files {
            let src = std::fs::read(f).unwrap();
            let name = f.file_name().unwrap().to_string_lossy().to_string();
            let out = pool.install(|| {
                let r = run(&src, &name, &diag::DiagOptions::default());
                (r.module.is_none(), r.diagnostics)
            });
            let expected_path = f.with_extension(ext);
            if std::env::var_os("BLESS").is_some() {
                std::fs::write(&expected_path, &out.1).unwrap();
            }
            let expected = std::fs::read_to_string(&expected_path)
                .unwrap_or_else(|_| panic!("missing {}", expected_path.display()));
            if out.0 != fails {
                let what = if fails { "accepted" } else { "rejected" };
                failures.push(format!("{name} ({threads} threads): {what}\n{}", out.1));
            } else if out.1 != expected {
                failures.push(format!(
                    "{name} ({threads} threads): rendering differs\n--- expected\n{expected}--- got\n{}",
                    out.1
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} runs of the fixtures in {dir} failed (BLESS=1 rewrites the expectations):\n{}",
        failures.len(),
        2 * files.len(),
        failures.join("\n")
    );
    files.len()
}

/// `fixtures/invalid/*.sy` are rejected with exactly the diagnostics in `*.err`.
#[test]
fn invalid_fixtures() {
    let n = ui_fixtures("fixtures/invalid", "err", true);
    assert!(n >= 30, "expected at least 30 invalid fixtures, found {n}");
}

/// `fixtures/warn/*.sy` compile, with exactly the warnings in `*.stderr`.
#[test]
fn warn_fixtures() {
    let n = ui_fixtures("fixtures/warn", "stderr", false);
    assert!(n >= 7, "expected a warn fixture per warning, found {n}");
}

struct XorShift(u64);
impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Random bytes, random token soup and mutated copies of valid programs never panic.
#[test]
fn fuzz_never_panics() {
    with_big_stack(|| {
        let mut rng = XorShift(0x2545_F491_4F6C_DD1D);
        const PIECES: &[&str] = &[
            "int ",
            "float ",
            "void ",
            "const ",
            "if",
            "else",
            "while",
            "break;",
            "continue;",
            "return ",
            "(",
            ")",
            "[",
            "]",
            "{",
            "}",
            ",",
            ";",
            "=",
            "+",
            "-",
            "*",
            "/",
            "%",
            "!",
            "<",
            ">=",
            "==",
            "&&",
            "||",
            "a",
            "b",
            "main",
            "putint",
            "putf",
            "\"%d\"",
            "0x1p3",
            "1.5",
            "07",
            "3",
            "2147483648",
            "/*",
            "*/",
            "//",
            "\n",
            "int main(){",
            "getint()",
            "a[1][2]",
            "starttime()",
        ];
        for _ in 0..2000 {
            let len = rng.below(200);
            let bytes: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
            let _ = check(&bytes, "fuzz.sy");
            let mut s = String::new();
            for _ in 0..rng.below(60) {
                s += PIECES[rng.below(PIECES.len())];
            }
            let _ = check(s.as_bytes(), "fuzz.sy");
        }
        let mut seeds: Vec<Vec<u8>> = Vec::new();
        for f in sy_files(&manifest_dir().join("fixtures"))
            .into_iter()
            .take(40)
        {
            seeds.push(std::fs::read(f).unwrap());
        }
        if let Some(dir) = suites_dir() {
            for f in sy_files(&dir.join("functional")).into_iter().take(60) {
                seeds.push(std::fs::read(f).unwrap());
            }
        }
        for seed in &seeds {
            for _ in 0..20 {
                let mut m = seed.clone();
                for _ in 0..1 + rng.below(4) {
                    if m.is_empty() {
                        break;
                    }
                    let at = rng.below(m.len());
                    match rng.below(4) {
                        0 => m[at] = rng.next() as u8,
                        1 => {
                            m.remove(at);
                        }
                        2 => {
                            let p = PIECES[rng.below(PIECES.len())];
                            m.splice(at..at, p.bytes());
                        }
                        _ => {
                            let end = (at + rng.below(40)).min(m.len());
                            m.drain(at..end);
                        }
                    }
                }
                let _ = check(&m, "mutant.sy");
            }
        }
    });
}

fn deep(prefix: &str, open: &str, mid: &str, close: &str, suffix: &str, n: usize) -> Vec<u8> {
    let mut s = String::with_capacity(n * (open.len() + close.len()) + 100);
    s += prefix;
    for _ in 0..n {
        s += open;
    }
    s += mid;
    for _ in 0..n {
        s += close;
    }
    s += suffix;
    s.into_bytes()
}

fn deep_cases(n: usize) -> Vec<(&'static str, Vec<u8>, bool)> {
    vec![
        (
            "parens",
            deep("int main(){ return ", "(", "1", ")", "; }", n),
            true,
        ),
        (
            "unary",
            deep("int main(){ int x = 1; return ", "-", "x", "", "; }", n),
            true,
        ),
        (
            "not",
            deep("int main(){ int x = 1; return ", "!", "x", "", "; }", n),
            true,
        ),
        (
            "neg-parens",
            deep(
                "int main(){ int x = 1; return ",
                "-(",
                "x",
                ")",
                "; }",
                n / 2,
            ),
            true,
        ),
        (
            "blocks",
            deep("int main(){ ", "{", "putint(1);", "}", " return 0; }", n),
            true,
        ),
        (
            "ifs",
            deep(
                "int main(){ int x = getint(); ",
                "if (x) ",
                "x = 2;",
                "",
                " return x; }",
                n,
            ),
            true,
        ),
        (
            "whiles",
            deep(
                "int main(){ int x = getint(); ",
                "while (x) ",
                "x = 0;",
                "",
                " return x; }",
                n,
            ),
            true,
        ),
        (
            "calls",
            deep(
                "int f(int a){return a;} int main(){ return ",
                "f(",
                "1",
                ")",
                "; }",
                n,
            ),
            true,
        ),
        (
            "index",
            deep("int a[2]; int main(){ return ", "a[", "0", "]", "; }", n),
            true,
        ),
        (
            "and-chain",
            deep(
                "int main(){ int x = getint(); return x",
                "&&x",
                "",
                "",
                "; }",
                n,
            ),
            true,
        ),
        (
            "sum-chain",
            deep(
                "int main(){ int x = getint(); return x",
                "+x",
                "",
                "",
                "; }",
                n,
            ),
            true,
        ),
        (
            "init-braces",
            deep("int a[2] = ", "{", "1", "}", "; int main(){ return 0; }", n),
            true,
        ),
        (
            "seq-ifs",
            deep(
                "int main(){ int x = getint(); int y = 0; ",
                "if (x) y = y + 1; ",
                "",
                "",
                " return y; }",
                n,
            ),
            true,
        ),
        (
            "too-deep",
            deep("int main(){ return ", "(", "1", ")", "; }", 300_000),
            false,
        ),
        (
            "too-long-chain",
            deep(
                "int main(){ int x = 1; return x",
                "+x",
                "",
                "",
                "; }",
                300_000,
            ),
            false,
        ),
    ]
}

/// 100 000-deep nesting of each kind is lowered (or rejected cleanly), never overflows.
/// (Not verified: the verifier's dominance check is quadratic in the dominator tree depth.)
#[test]
fn deep_nesting() {
    for (name, src, ok) in deep_cases(100_000 - 10) {
        let r = with_big_stack(move || compile_to_ir(&src, "deep.sy"));
        match (r, ok) {
            (Ok(_), true) => {}
            (Err(e), false) => assert!(e.contains("too deep"), "{name}: {e}"),
            (Ok(_), false) => panic!("{name}: accepted"),
            (Err(e), true) => panic!("{name}: {}", &e[..e.len().min(2000)]),
        }
    }
}

/// The same shapes, less deep, lowered and verified.
#[test]
fn deep_nesting_verified() {
    for (name, src, ok) in deep_cases(2_000) {
        if ok {
            if let Err(e) = lower_and_verify(src, "deep.sy".into()) {
                panic!("{name}: {}", &e[..e.len().min(3000)]);
            }
        }
    }
}

/// Measures stack needs: `PROBE_CASE=name PROBE_STACK_MB=n cargo test stack_probe -- --ignored`
/// (a stack overflow aborts the process, so probe from a shell loop).
#[test]
#[ignore]
fn stack_probe() {
    let case = std::env::var("PROBE_CASE").unwrap();
    let mb: usize = std::env::var("PROBE_STACK_MB").unwrap().parse().unwrap();
    let (_, src, _) = deep_cases(100_000 - 10)
        .into_iter()
        .find(|c| c.0 == case)
        .unwrap();
    let r = std::thread::Builder::new()
        .stack_size(mb << 20)
        .spawn(move || compile_to_ir(&src, "deep.sy").map(|_| ()))
        .unwrap()
        .join()
        .unwrap();
    println!("PROBE {case} {mb}MB ok={}", r.is_ok());
}

#[test]
fn folds_and_flattens() {
    let src = b"const int N = 3; const int a[4][2] = {{1, 2}, {3, 4}, {}, 7};
        const float F = 1 / 3.0; const int M = -2147483648 - 1;
        int g[N + 1][2] = {1, 2, {3}, {5}, a[3][0], 8};
        int main() { return a[1][1] + M; }";
    let p = check(src, "t.sy").unwrap();
    let g = p
        .globals
        .iter()
        .map(|&v| &p.vars[v])
        .find(|v| &*v.name == "g")
        .unwrap();
    assert_eq!(*g.dims, [4, 2]);
    let hir::VarInit::Const(vals) = &g.init else {
        panic!()
    };
    let ints: Vec<(u32, i32)> = vals
        .iter()
        .map(|&(i, c)| match c {
            hir::Const::Int(v) => (i, v),
            _ => panic!(),
        })
        .collect();
    assert_eq!(ints, vec![(0, 1), (1, 2), (2, 3), (4, 5), (6, 7), (7, 8)]);
    let f = p
        .globals
        .iter()
        .map(|&v| &p.vars[v])
        .find(|v| &*v.name == "F")
        .unwrap();
    assert_eq!(f.const_elem(0), Some(hir::Const::Float(1.0f32 / 3.0f32)));
    let m = p
        .globals
        .iter()
        .map(|&v| &p.vars[v])
        .find(|v| &*v.name == "M")
        .unwrap();
    assert_eq!(m.const_elem(0), Some(hir::Const::Int(i32::MAX)));
}

#[test]
#[ignore]
fn dump_ir() {
    let path = std::env::var("SYSY_DUMP").unwrap();
    let src = std::fs::read(&path).unwrap();
    match lower_and_verify(src, path) {
        Ok(m) => println!("{}", crate::ir::print::module(&m)),
        Err(e) => println!("{e}"),
    }
}
