//! Global value numbering over the dominator tree.
//!
//! Walks the dominator tree in pre-order with a table from an instruction's "expression"
//! (opcode, type, aux, imm, operands — sorted for commutative operations) to the value that first
//! computed it and its block. An instruction whose expression is already available in a
//! dominating block is replaced by that value. The table is not scoped: an entry whose block does
//! not dominate the instruction looking it up was left by another subtree and is overwritten.
//! (In pre-order, an entry made in a block stays until the walk leaves the block's subtree, since
//! every lookup there finds it dominating, so the table answers as a scoped one would.) Pure instructions and calls to pure functions take part; loads do not
//! (see `memopt`), except loads from constant globals. Block parameters whose incoming arguments are all the same value (or the
//! parameter itself) are replaced by that value first. Needs: dominator tree.
//! Cost: O(instructions) expected.

use crate::analysis::{Cfg, DomTree, FuncAnalyses, Preserved};
use crate::ir::{Block, Function, Inst, ModuleCx, Opcode, Type, Value};
use rustc_hash::FxHashMap;
use std::collections::hash_map::Entry;
use std::hash::{Hash, Hasher};

#[derive(Clone, PartialEq, Eq)]
struct Key {
    op: Opcode,
    ty: Type,
    aux: u32,
    imm: i64,
    args: KeyArgs,
}

/// Hashed as few words: opcode, type and aux in one, the immediate, operands two to a word.
impl Hash for Key {
    fn hash<H: Hasher>(&self, h: &mut H) {
        h.write_u64((self.op as u64) | (self.ty as u64) << 8 | (self.aux as u64) << 32);
        h.write_u64(self.imm as u64);
        match &self.args {
            KeyArgs::Inline(a) => {
                let raw = |v: Option<Value>| v.map_or(0, |v| v.index() as u64 + 1);
                h.write_u64(raw(a[0]) | raw(a[1]) << 32);
                h.write_u64(raw(a[2]) | raw(a[3]) << 32);
            }
            KeyArgs::Heap(v) => {
                h.write_usize(v.len());
                for x in v.iter() {
                    h.write_u32(x.index() as u32);
                }
            }
        }
    }
}

/// The operands of a `Key`: up to `INLINE` in place (the rest `None`), more on the heap. A
/// given operand list always takes the same form, so equality is that of the lists.
#[derive(Clone, PartialEq, Eq)]
enum KeyArgs {
    Inline([Option<Value>; INLINE]),
    Heap(Box<[Value]>),
}

const INLINE: usize = 4;

impl KeyArgs {
    fn new(args: &[Value], sort: bool) -> KeyArgs {
        if args.len() > INLINE {
            let mut v: Box<[Value]> = args.into();
            if sort {
                v.sort();
            }
            return KeyArgs::Heap(v);
        }
        let mut a = [None; INLINE];
        for (slot, &v) in a.iter_mut().zip(args) {
            *slot = Some(v);
        }
        if sort {
            a[..args.len()].sort();
        }
        KeyArgs::Inline(a)
    }
}

fn key(f: &Function, cx: &ModuleCx, i: Inst) -> Option<Key> {
    let d = f.data(i);
    let ok = match d.op {
        Opcode::Call => cx.decls[f.callee(i)].effects.pure && d.ty != Type::Void,
        Opcode::Alloca => false,
        Opcode::Load => crate::analysis::alias::points_to_const_global(f, cx, f.arg(i, 0)),
        op => op.is_pure() && d.ty != Type::Void,
    };
    if !ok {
        return None;
    }
    Some(Key {
        op: d.op,
        ty: d.ty,
        aux: d.aux,
        imm: d.imm,
        args: KeyArgs::new(f.args(i), d.op.is_commutative()),
    })
}

/// Whether `v` is a constant.
fn is_const(f: &Function, v: Value) -> bool {
    f.def_inst(v)
        .is_some_and(|i| matches!(f.op(i), Opcode::Iconst | Opcode::Fconst))
}

/// Whether `a` and `b` compute the same pure expression; constant operands compare by value.
fn same_expr(f: &Function, a: Inst, b: Inst) -> bool {
    let (da, db) = (f.data(a), f.data(b));
    let same_arg = |x: Value, y: Value| {
        x == y
            || (is_const(f, x)
                && is_const(f, y)
                && f.data(f.def_inst(x).unwrap()) == f.data(f.def_inst(y).unwrap()))
    };
    let (xa, xb) = (f.args(a), f.args(b));
    da == db
        && xa.len() == xb.len()
        && (xa.iter().zip(xb).all(|(&x, &y)| same_arg(x, y))
            || (da.op.is_commutative()
                && xa.len() == 2
                && same_arg(xa[0], xb[1])
                && same_arg(xa[1], xb[0])))
}

/// Replaces block parameters that receive the same pure expression of dominating operands on
/// every edge (`j + 1` computed on both sides of an `if`, as a `continue` leaves it) by one
/// instance of it at the top of the block: the loop's latch value becomes a plain `add`, which
/// the induction-variable passes recognise. Constant operands are copied into the block.
/// Returns whether any changed.
fn rebuild_equal_incoming(f: &mut Function, cfg: &Cfg, dt: &DomTree) -> bool {
    let mut changed = false;
    let entry = f.entry();
    for &b in &cfg.rpo {
        if b == entry || f.layout().first_inst(b).is_none() {
            continue;
        }
        let params = f.blocks.params[b].to_vec();
        let mut dead = Vec::new();
        for (n, &p) in params.iter().enumerate() {
            let mut first: Option<Inst> = None;
            let mut ok = true;
            'preds: for &pred in &cfg.preds[b] {
                let Some(t) = f.terminator(pred) else {
                    continue;
                };
                for c in f.branch_targets(t) {
                    if c.block != b {
                        continue;
                    }
                    let pure = |i: Inst| {
                        let op = f.op(i);
                        op.is_pure()
                            && op != Opcode::Alloca
                            && !matches!(op, Opcode::Iconst | Opcode::Fconst)
                    };
                    let Some(i) = f.def_inst(c.args[n]).filter(|&i| pure(i)) else {
                        ok = false;
                        break 'preds;
                    };
                    match first {
                        None => first = Some(i),
                        Some(i0) if same_expr(f, i0, i) => {}
                        Some(_) => {
                            ok = false;
                            break 'preds;
                        }
                    }
                }
            }
            let Some(i0) = first.filter(|_| ok) else {
                continue;
            };
            let available = f.args(i0).iter().all(|&v| {
                is_const(f, v)
                    || match f.value_def(v) {
                        crate::ir::ValueDef::Param(db, _) => dt.dominates(db, b),
                        crate::ir::ValueDef::Result(di) => f
                            .layout()
                            .inst_block(di)
                            .is_some_and(|db| db != b && dt.dominates(db, b)),
                    }
            });
            if !available {
                continue;
            }
            let (d, mut args) = (*f.data(i0), f.args(i0).to_vec());
            let at = f.layout().first_inst(b).unwrap();
            for a in &mut args {
                if is_const(f, *a) {
                    let cd = *f.data(f.def_inst(*a).unwrap());
                    let c = f.insert_new_before(at, cd, &[]);
                    *a = f.res(c);
                }
            }
            let ni = f.insert_new_before(at, d, &args);
            let nv = f.res(ni);
            f.replace_all_uses(p, nv);
            dead.push(n);
        }
        if !dead.is_empty() {
            crate::rewrite::blocks::remove_params(f, cfg, b, &dead);
            changed = true;
        }
    }
    changed
}

/// Replaces block parameters that receive one value on every edge. Returns whether any changed.
pub fn remove_redundant_params(f: &mut Function, cfg: &Cfg) -> bool {
    let mut changed = false;
    let blocks: Vec<Block> = cfg.rpo.clone();
    let entry = f.entry();
    for b in blocks {
        if b == entry || f.blocks.params[b].is_empty() {
            continue;
        }
        let params = f.blocks.params[b].to_vec();
        let mut dead = Vec::new();
        for (n, &p) in params.iter().enumerate() {
            let mut same: Option<Value> = None;
            let mut unique = true;
            for &pred in &cfg.preds[b] {
                let Some(t) = f.terminator(pred) else {
                    continue;
                };
                for c in f.branch_targets(t) {
                    if c.block != b {
                        continue;
                    }
                    let a = c.args[n];
                    if a == p {
                        continue;
                    }
                    match same {
                        None => same = Some(a),
                        Some(s) if s == a => {}
                        Some(_) => unique = false,
                    }
                }
            }
            if unique {
                if let Some(s) = same {
                    f.replace_all_uses(p, s);
                    dead.push(n);
                }
            }
        }
        if !dead.is_empty() {
            crate::rewrite::blocks::remove_params(f, cfg, b, &dead);
            changed = true;
        }
    }
    changed
}

pub fn run(f: &mut Function, cx: &ModuleCx, am: &mut FuncAnalyses) -> Preserved {
    let cfg = am.cfg(f);
    let mut changed = false;
    // Parameters first: they feed more expressions into the table. Iterate since removing one
    // can make another redundant.
    for _ in 0..8 {
        if !remove_redundant_params(f, cfg) {
            break;
        }
        changed = true;
    }
    let (cfg, dt) = am.cfg_domtree(f);
    // Sized for every instruction up front: growing it rehashes every key so far.
    let mut table: FxHashMap<Key, (Value, Block)> =
        FxHashMap::with_capacity_and_hasher(f.num_insts(), Default::default());
    for &b in &dt.preorder {
        visit(f, cx, dt, b, &mut table, &mut changed);
    }
    // After numbering: equal incoming expressions now share their operands.
    changed |= rebuild_equal_incoming(f, cfg, dt);
    Preserved::cfg_kept(changed)
}

fn visit(
    f: &mut Function,
    cx: &ModuleCx,
    dt: &DomTree,
    b: Block,
    table: &mut FxHashMap<Key, (Value, Block)>,
    changed: &mut bool,
) {
    let mut next = f.layout().first_inst(b);
    while let Some(i) = next {
        next = f.layout().next_inst(i);
        let Some(k) = key(f, cx, i) else { continue };
        let r = f.res(i);
        // One lookup: the key is hashed once whether it is found or added.
        match table.entry(k) {
            Entry::Occupied(mut e) => {
                let (v, vb) = *e.get();
                if vb == b || dt.dominates(vb, b) {
                    f.replace_all_uses(r, v);
                    f.remove_inst(i);
                    *changed = true;
                } else {
                    e.insert((r, b));
                }
            }
            Entry::Vacant(e) => {
                e.insert((r, b));
            }
        }
    }
}
