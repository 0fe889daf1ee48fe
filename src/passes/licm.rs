//! Loop-invariant code motion.
//!
//! 1. Every loop gets a preheader: a block that only jumps to the header and is the header's
//!    only predecessor from outside the loop (created with the header's parameter types when
//!    missing).
//! 2. Loops are visited innermost first; in each, instructions in reverse post-order whose
//!    operands are all defined outside the loop move to the end of the preheader:
//!    - pure arithmetic freely (division only by a constant other than 0 and -1, since a
//!      hoisted division must not trap when the loop would not have run);
//!    - loads, pure calls and other divisions only when their block runs on every iteration
//!      (it dominates every latch and exit) and, for loads, when nothing in the loop may write
//!      the loaded object (`alias`).
//! Needs: CFG, dominator tree, loop forest (computed here). Cost: O(loops * loop size).

use super::alias::{base_of, escapes, may_alias, Base};
use crate::ir::analysis::loops::Loop;
use crate::ir::analysis::{Cfg, DomTree, LoopForest};
use crate::ir::{mk, Block, Function, Inst, ModuleCx, Opcode, Value};

/// Gives every loop a preheader. Returns whether blocks were added.
pub fn ensure_preheaders(f: &mut Function) -> bool {
    let cfg = Cfg::compute(f);
    let dt = DomTree::compute(f, &cfg);
    let forest = LoopForest::compute(&cfg, &dt);
    let mut changed = false;
    for (l, data) in forest.loops.iter() {
        if forest.preheader(l, &cfg).is_some() {
            continue;
        }
        let h = data.header;
        let mut outside: Vec<Block> = cfg.preds[h]
            .iter()
            .copied()
            .filter(|&p| !forest.contains(l, p))
            .collect();
        outside.sort();
        outside.dedup();
        if outside.is_empty() {
            continue;
        }
        let pre = f.make_block();
        match f.layout().prev_block(h) {
            Some(prev) => f.insert_block_after(pre, prev),
            None => f.append_block(pre),
        }
        // One edge from outside: its arguments move into the preheader's jump, so the loop's
        // initial values stay visible (no block parameters to look through).
        if let [p] = outside[..] {
            let t = f.terminator(p).unwrap();
            let edges: Vec<usize> = f
                .branch_targets(t)
                .iter()
                .enumerate()
                .filter(|(_, c)| c.block == h)
                .map(|(k, _)| k)
                .collect();
            if let [k] = edges[..] {
                let args = f.branch_args(t, k).to_vec();
                f.set_branch_target(t, k, pre, &[]);
                f.append_new(pre, mk::jump(h), &args);
                changed = true;
                continue;
            }
        }
        let tys: Vec<_> = f.blocks.params[h].iter().map(|&p| f.ty(p)).collect();
        let params: Vec<Value> = tys.iter().map(|&t| f.append_block_param(pre, t)).collect();
        f.append_new(pre, mk::jump(h), &params);
        for p in outside {
            let t = f.terminator(p).unwrap();
            f.retarget(t, h, pre);
        }
        changed = true;
    }
    changed
}

/// Whether an instruction may be executed even where the original program would not have.
fn speculatable(f: &Function, i: Inst) -> bool {
    let d = f.data(i);
    match d.op {
        Opcode::Sdiv | Opcode::Srem => {
            matches!(f.as_iconst(f.arg(i, 1)), Some(c) if c != 0 && c != -1)
        }
        Opcode::Alloca | Opcode::Load | Opcode::Call => false,
        op => op.is_pure(),
    }
}

/// Whether an instruction may move at all (given its block runs every iteration).
fn movable(f: &Function, cx: &ModuleCx, i: Inst) -> bool {
    let d = f.data(i);
    match d.op {
        Opcode::Call => cx.decls[f.callee(i)].effects.pure && d.ty != crate::ir::Type::Void,
        Opcode::Load => true,
        Opcode::Alloca => false,
        op => op.is_pure(),
    }
}

struct LoopMem {
    store_bases: Vec<Base>,
    /// A call in the loop may write memory.
    writing_call: bool,
}

fn loop_memory(f: &Function, cx: &ModuleCx, cfg: &Cfg, blocks: &[Block]) -> LoopMem {
    let mut m = LoopMem {
        store_bases: Vec::new(),
        writing_call: false,
    };
    for &b in blocks {
        for i in f.layout().block_insts(b) {
            match f.op(i) {
                Opcode::Store => {
                    let base = base_of(f, cfg, f.arg(i, 1));
                    if !m.store_bases.contains(&base) {
                        m.store_bases.push(base);
                    }
                }
                Opcode::Call => {
                    let e = cx.decls[f.callee(i)].effects;
                    if !e.pure
                        && (e.writes_memory
                            || !cx.decls[f.callee(i)].defined
                            || e == Default::default())
                    {
                        m.writing_call = true;
                    }
                }
                _ => {}
            }
        }
    }
    m
}

pub fn run(f: &mut Function, cx: &ModuleCx) -> bool {
    let mut changed = ensure_preheaders(f);
    let cfg = Cfg::compute(f);
    let dt = DomTree::compute(f, &cfg);
    let forest = LoopForest::compute(&cfg, &dt);
    let loops: Vec<Loop> = forest.loops.keys().collect();
    for l in loops {
        let Some(pre) = forest.preheader(l, &cfg) else {
            continue;
        };
        let data = &forest.loops[l];
        let blocks = data.blocks.clone();
        let latches = data.latches.clone();
        let exiting: Vec<Block> = blocks
            .iter()
            .copied()
            .filter(|&b| cfg.succs[b].iter().any(|&s| !forest.contains(l, s)))
            .collect();
        let mem = loop_memory(f, cx, &cfg, &blocks);
        let pre_term = f.terminator(pre).unwrap();
        for &b in &blocks {
            let every_iteration = !exiting.is_empty()
                && latches.iter().all(|&x| dt.dominates(b, x))
                && exiting.iter().all(|&x| dt.dominates(b, x));
            let insts: Vec<Inst> = f.layout().block_insts(b).collect();
            for i in insts {
                if f.result(i).is_none() || !movable(f, cx, i) {
                    continue;
                }
                let invariant = f.args(i).iter().all(|&a| match f.def_block(a) {
                    Some(db) => !forest.contains(l, db),
                    None => false,
                });
                if !invariant {
                    continue;
                }
                if !speculatable(f, i) {
                    if !every_iteration {
                        continue;
                    }
                    if f.op(i) == Opcode::Load {
                        let base = base_of(f, &cfg, f.arg(i, 0));
                        if mem.store_bases.iter().any(|&sb| may_alias(sb, base)) {
                            continue;
                        }
                        if mem.writing_call {
                            let safe = matches!(base, Base::Alloca(a) if !escapes(f, a));
                            if !safe {
                                continue;
                            }
                        }
                    }
                }
                f.move_inst_before(i, pre_term);
                changed = true;
            }
        }
    }
    changed
}
