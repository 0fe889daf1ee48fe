//! Loop-simplified form: every loop entered from outside has a preheader, a block that only
//! jumps to the header and is the header's only predecessor from outside the loop, and one
//! latch (the back edges of a loop with several meet in a block that jumps back).
//!
//! The `loop_simplify` pass establishes it and the pass manager runs that pass before every loop
//! pass unless the form was kept since; loop passes that restructure loops call
//! `ensure_preheaders` again before their next round. Needs: CFG, dominator tree, loop forest.
//! Cost: O(blocks + edges) when nothing is missing.

use crate::analysis::loop_shape::trip_count;
use crate::analysis::{Cfg, DomTree, FuncAnalyses, Preserved};
use crate::ir::func::map_targets;
use crate::ir::{mk, Block, Builder, CmpCond, Function, Inst, Opcode, Type, Use, Value};
use rustc_hash::FxHashMap;

/// Emits the trip count (i32) of a counted loop whose count is exact
/// (`loop_shape::exact_trip_count`): a constant when `i0` and `n` are (`consts`), else
/// `max(1, |n - i0|)` in 64 bits for a step of ±1 (then truncated), one more for a non-strict
/// test (`le`, `ge`).
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
    let d = if matches!(cond, CmpCond::Le | CmpCond::Ge) {
        bld.binary(Opcode::Add, d, one)
    } else {
        d
    };
    let lt = bld.icmp(CmpCond::Lt, d, one);
    let k64 = bld.select(lt, one, d);
    bld.unary(Opcode::Trunc, Type::I32, k64)
}

/// Gives every loop a preheader. Returns whether blocks were added.
pub fn ensure_preheaders(f: &mut Function, am: &mut FuncAnalyses) -> bool {
    let (cfg, _, forest) = am.all(f);
    // The loops with several latches, for the second step: a preheader is a new block outside
    // its loop, so adding them leaves every loop's header and latches as they are.
    let multi: Vec<(Block, Vec<Block>)> = forest
        .loops
        .values()
        .filter(|d| d.latches.len() > 1)
        .map(|d| (d.header, d.latches.clone()))
        .collect();
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
        join_edges(f, &outside, h, pre);
        changed = true;
    }
    // One latch per loop: the back edges of a loop with several (`continue`) meet in a new
    // block that alone jumps back, so the loop has one edge carrying its next values.
    for (h, latches) in multi {
        let back = f.make_block();
        let last = f
            .layout()
            .blocks()
            .filter(|b| latches.contains(b))
            .last()
            .unwrap();
        f.insert_block_after(back, last);
        join_edges(f, &latches, h, back);
        changed = true;
    }
    if changed {
        am.invalidate(Preserved::none());
    }
    am.set_loop_simplified();
    changed
}

/// Sends every edge from `preds` to `h` through the new, empty block `join`, which jumps to `h`.
/// An argument of `h` that every such edge passes the same value for goes from `join`'s jump
/// directly (the value's block dominates every pred, so it dominates `join`): the loop passes
/// then see the value itself, a constant start or a shared step, instead of a parameter; the
/// others become parameters of `join`.
fn join_edges(f: &mut Function, preds: &[Block], h: Block, join: Block) {
    let edges: Vec<(Inst, usize)> = preds
        .iter()
        .flat_map(|&p| {
            let t = f.terminator(p).unwrap();
            f.edges_to(t, h).into_iter().map(move |k| (t, k))
        })
        .collect();
    let n = f.blocks.params[h].len();
    let same: Vec<Option<Value>> = (0..n)
        .map(|j| {
            let v = f.branch_args(edges[0].0, edges[0].1)[j];
            edges
                .iter()
                .all(|&(t, k)| f.branch_args(t, k)[j] == v)
                .then_some(v)
        })
        .collect();
    let args: Vec<Value> = same
        .iter()
        .enumerate()
        .map(|(j, s)| match *s {
            Some(v) => v,
            None => f.append_block_param(join, f.ty(f.blocks.params[h][j])),
        })
        .collect();
    f.append_new(join, mk::jump(h), &args);
    for (t, k) in edges {
        let kept: Vec<Value> = f
            .branch_args(t, k)
            .iter()
            .zip(&same)
            .filter(|(_, s)| s.is_none())
            .map(|(&a, _)| a)
            .collect();
        f.set_branch_target(t, k, join, &kept);
    }
}

/// A value of a loop used after it, below exit block `exit` (whose predecessors are all in the
/// loop): once the loop has copies in front of it, those uses read a new parameter of `exit`.
pub struct Escape {
    pub value: Value,
    pub exit: Block,
    pub uses: Vec<Use>,
}

/// The values of `blocks` used outside them, each with the exit block that dominates its uses.
/// `None` when some use is not below an exit block whose predecessors are all in the loop.
pub fn escaping_values(
    f: &Function,
    cfg: &Cfg,
    dt: &DomTree,
    blocks: &[Block],
    in_loop: &dyn Fn(Block) -> bool,
) -> Option<Vec<Escape>> {
    let mut out: Vec<Escape> = Vec::new();
    for &b in blocks {
        let results = f.layout().block_insts(b).filter_map(|i| f.result(i));
        let defined: Vec<Value> = f.blocks.params[b].iter().copied().chain(results).collect();
        for v in defined {
            for u in f.uses_of(v) {
                let ub = f.layout().inst_block(f.uses().user[u])?;
                if in_loop(ub) {
                    continue;
                }
                // The outermost dominator of `ub` below the loop.
                let mut e = ub;
                while let Some(d) = dt.idom[e].filter(|&d| !in_loop(d)) {
                    e = d;
                }
                if dt.idom[e].is_none() || !cfg.preds[e].iter().all(|&p| in_loop(p)) {
                    return None;
                }
                match out.iter_mut().find(|x| x.value == v && x.exit == e) {
                    Some(x) => x.uses.push(u),
                    None => out.push(Escape {
                        value: v,
                        exit: e,
                        uses: vec![u],
                    }),
                }
            }
        }
    }
    Some(out)
}

/// One copy of a loop's blocks (`copy_loop`): each block's and value's counterpart.
pub struct LoopCopy {
    pub blocks: FxHashMap<Block, Block>,
    pub values: FxHashMap<Value, Value>,
}

/// Copies a loop's `blocks` (header first, then in reverse post-order, so definitions are
/// copied before their uses) after block `after`. In the copy, edges to the header go to
/// `back_to`, edges within the loop to the copied blocks, and exits stay where they were.
pub fn copy_loop(f: &mut Function, blocks: &[Block], after: Block, back_to: Block) -> LoopCopy {
    let h = blocks[0];
    let mut bmap: FxHashMap<Block, Block> = FxHashMap::default();
    let mut vmap: FxHashMap<Value, Value> = FxHashMap::default();
    let mut prev = after;
    for &b in blocks {
        let nb = f.make_block();
        f.insert_block_after(nb, prev);
        prev = nb;
        bmap.insert(b, nb);
        let params = f.blocks.params[b].to_vec();
        for p in params {
            let np = f.append_block_param(nb, f.ty(p));
            vmap.insert(p, np);
        }
    }
    for &b in blocks {
        let nb = bmap[&b];
        let insts: Vec<Inst> = f.layout().block_insts(b).collect();
        for i in insts {
            let mut d = *f.data(i);
            map_targets(&mut d, |x| {
                if x == h {
                    back_to
                } else {
                    *bmap.get(&x).unwrap_or(&x)
                }
            });
            let args: Vec<Value> = f
                .args(i)
                .iter()
                .map(|a| *vmap.get(a).unwrap_or(a))
                .collect();
            let ni = f.append_new(nb, d, &args);
            if let (Some(r), Some(nr)) = (f.result(i), f.result(ni)) {
                vmap.insert(r, nr);
            }
        }
    }
    LoopCopy {
        blocks: bmap,
        values: vmap,
    }
}

/// After `copies` of a loop were made (`copy_loop`), the uses of each escaping value read a new
/// parameter of its exit block, fed by the loop's and every copy's exiting edges. `cfg` is the
/// CFG from before the copies.
pub fn route_escapes(f: &mut Function, cfg: &Cfg, escapes: &[Escape], copies: &[LoopCopy]) {
    for x in escapes {
        let p = f.append_block_param(x.exit, f.ty(x.value));
        let mut preds = cfg.preds[x.exit].to_vec();
        preds.sort();
        preds.dedup();
        for q in preds {
            let t = f.terminator(q).unwrap();
            f.push_branch_arg(t, x.value, |tb| tb == x.exit);
            for c in copies {
                let t = f.terminator(c.blocks[&q]).unwrap();
                let v = *c.values.get(&x.value).unwrap_or(&x.value);
                f.push_branch_arg(t, v, |tb| tb == x.exit);
            }
        }
        for &u in &x.uses {
            f.set_use(u, p);
        }
    }
}
