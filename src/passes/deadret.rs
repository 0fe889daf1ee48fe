//! Dead return values (a module pass): a function whose result no caller reads returns a
//! constant instead, so `dce` can delete what only computed it.
//!
//! A recursive selection routine that counts its moves and returns the count: `main`
//! ignores the result, and the recursive calls only pass it on (`return f(...)`). Condition: every call of the
//! function is unused, or used only by `ret` in the function itself; `main` is left alone (its
//! result is the exit code). Then each `ret v` becomes `ret 0` (of the return type).
//! Cost: O(module size).

use crate::ir::{mk, FuncId, Module, Opcode, Type};
use rustc_hash::FxHashSet;

pub fn run_module(m: &mut Module) -> bool {
    let ids = m.defined_funcs();
    let main = m.cx.func_by_name("main");
    // Functions some call of which has its result read by anything but the callee's own `ret`.
    let mut read: FxHashSet<FuncId> = FxHashSet::default();
    for &id in &ids {
        let f = &m.funcs[id];
        for b in f.layout().blocks() {
            for i in f.layout().block_insts(b) {
                if f.op(i) != Opcode::Call {
                    continue;
                }
                let Some(r) = f.result(i) else { continue };
                let callee = f.callee(i);
                let only_passed_on = f.uses_of(r).all(|u| {
                    let user = f.uses().user[u];
                    callee == id && f.op(user) == Opcode::Ret
                });
                if !only_passed_on {
                    read.insert(callee);
                }
            }
        }
    }
    let mut changed = false;
    for &id in &ids {
        if Some(id) == main || read.contains(&id) {
            continue;
        }
        let f = &mut m.funcs[id];
        let rets: Vec<_> = f
            .layout()
            .blocks()
            .filter_map(|b| f.terminator(b))
            .filter(|&t| f.op(t) == Opcode::Ret && !f.args(t).is_empty())
            .collect();
        for t in rets {
            let v = f.arg(t, 0);
            let ty = f.ty(v);
            if f.def_inst(v)
                .is_some_and(|d| f.op(d) == Opcode::Iconst || f.op(d) == Opcode::Fconst)
            {
                continue;
            }
            let z = match ty {
                Type::F32 => f.insert_new_before(t, mk::fconst(0.0), &[]),
                _ => f.insert_new_before(t, mk::iconst(ty, 0), &[]),
            };
            let z = f.res(z);
            f.set_arg(t, 0, z);
            changed = true;
        }
    }
    changed
}
