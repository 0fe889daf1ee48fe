//! Pipelines and the pass runner.
//!
//! Consecutive function passes form a group; each function runs the whole group on one rayon
//! worker (functions in parallel, module context read-only), so the result does not depend on the
//! thread count. Module passes run alone between groups. A function's analyses (`FuncAnalyses`)
//! live while its group runs: each pass returns what it preserved and the runner invalidates the
//! rest. After every pass the verifier runs when `verify_each` is set, and so does a comparison of
//! the analyses still cached with fresh ones; a broken function or a wrong claim panics naming
//! the pass and the function.
//! `opt_bisect = N` allows only the first N pass applications, counted per function in
//! pipeline order (the run is sequential then, so the count is deterministic).

use super::{Pass, Run, Step};
use crate::analysis::FuncAnalyses;
use crate::ir::{verify, Function, Module, ModuleCx};
use crate::{legacy_pass, module_pass, pass};
use rayon::prelude::*;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Every function pass, for lookup by name.
pub const ALL_FUNC_PASSES: &[Pass] = &[
    Pass {
        name: "condprop",
        run: Run::Legacy(super::condprop::run),
    },
    Pass {
        name: "dce",
        run: Run::Managed(super::dce::run),
    },
    Pass {
        name: "dead_loop",
        run: Run::Legacy(super::dead_loop::run),
    },
    Pass {
        name: "early_exit",
        run: Run::Legacy(super::early_exit::run),
    },
    Pass {
        name: "gvn",
        run: Run::Legacy(super::gvn::run),
    },
    Pass {
        name: "ifconv",
        run: Run::Managed(super::ifconv::run),
    },
    Pass {
        name: "indvars",
        run: Run::Legacy(super::indvars::run),
    },
    Pass {
        name: "instcombine",
        run: Run::Legacy(super::instcombine::run),
    },
    Pass {
        name: "ivmul",
        run: Run::Managed(super::ivmul::run),
    },
    Pass {
        name: "ivrange",
        run: Run::Legacy(super::ivrange::run),
    },
    Pass {
        name: "jump_thread",
        run: Run::Legacy(super::jump_thread::run),
    },
    Pass {
        name: "lftr",
        run: Run::Legacy(super::lftr::run),
    },
    Pass {
        name: "licm",
        run: Run::Legacy(super::licm::run),
    },
    Pass {
        name: "lsr",
        run: Run::Legacy(super::lsr::run),
    },
    Pass {
        name: "mem2reg",
        run: Run::Legacy(super::mem2reg::run),
    },
    Pass {
        name: "memopt",
        run: Run::Legacy(super::memopt::run),
    },
    Pass {
        name: "peel",
        run: Run::Legacy(super::peel::run),
    },
    Pass {
        name: "promote",
        run: Run::Legacy(super::promote::run),
    },
    Pass {
        name: "rangefold",
        run: Run::Managed(super::rangefold::run),
    },
    Pass {
        name: "reassociate",
        run: Run::Legacy(super::reassociate::run),
    },
    Pass {
        name: "sccp",
        run: Run::Legacy(super::sccp::run),
    },
    Pass {
        name: "simplify_cfg",
        run: Run::Legacy(super::simplify_cfg::run),
    },
    Pass {
        name: "tailrec",
        run: Run::Legacy(super::tailrec::run),
    },
    Pass {
        name: "unroll",
        run: Run::Legacy(super::unroll::run),
    },
];

/// `-O1`: cheap scalar cleanups.
pub const O1: &[Step] = &[
    module_pass!(effects), // summaries first: dce and gvn consult callee purity
    legacy_pass!(simplify_cfg),
    legacy_pass!(sccp),
    legacy_pass!(instcombine),
    pass!(dce),
    legacy_pass!(simplify_cfg),
];

/// `-O2`: the full pipeline.
pub const O2: &[Step] = &[
    module_pass!(effects), // summaries first: dce, gvn and licm consult callee purity
    legacy_pass!(simplify_cfg),
    legacy_pass!(sccp),
    legacy_pass!(instcombine),
    legacy_pass!(gvn),
    pass!(dce),                 // callees shrink before inlining judges their size
    legacy_pass!(tailrec),      // self tail calls become loops (which inlining may then copy)
    module_pass!(inline),       // callees first (post-order), small or single-site ones
    module_pass!(deadret),      // results no caller reads (after inlining removed the readers)
    legacy_pass!(simplify_cfg), // merge inlined bodies: pointer arguments stop flowing through params
    module_pass!(globalopt),    // after inlining: more globals are used by main alone
    module_pass!(effects),      // inlining and localized globals change what functions do
    legacy_pass!(mem2reg),      // globals moved into main become SSA values
    legacy_pass!(simplify_cfg),
    legacy_pass!(sccp), // before gvn: folded constants make more expressions equal
    legacy_pass!(instcombine), // canonical operand order and constants on the right feed gvn
    legacy_pass!(reassociate), // inlined helpers' sums collapse before gvn numbers them
    legacy_pass!(instcombine), // the rebuilt sums' multiplications by powers of two become shifts
    legacy_pass!(gvn),
    legacy_pass!(jump_thread), // constant arguments into condition-only merges decide their branch
    legacy_pass!(simplify_cfg), // merges left with one predecessor join it
    legacy_pass!(condprop), // after gvn: one value per repeated condition (inlined bounds checks)
    legacy_pass!(simplify_cfg), // fold the branches condprop decided
    legacy_pass!(peel),     // after the guards are canonical: inner loops only the first trip runs
    legacy_pass!(sccp),     // the peeled trip's constants; the remaining loop's false guard
    legacy_pass!(simplify_cfg), // drop the inner loop the false guard left unreachable
    legacy_pass!(memopt),   // after gvn: equal addresses are one value
    pass!(dce),
    legacy_pass!(ivrange),      // inlined bounds checks of loop counters
    pass!(rangefold),           // compares decided by intervals; divisions of non-negative values
    legacy_pass!(simplify_cfg), // fold the branches ivrange and rangefold decided
    legacy_pass!(early_exit),   // counted loops whose remaining iterations would do nothing
    legacy_pass!(licm),         // after gvn, so hoisted code is already deduplicated
    legacy_pass!(promote),      // after licm hoisted the invariant addresses it needs
    legacy_pass!(indvars), // after licm: step values and bounds must be defined outside the loop
    legacy_pass!(instcombine),
    legacy_pass!(gvn),
    pass!(dce),
    legacy_pass!(lsr), // late: addresses are final, invariant bases already hoisted
    legacy_pass!(instcombine), // fold the new constant-index geps and offset chains
    legacy_pass!(gvn),
    pass!(dce),                // the index arithmetic lsr made dead
    pass!(ivmul),              // after lsr: the multiplications left are not addresses
    pass!(ifconv),             // late: the loop passes above have read the branches they match
    legacy_pass!(unroll),      // after lsr (copies share one pointer), ifconv (one-block bodies)
    legacy_pass!(instcombine), // the copies' offset chains and counters; selects with 0/1 arms
    legacy_pass!(gvn),
    legacy_pass!(memopt), // copies re-load words the previous copy loaded or stored
    legacy_pass!(instcombine), // fold what forwarding made constant (fully unrolled recurrences)
    legacy_pass!(simplify_cfg), // drop loops that full unrolling left unreachable; empty preheaders
    pass!(dce),
    module_pass!(constlocal), // local tables now filled with constants become globals
    module_pass!(memo),       // last: callers have used the purity its cache must not disturb
    legacy_pass!(lftr),       // after unroll, which reads counters; dce below drops them
    legacy_pass!(dead_loop),  // loops whose results inlining left unused (dce emptied them)
    legacy_pass!(simplify_cfg),
    pass!(dce), // conditions folded by simplify_cfg leave dead compares
];

/// Pass-manager switches.
#[derive(Clone, Debug, Default)]
pub struct PassOptions {
    pub opt_level: u8,
    /// Verify the IR after every pass.
    pub verify_each: bool,
    /// Print the IR (to stderr) after each pass with one of these names.
    pub print_after: Vec<String>,
    /// Report per-pass wall time and IR size on stderr.
    pub time_passes: bool,
    /// Run only the first N pass applications.
    pub opt_bisect: Option<u64>,
}

/// Per-pass timing, summed over functions.
struct Timing {
    rows: Mutex<Vec<(&'static str, Duration, usize)>>,
}

impl Timing {
    fn add(&self, name: &'static str, d: Duration, size: usize) {
        let mut rows = self.rows.lock().unwrap();
        match rows.iter_mut().find(|r| r.0 == name) {
            Some(r) => {
                r.1 += d;
                r.2 += size;
            }
            None => rows.push((name, d, size)),
        }
    }
}

fn live_insts(f: &Function) -> usize {
    f.layout()
        .blocks()
        .map(|b| f.layout().block_insts(b).count())
        .sum()
}

/// Runs the pipeline for `opts.opt_level` on `m`.
pub fn optimize(m: &mut Module, opts: &PassOptions) {
    let steps: &[Step] = match opts.opt_level {
        0 => &[],
        1 => O1,
        _ => O2,
    };
    run_steps(m, steps, opts);
}

/// Runs `steps` on `m`.
pub fn run_steps(m: &mut Module, steps: &[Step], opts: &PassOptions) {
    let timing = Timing {
        rows: Mutex::new(Vec::new()),
    };
    let budget = AtomicI64::new(opts.opt_bisect.map_or(i64::MAX, |n| n as i64));
    let mut k = 0;
    while k < steps.len() {
        match steps[k] {
            Step::Module(p) => {
                if budget.fetch_sub(1, Ordering::SeqCst) <= 0 {
                    return;
                }
                let t = Instant::now();
                (p.run)(m);
                let size: usize = m
                    .defined_funcs()
                    .iter()
                    .map(|&id| live_insts(&m.funcs[id]))
                    .sum();
                timing.add(p.name, t.elapsed(), size);
                after_pass(m, p.name, opts);
                k += 1;
            }
            Step::Func(_) => {
                let mut end = k;
                while end < steps.len() && matches!(steps[end], Step::Func(_)) {
                    end += 1;
                }
                let group: Vec<Pass> = steps[k..end]
                    .iter()
                    .map(|s| match s {
                        Step::Func(p) => *p,
                        Step::Module(_) => unreachable!(),
                    })
                    .collect();
                let run_one = |f: &mut Function, cx: &ModuleCx| {
                    // The analyses of `f` live while the group runs on it: module passes
                    // between groups may change any function.
                    let mut am = FuncAnalyses::new();
                    for p in &group {
                        if budget.fetch_sub(1, Ordering::SeqCst) <= 0 {
                            return;
                        }
                        let t = Instant::now();
                        let kept = p.apply(f, cx, &mut am);
                        am.invalidate(kept);
                        let dt = t.elapsed();
                        if opts.time_passes {
                            timing.add(p.name, dt, live_insts(f));
                        }
                        if opts.verify_each {
                            if let Err(e) = verify::function(f, cx) {
                                panic!(
                                    "IR broken after pass `{}` in function @{}:\n{}",
                                    p.name,
                                    f.name,
                                    e.render(f, cx)
                                );
                            }
                            if let Err(e) = am.check(f) {
                                panic!(
                                    "pass `{}` claims to preserve an analysis it changed, in \
                                     function @{}: {e}",
                                    p.name, f.name
                                );
                            }
                        }
                        if opts.print_after.iter().any(|n| n == p.name || n == "all") {
                            eprintln!(
                                "; IR after {} on @{}\n{}",
                                p.name,
                                f.name,
                                crate::ir::print::function(f, cx)
                            );
                        }
                    }
                };
                if opts.opt_bisect.is_some() || !opts.print_after.is_empty() {
                    // Sequential, in FuncId order: deterministic counting and printing.
                    let Module { cx, funcs } = m;
                    for (id, f) in funcs.iter_mut() {
                        if cx.decls[id].defined {
                            run_one(f, cx);
                        }
                    }
                } else {
                    let Module { cx, funcs } = m;
                    let cx = &*cx;
                    funcs
                        .par_iter_mut()
                        .filter(|(id, _)| cx.decls[*id].defined)
                        .for_each(|(_, f)| run_one(f, cx));
                }
                k = end;
            }
        }
    }
    if opts.time_passes {
        let rows = timing.rows.into_inner().unwrap();
        let total: Duration = rows.iter().map(|r| r.1).sum();
        eprintln!(
            "{:<24} {:>12} {:>8} {:>12}",
            "pass", "time (ms)", "%", "insts after"
        );
        for (name, d, size) in &rows {
            eprintln!(
                "{:<24} {:>12.3} {:>7.1}% {:>12}",
                name,
                d.as_secs_f64() * 1e3,
                100.0 * d.as_secs_f64() / total.as_secs_f64().max(1e-12),
                size
            );
        }
        eprintln!("{:<24} {:>12.3}", "total", total.as_secs_f64() * 1e3);
    }
}

fn after_pass(m: &Module, name: &str, opts: &PassOptions) {
    if opts.verify_each {
        if let Err(e) = verify::module(m) {
            panic!("IR broken after module pass `{name}`:\n{e}");
        }
    }
    if opts.print_after.iter().any(|n| n == name || n == "all") {
        eprintln!("; IR after {name}\n{}", crate::ir::print::module(m));
    }
}
