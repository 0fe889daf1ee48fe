//! The compilation pipeline: source -> IR -> passes -> backend.
//!
//! `compile` (the output in memory) is the entry point of the suite tools and the tests,
//! `compile_to` (the output written as it is generated, and the warnings) the command line's.
//! Diagnostics come back as `Err(text)` (`Report::diagnostics`); an internal error (a verifier
//! failure after a pass, a backend assertion) is a panic that names the pass and function,
//! which the command line turns into exit code 101, leaving no output file.

use crate::backend::{llvm, riscv};
use crate::frontend::diag::DiagOptions;
use crate::ir::{print, verify};
use crate::passes::{self, PassOptions};
use crate::timing::Timings;
use std::borrow::Cow;

/// What `compile` produces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Emit {
    /// RISC-V64 assembly (GNU as syntax).
    Asm,
    /// Textual LLVM IR for LLVM 14.
    Llvm,
    /// Our own IR text.
    Ir,
}

/// Options of one compilation.
#[derive(Clone, Debug)]
pub struct CompileOptions {
    /// 0, 1 or 2.
    pub opt_level: u8,
    pub emit: Emit,
    /// Run the IR verifier after lowering and after every pass, and the register-allocation
    /// checker (always on in tests and debug builds).
    pub verify_each: bool,
    /// Print the IR after these passes (stderr).
    pub print_after: Vec<String>,
    /// Time every phase of the compile (frontend stages, each pass, each backend phase) and
    /// print the table and the peak memory on stderr.
    pub time_passes: bool,
    /// Stop after this many pass applications.
    pub opt_bisect: Option<u64>,
    /// Register allocator of the RISC-V backend.
    pub regalloc: riscv::regalloc::Allocator,
    /// ISA extensions beyond rv64gc (`-march=`).
    pub isa: riscv::isa::Isa,
    /// Which warnings, how many errors, colour.
    pub diagnostics: DiagOptions,
    /// The target the LLVM IR is for (`Emit::Llvm`).
    pub llvm_target: llvm::Target,
}

impl Default for CompileOptions {
    fn default() -> Self {
        CompileOptions {
            opt_level: 0,
            emit: Emit::Asm,
            verify_each: cfg!(debug_assertions),
            print_after: Vec::new(),
            time_passes: false,
            opt_bisect: None,
            regalloc: riscv::regalloc::Allocator::default(),
            isa: riscv::isa::Isa::default(),
            diagnostics: DiagOptions::default(),
            llvm_target: llvm::Target::default(),
        }
    }
}

/// Compiles one SysY source to text. `Err` holds rendered diagnostics
/// (`file:line:col: error: ...`, the source line and a caret), ready for stderr; warnings of a
/// successful compile are dropped (see `compile_to`). With `time_passes`, prints the table of
/// stage and phase times on stderr.
pub fn compile(source: &[u8], file_name: &str, opts: &CompileOptions) -> Result<String, String> {
    let t = Timings::new(opts.time_passes);
    let mut text = Vec::new();
    let report = compile_to(Cow::Borrowed(source), file_name, opts, false, &t, &mut text);
    if t.is_on() {
        eprint!("{}", t.report());
    }
    if report.failed {
        return Err(report.diagnostics);
    }
    report
        .write_error
        .map_or(Ok(()), |e| Err(format!("cannot write the output: {e}")))?;
    Ok(String::from_utf8(text).expect("the output is UTF-8"))
}

/// The result of `compile_to`.
pub struct Report {
    /// Warnings and errors, rendered, ready for stderr (empty when there are none).
    pub diagnostics: String,
    /// The source had errors (`-Werror` warnings included): nothing was written.
    pub failed: bool,
    /// Writing the output failed (it may be partly written).
    pub write_error: Option<std::io::Error>,
}

/// Compiles one SysY source, writing the output text to `out` as it is generated (assembly
/// function by function, each function's IR and machine code freed once written) and keeping
/// the warnings; with `syntax_only`, stops after the front end (`-fsyntax-only`: every
/// diagnostic, no output). Nothing is written when the source has errors. Times every stage
/// and phase into `t`. An owned source is freed as soon as nothing needs it any more (after the
/// front end when its diagnostics are rendered there).
pub fn compile_to(
    source: Cow<'_, [u8]>,
    file_name: &str,
    opts: &CompileOptions,
    syntax_only: bool,
    t: &Timings,
    out: &mut dyn std::io::Write,
) -> Report {
    if opts.opt_level == 0 && opts.emit == Emit::Asm && !syntax_only && !opts.diagnostics.werror {
        let report = compile_lazily(&source, file_name, opts, t, out);
        t.stage("drop source", || drop(source));
        return report;
    }
    // Without passes, the functions go to code generation as lowered: building them one at a
    // time frees the checked program as the module grows.
    let schedule = if opts.opt_level == 0 {
        crate::frontend::lower::Schedule::Sequential
    } else {
        crate::frontend::lower::Schedule::Parallel
    };
    let front = crate::frontend::run_timed(&source, file_name, &opts.diagnostics, schedule, t);
    t.stage("drop source", || drop(source));
    let Some(mut m) = front.module else {
        return Report {
            diagnostics: front.diagnostics,
            failed: true,
            write_error: None,
        };
    };
    let mut report = Report {
        diagnostics: front.diagnostics,
        failed: false,
        write_error: None,
    };
    if syntax_only {
        return report;
    }
    // The passes after the last module pass run on each function as the backend reaches it.
    let popts = pass_options(opts);
    let deferred = optimize_deferring(&mut m, opts, &popts, t);
    let written = match opts.emit {
        Emit::Ir | Emit::Llvm => {
            t.stage("passes", || deferred.run_module(&mut m));
            if opts.emit == Emit::Ir {
                write_text(t, out, || print::module(&m))
            } else {
                write_text(t, out, || llvm::emit_module(&m, opts.llvm_target))
            }
        }
        Emit::Asm => {
            riscv::write_module_consuming(&mut m, &riscv_options(opts), t, out, &|f, cx| {
                deferred.run(f, cx)
            })
        }
    };
    report.write_error = written.err();
    t.stage("drop IR", || drop(m));
    report
}

/// `compile_to` for assembly without passes, when no warning is an error: code generation
/// builds each function's IR just before compiling it (on its threads, in parallel), so the
/// whole module's IR is never alive at once. The warnings read off the CFG come at the end.
fn compile_lazily(
    source: &[u8],
    file_name: &str,
    opts: &CompileOptions,
    t: &Timings,
    out: &mut dyn std::io::Write,
) -> Report {
    let (mut m, lazy) = match crate::frontend::run_lazy(source, file_name, &opts.diagnostics, t) {
        Ok(x) => x,
        Err(diagnostics) => {
            return Report {
                diagnostics,
                failed: true,
                write_error: None,
            }
        }
    };
    let popts = pass_options(opts);
    let deferred = t.stage("passes", || {
        passes::pipeline::optimize_deferring(&mut m, &popts, t)
    });
    let written = riscv::write_module_consuming(&mut m, &riscv_options(opts), t, out, &|f, cx| {
        t.time("lowering", || lazy.build(f));
        if opts.verify_each {
            if let Err(e) = verify::function(f, cx) {
                panic!("IR broken after lowering:\n{}", e.render(f, cx));
            }
        }
        deferred.run(f, cx)
    });
    t.stage("drop IR", || drop(m));
    Report {
        diagnostics: lazy.finish(source, file_name, t),
        failed: false,
        write_error: written.err(),
    }
}

/// Generates a whole text (a code generation stage), then writes it.
fn write_text(
    t: &Timings,
    out: &mut dyn std::io::Write,
    generate: impl FnOnce() -> String,
) -> std::io::Result<()> {
    let text = t.stage("code generation", generate);
    t.stage("output writing", || out.write_all(text.as_bytes()))
}

/// The static counts of the RISC-V code `compile` would produce (spill code, moves, frames,
/// innermost loops), per defined function.
pub fn backend_stats(
    source: &[u8],
    file_name: &str,
    opts: &CompileOptions,
) -> Result<Vec<riscv::FuncStats>, String> {
    let m = optimized_ir(source, file_name, opts, &Timings::off())?;
    Ok(riscv::stats(&m, &riscv_options(opts)))
}

fn riscv_options(opts: &CompileOptions) -> riscv::RiscvOptions {
    riscv::RiscvOptions {
        opt_level: opts.opt_level,
        check_regalloc: opts.verify_each,
        regalloc: opts.regalloc,
        isa: opts.isa,
    }
}

/// Front end and passes.
fn optimized_ir(
    source: &[u8],
    file_name: &str,
    opts: &CompileOptions,
    t: &Timings,
) -> Result<crate::ir::Module, String> {
    let mut m = crate::frontend::compile_to_ir(source, file_name)?;
    optimize(&mut m, opts, t);
    Ok(m)
}

fn pass_options(opts: &CompileOptions) -> PassOptions {
    PassOptions {
        opt_level: opts.opt_level,
        verify_each: opts.verify_each,
        print_after: opts.print_after.clone(),
        opt_bisect: opts.opt_bisect,
    }
}

/// Verifies the lowered module (with `verify_each`).
fn verify_lowered(m: &crate::ir::Module, opts: &CompileOptions, t: &Timings) {
    if opts.verify_each {
        t.stage("verify lowered IR", || {
            if let Err(e) = verify::module(m) {
                panic!("IR broken after lowering:\n{e}");
            }
        });
    }
}

/// Verifies the lowered module (with `verify_each`) and runs the passes.
fn optimize(m: &mut crate::ir::Module, opts: &CompileOptions, t: &Timings) {
    verify_lowered(m, opts, t);
    let popts = pass_options(opts);
    t.stage("passes", || passes::pipeline::optimize_timed(m, &popts, t));
}

/// Verifies the lowered module (with `verify_each`) and runs the passes up to the trailing
/// per-function ones, which it returns.
fn optimize_deferring<'a>(
    m: &mut crate::ir::Module,
    opts: &CompileOptions,
    popts: &'a PassOptions,
    t: &'a Timings,
) -> passes::pipeline::Deferred<'a> {
    verify_lowered(m, opts, t);
    t.stage("passes", || {
        passes::pipeline::optimize_deferring(m, popts, t)
    })
}

/// Runs `f` on a thread with a stack large enough for deeply nested programs, turning a panic
/// into `Err(message)`.
pub fn with_big_stack<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, String> {
    let handle = std::thread::Builder::new()
        .name("sysyc-main".into())
        .stack_size(1 << 30)
        .spawn(f)
        .map_err(|e| format!("cannot start the compiler thread: {e}"))?;
    handle.join().map_err(|p| {
        if let Some(s) = p.downcast_ref::<String>() {
            s.clone()
        } else if let Some(s) = p.downcast_ref::<&str>() {
            s.to_string()
        } else {
            "unknown panic".to_string()
        }
    })
}
