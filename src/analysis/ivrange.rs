//! The range an induction variable stays in.
//!
//! A header parameter `i` stepped by a constant `s > 0` (`i_next = i + s`), whose loop goes on
//! only while `i_next < n` (or `<=`) for an invariant `n`, never wraps: it starts at its initial
//! value `i0` and grows, so `i >= i0` holds for every value it takes. When the loop is entered
//! only after `i0 < n` was tested (a dominating branch of the rotated loop's guard, or both
//! constants), `i < n` holds too: the first value passed the guard and every later one the
//! latch's test. Mirrored for `s < 0` with `>` / `>=`.
//!
//! No wrap: the step is ±1 with a strict test (the last value is the bound itself), or the bound
//! is a constant at least `|s|` away from the end of the i32 range.
//! Needs: CFG, dominator tree, loop forest, a preheader. Cost: O(loop size).

use super::loop_shape::{latch_counter, LatchCounter};
use super::loops::Loop;
use super::{Cfg, DomTree, LoopForest};
use crate::ir::{Block, CmpCond, Function, Opcode, Value};

/// `value > / >= bound` or `value < / <= bound`.
#[derive(Clone, Copy, Debug)]
pub struct Bound {
    pub v: Value,
    pub strict: bool,
}

/// What is known about an induction variable: every value it takes is above `lower` and below
/// `upper`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Range {
    pub lower: Option<Bound>,
    pub upper: Option<Bound>,
}

/// The counter of loop `l` (tested by its single latch) and its range, if it has one.
pub fn counter_range(
    f: &Function,
    cfg: &Cfg,
    dt: &DomTree,
    forest: &LoopForest,
    l: Loop,
) -> Option<(Value, Range)> {
    let data = &forest.loops[l];
    let [latch] = data.latches[..] else {
        return None;
    };
    let pre = forest.preheader(l, cfg)?;
    let inside = |f: &Function, v: Value| f.def_block(v).is_some_and(|b| forest.contains(l, b));
    iv_range(f, cfg, dt, data.header, pre, latch, &inside)
}

/// The range of the counter tested by the latch of the loop headed by `h`, if it has one.
fn iv_range(
    f: &Function,
    cfg: &Cfg,
    dt: &DomTree,
    h: Block,
    pre: Block,
    latch: Block,
    inside: &dyn Fn(&Function, Value) -> bool,
) -> Option<(Value, Range)> {
    let entries = cfg.preds[h].iter().all(|&p| p == pre || p == latch);
    if !entries || !cfg.preds[h].contains(&pre) || !cfg.preds[h].contains(&latch) {
        return None;
    }
    let LatchCounter {
        test,
        counter: p,
        index: np,
        step: s,
        ..
    } = latch_counter(f, h, latch, inside)?;
    let pre_t = f.terminator(pre)?;
    if f.op(pre_t) != Opcode::Jump {
        return None;
    }
    let i0 = f.args(pre_t)[np];
    let (n, cond) = (test.bound, test.cond);
    // No wrap: the last value the test lets through plus the step stays in range.
    let nc = f.as_iconst(n);
    let room = |last: Option<i64>| {
        last.is_some_and(|x| (i32::MIN as i64..=i32::MAX as i64).contains(&(x + s)))
    };
    let (up, strict) = match cond {
        CmpCond::Lt if s > 0 => (true, true),
        CmpCond::Le if s > 0 => (true, false),
        CmpCond::Gt if s < 0 => (false, true),
        CmpCond::Ge if s < 0 => (false, false),
        _ => return None,
    };
    let unit_strict = strict && s.abs() == 1;
    let last = nc.map(|n| match (up, strict) {
        (true, true) => n - 1,
        (false, true) => n + 1,
        _ => n,
    });
    if !unit_strict && !room(last) {
        return None;
    }
    let start = Bound {
        v: i0,
        strict: false,
    };
    let end = guarded(
        f,
        cfg,
        dt,
        pre,
        i0,
        n,
        if up { cond } else { cond.swap() },
        up,
    )
    .then_some(Bound { v: n, strict });
    let r = if up {
        Range {
            lower: Some(start),
            upper: end,
        }
    } else {
        Range {
            lower: end,
            upper: Some(start),
        }
    };
    Some((p, r))
}

/// Whether `i0 cond n` (`cond` read with `i0` on the left when `up`, else `n cond i0`) holds
/// on entry to the loop: both constants, or a dominating branch edge above the preheader tested
/// it (the same compare, swapped, or inverted on the false edge).
#[allow(clippy::too_many_arguments)] // the loop's parts, read once by the caller
fn guarded(
    f: &Function,
    cfg: &Cfg,
    dt: &DomTree,
    pre: Block,
    i0: Value,
    n: Value,
    cond: CmpCond,
    up: bool,
) -> bool {
    let (a, b) = if up { (i0, n) } else { (n, i0) };
    if let (Some(x), Some(y)) = (f.as_iconst(a), f.as_iconst(b)) {
        return cond.eval_int(x, y);
    }
    let same = |x: Value, y: Value| {
        x == y || (f.as_iconst(x).is_some() && f.as_iconst(x) == f.as_iconst(y))
    };
    let implies = |c: CmpCond, x: Value, y: Value| {
        (same(x, a) && same(y, b) && (c == cond || (c == CmpCond::Lt && cond == CmpCond::Le)))
            || (same(x, b)
                && same(y, a)
                && (c == cond.swap() || (c == CmpCond::Gt && cond == CmpCond::Le)))
    };
    let mut blk = pre;
    for _ in 0..32 {
        if let [p] = cfg.preds[blk][..] {
            if let Some(t) = f.terminator(p).filter(|&t| f.op(t) == Opcode::Brif) {
                let targets = f.branch_targets(t);
                let (then, els) = (targets[0].block, targets[1].block);
                if then != els {
                    if let Some(ci) = f
                        .def_inst(f.arg(t, 0))
                        .filter(|&ci| f.op(ci) == Opcode::Icmp)
                    {
                        let c = f.data(ci).cond();
                        let c = if blk == then { c } else { c.invert() };
                        if implies(c, f.arg(ci, 0), f.arg(ci, 1)) {
                            return true;
                        }
                    }
                }
            }
        }
        match dt.idom[blk] {
            Some(d) if d != blk => blk = d,
            _ => return false,
        }
    }
    false
}
