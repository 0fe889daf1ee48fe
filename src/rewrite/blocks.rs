//! Block-level edits shared by several passes: folding branches on constants, deleting unreachable blocks, merging straight-line
//! chains, dropping block parameters together with the matching arguments on every incoming edge.

use crate::analysis::{Cfg, FuncAnalyses};
use crate::ir::{mk, Block, Function, Inst, Opcode, Value};

/// Deletes the blocks unreachable from the entry (they may use each other's values). The cached
/// analyses stay valid (`FuncAnalyses::unreachable_removed`).
pub fn remove_unreachable(f: &mut Function, am: &mut FuncAnalyses) -> bool {
    let cfg = am.cfg(f);
    let dead: Vec<Block> = f
        .layout()
        .blocks()
        .filter(|&b| !cfg.is_reachable(b))
        .collect();
    if dead.is_empty() {
        return false;
    }
    // Unlink every instruction first: dead blocks may use each other's values.
    for &b in &dead {
        let insts: Vec<Inst> = f.layout().block_insts(b).collect();
        for i in insts {
            f.remove_inst(i);
        }
    }
    for &b in &dead {
        f.remove_block(b);
    }
    am.unreachable_removed();
    true
}

/// Turns each `brif` on a constant, or to one block with equal arguments, into a `jump`.
pub fn fold_constant_branches(f: &mut Function) -> bool {
    let mut changed = false;
    let blocks: Vec<Block> = f.layout().blocks().collect();
    for b in blocks {
        let Some(t) = f.terminator(b) else { continue };
        if f.op(t) != Opcode::Brif {
            continue;
        }
        let cond = f.arg(t, 0);
        let pick = match f.as_iconst(cond) {
            Some(c) => Some(if c != 0 { 0 } else { 1 }),
            None => {
                let ts = f.branch_targets(t);
                (ts[0].block == ts[1].block && ts[0].args == ts[1].args).then_some(0)
            }
        };
        if let Some(k) = pick {
            // Copied only for a branch that folds: the rewrite edits the operands read.
            let ts = f.branch_targets(t);
            let (to, args) = (ts[k].block, ts[k].args.to_vec());
            f.replace_inst(t, mk::jump(to), &args);
            changed = true;
        }
    }
    changed
}

/// Removes parameters `dead` (ascending indices) of `b` and the matching arguments on every edge
/// into `b`. The parameters must be unused.
pub fn remove_params(f: &mut Function, cfg: &Cfg, b: Block, dead: &[usize]) {
    let mut preds = cfg.preds[b].to_vec();
    preds.sort();
    preds.dedup();
    for p in preds {
        let Some(t) = f.terminator(p) else { continue };
        let targets: Vec<(Block, Vec<Value>)> = f
            .branch_targets(t)
            .iter()
            .map(|c| (c.block, c.args.to_vec()))
            .collect();
        for (k, (tb, args)) in targets.iter().enumerate() {
            if *tb == b {
                let kept: Vec<Value> = args
                    .iter()
                    .enumerate()
                    .filter(|(n, _)| !dead.contains(n))
                    .map(|(_, &v)| v)
                    .collect();
                f.set_branch_target(t, k, b, &kept);
            }
        }
    }
    for &n in dead.iter().rev() {
        f.remove_block_param(b, n);
    }
}

/// Merges every block whose only predecessor jumps to it unconditionally into that predecessor
/// (its parameters replaced by the jump's arguments; chains collapse in one call). `cfg` must be
/// current; the caller invalidates the analyses when this returns true.
pub fn merge_into_preds(f: &mut Function, cfg: &Cfg) -> bool {
    let mut changed = false;
    let entry = f.entry();
    // A merged block's successors now hang off the block it was merged into.
    let mut merged_into: Vec<Option<Block>> = vec![None; f.num_blocks()];
    let resolve = |merged_into: &Vec<Option<Block>>, mut b: Block| {
        while let Some(x) = merged_into[b.index()] {
            b = x;
        }
        b
    };
    let blocks: Vec<Block> = f.layout().blocks().collect();
    for b in blocks {
        if b == entry || merged_into[b.index()].is_some() || cfg.preds[b].len() != 1 {
            continue;
        }
        let p = resolve(&merged_into, cfg.preds[b][0]);
        if p == b {
            continue;
        }
        let Some(t) = f.terminator(p) else { continue };
        if f.op(t) != Opcode::Jump {
            continue;
        }
        let args = f.args(t).to_vec();
        let params = f.blocks.params[b].to_vec();
        for (&param, &arg) in params.iter().zip(&args) {
            f.replace_all_uses(param, arg);
        }
        f.remove_inst(t);
        for n in (0..params.len()).rev() {
            f.remove_block_param(b, n);
        }
        if let Some(first) = f.layout().first_inst(b) {
            f.split_tail(first, p);
        }
        f.remove_block(b);
        merged_into[b.index()] = Some(p);
        changed = true;
    }
    changed
}

/// When the only edge into `b` is a `jump`, its parameters are that jump's arguments: their
/// uses read the arguments instead and the parameters go. Returns whether any did. Keeps the
/// CFG.
pub fn forward_params(f: &mut Function, cfg: &Cfg, b: Block) -> bool {
    let [p] = cfg.preds[b][..] else { return false };
    let Some(t) = f.terminator(p) else {
        return false;
    };
    if p == b || f.op(t) != Opcode::Jump || f.blocks.params[b].is_empty() {
        return false;
    }
    let args = f.branch_args(t, 0).to_vec();
    let params = f.blocks.params[b].to_vec();
    for (&param, &arg) in params.iter().zip(&args) {
        f.replace_all_uses(param, arg);
    }
    let all: Vec<usize> = (0..params.len()).collect();
    remove_params(f, cfg, b, &all);
    true
}

/// The arguments a jump `jump T(fwd)` in a block with parameters `params` passes to `T` when
/// the block is entered with `args`: each of `fwd` that is one of `params` becomes the matching
/// argument (bypassing a block that only jumps on).
pub fn forwarded_args(fwd: &[Value], params: &[Value], args: &[Value]) -> Vec<Value> {
    fwd.iter()
        .map(|&v| match params.iter().position(|&p| p == v) {
            Some(n) => args[n],
            None => v,
        })
        .collect()
}
