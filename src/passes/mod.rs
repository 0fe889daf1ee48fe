//! Optimization passes and the pass manager.
//!
//! A function pass is `fn(&mut Function, &ModuleCx, &mut FuncAnalyses) -> Preserved`: it touches
//! its own function only, reads the shared context, asks the analysis manager for the CFG,
//! dominator tree and loops it needs, and returns what it kept valid (`Preserved::all()` when it
//! changed nothing). A module pass is `fn(&mut Module) -> bool` and runs between parallel phases
//! (inlining, global DCE, effect summaries). Pipelines are data (`pipeline.rs`).

pub mod alias;
pub mod condprop;
pub mod constlocal;
pub mod dce;
pub mod dead_loop;
pub mod deadret;
pub mod depend;
pub mod early_exit;
pub mod effects;
pub mod fold;
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
pub mod loop_shape;
pub mod lsr;
pub mod mem2reg;
pub mod memo;
pub mod memopt;
pub mod peel;
pub mod pipeline;
pub mod promote;
pub mod rangefold;
pub mod reassociate;
pub mod sccp;
pub mod simplify_cfg;
pub mod tailrec;
pub mod unroll;

use crate::analysis::{FuncAnalyses, Preserved};
use crate::ir::{Function, Module, ModuleCx};

/// The signature of a function pass.
pub type FuncPassFn = fn(&mut Function, &ModuleCx, &mut FuncAnalyses) -> Preserved;

/// How a function pass runs.
#[derive(Clone, Copy)]
pub enum Run {
    /// Through the analysis manager.
    Managed(FuncPassFn),
    /// A pass that computes its own analyses and reports only whether it changed the function:
    /// a change invalidates every cached analysis.
    Legacy(fn(&mut Function, &ModuleCx) -> bool),
}

/// A function pass.
#[derive(Clone, Copy)]
pub struct Pass {
    pub name: &'static str,
    pub run: Run,
}

impl Pass {
    /// Runs the pass on `f` and returns what it kept valid. The caller invalidates the rest
    /// (`am.invalidate`).
    pub fn apply(&self, f: &mut Function, cx: &ModuleCx, am: &mut FuncAnalyses) -> Preserved {
        match self.run {
            Run::Managed(run) => run(f, cx, am),
            Run::Legacy(run) => Preserved::unless(run(f, cx)),
        }
    }

    /// Runs the pass on `f` alone with a fresh analysis cache (filetests, tools); returns
    /// whether it reported a change.
    pub fn apply_alone(&self, f: &mut Function, cx: &ModuleCx) -> bool {
        !self.apply(f, cx, &mut FuncAnalyses::new()).is_unchanged()
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
}

impl Step {
    pub fn name(&self) -> &'static str {
        match self {
            Step::Func(p) => p.name,
            Step::Module(p) => p.name,
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
            run: $crate::passes::Run::Managed($crate::passes::$m::run),
        })
    };
}

/// Declares a function-pass step from a module with `pub fn run(&mut Function, &ModuleCx) ->
/// bool` (changed?), run through an adapter that invalidates every analysis on a change.
#[macro_export]
macro_rules! legacy_pass {
    ($m:ident) => {
        $crate::passes::Step::Func($crate::passes::Pass {
            name: stringify!($m),
            run: $crate::passes::Run::Legacy($crate::passes::$m::run),
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

/// Every function pass by name (for `--print-after`, filetests and bisecting).
pub fn by_name(name: &str) -> Option<Pass> {
    pipeline::ALL_FUNC_PASSES
        .iter()
        .find(|p| p.name == name)
        .copied()
}

pub use pipeline::{optimize, PassOptions};
