//! Sinking out of loops: a value computed on every trip but read only after the loop is
//! computed once, after it.
//!
//! `x = i % k` assigned in a loop and printed after it: every trip computes `x`, and only the last
//! trip's value is read. An instruction of loop `L` moves to the top of `L`'s exit block `E` when
//! - `E` has one predecessor `X` (in `L`), and the instruction's block dominates `X`, so the last
//!   trip, the one that leaves through `X`, computed it, from the same operands, which are still
//!   those values in `E` (their definitions dominate `X` too);
//! - every use is in a block `E` dominates (instructions sunk before it included);
//! - it is pure, a pure call, or a load whose base object nothing in the loop may write (stores
//!   and calls by their callees' effect summaries), so those bytes in `E` are as the last trip
//!   read them. A division that could trap trapped in the last trip already.
//!
//! Instructions are visited from the last to the first of each block, blocks in reverse, so a
//! chain whose end is read only after the loop moves as a whole. Inner loops first: what moved to
//! an inner loop's exit may then leave the loop around it.
//!
//! A value the last trip passes to the exit block as a branch argument (the exit block a merge
//! with other predecessors, or the value's only reader that argument) is read inside the loop,
//! by its branch: such an exit edge is first split, the argument moving into the new block's
//! jump, which the new block alone runs after the loop. Needs: CFG, dominator tree, loop forest
//! (computed again after splits). Keeps the block graph when it splits nothing. Cost: O(loop
//! sizes * uses).

use crate::analysis::alias::{base_of, call_writes, may_alias, Base};
use crate::analysis::{Cfg, FuncAnalyses, Preserved};
use crate::ir::{mk, Block, Function, Inst, ModuleCx, Opcode};

/// Whether `i` is of a kind that may move to a loop's exit: pure, a pure call, or a load that
/// `load` allows.
fn movable(f: &Function, cx: &ModuleCx, i: Inst, load: impl FnOnce() -> bool) -> bool {
    match f.op(i) {
        Opcode::Load => load(),
        Opcode::Call => cx.decls[f.callee(i)].effects.pure,
        Opcode::Alloca => false,
        op => op.is_pure(),
    }
}

/// The bases the stores and calls of `blocks` may write; `None` when a call may write anything.
fn written_bases(f: &Function, cx: &ModuleCx, cfg: &Cfg, blocks: &[Block]) -> Option<Vec<Base>> {
    let mut bases = Vec::new();
    for &b in blocks {
        for i in f.layout().block_insts(b) {
            let written = match f.op(i) {
                Opcode::Store => vec![base_of(f, cfg, f.arg(i, 1))],
                Opcode::Call => call_writes(f, cx, cfg, i)?,
                _ => continue,
            };
            for w in written {
                if !bases.contains(&w) {
                    bases.push(w);
                }
            }
        }
    }
    Some(bases)
}

/// Splits each loop exit edge that passes on a value only that edge reads, computed in the loop
/// by an instruction that could move (pure, a load, a pure call) in a block dominating the
/// exiting block: the value's one reader moves into the new block, which has the exiting block
/// as its only predecessor, so the sinking below can take the value there.
fn split_exit_edges(f: &mut Function, cx: &ModuleCx, am: &mut FuncAnalyses) -> bool {
    let (_, dt, forest) = am.all(f);
    let mut edges: Vec<(Inst, usize)> = Vec::new();
    for (l, data) in forest.loops.iter() {
        for &x in &data.blocks {
            let Some(t) = f.terminator(x) else { continue };
            for (k, target) in f.branch_targets(t).iter().enumerate() {
                if forest.contains(l, target.block) || f.edges_to(t, target.block).len() != 1 {
                    continue;
                }
                let sinkable = target.args.iter().any(|&v| {
                    let Some(i) = f.def_inst(v) else { return false };
                    let b = f.layout().inst_block(i);
                    movable(f, cx, i, || true)
                        && b.is_some_and(|b| forest.contains(l, b) && dt.dominates(b, x))
                        && f.uses_of(v).all(|u| f.uses().user[u] == t)
                        && f.branch_targets(t)
                            .iter()
                            .enumerate()
                            .all(|(j, c)| j == k || !c.args.contains(&v))
                });
                if sinkable {
                    edges.push((t, k));
                }
            }
        }
    }
    // An edge out of nested loops is found once per loop it leaves.
    edges.sort_by_key(|&(t, k)| (t.index(), k));
    edges.dedup();
    for &(t, k) in &edges {
        let x = f.layout().inst_block(t).unwrap();
        let target = f.branch_targets(t)[k].block;
        let args = f.branch_args(t, k).to_vec();
        let n = f.make_block();
        f.insert_block_after(n, x);
        f.set_branch_target(t, k, n, &[]);
        f.append_new(n, mk::jump(target), &args);
    }
    if !edges.is_empty() {
        am.invalidate(Preserved::LOOP_SIMPLIFIED);
    }
    !edges.is_empty()
}

pub fn run(f: &mut Function, cx: &ModuleCx, am: &mut FuncAnalyses) -> Preserved {
    let split = split_exit_edges(f, cx, am);
    let sunk = sink(f, cx, am);
    // The split dropped the analyses; the sinking computed them anew and edits instructions only.
    Preserved::cached_kept(split || sunk)
}

fn sink(f: &mut Function, cx: &ModuleCx, am: &mut FuncAnalyses) -> bool {
    let (cfg, dt, forest) = am.all(f);
    let mut loops: Vec<_> = forest.loops.keys().collect();
    // Innermost first.
    loops.sort_by_key(|&l| std::cmp::Reverse(forest.loops[l].depth));
    let mut changed = false;
    for l in loops {
        let data = &forest.loops[l];
        let exits = forest.exits(l, cfg);
        let writes = written_bases(f, cx, cfg, &data.blocks);
        for e in exits {
            let &[x] = &cfg.preds[e][..] else { continue };
            if !forest.contains(l, x) {
                continue;
            }
            let mut blocks: Vec<Block> = data
                .blocks
                .iter()
                .copied()
                .filter(|&b| dt.dominates(b, x))
                .collect();
            // Later blocks first: a dominator comes before what it dominates in RPO.
            blocks.sort_by_key(|&b| std::cmp::Reverse(cfg.rpo_index[b]));
            for b in blocks {
                let insts: Vec<Inst> = f.layout().block_insts(b).collect();
                for &i in insts.iter().rev() {
                    let movable = movable(f, cx, i, || {
                        writes.as_ref().is_some_and(|w| {
                            let base = base_of(f, cfg, f.arg(i, 0));
                            w.iter().all(|&b| !may_alias(cx, b, base))
                        })
                    });
                    let Some(r) = f.result(i) else { continue };
                    if !movable || !f.has_uses(r) {
                        continue;
                    }
                    let after = f.uses_of(r).all(|u| {
                        f.layout()
                            .inst_block(f.uses().user[u])
                            .is_some_and(|ub| dt.dominates(e, ub))
                    });
                    if !after {
                        continue;
                    }
                    let first = f.layout().first_inst(e).unwrap();
                    f.move_inst_before(i, first);
                    changed = true;
                }
            }
        }
    }
    changed
}
