//! Sinking out of loops: a value computed on every trip but read only after the loop is
//! computed once, after it.
//!
//! `x = i % k` assigned in a loop and printed after it: every trip computes `x`, and only the last
//! trip's value is read. An instruction of loop `L` moves to the top of `L`'s exit block `E` when
//! - `E` has one predecessor `X` (in `L`), and the instruction's block dominates `X`, so the last
//!   trip, the one that leaves through `X`, computed it, from the same operands, which are still
//!   those values in `E` (their definitions dominate `X` too);
//! - every use is in a block `E` dominates (instructions sunk before it included);
//! - it is pure, a pure call, or a load in a loop that writes no memory (so memory in `E` is as
//!   the last trip left it). A division that could trap trapped in the last trip already.
//!
//! Instructions are visited from the last to the first of each block, blocks in reverse, so a
//! chain whose end is read only after the loop moves as a whole. Inner loops first: what moved to
//! an inner loop's exit may then leave the loop around it. Needs: CFG, dominator tree, loop
//! forest. Keeps the block graph. Cost: O(loop sizes * uses).

use crate::analysis::{FuncAnalyses, Preserved};
use crate::ir::{Block, Function, Inst, ModuleCx, Opcode};

pub fn run(f: &mut Function, cx: &ModuleCx, am: &mut FuncAnalyses) -> Preserved {
    let (cfg, dt, forest) = am.all(f);
    let mut loops: Vec<_> = forest.loops.keys().collect();
    // Innermost first.
    loops.sort_by_key(|&l| std::cmp::Reverse(forest.loops[l].depth));
    let mut changed = false;
    for l in loops {
        let data = &forest.loops[l];
        let exits = forest.exits(l, cfg);
        let writes = data.blocks.iter().any(|&b| {
            f.layout().block_insts(b).any(|i| match f.op(i) {
                Opcode::Store => true,
                Opcode::Call => !cx.decls[f.callee(i)].effects.pure,
                _ => false,
            })
        });
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
                    let movable = match f.op(i) {
                        Opcode::Load => !writes,
                        Opcode::Call => cx.decls[f.callee(i)].effects.pure,
                        Opcode::Alloca => false,
                        op => op.is_pure(),
                    };
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
    Preserved::cfg_kept(changed)
}
