//! End-to-end tests: every case of the shared suites and of `fixtures/sysy/` compiled by sysyc,
//! linked with our runtime and run, at -O0 and -O2 on RISC-V under qemu and through
//! `--emit-llvm` + clang natively; plus a determinism test (1 vs 8 threads) and a check of
//! the harness itself with gcc as the compiler.
//!
//! The suites live in `$SYSY_SUITES` (default `<repo>/../shared/suites`). Missing suites or
//! tools (qemu, the cross gcc, clang) fail the test in CI (`SYSY_REQUIRE_SUITES=1`, which
//! `.ci/run` sets, or `CI=true`) and skip with a loud notice elsewhere (`suite::require`). One
//! test per (suite, mode) runs all its cases in parallel and fails listing every failing case
//! with its diff. `SYSY_KEEP=1` keeps failing work dirs.

use std::path::PathBuf;
use sysyc::driver::{CompileOptions, Emit};
use sysyc::suite::{self, require, runner, toolchain, Compiler, RunConfig};

fn suites_root() -> PathBuf {
    match std::env::var_os("SYSY_SUITES") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/suites"),
    }
}

/// A missing suite directory: fails in CI, skips loudly elsewhere.
fn missing_suite(what: &str, dir: &std::path::Path) {
    require::missing(
        &format!("the test suites for {what}: {} not found", dir.display()),
        "Put the shared suites there or set SYSY_SUITES to the suites folder (default ../shared/suites).",
    );
}

/// `true` if the tools `compiler` needs are installed; otherwise fails in CI or skips loudly.
fn have_tools(compiler: &Compiler) -> bool {
    match toolchain::require_tools(&compiler.tools()) {
        Ok(()) => true,
        Err(e) => {
            require::missing(&format!("tools for {}", compiler.label()), &e);
            false
        }
    }
}

fn sysyc(opt_level: u8, emit: Emit) -> Compiler {
    Compiler::Sysyc(CompileOptions {
        opt_level,
        emit,
        verify_each: true,
        ..CompileOptions::default()
    })
}

/// Runs every case under `dir` with `compiler`; panics listing all failures.
fn check_dir(dir: PathBuf, compiler: Compiler) {
    if !dir.is_dir() {
        return missing_suite(&compiler.label(), &dir);
    }
    check_dirs(&[dir], compiler)
}

/// One suite at a time: each run is already parallel across cases, and several at once on a
/// small machine only make every program slower (and time-outs flaky).
static ONE_SUITE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Runs every case under the existing ones of `dirs` together; panics listing all failures.
/// `SYSY_FILTER=pat1,pat2` narrows the cases while debugging.
fn check_dirs(dirs: &[PathBuf], compiler: Compiler) {
    let _turn = ONE_SUITE_AT_A_TIME
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let dirs: Vec<PathBuf> = dirs.iter().filter(|d| d.is_dir()).cloned().collect();
    let cases = suite::discover(&dirs, std::env::var("SYSY_FILTER").ok().as_deref())
        .expect("listing cases");
    let shown: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
    let dir = shown.join(" + ");
    if cases.is_empty() {
        eprintln!("note: no cases under {dir}");
        return;
    }
    // The tools and runtime must exist before anything runs: fail (or skip) once, clearly.
    if !have_tools(&compiler) {
        return;
    }
    toolchain::runtime(compiler.arch()).unwrap_or_else(|e| panic!("{e}"));
    let mut cfg = RunConfig::new(compiler);
    // Emulated floating point is slow (hidden_functional/38_light2d takes ~25 s under qemu even
    // from gcc -O2, more on a loaded machine, and -O0 code is slower still): be generous; only a
    // hanging program pays the full limit.
    cfg.timeout = std::time::Duration::from_secs(300);
    let results = suite::run_cases(&cases, &cfg, 0, &|_| {});
    let failed: Vec<_> = results.iter().filter(|r| !r.outcome.is_pass()).collect();
    let label = format!("{dir} with {}", cfg.compiler.label());
    if failed.is_empty() {
        eprintln!("{label}: all {} cases passed", results.len());
        return;
    }
    let names: Vec<String> = failed
        .iter()
        .map(|r| format!("  {} ({})", r.name, r.outcome.kind()))
        .collect();
    panic!(
        "{}{}\n{label}: {} of {} cases failed:\n{}\n",
        runner::failure_report(&results),
        suite::cli::summary_table(&results),
        failed.len(),
        results.len(),
        names.join("\n")
    );
}

fn shared(name: &str) -> PathBuf {
    suites_root().join(name)
}

/// Our own end-to-end fixtures: `fixtures/sysy/**` and the bundled example.
fn fixtures() -> Vec<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    vec![root.join("sysy"), root.join("example")]
}

#[test]
fn functional_o0() {
    check_dir(shared("functional"), sysyc(0, Emit::Asm));
}

#[test]
fn functional_o2() {
    check_dir(shared("functional"), sysyc(2, Emit::Asm));
}

/// With Zba and Zbb (`-march=rv64gc_zba_zbb`); the runner gives qemu a CPU that has them.
#[test]
fn functional_o2_zba_zbb() {
    let isa = sysyc::backend::riscv::isa::Isa {
        zba: true,
        zbb: true,
    };
    check_dir(
        shared("functional"),
        Compiler::Sysyc(CompileOptions {
            opt_level: 2,
            verify_each: true,
            isa,
            ..CompileOptions::default()
        }),
    );
}

#[test]
fn functional_llvm() {
    check_dir(shared("functional"), sysyc(2, Emit::Llvm));
}

#[test]
fn hidden_functional_o0() {
    check_dir(shared("hidden_functional"), sysyc(0, Emit::Asm));
}

#[test]
fn hidden_functional_o2() {
    check_dir(shared("hidden_functional"), sysyc(2, Emit::Asm));
}

#[test]
fn hidden_functional_llvm() {
    check_dir(shared("hidden_functional"), sysyc(2, Emit::Llvm));
}

#[test]
fn fixtures_o0() {
    check_dirs(&fixtures(), sysyc(0, Emit::Asm));
}

#[test]
fn fixtures_o2() {
    check_dirs(&fixtures(), sysyc(2, Emit::Asm));
}

#[test]
fn fixtures_llvm() {
    check_dirs(&fixtures(), sysyc(2, Emit::Llvm));
}

/// The harness and runtime themselves: the functional suites compiled as C by gcc must pass.
/// A failure here is a bug in runtime/sylib.c or the runner, not in sysyc.
#[test]
fn harness_with_gcc_reference() {
    check_dir(shared("functional"), Compiler::Gcc);
    check_dir(shared("hidden_functional"), Compiler::Gcc);
    // Only the bundled example of our fixtures: others may rely on SysY-only semantics.
    check_dir(fixtures()[1].clone(), Compiler::Gcc);
}

/// Output must be byte-identical whatever the number of threads.
#[test]
fn deterministic_across_thread_counts() {
    let root = suites_root();
    if !root.is_dir() {
        return missing_suite("the determinism test", &root);
    }
    // A handful of varied programs: many functions, floats, big arrays, long sources.
    let picks = [
        "functional/95_float",
        "functional/86_long_code2",
        "hidden_functional/13_LCA",
        "hidden_functional/39_fp_params",
        "hidden_functional/30_many_dimensions",
        "performance/fft0",
        "performance/dead-code-elimination-1",
    ];
    let mut problems = Vec::new();
    let mut checked = 0;
    for name in picks {
        let path = root.join(format!("{name}.sy"));
        let Ok(source) = std::fs::read(&path) else {
            continue;
        };
        for (opt_level, emit) in [(2, Emit::Asm), (0, Emit::Asm), (2, Emit::Llvm)] {
            let opts = CompileOptions {
                opt_level,
                emit,
                verify_each: false,
                ..CompileOptions::default()
            };
            let file = path.to_string_lossy().into_owned();
            let outputs: Vec<Result<String, String>> = [1, 8]
                .iter()
                .map(|&n| {
                    let pool = rayon::ThreadPoolBuilder::new()
                        .num_threads(n)
                        .build()
                        .unwrap();
                    let run = || sysyc::driver::compile(&source, &file, &opts);
                    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        pool.install(run)
                    }));
                    caught.unwrap_or_else(|p| {
                        let text = p
                            .downcast_ref::<String>()
                            .cloned()
                            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                            .unwrap_or_default();
                        Err(format!("compiler panic: {text}"))
                    })
                })
                .collect();
            checked += 1;
            let what = format!("{name} -O{opt_level} {emit:?}");
            match (&outputs[0], &outputs[1]) {
                (Ok(a), Ok(b)) if a == b => {}
                (Ok(a), Ok(b)) => {
                    let d = suite::compare::diff(a.as_bytes(), b.as_bytes(), 2, 10);
                    problems.push(format!("{what}: 1 vs 8 threads differ:\n{d}"));
                }
                (Err(e), _) | (_, Err(e)) => problems.push(format!(
                    "{what}: does not compile:\n{}",
                    runner::truncate(e, 1000)
                )),
            }
        }
    }
    assert!(
        checked > 0,
        "no determinism inputs found under {}",
        root.display()
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The qemu plugin counts executed instructions: a loop of n iterations costs a fixed amount
/// per iteration, and counting stops at the runtime's exit marker (before the timer report).
#[test]
fn insn_count_plugin_counts_linearly() {
    if !have_tools(&Compiler::Gcc) {
        return;
    }
    let plugin = toolchain::insn_count_plugin().unwrap_or_else(|e| panic!("{e}"));
    let dir = runner::WorkDir::new("plugin-test").unwrap();
    let sy = dir.path.join("loop.sy");
    std::fs::write(
        &sy,
        "int main() { int n = getint(); int s = 0; int i = 0;\n\
         starttime(); while (i < n) { s = s + i * i; i = i + 1; } stoptime();\n\
         putint(s); return 0; }\n",
    )
    .unwrap();
    let count = |n: u32| -> (u64, u64, bool) {
        let input = dir.path.join(format!("{n}.in"));
        std::fs::write(&input, format!("{n}\n")).unwrap();
        let case = suite::Case {
            name: format!("loop{n}"),
            sy: sy.clone(),
            input: Some(input),
            expected: None,
        };
        let cfg = RunConfig::new(Compiler::Gcc);
        let sub = dir.path.join(format!("b{n}"));
        std::fs::create_dir_all(&sub).unwrap();
        let built = runner::build_case(&case, &cfg, &sub).unwrap_or_else(|o| panic!("{o:?}"));
        let out_file = sub.join("insns.txt");
        let arg = format!("{},outfile={}", plugin.display(), out_file.display());
        let out = runner::execute(&built, &case, &cfg, Some(&arg)).unwrap();
        assert_eq!(out.status, suite::exec::Status::Exited(0));
        assert!(String::from_utf8_lossy(&out.stderr).contains("TOTAL:"));
        let text = std::fs::read_to_string(&out_file).unwrap();
        let field = |k: &str| -> u64 {
            text.lines()
                .find_map(|l| l.strip_prefix(k).map(|v| v.trim().parse().unwrap()))
                .unwrap_or_else(|| panic!("no {k} in {text}"))
        };
        (field("insns:"), field("total:"), field("marker:") == 1)
    };
    let (a, a_total, a_marker) = count(10_000);
    let (b, _, _) = count(20_000);
    let (c, _, _) = count(40_000);
    assert!(a_marker, "the runtime's exit marker was not seen");
    assert!(
        a < a_total,
        "the timer report after the marker must not be counted"
    );
    let (d1, d2) = ((b - a) as f64, (c - b) as f64);
    assert!(
        d1 > 10_000.0,
        "too few instructions per iteration: {a} {b} {c}"
    );
    assert!((d2 / d1 - 2.0).abs() < 0.02, "not linear: {a} {b} {c}");
}
