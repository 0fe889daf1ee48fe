//! Compares decided by the range an induction variable stays in (`analysis::ivrange`).
//!
//! A range is a property of the value `i` wherever it is used, so every `icmp` of `i` against a
//! constant or against its initial value or bound that the range decides becomes a constant;
//! `simplify_cfg` then drops the branches. Inlined bounds checks inside loops
//! (`if (i < 0 || i >= n) return -1;`) are what this is for.
//! Needs: loop-simplified form, CFG, dominator tree, loop forest. Keeps the CFG.
//! Cost: O(loop sizes + instructions).

use crate::analysis::ivrange::{counter_range, Range};
use crate::analysis::{FuncAnalyses, Preserved};
use crate::ir::{mk, CmpCond, Function, Inst, ModuleCx, Opcode, Type, Value};
use rustc_hash::FxHashMap;

pub fn run(f: &mut Function, _cx: &ModuleCx, am: &mut FuncAnalyses) -> Preserved {
    let mut changed = false;
    let (cfg, dt, forest) = am.all(f);
    let mut ranges: FxHashMap<Value, Range> = FxHashMap::default();
    for l in forest.loops.keys() {
        if let Some((p, r)) = counter_range(f, cfg, dt, forest, l) {
            ranges.insert(p, r);
        }
    }
    if ranges.is_empty() {
        return Preserved::all();
    }
    // Decide compares.
    let mut decided: Vec<(Inst, bool)> = Vec::new();
    for b in f.layout().blocks() {
        for i in f.layout().block_insts(b) {
            if f.op(i) != Opcode::Icmp || f.ty(f.arg(i, 0)) != Type::I32 {
                continue;
            }
            let (x, y, c) = (f.arg(i, 0), f.arg(i, 1), f.data(i).cond());
            let t = match (ranges.get(&x), ranges.get(&y)) {
                (Some(r), _) => decide(f, r, c, y),
                _ => None,
            }
            .or_else(|| ranges.get(&y).and_then(|r| decide(f, r, c.swap(), x)));
            if let Some(t) = t {
                decided.push((i, t));
            }
        }
    }
    let mut consts: [Option<Value>; 2] = [None, None];
    for (i, t) in decided {
        let k = t as usize;
        let cv = *consts[k].get_or_insert_with(|| {
            let entry = f.entry();
            let ci = match f.layout().first_inst(entry) {
                Some(first) => f.insert_new_before(first, mk::iconst(Type::I1, k as i64), &[]),
                None => f.append_new(entry, mk::iconst(Type::I1, k as i64), &[]),
            };
            f.res(ci)
        });
        let r = f.res(i);
        if f.has_uses(r) {
            f.replace_all_uses(r, cv);
            changed = true;
        }
    }
    Preserved::cfg_kept(changed)
}

/// What `p cond y` is, given `p`'s range.
fn decide(f: &Function, r: &Range, cond: CmpCond, y: Value) -> Option<bool> {
    use CmpCond::*;
    // p >= lo (p > lo when strict) and p <= hi (p < hi when strict), symbolically for y itself.
    if let Some(lo) = r.lower.filter(|b| b.v == y) {
        match (cond, lo.strict) {
            (Ge, _) | (Gt, true) | (Ne, true) => return Some(true),
            (Lt, _) | (Le, true) | (Eq, true) => return Some(false),
            _ => {}
        }
    }
    if let Some(hi) = r.upper.filter(|b| b.v == y) {
        match (cond, hi.strict) {
            (Le, _) | (Lt, true) | (Ne, true) => return Some(true),
            (Gt, _) | (Ge, true) | (Eq, true) => return Some(false),
            _ => {}
        }
    }
    // Numerically, against a constant.
    let c = f.as_iconst(y)?;
    let lo = r
        .lower
        .and_then(|b| Some(f.as_iconst(b.v)? + b.strict as i64));
    let hi = r
        .upper
        .and_then(|b| Some(f.as_iconst(b.v)? - b.strict as i64));
    let below = |x: i64| hi.is_some_and(|h| h < x); // every p < x
    let above = |x: i64| lo.is_some_and(|l| l > x); // every p > x
    match cond {
        Lt if below(c) => Some(true),
        Lt if above(c - 1) => Some(false),
        Le if below(c + 1) => Some(true),
        Le if above(c) => Some(false),
        Gt if above(c) => Some(true),
        Gt if below(c + 1) => Some(false),
        Ge if above(c - 1) => Some(true),
        Ge if below(c) => Some(false),
        Eq if below(c) || above(c) => Some(false),
        Ne if below(c) || above(c) => Some(true),
        _ => None,
    }
}
