//! CFG simplification.
//!
//! Repeats until nothing changes:
//! 1. `brif` on a constant, or to one block with equal arguments, becomes a `jump`;
//! 2. blocks unreachable from the entry are deleted;
//! 3. a block whose only predecessor jumps to it unconditionally is merged into that
//!    predecessor (its parameters replaced by the jump's arguments);
//! 4. a block holding only a `jump` is bypassed: each predecessor branches straight to the
//!    jump's target, with the block's parameters substituted in the forwarded arguments.
//!
//! Needs: CFG (recomputed after each step that changed something). Cost: O(blocks +
//! instructions) per round; a chain of jump
//! blocks collapses in one round (see `bypass_order`).

use crate::analysis::cfg::BlockLists;
use crate::analysis::{FuncAnalyses, Preserved};
use crate::ir::{Block, Function, IdVec, ModuleCx, Opcode, Value};
use crate::rewrite::blocks::{
    fold_constant_branches, forwarded_args, merge_into_preds, remove_unreachable,
};

pub fn run(f: &mut Function, _cx: &ModuleCx, am: &mut FuncAnalyses) -> Preserved {
    let mut changed = false;
    loop {
        let mut round = fold_constant_branches(f);
        if round {
            am.invalidate(Preserved::none());
        }
        round |= remove_unreachable(f, am);
        let cfg = am.cfg(f);
        if merge_into_preds(f, cfg) {
            am.invalidate(Preserved::none());
            round = true;
        }
        if has_jump_block(f) && bypass_jump_blocks(f, &am.cfg(f).preds) {
            am.invalidate(Preserved::none());
            round = true;
        }
        if !round {
            return Preserved::cached_kept(changed);
        }
        changed = true;
    }
}

/// Whether a block other than the entry holds just a `jump` to another block: the only blocks
/// `bypass_jump_blocks` acts on.
fn has_jump_block(f: &Function) -> bool {
    let entry = f.entry();
    f.layout().blocks().any(|b| {
        b != entry
            && f.layout()
                .first_inst(b)
                .is_some_and(|t| f.op(t) == Opcode::Jump && Block::new(f.data(t).imm as usize) != b)
    })
}

/// `preds`: the CFG's predecessor lists; the edges moved here are added beside them.
fn bypass_jump_blocks(f: &mut Function, preds: &BlockLists) -> bool {
    // Per block: predecessors gained since `preds` was computed.
    let mut added: IdVec<Block, Vec<Block>> = IdVec::filled(preds.len(), Vec::new());
    let mut changed = false;
    let entry = f.entry();
    for b in bypass_order(f) {
        if b == entry || !f.layout().is_block_inserted(b) {
            continue;
        }
        let Some(t) = f.layout().first_inst(b) else {
            continue;
        };
        if f.op(t) != Opcode::Jump {
            continue;
        }
        let c = Block::new(f.data(t).imm as usize);
        if c == b {
            continue;
        }
        let params = f.blocks.params[b].to_vec();
        let fwd = f.args(t).to_vec();
        // The block's parameters may only feed the jump (they could not be used elsewhere:
        // the block holds nothing else, but check the uses to stay safe).
        if params
            .iter()
            .any(|&p| f.uses_of(p).any(|u| f.uses().user[u] != t))
        {
            continue;
        }
        // The lists are only ever added to: entries for removed blocks, or for blocks that no
        // longer branch here, are stale and skipped (the target check below catches the
        // latter). Pruning them eagerly made long chains of jump blocks quadratic.
        let mut bpreds: Vec<Block> = preds[b]
            .iter()
            .chain(&added[b])
            .copied()
            .filter(|&p| f.layout().is_block_inserted(p))
            .collect();
        bpreds.sort();
        bpreds.dedup();
        if bpreds.is_empty() {
            continue;
        }
        for &p in &bpreds {
            let Some(pt) = f.terminator(p) else { continue };
            let targets: Vec<(Block, Vec<Value>)> = f
                .branch_targets(pt)
                .iter()
                .map(|c| (c.block, c.args.to_vec()))
                .collect();
            for (k, (tb, args)) in targets.iter().enumerate() {
                if *tb != b {
                    continue;
                }
                let new_args = forwarded_args(&fwd, &params, args);
                f.set_branch_target(pt, k, c, &new_args);
                added[c].push(p);
            }
        }
        f.remove_inst(t);
        for n in (0..params.len()).rev() {
            f.remove_block_param(b, n);
        }
        f.remove_block(b);
        changed = true;
    }
    changed
}

/// The layout's blocks, reordered so that a block holding only a `jump` comes after the block it
/// jumps to. Bypassing in this order moves every predecessor edge once, straight to the end of a
/// chain of jump blocks; in layout order, a chain whose inner blocks come first would drag its
/// growing predecessor set one hop at a time (quadratic in the length of an else-if chain,
/// whose join blocks are laid out innermost first). O(blocks): each block has at most one such
/// successor, so the chains are followed without recursion.
fn bypass_order(f: &Function) -> Vec<Block> {
    const NEW: u8 = 0;
    const ON_CHAIN: u8 = 1;
    const DONE: u8 = 2;
    let jump_target = |b: Block| -> Option<Block> {
        let t = f.layout().first_inst(b)?;
        (f.op(t) == Opcode::Jump).then(|| Block::new(f.data(t).imm as usize))
    };
    let mut state = vec![NEW; f.num_blocks()];
    let mut order = Vec::new();
    let mut chain = Vec::new();
    for start in f.layout().blocks() {
        let mut b = start;
        // Follow the jumps to a block already placed, one on this chain (a cycle of jump
        // blocks), or one that does not start with a jump.
        while state[b.index()] == NEW {
            state[b.index()] = ON_CHAIN;
            chain.push(b);
            match jump_target(b) {
                Some(c) if f.layout().is_block_inserted(c) => b = c,
                _ => break,
            }
        }
        while let Some(x) = chain.pop() {
            state[x.index()] = DONE;
            order.push(x);
        }
    }
    order
}
