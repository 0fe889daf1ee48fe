//! `sysyc bench`: how fast the code we generate is.
//!
//! Per case and compiler (sysyc, and with `--reference gcc` the source read as C by
//! `riscv64-linux-gnu-gcc -O2`): build, run once under qemu with our instruction-count plugin
//! (perf/qemu-plugin; counts up to the runtime's exit marker, so the timer report is not
//! counted) checking the output, then `--runs` more times without the plugin for the program's
//! own timer total (the `TOTAL:` line the runtime prints to stderr) and wall time, kept as
//! min / median / max with a 95 % confidence interval ([`Spread`]). Executed instructions are
//! exact (the program runs with a fixed environment and argv, see `runner::execute`); timers
//! are noisy on a shared machine, so a timer counts as changed only beyond its noise.
//!
//! Output: a table on stdout, optional JSON (`--save`, [`BenchReport`]), JUnit XML
//! (`--junit`), a self-contained HTML report (`--html`, see `report`), and with `--baseline` a
//! comparison against an earlier JSON that exits 1 when a case broke or a metric grew by more
//! than `--threshold` percent (and, for timers, beyond the noise of both runs). `conclude` does
//! all of that from a report, so `sysyc merge` gives sharded runs the same outputs.

use super::cases::Case;
use super::cli::select_cases;
use super::cycles;
use super::junit;
use super::progress::Progress;
use super::report;
use super::results::{self, BenchReport, BenchRow, Measure, Metric, SCHEMA_VERSION};
use super::runner::{self, Compiler, Outcome, RunConfig, WorkDir};
use super::shard::Shard;
use super::stats::{above_noise, geomean, Spread};
use super::toolchain;
use crate::backend::riscv::regalloc::Allocator;
use crate::driver::{CompileOptions, Emit};
use argh::FromArgs;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Measure executed instructions (qemu plugin) and timer totals of benchmark cases.
#[derive(FromArgs, Debug)]
#[argh(subcommand, name = "bench")]
pub struct BenchArgs {
    /// directories (searched recursively) or .sy files
    #[argh(positional)]
    pub dirs: Vec<PathBuf>,
    /// timed runs per case (min, median, max and a 95% confidence interval are kept; default
    /// 3); instructions are counted in one extra run
    #[argh(option, default = "3")]
    pub runs: usize,
    /// write the results as JSON to this file
    #[argh(option)]
    pub save: Option<PathBuf>,
    /// compare with results saved earlier by --save; regressions make the exit code 1
    #[argh(option)]
    pub baseline: Option<PathBuf>,
    /// also measure a reference compiler: `gcc` (riscv64-linux-gnu-gcc -O2 on the source as C)
    #[argh(option)]
    pub reference: Option<String>,
    /// percent growth over the baseline that counts as a regression (default 2); timers must
    /// also grow beyond the noise of both runs
    #[argh(option, default = "2.0")]
    pub threshold: f64,
    /// write a self-contained HTML report with charts to this file
    #[argh(option)]
    pub html: Option<PathBuf>,
    /// write per-case results as JUnit XML to this file (a broken case or a regression fails)
    #[argh(option)]
    pub junit: Option<PathBuf>,
    /// a directory of results saved by --save: the HTML report gets a trend view of every
    /// metric across them (with no DIRS, only the trend view is made)
    #[argh(option)]
    pub history: Option<PathBuf>,
    /// optimization level of sysyc (default 2)
    #[argh(option, short = 'O', default = "2")]
    pub opt_level: u8,
    /// cases measured at once (default 1: timers want a quiet machine)
    #[argh(option, short = 'j', default = "1")]
    pub jobs: usize,
    /// only cases whose name contains one of these comma-separated substrings
    #[argh(option)]
    pub filter: Option<String>,
    /// run only shard K of N (K/N, K from 1); default from the CI or batch scheduler, as for
    /// `sysyc test`
    #[argh(option)]
    pub shard: Option<Shard>,
    /// seconds one run may take (default 600)
    #[argh(option, default = "600.0")]
    pub timeout: f64,
    /// register allocator of sysyc: linear-scan (default) or simple (every value in a stack slot)
    #[argh(option, default = "Default::default()")]
    pub regalloc: Allocator,
    /// reuse the reference's measurements from a JSON saved by --save, for cases whose source,
    /// input and expected output are unchanged (the reference compiler does not change between
    /// runs of ours, and measuring it is often the slow half); implies --reference gcc
    #[argh(option)]
    pub reference_from: Option<PathBuf>,
}

/// Fills the static counts from the backend's statistics of our own compile (a second
/// compile of the case; left empty if it fails, which the build step already reports).
fn add_static_counts(m: &mut Measure, case: &Case, opts: &CompileOptions) {
    let Ok(source) = std::fs::read(&case.sy) else {
        return;
    };
    let (name, opts) = (case.sy.to_string_lossy().into_owned(), opts.clone());
    let Ok(Ok(stats)) =
        crate::driver::with_big_stack(move || crate::driver::backend_stats(&source, &name, &opts))
    else {
        return;
    };
    let sum = |f: fn(&crate::backend::riscv::FuncStats) -> u64| Some(stats.iter().map(f).sum());
    m.spill_loads = sum(|s| s.spill_loads as u64);
    m.spill_stores = sum(|s| s.spill_stores as u64);
    m.moves = sum(|s| s.moves as u64);
    m.frame_bytes = sum(|s| s.frame_size);
}

fn failed(outcome: &Outcome) -> Measure {
    Measure {
        status: outcome.kind().to_string(),
        detail: runner::truncate(outcome.detail(), 2000),
        ..Measure::default()
    }
}

/// A hash of a case's source, input and expected output (FNV-1a, 64 bits, hex). A saved
/// reference measurement is reused only for the same fingerprint, so an edited case is measured
/// again.
pub fn case_fingerprint(case: &Case) -> Option<String> {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for (tag, path) in [
        (b's', Some(&case.sy)),
        (b'i', case.input.as_ref()),
        (b'o', case.expected.as_ref()),
    ] {
        let bytes = match path {
            Some(p) => std::fs::read(p).ok()?,
            None => Vec::new(),
        };
        let len = (bytes.len() as u64).to_le_bytes();
        for &b in [tag].iter().chain(&len).chain(&bytes) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    Some(format!("{h:016x}"))
}

/// Reference measurements saved by `--save`, by case name and fingerprint (rows saved without a
/// fingerprint, or whose reference failed, are not reused).
fn saved_references(doc: &BenchReport) -> Vec<(String, String, Measure)> {
    doc.cases
        .iter()
        .filter_map(|c| {
            let m = c.reference.as_ref().filter(|m| m.ok())?;
            Some((c.name.clone(), c.fingerprint.clone()?, m.clone()))
        })
        .collect()
}

/// Counts instructions in assembly text: lines that are not empty, labels, directives or comments.
pub fn count_asm_insns(text: &str) -> u64 {
    let mut n = 0;
    for line in text.lines() {
        let mut l = line.split('#').next().unwrap_or("").trim();
        // Strip leading labels (`foo:` possibly followed by an instruction).
        while let Some(i) = l.find(':') {
            let head = &l[..i];
            if head.is_empty() || head.contains(char::is_whitespace) || head.contains('"') {
                break;
            }
            l = l[i + 1..].trim_start();
        }
        if !l.is_empty() && !l.starts_with('.') && !l.starts_with("//") {
            n += 1;
        }
    }
    n
}

/// Parses the runtime's `TOTAL: <H>H-<M>M-<S>S-<us>us` line into microseconds.
pub fn parse_timer_total(stderr: &[u8]) -> Option<u64> {
    let text = String::from_utf8_lossy(stderr);
    let line = text.lines().rev().find(|l| l.starts_with("TOTAL:"))?;
    let mut parts = line["TOTAL:".len()..].trim().split('-');
    let mut field =
        |suffix: &str| -> Option<u64> { parts.next()?.strip_suffix(suffix)?.parse().ok() };
    let (h, m, s, us) = (field("H")?, field("M")?, field("S")?, field("us")?);
    Some(((h * 60 + m) * 60 + s) * 1_000_000 + us)
}

/// Measures one case with one compiler.
pub fn measure(case: &Case, cfg: &RunConfig, runs: usize) -> Measure {
    let plugin = match toolchain::insn_count_plugin() {
        Ok(p) => p,
        Err(e) => return failed(&Outcome::HarnessError(e)),
    };
    let dir = match WorkDir::new(&case.name) {
        Ok(d) => d,
        Err(e) => return failed(&Outcome::HarnessError(e)),
    };
    let built = match runner::build_case(case, cfg, &dir.path) {
        Ok(b) => b,
        Err(o) => return failed(&o),
    };
    let mut m = Measure {
        built_by: built.reference.map(str::to_string),
        ..Measure::default()
    };
    m.static_insns = match &built.text {
        Some(t) => Some(count_asm_insns(t)),
        None => reference_static_count(&dir.path),
    };
    if let Compiler::Sysyc(opts) = &cfg.compiler {
        if opts.emit == Emit::Asm {
            add_static_counts(&mut m, case, opts);
        }
    }
    let counts = dir.path.join("insns.txt");
    let profile = dir.path.join("profile.txt");
    let plugin_arg = format!(
        "{},outfile={},profile={}",
        plugin.display(),
        counts.display(),
        profile.display()
    );
    let out = match runner::execute(&built, case, cfg, Some(&plugin_arg)) {
        Ok(o) => o,
        Err(e) => return failed(&Outcome::HarnessError(e)),
    };
    let verdict = runner::judge(case, &out);
    if !verdict.is_pass() {
        let f = failed(&verdict);
        return Measure {
            status: f.status,
            detail: f.detail,
            ..m
        };
    }
    m.insns = std::fs::read_to_string(&counts).ok().and_then(|t| {
        t.lines()
            .find_map(|l| l.strip_prefix("insns:").and_then(|v| v.trim().parse().ok()))
    });
    if let Some(insns) = m.insns {
        match cycles::measure_run(&built.exe, &profile, insns) {
            Ok(e) => {
                m.cycles = Some(e.cycles.round() as u64);
                m.cycles_mca = e.cycles_mca.map(|c| c.round() as u64);
            }
            Err(e) => m.detail = format!("cycles: {e}"),
        }
    }
    let (mut timers, mut walls) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        match runner::execute(&built, case, cfg, None) {
            Ok(o) if matches!(o.status, super::exec::Status::Exited(_)) => {
                timers.extend(parse_timer_total(&o.stderr).map(|us| us as f64));
                walls.push(o.elapsed.as_secs_f64() * 1e3);
            }
            Ok(o) => {
                return Measure {
                    status: "unstable".into(),
                    detail: o.status.to_string(),
                    ..m
                };
            }
            Err(e) => return failed(&Outcome::HarnessError(e)),
        }
    }
    m.timer = Spread::of(&timers);
    m.timer_us = m.timer.as_ref().map(|t| t.median.round() as u64);
    m.wall = Spread::of(&walls);
    m.wall_ms = m.wall.as_ref().map(|w| w.median);
    m.status = "ok".into();
    m
}

/// Static count of the reference: the assembly clang left when it built the case, else `-S`
/// of the same C with gcc's flags.
fn reference_static_count(dir: &std::path::Path) -> Option<u64> {
    let s = dir.join("case.s");
    if !s.is_file() {
        let rt = toolchain::runtime(toolchain::Arch::Riscv64).ok()?;
        let mut cmd = std::process::Command::new(toolchain::rv_cc());
        cmd.args(runner::GCC_REFERENCE_FLAGS)
            .arg("-include")
            .arg(&rt.header);
        cmd.arg("-S").arg(dir.join("case.c")).arg("-o").arg(&s);
        toolchain::run_tool(&mut cmd).ok()?;
    }
    Some(count_asm_insns(&std::fs::read_to_string(s).ok()?))
}

fn fmt_opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or("-".into(), |v| v.to_string())
}

/// `sysyc bench`: returns the exit code (1 on a regression against the baseline or a broken
/// case, 2 on bad usage).
pub fn run_bench(args: &BenchArgs) -> i32 {
    let fail = |e: String| {
        eprintln!("sysyc bench: {e}");
        2
    };
    let history = match &args.history {
        None => Vec::new(),
        Some(dir) => match load_history(dir) {
            Ok(h) => h,
            Err(e) => return fail(e),
        },
    };
    if args.dirs.is_empty() {
        return match (&args.history, &args.html) {
            (Some(_), Some(html)) => {
                print!("{}", report::trend_table(&history));
                match std::fs::write(html, report::html(None, None, &history)) {
                    Ok(()) => 0,
                    Err(e) => fail(format!("writing {}: {e}", html.display())),
                }
            }
            (Some(_), None) => {
                fail("--history without DIRS draws a trend: give --html FILE".into())
            }
            _ => fail("no directories given".into()),
        };
    }
    let (cases, shard) = match select_cases(
        &args.dirs,
        args.filter.as_deref(),
        args.shard,
        "sysyc bench",
    ) {
        Ok(c) => c,
        Err((code, e)) => {
            eprintln!("{e}");
            return code;
        }
    };
    let with_ref = match args.reference.as_deref() {
        None => args.reference_from.is_some(),
        Some("gcc") => true,
        Some(o) => return fail(format!("unknown reference `{o}` (try gcc)")),
    };
    let baseline = match &args.baseline {
        None => None,
        Some(p) => match results::read_bench(p) {
            Ok(b) => Some(b),
            Err(e) => return fail(format!("baseline {e}")),
        },
    };
    let saved = match &args.reference_from {
        None => Vec::new(),
        Some(p) => match results::read_bench(p) {
            Ok(j) => saved_references(&j),
            Err(e) => return fail(format!("reference file {e}")),
        },
    };
    let timeout = Duration::from_secs_f64(args.timeout.max(0.001));
    let mk = |compiler| RunConfig {
        timeout,
        ..RunConfig::new(compiler)
    };
    let ours = mk(Compiler::Sysyc(CompileOptions {
        opt_level: args.opt_level,
        emit: Emit::Asm,
        verify_each: false,
        regalloc: args.regalloc,
        ..CompileOptions::default()
    }));
    let reference = mk(Compiler::Gcc);
    let progress = Progress::new(cases.len(), false);
    let work = || {
        use rayon::prelude::*;
        cases
            .par_iter()
            .map(|case| {
                let fingerprint = case_fingerprint(case);
                let reused = saved
                    .iter()
                    .find(|(n, fp, _)| *n == case.name && Some(fp) == fingerprint.as_ref());
                let mut row = BenchRow {
                    name: case.name.clone(),
                    sysyc: measure(case, &ours, args.runs),
                    reference: with_ref.then(|| match reused {
                        Some((_, _, m)) => m.clone(),
                        None => measure(case, &reference, args.runs),
                    }),
                    fingerprint,
                    ratio: None,
                };
                row.ratio = row.ratio();
                let note = match (row.sysyc.ok(), row.ratio) {
                    (true, Some(r)) => match row.ratio_of(Metric::Cycles) {
                        Some(c) => format!("{c:.3}x gcc cycles, {r:.3}x insns"),
                        None => format!("{r:.3}x gcc insns"),
                    },
                    (true, None) => format!("{} insns", fmt_opt(row.sysyc.insns)),
                    (false, _) => row.sysyc.status.clone(),
                };
                progress.tick(&case.name, row.sysyc.ok(), &note);
                row
            })
            .collect::<Vec<BenchRow>>()
    };
    let rows = match rayon::ThreadPoolBuilder::new()
        .num_threads(args.jobs.max(1))
        .build()
    {
        Ok(pool) => pool.install(work),
        Err(_) => work(),
    };
    progress.finish();
    let report = BenchReport {
        schema_version: SCHEMA_VERSION,
        tool: "sysyc bench".into(),
        unix_time: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        commit: current_commit(),
        opt_level: args.opt_level,
        runs: args.runs,
        regalloc: Some(args.regalloc.name().into()),
        reference: with_ref.then(|| "gcc".into()),
        geomean_ratio: geomean(rows.iter().filter_map(BenchRow::ratio)),
        shard,
        cases: rows,
    };
    conclude(
        &report,
        &Outputs {
            save: args.save.clone(),
            html: args.html.clone(),
            junit: args.junit.clone(),
            baseline,
            threshold: args.threshold,
            history,
        },
    )
}

/// What to do with a finished (or merged) benchmark report.
pub struct Outputs {
    pub save: Option<PathBuf>,
    pub html: Option<PathBuf>,
    pub junit: Option<PathBuf>,
    pub baseline: Option<BenchReport>,
    pub threshold: f64,
    /// Earlier runs for the trend view (the report itself is added as the last point).
    pub history: Vec<BenchReport>,
}

/// Prints the table, broken cases and the baseline comparison, and writes the requested
/// files. Returns the exit code: 1 if a case broke or regressed, 2 if a file could not be
/// written.
pub fn conclude(report: &BenchReport, out: &Outputs) -> i32 {
    let rows = &report.cases;
    print!("{}", table(rows, report.reference.is_some()));
    for m in Metric::ALL {
        if let Some(g) = geomean(rows.iter().filter_map(|r| r.ratio_of(m))) {
            println!("geomean sysyc/gcc {}: {g:.3}", m.key());
        }
    }
    let broken: Vec<&BenchRow> = rows.iter().filter(|r| !r.sysyc.ok()).collect();
    for r in &broken {
        println!(
            "---- {}: {} ----\n{}",
            r.name,
            r.sysyc.status,
            r.sysyc.detail.trim_end()
        );
    }
    let mut code = i32::from(!broken.is_empty());
    let comparison = out
        .baseline
        .as_ref()
        .map(|b| compare_baseline(rows, b, out.threshold));
    if let Some(cmp) = &comparison {
        print!("{}", cmp.text);
        if !cmp.regressions.is_empty() {
            code = 1;
        }
    }
    let mut write = |path: &Option<PathBuf>, text: &dyn Fn() -> String| {
        if let Some(p) = path {
            if let Err(e) = std::fs::write(p, text()) {
                eprintln!("sysyc bench: writing {}: {e}", p.display());
                code = 2;
            }
        }
    };
    write(&out.junit, &|| {
        let regressions = comparison.as_ref().map_or(&[][..], |c| &c.regressions);
        junit::bench_xml(report, regressions)
    });
    write(&out.html, &|| {
        let mut history = out.history.clone();
        history.push(report.clone());
        report::html(Some(report), comparison.as_ref(), &history)
    });
    if let Some(p) = &out.save {
        if let Err(e) = results::write(p, report) {
            eprintln!("sysyc bench: {e}");
            code = 2;
        }
    }
    code
}

/// The benchmark results saved in `dir` (every `*.json` that is one), oldest first. Other JSON
/// files are passed over with a note; a file of a newer schema is an error.
pub fn load_history(dir: &Path) -> Result<Vec<BenchReport>, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    paths.sort();
    let mut runs = Vec::new();
    for p in paths {
        match results::read(&p) {
            Ok(results::Report::Bench(b)) => runs.push(b),
            Ok(results::Report::Test(_)) => {}
            Err(e) if e.contains("newer sysyc") => return Err(e),
            Err(e) => eprintln!("sysyc bench: --history: skipping {e}"),
        }
    }
    runs.sort_by_key(|r| r.unix_time);
    Ok(runs)
}

/// The commit being measured: `$SYSY_COMMIT`, the CI's commit variable, else `git describe`
/// of the tree this binary was built from.
fn current_commit() -> Option<String> {
    for var in ["SYSY_COMMIT", "CI_COMMIT_SHORT_SHA", "GITHUB_SHA"] {
        if let Ok(c) = std::env::var(var) {
            if !c.is_empty() {
                return Some(c.chars().take(12).collect());
            }
        }
    }
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(toolchain::repo_root())
        .args(["describe", "--always", "--dirty", "--abbrev=10"])
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let s = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (out.status.success() && !s.is_empty()).then_some(s)
}

/// A timer as `median ms (min-max, ±noise%)`.
fn show_timer(m: &Measure) -> String {
    match (&m.timer, m.timer_us) {
        (Some(t), _) => {
            let mut s = format!("{:.1}", t.median / 1e3);
            if t.n > 1 {
                s += &format!(" ({:.1}-{:.1}", t.min / 1e3, t.max / 1e3);
                if let Some(p) = t.noise_pct() {
                    s += &format!(", ±{p:.1}%");
                }
                s.push(')');
            }
            s
        }
        (None, Some(us)) => format!("{:.1}", us as f64 / 1e3),
        _ => "-".into(),
    }
}

fn table(rows: &[BenchRow], with_ref: bool) -> String {
    let w = rows.iter().map(|r| r.name.len()).max().unwrap_or(4).max(4);
    let has_cycles = rows.iter().any(|r| r.sysyc.cycles.is_some());
    let tw = rows
        .iter()
        .flat_map(|r| std::iter::once(&r.sysyc).chain(&r.reference))
        .map(|m| show_timer(m).len())
        .max()
        .unwrap_or(8)
        .max(8);
    let mut s = format!("{:<w$} {:>14}", "case", "sysyc insns");
    if has_cycles {
        s += &format!(" {:>14}", "sysyc cycles");
    }
    s += &format!(
        " {:>tw$} {:>9} {:>7} {:>7} {:>6} {:>8}",
        "timer ms", "static", "spill-l", "spill-s", "moves", "frame"
    );
    if with_ref {
        s += &format!(" {:>14}", "gcc insns");
        if has_cycles {
            s += &format!(" {:>14}", "gcc cycles");
        }
        s += &format!(" {:>tw$} {:>9} {:>7}", "gcc timer", "static", "ratio");
    }
    s.push('\n');
    for r in rows {
        let status = |m: &Measure| {
            if m.ok() {
                String::new()
            } else {
                format!("  [{}]", m.status)
            }
        };
        s += &format!("{:<w$} {:>14}", r.name, fmt_opt(r.sysyc.insns));
        if has_cycles {
            s += &format!(" {:>14}", fmt_opt(r.sysyc.cycles));
        }
        s += &format!(
            " {:>tw$} {:>9} {:>7} {:>7} {:>6} {:>8}",
            show_timer(&r.sysyc),
            fmt_opt(r.sysyc.static_insns),
            fmt_opt(r.sysyc.spill_loads),
            fmt_opt(r.sysyc.spill_stores),
            fmt_opt(r.sysyc.moves),
            fmt_opt(r.sysyc.frame_bytes)
        );
        if let Some(g) = &r.reference {
            s += &format!(" {:>14}", fmt_opt(g.insns));
            if has_cycles {
                s += &format!(" {:>14}", fmt_opt(g.cycles));
            }
            s += &format!(
                " {:>tw$} {:>9} {:>7}",
                show_timer(g),
                fmt_opt(g.static_insns),
                r.ratio().map_or("-".into(), |x| format!("{x:.3}"))
            );
            s += &status(g).replace('[', "[gcc: ");
            if g.built_by.as_deref() == Some("clang") {
                // gcc rejects a `const int` array bound at file scope; clang -O2 stood in.
                s += "  (reference: clang -O2)";
            }
        }
        s += &status(&r.sysyc);
        s.push('\n');
    }
    s
}

/// The result of comparing with a baseline.
pub struct Comparison {
    pub text: String,
    /// Cases that broke or regressed, with why.
    pub regressions: Vec<(String, String)>,
    /// Per metric, per case: current / baseline.
    pub ratios: Vec<(Metric, Vec<(String, f64)>)>,
}

/// Compares sysyc's figures with a baseline written by `--save` (or `sysyc merge`). A case
/// regresses when it broke, or when a metric grew by more than `threshold` percent; a timer
/// must also have grown beyond the noise of both runs (disjoint 95 % intervals), so a timer
/// measured once is never flagged.
pub fn compare_baseline(rows: &[BenchRow], baseline: &BenchReport, threshold: f64) -> Comparison {
    let mut text = format!(
        "\nagainst the baseline (regression: broken, or > {threshold}% more of a count, or of a \
         timer beyond its noise):\n"
    );
    let mut regressions = Vec::new();
    let mut ratios: Vec<(Metric, Vec<(String, f64)>)> =
        Metric::ALL.iter().map(|&m| (m, Vec::new())).collect();
    let (mut compared, mut better) = (0, 0);
    for r in rows {
        let Some(b) = baseline.cases.iter().find(|c| c.name == r.name) else {
            continue;
        };
        let b = &b.sysyc;
        compared += 1;
        if b.ok() && !r.sysyc.ok() {
            let why = format!("now {}", r.sysyc.status);
            text += &format!("  REGRESSION {}: {why}\n", r.name);
            regressions.push((r.name.clone(), why));
            continue;
        }
        let mut why = Vec::new();
        for (metric, list) in &mut ratios {
            let (Some(now), Some(then)) = (metric.value(&r.sysyc), metric.value(b)) else {
                continue;
            };
            if then <= 0.0 {
                continue;
            }
            let ratio = now / then;
            list.push((r.name.clone(), ratio));
            let pct = (ratio - 1.0) * 100.0;
            let change = format!(
                "{} {} -> {} ({pct:+.2}%)",
                metric.key(),
                metric.show(then),
                metric.show(now)
            );
            let spreads = (metric.spread(&r.sysyc), metric.spread(b));
            let beyond_noise = |up: bool| {
                metric.is_exact()
                    || match spreads {
                        (Some(n), Some(t)) if up => above_noise(n, t),
                        (Some(n), Some(t)) => above_noise(t, n),
                        _ => false,
                    }
            };
            if pct > threshold {
                if beyond_noise(true) {
                    why.push(change);
                } else {
                    text += &format!("  within noise {}: {change}\n", r.name);
                }
            } else if pct < -threshold && beyond_noise(false) {
                better += 1;
                text += &format!("  improved   {}: {change}\n", r.name);
            }
        }
        if !why.is_empty() {
            let why = why.join(", ");
            text += &format!("  REGRESSION {}: {why}\n", r.name);
            regressions.push((r.name.clone(), why));
        }
    }
    for (metric, list) in &ratios {
        if let Some(g) = geomean(list.iter().map(|r| r.1)) {
            text += &format!("  geomean now/baseline {}: {g:.4}\n", metric.key());
        }
    }
    text += &format!(
        "  {compared} compared, {} regressed, {better} improved\n",
        regressions.len()
    );
    ratios.retain(|(_, l)| !l.is_empty());
    Comparison {
        text,
        regressions,
        ratios,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn timer_total_parses() {
        let e = b"Timer@0021-0027: 0H-0M-1S-126us\nTOTAL: 1H-2M-3S-4us\n";
        assert_eq!(
            parse_timer_total(e),
            Some(((60 + 2) * 60 + 3) * 1_000_000 + 4)
        );
        assert_eq!(parse_timer_total(b"nothing"), None);
    }

    #[test]
    fn asm_counts_only_instructions() {
        let s =
            "\t.text\n\t.globl main\nmain:\n\taddi sp, sp, -16 # frame\n.Lbb1: li a0, 0\n\n\tret\n";
        assert_eq!(count_asm_insns(s), 3);
    }

    /// A report of three cases against gcc, for the comparison and report tests.
    pub(crate) fn sample_report() -> BenchReport {
        let m = |insns, timer: &[f64]| Measure {
            status: "ok".into(),
            insns: Some(insns),
            timer: Spread::of(timer),
            ..Measure::default()
        };
        let cases = [(120, 100), (80, 100), (300, 100)]
            .iter()
            .enumerate()
            .map(|(i, &(a, b))| {
                let mut row = BenchRow {
                    name: format!("perf/case<{i}>"),
                    fingerprint: Some(format!("{i:016x}")),
                    sysyc: m(a, &[1000.0, 1010.0, 990.0]),
                    reference: Some(Measure {
                        built_by: Some(if i == 2 { "clang" } else { "gcc" }.into()),
                        ..m(b, &[2000.0, 2100.0, 1900.0])
                    }),
                    ratio: None,
                };
                row.ratio = row.ratio();
                row
            })
            .collect();
        BenchReport {
            schema_version: SCHEMA_VERSION,
            tool: "sysyc bench".into(),
            unix_time: 1_700_000_000,
            commit: Some("abc123".into()),
            opt_level: 2,
            runs: 3,
            regalloc: Some("linear-scan".into()),
            reference: Some("gcc".into()),
            geomean_ratio: None,
            shard: None,
            cases,
        }
    }

    #[test]
    fn baseline_comparison_flags_counts_beyond_threshold_and_timers_beyond_noise() {
        let base = sample_report();
        let mut now = base.cases.clone();
        now[1].sysyc.insns = Some(90); // +12.5% instructions
        now[0].sysyc.timer = Spread::of(&[1300.0, 1310.0, 1290.0]); // slower, clearly
        now[2].sysyc.timer = Spread::of(&[1100.0, 1600.0, 600.0]); // slower median, but noisy
        let cmp = compare_baseline(&now, &base, 2.0);
        let names: Vec<&str> = cmp.regressions.iter().map(|r| r.0.as_str()).collect();
        assert_eq!(names, ["perf/case<0>", "perf/case<1>"], "{}", cmp.text);
        assert!(
            cmp.text.contains("within noise perf/case<2>: timer"),
            "{}",
            cmp.text
        );
        // A broken case regresses whatever its numbers.
        now[2].sysyc.status = "crash".into();
        let cmp = compare_baseline(&now, &base, 50.0);
        assert_eq!(cmp.regressions.len(), 1, "{}", cmp.text);
        assert_eq!(cmp.regressions[0].1, "now crash");
        // Saved reference rows come back by name and fingerprint, through the file format.
        let text = serde_json::to_string(&base).unwrap();
        let results::Report::Bench(back) = results::parse(&text).unwrap() else {
            panic!()
        };
        let saved = saved_references(&back);
        assert_eq!(saved.len(), 3);
        assert_eq!(
            (saved[2].0.as_str(), saved[2].1.as_str(), saved[2].2.insns),
            ("perf/case<2>", "0000000000000002", Some(100))
        );
    }

    #[test]
    fn table_shows_the_timer_spread_and_the_stand_in_reference() {
        let t = table(&sample_report().cases, true);
        assert!(t.contains("1.0 (1.0-1.0, ±2.5%)"), "{t}");
        assert!(t.contains("(reference: clang -O2)"), "{t}");
    }

    #[test]
    fn fingerprint_changes_with_any_file_of_the_case() {
        let dir = std::env::temp_dir().join(format!("sysyc-fp-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (sy, inp) = (dir.join("a.sy"), dir.join("a.in"));
        std::fs::write(&sy, "int main(){return 0;}").unwrap();
        std::fs::write(&inp, "1").unwrap();
        let case = Case {
            name: "x/a".into(),
            sy: sy.clone(),
            input: Some(inp.clone()),
            expected: None,
        };
        let a = case_fingerprint(&case).unwrap();
        assert_eq!(case_fingerprint(&case).unwrap(), a);
        std::fs::write(&inp, "2").unwrap();
        let b = case_fingerprint(&case).unwrap();
        assert_ne!(a, b);
        // Moving bytes between files changes it too.
        std::fs::write(&sy, "int main(){return 0;}2").unwrap();
        std::fs::write(&inp, "").unwrap();
        assert_ne!(case_fingerprint(&case).unwrap(), b);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
