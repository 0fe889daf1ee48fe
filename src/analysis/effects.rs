//! Per-function side-effect summaries (a module analysis stored in `FuncDecl::effects`).
//!
//! A function is **pure** when its result depends on its arguments only: every parameter is a
//! scalar, it touches no memory but its own allocas and constant globals (which it can only
//! read), and it calls only pure functions (recursion allowed). Externals (the runtime: I/O) are impure and write memory. Otherwise a function
//! `reads_memory` if it loads from non-local memory or calls a reader, and `writes_memory` if it
//! stores to non-local memory or calls a writer.
//!
//! Beside the flags, `FuncDecl::reads` and `FuncDecl::writes` list the memory a call may read
//! and write (globals by name, through pointer arguments, or anything), so that a loop calling
//! a function keeps in registers what the function does not write (or touch at all).
//!
//! Computed optimistically (every defined function starts pure) and lowered to a fixpoint over
//! the call graph, so recursive functions can be pure. Cost: O(iterations * instructions).

use super::alias::Base;
use crate::analysis::Cfg;
use crate::ir::{Effects, FuncId, GlobalId, Module, Opcode, Touches, Type};
use rayon::prelude::*;

/// What one function does itself, before looking at callees.
#[derive(Clone, Default)]
struct Local {
    pointer_params: bool,
    callees: Vec<FuncId>,
    /// What its own loads read and its own stores write (anything when a pointer's origin is
    /// unknown).
    read: Touched,
    written: Touched,
    /// Each call: the callee and the bases of its pointer arguments.
    calls: Vec<(FuncId, Vec<Base>)>,
}

/// A `Touches` summary being built: the globals read or written, accesses through pointer
/// parameters, or anything.
#[derive(Clone, Default, PartialEq, Eq)]
struct Touched {
    anything: bool,
    globals: Vec<GlobalId>,
    through_params: bool,
}

impl Touched {
    /// Adds an access to `base`; accesses to the function's own allocas are not visible to
    /// callers.
    fn add(&mut self, base: Base) {
        match base {
            Base::Alloca(_) => {}
            Base::Global(g) => {
                if let Err(k) = self.globals.binary_search(&g) {
                    self.globals.insert(k, g);
                }
            }
            Base::Param(_) => self.through_params = true,
            Base::Unknown => self.anything = true,
        }
    }

    /// Adds what a call touches, given the bases of its pointer arguments.
    fn add_call(&mut self, callee: &Touches, args: &[Base]) {
        match callee {
            Touches::Anything => self.anything = true,
            Touches::Known {
                globals,
                through_params,
            } => {
                for &g in globals {
                    self.add(Base::Global(g));
                }
                if *through_params {
                    for &b in args {
                        self.add(b);
                    }
                }
            }
        }
    }

    /// Whether no access outside the function's own allocas was added.
    fn is_empty(&self) -> bool {
        !self.anything && self.globals.is_empty() && !self.through_params
    }

    fn summary(&self) -> Touches {
        if self.anything {
            Touches::Anything
        } else {
            Touches::Known {
                globals: self.globals.clone(),
                through_params: self.through_params,
            }
        }
    }
}

fn local_facts(m: &Module, id: FuncId) -> Local {
    let f = &m.funcs[id];
    let mut l = Local {
        pointer_params: m.cx.decls[id].sig.params.contains(&Type::Ptr),
        ..Default::default()
    };
    let cfg = Cfg::compute(f);
    for b in f.layout().blocks() {
        for i in f.layout().block_insts(b) {
            match f.op(i) {
                // A constant global never changes: reading it is like reading a constant.
                Opcode::Load => match super::alias::base_of(f, &cfg, f.arg(i, 0)) {
                    Base::Global(g) if m.cx.globals[g].is_const => {}
                    base => l.read.add(base),
                },
                Opcode::Store => l.written.add(super::alias::base_of(f, &cfg, f.arg(i, 1))),
                Opcode::Call => {
                    let c = f.callee(i);
                    if !l.callees.contains(&c) {
                        l.callees.push(c);
                    }
                    let args = f
                        .args(i)
                        .iter()
                        .filter(|&&a| f.ty(a) == Type::Ptr)
                        .map(|&a| super::alias::base_of(f, &cfg, a))
                        .collect();
                    l.calls.push((c, args));
                }
                _ => {}
            }
        }
    }
    l
}

/// Recomputes `ModuleCx::direct_only`: the globals whose address every defined function uses
/// only as the address of loads and stores. Returns whether the set changed.
fn direct_globals(m: &mut Module) -> bool {
    let ids = m.defined_funcs();
    let addressed: Vec<Vec<GlobalId>> = ids
        .par_iter()
        .map(|&id| {
            let f = &m.funcs[id];
            let mut found = Vec::new();
            for b in f.layout().blocks() {
                for i in f.layout().block_insts(b) {
                    if f.op(i) == Opcode::Gaddr && !super::alias::global_direct_only(f, f.res(i)) {
                        found.push(f.global(i));
                    }
                }
            }
            found
        })
        .collect();
    let mut direct = slotmap::SecondaryMap::new();
    for (g, _) in m.cx.globals.iter() {
        direct.insert(g, ());
    }
    for g in addressed.into_iter().flatten() {
        direct.remove(g);
    }
    let changed = direct.len() != m.cx.direct_only.len()
        || direct.keys().any(|g| !m.cx.direct_only.contains_key(g));
    m.cx.direct_only = direct;
    changed
}

/// Recomputes every function's effect summary and the globals used only directly. Returns
/// whether any of them changed.
pub fn run_module(m: &mut Module) -> bool {
    let direct_changed = direct_globals(m);
    let ids: Vec<FuncId> = m.cx.decls.keys().collect();
    let locals: Vec<Option<Local>> = ids
        .par_iter()
        .map(|&id| m.cx.decls[id].defined.then(|| local_facts(m, id)))
        .collect();
    let mut eff: Vec<Effects> = ids
        .iter()
        .map(|&id| {
            if m.cx.decls[id].defined {
                Effects {
                    pure: true,
                    reads_memory: false,
                    writes_memory: false,
                }
            } else {
                Effects {
                    pure: false,
                    reads_memory: true,
                    writes_memory: true,
                }
            }
        })
        .collect();
    loop {
        let mut changed = false;
        for (k, local) in locals.iter().enumerate() {
            let Some(l) = local else { continue };
            let mut e = Effects {
                pure: l.read.is_empty() && l.written.is_empty() && !l.pointer_params,
                reads_memory: !l.read.is_empty(),
                writes_memory: !l.written.is_empty(),
            };
            for &c in &l.callees {
                let ce = eff[c.index()];
                e.pure &= ce.pure;
                e.reads_memory |= ce.reads_memory;
                e.writes_memory |= ce.writes_memory;
            }
            if e != eff[k] {
                eff[k] = e;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    let reads = touched_memory(m, &ids, &locals, |l| &l.read, &[]);
    let writes = touched_memory(m, &ids, &locals, |l| &l.written, PRINTS_ARRAYS);
    let mut changed = direct_changed;
    for (k, &id) in ids.iter().enumerate() {
        if m.cx.decls[id].effects != eff[k] {
            m.cx.decls[id].effects = eff[k];
            changed = true;
        }
        if m.cx.decls[id].reads != reads[k] || m.cx.decls[id].writes != writes[k] {
            m.cx.decls[id].reads = reads[k].clone();
            m.cx.decls[id].writes = writes[k].clone();
            changed = true;
        }
    }
    changed
}

/// Runtime functions that only read the array they are given (they print it).
const PRINTS_ARRAYS: &[&str] = &["putarray", "putfarray"];

/// The memory every function may read (or write, by `own`): its own loads (stores) and its
/// callees' reads (writes), with accesses through a callee's pointer parameters mapped to the
/// bases of the arguments at each call. Runtime functions touch only what their pointer
/// arguments point to (`getarray`, `putarray`; `memset` and the like that passes add), except
/// those named in `untouched_by_runtime`: their I/O touches no memory of the program. Grows
/// from nothing to a fixpoint over the call graph. Cost: O(iterations * (calls * arguments +
/// globals)).
fn touched_memory(
    m: &Module,
    ids: &[FuncId],
    locals: &[Option<Local>],
    own: impl Fn(&Local) -> &Touched,
    untouched_by_runtime: &[&str],
) -> Vec<Touches> {
    let mut sets: Vec<Touched> = ids
        .iter()
        .map(|&id| Touched {
            through_params: !m.cx.decls[id].defined
                && m.cx.decls[id].sig.params.contains(&Type::Ptr)
                && !untouched_by_runtime.contains(&m.cx.decls[id].name.as_str()),
            ..Touched::default()
        })
        .collect();
    let mut summaries: Vec<Touches> = sets.iter().map(Touched::summary).collect();
    loop {
        let mut changed = false;
        for (k, local) in locals.iter().enumerate() {
            let Some(l) = local else { continue };
            let mut w = own(l).clone();
            for (c, args) in &l.calls {
                w.add_call(&summaries[c.index()], args);
            }
            if w != sets[k] {
                summaries[k] = w.summary();
                sets[k] = w;
                changed = true;
            }
        }
        if !changed {
            return summaries;
        }
    }
}
