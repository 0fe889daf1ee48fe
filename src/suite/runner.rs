//! Running one case end to end, and many in parallel.
//!
//! A case goes through four stages, each of which can fail it:
//! 1. compile: in process through `driver::compile` on a private thread (big stack, panics
//!    caught, a timeout so a looping optimizer fails one case instead of hanging the run), or,
//!    for the reference, `riscv64-linux-gnu-gcc -O2` on the source read as C;
//! 2. link: `riscv64-linux-gnu-gcc -static` with the RISC-V runtime, or `clang-14 -x ir` with
//!    the host runtime for `--emit-llvm`;
//! 3. run: under `qemu-riscv64` (or natively for LLVM) with the case's `.in` on stdin and a
//!    timeout;
//! 4. compare: stdout + exit code against `.out` by the rule in `compare`.
//!
//! Each case works in its own temporary directory, removed afterwards (kept on failure when
//! asked). `run_cases` spreads cases over a rayon pool of `jobs` threads and reports each result
//! as it lands; the returned results are in input order.

use super::cases::Case;
use super::compare;
use super::exec::{self, Status};
use super::toolchain::{self, Arch};
use crate::driver::{CompileOptions, Emit};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// Who turns a case into an executable.
#[derive(Clone, Debug)]
pub enum Compiler {
    /// Our compiler, in process. `Emit::Asm` runs on RISC-V under qemu, `Emit::Llvm` natively.
    Sysyc(CompileOptions),
    /// The reference: the source read as C by `riscv64-linux-gnu-gcc -O2` (falling back to
    /// clang for the few files gcc rejects), for RISC-V.
    Gcc,
}

impl Compiler {
    /// Short label for reports: `sysyc -O2`, `sysyc -O0 llvm`, `gcc -O2`.
    pub fn label(&self) -> String {
        match self {
            Compiler::Sysyc(o) => match o.emit {
                Emit::Llvm => format!("sysyc -O{} --emit-llvm", o.opt_level),
                _ => format!("sysyc -O{}", o.opt_level),
            },
            Compiler::Gcc => "gcc -O2".into(),
        }
    }

    /// The machine the executables run on.
    pub fn arch(&self) -> Arch {
        match self {
            Compiler::Sysyc(o) if o.emit == Emit::Llvm => Arch::Host,
            _ => Arch::Riscv64,
        }
    }

    /// The external tools this compiler needs to build and run a case.
    pub fn tools(&self) -> Vec<String> {
        match self.arch() {
            Arch::Host => vec![toolchain::clang(), toolchain::host_cc()],
            Arch::Riscv64 => vec![toolchain::rv_cc(), toolchain::qemu()],
        }
    }
}

/// How to run cases.
#[derive(Clone, Debug)]
pub struct RunConfig {
    pub compiler: Compiler,
    /// Limit for one run of the program.
    pub timeout: Duration,
    /// Limit for compiling one file.
    pub compile_timeout: Duration,
    /// Keep the temporary directory of a failing case (its path is in the failure detail).
    pub keep_failed: bool,
}

impl RunConfig {
    pub fn new(compiler: Compiler) -> RunConfig {
        RunConfig {
            compiler,
            timeout: Duration::from_secs(60),
            compile_timeout: Duration::from_secs(120),
            keep_failed: std::env::var_os("SYSY_KEEP").is_some(),
        }
    }
}

/// The verdict on one case. Everything but `Pass` and `Built` is a failure.
#[derive(Clone, Debug)]
pub enum Outcome {
    Pass,
    /// No `.out`: compiled and linked, not run.
    Built,
    CompileError(String),
    CompilerPanic(String),
    CompileTimeout,
    LinkError(String),
    RunTimeout,
    /// Killed by a signal (stderr tail in the text).
    Crash(String),
    /// Output or exit code differ (the diff).
    WrongOutput(String),
    /// The harness itself failed (missing tool, unreadable file).
    HarnessError(String),
}

impl Outcome {
    pub fn is_pass(&self) -> bool {
        matches!(self, Outcome::Pass | Outcome::Built)
    }

    /// A short lower-case name of the kind, for tables.
    pub fn kind(&self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Built => "built",
            Outcome::CompileError(_) => "compile error",
            Outcome::CompilerPanic(_) => "compiler panic",
            Outcome::CompileTimeout => "compile timeout",
            Outcome::LinkError(_) => "link error",
            Outcome::RunTimeout => "run timeout",
            Outcome::Crash(_) => "crash",
            Outcome::WrongOutput(_) => "wrong output",
            Outcome::HarnessError(_) => "harness error",
        }
    }

    /// The details (diagnostics, diff), empty for a pass.
    pub fn detail(&self) -> &str {
        match self {
            Outcome::CompileError(s)
            | Outcome::CompilerPanic(s)
            | Outcome::LinkError(s)
            | Outcome::Crash(s)
            | Outcome::WrongOutput(s)
            | Outcome::HarnessError(s) => s,
            _ => "",
        }
    }
}

/// The result of one case.
#[derive(Clone, Debug)]
pub struct CaseResult {
    pub name: String,
    pub outcome: Outcome,
    pub compile_time: Duration,
    /// Wall time of the program run, when it ran.
    pub run_time: Option<Duration>,
    /// The program's own timer total (`TOTAL:` on stderr), microseconds.
    pub timer_us: Option<u64>,
}

/// An executable built from a case, in the case's private directory.
#[derive(Debug)]
pub struct Built {
    pub exe: PathBuf,
    /// What our compiler emitted (assembly or LLVM IR), for static counts; `None` for the reference.
    pub text: Option<String>,
    pub compile_time: Duration,
    /// Which reference compiler was used (`gcc` or `clang`), for the reference.
    pub reference: Option<&'static str>,
}

/// A private temporary directory, removed on drop unless `keep` is set.
pub struct WorkDir {
    pub path: PathBuf,
    pub keep: bool,
}

impl WorkDir {
    /// Makes a fresh directory named after `name`.
    pub fn new(name: &str) -> Result<WorkDir, String> {
        use std::sync::atomic::{AtomicU64, Ordering};
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let clean: String = name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let path =
            std::env::temp_dir().join(format!("sysyc-{}-{}-{}", std::process::id(), n, clean));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).map_err(|e| format!("creating {}: {e}", path.display()))?;
        Ok(WorkDir { path, keep: false })
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        if !self.keep {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

/// Compiles `source` with our compiler on a private thread with a 256 MiB stack, turning a
/// panic into `CompilerPanic` (message and location) and a hang into `CompileTimeout`.
pub fn compile_guarded(
    source: Vec<u8>,
    file_name: &str,
    opts: &CompileOptions,
    timeout: Duration,
) -> Result<String, Outcome> {
    install_panic_hook();
    let (tx, rx) = std::sync::mpsc::channel();
    let (name, opts) = (file_name.to_string(), opts.clone());
    let spawned = std::thread::Builder::new()
        .name(COMPILE_THREAD.into())
        .stack_size(256 << 20)
        .spawn(move || {
            let r = std::panic::catch_unwind(|| crate::driver::compile(&source, &name, &opts));
            let r = r.map_err(|payload| {
                let text = panic_text(&*payload);
                take_panic(std::thread::current().id(), &text).unwrap_or(text)
            });
            let _ = tx.send(r);
        });
    if let Err(e) = spawned {
        return Err(Outcome::HarnessError(format!(
            "cannot start a compile thread: {e}"
        )));
    }
    match rx.recv_timeout(timeout) {
        Ok(Ok(Ok(text))) => Ok(text),
        Ok(Ok(Err(diagnostics))) => Err(Outcome::CompileError(diagnostics)),
        Ok(Err(panic)) => Err(Outcome::CompilerPanic(panic)),
        // The thread is left to finish on its own; there is no way to stop it.
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => Err(Outcome::CompileTimeout),
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
            Err(Outcome::CompilerPanic("compile thread died".into()))
        }
    }
}

const COMPILE_THREAD: &str = "sysyc-compile";

/// Panics recorded by the hook: (thread, payload text, full report). Compile threads are
/// matched by id; a panic on a rayon worker (the compiler runs passes in parallel) reaches the
/// compile thread as a bare payload and is matched by its text.
static PANICS: std::sync::Mutex<Vec<(std::thread::ThreadId, String, String)>> =
    std::sync::Mutex::new(Vec::new());

fn take_panic(id: std::thread::ThreadId, payload: &str) -> Option<String> {
    let mut v = PANICS.lock().unwrap_or_else(|e| e.into_inner());
    let i = v
        .iter()
        .position(|(t, _, _)| *t == id)
        .or_else(|| v.iter().rposition(|(_, p, _)| p == payload))?;
    Some(v.remove(i).2)
}

/// Panics on compile threads are recorded (message, location, backtrace if RUST_BACKTRACE is
/// set) for the case's report instead of being printed; other threads are recorded too (in
/// case they are the compiler's workers) and keep the old hook.
fn install_panic_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let t = std::thread::current();
            let payload = panic_text(info.payload());
            let mut text = payload.clone();
            if let Some(loc) = info.location() {
                text = format!("panicked at {loc}:\n{text}");
            }
            let bt = std::backtrace::Backtrace::capture();
            if bt.status() == std::backtrace::BacktraceStatus::Captured {
                // The frames that matter are at the top; a full trace would drown the report.
                let bt = bt.to_string();
                let top: Vec<&str> = bt.lines().take(40).collect();
                text = format!("{text}\n{}", top.join("\n"));
            }
            {
                let mut v = PANICS.lock().unwrap_or_else(|e| e.into_inner());
                if v.len() >= 256 {
                    v.remove(0);
                }
                v.push((t.id(), payload, text));
            }
            if t.name() != Some(COMPILE_THREAD) {
                previous(info);
            }
        }));
    });
}

fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic with a non-string payload".into()
    }
}

/// Compiles and links `case` into `dir`.
pub fn build_case(case: &Case, cfg: &RunConfig, dir: &Path) -> Result<Built, Outcome> {
    let harness = Outcome::HarnessError;
    toolchain::require_tools(&cfg.compiler.tools()).map_err(harness)?;
    let rt = toolchain::runtime(cfg.compiler.arch()).map_err(harness)?;
    let exe = dir.join("exe");
    let start = Instant::now();
    match &cfg.compiler {
        Compiler::Sysyc(opts) => {
            let source = std::fs::read(&case.sy)
                .map_err(|e| Outcome::HarnessError(format!("{}: {e}", case.sy.display())))?;
            let file_name = case.sy.to_string_lossy();
            // LLVM IR runs natively: for the host's clang, not the RISC-V default.
            let native;
            let opts = if opts.emit == Emit::Llvm {
                native = CompileOptions {
                    llvm_target: crate::backend::llvm::Target::Host,
                    ..opts.clone()
                };
                &native
            } else {
                opts
            };
            let text = compile_guarded(source, &file_name, opts, cfg.compile_timeout)?;
            let compile_time = start.elapsed();
            let mut cmd;
            if opts.emit == Emit::Llvm {
                let ll = dir.join("out.ll");
                std::fs::write(&ll, &text).map_err(|e| Outcome::HarnessError(e.to_string()))?;
                cmd = Command::new(toolchain::clang());
                cmd.args(["-Wno-override-module", "-x", "ir"])
                    .arg(&ll)
                    .args(["-x", "none"]);
            } else {
                let s = dir.join("out.s");
                std::fs::write(&s, &text).map_err(|e| Outcome::HarnessError(e.to_string()))?;
                cmd = Command::new(toolchain::rv_cc());
                cmd.arg("-static").arg(&s);
            }
            cmd.arg(&rt.lib).arg("-o").arg(&exe);
            link(&mut cmd, cfg)?;
            Ok(Built {
                exe,
                text: Some(text),
                compile_time,
                reference: None,
            })
        }
        Compiler::Gcc => {
            let reference = build_reference(case, &rt.header, &rt.lib, &exe, cfg)?;
            Ok(Built {
                exe,
                text: None,
                compile_time: start.elapsed(),
                reference: Some(reference),
            })
        }
    }
}

fn link(cmd: &mut Command, cfg: &RunConfig) -> Result<(), Outcome> {
    let out = exec::run(cmd, None, Some(cfg.compile_timeout)).map_err(Outcome::HarnessError)?;
    if out.status == Status::Exited(0) {
        Ok(())
    } else {
        Err(Outcome::LinkError(format!(
            "{} ({}):\n{}{}",
            cmd.get_program().to_string_lossy(),
            out.status,
            String::from_utf8_lossy(&out.stdout),
            truncate(&String::from_utf8_lossy(&out.stderr), 4000)
        )))
    }
}

/// Flags for compiling SysY as C for RISC-V: wrapping signed overflow and no fused
/// multiply-add (SysY rounds every operation), as SysY requires.
pub const GCC_REFERENCE_FLAGS: &[&str] = &[
    "-O2",
    "-w",
    "-fwrapv",
    "-ffp-contract=off",
    "-march=rv64gc",
    "-mabi=lp64d",
];

/// Rewrites a SysY source so a C compiler reads it with SysY's meaning: every floating literal
/// gets an `f` suffix (SysY float literals are single precision; `x / 3.0` is a float
/// division). Comments and string literals are left alone; line numbers are kept, so
/// `starttime()` still passes the right line.
pub fn sysy_as_c(src: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(src.len() + src.len() / 16);
    let mut i = 0;
    let is_ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    while i < src.len() {
        let c = src[i];
        let next = src.get(i + 1).copied().unwrap_or(0);
        let start = i;
        if c == b'/' && next == b'/' {
            while i < src.len() && src[i] != b'\n' {
                i += 1;
            }
        } else if c == b'/' && next == b'*' {
            i += 2;
            while i < src.len() && !(src[i] == b'*' && src.get(i + 1) == Some(&b'/')) {
                i += 1;
            }
            i = (i + 2).min(src.len());
        } else if c == b'"' || c == b'\'' {
            i += 1;
            while i < src.len() && src[i] != c {
                i += if src[i] == b'\\' { 2 } else { 1 };
            }
            i = (i + 1).min(src.len());
        } else if is_ident(c) && !c.is_ascii_digit() {
            while i < src.len() && is_ident(src[i]) {
                i += 1;
            }
        } else if c.is_ascii_digit() || (c == b'.' && next.is_ascii_digit()) {
            // A preprocessing number: digits, letters, dots, and signs after an exponent.
            let hex = c == b'0' && (next == b'x' || next == b'X');
            i += 1;
            while i < src.len() {
                let d = src[i];
                let exp = if hex { b"pP" } else { b"eE" };
                let sign_of_exponent = (d == b'+' || d == b'-') && exp.contains(&src[i - 1]);
                if sign_of_exponent || is_ident(d) || d == b'.' {
                    i += 1;
                } else {
                    break;
                }
            }
            let tok = &src[start..i];
            let float = tok.contains(&b'.')
                || if hex {
                    tok.iter().any(|&d| d == b'p' || d == b'P')
                } else {
                    tok.iter().any(|&d| d == b'e' || d == b'E')
                };
            out.extend_from_slice(tok);
            if float && !tok.ends_with(b"f") && !tok.ends_with(b"F") {
                out.push(b'f');
            }
            continue;
        } else {
            i += 1;
        }
        out.extend_from_slice(&src[start..i]);
    }
    out
}

/// Builds the reference executable: gcc, or clang when gcc rejects the file (a `const int` as
/// a global array bound is a constant expression in SysY but not in C; clang folds it anyway).
fn build_reference(
    case: &Case,
    header: &Path,
    lib: &Path,
    exe: &Path,
    cfg: &RunConfig,
) -> Result<&'static str, Outcome> {
    let source = std::fs::read(&case.sy)
        .map_err(|e| Outcome::HarnessError(format!("{}: {e}", case.sy.display())))?;
    let c_file = exe.with_file_name("case.c");
    std::fs::write(&c_file, sysy_as_c(&source))
        .map_err(|e| Outcome::HarnessError(e.to_string()))?;
    let mut gcc = Command::new(toolchain::rv_cc());
    gcc.args(GCC_REFERENCE_FLAGS)
        .arg("-include")
        .arg(header)
        .arg(&c_file);
    gcc.arg("-static").arg(lib).arg("-o").arg(exe);
    let gcc_err = match link(&mut gcc, cfg) {
        Ok(()) => return Ok("gcc"),
        Err(e) => e,
    };
    let s = exe.with_file_name("case.s");
    let mut clang = Command::new(toolchain::clang());
    clang.args([
        "--target=riscv64-linux-gnu",
        "-march=rv64gc",
        "-mabi=lp64d",
        "-O2",
        "-w",
    ]);
    clang
        .args([
            "-fwrapv",
            "-ffp-contract=off",
            "-fno-addrsig",
            "-S",
            "-include",
        ])
        .arg(header);
    clang.arg(&c_file).arg("-o").arg(&s);
    let mut ld = Command::new(toolchain::rv_cc());
    ld.arg("-static").arg(&s).arg(lib).arg("-o").arg(exe);
    match link(&mut clang, cfg).and_then(|()| link(&mut ld, cfg)) {
        Ok(()) => Ok("clang"),
        Err(e) => Err(Outcome::CompileError(format!(
            "gcc: {}\nclang: {}",
            gcc_err.detail(),
            e.detail()
        ))),
    }
}

/// The environment a measured program starts with: fixed and small, whatever the caller's,
/// so the program's stack (and so what it executes) does not depend on who runs it.
pub const PROGRAM_ENV: &[(&str, &str)] = &[("PATH", "/usr/bin:/bin"), ("LC_ALL", "C")];

/// Runs a built executable with the case's input. `plugin` is an extra `-plugin` argument for
/// qemu (RISC-V only). The program sees the same start whoever runs it and from wherever:
/// argv `["./exe"]`, [`PROGRAM_ENV`] as its whole environment, and an executable path of fixed
/// length ([`ExecDir`]), which is also its working directory.
pub fn execute(
    built: &Built,
    case: &Case,
    cfg: &RunConfig,
    plugin: Option<&str>,
) -> Result<exec::Output, String> {
    let dir = ExecDir::new(&built.exe)?;
    let mut cmd = match cfg.compiler.arch() {
        Arch::Riscv64 => {
            let qemu = toolchain::qemu();
            // Found before the environment is replaced (and absolute: the directory changes).
            let path = toolchain::find_in_path(&qemu)
                .and_then(|p| std::path::absolute(p).ok())
                .unwrap_or_else(|| qemu.into());
            let mut c = Command::new(path);
            if let Compiler::Sysyc(o) = &cfg.compiler {
                c.args(toolchain::qemu_cpu(o.isa));
            }
            if let Some(p) = plugin {
                c.arg("-plugin").arg(p);
            }
            c.arg("./exe");
            c
        }
        Arch::Host => {
            // Native code gets the generous stack an emulated one has by default.
            let mut c = Command::new("/bin/sh");
            c.args(["-c", "ulimit -s 1048576 2>/dev/null; exec \"$0\""])
                .arg("./exe");
            c
        }
    };
    cmd.current_dir(&dir.path)
        .env_clear()
        .envs(PROGRAM_ENV.iter().copied());
    exec::run(&mut cmd, case.input.as_deref(), Some(cfg.timeout))
}

/// A private directory of a fixed-length path, `/tmp/sysyc-run-PPPPPPPP-NNNNNNNN/`, holding
/// the executable to run as `exe`; removed on drop.
///
/// qemu-user and the C library put the real path of the executable on the guest's stack and
/// copy its directory at startup (`AT_EXECFN`, `/proc/self/exe`), so its length moves stack
/// addresses and changes what the program executes. `/tmp` is used rather than `$TMPDIR`,
/// which differs between callers.
struct ExecDir {
    path: PathBuf,
}

impl ExecDir {
    fn new(exe: &Path) -> Result<ExecDir, String> {
        use std::sync::atomic::{AtomicU32, Ordering};
        static COUNTER: AtomicU32 = AtomicU32::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let base = Path::new("/tmp");
        let base = if base.is_dir() {
            base.to_path_buf()
        } else {
            std::env::temp_dir()
        };
        let path = base.join(format!("sysyc-run-{:08x}-{n:08x}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).map_err(|e| format!("creating {}: {e}", path.display()))?;
        let dir = ExecDir { path };
        let link = dir.path.join("exe");
        std::fs::hard_link(exe, &link)
            .or_else(|_| std::fs::copy(exe, &link).map(|_| ()))
            .map_err(|e| format!("placing {} in {}: {e}", exe.display(), dir.path.display()))?;
        Ok(dir)
    }
}

impl Drop for ExecDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// Judges a finished run against the case's `.out`.
pub fn judge(case: &Case, out: &exec::Output) -> Outcome {
    let expected_path = match &case.expected {
        Some(p) => p,
        None => return Outcome::Built,
    };
    let expected = match std::fs::read(expected_path) {
        Ok(e) => e,
        Err(e) => return Outcome::HarnessError(format!("{}: {e}", expected_path.display())),
    };
    let code = match out.status {
        Status::Exited(c) => c,
        Status::TimedOut => return Outcome::RunTimeout,
        Status::Signaled(_) => {
            let tail = String::from_utf8_lossy(&out.stderr);
            let tail: String = tail
                .chars()
                .rev()
                .take(800)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            return Outcome::Crash(format!("{}\nstderr: {}", out.status, tail.trim_end()));
        }
    };
    let actual = compare::actual_text(&out.stdout, code);
    if compare::matches(&expected, &actual) {
        Outcome::Pass
    } else {
        Outcome::WrongOutput(compare::diff(&expected, &actual, 3, 40))
    }
}

/// Compiles, runs and judges one case.
pub fn run_case(case: &Case, cfg: &RunConfig) -> CaseResult {
    let mut result = CaseResult {
        name: case.name.clone(),
        outcome: Outcome::Pass,
        compile_time: Duration::ZERO,
        run_time: None,
        timer_us: None,
    };
    let mut dir = match WorkDir::new(&case.name) {
        Ok(d) => d,
        Err(e) => {
            result.outcome = Outcome::HarnessError(e);
            return result;
        }
    };
    result.outcome = match build_case(case, cfg, &dir.path) {
        Err(o) => o,
        Ok(built) => {
            result.compile_time = built.compile_time;
            if case.expected.is_none() {
                Outcome::Built
            } else {
                match execute(&built, case, cfg, None) {
                    Err(e) => Outcome::HarnessError(e),
                    Ok(out) => {
                        result.run_time = Some(out.elapsed);
                        result.timer_us = super::bench::parse_timer_total(&out.stderr);
                        judge(case, &out)
                    }
                }
            }
        }
    };
    if !result.outcome.is_pass() && cfg.keep_failed {
        dir.keep = true;
        let note = format!("\n(kept {})", dir.path.display());
        result.outcome = match result.outcome {
            Outcome::WrongOutput(d) => Outcome::WrongOutput(d + &note),
            Outcome::Crash(d) => Outcome::Crash(d + &note),
            Outcome::LinkError(d) => Outcome::LinkError(d + &note),
            o => o,
        };
    }
    result
}

/// Runs `cases` on a pool of `jobs` threads (0 = one per core), calling `on_done` as each
/// finishes. Results come back in the order of `cases`.
pub fn run_cases(
    cases: &[Case],
    cfg: &RunConfig,
    jobs: usize,
    on_done: &(dyn Fn(&CaseResult) + Sync),
) -> Vec<CaseResult> {
    use rayon::prelude::*;
    let work = || {
        cases
            .par_iter()
            .map(|c| {
                let r = run_case(c, cfg);
                on_done(&r);
                r
            })
            .collect()
    };
    match rayon::ThreadPoolBuilder::new().num_threads(jobs).build() {
        Ok(pool) => pool.install(work),
        Err(_) => work(),
    }
}

/// Renders a table of outcome kinds and then the details of every failure.
pub fn failure_report(results: &[CaseResult]) -> String {
    let mut s = String::new();
    for r in results.iter().filter(|r| !r.outcome.is_pass()) {
        s.push_str(&format!("---- {}: {} ----\n", r.name, r.outcome.kind()));
        let d = r.outcome.detail();
        if !d.is_empty() {
            s.push_str(&truncate(d, 6000));
            if !d.ends_with('\n') {
                s.push('\n');
            }
        }
    }
    s
}

/// Counts per outcome kind, in a fixed order, e.g. `pass 240, wrong output 3, crash 2`.
pub fn summary_counts(results: &[CaseResult]) -> Vec<(&'static str, usize)> {
    let kinds = [
        "pass",
        "built",
        "compile error",
        "compiler panic",
        "compile timeout",
        "link error",
        "run timeout",
        "crash",
        "wrong output",
        "harness error",
    ];
    kinds
        .iter()
        .map(|k| {
            (
                *k,
                results.iter().filter(|r| r.outcome.kind() == *k).count(),
            )
        })
        .filter(|(_, n)| *n > 0)
        .collect()
}

/// `s` cut to at most `max` bytes (on a char boundary) with a note of what was cut.
pub fn truncate(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}\n... ({} more bytes)\n", &s[..end], s.len() - end)
}

#[cfg(test)]
mod tests {
    use super::sysy_as_c;

    #[test]
    fn float_literals_become_single_precision() {
        let src = b"float a = 1.5, b = 1., c = .5e3, d = 0x1.8p+1, e = 0x.AP-3; int x = 0x1E + 10 + 017;\n// 2.5\n/* 3.5 */ putf(\"%d 4.5\", 1e-6);";
        let want = b"float a = 1.5f, b = 1.f, c = .5e3f, d = 0x1.8p+1f, e = 0x.AP-3f; int x = 0x1E + 10 + 017;\n// 2.5\n/* 3.5 */ putf(\"%d 4.5\", 1e-6f);";
        assert_eq!(
            String::from_utf8_lossy(&sysy_as_c(src)),
            String::from_utf8_lossy(want)
        );
    }
}
