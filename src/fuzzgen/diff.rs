//! Differential testing: one program through the host C compiler (the oracle) and through sysyc
//! in several modes, built and run with the suite machinery (`suite::runner`).
//!
//! The oracle reads the program as C (`runner::sysy_as_c` makes float literals single
//! precision) with `gcc -O1 -fwrapv -ffp-contract=off -include sylib.h`, linked with the host
//! runtime, and runs natively; its stdout and exit code become the expected `.out`, which every
//! mode must then match under the suites' comparison rule.

use crate::driver::{CompileOptions, Emit};
use crate::suite::exec::{self, Status};
use crate::suite::runner::{self, Compiler, Outcome, RunConfig, WorkDir};
use crate::suite::toolchain::{self, Arch};
use crate::suite::{compare, Case};
use std::process::Command;
use std::time::Duration;

/// Why a program failed the check.
#[derive(Debug)]
pub struct Failure {
    /// `oracle` (the program or the harness is broken) or the label of the sysyc mode.
    pub mode: String,
    /// The outcome kind (`wrong output`, `compiler panic`, ...).
    pub kind: String,
    pub detail: String,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}\n{}", self.mode, self.kind, self.detail)
    }
}

/// sysyc as a compiler of the check.
pub fn sysyc(opt_level: u8, emit: Emit) -> Compiler {
    Compiler::Sysyc(CompileOptions {
        opt_level,
        emit,
        verify_each: true,
        ..CompileOptions::default()
    })
}

/// The default modes: -O0 and -O2 on RISC-V under qemu, and -O2 LLVM IR through clang.
pub fn default_modes() -> Vec<Compiler> {
    vec![
        sysyc(0, Emit::Asm),
        sysyc(2, Emit::Asm),
        sysyc(2, Emit::Llvm),
    ]
}

/// The tools every check needs, or an error naming the missing ones.
pub fn require_tools(modes: &[Compiler]) -> Result<(), String> {
    let mut tools = vec![toolchain::host_cc()];
    for m in modes {
        tools.extend(m.tools());
    }
    toolchain::require_tools(&tools)?;
    toolchain::runtime(Arch::Host)?;
    if modes.iter().any(|m| m.arch() == Arch::Riscv64) {
        toolchain::runtime(Arch::Riscv64)?;
    }
    Ok(())
}

/// The expected `.out` text of `source`: its stdout and exit code when compiled as C by the host
/// gcc -O1, cross-checked with clang -O1 (gcc 12 was caught folding `(c - c) * 5 - 0` to -0.0, see
/// fixtures/regress/README). `Err` when an oracle cannot build or run the program (a generator or
/// harness bug), or kind `oracle disagreement` when the two differ (the program is skipped).
pub fn oracle(
    source: &[u8],
    input: Option<&std::path::Path>,
    dir: &std::path::Path,
) -> Result<Vec<u8>, Failure> {
    let fail = |kind: &str, detail: String| Failure {
        mode: "oracle".into(),
        kind: kind.into(),
        detail,
    };
    let rt = toolchain::runtime(Arch::Host).map_err(|e| fail("harness error", e))?;
    let c = dir.join("prog.c");
    std::fs::write(&c, runner::sysy_as_c(source))
        .map_err(|e| fail("harness error", e.to_string()))?;
    let mut texts = Vec::new();
    for cc in [toolchain::host_cc(), toolchain::clang()] {
        let exe = dir.join(format!("ref-{}", texts.len()));
        let mut cmd = Command::new(&cc);
        cmd.args([
            "-x",
            "c",
            "-O1",
            "-fwrapv",
            "-ffp-contract=off",
            "-w",
            "-include",
        ])
        .arg(&rt.header);
        cmd.arg(&c)
            .args(["-x", "none"])
            .arg(&rt.lib)
            .arg("-o")
            .arg(&exe);
        // A loaded machine can starve the C compiler past its limit (seed 3232 once failed so,
        // with nothing on stderr): try once more before blaming the program.
        let mut out = exec::run(&mut cmd, None, Some(Duration::from_secs(60)))
            .map_err(|e| fail("harness error", e))?;
        if matches!(out.status, Status::TimedOut | Status::Signaled(_)) {
            out = exec::run(&mut cmd, None, Some(Duration::from_secs(120)))
                .map_err(|e| fail("harness error", e))?;
        }
        if out.status != Status::Exited(0) {
            let err = String::from_utf8_lossy(&out.stderr);
            return Err(fail(
                "oracle compile error",
                format!("{cc}: {}\n{err}", out.status),
            ));
        }
        let out = exec::run(
            &mut Command::new(&exe),
            input,
            Some(Duration::from_secs(20)),
        )
        .map_err(|e| fail("harness error", e))?;
        match out.status {
            Status::Exited(code) => texts.push((cc, compare::actual_text(&out.stdout, code))),
            s => {
                return Err(fail(
                    "oracle run failed",
                    format!("{cc}: {s}\n{}", String::from_utf8_lossy(&out.stderr)),
                ))
            }
        }
    }
    if !compare::matches(&texts[0].1, &texts[1].1) {
        let d = compare::diff(&texts[0].1, &texts[1].1, 2, 12);
        return Err(fail(
            DISAGREEMENT,
            format!("- {}\n+ {}\n{d}", texts[0].0, texts[1].0),
        ));
    }
    Ok(texts.swap_remove(0).1)
}

/// The failure kind of a program on which the two oracles disagree (not a sysyc bug).
pub const DISAGREEMENT: &str = "oracle disagreement";

/// Checks `source` (with `input` on stdin) in every mode against the oracle; the first failure
/// wins.
pub fn check_program(
    name: &str,
    source: &str,
    input: &str,
    modes: &[Compiler],
) -> Result<(), Failure> {
    let dir = WorkDir::new(name).map_err(|e| Failure {
        mode: "harness".into(),
        kind: "harness error".into(),
        detail: e,
    })?;
    let io = |e: std::io::Error| Failure {
        mode: "harness".into(),
        kind: "harness error".into(),
        detail: e.to_string(),
    };
    let sy = dir.path.join("prog.sy");
    let inp = dir.path.join("prog.in");
    let out = dir.path.join("prog.out");
    std::fs::write(&sy, source).map_err(io)?;
    std::fs::write(&inp, input).map_err(io)?;
    let expected = oracle(source.as_bytes(), Some(&inp), &dir.path)?;
    std::fs::write(&out, &expected).map_err(io)?;
    let case = Case {
        name: name.to_string(),
        sy,
        input: Some(inp),
        expected: Some(out),
    };
    for m in modes {
        let mut cfg = RunConfig::new(m.clone());
        cfg.timeout = Duration::from_secs(30);
        cfg.compile_timeout = Duration::from_secs(60);
        let r = runner::run_case(&case, &cfg);
        if !r.outcome.is_pass() {
            let detail = match &r.outcome {
                Outcome::CompileTimeout => "compile timed out".into(),
                Outcome::RunTimeout => "run timed out".into(),
                o => runner::truncate(o.detail(), 6000),
            };
            return Err(Failure {
                mode: m.label(),
                kind: r.outcome.kind().into(),
                detail,
            });
        }
    }
    Ok(())
}

/// Generates the program (and input) of `seed` and checks it.
pub fn check_seed(seed: u64, modes: &[Compiler]) -> Result<(), (String, Failure)> {
    let program = super::generate(seed);
    check_program(&format!("seed{seed}"), &program, &super::input(seed), modes)
        .map_err(|f| (program, f))
}
