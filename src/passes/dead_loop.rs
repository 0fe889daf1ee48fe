//! Deletion of loops without effects whose results nobody uses.
//!
//! A loop that stores nothing, calls only pure functions, and defines no value used after it
//! computes nothing observable: the preheader jumps straight to its single exit instead. (C and
//! SysY let a loop without side effects be assumed to terminate.) Inlining leaves such loops
//! behind when a pure callee's result was discarded (a swap routine calling a pure helper).
//! `indvars` deletes counted ones; this takes any shape. A loop that only fills a local array
//! nothing reads is dead too: the writes go first (`rewrite::locals`). Rounds repeat while a
//! loop is deleted (each round deletes one at least), dropping the exit parameters the deleted
//! loops read and the arithmetic only they read (a loop feeding only another dead loop goes in
//! the next round). Needs: CFG, dominator tree, loop forest, loop-simplified form.
//! Cost: O(loop sizes) per round.

use crate::analysis::{Cfg, FuncAnalyses, Loop, LoopForest, Preserved};
use crate::ir::{mk, Block, Function, ModuleCx, Opcode, Value};
use crate::rewrite::blocks::{remove_params, remove_unreachable};
use crate::rewrite::dead::remove_dead;
use crate::rewrite::locals::remove_unread_writes;
use crate::rewrite::loops::ensure_preheaders;

pub fn run(f: &mut Function, cx: &ModuleCx, am: &mut FuncAnalyses) -> Preserved {
    // Writes into local arrays nothing reads go first (the stores of a product no one reads),
    // and the arithmetic nothing reads. Rounds repeat while loops are deleted: deleting one may
    // remove the last read of another loop's result or array.
    let mut changed = remove_unread(f, cx, am);
    loop {
        changed |= drop_unused_exit_params(f, am);
        if !delete_dead_loops(f, cx, am) {
            break;
        }
        changed = true;
        am.invalidate(Preserved::none());
        remove_unreachable(f, am);
        // The deleted loops' reads are gone: a loop that fed only them (a value, or writes into
        // a local array, or arithmetic only they read) may be dead now.
        remove_unread(f, cx, am);
        ensure_preheaders(f, am);
    }
    Preserved::unless(changed)
}

/// `run` for a place in the pipeline where dead loops are rare: the function is left untouched
/// (no preheaders added, no values renumbered) unless some loop is dead already.
pub fn run_if_any(f: &mut Function, cx: &ModuleCx, am: &mut FuncAnalyses) -> Preserved {
    let (cfg, _, forest) = am.all(f);
    if !forest
        .loops
        .keys()
        .any(|l| dead_loop_exit(f, cx, cfg, forest, l).is_some())
    {
        return Preserved::all();
    }
    if ensure_preheaders(f, am) {
        am.invalidate(Preserved::none().union(Preserved::LOOP_SIMPLIFIED));
        run(f, cx, am);
        return Preserved::none();
    }
    run(f, cx, am)
}

/// Removes the writes into local arrays nothing reads, then the values nothing needs; keeps the
/// block graph.
fn remove_unread(f: &mut Function, cx: &ModuleCx, am: &mut FuncAnalyses) -> bool {
    let mut changed = remove_unread_writes(f, cx);
    if changed {
        am.invalidate(Preserved::block_graph());
    }
    if remove_dead(f, cx, am.cfg(f)) {
        am.invalidate(Preserved::block_graph());
        changed = true;
    }
    changed
}

/// Drops the parameters nothing reads of loops' exit blocks (the result of a loop whose reader
/// was deleted), so that they do not tie the exit edges to values of the loop.
fn drop_unused_exit_params(f: &mut Function, am: &mut FuncAnalyses) -> bool {
    let (cfg, _, forest) = am.all(f);
    let mut exits: Vec<Block> = forest
        .loops
        .keys()
        .flat_map(|l| forest.exits(l, cfg))
        .collect();
    exits.sort();
    exits.dedup();
    let mut changed = false;
    for e in exits {
        let dead: Vec<usize> = f.blocks.params[e]
            .iter()
            .enumerate()
            .filter(|&(_, &p)| !f.has_uses(p))
            .map(|(n, _)| n)
            .collect();
        if !dead.is_empty() {
            remove_params(f, cfg, e, &dead);
            changed = true;
        }
    }
    if changed {
        am.invalidate(Preserved::block_graph());
    }
    changed
}

/// Deletes the dead loops of one loop forest; returns whether there was one (its blocks are
/// left unreachable).
fn delete_dead_loops(f: &mut Function, cx: &ModuleCx, am: &mut FuncAnalyses) -> bool {
    let mut changed = false;
    let (cfg, _, forest) = am.all(f);
    // Outermost first: deleting one removes the loops inside it too.
    let mut loops: Vec<_> = forest.loops.keys().collect();
    loops.sort_by_key(|&l| forest.loops[l].depth);
    let mut deleted: Vec<Block> = Vec::new();
    for l in loops {
        let data = &forest.loops[l];
        if deleted.contains(&data.header) {
            continue;
        }
        let Some(pre) = forest.preheader(l, cfg) else {
            continue;
        };
        let Some((e, args)) = dead_loop_exit(f, cx, cfg, forest, l) else {
            continue;
        };
        let pt = f.terminator(pre).unwrap();
        if f.op(pt) != Opcode::Jump {
            continue;
        }
        f.replace_inst(pt, mk::jump(e), &args);
        deleted.extend(data.blocks.iter().copied());
        changed = true;
    }
    changed
}

/// The exit block of loop `l` and the values its exit edges pass, when the loop is dead: no
/// stores, impure calls or returns inside, no value of it used outside, one exit block reached
/// with the same arguments, all defined before the loop.
fn dead_loop_exit(
    f: &Function,
    cx: &ModuleCx,
    cfg: &Cfg,
    forest: &LoopForest,
    l: Loop,
) -> Option<(Block, Vec<Value>)> {
    let data = &forest.loops[l];
    let inside = |b: Block| forest.contains(l, b);
    let mut exit: Option<Block> = None;
    let mut ok = true;
    for &b in &data.blocks {
        for i in f.layout().block_insts(b) {
            let effect = match f.op(i) {
                Opcode::Store => true,
                Opcode::Call => !cx.decls[f.callee(i)].effects.pure,
                Opcode::Ret | Opcode::Unreachable => true,
                _ => false,
            };
            let used_outside = |v: Value| {
                f.uses_of(v).any(|u| {
                    f.layout()
                        .inst_block(f.uses().user[u])
                        .is_none_or(|ub| !inside(ub))
                })
            };
            if effect || f.result(i).is_some_and(used_outside) {
                return None;
            }
        }
        if f.blocks.params[b].iter().any(|&p| {
            f.uses_of(p).any(|u| {
                f.layout()
                    .inst_block(f.uses().user[u])
                    .is_none_or(|ub| !inside(ub))
            })
        }) {
            return None;
        }
        for &s in &cfg.succs[b] {
            if inside(s) {
                continue;
            }
            match exit {
                None => exit = Some(s),
                Some(e) if e == s => {}
                Some(_) => return None,
            }
        }
    }
    let e = exit?;
    // Every exit edge must pass the same values, all defined before the loop.
    let mut exit_args: Option<Vec<Value>> = None;
    for &b in &data.blocks {
        let Some(t) = f.terminator(b) else { continue };
        for c in f.branch_targets(t) {
            if c.block != e {
                continue;
            }
            match &exit_args {
                None => exit_args = Some(c.args.to_vec()),
                Some(a) if a[..] == c.args[..] => {}
                Some(_) => ok = false,
            }
        }
    }
    let args = exit_args.unwrap_or_default();
    if !ok || args.iter().any(|&a| f.def_block(a).is_none_or(inside)) {
        return None;
    }
    Some((e, args))
}
