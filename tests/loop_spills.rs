//! The backend's loop criterion: no spill instruction remains inside the innermost
//! loop of any case whose loop needs fewer than 20 simultaneously live values.
//!
//! Compiles `fixtures/sysy/**/*.sy` and the performance suites (`$SYSY_SUITES/performance` and
//! `final_performance`, default `<repo>/../shared/suites`; skipped with a loud notice when
//! absent) at -O2 with the register-allocation checker on, reads the backend's per-loop
//! statistics, and fails listing every innermost loop with fewer than `LIMIT` values live at
//! once (all register classes together) that still has spill loads or stores.
//! `SYSY_LOOPS=1` prints every innermost loop that has spill code, whatever its pressure;
//! `SYSY_LOOPS=moves` every innermost loop with register moves left in it.

use std::path::{Path, PathBuf};
use sysyc::driver::{self, CompileOptions, Emit};

const LIMIT: u32 = 20;

fn suites_root() -> PathBuf {
    match std::env::var_os("SYSY_SUITES") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/suites"),
    }
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "sy") {
            out.push(p);
        }
    }
}

#[test]
fn no_spills_in_innermost_loops_below_the_pressure_limit() {
    let mut files = Vec::new();
    sources(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/sysy"),
        &mut files,
    );
    let root = suites_root();
    for suite in ["performance", "final_performance"] {
        let dir = root.join(suite);
        if dir.is_dir() {
            sources(&dir, &mut files);
        } else {
            eprintln!(
                "\n{bar}\n!!! SKIPPED {suite}: {} not found.\n!!! Set SYSY_SUITES to the suites folder (default ../shared/suites).\n{bar}\n",
                dir.display(),
                bar = "!".repeat(78)
            );
        }
    }
    assert!(!files.is_empty(), "no sources found");
    let opts = CompileOptions {
        opt_level: 2,
        emit: Emit::Asm,
        verify_each: true,
        ..CompileOptions::default()
    };
    let show_all = std::env::var_os("SYSY_LOOPS").is_some();
    let show_moves = std::env::var("SYSY_LOOPS").is_ok_and(|v| v == "moves");
    let pool = rayon::ThreadPoolBuilder::new()
        .stack_size(256 << 20)
        .build()
        .unwrap();
    let reports: Vec<(Vec<String>, usize)> = pool.install(|| {
        use rayon::prelude::*;
        files
            .par_iter()
            .map(|path| {
                let src = std::fs::read(path).unwrap();
                let name = path.to_string_lossy().into_owned();
                let stats = driver::backend_stats(&src, &name, &opts).unwrap_or_else(|e| panic!("{name}: {e}"));
                let (mut bad, mut loops) = (Vec::new(), 0);
                for f in &stats {
                    for l in &f.loops {
                        loops += 1;
                        let shown = if show_moves { l.moves > 0 } else { l.spill_insts > 0 && (l.pressure < LIMIT || show_all) };
                        if shown {
                            bad.push(format!(
                                "{name}: {} loop .L{}_{} ({} blocks{}, {} insns, {} moves): {} spill insns, {} live (int {}, float {})",
                                f.name,
                                f.name,
                                l.header,
                                l.blocks,
                                if l.has_call { ", calls" } else { "" },
                                l.insts,
                                l.moves,
                                l.spill_insts,
                                l.pressure,
                                l.pressure_int,
                                l.pressure_float
                            ));
                        }
                    }
                }
                (bad, loops)
            })
            .collect()
    });
    let loops: usize = reports.iter().map(|r| r.1).sum();
    let bad: Vec<&String> = reports.iter().flat_map(|r| &r.0).collect();
    eprintln!("{} files, {loops} innermost loops", files.len());
    if show_all {
        for b in &bad {
            eprintln!("  {b}");
        }
        return;
    }
    assert!(
        bad.is_empty(),
        "{} innermost loop(s) with fewer than {LIMIT} live values still spill:\n{}",
        bad.len(),
        bad.iter()
            .map(|s| format!("  {s}"))
            .collect::<Vec<_>>()
            .join("\n")
    );
}
