//! `sysyc bench`: how fast the code we generate is.
//!
//! Per case and compiler (sysyc, and with `--reference gcc` the source read as C by
//! `riscv64-linux-gnu-gcc -O2`): build, run once under qemu with our instruction-count plugin
//! (perf/qemu-plugin; counts up to the runtime's exit marker, so the timer report is not
//! counted) checking the output, then `--runs` more times without the plugin for the program's
//! own timer total (the `TOTAL:` line the runtime prints to stderr) and wall time; medians are
//! kept. Executed instructions are the stable figure (identical run to run); timers are noisy
//! on a shared machine.
//!
//! Output: a table on stdout, optional JSON (`--save`), a self-contained HTML report with an
//! inline SVG chart (`--html`), and with `--baseline` a comparison against an earlier JSON that
//! exits 1 when a case got more than `--threshold` percent more instructions (or broke).

use super::cases::{discover, Case};
use super::json::Json;
use super::progress::Progress;
use super::runner::{self, Compiler, Outcome, RunConfig, WorkDir};
use super::toolchain;
use crate::backend::riscv::regalloc::Allocator;
use crate::driver::{CompileOptions, Emit};
use argh::FromArgs;
use std::path::PathBuf;
use std::time::Duration;

/// Measure executed instructions (qemu plugin) and timer totals of benchmark cases.
#[derive(FromArgs, Debug)]
#[argh(subcommand, name = "bench")]
pub struct BenchArgs {
    /// directories (searched recursively) or .sy files
    #[argh(positional)]
    pub dirs: Vec<PathBuf>,
    /// timed runs per case (median kept; default 3); instructions are counted in one extra run
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
    /// percent more instructions than the baseline that counts as a regression (default 2)
    #[argh(option, default = "2.0")]
    pub threshold: f64,
    /// write a self-contained HTML report with a chart to this file
    #[argh(option)]
    pub html: Option<PathBuf>,
    /// optimization level of sysyc (default 2)
    #[argh(option, short = 'O', default = "2")]
    pub opt_level: u8,
    /// cases measured at once (default 1: timers want a quiet machine)
    #[argh(option, short = 'j', default = "1")]
    pub jobs: usize,
    /// only cases whose name contains one of these comma-separated substrings
    #[argh(option)]
    pub filter: Option<String>,
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

/// The measurements of one case with one compiler.
#[derive(Clone, Debug, Default)]
pub struct Measure {
    /// `ok`, or the outcome kind that stopped the measurement (`wrong output`, ...).
    pub status: String,
    pub detail: String,
    /// Executed guest instructions up to the exit marker.
    pub insns: Option<u64>,
    /// Median of the program's own timer total, microseconds.
    pub timer_us: Option<u64>,
    /// Median wall time of a run (qemu included), milliseconds.
    pub wall_ms: Option<f64>,
    /// Instructions in the generated assembly.
    pub static_insns: Option<u64>,
    /// For the reference: which C compiler built it (`gcc`, or `clang` when gcc rejects the file).
    pub built_by: Option<String>,
    /// sysyc only, from the backend's own statistics (summed over functions): spill loads and
    /// stores, register moves, and stack frame bytes.
    pub spill_loads: Option<u64>,
    pub spill_stores: Option<u64>,
    pub moves: Option<u64>,
    pub frame_bytes: Option<u64>,
}

impl Measure {
    fn ok(&self) -> bool {
        self.status == "ok"
    }

    /// Fills the static counts from the backend's statistics of our own compile (a second
    /// compile of the case; left empty if it fails, which the build step already reports).
    fn add_static_counts(&mut self, case: &Case, opts: &CompileOptions) {
        let Ok(source) = std::fs::read(&case.sy) else {
            return;
        };
        let (name, opts) = (case.sy.to_string_lossy().into_owned(), opts.clone());
        let Ok(Ok(stats)) = crate::driver::with_big_stack(move || {
            crate::driver::backend_stats(&source, &name, &opts)
        }) else {
            return;
        };
        let sum = |f: fn(&crate::backend::riscv::FuncStats) -> u64| Some(stats.iter().map(f).sum());
        self.spill_loads = sum(|s| s.spill_loads as u64);
        self.spill_stores = sum(|s| s.spill_stores as u64);
        self.moves = sum(|s| s.moves as u64);
        self.frame_bytes = sum(|s| s.frame_size);
    }

    fn failed(outcome: &Outcome) -> Measure {
        Measure {
            status: outcome.kind().to_string(),
            detail: runner::truncate(outcome.detail(), 2000),
            ..Measure::default()
        }
    }

    fn to_json(&self) -> Json {
        Json::obj([
            ("status", Json::from(self.status.as_str())),
            ("insns", Json::from(self.insns)),
            ("timer_us", Json::from(self.timer_us)),
            ("wall_ms", Json::from(self.wall_ms)),
            ("static_insns", Json::from(self.static_insns)),
            ("built_by", Json::from(self.built_by.clone())),
            ("spill_loads", Json::from(self.spill_loads)),
            ("spill_stores", Json::from(self.spill_stores)),
            ("moves", Json::from(self.moves)),
            ("frame_bytes", Json::from(self.frame_bytes)),
            ("detail", Json::from(self.detail.as_str())),
        ])
    }

    fn from_json(j: &Json) -> Measure {
        let num = |k: &str| j.get(k).and_then(Json::as_f64);
        Measure {
            status: j
                .get("status")
                .and_then(Json::as_str)
                .unwrap_or("?")
                .to_string(),
            detail: String::new(),
            insns: num("insns").map(|n| n as u64),
            timer_us: num("timer_us").map(|n| n as u64),
            wall_ms: num("wall_ms"),
            static_insns: num("static_insns").map(|n| n as u64),
            built_by: j.get("built_by").and_then(Json::as_str).map(str::to_string),
            // Absent in files saved before these columns existed.
            spill_loads: num("spill_loads").map(|n| n as u64),
            spill_stores: num("spill_stores").map(|n| n as u64),
            moves: num("moves").map(|n| n as u64),
            frame_bytes: num("frame_bytes").map(|n| n as u64),
        }
    }
}

/// One row of the report.
#[derive(Clone, Debug)]
pub struct BenchRow {
    pub name: String,
    /// Fingerprint of the case's files (see [`case_fingerprint`]); `None` when unreadable.
    pub fingerprint: Option<String>,
    pub sysyc: Measure,
    pub reference: Option<Measure>,
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
fn saved_references(doc: &Json) -> Vec<(String, String, Measure)> {
    let mut out = Vec::new();
    for c in doc.get("cases").and_then(Json::as_array).unwrap_or(&[]) {
        let name = c.get("name").and_then(Json::as_str);
        let fp = c.get("fingerprint").and_then(Json::as_str);
        let m = c
            .get("reference")
            .filter(|r| !matches!(r, Json::Null))
            .map(Measure::from_json);
        if let (Some(name), Some(fp), Some(m)) = (name, fp, m) {
            if m.ok() {
                out.push((name.to_string(), fp.to_string(), m));
            }
        }
    }
    out
}

impl BenchRow {
    /// sysyc instructions / reference instructions.
    pub fn ratio(&self) -> Option<f64> {
        let r = self.reference.as_ref()?;
        if !(self.sysyc.ok() && r.ok()) {
            return None;
        }
        Some(self.sysyc.insns? as f64 / r.insns?.max(1) as f64)
    }
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

fn median_u64(mut v: Vec<u64>) -> Option<u64> {
    v.sort_unstable();
    v.get(v.len() / 2).copied()
}

fn median_f64(mut v: Vec<f64>) -> Option<f64> {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied()
}

/// Measures one case with one compiler.
pub fn measure(case: &Case, cfg: &RunConfig, runs: usize) -> Measure {
    let plugin = match toolchain::insn_count_plugin() {
        Ok(p) => p,
        Err(e) => return Measure::failed(&Outcome::HarnessError(e)),
    };
    let dir = match WorkDir::new(&case.name) {
        Ok(d) => d,
        Err(e) => return Measure::failed(&Outcome::HarnessError(e)),
    };
    let built = match runner::build_case(case, cfg, &dir.path) {
        Ok(b) => b,
        Err(o) => return Measure::failed(&o),
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
            m.add_static_counts(case, opts);
        }
    }
    let counts = dir.path.join("insns.txt");
    let plugin_arg = format!("{},outfile={}", plugin.display(), counts.display());
    let out = match runner::execute(&built, case, cfg, Some(&plugin_arg)) {
        Ok(o) => o,
        Err(e) => {
            return Measure {
                ..Measure::failed(&Outcome::HarnessError(e))
            }
        }
    };
    let verdict = runner::judge(case, &out);
    if !verdict.is_pass() {
        let f = Measure::failed(&verdict);
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
    let (mut timers, mut walls) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        match runner::execute(&built, case, cfg, None) {
            Ok(o) if matches!(o.status, super::exec::Status::Exited(_)) => {
                timers.extend(parse_timer_total(&o.stderr));
                walls.push(o.elapsed.as_secs_f64() * 1e3);
            }
            Ok(o) => {
                return Measure {
                    status: "unstable".into(),
                    detail: o.status.to_string(),
                    ..m
                };
            }
            Err(e) => return Measure::failed(&Outcome::HarnessError(e)),
        }
    }
    m.timer_us = median_u64(timers);
    m.wall_ms = median_f64(walls);
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

fn geomean(xs: impl Iterator<Item = f64>) -> Option<f64> {
    let (mut sum, mut n) = (0.0, 0usize);
    for x in xs.filter(|x| *x > 0.0) {
        sum += x.ln();
        n += 1;
    }
    (n > 0).then(|| (sum / n as f64).exp())
}

fn fmt_opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or("-".into(), |v| v.to_string())
}

/// `sysyc bench`: returns the exit code (1 on a regression against the baseline or a broken case).
pub fn run_bench(args: &BenchArgs) -> i32 {
    let cases = match discover(&args.dirs, args.filter.as_deref()) {
        Ok(c) if !c.is_empty() => c,
        Ok(_) => {
            eprintln!("sysyc bench: no cases found");
            return 1;
        }
        Err(e) => {
            eprintln!("sysyc bench: {e}");
            return 1;
        }
    };
    let with_ref = match args.reference.as_deref() {
        None => args.reference_from.is_some(),
        Some("gcc") => true,
        Some(o) => {
            eprintln!("sysyc bench: unknown reference `{o}` (try gcc)");
            return 2;
        }
    };
    let baseline = match &args.baseline {
        None => None,
        Some(p) => match std::fs::read_to_string(p)
            .map_err(|e| e.to_string())
            .and_then(|t| Json::parse(&t))
        {
            Ok(j) => Some(j),
            Err(e) => {
                eprintln!("sysyc bench: baseline {}: {e}", p.display());
                return 1;
            }
        },
    };
    let saved = match &args.reference_from {
        None => Vec::new(),
        Some(p) => match std::fs::read_to_string(p)
            .map_err(|e| e.to_string())
            .and_then(|t| Json::parse(&t))
        {
            Ok(j) => saved_references(&j),
            Err(e) => {
                eprintln!("sysyc bench: reference file {}: {e}", p.display());
                return 1;
            }
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
                let row = BenchRow {
                    name: case.name.clone(),
                    sysyc: measure(case, &ours, args.runs),
                    reference: with_ref.then(|| match reused {
                        Some((_, _, m)) => m.clone(),
                        None => measure(case, &reference, args.runs),
                    }),
                    fingerprint,
                };
                let note = match (row.sysyc.ok(), row.ratio()) {
                    (true, Some(r)) => format!("{:.3}x gcc", r),
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

    let geo = geomean(rows.iter().filter_map(BenchRow::ratio));
    print!("{}", table(&rows, with_ref));
    if let Some(g) = geo {
        println!("geomean sysyc/gcc executed instructions: {g:.3}");
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

    let comparison = baseline
        .as_ref()
        .map(|b| compare_baseline(&rows, b, args.threshold));
    if let Some(cmp) = &comparison {
        print!("{}", cmp.text);
        if cmp.regressions > 0 {
            code = 1;
        }
    }
    let doc = to_json(&rows, args, geo);
    if let Some(p) = &args.save {
        if let Some(dir) = p.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        if let Err(e) = std::fs::write(p, doc.pretty()) {
            eprintln!("sysyc bench: writing {}: {e}", p.display());
            code = 2;
        }
    }
    if let Some(p) = &args.html {
        let base_ratios = comparison
            .as_ref()
            .map(|c| c.ratios.clone())
            .unwrap_or_default();
        if let Err(e) = std::fs::write(p, html(&rows, geo, &base_ratios, args)) {
            eprintln!("sysyc bench: writing {}: {e}", p.display());
            code = 2;
        }
    }
    code
}

fn table(rows: &[BenchRow], with_ref: bool) -> String {
    let w = rows.iter().map(|r| r.name.len()).max().unwrap_or(4).max(4);
    let mut s = format!(
        "{:<w$} {:>14} {:>12} {:>9} {:>7} {:>7} {:>6} {:>8}",
        "case", "sysyc insns", "timer ms", "static", "spill-l", "spill-s", "moves", "frame"
    );
    if with_ref {
        s += &format!(
            " {:>14} {:>12} {:>9} {:>7}",
            "gcc insns", "gcc timer", "static", "ratio"
        );
    }
    s.push('\n');
    for r in rows {
        let ms = |m: &Measure| {
            m.timer_us
                .map_or("-".into(), |us| format!("{:.1}", us as f64 / 1e3))
        };
        let status = |m: &Measure| {
            if m.ok() {
                String::new()
            } else {
                format!("  [{}]", m.status)
            }
        };
        s += &format!(
            "{:<w$} {:>14} {:>12} {:>9} {:>7} {:>7} {:>6} {:>8}",
            r.name,
            fmt_opt(r.sysyc.insns),
            ms(&r.sysyc),
            fmt_opt(r.sysyc.static_insns),
            fmt_opt(r.sysyc.spill_loads),
            fmt_opt(r.sysyc.spill_stores),
            fmt_opt(r.sysyc.moves),
            fmt_opt(r.sysyc.frame_bytes)
        );
        if let Some(g) = &r.reference {
            s += &format!(
                " {:>14} {:>12} {:>9} {:>7}",
                fmt_opt(g.insns),
                ms(g),
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

fn to_json(rows: &[BenchRow], args: &BenchArgs, geo: Option<f64>) -> Json {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    Json::obj([
        ("tool", Json::from("sysyc bench")),
        ("unix_time", Json::from(now)),
        ("opt_level", Json::from(args.opt_level as u64)),
        ("runs", Json::from(args.runs)),
        ("regalloc", Json::from(args.regalloc.name())),
        ("reference", Json::from(args.reference.clone())),
        ("geomean_ratio", Json::from(geo)),
        (
            "cases",
            Json::Arr(
                rows.iter()
                    .map(|r| {
                        Json::obj([
                            ("name", Json::from(r.name.as_str())),
                            ("fingerprint", Json::from(r.fingerprint.clone())),
                            ("sysyc", r.sysyc.to_json()),
                            (
                                "reference",
                                r.reference.as_ref().map_or(Json::Null, Measure::to_json),
                            ),
                            ("ratio", Json::from(r.ratio())),
                        ])
                    })
                    .collect(),
            ),
        ),
    ])
}

/// The result of comparing with a baseline.
pub struct Comparison {
    pub text: String,
    pub regressions: usize,
    /// Per case: current / baseline instructions.
    pub ratios: Vec<(String, f64)>,
}

/// Compares sysyc's figures with a baseline JSON written by `--save`.
pub fn compare_baseline(rows: &[BenchRow], baseline: &Json, threshold: f64) -> Comparison {
    let mut base = Vec::new();
    for c in baseline
        .get("cases")
        .and_then(Json::as_array)
        .unwrap_or(&[])
    {
        if let (Some(name), Some(m)) = (c.get("name").and_then(Json::as_str), c.get("sysyc")) {
            base.push((name.to_string(), Measure::from_json(m)));
        }
    }
    let mut text = format!(
        "\nagainst the baseline (regression: > {threshold}% more instructions, or broken):\n"
    );
    let (mut regressions, mut better, mut ratios) = (0, 0, Vec::new());
    for r in rows {
        let Some((_, b)) = base.iter().find(|(n, _)| *n == r.name) else {
            continue;
        };
        if b.ok() && !r.sysyc.ok() {
            regressions += 1;
            text += &format!("  REGRESSION {}: now {}\n", r.name, r.sysyc.status);
            continue;
        }
        let (Some(now), Some(then)) = (r.sysyc.insns, b.insns) else {
            continue;
        };
        let ratio = now as f64 / then.max(1) as f64;
        ratios.push((r.name.clone(), ratio));
        let pct = (ratio - 1.0) * 100.0;
        let timer = match (r.sysyc.timer_us, b.timer_us) {
            (Some(a), Some(b)) if b > 0 => {
                format!(", timer {:+.1}%", (a as f64 / b as f64 - 1.0) * 100.0)
            }
            _ => String::new(),
        };
        if pct > threshold {
            regressions += 1;
            text += &format!(
                "  REGRESSION {}: {} -> {} insns ({pct:+.2}%{timer})\n",
                r.name, then, now
            );
        } else if pct < -threshold {
            better += 1;
            text += &format!(
                "  improved   {}: {} -> {} insns ({pct:+.2}%{timer})\n",
                r.name, then, now
            );
        }
    }
    if let Some(g) = geomean(ratios.iter().map(|r| r.1)) {
        text += &format!("  geomean now/baseline: {g:.4}\n");
    }
    text += &format!(
        "  {} compared, {regressions} regressed, {better} improved\n",
        ratios.len()
    );
    Comparison {
        text,
        regressions,
        ratios,
    }
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A self-contained HTML page: an SVG bar chart of per-case ratios (against gcc, or else against
/// the baseline) with the geometric mean, then the full table.
pub fn html(
    rows: &[BenchRow],
    geo: Option<f64>,
    base_ratios: &[(String, f64)],
    args: &BenchArgs,
) -> String {
    let (title, bars): (&str, Vec<(String, f64)>) = if args.reference.is_some() {
        (
            "executed instructions, sysyc / gcc -O2 (lower is better)",
            rows.iter()
                .filter_map(|r| Some((r.name.clone(), r.ratio()?)))
                .collect(),
        )
    } else {
        (
            "executed instructions, now / baseline (lower is better)",
            base_ratios.to_vec(),
        )
    };
    let geo_line = if args.reference.is_some() {
        geo
    } else {
        geomean(bars.iter().map(|b| b.1))
    };
    let mut svg = String::new();
    if !bars.is_empty() {
        let (label_w, bar_w, row_h, top) = (300.0, 560.0, 16.0, 30.0);
        let max = bars.iter().map(|b| b.1).fold(1.0f64, f64::max) * 1.05;
        let x = |v: f64| label_w + v / max * bar_w;
        let height = top + row_h * bars.len() as f64 + 30.0;
        svg += &format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{height}\" font-family=\"sans-serif\" font-size=\"11\">\n",
            label_w + bar_w + 80.0
        );
        svg += &format!(
            "<text x=\"{label_w}\" y=\"16\" font-size=\"13\">{}</text>\n",
            esc(title)
        );
        for (i, (name, v)) in bars.iter().enumerate() {
            let y = top + row_h * i as f64;
            let color = if *v <= 1.0 {
                "#4a9a4a"
            } else if *v <= 1.5 {
                "#d99a2b"
            } else {
                "#c0392b"
            };
            svg += &format!(
                "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text><rect x=\"{label_w}\" y=\"{}\" width=\"{:.1}\" height=\"{}\" fill=\"{color}\"><title>{}: {v:.3}</title></rect><text x=\"{:.1}\" y=\"{}\">{v:.3}</text>\n",
                label_w - 6.0,
                y + 11.0,
                esc(name),
                y + 2.0,
                x(*v) - label_w,
                row_h - 4.0,
                esc(name),
                x(*v) + 4.0,
                y + 11.0
            );
        }
        let bottom = top + row_h * bars.len() as f64;
        svg += &format!(
            "<line x1=\"{0:.1}\" x2=\"{0:.1}\" y1=\"{top}\" y2=\"{bottom}\" stroke=\"#333\"/><text x=\"{0:.1}\" y=\"{1}\" text-anchor=\"middle\">1.0</text>\n",
            x(1.0),
            bottom + 14.0
        );
        if let Some(g) = geo_line {
            svg += &format!(
                "<line x1=\"{0:.1}\" x2=\"{0:.1}\" y1=\"{top}\" y2=\"{bottom}\" stroke=\"#1f5fbf\" stroke-dasharray=\"5,3\" stroke-width=\"2\"/><text x=\"{0:.1}\" y=\"{1}\" text-anchor=\"middle\" fill=\"#1f5fbf\">geomean {g:.3}</text>\n",
                x(g),
                bottom + 26.0
            );
        }
        svg += "</svg>\n";
    } else {
        svg += "<p>No ratios to chart (use --reference gcc or --baseline).</p>\n";
    }
    let mut t = String::from(
        "<table><tr><th>case</th><th>sysyc insns</th><th>timer ms</th><th>static</th><th>spill loads</th><th>spill stores</th><th>moves</th><th>frame bytes</th><th>gcc insns</th><th>gcc timer ms</th><th>gcc static</th><th>ratio</th><th>status</th></tr>\n",
    );
    for r in rows {
        let g = r.reference.clone().unwrap_or_default();
        let ms = |m: &Measure| {
            m.timer_us
                .map_or("-".into(), |us| format!("{:.1}", us as f64 / 1e3))
        };
        let status = if r.sysyc.ok() {
            String::new()
        } else {
            r.sysyc.status.clone()
        };
        t += &format!(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
            esc(&r.name),
            fmt_opt(r.sysyc.insns),
            ms(&r.sysyc),
            fmt_opt(r.sysyc.static_insns),
            fmt_opt(r.sysyc.spill_loads),
            fmt_opt(r.sysyc.spill_stores),
            fmt_opt(r.sysyc.moves),
            fmt_opt(r.sysyc.frame_bytes),
            fmt_opt(g.insns),
            ms(&g),
            fmt_opt(g.static_insns),
            r.ratio().map_or("-".into(), |x| format!("{x:.3}")),
            esc(&status)
        );
    }
    t += "</table>\n";
    format!(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>sysyc bench</title>\n<style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse;font-size:12px}}td,th{{border:1px solid #ccc;padding:2px 6px;text-align:right}}td:first-child{{text-align:left}}</style></head><body>\n<h1>sysyc bench</h1>\n<p>sysyc -O{} (register allocator: {}), {} case(s), {} timed run(s) each{}.</p>\n{svg}{t}</body></html>\n",
        args.opt_level,
        args.regalloc.name(),
        rows.len(),
        args.runs,
        geo.map_or(String::new(), |g| format!("; geomean sysyc/gcc instructions {g:.3}"))
    )
}

#[cfg(test)]
mod tests {
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
    fn measures_saved_before_the_static_columns_still_load() {
        let old = Json::parse(r#"{"status": "ok", "insns": 42, "static_insns": 7}"#).unwrap();
        let m = Measure::from_json(&old);
        assert_eq!(
            (m.insns, m.static_insns, m.spill_loads, m.frame_bytes),
            (Some(42), Some(7), None, None)
        );
        let new = Measure {
            spill_loads: Some(3),
            spill_stores: Some(2),
            moves: Some(5),
            frame_bytes: Some(64),
            ..m
        };
        let back = Measure::from_json(&Json::parse(&new.to_json().pretty()).unwrap());
        assert_eq!(
            (
                back.spill_loads,
                back.spill_stores,
                back.moves,
                back.frame_bytes
            ),
            (Some(3), Some(2), Some(5), Some(64))
        );
    }

    #[test]
    fn asm_counts_only_instructions() {
        let s =
            "\t.text\n\t.globl main\nmain:\n\taddi sp, sp, -16 # frame\n.Lbb1: li a0, 0\n\n\tret\n";
        assert_eq!(count_asm_insns(s), 3);
    }

    #[test]
    fn html_report_has_a_bar_per_ratio_and_the_geomean() {
        let m = |insns| Measure {
            status: "ok".into(),
            insns: Some(insns),
            ..Measure::default()
        };
        let rows: Vec<BenchRow> = [(120, 100), (80, 100), (300, 100)]
            .iter()
            .enumerate()
            .map(|(i, &(a, b))| BenchRow {
                name: format!("perf/case<{i}>"),
                fingerprint: Some(format!("{i:016x}")),
                sysyc: m(a),
                reference: Some(m(b)),
            })
            .collect();
        let args = BenchArgs {
            dirs: vec![],
            runs: 1,
            save: None,
            baseline: None,
            reference: Some("gcc".into()),
            threshold: 2.0,
            html: None,
            opt_level: 2,
            jobs: 1,
            filter: None,
            timeout: 1.0,
            regalloc: Allocator::LinearScan,
            reference_from: None,
        };
        let geo = geomean(rows.iter().filter_map(BenchRow::ratio));
        assert!((geo.unwrap() - (1.2f64 * 0.8 * 3.0).powf(1.0 / 3.0)).abs() < 1e-9);
        let page = html(&rows, geo, &[], &args);
        assert_eq!(page.matches("<rect").count(), 3);
        assert!(
            page.contains("geomean 1.423") && page.contains("perf/case&lt;0&gt;"),
            "{page}"
        );
        if let Some(p) = std::env::var_os("SYSY_BENCH_HTML_SAMPLE") {
            std::fs::write(p, &page).unwrap();
        }
        // A baseline comparison flags the case that got more than 2% worse.
        let base = to_json(&rows, &args, geo);
        let mut now = rows.clone();
        now[1].sysyc.insns = Some(90);
        let cmp = compare_baseline(&now, &base, 2.0);
        assert_eq!(cmp.regressions, 1, "{}", cmp.text);
        // Saved reference rows come back by name and fingerprint.
        let saved = saved_references(&Json::parse(&base.pretty()).unwrap());
        assert_eq!(saved.len(), 3);
        assert_eq!(
            (saved[2].0.as_str(), saved[2].1.as_str(), saved[2].2.insns),
            ("perf/case<2>", "0000000000000002", Some(100))
        );
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
