//! Pipelines and the pass runner.
//!
//! A pipeline is a list of steps: function passes (`pass!`, `loop_pass!` for those that need
//! loop-simplified form), module passes (`module_pass!`) and named groups (`CLEANUP`, used
//! wherever its passes are needed, never pasted; a group may repeat until nothing changes).
//! Consecutive per-function steps form a segment; each function runs the whole segment on one
//! rayon worker (functions in parallel, module context read-only), so the result does not depend on the
//! thread count. Module passes run alone between groups. A function's analyses (`FuncAnalyses`)
//! live while its group runs: each pass returns what it preserved and the runner invalidates the
//! rest. After every pass the verifier runs when `verify_each` is set, and so does a comparison of
//! the analyses still cached with fresh ones; a broken function or a wrong claim panics naming
//! the pass and the function.
//! `opt_bisect = N` allows only the first N pass applications, counted per function in
//! pipeline order (the run is sequential then, so the count is deterministic).

use super::{Group, Pass, Step};
use crate::analysis::FuncAnalyses;
use crate::ir::{verify, Function, Module, ModuleCx};
use crate::timing::Timings;
use crate::{loop_pass, module_pass, pass};
use rayon::prelude::*;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Instant;

/// After a pass that leaves redundant or dead arithmetic behind: fold, deduplicate, delete.
const CLEANUP: Step = Step::Group(&Group {
    name: "cleanup",
    steps: &[pass!(instcombine), pass!(gvn), pass!(dce)],
    until_unchanged: false,
});

/// After a pass that decides branches or empties blocks: fold and merge them, then delete the
/// compares and values nothing uses any more.
const CFG_CLEANUP: Step = Step::Group(&Group {
    name: "cfg_cleanup",
    steps: &[pass!(simplify_cfg), pass!(dce)],
    until_unchanged: false,
});

/// `CFG_CLEANUP` until nothing changes: a chain of branches whose arms only compute the next
/// link's inputs (the trips of a completely peeled loop whose result is dead) loses one link
/// per round, as dce empties the last arms and simplify_cfg folds their branch.
const CFG_CLEANUP_ALL: Step = Step::Group(&Group {
    name: "cfg_cleanup_all",
    steps: &[pass!(simplify_cfg), pass!(dce)],
    until_unchanged: true,
});

/// `-Og` (light): cheap scalar cleanups.
pub const O1: &[Step] = &[
    module_pass!(effects), // summaries first: dce and gvn consult callee purity
    pass!(simplify_cfg),
    pass!(sccp),
    pass!(instcombine),
    pass!(dce),
    pass!(simplify_cfg),
];

/// `-O2`: the full pipeline.
pub const O2: &[Step] = &[
    module_pass!(effects), // summaries first: dce, gvn and licm consult callee purity
    pass!(simplify_cfg),
    pass!(sccp),
    CLEANUP,                  // callees shrink before inlining judges their size
    module_pass!(specialize), // self-recursive callees get folded copies for constant arguments
    module_pass!(retconst),   // callers read the constant a callee always returns
    module_pass!(effects),    // callees that cleanup left without memory access are pure
    module_pass!(calleval),   // pure calls on constants: their results, run now
    pass!(tailrec),           // self tail calls become loops (which inlining may then copy)
    module_pass!(inline),     // callees first (post-order), small or single-site ones
    module_pass!(deadret),    // results no caller reads (after inlining removed the readers)
    pass!(simplify_cfg),      // merge inlined bodies: pointer arguments stop flowing through params
    module_pass!(globalopt),  // after inlining: more globals are used by main alone
    module_pass!(effects),    // inlining and localized globals change what functions do
    pass!(mem2reg),           // globals moved into main become SSA values
    pass!(simplify_cfg),
    pass!(sccp),        // before gvn: folded constants make more expressions equal
    pass!(instcombine), // canonical operand order and constants on the right feed gvn
    pass!(reassociate), // inlined helpers' sums collapse before gvn numbers them
    pass!(instcombine), // the rebuilt sums' multiplications by powers of two become shifts
    pass!(gvn),
    pass!(jump_thread), // constant arguments into condition-only merges decide their branch
    pass!(simplify_cfg), // merges left with one predecessor join it
    pass!(condprop),    // after gvn: one value per repeated condition (inlined bounds checks)
    pass!(simplify_cfg), // fold the branches condprop decided
    loop_pass!(rotate), // exit tests at the top of a loop move to its latch (the shape below)
    loop_pass!(peel),   // after the guards are canonical: inner loops only the first trip runs
    loop_pass!(loop_eval), // loops on constant inputs run now; their results are constants
    loop_pass!(complete_peel), // loops whose control alone is constant: a copy per trip
    pass!(sccp),        // the peeled trips' constants; the remaining loops' false guards and tests
    module_pass!(calleval), // pure calls on the peeled trips' constants
    pass!(simplify_cfg), // drop the inner loop the false guard left unreachable
    pass!(memopt),      // after gvn: equal addresses are one value
    pass!(dce),
    module_pass!(retrange), // bounds of what callees return, for the ranges below
    pass!(zeroload),        // loads of cleared local arrays outside every store's reach
    loop_pass!(ivrange),    // inlined bounds checks of loop counters
    pass!(rangefold),       // compares decided by intervals; divisions of non-negative values
    pass!(simplify_cfg),    // fold the branches ivrange and rangefold decided
    loop_pass!(early_exit), // counted loops whose remaining iterations would do nothing
    loop_pass!(licm),       // after gvn, so hoisted code is already deduplicated
    loop_pass!(unswitch),   // after licm moved the conditions out; before the loops are reshaped
    CFG_CLEANUP,            // the unswitched branches on constants
    loop_pass!(promote),    // after licm hoisted the invariant addresses it needs
    loop_pass!(indvars),    // after licm: step values and bounds must be defined outside the loop
    CLEANUP,
    loop_pass!(sink), // after dce dropped unread carried values: last-trip values leave loops
    module_pass!(loop_idiom), // after indvars took the counters' exit values; before lsr
    pass!(zeroload),  // loads from globals the new clearing calls zeroed
    loop_pass!(modrec), // after indvars gave inner loops closed forms; before unroll copies steps
    loop_pass!(lsr),  // late: addresses are final, invariant bases already hoisted
    CLEANUP,          // the new constant-index geps and offset chains; dead index arithmetic
    loop_pass!(postinc), // after cleanup merged each pointer step with the accesses it feeds
    pass!(ivmul),     // after lsr: the multiplications left are not addresses
    pass!(ifconv),    // late: the loop passes above have read the branches they match
    loop_pass!(unroll), // after lsr (copies share one pointer), ifconv (one-block bodies)
    pass!(instcombine), // the copies' offset chains and counters; selects with 0/1 arms
    pass!(gvn),
    pass!(memopt),            // copies re-load words the previous copy loaded or stored
    pass!(instcombine),       // fold what forwarding made constant (fully unrolled recurrences)
    pass!(dce),               // dead users would keep the nodes boolmin replaces alive
    pass!(boolmin), // after instcombine turned 0/1 selects into logic, gvn merged compares
    pass!(instcombine), // negations boolmin left in bit fields gather into one flip
    CFG_CLEANUP,    // drop loops that full unrolling left unreachable; empty preheaders
    module_pass!(constlocal), // local tables now filled with constants become globals
    module_pass!(memo), // last: callers have used the purity its cache must not disturb
    CFG_CLEANUP_ALL, // dead chains of branches (peeled trips): their arrays' reads go
    loop_pass!(lftr), // after unroll, which reads counters, and after the cleanup left some
    // counters read by their exit test alone; the cleanup after jump_thread drops them
    loop_pass!(indvars), // counters whose last values sink moved out of emptied loops
    loop_pass!(dead_loop), // loops whose results inlining left unused (dce emptied them)
    // Late: the loops are final (unrolled, exit tests rewritten); no gvn merges the offsets.
    Step::Func(Pass {
        name: "postinc_late",
        run: super::postinc::run_late,
        needs_loop_simplified: true,
    }),
    pass!(jump_thread), // loop exits that re-test a condition their own branch decided
    CFG_CLEANUP,
    // Loops read only by branches whose arms the cleanup merged; functions without a dead
    // loop are left as they are.
    Step::Func(Pass {
        name: "dead_loop",
        run: super::dead_loop::run_if_any,
        needs_loop_simplified: false,
    }),
    pass!(divconst),  // late: loop passes and constant folding see plain divisions
    pass!(gvn),       // a quotient and remainder of the same operands share the quotient
    pass!(addchain),  // last: sums are final (unrolled copies joined, divisions lowered)
    loop_pass!(licm), // sums of invariants addchain grouped; divisions' invariant factors
    pass!(dce),       // the replaced divisions
    pass!(callhoist), // last: the code between calls is final
];

/// Pass-manager switches.
#[derive(Clone, Debug, Default)]
pub struct PassOptions {
    pub opt_level: u8,
    /// Verify the IR after every pass.
    pub verify_each: bool,
    /// Print the IR (to stderr) after each pass with one of these names.
    pub print_after: Vec<String>,
    /// Run only the first N pass applications.
    pub opt_bisect: Option<u64>,
}

/// The steps of `opt_level`.
pub fn steps(opt_level: u8) -> &'static [Step] {
    match opt_level {
        0 => &[],
        1 => O1,
        _ => O2,
    }
}

/// Runs the pipeline for `opts.opt_level` on `m`.
pub fn optimize(m: &mut Module, opts: &PassOptions) {
    optimize_timed(m, opts, &Timings::off());
}

/// Runs the pipeline for `opts.opt_level` on `m`, timing each pass into `t`.
pub fn optimize_timed(m: &mut Module, opts: &PassOptions, t: &Timings) {
    run_steps_timed(m, steps(opts.opt_level), opts, t);
}

/// The per-function steps that end a pipeline (after its last module pass), not yet run: the
/// backend runs them on each function just before compiling it (`run`), so what they expand
/// (divisions by constants become multiplication sequences) lives for one round of the backend
/// instead of for the whole module. Running them on every function (`run_module`) gives the
/// module `optimize` gives.
pub struct Deferred<'a> {
    runner: Runner<'a>,
    steps: &'static [Step],
}

impl Deferred<'_> {
    /// Runs the deferred steps on `f` (a function of the module given to `optimize_deferring`).
    pub fn run(&self, f: &mut Function, cx: &ModuleCx) {
        if !self.steps.is_empty() {
            self.runner
                .run_func(f, cx, &mut self.runner.analyses(), self.steps);
        }
    }

    /// Runs the deferred steps on every defined function of `m`.
    pub fn run_module(&self, m: &mut Module) {
        if !self.steps.is_empty() {
            self.runner.run(m, self.steps);
        }
    }
}

/// Runs the pipeline for `opts.opt_level` on `m` up to its trailing per-function steps, and
/// returns those. With `opt_bisect` or `print_after` nothing is deferred (they count and print
/// in pipeline order, function by function).
pub fn optimize_deferring<'a>(
    m: &mut Module,
    opts: &'a PassOptions,
    t: &'a Timings,
) -> Deferred<'a> {
    let steps = steps(opts.opt_level);
    let split = if opts.opt_bisect.is_some() || !opts.print_after.is_empty() {
        steps.len()
    } else {
        steps
            .iter()
            .rposition(|s| !s.is_per_function())
            .map_or(0, |k| k + 1)
    };
    let runner = Runner {
        opts,
        timings: t,
        budget: AtomicI64::new(opts.opt_bisect.map_or(i64::MAX, |n| n as i64)),
    };
    runner.run(m, &steps[..split]);
    Deferred {
        runner,
        steps: &steps[split..],
    }
}

/// Runs `steps` on `m`.
pub fn run_steps(m: &mut Module, steps: &[Step], opts: &PassOptions) {
    run_steps_timed(m, steps, opts, &Timings::off());
}

/// Runs `steps` on `m`, timing each pass into `t`.
pub fn run_steps_timed(m: &mut Module, steps: &[Step], opts: &PassOptions, t: &Timings) {
    let runner = Runner {
        opts,
        timings: t,
        budget: AtomicI64::new(opts.opt_bisect.map_or(i64::MAX, |n| n as i64)),
    };
    runner.run(m, steps);
}

struct Runner<'a> {
    opts: &'a PassOptions,
    timings: &'a Timings,
    /// Pass applications left (`--opt-bisect`).
    budget: AtomicI64,
}

impl Runner<'_> {
    /// A fresh analysis cache for one function, checking every request under `verify_each`.
    fn analyses(&self) -> FuncAnalyses {
        FuncAnalyses::checking(self.opts.verify_each)
    }

    /// Whether one more pass may run.
    fn take_budget(&self) -> bool {
        self.budget.fetch_sub(1, Ordering::SeqCst) > 0
    }

    /// Runs `steps` on the module: a run of per-function steps on every function (in parallel),
    /// module passes alone. Returns false once the bisect budget is spent.
    fn run(&self, m: &mut Module, steps: &[Step]) -> bool {
        let mut k = 0;
        while k < steps.len() {
            if !steps[k].is_per_function() {
                match steps[k] {
                    Step::Module(p) => {
                        if !self.take_budget() {
                            return false;
                        }
                        let t = Instant::now();
                        (p.run)(m);
                        let dt = t.elapsed();
                        if self.timings.is_on() {
                            let size: usize = m
                                .defined_funcs()
                                .iter()
                                .map(|&id| m.funcs[id].inst_count())
                                .sum();
                            self.timings.add(p.name, dt, Some(size));
                        }
                        after_pass(m, p.name, self.opts);
                    }
                    Step::Group(g) => {
                        if !self.run(m, g.steps) {
                            return false;
                        }
                    }
                    Step::Func(_) => unreachable!("a function pass is per function"),
                }
                k += 1;
                continue;
            }
            let mut end = k;
            while end < steps.len() && steps[end].is_per_function() {
                end += 1;
            }
            let segment = &steps[k..end];
            let run_one = |f: &mut Function, cx: &ModuleCx| {
                // The analyses of `f` live while the segment runs on it: module passes
                // between segments may change any function.
                let mut am = self.analyses();
                self.run_func(f, cx, &mut am, segment);
                // The function waits for the other functions and the next module pass: without
                // the rows its passes removed, and with its tables no larger than their contents.
                f.compact();
                f.shrink_to_fit();
            };
            let Module { cx, funcs } = m;
            let cx = &*cx;
            if self.opts.opt_bisect.is_some() || !self.opts.print_after.is_empty() {
                // Sequential, in FuncId order: deterministic counting and printing.
                for (id, f) in funcs.iter_mut() {
                    if cx.decls[id].defined {
                        run_one(f, cx);
                    }
                }
            } else {
                funcs
                    .par_iter_mut()
                    .filter(|(id, _)| cx.decls[*id].defined)
                    .for_each(|(_, f)| run_one(f, cx));
            }
            k = end;
        }
        self.budget.load(Ordering::SeqCst) > 0 || self.opts.opt_bisect.is_none()
    }

    /// Runs per-function `steps` on `f`; `Some(changed)`, or `None` once the bisect budget is
    /// spent.
    fn run_func(
        &self,
        f: &mut Function,
        cx: &ModuleCx,
        am: &mut FuncAnalyses,
        steps: &[Step],
    ) -> Option<bool> {
        let mut changed = false;
        for step in steps {
            match step {
                Step::Func(p) => changed |= self.run_pass(f, cx, am, p)?,
                Step::Group(g) if g.until_unchanged => {
                    for _ in 0..Group::MAX_ROUNDS {
                        if !self.run_func(f, cx, am, g.steps)? {
                            break;
                        }
                        changed = true;
                    }
                }
                Step::Group(g) => changed |= self.run_func(f, cx, am, g.steps)?,
                Step::Module(_) => unreachable!("a module pass is not per function"),
            }
        }
        Some(changed)
    }

    /// Runs one pass on `f`, invalidates what it did not preserve, verifies and prints as asked.
    fn run_pass(
        &self,
        f: &mut Function,
        cx: &ModuleCx,
        am: &mut FuncAnalyses,
        p: &Pass,
    ) -> Option<bool> {
        if !self.take_budget() {
            return None;
        }
        let t = Instant::now();
        let kept = p.apply(f, cx, am);
        am.invalidate(kept);
        let dt = t.elapsed();
        if self.timings.is_on() {
            self.timings.add(p.name, dt, Some(f.inst_count()));
        }
        if self.opts.verify_each {
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
                    "pass `{}` claims to preserve an analysis it changed, in function @{}: {e}",
                    p.name, f.name
                );
            }
        }
        if self
            .opts
            .print_after
            .iter()
            .any(|n| n == p.name || n == "all")
        {
            eprintln!(
                "; IR after {} on @{}\n{}",
                p.name,
                f.name,
                crate::ir::print::function(f, cx)
            );
        }
        Some(!kept.is_unchanged())
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A fixed-point group repeats until a round changes nothing: one more application of any
    /// of its passes then changes nothing either.
    #[test]
    fn fixed_point_group_stops_when_nothing_changes() {
        const FOLD: Step = Step::Group(&Group {
            name: "fold",
            steps: &[
                pass!(sccp),
                pass!(instcombine),
                pass!(simplify_cfg),
                pass!(dce),
            ],
            until_unchanged: true,
        });
        let text = "func @f() -> i32 {
bb0:
    v0 = iconst.i32 1
    v1 = iconst.i32 2
    v2 = icmp.lt v0, v1
    brif v2, bb1, bb2
bb1:
    v3 = add.i32 v0, v1
    v4 = icmp.lt v3, v1
    brif v4, bb2, bb3
bb2:
    ret v0
bb3:
    ret v3
}
";
        let mut m = crate::ir::parse::module(text).unwrap();
        let opts = PassOptions {
            opt_level: 2,
            verify_each: true,
            ..Default::default()
        };
        run_steps(&mut m, &[FOLD], &opts);
        let mut passes = Vec::new();
        FOLD.func_passes(&mut passes);
        let Module { cx, funcs } = &mut m;
        for (_, f) in funcs.iter_mut() {
            for p in &passes {
                assert!(!p.apply_alone(f, cx), "`{}` still changes", p.name);
            }
            let printed = crate::ir::print::function(f, cx);
            assert!(!printed.contains("brif"), "{printed}");
        }
    }
}
