//! Shapes of counted loops shared by the loop passes (`indvars`, `modrec`, `unroll`).

use super::{Cfg, DomTree, FuncAnalyses, LoopForest};
use crate::ir::{Block, CmpCond, Function, Inst, ModuleCx, Opcode, Value};

/// A latch's exit test read as "the loop goes on while `next cond bound`".
pub struct ExitTest {
    /// The compare instruction.
    pub cmp: Inst,
    /// The loop-defined operand (the counter's next value in a counted loop).
    pub next: Value,
    /// The operand defined outside the loop.
    pub bound: Value,
    pub cond: CmpCond,
}

/// Reads the condition of the latch `brif t` as an [`ExitTest`]: the compare is inverted when the
/// back edge is the else edge (`back_when_true` false) and swapped when the loop operand is on the
/// right. `None` unless the condition is an `icmp` with exactly one operand inside the loop
/// (`inside`).
pub fn exit_test(
    f: &Function,
    t: Inst,
    back_when_true: bool,
    inside: impl Fn(&Function, Value) -> bool,
) -> Option<ExitTest> {
    let cmp = f.def_inst(f.arg(t, 0))?;
    if f.op(cmp) != Opcode::Icmp {
        return None;
    }
    let mut cond = f.data(cmp).cond();
    if !back_when_true {
        cond = cond.invert();
    }
    let (a, b) = (f.arg(cmp, 0), f.arg(cmp, 1));
    let (next, bound, cond) = if inside(f, b) {
        (b, a, cond.swap())
    } else {
        (a, b, cond)
    };
    if inside(f, bound) {
        return None;
    }
    Some(ExitTest {
        cmp,
        next,
        bound,
        cond,
    })
}

/// A loop's counter as its single latch tests it: `next = counter + step` (a constant step),
/// carried to the header by the back edge and tested by the latch's branch.
pub struct LatchCounter {
    pub test: ExitTest,
    /// Which of the latch terminator's targets is the back edge.
    pub back: usize,
    /// The header parameter, and its index among the header's parameters.
    pub counter: Value,
    pub index: usize,
    pub step: i64,
}

/// Reads the counter of the loop headed by `h` whose single latch is `latch` (a `brif` with one
/// edge to `h`); `inside` tells the loop's values.
pub fn latch_counter(
    f: &Function,
    h: crate::ir::Block,
    latch: crate::ir::Block,
    inside: impl Fn(&Function, Value) -> bool,
) -> Option<LatchCounter> {
    let lt = f.terminator(latch)?;
    if f.op(lt) != Opcode::Brif {
        return None;
    }
    let targets: Vec<crate::ir::Block> = f.branch_targets(lt).iter().map(|c| c.block).collect();
    let back = targets.iter().position(|&b| b == h)?;
    if targets.iter().filter(|&&b| b == h).count() != 1 {
        return None;
    }
    let test = exit_test(f, lt, back == 0, inside)?;
    let inc = f.def_inst(test.next)?;
    if f.op(inc) != Opcode::Add || f.ty(test.next) != crate::ir::Type::I32 {
        return None;
    }
    let (counter, step) = match (f.as_iconst(f.arg(inc, 1)), f.as_iconst(f.arg(inc, 0))) {
        (Some(s), _) => (f.arg(inc, 0), s),
        (None, Some(s)) => (f.arg(inc, 1), s),
        _ => return None,
    };
    let index = f.blocks.params[h].iter().position(|&q| q == counter)?;
    if step == 0 || f.branch_args(lt, back)[index] != test.next {
        return None;
    }
    Some(LatchCounter {
        test,
        back,
        counter,
        index,
        step,
    })
}

/// A loop whose one latch is its only exiting block: `latch: brif c, header(..), exit(..)` in
/// either order, entered from a preheader.
pub struct SingleExit {
    pub pre: crate::ir::Block,
    pub latch: crate::ir::Block,
    pub exit: crate::ir::Block,
    /// The latch's `brif`.
    pub term: Inst,
    /// Whether the back edge is the `brif`'s then edge.
    pub back_when_true: bool,
    pub back_args: Vec<Value>,
    pub exit_args: Vec<Value>,
}

/// Reads loop `l` as a [`SingleExit`] loop, whatever it does inside.
pub fn latch_exit(
    f: &Function,
    cfg: &Cfg,
    forest: &LoopForest,
    l: super::Loop,
) -> Option<SingleExit> {
    let data = &forest.loops[l];
    let h = data.header;
    let [latch] = data.latches[..] else {
        return None;
    };
    let pre = forest.preheader(l, cfg)?;
    let [exit] = forest.exits(l, cfg)[..] else {
        return None;
    };
    for &b in &data.blocks {
        if b != latch && cfg.succs[b].iter().any(|&s| !forest.contains(l, s)) {
            return None;
        }
    }
    let term = f.terminator(latch)?;
    if f.op(term) != Opcode::Brif {
        return None;
    }
    let targets: Vec<crate::ir::Block> = f.branch_targets(term).iter().map(|c| c.block).collect();
    let back_when_true = match targets[..] {
        [a, b] if a == h && b == exit => true,
        [a, b] if b == h && a == exit => false,
        _ => return None,
    };
    let (back, out) = if back_when_true { (0, 1) } else { (1, 0) };
    Some(SingleExit {
        pre,
        latch,
        exit,
        term,
        back_when_true,
        back_args: f.branch_args(term, back).to_vec(),
        exit_args: f.branch_args(term, out).to_vec(),
    })
}

/// Reads loop `l` as a [`SingleExit`] loop with no stores and no impure calls inside (so it can
/// be skipped when its results are known).
pub fn single_exit(
    f: &Function,
    cx: &ModuleCx,
    cfg: &Cfg,
    forest: &LoopForest,
    l: super::Loop,
) -> Option<SingleExit> {
    for &b in &forest.loops[l].blocks {
        for i in f.layout().block_insts(b) {
            match f.op(i) {
                Opcode::Store => return None,
                Opcode::Call if !cx.decls[f.callee(i)].effects.pure => return None,
                _ => {}
            }
        }
    }
    latch_exit(f, cfg, forest, l)
}

/// The values defined in loop `l` (block parameters and results) that are used after it:
/// by instructions outside it, or as arguments of the exit edge (`exit_args`).
pub fn values_used_after(
    f: &Function,
    forest: &LoopForest,
    l: super::Loop,
    exit_args: &[Value],
) -> Vec<Value> {
    let mut out = Vec::new();
    for &b in &forest.loops[l].blocks {
        let mut vals: Vec<Value> = f.blocks.params[b].to_vec();
        vals.extend(f.layout().block_insts(b).filter_map(|i| f.result(i)));
        for v in vals {
            if exit_args.contains(&v) || !f.uses_outside(v, |b| forest.contains(l, b)).is_empty() {
                out.push(v);
            }
        }
    }
    out
}

/// The instructions in a loop's `blocks`, when they can be copied (no `alloca`: a copy would be
/// another stack object).
pub fn copyable_size(f: &Function, blocks: &[Block]) -> Option<usize> {
    let mut size = 0;
    for &b in blocks {
        for i in f.layout().block_insts(b) {
            size += 1;
            if f.op(i) == Opcode::Alloca {
                return None;
            }
        }
    }
    Some(size)
}

/// How many times the body of a counted loop runs: the first `k >= 1` with `i0 + k*s` failing
/// the test `cond` against `n` (the loop goes on while `i0 + k*s cond n`).
pub fn trip_count(cond: CmpCond, i0: i64, n: i64, s: i64) -> i64 {
    let k = match cond {
        CmpCond::Lt => (n - i0 + s - 1).div_euclid(s),
        CmpCond::Le => (n - i0).div_euclid(s) + 1,
        CmpCond::Gt => (i0 - n + (-s) - 1).div_euclid(-s),
        CmpCond::Ge => (i0 - n).div_euclid(-s) + 1,
        _ => 1,
    };
    k.max(1)
}

/// Whether the trip count of a counter from `i0` by `s` tested `cond` against `n` is exact:
/// the counter's last value does not wrap (else the loop would go on). Known when `i0` and `n`
/// are constants (`consts`), or when the step is ±1 with a strict test (the last value is `n`).
/// The step's sign must match the test.
pub fn exact_trip_count(cond: CmpCond, s: i64, consts: (Option<i64>, Option<i64>)) -> bool {
    match cond {
        CmpCond::Lt | CmpCond::Le if s > 0 => {}
        CmpCond::Gt | CmpCond::Ge if s < 0 => {}
        _ => return false,
    }
    match consts {
        (Some(a), Some(n)) => {
            let last = a + trip_count(cond, a, n, s) * s;
            last >= i32::MIN as i64 && last <= i32::MAX as i64
        }
        _ => matches!(cond, CmpCond::Lt | CmpCond::Gt) && (s == 1 || s == -1),
    }
}

/// The analyses the loop passes start from, borrowed from the analysis manager.
pub struct LoopInfo<'a> {
    pub cfg: &'a Cfg,
    pub dt: &'a DomTree,
    pub forest: &'a LoopForest,
}

/// A loop with one latch and a preheader.
#[derive(Clone, Copy)]
pub struct SimpleLoop {
    pub id: super::Loop,
    pub header: crate::ir::Block,
    pub pre: crate::ir::Block,
    pub latch: crate::ir::Block,
}

impl<'a> LoopInfo<'a> {
    pub fn new(am: &'a mut FuncAnalyses, f: &Function) -> LoopInfo<'a> {
        let (cfg, dt, forest) = am.all(f);
        LoopInfo { cfg, dt, forest }
    }

    /// The loops with one latch and a preheader (in loop-simplified form, every loop entered
    /// from outside has a preheader).
    pub fn simple_loops(&self) -> Vec<SimpleLoop> {
        let mut out = Vec::new();
        for (id, data) in self.forest.loops.iter() {
            let [latch] = data.latches[..] else { continue };
            let Some(pre) = self.forest.preheader(id, self.cfg) else {
                continue;
            };
            out.push(SimpleLoop {
                id,
                header: data.header,
                pre,
                latch,
            });
        }
        out
    }

    /// Whether the header is entered only from the preheader and the latch.
    pub fn entered_only_by(&self, sl: &SimpleLoop) -> bool {
        let mut preds = self.cfg.preds[sl.header].to_vec();
        preds.sort();
        preds.dedup();
        preds.len() == 2 && preds.contains(&sl.latch) && preds.contains(&sl.pre)
    }

    /// Whether `v` is defined inside loop `l`.
    pub fn defined_in(&self, f: &Function, l: super::Loop, v: Value) -> bool {
        f.def_block(v).is_some_and(|b| self.forest.contains(l, b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trip_counts_match_simulation() {
        for (cond, i0, n, s) in [
            (CmpCond::Lt, 0, 300, 1),
            (CmpCond::Lt, 0, 10, 3),
            (CmpCond::Le, 0, 10, 3),
            (CmpCond::Lt, 5, 2, 1),
            (CmpCond::Gt, 10, 0, -2),
            (CmpCond::Ge, 10, 0, -3),
            (CmpCond::Ge, -4, 0, -1),
        ] {
            // Simulate: run the body, step, test.
            let (mut i, mut k) = (i0, 0);
            loop {
                k += 1;
                i += s;
                if !cond.eval_int(i, n) {
                    break;
                }
            }
            assert_eq!(trip_count(cond, i0, n, s), k, "{cond:?} {i0} {n} {s}");
        }
    }
}
