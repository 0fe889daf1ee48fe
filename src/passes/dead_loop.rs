//! Deletion of loops without effects whose results nobody uses.
//!
//! A loop that stores nothing, calls only pure functions, and defines no value used after it
//! computes nothing observable: the preheader jumps straight to its single exit instead. (C and
//! SysY let a loop without side effects be assumed to terminate.) Inlining leaves such loops
//! behind when a pure callee's result was discarded (a swap routine calling a pure helper).
//! `indvars` deletes counted ones; this takes any shape. A loop that only fills a local array
//! nothing reads is dead too: the writes go first (`rewrite::locals`), and the two alternate
//! until neither finds more. Needs: CFG, dominator tree, loop forest, loop-simplified form.
//! Cost: O(loop sizes) per round.

use crate::analysis::{FuncAnalyses, Preserved};
use crate::ir::{mk, Block, Function, ModuleCx, Opcode, Value};
use crate::rewrite::blocks::remove_unreachable;
use crate::rewrite::locals::remove_unread_writes;
use crate::rewrite::loops::ensure_preheaders;

pub fn run(f: &mut Function, cx: &ModuleCx, am: &mut FuncAnalyses) -> Preserved {
    // Writes into local arrays nothing reads go first (the stores of a product no one reads);
    // deleting a loop may remove the last read of another array, whose writing loops may then
    // be dead in turn.
    let mut changed = remove_unread_writes(f, cx);
    if changed {
        am.invalidate(Preserved::block_graph());
    }
    loop {
        if !delete_dead_loops(f, cx, am) {
            break;
        }
        changed = true;
        am.invalidate(Preserved::none());
        remove_unreachable(f, am);
        if !remove_unread_writes(f, cx) {
            break;
        }
        am.invalidate(Preserved::block_graph());
        ensure_preheaders(f, am);
    }
    Preserved::unless(changed)
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
        let inside = |b: Block| forest.contains(l, b);
        let mut exit: Option<Block> = None;
        let mut ok = true;
        'blocks: for &b in &data.blocks {
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
                    ok = false;
                    break 'blocks;
                }
            }
            if f.blocks.params[b].iter().any(|&p| {
                f.uses_of(p).any(|u| {
                    f.layout()
                        .inst_block(f.uses().user[u])
                        .is_none_or(|ub| !inside(ub))
                })
            }) {
                ok = false;
                break;
            }
            for &s in &cfg.succs[b] {
                if inside(s) {
                    continue;
                }
                match exit {
                    None => exit = Some(s),
                    Some(e) if e == s => {}
                    Some(_) => {
                        ok = false;
                        break 'blocks;
                    }
                }
            }
        }
        let Some(e) = exit.filter(|_| ok) else {
            continue;
        };
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
            continue;
        }
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
