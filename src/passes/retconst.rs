//! Constant results across calls (a module pass): a function each `ret` of which returns the
//! same constant gives that constant to every caller.
//!
//! A helper whose branches all end in `return 3` (the branches compute nothing the result
//! depends on) is still called for its result; once callers read the constant instead, `sccp`
//! folds what depends on it and `dce` deletes the call when the callee is pure. The call itself
//! stays otherwise (its effects still happen). Integer and float constants; a function without
//! `ret` is left alone. Cost: O(module size).

use crate::ir::{mk, FuncId, Module, Opcode, Type};
use rustc_hash::FxHashMap;

/// A returned constant: its type and bits (floats by their bit pattern).
#[derive(Clone, Copy, PartialEq, Eq)]
enum RetConst {
    Int(Type, i64),
    Float(u32),
}

pub fn run_module(m: &mut Module) -> bool {
    let ids = m.defined_funcs();
    let mut consts: FxHashMap<FuncId, RetConst> = FxHashMap::default();
    for &id in &ids {
        let f = &m.funcs[id];
        let mut seen: Option<RetConst> = None;
        let mut ok = true;
        for b in f.layout().blocks() {
            let Some(t) = f.terminator(b) else { continue };
            if f.op(t) != Opcode::Ret {
                continue;
            }
            let Some(&v) = f.args(t).first() else {
                ok = false;
                break;
            };
            let c = if let Some(x) = f.as_iconst(v) {
                RetConst::Int(f.ty(v), x)
            } else if let Some(x) = f.as_fconst(v) {
                RetConst::Float(x.to_bits())
            } else {
                ok = false;
                break;
            };
            if seen.is_some_and(|s| s != c) {
                ok = false;
                break;
            }
            seen = Some(c);
        }
        if let (true, Some(c)) = (ok, seen) {
            consts.insert(id, c);
        }
    }
    if consts.is_empty() {
        return false;
    }
    let mut changed = false;
    for &id in &ids {
        let f = &mut m.funcs[id];
        let calls: Vec<_> = f
            .layout()
            .blocks()
            .flat_map(|b| f.layout().block_insts(b))
            .filter(|&i| f.op(i) == Opcode::Call && consts.contains_key(&f.callee(i)))
            .filter(|&i| f.result(i).is_some_and(|r| f.has_uses(r)))
            .collect();
        for call in calls {
            let row = match consts[&f.callee(call)] {
                RetConst::Int(ty, x) => mk::iconst(ty, x),
                RetConst::Float(bits) => mk::fconst(f32::from_bits(bits)),
            };
            let k = f.insert_new_before(call, row, &[]);
            let (r, k) = (f.res(call), f.res(k));
            f.replace_all_uses(r, k);
            changed = true;
        }
    }
    changed
}
