//! Differential testing with generated programs (`sysyc::fuzzgen`): each program's output through
//! sysyc -O0 and -O2 on RISC-V (qemu) and -O2 LLVM IR + clang must equal the host C compiler's
//! (gcc -O1, cross-checked with clang -O1; a program the two disagree on is skipped, not failed).
//!
//! - `generated_programs_pass_the_frontend`: generated programs are valid SysY (fast, no tools).
//! - `differential_fixed_seeds`: seeds 0, 1, 2, ... checked in parallel until a time budget
//!   (`SYSYC_DIFF_BUDGET` seconds, default 150) or `SYSYC_DIFF_N` seeds (default 400) are used
//!   up; fails naming every failing seed with its program and diff.
//! - `programs_profile_seeds`: a few programs of the `programs` profile (shapes of ordinary
//!   programs, the ones `scripts/bench_generated.sh` measures) in every mode.
//! - `differential_many` (ignored; `scripts/difftest.sh N`): seeds `SYSYC_DIFF_START..+SYSYC_DIFF_N`
//!   without a time budget; failing programs are written to `target/difftest/seedN.sy` with
//!   their input in `seedN.in` and the failure in `seedN.txt`.
//! - `print_program` (ignored): writes the program of `SYSYC_GEN_SEED` to `SYSYC_GEN_OUT`
//!   (default stdout).
//! - `regress_fixtures`: every `fixtures/regress/*.sy` in every mode against its `.out`; those
//!   named in `fixtures/regress/KNOWN` (open bugs) are reported without failing.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use sysyc::fuzzgen::{self, diff};
use sysyc::suite::{self, runner, Compiler, RunConfig};

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

fn jobs() -> usize {
    let n = std::thread::available_parallelism().map_or(2, |n| n.get());
    env_u64("SYSYC_DIFF_JOBS", n as u64).max(1) as usize
}

/// Skips (loudly) when the cross tools or clang are missing, as the suite tests do.
fn tools_or_skip(modes: &[Compiler]) -> bool {
    match diff::require_tools(modes) {
        Ok(()) => true,
        Err(e) => {
            eprintln!("\n!!! SKIPPED differential testing: {e}\n");
            false
        }
    }
}

struct Report {
    ran: AtomicUsize,
    failures: Mutex<Vec<(u64, String, diff::Failure)>>,
    /// Seeds whose program the two C compilers disagree on: skipped.
    ambiguous: Mutex<Vec<u64>>,
}

/// Checks `seeds` on `jobs()` threads, stopping early (between seeds) at `deadline`.
fn run_seeds(
    seeds: std::ops::Range<u64>,
    deadline: Option<Instant>,
    save_dir: Option<&std::path::Path>,
) -> Report {
    let modes = diff::default_modes();
    let report = Report {
        ran: AtomicUsize::new(0),
        failures: Mutex::new(Vec::new()),
        ambiguous: Mutex::new(Vec::new()),
    };
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let seeds: Vec<u64> = seeds.collect();
    std::thread::scope(|s| {
        for _ in 0..jobs() {
            s.spawn(|| loop {
                if stop.load(Ordering::Relaxed) || deadline.is_some_and(|d| Instant::now() >= d) {
                    stop.store(true, Ordering::Relaxed);
                    return;
                }
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(&seed) = seeds.get(i) else { return };
                let result = diff::check_seed(seed, &modes);
                let ran = report.ran.fetch_add(1, Ordering::Relaxed) + 1;
                if ran.is_multiple_of(50) {
                    let failing = report.failures.lock().unwrap().len();
                    eprintln!(
                        "differential: {ran} of {} seeds checked, {failing} failing",
                        seeds.len()
                    );
                }
                if let Err((_, f)) = &result {
                    if f.kind == diff::DISAGREEMENT {
                        eprintln!(
                            "seed {seed}: skipped, the C compilers disagree:\n{}",
                            f.detail
                        );
                        report.ambiguous.lock().unwrap().push(seed);
                        continue;
                    }
                }
                if let Err((program, f)) = result {
                    eprintln!("seed {seed}: FAIL {}: {}", f.mode, f.kind);
                    if let Some(dir) = save_dir {
                        let _ = std::fs::create_dir_all(dir);
                        let _ = std::fs::write(dir.join(format!("seed{seed}.sy")), &program);
                        let _ = std::fs::write(
                            dir.join(format!("seed{seed}.in")),
                            fuzzgen::input(seed),
                        );
                        let _ = std::fs::write(dir.join(format!("seed{seed}.txt")), f.to_string());
                    }
                    report.failures.lock().unwrap().push((seed, program, f));
                }
            });
        }
    });
    report
}

fn render(failures: &mut [(u64, String, diff::Failure)]) -> String {
    failures.sort_by_key(|f| f.0);
    let mut s = String::new();
    for (seed, program, f) in failures.iter() {
        s.push_str(&format!(
            "==== seed {seed}: {}: {} ====\n{}\n",
            f.mode,
            f.kind,
            f.detail.trim_end()
        ));
        s.push_str(&format!("---- program of seed {seed} ----\n{program}\n"));
    }
    let seeds: Vec<String> = failures.iter().map(|f| f.0.to_string()).collect();
    s.push_str(&format!("failing seeds: {}\n", seeds.join(" ")));
    s
}

#[test]
fn generated_programs_pass_the_frontend() {
    for seed in 0..300 {
        let p = fuzzgen::generate(seed);
        let q = p.clone();
        let r = sysyc::frontend::with_big_stack(move || {
            sysyc::frontend::check(q.as_bytes(), "gen.sy").map(|_| ())
        });
        if let Err(e) = r {
            panic!("seed {seed}: the generated program is rejected:\n{e}\n{p}");
        }
    }
}

#[test]
fn differential_fixed_seeds() {
    let modes = diff::default_modes();
    if !tools_or_skip(&modes) {
        return;
    }
    let budget = Duration::from_secs(env_u64("SYSYC_DIFF_BUDGET", 150));
    let n = env_u64("SYSYC_DIFF_N", 400);
    let start = Instant::now();
    let report = run_seeds(0..n, Some(start + budget), None);
    let ran = report.ran.load(Ordering::Relaxed);
    let ambiguous = report.ambiguous.into_inner().unwrap().len();
    let mut failures = report.failures.into_inner().unwrap();
    eprintln!(
        "differential: {ran} of {n} seeds checked in {:.0?} ({} failing, {ambiguous} skipped as ambiguous)",
        start.elapsed(),
        failures.len()
    );
    assert!(ran > 0, "no seed was checked");
    if !failures.is_empty() {
        panic!("{}", render(&mut failures));
    }
}

/// Programs of the `programs` profile (the generated benchmark's shapes), seeds 1..=N
/// (`SYSYC_DIFF_PROGRAMS`, default 6), in every mode against the oracle.
#[test]
fn programs_profile_seeds() {
    let modes = diff::default_modes();
    if !tools_or_skip(&modes) {
        return;
    }
    let n = env_u64("SYSYC_DIFF_PROGRAMS", 6);
    let mut failures = Vec::new();
    for seed in 1..=n {
        let (program, input) = fuzzgen::generate_profile(fuzzgen::Profile::Programs, seed);
        match diff::check_program(&format!("programs{seed}"), &program, &input, &modes) {
            Err(f) if f.kind != diff::DISAGREEMENT => failures.push((seed, program, f)),
            _ => {}
        }
    }
    if !failures.is_empty() {
        panic!("{}", render(&mut failures));
    }
}

#[test]
#[ignore]
fn differential_many() {
    let modes = diff::default_modes();
    if !tools_or_skip(&modes) {
        return;
    }
    let from = env_u64("SYSYC_DIFF_START", 0);
    let n = env_u64("SYSYC_DIFF_N", 2000);
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/difftest");
    let start = Instant::now();
    let report = run_seeds(from..from + n, None, Some(&dir));
    let ran = report.ran.load(Ordering::Relaxed);
    let ambiguous = report.ambiguous.into_inner().unwrap().len();
    let mut failures = report.failures.into_inner().unwrap();
    eprintln!(
        "differential: seeds {from}..{}: {ran} checked in {:.0?}, {} failing, {ambiguous} skipped as ambiguous (programs in {})",
        from + n,
        start.elapsed(),
        failures.len(),
        dir.display()
    );
    if !failures.is_empty() {
        let seeds: Vec<String> = failures.iter().map(|f| f.0.to_string()).collect();
        failures.sort_by_key(|f| f.0);
        for (seed, _, f) in &failures {
            eprintln!("seed {seed}: {}: {}", f.mode, f.kind);
        }
        panic!("failing seeds: {}", seeds.join(" "));
    }
}

#[test]
#[ignore]
fn print_program() {
    let seed = env_u64("SYSYC_GEN_SEED", 0);
    match std::env::var_os("SYSYC_GEN_OUT") {
        Some(path) => std::fs::write(path, fuzzgen::generate(seed)).expect("writing SYSYC_GEN_OUT"),
        None => print!("{}", fuzzgen::generate(seed)),
    }
}

#[test]
fn regress_fixtures() {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/regress");
    let modes = diff::default_modes();
    if !tools_or_skip(&modes) {
        return;
    }
    // Reproducers of bugs not fixed yet: reported, not failed. Remove a name once it passes.
    let known: Vec<String> = std::fs::read_to_string(dir.join("KNOWN"))
        .unwrap_or_default()
        .lines()
        .map(|l| l.split('#').next().unwrap_or("").trim().to_string())
        .filter(|l| !l.is_empty())
        .collect();
    let cases = suite::discover(&[dir], std::env::var("SYSY_FILTER").ok().as_deref())
        .expect("listing cases");
    let mut report = String::new();
    let mut unexpected = Vec::new();
    for m in modes {
        let cfg = RunConfig::new(m);
        let results = suite::run_cases(&cases, &cfg, jobs(), &|_| {});
        for r in &results {
            let base = r.name.rsplit('/').next().unwrap_or(&r.name).to_string();
            let is_known = known.contains(&base);
            if !r.outcome.is_pass() {
                let line = format!(
                    "{} with {}: {}",
                    r.name,
                    cfg.compiler.label(),
                    r.outcome.kind()
                );
                if is_known {
                    eprintln!("known bug: {line}");
                } else {
                    unexpected.push(line);
                }
            }
        }
        let failing: Vec<_> = results
            .iter()
            .filter(|r| {
                !r.outcome.is_pass()
                    && !known.contains(&r.name.rsplit('/').next().unwrap_or(&r.name).to_string())
            })
            .cloned()
            .collect();
        report.push_str(&runner::failure_report(&failing));
    }
    if !unexpected.is_empty() {
        panic!("{report}\n{}", unexpected.join("\n"));
    }
}
