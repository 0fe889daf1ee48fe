//! Global variable optimization (a module pass).
//!
//! 1. A global whose address only ever feeds loads (through `gep`/`offset`) in the whole program
//!    is never written: it is marked constant and every load from it at a constant offset is
//!    replaced by the initial value. When every word of such a global holds the same value (a
//!    zero-initialised array nothing writes), a load at any offset reads that value: the index
//!    need not be known, since a load outside the global would be undefined.
//! 2. A scalar global used by `main` only (and `main` never called) lives in `main`'s frame
//!    instead: an alloca initialised in the entry block, which `mem2reg` then turns into SSA
//!    values, so loops in `main` keep it in a register.
//!
//! Cost: O(instructions).

use crate::analysis::alias::{constant_offset, offset_root};
use crate::ir::{
    mk, FuncId, Function, GlobalId, GlobalInit, Module, ModuleCx, Opcode, Type, Value,
};
use rayon::prelude::*;
use rustc_hash::FxHashMap;

#[derive(Default, Clone, Copy)]
struct Usage {
    written: bool,
    /// Used by a function other than `main`.
    outside_main: bool,
}

/// Whether the address `v` (and everything derived from it) is only ever loaded from.
fn only_loaded(f: &crate::ir::Function, v: Value) -> bool {
    crate::analysis::alias::derived_users(f, v)
        .iter()
        .all(|&(user, _)| f.op(user) == Opcode::Load)
}

pub fn run_module(m: &mut Module) -> bool {
    let ids = m.defined_funcs();
    let main = m.cx.func_by_name("main");
    // Per function (in parallel): each `gaddr` as (global, outside main, not only loaded), and
    // whether it calls main; merged by "or", in any order.
    type Scan = (Vec<(GlobalId, bool, bool)>, bool);
    let scans: Vec<Scan> = ids
        .par_iter()
        .map(|&id| {
            let f = &m.funcs[id];
            let mut found = Vec::new();
            let mut calls_main = false;
            for b in f.layout().blocks() {
                for i in f.layout().block_insts(b) {
                    match f.op(i) {
                        Opcode::Gaddr => {
                            found.push((f.global(i), Some(id) != main, !only_loaded(f, f.res(i))))
                        }
                        Opcode::Call if Some(f.callee(i)) == main => calls_main = true,
                        _ => {}
                    }
                }
            }
            (found, calls_main)
        })
        .collect();
    let mut usage: FxHashMap<GlobalId, Usage> = FxHashMap::default();
    let mut main_called = false;
    for (found, calls_main) in scans {
        main_called |= calls_main;
        for (g, outside_main, written) in found {
            let u = usage.entry(g).or_default();
            u.outside_main |= outside_main;
            u.written |= written;
        }
    }
    let mut changed = false;
    for (&g, u) in &usage {
        if !u.written && !m.cx.globals[g].is_const {
            m.cx.globals[g].is_const = true;
            changed = true;
        }
    }
    // 1. Fold constant loads from read-only globals.
    changed |= m.par_for_each_func(fold_loads);
    // 2. Scalars used only by a main that nobody calls move into main's frame.
    if let (Some(main), false) = (main, main_called) {
        let mut scalars: Vec<GlobalId> = usage
            .iter()
            .filter(|(g, u)| u.written && !u.outside_main && m.cx.globals[**g].size == 4)
            .map(|(g, _)| *g)
            .collect();
        scalars.sort_by_key(|g| g.to_bits());
        if !scalars.is_empty() {
            changed |= localize(m, main, &scalars);
        }
    }
    changed
}

/// Replaces the loads of `f` from read-only globals at constant offsets (or from globals whose
/// words are all equal) by the constant. Returns whether it did.
fn fold_loads(f: &mut Function, cx: &ModuleCx) -> bool {
    let mut changed = false;
    let blocks: Vec<_> = f.layout().blocks().collect();
    for b in blocks {
        let insts: Vec<_> = f.layout().block_insts(b).collect();
        for i in insts {
            if f.op(i) != Opcode::Load {
                continue;
            }
            let ty = f.data(i).ty;
            if !matches!(ty, Type::I32 | Type::F32) {
                continue;
            }
            let ptr = f.arg(i, 0);
            let at_constant =
                constant_offset(f, ptr).and_then(|(root, off)| Some((gaddr_global(f, root)?, off)));
            let w = match at_constant {
                Some((g, off)) => match cx.globals.get(g).and_then(|gd| gd.const_word(off)) {
                    Some(w) => w,
                    None => continue,
                },
                None => {
                    let Some(gd) =
                        gaddr_global(f, offset_root(f, ptr)).and_then(|g| cx.globals.get(g))
                    else {
                        continue;
                    };
                    match uniform_word(gd) {
                        Some(w) if gd.is_const => w,
                        _ => continue,
                    }
                }
            };
            let row = if ty == Type::F32 {
                mk::fconst(f32::from_bits(w))
            } else {
                mk::iconst(Type::I32, w as i32 as i64)
            };
            f.replace_inst(i, row, &[]);
            changed = true;
        }
    }
    changed
}

/// The global `v` is the address of, if it is one.
fn gaddr_global(f: &Function, v: Value) -> Option<GlobalId> {
    f.def_inst(v)
        .filter(|&i| f.op(i) == Opcode::Gaddr)
        .map(|i| f.global(i))
}

/// The word every 32-bit slot of `gd`'s initial contents holds, if they all hold the same one.
fn uniform_word(gd: &crate::ir::GlobalData) -> Option<u32> {
    match &gd.init {
        GlobalInit::Zero => Some(0),
        GlobalInit::Words(w) => {
            let first = w.first().copied().unwrap_or(0);
            let full = w.len() as u64 * 4 >= gd.size;
            (w.iter().all(|&x| x == first) && (full || first == 0)).then_some(first)
        }
        GlobalInit::Bytes(_) => None,
    }
}

fn localize(m: &mut Module, main: FuncId, scalars: &[GlobalId]) -> bool {
    let elems: Vec<(Type, u32)> = scalars
        .iter()
        .map(|&g| {
            let gd = &m.cx.globals[g];
            (
                if gd.elem == Type::F32 {
                    Type::F32
                } else {
                    Type::I32
                },
                gd.word_at(0),
            )
        })
        .collect();
    let f = &mut m.funcs[main];
    let entry = f.entry();
    for (k, &g) in scalars.iter().enumerate() {
        // Looked up each time: the previous global's `gaddr` may have been the first instruction.
        let first = f.layout().first_inst(entry).unwrap();
        let (ty, init) = elems[k];
        let a = f.insert_new_before(first, mk::alloca(4, 4), &[]);
        let av = f.res(a);
        let row = if ty == Type::F32 {
            mk::fconst(f32::from_bits(init))
        } else {
            mk::iconst(Type::I32, init as i32 as i64)
        };
        let c = f.insert_new_before(first, row, &[]);
        let cv = f.res(c);
        f.insert_new_before(first, mk::store(), &[cv, av]);
        let blocks: Vec<_> = f.layout().blocks().collect();
        for b in blocks {
            let insts: Vec<_> = f.layout().block_insts(b).collect();
            for i in insts {
                if f.op(i) == Opcode::Gaddr && f.global(i) == g {
                    let r = f.res(i);
                    f.replace_all_uses(r, av);
                    f.remove_inst(i);
                }
            }
        }
    }
    for &g in scalars {
        m.cx.globals.remove(g);
    }
    true
}
