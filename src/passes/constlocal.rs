//! Local arrays with constant contents become read-only globals (a module pass).
//!
//! A local table filled with constants and then only read (`int x[31]; x[0] = 1; ... x[i]`,
//! usually a fully unrolled initialisation loop) is rebuilt on every call or loop iteration that
//! declares it. When every write to an alloca is in one block `W` (stores of constants at
//! constant offsets, and `memset(a, 0, size)`), no load of it comes before the last write inside
//! `W`, and `W` dominates every other load, then each load sees exactly the contents `W` leaves
//! behind, on every execution. The alloca becomes a constant global holding that image and the
//! writes disappear. Words never written read as zero: reading them was undefined anyway.
//! Needs: CFG, dominator tree (per function, computed here). Cost: O(instructions).

use crate::analysis::alias::constant_offset;
use crate::analysis::{Cfg, DomTree};
use crate::ir::{
    mk, FuncId, Function, GlobalData, GlobalInit, Inst, Module, ModuleCx, Opcode, Type, Value,
};
use rayon::prelude::*;
use rustc_hash::FxHashSet;

/// Largest alloca (bytes) turned into a global.
const MAX_BYTES: i64 = 1 << 16;

/// The constant byte offset of `ptr` from `root`, following `gep` with constant index and
/// `offset`.
fn const_offset(f: &Function, root: Value, ptr: Value) -> Option<i64> {
    constant_offset(f, ptr).and_then(|(r, off)| (r == root).then_some(off))
}

/// The 32-bit word a constant value stores.
fn const_word(f: &Function, v: Value) -> Option<u32> {
    if let Some(c) = f.as_iconst(v) {
        return (f.ty(v) == Type::I32).then_some(c as u32);
    }
    f.as_fconst(v).map(f32::to_bits)
}

/// What to do with one alloca: its image and the writes to delete.
struct Plan {
    alloca: Inst,
    words: Vec<u32>,
    writes: Vec<Inst>,
}

fn plan(f: &Function, cx: &ModuleCx, dt: &DomTree, a: Inst) -> Option<Plan> {
    let size = f.data(a).imm;
    if size <= 0 || size > MAX_BYTES || size % 4 != 0 {
        return None;
    }
    let root = f.res(a);
    let mut writes: Vec<Inst> = Vec::new();
    let mut loads: Vec<Inst> = Vec::new();
    for (user, v) in crate::analysis::alias::derived_users_via(f, root, true) {
        match f.op(user) {
            Opcode::Load if f.arg(user, 0) == v => loads.push(user),
            Opcode::Store if f.arg(user, 1) == v && f.arg(user, 0) != v => writes.push(user),
            Opcode::Call => {
                let d = cx.decl(f.callee(user));
                let args = f.args(user);
                let zero_fill = !d.defined
                    && d.name == "memset"
                    && args.len() == 3
                    && args[0] == root
                    && f.as_iconst(args[1]) == Some(0)
                    && f.as_iconst(args[2]) == Some(size)
                    && !f.has_uses(f.res(user));
                if !zero_fill {
                    return None;
                }
                writes.push(user);
            }
            _ => return None,
        }
    }
    let w = f.layout().inst_block(*writes.first()?)?;
    if writes.iter().any(|&i| f.layout().inst_block(i) != Some(w)) {
        return None;
    }
    // The image, in program order through W; no load of the array before the last write.
    let load_set: FxHashSet<Inst> = loads.iter().copied().collect();
    let write_set: FxHashSet<Inst> = writes.iter().copied().collect();
    let mut words = vec![0u32; (size / 4) as usize];
    let mut left = writes.len();
    for i in f.layout().block_insts(w) {
        if left == 0 {
            break;
        }
        if load_set.contains(&i) {
            return None;
        }
        if !write_set.contains(&i) {
            continue;
        }
        left -= 1;
        if f.op(i) == Opcode::Call {
            words.iter_mut().for_each(|x| *x = 0);
            continue;
        }
        let off = const_offset(f, root, f.arg(i, 1))?;
        let word = const_word(f, f.arg(i, 0))?;
        if off < 0 || off % 4 != 0 || off >= size {
            return None;
        }
        words[(off / 4) as usize] = word;
    }
    for &l in &loads {
        let lb = f.layout().inst_block(l)?;
        if lb != w && !dt.dominates(w, lb) {
            return None;
        }
    }
    Some(Plan {
        alloca: a,
        words,
        writes,
    })
}

pub fn run_module(m: &mut Module) -> bool {
    // Plans per function in parallel (a plan reads its own function and the declarations; the
    // tables made for other functions' arrays are not among what it reads), then applied in
    // function order, so the new globals come in the same order.
    let ids = m.defined_funcs();
    let plans: Vec<Vec<Plan>> = ids
        .par_iter()
        .map(|&id| {
            let f = &m.funcs[id];
            let cfg = Cfg::compute(f);
            let dt = DomTree::compute(f, &cfg);
            let allocas: Vec<Inst> = cfg
                .rpo
                .iter()
                .flat_map(|&b| f.layout().block_insts(b))
                .filter(|&i| f.op(i) == Opcode::Alloca)
                .collect();
            allocas
                .into_iter()
                .filter_map(|a| plan(f, &m.cx, &dt, a))
                .collect()
        })
        .collect();
    let mut changed = false;
    for (id, plans) in ids.into_iter().zip(plans) {
        for (k, p) in plans.into_iter().enumerate() {
            apply(m, id, k, p);
            changed = true;
        }
    }
    changed
}

fn apply(m: &mut Module, id: FuncId, k: usize, p: Plan) {
    let name = format!("{}.table{k}", m.cx.decls[id].name);
    let f = &m.funcs[id];
    let size = f.data(p.alloca).imm as u64;
    let g = m.add_global(GlobalData {
        name,
        size,
        elem: Type::I32,
        init: GlobalInit::Words(p.words),
        is_const: true,
    });
    let f = &mut m.funcs[id];
    for w in p.writes {
        f.remove_inst(w);
    }
    let ga = f.insert_new_before(p.alloca, mk::gaddr(g), &[]);
    let (old, new) = (f.res(p.alloca), f.res(ga));
    f.replace_all_uses(old, new);
    f.remove_inst(p.alloca);
}
