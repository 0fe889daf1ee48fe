//! The `sysyc build` and `sysyc test` subcommands: argument structs (argh) and their drivers.

use super::cases::{count_lines, discover, Case};
use super::junit;
use super::progress::Progress;
use super::results::{self, TestRecord, TestReport, SCHEMA_VERSION};
use super::runner::{self, CaseResult, Compiler, RunConfig};
use super::shard::{self, Shard};
use crate::backend::riscv::isa::Isa;
use crate::backend::riscv::regalloc::Allocator;
use crate::driver::{CompileOptions, Emit};
use argh::FromArgs;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Compile every .sy file under the given directories, in parallel, and report throughput.
#[derive(FromArgs, Debug)]
#[argh(subcommand, name = "build")]
pub struct BuildArgs {
    /// directories (searched recursively) or .sy files
    #[argh(positional)]
    pub dirs: Vec<PathBuf>,
    /// output directory; NAME.sy becomes OUT/<suite>/NAME.s (or .ll, .ir)
    #[argh(option, short = 'o')]
    pub out: PathBuf,
    /// optimization level: 0, 1 or 2 (default 2)
    #[argh(option, short = 'O', default = "2")]
    pub opt_level: u8,
    /// parallel jobs (default: one per core)
    #[argh(option, short = 'j', default = "0")]
    pub jobs: usize,
    /// emit LLVM IR instead of RISC-V assembly
    #[argh(switch)]
    pub emit_llvm: bool,
    /// emit our IR instead of RISC-V assembly
    #[argh(switch)]
    pub emit_ir: bool,
    /// run the IR verifier after every pass
    #[argh(switch)]
    pub verify: bool,
    /// register allocator: linear-scan (default) or simple (every value in a stack slot)
    #[argh(option, default = "Default::default()")]
    pub regalloc: Allocator,
    /// only cases whose name contains one of these comma-separated substrings
    #[argh(option)]
    pub filter: Option<String>,
    /// run only shard K of N (K/N, K from 1; cases split by a hash of their name); default
    /// from the CI or batch scheduler (CI_NODE_INDEX/CI_NODE_TOTAL, JOB_COMPLETION_INDEX with
    /// SYSY_SHARD_TOTAL, SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT, SYSY_SHARD)
    #[argh(option)]
    pub shard: Option<Shard>,
}

/// Compile, run and check test cases: NAME.sy with optional NAME.in (stdin) and NAME.out.
#[derive(FromArgs, Debug)]
#[argh(subcommand, name = "test")]
pub struct TestArgs {
    /// directories (searched recursively) or .sy files
    #[argh(positional)]
    pub dirs: Vec<PathBuf>,
    /// optimization level: 0, 1 or 2 (default 2)
    #[argh(option, short = 'O', default = "2")]
    pub opt_level: u8,
    /// parallel jobs (default: one per core)
    #[argh(option, short = 'j', default = "0")]
    pub jobs: usize,
    /// seconds one program may run (default 60; emulated floating point is slow)
    #[argh(option, default = "60.0")]
    pub timeout: f64,
    /// only cases whose name contains one of these comma-separated substrings
    #[argh(option)]
    pub filter: Option<String>,
    /// write per-case results as JSON to this file
    #[argh(option)]
    pub json: Option<PathBuf>,
    /// write per-case results as JUnit XML to this file
    #[argh(option)]
    pub junit: Option<PathBuf>,
    /// run only shard K of N (K/N, K from 1; cases split by a hash of their name); default
    /// from the CI or batch scheduler (CI_NODE_INDEX/CI_NODE_TOTAL, JOB_COMPLETION_INDEX with
    /// SYSY_SHARD_TOTAL, SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT, SYSY_SHARD)
    #[argh(option)]
    pub shard: Option<Shard>,
    /// emit LLVM IR, build it with clang and run it natively instead of RISC-V under qemu
    #[argh(switch)]
    pub emit_llvm: bool,
    /// check a reference compiler instead of sysyc: `gcc` (the source read as C, RISC-V)
    #[argh(option)]
    pub reference: Option<String>,
    /// run the IR verifier after every pass
    #[argh(switch)]
    pub verify: bool,
    /// register allocator: linear-scan (default) or simple (every value in a stack slot)
    #[argh(option, default = "Default::default()")]
    pub regalloc: Allocator,
    /// keep the work directory of failing cases
    #[argh(switch)]
    pub keep: bool,
    /// print only failures and the summary
    #[argh(switch, short = 'q')]
    pub quiet: bool,
    /// print a table of per-case times (compile, run, the program's own timer)
    #[argh(switch)]
    pub times: bool,
    /// target ISA of sysyc, as its -march (e.g. rv64gc_zba_zbb); qemu then emulates a CPU
    /// with those extensions
    #[argh(option)]
    pub march: Option<String>,
}

fn compile_options(opt: u8, emit: Emit, verify: bool, regalloc: Allocator) -> CompileOptions {
    CompileOptions {
        opt_level: opt,
        emit,
        verify_each: verify || cfg!(debug_assertions),
        regalloc,
        ..CompileOptions::default()
    }
}

/// `sysyc build`: returns the exit code (1 if any file failed to compile).
pub fn run_build(args: &BuildArgs) -> i32 {
    let (cases, _) = match select_cases(
        &args.dirs,
        args.filter.as_deref(),
        args.shard,
        "sysyc build",
    ) {
        Ok(c) => c,
        Err((code, e)) => {
            eprintln!("{e}");
            return code;
        }
    };
    let (emit, ext) = match (args.emit_llvm, args.emit_ir) {
        (true, _) => (Emit::Llvm, "ll"),
        (_, true) => (Emit::Ir, "ir"),
        _ => (Emit::Asm, "s"),
    };
    let opts = compile_options(args.opt_level, emit, args.verify, args.regalloc);
    let progress = Progress::new(cases.len(), false);
    let start = Instant::now();
    let lines_read = std::sync::atomic::AtomicUsize::new(0);
    let work = || {
        use rayon::prelude::*;
        cases
            .par_iter()
            .map(|case| {
                let t = Instant::now();
                let r = (|| {
                    let src = std::fs::read(&case.sy)
                        .map_err(|e| format!("{}: {e}", case.sy.display()))?;
                    lines_read.fetch_add(count_lines(&src), std::sync::atomic::Ordering::Relaxed);
                    let text = runner::compile_guarded(
                        src,
                        &case.sy.to_string_lossy(),
                        &opts,
                        Duration::from_secs(600),
                    )
                    .map_err(|o| format!("{}: {}", o.kind(), o.detail()))?;
                    let out = args.out.join(format!("{}.{ext}", case.name));
                    if let Some(dir) = out.parent() {
                        std::fs::create_dir_all(dir)
                            .map_err(|e| format!("{}: {e}", dir.display()))?;
                    }
                    std::fs::write(&out, text).map_err(|e| format!("{}: {e}", out.display()))?;
                    Ok::<(), String>(())
                })();
                let note = format!("{:.2}s", t.elapsed().as_secs_f64());
                progress.tick(&case.name, r.is_ok(), &note);
                (case, r, t.elapsed())
            })
            .collect::<Vec<_>>()
    };
    let results = match rayon::ThreadPoolBuilder::new()
        .num_threads(args.jobs)
        .build()
    {
        Ok(pool) => pool.install(work),
        Err(_) => work(),
    };
    progress.finish();
    let wall = start.elapsed().as_secs_f64();
    let lines = lines_read.into_inner();
    let mut errors = 0;
    for (case, r, _) in &results {
        if let Err(e) = r {
            errors += 1;
            eprintln!(
                "---- {} ----\n{}",
                case.name,
                runner::truncate(e.trim_end(), 4000)
            );
        }
    }
    let mut slowest: Vec<_> = results.iter().filter(|r| r.1.is_ok()).collect();
    slowest.sort_by_key(|r| std::cmp::Reverse(r.2));
    println!(
        "built {} files, {} lines, {} error(s) in {:.2}s: {:.0} lines/s (-O{}, {})",
        results.len(),
        lines,
        errors,
        wall,
        lines as f64 / wall.max(1e-9),
        args.opt_level,
        ext
    );
    for (case, _, t) in slowest.iter().take(3) {
        println!("  slowest: {:>8.3}s  {}", t.as_secs_f64(), case.name);
    }
    i32::from(errors > 0)
}

/// The run configuration `sysyc test` arguments describe.
pub fn test_config(args: &TestArgs) -> Result<RunConfig, String> {
    let compiler = match args.reference.as_deref() {
        None => Compiler::Sysyc(CompileOptions {
            isa: args
                .march
                .as_deref()
                .map(Isa::parse)
                .transpose()?
                .unwrap_or_default(),
            ..compile_options(
                args.opt_level,
                if args.emit_llvm {
                    Emit::Llvm
                } else {
                    Emit::Asm
                },
                args.verify,
                args.regalloc,
            )
        }),
        Some("gcc") => Compiler::Gcc,
        Some(other) => return Err(format!("unknown reference compiler `{other}` (try gcc)")),
    };
    let mut cfg = RunConfig::new(compiler);
    cfg.timeout = Duration::from_secs_f64(args.timeout.max(0.001));
    cfg.keep_failed |= args.keep;
    Ok(cfg)
}

/// `sysyc test`: returns the exit code (1 if any case failed or the cases cannot be read, 2 on
/// bad usage).
pub fn run_test(args: &TestArgs) -> i32 {
    let (cases, shard) =
        match select_cases(&args.dirs, args.filter.as_deref(), args.shard, "sysyc test") {
            Ok(c) => c,
            Err((code, e)) => {
                eprintln!("{e}");
                return code;
            }
        };
    let cfg = match test_config(args) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("sysyc test: {e}");
            return 2;
        }
    };
    eprintln!(
        "running {} cases with {}",
        cases.len(),
        cfg.compiler.label()
    );
    let progress = Progress::new(cases.len(), args.quiet);
    let results = runner::run_cases(&cases, &cfg, args.jobs, &|r| {
        let note = match r.run_time {
            Some(t) if r.outcome.is_pass() => format!("{:.2}s", t.as_secs_f64()),
            _ => r.outcome.kind().to_string(),
        };
        progress.tick(&r.name, r.outcome.is_pass(), &note);
    });
    progress.finish();
    print!("{}", runner::failure_report(&results));
    if args.times {
        print!("{}", times_table(&results));
    }
    println!("{}", summary_table(&results));
    let failed = results.iter().filter(|r| !r.outcome.is_pass()).count();
    println!(
        "{}: {} passed, {} failed in {:.1}s",
        cfg.compiler.label(),
        results.len() - failed,
        failed,
        progress.elapsed_secs()
    );
    let report = test_report(&results, &cfg, shard);
    if let Some(path) = &args.json {
        if let Err(e) = results::write(path, &report) {
            eprintln!("sysyc test: {e}");
            return 2;
        }
    }
    if let Some(path) = &args.junit {
        if let Err(e) = std::fs::write(path, junit::test_xml(&report)) {
            eprintln!("sysyc test: writing {}: {e}", path.display());
            return 1;
        }
    }
    i32::from(failed > 0)
}

/// Per-case times: compile, run (wall, emulator included) and the program's timer total.
pub fn times_table(results: &[CaseResult]) -> String {
    let w = results
        .iter()
        .map(|r| r.name.len())
        .max()
        .unwrap_or(4)
        .max(4);
    let mut s = format!(
        "{:<w$} {:>14} {:>11} {:>10} {:>10}\n",
        "case", "outcome", "compile ms", "run s", "timer ms"
    );
    for r in results {
        s.push_str(&format!(
            "{:<w$} {:>14} {:>11.1} {:>10} {:>10}\n",
            r.name,
            r.outcome.kind(),
            r.compile_time.as_secs_f64() * 1e3,
            r.run_time
                .map_or("-".into(), |t| format!("{:.2}", t.as_secs_f64())),
            r.timer_us
                .map_or("-".into(), |us| format!("{:.1}", us as f64 / 1e3)),
        ));
    }
    let run: f64 = results
        .iter()
        .filter_map(|r| r.run_time)
        .map(|t| t.as_secs_f64())
        .sum();
    let timer: u64 = results.iter().filter_map(|r| r.timer_us).sum();
    s.push_str(&format!(
        "total run {:.1}s, total timer {:.1}ms\n",
        run,
        timer as f64 / 1e3
    ));
    s
}

/// Pass counts per suite (first component of the case name) and per outcome kind.
pub fn summary_table(results: &[CaseResult]) -> String {
    let mut suites: Vec<(String, usize, usize)> = Vec::new();
    for r in results {
        let suite = r.name.split('/').next().unwrap_or("").to_string();
        let i = match suites.iter().position(|s| s.0 == suite) {
            Some(i) => i,
            None => {
                suites.push((suite, 0, 0));
                suites.len() - 1
            }
        };
        suites[i].1 += 1;
        suites[i].2 += usize::from(r.outcome.is_pass());
    }
    let mut s = format!(
        "{:<28} {:>7} {:>7} {:>7}\n",
        "suite", "cases", "passed", "failed"
    );
    for (name, n, ok) in &suites {
        s.push_str(&format!("{:<28} {:>7} {:>7} {:>7}\n", name, n, ok, n - ok));
    }
    let kinds: Vec<String> = runner::summary_counts(results)
        .iter()
        .map(|(k, n)| format!("{k} {n}"))
        .collect();
    s.push_str(&format!("outcomes: {}", kinds.join(", ")));
    s
}

/// Per-case results as a report (for `--json` and `--junit`).
pub fn test_report(results: &[CaseResult], cfg: &RunConfig, shard: Option<Shard>) -> TestReport {
    let ms = |d: Duration| (d.as_secs_f64() * 1e6).round() / 1e3;
    let cases: Vec<TestRecord> = results
        .iter()
        .map(|r| TestRecord {
            name: r.name.clone(),
            outcome: r.outcome.kind().into(),
            compile_ms: ms(r.compile_time),
            run_ms: r.run_time.map(ms),
            timer_us: r.timer_us,
            detail: runner::truncate(r.outcome.detail(), 4000),
        })
        .collect();
    let failed = cases.iter().filter(|c| !c.is_pass()).count();
    TestReport {
        schema_version: SCHEMA_VERSION,
        tool: "sysyc test".into(),
        compiler: cfg.compiler.label(),
        shard,
        passed: cases.len() - failed,
        failed,
        cases,
    }
}

/// The cases under `dirs` matching `filter`, narrowed to the shard given by `flag` or the
/// environment. No case at all is an error; an empty shard is not (a small suite split many
/// ways).
pub fn select_cases(
    dirs: &[PathBuf],
    filter: Option<&str>,
    flag: Option<Shard>,
    tool: &str,
) -> Result<(Vec<Case>, Option<Shard>), (i32, String)> {
    // Unreadable directories and empty suites are the user's input (1); a bad shard is usage (2).
    let mut cases = discover(dirs, filter).map_err(|e| (1, format!("{tool}: {e}")))?;
    if cases.is_empty() {
        return Err((1, format!("{tool}: no cases found")));
    }
    let shard = shard::from_args_or_env(flag, tool).map_err(|e| (2, format!("{tool}: {e}")))?;
    if let Some(s) = shard {
        let all = cases.len();
        cases.retain(|c| s.contains(&c.name));
        eprintln!("{tool}: shard {s}: {} of {all} cases", cases.len());
    }
    Ok((cases, shard))
}
