//! Dead code: mark and sweep, aggressive over block parameters.
//!
//! Roots are instructions with effects: stores, terminators and calls to functions that write
//! memory or perform I/O (a call that only reads, unused, goes like any unused value). Marking a
//! value live marks its definition: an instruction (and its operands) or a block parameter (and
//! the matching argument on every incoming edge; a branch's own arguments are not roots).
//! Unmarked instructions and block parameters are removed, so dead phi cycles go too.
//! Cost: O(instructions + uses).

use crate::analysis::Cfg;
use crate::ir::{Block, Function, IdSet, Inst, ModuleCx, Opcode, Value, ValueDef};

/// Whether `i` must stay even when its result is unused.
pub fn is_root(f: &Function, cx: &ModuleCx, i: Inst) -> bool {
    match f.op(i) {
        Opcode::Store | Opcode::Jump | Opcode::Brif | Opcode::Ret | Opcode::Unreachable => true,
        Opcode::Call => !cx.decls[f.callee(i)].effects.removable_if_unused(),
        _ => false,
    }
}

/// The values some root needs when the instructions of the blocks in `not_roots` are not roots
/// (what stays live if those blocks went away: a loop whose results only its own branches and
/// dead values read is dead). Cost: O(instructions + uses).
pub fn live_values(
    f: &Function,
    cx: &ModuleCx,
    cfg: &Cfg,
    not_roots: &IdSet<Block>,
) -> IdSet<Value> {
    let blocks: Vec<Block> = f.layout().blocks().collect();
    mark(f, cx, cfg, &blocks, Some(not_roots)).live_val
}

struct Marks {
    live_inst: IdSet<Inst>,
    live_val: IdSet<Value>,
    num_insts: usize,
    num_live: usize,
}

fn mark(
    f: &Function,
    cx: &ModuleCx,
    cfg: &Cfg,
    blocks: &[Block],
    not_roots: Option<&IdSet<Block>>,
) -> Marks {
    let mut live_inst: IdSet<Inst> = IdSet::with_capacity(f.num_insts());
    let mut live_val: IdSet<Value> = IdSet::with_capacity(f.num_values());
    let mut work: Vec<Value> = Vec::new();

    // Instructions in the layout, and those marked live (operands of linked instructions are
    // defined by linked ones, so every mark is one of them).
    let (mut num_insts, mut num_live) = (0usize, 0usize);
    for &b in blocks {
        let skipped = not_roots.is_some_and(|s| s.contains(b));
        for i in f.layout().block_insts(b) {
            num_insts += 1;
            if !skipped && is_root(f, cx, i) {
                live_inst.insert(i);
                num_live += 1;
                let args = f.args(i);
                let roots = match f.op(i) {
                    Opcode::Jump => &args[..0],
                    Opcode::Brif => &args[..1],
                    _ => args,
                };
                work.extend_from_slice(roots);
            }
        }
    }
    for &p in f.params() {
        live_val.insert(p);
    }
    while let Some(v) = work.pop() {
        if !live_val.insert(v) {
            continue;
        }
        match f.value_def(v) {
            ValueDef::Result(i) => {
                if live_inst.insert(i) {
                    num_live += 1;
                    work.extend_from_slice(f.args(i));
                }
            }
            ValueDef::Param(b, n) => {
                for &p in &cfg.preds[b] {
                    let Some(t) = f.terminator(p) else { continue };
                    for c in f.branch_targets(t) {
                        if c.block == b {
                            work.push(c.args[n as usize]);
                        }
                    }
                }
            }
        }
    }
    Marks {
        live_inst,
        live_val,
        num_insts,
        num_live,
    }
}

/// Removes the instructions and block parameters no root needs. Returns whether any went; the
/// CFG stays valid (only instructions and parameters go, every branch keeps its targets).
pub fn remove_dead(f: &mut Function, cx: &ModuleCx, cfg: &Cfg) -> bool {
    let blocks: Vec<Block> = f.layout().blocks().collect();
    let Marks {
        live_inst,
        live_val,
        num_insts,
        num_live,
    } = mark(f, cx, cfg, &blocks, None);

    let mut changed = false;
    // Sweep instructions, last to first so users go before their operands; nothing to do when
    // every instruction in the layout was marked.
    if num_live != num_insts {
        for &b in &blocks {
            let mut at = f.layout().last_inst(b);
            while let Some(i) = at {
                at = f.layout().prev_inst(i);
                if !live_inst.contains(i) {
                    f.remove_inst(i);
                    changed = true;
                }
            }
        }
    }
    // Sweep block parameters (never the entry's: they are the function's arguments).
    let entry = f.entry();
    for &b in &blocks {
        if b == entry {
            continue;
        }
        let params = &f.blocks.params[b];
        if params.iter().all(|&p| live_val.contains(p)) {
            continue;
        }
        let dead: Vec<usize> = params
            .iter()
            .enumerate()
            .filter(|(_, &p)| !live_val.contains(p))
            .map(|(k, _)| k)
            .collect();
        changed = true;
        super::blocks::remove_params(f, cfg, b, &dead);
    }
    changed
}
