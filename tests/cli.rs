//! The `sysyc` command line as users meet it: `--version`, `--help` and `help SUB`, the gcc
//! spellings, the exit-code table (0 success, 1 input problems, 2 usage, 101 internal compiler
//! error) for the compiler and the subcommands, no output file after a failure, `-o` naming the
//! input, a closed stdout, warnings and their switches, colour, and `-O1` giving the same code as
//! `-O2` on every public case.

use rayon::prelude::*;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn sysyc() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_sysyc"));
    c.env_remove("NO_COLOR").env_remove("SYSYC_DEBUG_PANIC");
    c
}

fn run(args: &[&str]) -> Output {
    sysyc().args(args).output().expect("running sysyc")
}

fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A private directory, removed at the end.
struct Tmp(PathBuf);

impl Tmp {
    fn new(name: &str) -> Tmp {
        let p = std::env::temp_dir().join(format!("sysyc-cli-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        Tmp(p)
    }
    fn file(&self, name: &str, text: &str) -> String {
        let p = self.0.join(name);
        std::fs::write(&p, text).unwrap();
        p.to_string_lossy().into_owned()
    }
    fn path(&self, name: &str) -> String {
        self.0.join(name).to_string_lossy().into_owned()
    }
}

impl Drop for Tmp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const GOOD: &str = "int main() { putint(42); return 0; }\n";
const BAD: &str = "int main() { return x; }\n";
const WARNS: &str = "int f(int x) { if (x) return 1; }\nint main() { int unused; return f(1); }\n";

#[test]
fn version_names_the_commit() {
    let o = run(&["--version"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.starts_with("sysyc 0."), "{out}");
    assert!(out.contains('('), "no commit in {out}");
}

#[test]
fn help_lists_every_subcommand_and_help_sub_is_sub_help() {
    let o = run(&["--help"]);
    assert_eq!(code(&o), 0);
    let help = stdout(&o);
    for sub in ["build", "test", "bench", "help"] {
        assert!(
            help.lines().any(|l| l.trim_start().starts_with(sub)),
            "`{sub}` missing from --help:\n{help}"
        );
    }
    for needle in ["-Og", "-Wno-NAME", "return-type", "Exit codes", "101"] {
        assert!(help.contains(needle), "{needle} missing from --help");
    }
    assert_eq!(stdout(&run(&["-h"])), help);
    assert_eq!(stdout(&run(&["help"])), help);
    for sub in ["test", "build", "bench"] {
        let a = run(&["help", sub]);
        let b = run(&[sub, "--help"]);
        assert_eq!(code(&a), 0, "help {sub}: {}", stderr(&a));
        assert_eq!(stdout(&a), stdout(&b));
        assert!(
            stdout(&a).contains(&format!("sysyc {sub}")),
            "{}",
            stdout(&a)
        );
    }
    assert_eq!(code(&run(&["help", "nonsense"])), 2);
}

/// Help and IR written into a pipe whose reader is gone: no panic, the usual status.
#[test]
fn closed_stdout_ends_quietly() {
    let t = Tmp::new("pipe");
    let src = t.file("a.sy", GOOD);
    for (args, want) in [
        (vec!["--help"], 0),
        (vec!["help", "test"], 0),
        (vec!["-S", "--emit-ir", "-O2", "-o", "-", src.as_str()], 0),
        (vec!["-S", "--emit-llvm", src.as_str()], 0),
    ] {
        let mut child = sysyc()
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take()); // the reader goes away at once
        let o = child.wait_with_output().unwrap();
        assert_eq!(code(&o), want, "{args:?}: {}", stderr(&o));
        assert!(
            !stderr(&o).contains("panicked") && !stderr(&o).contains("internal compiler error"),
            "{args:?}: {}",
            stderr(&o)
        );
    }
}

#[test]
fn exit_codes() {
    let t = Tmp::new("codes");
    let good = t.file("good.sy", GOOD);
    let bad = t.file("bad.sy", BAD);
    let out = t.path("out.s");
    assert_eq!(code(&run(&["-S", "-o", &out, &good])), 0);
    // 1: the user's input.
    assert_eq!(code(&run(&["-S", "-o", &out, &bad])), 1);
    assert_eq!(code(&run(&["-S", "-o", &out, &t.path("missing.sy")])), 1);
    // 2: the command line.
    for args in [
        vec!["--no-such-flag", good.as_str()],
        vec!["-S"],
        vec!["-Ox", good.as_str()],
        vec!["-Wno-no-such-warning", good.as_str()],
        vec!["--target", "sparc", good.as_str()],
        vec!["-march=rv32gc", good.as_str()],
        vec!["--color", "sometimes", good.as_str()],
    ] {
        let o = run(&args);
        assert_eq!(code(&o), 2, "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("error"), "{args:?}");
    }
    // The subcommands use the same table: an unreadable directory is the user's input.
    let o = run(&["test", &t.path("no-such-dir")]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    let o = run(&["build", &t.path("no-such-dir"), "-o", &t.path("o")]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    assert_eq!(code(&run(&["test", "--no-such-flag"])), 2);
    // 101: an internal compiler error, reported as one, with a bug-report hint; no output.
    std::fs::write(&out, "OLD").unwrap();
    let o = sysyc()
        .env("SYSYC_DEBUG_PANIC", "1")
        .args(["-S", "-o", &out, &good])
        .output()
        .unwrap();
    assert_eq!(code(&o), 101, "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("internal compiler error"), "{e}");
    assert!(e.contains("please report"), "{e}");
    assert!(!e.contains("panicked"), "{e}");
    assert!(
        !Path::new(&out).exists(),
        "output left after an internal error"
    );
}

#[test]
fn failed_compile_removes_the_old_output() {
    let t = Tmp::new("stale");
    let out = t.file("out.s", "OLD");
    let bad = t.file("bad.sy", BAD);
    let o = run(&["-S", "-o", &out, &bad]);
    assert_eq!(code(&o), 1);
    assert!(!Path::new(&out).exists(), "stale output left behind");
    // -Werror failures too.
    let w = t.file("w.sy", WARNS);
    std::fs::write(&out, "OLD").unwrap();
    let o = run(&["-S", "-Werror", "-o", &out, &w]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("[-Werror,-Wreturn-type]"),
        "{}",
        stderr(&o)
    );
    assert!(!Path::new(&out).exists());
    // Never anything but a regular file: a named pipe as the output stays.
    let fifo = t.path("fifo");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let o = run(&["-S", "-o", &fifo, &bad]);
    assert_eq!(code(&o), 1);
    assert!(std::fs::symlink_metadata(&fifo).is_ok_and(|m| !m.is_file()));
}

#[test]
fn output_equal_to_input_is_refused() {
    let t = Tmp::new("same");
    let src = t.file("a.sy", GOOD);
    let o = run(&["-S", "-o", &src, &src]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("is the input file"), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&src).unwrap(), GOOD);
    // The same file under another name.
    let other = format!(
        "{}/../{}/a.sy",
        t.0.display(),
        t.0.file_name().unwrap().to_string_lossy()
    );
    let o = run(&["-S", "-o", &other, &src]);
    assert_eq!(code(&o), 2);
    assert_eq!(std::fs::read_to_string(&src).unwrap(), GOOD);
}

#[test]
fn gcc_spellings() {
    let t = Tmp::new("gcc");
    let src = t.file("a.sy", GOOD);
    let out = t.path("a.s");
    for flag in [
        "-O1",
        "-O2",
        "-O3",
        "-Os",
        "-O",
        "-Og",
        "-O0",
        "-march=rv64gc",
        "-Wall",
    ] {
        let o = run(&["-S", flag, "-o", &out, &src]);
        assert_eq!(code(&o), 0, "{flag}: {}", stderr(&o));
    }
    // -o - and - for stdin.
    let mut child = sysyc()
        .args(["-S", "-O2", "-o", "-", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(GOOD.as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(code(&o), 0);
    assert!(stdout(&o).contains("main:"), "{}", stdout(&o));
    // -fsyntax-only: diagnostics, no output.
    let w = t.file("w.sy", WARNS);
    let o = run(&["-fsyntax-only", "-o", &t.path("none.s"), &w]);
    assert_eq!(code(&o), 0);
    assert!(stderr(&o).contains("warning"), "{}", stderr(&o));
    assert!(stdout(&o).is_empty() && !Path::new(&t.path("none.s")).exists());
    assert_eq!(code(&run(&["-fsyntax-only", &t.file("b.sy", BAD)])), 1);
}

#[test]
fn warning_switches_and_colour() {
    let t = Tmp::new("warn");
    let w = t.file("w.sy", WARNS);
    let o = run(&["-fsyntax-only", &w]);
    let e = stderr(&o);
    assert!(
        e.contains(
            "w.sy:1:33: warning: control reaches the end of non-void function `f` [-Wreturn-type]"
        ),
        "{e}"
    );
    assert!(e.contains("[-Wunused-variable]"), "{e}");
    assert!(e.ends_with("2 warnings generated.\n"), "{e}");
    assert!(!e.contains('\x1b'), "colour in a pipe: {e}");
    let o = run(&["-fsyntax-only", "-Wno-return-type", &w]);
    assert!(!stderr(&o).contains("return-type") && stderr(&o).contains("unused"));
    let o = run(&["-fsyntax-only", "-Wno-return-type", "-Wreturn-type", &w]);
    assert!(stderr(&o).contains("return-type"));
    let o = run(&["-fsyntax-only", "-w", &w]);
    assert!(stderr(&o).is_empty(), "{}", stderr(&o));
    let o = run(&["-fsyntax-only", "-fdiagnostics-color=always", &w]);
    assert!(stderr(&o).contains("\x1b[1;35mwarning"), "{}", stderr(&o));
    // NO_COLOR wins over a terminal; without a terminal `auto` means none (checked above).
    let o = sysyc()
        .env("NO_COLOR", "1")
        .args(["-fsyntax-only", &w])
        .output()
        .unwrap();
    assert!(!stderr(&o).contains('\x1b'));
}

#[test]
fn error_limit_is_visible() {
    let t = Tmp::new("limit");
    let body: String = (0..10).map(|i| format!("  u{i} = {i};\n")).collect();
    let src = t.file(
        "many.sy",
        &format!("int main() {{\n{body}  return 0;\n}}\n"),
    );
    let o = run(&["-fsyntax-only", "-ferror-limit=3", &src]);
    assert_eq!(code(&o), 1);
    let e = stderr(&o);
    assert_eq!(e.matches(": error: undefined name").count(), 3, "{e}");
    assert!(
        e.contains("too many errors emitted, stopping now [-ferror-limit=3]"),
        "{e}"
    );
    let o = run(&["-fsyntax-only", "-ferror-limit=0", &src]);
    assert_eq!(stderr(&o).matches(": error: undefined name").count(), 10);
}

#[test]
fn llvm_ir_names_its_target() {
    let t = Tmp::new("llvm");
    let src = t.file("a.sy", GOOD);
    let o = run(&["-S", "--emit-llvm", "-o", "-", &src]);
    let ir = stdout(&o);
    assert!(
        ir.contains("target triple = \"riscv64-unknown-linux-gnu\""),
        "{ir}"
    );
    assert!(ir.contains("target datalayout = \"e-m:e-p:64:64-i64:64-i128:128-n64-S128\""));
    assert!(ir.contains("!{i32 1, !\"target-abi\", !\"lp64d\"}"));
    let o = run(&["-S", "--emit-llvm", "--target", "host", "-o", "-", &src]);
    let ir = stdout(&o);
    assert!(
        !ir.contains("target triple") && !ir.contains("target-abi"),
        "{ir}"
    );
}

/// The contest runs `compiler -S -o x.s x.sy -O1`: -O1 must be our full optimization, byte for
/// byte the code of -O2, on every public case.
#[test]
fn o1_and_o2_give_identical_assembly_on_every_public_case() {
    let root = match std::env::var_os("SYSY_SUITES") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/suites"),
    };
    let suites = [
        "functional",
        "hidden_functional",
        "performance",
        "final_performance",
    ];
    let dirs: Vec<PathBuf> = suites
        .iter()
        .map(|s| root.join(s))
        .filter(|d| d.is_dir())
        .collect();
    if dirs.is_empty() {
        eprintln!("\n!!! SKIPPED: no suites under {}\n", root.display());
        return;
    }
    let cases = sysyc::suite::discover(&dirs, None).unwrap();
    let t = Tmp::new("o1o2");
    let differ: Vec<String> = cases
        .par_iter()
        .enumerate()
        .filter_map(|(k, case)| {
            let sy = case.sy.to_string_lossy();
            let asm = |level: &str| {
                let out = t.path(&format!("{k}{level}.s"));
                let o = run(&["-S", "-j", "1", "-o", &out, &sy, level]);
                let text = std::fs::read(&out).unwrap_or_default();
                let _ = std::fs::remove_file(&out);
                (code(&o), text)
            };
            let (c1, a1) = asm("-O1");
            let (c2, a2) = asm("-O2");
            (c1 != 0 || c2 != 0 || a1 != a2 || a1.is_empty())
                .then(|| format!("{} (exit {c1}/{c2})", case.name))
        })
        .collect();
    assert!(
        differ.is_empty(),
        "-O1 and -O2 differ on {} of {} cases:\n{}",
        differ.len(),
        cases.len(),
        differ.join("\n")
    );
    eprintln!("-O1 = -O2 on {} cases", cases.len());
}
