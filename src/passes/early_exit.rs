//! Leaving a counted loop as soon as its remaining iterations can do nothing.
//!
//! `while (j < n) { if (i < j) { j = j + 1; continue; } ...work...; j = j + 1; }` runs on with
//! empty iterations once `j` passes `i`: the header's test `i < j` stays true (the counter only
//! grows), and its true edge goes straight to a latch that only steps and tests the counter.
//! That edge can leave the loop instead (to the latch's exit, with the same arguments): the
//! skipped iterations have no effects and the counted loop would have ended anyway.
//!
//! Conditions: the counter of the loop's single latch steps by ±1 under a strict test (so it
//! cannot wrap and the loop ends, see `ivrange`); the header ends in a branch on a compare of the
//! counter itself against a loop-invariant value, and the edge that stays taken once taken
//! (`counter > x`, `>=` going up; `<`, `<=` going down) leads to the latch directly or through
//! one block of pure instructions; the header before its branch, that block and the latch have no
//! effects; no value of the loop is used outside it, and the latch's exit arguments are
//! invariant. Needs: loop-simplified form, CFG, dominator tree, loop forest. Cost: O(loop sizes).

use crate::analysis::loop_shape::{latch_counter, LoopInfo};
use crate::analysis::{FuncAnalyses, Preserved};
use crate::ir::{Block, CmpCond, Function, Inst, ModuleCx, Opcode, Value};

pub fn run(f: &mut Function, cx: &ModuleCx, am: &mut FuncAnalyses) -> Preserved {
    let mut changed = false;
    let info = LoopInfo::new(am, f);
    for sl in info.simple_loops() {
        let inside = |f: &Function, v: Value| info.defined_in(f, sl.id, v);
        let blocks = &info.forest.loops[sl.id].blocks;
        changed |= try_loop(f, cx, sl.header, sl.latch, blocks, &inside).is_some();
    }
    Preserved::unless(changed)
}

/// Whether `i` may be removed from a run of the program without a visible difference.
fn no_effect(f: &Function, cx: &ModuleCx, i: Inst) -> bool {
    match f.op(i) {
        Opcode::Store => false,
        Opcode::Call => cx.decls[f.callee(i)].effects.pure,
        _ => true,
    }
}

fn try_loop(
    f: &mut Function,
    cx: &ModuleCx,
    h: Block,
    latch: Block,
    blocks: &[Block],
    inside: &dyn Fn(&Function, Value) -> bool,
) -> Option<()> {
    let lc = latch_counter(f, h, latch, inside)?;
    let up = match (lc.step, lc.test.cond) {
        (1, CmpCond::Lt) => true,
        (-1, CmpCond::Gt) => false,
        _ => return None,
    };
    // The header's branch on `counter cond x`.
    let t = f.terminator(h)?;
    if h == latch || f.op(t) != Opcode::Brif {
        return None;
    }
    let ci = f
        .def_inst(f.arg(t, 0))
        .filter(|&ci| f.op(ci) == Opcode::Icmp)?;
    let (a, b) = (f.arg(ci, 0), f.arg(ci, 1));
    let cond = if a == lc.counter && !inside(f, b) {
        f.data(ci).cond()
    } else if b == lc.counter && !inside(f, a) {
        f.data(ci).cond().swap()
    } else {
        return None;
    };
    // Which edge stays taken once taken.
    let stays_true = match cond {
        CmpCond::Gt | CmpCond::Ge => up,
        CmpCond::Lt | CmpCond::Le => !up,
        _ => return None,
    };
    let edge = if stays_true { 0 } else { 1 };
    let targets = f.branch_targets(t);
    let (to, to_args) = (targets[edge].block, targets[edge].args.to_vec());
    if !to_args.is_empty() {
        return None;
    }
    // To the latch, directly or through one block of pure instructions.
    let via = if to == latch {
        None
    } else {
        let jt = f.terminator(to)?;
        if f.op(jt) != Opcode::Jump
            || f.branch_targets(jt)[0].block != latch
            || !f.args(jt).is_empty()
        {
            return None;
        }
        Some(to)
    };
    let quiet = |b: Block| f.layout().block_insts(b).all(|i| no_effect(f, cx, i));
    if !quiet(h) || !quiet(latch) || via.is_some_and(|v| !quiet(v)) {
        return None;
    }
    // Nothing of the loop is seen outside it.
    let in_loop: rustc_hash::FxHashSet<Block> = blocks.iter().copied().collect();
    let seen_outside = |v: Value| {
        f.uses_of(v).any(|u| {
            let user = f.uses().user[u];
            f.layout()
                .inst_block(user)
                .is_some_and(|ub| !in_loop.contains(&ub))
        })
    };
    for &b in blocks {
        let results = f.layout().block_insts(b).filter_map(|i| f.result(i));
        if f.blocks.params[b]
            .iter()
            .copied()
            .chain(results)
            .any(seen_outside)
        {
            return None;
        }
    }
    let lt = f.terminator(latch)?;
    let exit = 1 - lc.back;
    let exit_call = &f.branch_targets(lt)[exit];
    let (x, x_args) = (exit_call.block, exit_call.args.to_vec());
    if x_args.iter().any(|&v| inside(f, v)) {
        return None;
    }
    f.set_branch_target(t, edge, x, &x_args);
    Some(())
}
