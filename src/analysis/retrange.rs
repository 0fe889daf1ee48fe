//! Return-value ranges (a module analysis stored in `FuncDecl::returns`).
//!
//! The signed interval of every integer value a function may return: the union, over its
//! `ret` instructions, of the returned operand's range where the `ret` runs (`range::Ranges`,
//! which reads the bounds of callees already known for the results of calls). A function that
//! assembles its result from bits or reduces it modulo a constant returns a bounded value, and
//! its callers learn it: `r / 2` of a non-negative result is a shift, a compare against a bound
//! the result never reaches is decided.
//!
//! Optimistic over the call graph, so recursive functions get bounds too: every defined function
//! starts with no returned value at all, each round recomputes the functions whose callees'
//! bounds changed, joining the new bounds with the old, until no bounds change. The last round
//! then found each function's results within the bounds its callers assumed, so the bounds
//! hold. A side of a bound still moving after `WIDEN_ROUNDS` rounds jumps to the end of the
//! result type, which ends the iteration. A widened bound is then narrowed to what the function
//! returns under the bounds found (`(f(n-1) + f(n-2)) % m` returns within `(-m, m)`), kept if
//! every function it affects still returns within its bounds, so what is kept is again stable.
//! Functions nobody calls are skipped (nobody reads their bounds).
//!
//! Cost: O(rounds * the range analysis of the functions recomputed), usually 2 rounds.

use super::{Cfg, DomTree, Interval, Ranges};
use crate::ir::{FuncId, Module, Opcode};
use rayon::prelude::*;

/// Rounds after which a bound that still moves jumps to the end of the result type.
const WIDEN_ROUNDS: u32 = 4;

/// Fills `FuncDecl::returns` for every defined function; returns whether a bound changed.
pub fn run_module(m: &mut Module) -> bool {
    let ids: Vec<FuncId> = m.cx.decls.keys().collect();
    let n = ids.len();
    // Callers of each function (defined callers only).
    let mut callers: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (k, &id) in ids.iter().enumerate() {
        if !m.cx.decls[id].defined {
            continue;
        }
        let f = &m.funcs[id];
        for b in f.layout().blocks() {
            for i in f.layout().block_insts(b) {
                if f.op(i) == Opcode::Call {
                    let c = f.callee(i).index();
                    if callers[c].last() != Some(&k) {
                        callers[c].push(k);
                    }
                }
            }
        }
    }
    let tracked: Vec<bool> = ids
        .iter()
        .enumerate()
        .map(|(k, &id)| {
            let d = &m.cx.decls[id];
            d.defined && d.sig.ret.is_int() && !callers[k].is_empty()
        })
        .collect();
    let before: Vec<Option<(i64, i64)>> = ids.iter().map(|&id| m.cx.decls[id].returns).collect();
    let mut bounds: Vec<Interval> = vec![Interval::EMPTY; n];
    let set = |m: &mut Module, bounds: &[Interval]| {
        for (k, &id) in ids.iter().enumerate() {
            m.cx.decls[id].returns = tracked[k].then_some((bounds[k].lo, bounds[k].hi));
        }
    };
    let callers_of = |ks: &[usize]| -> Vec<usize> {
        let mut c: Vec<usize> = ks
            .iter()
            .flat_map(|&k| callers[k].iter().copied())
            .filter(|&c| tracked[c])
            .collect();
        c.sort_unstable();
        c.dedup();
        c
    };
    // Ascending: join until stable; a side still moving after WIDEN_ROUNDS jumps to the end of
    // the type (then it cannot move again).
    set(m, &bounds);
    let mut widened: Vec<usize> = Vec::new();
    let mut dirty: Vec<usize> = (0..n).filter(|&k| tracked[k]).collect();
    let mut round = 0;
    while !dirty.is_empty() {
        round += 1;
        let found = returned_all(m, &ids, &dirty);
        let mut changed: Vec<usize> = Vec::new();
        for (&k, r) in dirty.iter().zip(found) {
            let old = bounds[k];
            let mut new = old.union(r);
            if new == old {
                continue;
            }
            if round > WIDEN_ROUNDS && !old.is_empty() {
                let full = Interval::full(m.cx.decls[ids[k]].sig.ret);
                if new.lo < old.lo {
                    new.lo = full.lo;
                }
                if new.hi > old.hi {
                    new.hi = full.hi;
                }
                widened.push(k);
            }
            bounds[k] = new;
            changed.push(k);
        }
        set(m, &bounds);
        dirty = callers_of(&changed);
    }
    // Narrowing: a widened bound becomes what the function returns under the bounds found,
    // kept only if the result is again stable (every function affected returns within it).
    widened.sort_unstable();
    widened.dedup();
    if !widened.is_empty() {
        let found = returned_all(m, &ids, &widened);
        let mut narrow = bounds.clone();
        for (&k, r) in widened.iter().zip(found) {
            narrow[k] = r;
        }
        set(m, &narrow);
        let mut check = callers_of(&widened);
        check.extend(&widened);
        check.sort_unstable();
        check.dedup();
        let found = returned_all(m, &ids, &check);
        let stable = check
            .iter()
            .zip(&found)
            .all(|(&k, &r)| r.is_empty() || (!narrow[k].is_empty() && narrow[k].meet(r) == r));
        if stable {
            bounds = narrow;
        }
    }
    // A function that never returns has no values: its calls' results are never read.
    for (k, b) in bounds.iter_mut().enumerate() {
        if tracked[k] && b.is_empty() {
            *b = Interval::full(m.cx.decls[ids[k]].sig.ret);
        }
    }
    set(m, &bounds);
    ids.iter()
        .zip(before)
        .any(|(&id, b)| m.cx.decls[id].returns != b)
}

/// `returned` for the functions `ks` (indexes into `ids`), in parallel, in order.
fn returned_all(m: &Module, ids: &[FuncId], ks: &[usize]) -> Vec<Interval> {
    let (cx, funcs) = (&m.cx, &m.funcs);
    ks.par_iter()
        .map(|&k| returned(funcs, cx, ids[k]))
        .collect()
}

/// The union of the ranges of the values `f` returns, under the bounds now in `cx`.
fn returned(
    funcs: &id_arena::Arena<crate::ir::Function, FuncId>,
    cx: &crate::ir::ModuleCx,
    id: FuncId,
) -> Interval {
    let f = &funcs[id];
    let cfg = Cfg::compute(f);
    let dt = DomTree::compute(f, &cfg);
    let ranges = Ranges::compute(f, cx, &cfg, &dt);
    let mut r = Interval::EMPTY;
    for &b in &cfg.rpo {
        if let Some(t) = f.terminator(b) {
            if f.op(t) == Opcode::Ret {
                if let Some(&v) = f.args(t).first() {
                    r = r.union(ranges.reached_at(f, v, b));
                }
            }
        }
    }
    r
}
