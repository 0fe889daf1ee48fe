//! Optimization passes and the pass manager.
//!
//! A function pass is `fn(&mut Function, &ModuleCx, &mut FuncAnalyses) -> Preserved`: it touches
//! its own function only, reads the shared context, asks the analysis manager for the CFG,
//! dominator tree and loops it needs, and returns what it kept valid (`Preserved::all()` when it
//! changed nothing). A module pass is `fn(&mut Module) -> bool` and runs between parallel phases
//! (inlining, global DCE, effect summaries). Pipelines are data (`pipeline.rs`).

pub mod addchain;
pub mod boolmin;
pub mod calleval;
pub mod callhoist;
pub mod complete_peel;
pub mod condprop;
pub mod constlocal;
pub mod dce;
pub mod dead_loop;
pub mod deadret;
pub mod divconst;
pub mod early_exit;
pub mod globalopt;
pub mod gvn;
pub mod ifconv;
pub mod indvars;
pub mod inline;
pub mod instcombine;
pub mod ivmul;
pub mod ivrange;
pub mod jump_thread;
pub mod lftr;
pub mod licm;
pub mod loop_eval;
pub mod loop_idiom;
pub mod loop_simplify;
pub mod lsr;
pub mod mem2reg;
pub mod memo;
pub mod memopt;
pub mod modrec;
pub mod peel;
pub mod pipeline;
pub mod postinc;
pub mod promote;
pub mod rangefold;
pub mod reassociate;
pub mod retconst;
pub mod rotate;
pub mod sccp;
pub mod simplify_cfg;
pub mod sink;
pub mod specialize;
pub mod tailrec;
pub mod unroll;
pub mod unswitch;
pub mod zeroload;

/// Effect summaries are an analysis; the pipelines run them as a module pass.
pub use crate::analysis::effects;
/// So are return-value ranges.
pub use crate::analysis::retrange;

use crate::analysis::{FuncAnalyses, Preserved};
use crate::ir::{Function, Module, ModuleCx};

/// The signature of a function pass.
pub type FuncPassFn = fn(&mut Function, &ModuleCx, &mut FuncAnalyses) -> Preserved;

/// A function pass.
#[derive(Clone, Copy)]
pub struct Pass {
    pub name: &'static str,
    pub run: FuncPassFn,
    /// A loop pass: the runner establishes loop-simplified form first (`loop_simplify`) unless
    /// it holds already.
    pub needs_loop_simplified: bool,
}

impl Pass {
    /// Runs the pass on `f` and returns what it kept valid. The caller invalidates the rest
    /// (`am.invalidate`).
    pub fn apply(&self, f: &mut Function, cx: &ModuleCx, am: &mut FuncAnalyses) -> Preserved {
        if self.needs_loop_simplified && !am.is_loop_simplified() {
            let kept = loop_simplify::run(f, cx, am);
            am.invalidate(kept);
        }
        (self.run)(f, cx, am)
    }

    /// Runs the pass on `f` alone with a fresh analysis cache that checks every request
    /// (filetests, tests); returns whether it reported a change.
    pub fn apply_alone(&self, f: &mut Function, cx: &ModuleCx) -> bool {
        !self
            .apply(f, cx, &mut FuncAnalyses::checking(true))
            .is_unchanged()
    }
}

/// A module pass.
#[derive(Clone, Copy)]
pub struct ModulePass {
    pub name: &'static str,
    pub run: fn(&mut Module) -> bool,
}

/// One pipeline step.
#[derive(Clone, Copy)]
pub enum Step {
    Func(Pass),
    Module(ModulePass),
    /// A named sequence of steps, used by name wherever it is needed.
    Group(&'static Group),
}

/// A named sequence of steps.
pub struct Group {
    pub name: &'static str,
    pub steps: &'static [Step],
    /// Repeat the sequence on each function until a whole round changes nothing (at most
    /// `MAX_ROUNDS` rounds, a guard against passes that undo each other). Only function passes.
    pub until_unchanged: bool,
}

impl Group {
    /// Rounds of a fixed-point group at most.
    pub const MAX_ROUNDS: usize = 16;
}

impl Step {
    pub fn name(&self) -> &'static str {
        match self {
            Step::Func(p) => p.name,
            Step::Module(p) => p.name,
            Step::Group(g) => g.name,
        }
    }

    /// Whether the step runs on each function alone (a function pass, or a group of them).
    pub fn is_per_function(&self) -> bool {
        match self {
            Step::Func(_) => true,
            Step::Module(_) => false,
            Step::Group(g) => g.steps.iter().all(Step::is_per_function),
        }
    }

    /// Every function pass of the step, groups expanded.
    pub fn func_passes(&self, out: &mut Vec<Pass>) {
        match self {
            Step::Func(p) => out.push(*p),
            Step::Module(_) => {}
            Step::Group(g) => g.steps.iter().for_each(|s| s.func_passes(out)),
        }
    }
}

/// Declares a function-pass step from a module with
/// `pub fn run(&mut Function, &ModuleCx, &mut FuncAnalyses) -> Preserved`.
#[macro_export]
macro_rules! pass {
    ($m:ident) => {
        $crate::passes::Step::Func($crate::passes::Pass {
            name: stringify!($m),
            run: $crate::passes::$m::run,
            needs_loop_simplified: false,
        })
    };
}

/// Declares a loop-pass step: a function pass that needs loop-simplified form.
#[macro_export]
macro_rules! loop_pass {
    ($m:ident) => {
        $crate::passes::Step::Func($crate::passes::Pass {
            name: stringify!($m),
            run: $crate::passes::$m::run,
            needs_loop_simplified: true,
        })
    };
}

/// Declares a module-pass step from a module with `pub fn run_module(&mut Module) -> bool`.
#[macro_export]
macro_rules! module_pass {
    ($m:ident) => {
        $crate::passes::Step::Module($crate::passes::ModulePass {
            name: stringify!($m),
            run: $crate::passes::$m::run_module,
        })
    };
}

/// Every function pass of the pipelines by name (for filetests and tools), and `loop_simplify`.
pub fn by_name(name: &str) -> Option<Pass> {
    if name == "loop_simplify" {
        return Some(Pass {
            name: "loop_simplify",
            run: loop_simplify::run,
            needs_loop_simplified: false,
        });
    }
    let mut all = Vec::new();
    pipeline::O2.iter().for_each(|s| s.func_passes(&mut all));
    all.into_iter().find(|p| p.name == name)
}

pub use pipeline::{optimize, PassOptions};
