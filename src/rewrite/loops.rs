//! Loop-simplified form: every loop entered from outside has a preheader, a block that only
//! jumps to the header and is the header's only predecessor from outside the loop.
//!
//! The `loop_simplify` pass establishes it and the pass manager runs that pass before every loop
//! pass unless the form was kept since; loop passes that restructure loops call
//! `ensure_preheaders` again before their next round. Needs: CFG, dominator tree, loop forest.
//! Cost: O(blocks + edges) when nothing is missing.

use crate::analysis::loop_shape::trip_count;
use crate::analysis::{FuncAnalyses, Preserved};
use crate::ir::{mk, Block, Builder, CmpCond, Function, Opcode, Type, Value};

/// Emits the trip count (i32) of a counted loop whose count is exact
/// (`loop_shape::exact_trip_count`): a constant when `i0` and `n` are (`consts`), else
/// `max(1, |n - i0|)` in 64 bits for a step of ±1 (then truncated).
pub fn build_trip_count(
    bld: &mut Builder,
    cond: CmpCond,
    s: i64,
    (i0, n): (Value, Value),
    consts: (Option<i64>, Option<i64>),
) -> Value {
    if let (Some(a), Some(b)) = consts {
        return bld.iconst(trip_count(cond, a, b, s) as i32);
    }
    let a64 = bld.unary(Opcode::Sext, Type::I64, i0);
    let n64 = bld.unary(Opcode::Sext, Type::I64, n);
    let d = if s > 0 {
        bld.binary(Opcode::Sub, n64, a64)
    } else {
        bld.binary(Opcode::Sub, a64, n64)
    };
    let one = bld.iconst_ty(Type::I64, 1);
    let lt = bld.icmp(CmpCond::Lt, d, one);
    let k64 = bld.select(lt, one, d);
    bld.unary(Opcode::Trunc, Type::I32, k64)
}

/// Gives every loop a preheader. Returns whether blocks were added.
pub fn ensure_preheaders(f: &mut Function, am: &mut FuncAnalyses) -> bool {
    let (cfg, _, forest) = am.all(f);
    let mut changed = false;
    for (l, data) in forest.loops.iter() {
        if forest.preheader(l, cfg).is_some() {
            continue;
        }
        let h = data.header;
        let mut outside: Vec<Block> = cfg.preds[h]
            .iter()
            .copied()
            .filter(|&p| !forest.contains(l, p))
            .collect();
        outside.sort();
        outside.dedup();
        if outside.is_empty() {
            continue;
        }
        let pre = f.make_block();
        match f.layout().prev_block(h) {
            Some(prev) => f.insert_block_after(pre, prev),
            None => f.append_block(pre),
        }
        // One edge from outside: its arguments move into the preheader's jump, so the loop's
        // initial values stay visible (no block parameters to look through).
        if let [p] = outside[..] {
            let t = f.terminator(p).unwrap();
            let edges = f.edges_to(t, h);
            if let [k] = edges[..] {
                let args = f.branch_args(t, k).to_vec();
                f.set_branch_target(t, k, pre, &[]);
                f.append_new(pre, mk::jump(h), &args);
                changed = true;
                continue;
            }
        }
        let tys: Vec<_> = f.blocks.params[h].iter().map(|&p| f.ty(p)).collect();
        let params: Vec<Value> = tys.iter().map(|&t| f.append_block_param(pre, t)).collect();
        f.append_new(pre, mk::jump(h), &params);
        for p in outside {
            let t = f.terminator(p).unwrap();
            f.retarget(t, h, pre);
        }
        changed = true;
    }
    if changed {
        am.invalidate(Preserved::none());
    }
    am.set_loop_simplified();
    changed
}
