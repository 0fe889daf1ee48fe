//! Complete peeling of loops whose control runs a known, small number of trips.
//!
//! A loop whose exit tests depend only on header parameters that start at constants and step
//! by constant arithmetic runs a trip count known at compile time, whatever its other values
//! do: `while (e > 0) { if (e % 2 == 1) r = r * b % m; b = b * b % m; e = e / 2; }` with `e`
//! starting at 34 runs six trips. Such a loop with several blocks (the single-block ones are
//! `unroll`'s) becomes that many copies of its body in a row, each entering the next where the
//! original took its back edge; the last copy's back edges enter the original loop, which
//! `sccp` then finds unreachable, as it finds every copy's exit test and every branch on the
//! control values (`e % 2 == 1`) constant. No loop overhead remains, and each copy is
//! specialised by its trip's constants (the first `r * b` is `b`).
//!
//! The trip count is found by running the control values from the constants the preheader
//! passes (directly, or through parameters of blocks before it that always receive the same
//! constant): each trip evaluates, in dominance order, the exit tests of the exiting blocks
//! (all of which must dominate the latch, so every trip reaches each of them until one exits),
//! then the header parameters' next values; a value that is not a constant or a foldable
//! operation of such values stops the search. The
//! copies are correct for any trip count (the original loop still follows them); the count
//! only decides whether copying pays: at most `MAX_TRIPS` trips and `MAX_COPIED` instructions
//! in all, for innermost loops without allocas whose values used after the loop are below an
//! exit block (routed through its parameters).
//! Needs: loop-simplified form, CFG, dominator tree, loop forest. Cost: O(loop size x trips).

use crate::analysis::loop_shape::copyable_size;
use crate::analysis::loops::Loop;
use crate::analysis::{Cfg, DomTree, FuncAnalyses, LoopForest, Preserved};
use crate::ir::fold::{constant_value, fold, Const};
use crate::ir::{Block, Function, Opcode, Value, ValueDef};
use crate::rewrite::loops::{copy_loop, escaping_values, route_escapes, LoopCopy};
use rustc_hash::{FxHashMap, FxHashSet};

/// Most trips copied.
const MAX_TRIPS: usize = 12;
/// Most instructions in all the copies of one loop.
const MAX_COPIED: usize = 240;
/// Loops peeled per function at most.
const MAX_LOOPS: usize = 8;

pub fn run(f: &mut Function, _cx: &crate::ir::ModuleCx, am: &mut FuncAnalyses) -> Preserved {
    let mut changed = false;
    let mut done: FxHashSet<Block> = FxHashSet::default();
    for _ in 0..MAX_LOOPS {
        let (cfg, dt, forest) = am.all(f);
        let found = forest.loops.keys().find_map(|l| {
            let h = forest.loops[l].header;
            if done.contains(&h) {
                return None;
            }
            candidate(f, cfg, dt, forest, l).map(|trips| (l, trips))
        });
        let Some((l, trips)) = found else { break };
        let data = &forest.loops[l];
        let blocks = data.blocks.clone();
        let h = data.header;
        done.insert(h);
        let in_loop = |b: Block| forest.contains(l, b);
        let Some(escapes) = escaping_values(f, cfg, dt, &blocks, &in_loop) else {
            continue;
        };
        let pre = forest.preheader(l, cfg).expect("candidate has a preheader");
        let cfg = cfg.clone();
        // The first copy's back edges enter the original loop, each later copy's the copy made
        // before it; the preheader enters the last one made, so the trips run from it down to
        // the first and then (never, by the count) into the original loop.
        let mut copies: Vec<LoopCopy> = Vec::with_capacity(trips);
        let mut next = h;
        for _ in 0..trips {
            let after = f.layout().prev_block(h).unwrap_or(pre);
            let c = copy_loop(f, &blocks, after, next);
            next = c.blocks[&h];
            copies.push(c);
        }
        let pt = f.terminator(pre).expect("a preheader ends in a jump");
        f.retarget(pt, h, next);
        route_escapes(f, &cfg, &escapes, &copies);
        am.invalidate(Preserved::none());
        changed = true;
    }
    Preserved::cached_kept(changed)
}

/// The trip count of loop `l` when it qualifies for complete peeling.
fn candidate(f: &Function, cfg: &Cfg, dt: &DomTree, forest: &LoopForest, l: Loop) -> Option<usize> {
    let data = &forest.loops[l];
    if data.blocks.len() < 2 || data.latches.len() != 1 {
        return None;
    }
    if forest
        .loops
        .keys()
        .any(|m| forest.loops[m].parent == Some(l))
    {
        return None;
    }
    let size = copyable_size(f, &data.blocks)?;
    if size * 2 > MAX_COPIED {
        return None;
    }
    let trips = trip_count(f, cfg, dt, forest, l)?;
    (trips * size <= MAX_COPIED).then_some(trips)
}

/// Runs the control values of loop `l` from its preheader's constants: the number of trips
/// until an exit test sends control out, when every exit test is decided along the way and
/// that happens within `MAX_TRIPS`.
fn trip_count(
    f: &Function,
    cfg: &Cfg,
    dt: &DomTree,
    forest: &LoopForest,
    l: Loop,
) -> Option<usize> {
    let data = &forest.loops[l];
    let h = data.header;
    let latch = data.latches[0];
    let in_loop = |b: Block| forest.contains(l, b);
    let pre = forest.preheader(l, cfg)?;
    let pt = f.terminator(pre)?;
    if f.op(pt) != Opcode::Jump || f.branch_targets(pt)[0].block != h {
        return None;
    }
    // Exiting blocks, each dominating the latch, in dominance order.
    let mut exiting: Vec<Block> = Vec::new();
    for &b in &data.blocks {
        let t = f.terminator(b)?;
        if f.branch_targets(t).iter().any(|c| !in_loop(c.block)) {
            if f.op(t) != Opcode::Brif || !dt.dominates(b, latch) {
                return None;
            }
            exiting.push(b);
        }
    }
    if exiting.is_empty() {
        return None;
    }
    exiting.sort_by_key(|&b| dt.depth[b]);
    let lt = f.terminator(latch)?;
    let back = f.branch_targets(lt).iter().position(|c| c.block == h)?;
    let back_args: Vec<Value> = f.branch_targets(lt)[back].args.to_vec();
    let params = f.blocks.params[h].to_vec();
    let mut env = Env {
        f,
        in_loop: &in_loop,
        params: &params,
        cur: f.branch_targets(pt)[0]
            .args
            .iter()
            .map(|&a| incoming_constant(f, cfg, a, 4))
            .collect(),
        memo: FxHashMap::default(),
    };
    for trip in 1..=MAX_TRIPS {
        env.memo.clear();
        for &b in &exiting {
            let t = f.terminator(b)?;
            let c = env.eval(f.arg(t, 0))?.as_int()?;
            let taken = f.branch_targets(t)[if c != 0 { 0 } else { 1 }].block;
            if !in_loop(taken) {
                return Some(trip);
            }
        }
        let next: Vec<Option<Const>> = back_args.iter().map(|&a| env.eval(a)).collect();
        env.cur = next;
    }
    None
}

/// The constant `v` always is: a constant, or a block parameter to which every incoming edge
/// passes the same constant (the copy of a loop's starting values in the guard block rotation
/// leaves before it), followed `depth` levels up.
fn incoming_constant(f: &Function, cfg: &Cfg, v: Value, depth: u32) -> Option<Const> {
    if let Some(c) = constant_value(f, v) {
        return Some(c);
    }
    let ValueDef::Param(b, k) = f.value_def(v) else {
        return None;
    };
    if depth == 0 {
        return None;
    }
    let mut out = None;
    for &p in &cfg.preds[b] {
        let t = f.terminator(p)?;
        for c in f.branch_targets(t).iter().filter(|c| c.block == b) {
            let x = incoming_constant(f, cfg, c.args[k as usize], depth - 1)?;
            if out.is_some_and(|o| o != x) {
                return None;
            }
            out = Some(x);
        }
    }
    out
}

/// The control values of one trip.
struct Env<'a, F: Fn(Block) -> bool> {
    f: &'a Function,
    in_loop: &'a F,
    params: &'a [Value],
    /// The header parameters' values on this trip, where known.
    cur: Vec<Option<Const>>,
    memo: FxHashMap<Value, Option<Const>>,
}

impl<F: Fn(Block) -> bool> Env<'_, F> {
    fn eval(&mut self, v: Value) -> Option<Const> {
        if let Some(k) = self.params.iter().position(|&p| p == v) {
            return self.cur[k];
        }
        if let Some(&c) = self.memo.get(&v) {
            return c;
        }
        let f = self.f;
        let c = match f.def_inst(v) {
            Some(i) if f.op(i) == Opcode::Iconst || f.op(i) == Opcode::Fconst => {
                constant_value(f, v)
            }
            Some(i) if f.op(i).is_pure() && f.layout().inst_block(i).is_some_and(self.in_loop) => {
                let mut args = Vec::with_capacity(f.args(i).len());
                for &a in f.args(i) {
                    args.push(self.eval(a)?);
                }
                fold(f.data(i), &args)
            }
            _ => None,
        };
        self.memo.insert(v, c);
        c
    }
}
