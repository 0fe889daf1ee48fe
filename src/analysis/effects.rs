//! Per-function side-effect summaries (a module analysis stored in `FuncDecl::effects`).
//!
//! A function is **pure** when its result depends on its arguments only: every parameter is a
//! scalar, it touches no memory but its own allocas, and it calls only pure functions (recursion
//! allowed). Externals (the runtime: I/O) are impure and write memory. Otherwise a function
//! `reads_memory` if it loads from non-local memory or calls a reader, and `writes_memory` if it
//! stores to non-local memory or calls a writer.
//!
//! Computed optimistically (every defined function starts pure) and lowered to a fixpoint over
//! the call graph, so recursive functions can be pure. Cost: O(iterations * instructions).

use super::alias::Base;
use crate::analysis::Cfg;
use crate::ir::{Effects, FuncId, GlobalId, Module, Opcode, Type};

/// What one function does itself, before looking at callees.
#[derive(Clone, Default)]
struct Local {
    reads: bool,
    writes: bool,
    pointer_params: bool,
    callees: Vec<FuncId>,
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
                Opcode::Load
                    if !matches!(super::alias::base_of(f, &cfg, f.arg(i, 0)), Base::Alloca(_)) =>
                {
                    l.reads = true;
                }
                Opcode::Store
                    if !matches!(super::alias::base_of(f, &cfg, f.arg(i, 1)), Base::Alloca(_)) =>
                {
                    l.writes = true;
                }
                Opcode::Call => {
                    let c = f.callee(i);
                    if !l.callees.contains(&c) {
                        l.callees.push(c);
                    }
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
    let mut addressed: Vec<GlobalId> = Vec::new();
    for (id, d) in m.cx.decls.iter() {
        if !d.defined {
            continue;
        }
        let f = &m.funcs[id];
        for b in f.layout().blocks() {
            for i in f.layout().block_insts(b) {
                if f.op(i) == Opcode::Gaddr && !super::alias::global_direct_only(f, f.res(i)) {
                    addressed.push(f.global(i));
                }
            }
        }
    }
    let mut direct = slotmap::SecondaryMap::new();
    for (g, _) in m.cx.globals.iter() {
        if !addressed.contains(&g) {
            direct.insert(g, ());
        }
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
        .iter()
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
                pure: !l.reads && !l.writes && !l.pointer_params,
                reads_memory: l.reads,
                writes_memory: l.writes,
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
    let mut changed = direct_changed;
    for (k, &id) in ids.iter().enumerate() {
        if m.cx.decls[id].effects != eff[k] {
            m.cx.decls[id].effects = eff[k];
            changed = true;
        }
    }
    changed
}
