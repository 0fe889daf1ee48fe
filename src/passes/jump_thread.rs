//! Jump threading over constant block arguments.
//!
//! A block `b` that only computes a condition from its parameters and branches on it
//! (`bb(v): c = icmp.ge v, 0; brif c, T, E`) decides the branch at compile time for every
//! predecessor edge that passes constants. Such an edge goes straight to `T` or `E`. Short-
//! circuit conditions and inlined `return -1` guards produce exactly these merges; after
//! threading, the merge keeps one predecessor, `simplify_cfg` folds it into that predecessor, and
//! `condprop` sees the conditions tested above it.
//!
//! A condition computed above the merge is decided on an edge by a branch on the same value:
//! the predecessor's own (`brif c, b, X`: `c` is true on that edge), or the branch into the top
//! of the single-predecessor chain that ends at the predecessor. A loop `while (i < n && a[i] !=
//! k)` followed by `if (i < n)` re-tests `i < n` in the merge of its two exits; the exit from
//! the first test goes straight to the `else`, the one from the second straight to the `then`.
//!
//! Only blocks of at most `MAX_INSTS` pure instructions whose values are used nowhere else are
//! threaded, so nothing is duplicated. Needs: CFG. Cost: O(edges * (MAX_INSTS + MAX_CHAIN)).

use crate::analysis::{Cfg, FuncAnalyses, Preserved};
use crate::ir::fold::{fold, Const};
use crate::ir::{Block, Function, Inst, ModuleCx, Opcode, Value, ValueDef};
use rustc_hash::{FxHashMap, FxHashSet};

const MAX_INSTS: usize = 8;

/// How far up a single-predecessor chain a deciding branch is looked for.
const MAX_CHAIN: usize = 16;

fn constant(f: &Function, env: &FxHashMap<Value, Const>, v: Value) -> Option<Const> {
    if let Some(&c) = env.get(&v) {
        return Some(c);
    }
    let i = f.def_inst(v)?;
    match f.op(i) {
        Opcode::Iconst | Opcode::Fconst => fold(f.data(i), &[]),
        _ => None,
    }
}

/// Whether every value `b` defines is used only inside `b`.
fn self_contained(f: &Function, b: Block, insts: &[Inst]) -> bool {
    let local = |v: Value| {
        f.uses_of(v)
            .all(|u| f.layout().inst_block(f.uses().user[u]) == Some(b))
    };
    f.blocks.params[b].iter().all(|&p| local(p))
        && insts.iter().all(|&i| f.result(i).is_none_or(local))
}

/// Which way a branch on `c` went to reach `q` (true edge, false edge), when it is `q`'s only
/// way in: `q`'s single predecessor branches on `c` with one target `q`.
fn branch_into(f: &Function, preds: &[Block], c: Value, q: Block) -> Option<bool> {
    let &[r] = preds else { return None };
    let rt = f.terminator(r)?;
    if f.op(rt) != Opcode::Brif || f.arg(rt, 0) != c {
        return None;
    }
    let ts = f.branch_targets(rt);
    (ts[0].block != ts[1].block).then_some(ts[0].block == q)
}

/// The value of the condition `c` on the `k`-th edge out of `p`, decided by `p`'s own branch on
/// `c` or by the branch on `c` into the top of the single-predecessor chain ending at `p`.
/// Blocks that gained predecessors since `cfg` was computed end the walk (their lists are stale).
fn known_on_edge(
    f: &Function,
    cfg: &Cfg,
    gained: &FxHashSet<Block>,
    c: Value,
    p: Block,
    k: usize,
) -> Option<bool> {
    let pt = f.terminator(p)?;
    if f.op(pt) == Opcode::Brif && f.arg(pt, 0) == c {
        let ts = f.branch_targets(pt);
        return (ts[0].block != ts[1].block).then_some(k == 0);
    }
    let mut q = p;
    for _ in 0..MAX_CHAIN {
        if gained.contains(&q) {
            return None;
        }
        let mut preds = cfg.preds[q].to_vec();
        preds.sort();
        preds.dedup();
        if let Some(known) = branch_into(f, &preds, c, q) {
            return Some(known);
        }
        match preds[..] {
            [r] if r != q => q = r,
            _ => return None,
        }
    }
    None
}

pub fn run(f: &mut Function, _cx: &ModuleCx, am: &mut FuncAnalyses) -> Preserved {
    let cfg = am.cfg(f);
    let entry = f.entry();
    let mut changed = false;
    let mut gained: FxHashSet<Block> = FxHashSet::default();
    for &b in &cfg.rpo {
        if b == entry {
            continue;
        }
        let Some(t) = f.terminator(b) else { continue };
        if f.op(t) != Opcode::Brif {
            continue;
        }
        let insts: Vec<Inst> = f.layout().block_insts(b).filter(|&i| i != t).collect();
        if insts.len() > MAX_INSTS
            || !insts.iter().all(|&i| f.op(i).is_pure())
            || !self_contained(f, b, &insts)
        {
            continue;
        }
        let mut preds = cfg.preds[b].to_vec();
        preds.sort();
        preds.dedup();
        for p in preds {
            let Some(pt) = f.terminator(p) else { continue };
            let edges: Vec<(usize, Vec<Value>)> = f
                .branch_targets(pt)
                .iter()
                .enumerate()
                .filter(|(_, c)| c.block == b)
                .map(|(k, c)| (k, c.args.to_vec()))
                .collect();
            for (k, args) in edges {
                let mut env: FxHashMap<Value, Const> = FxHashMap::default();
                let c = f.arg(t, 0);
                if f.def_block(c) != Some(b) && f.ty(c).is_int() {
                    if let Some(known) = known_on_edge(f, cfg, &gained, c, p, k) {
                        env.insert(c, Const::int(f.ty(c), known as i64));
                    }
                }
                for (n, &a) in args.iter().enumerate() {
                    if let Some(c) = constant(f, &env, a) {
                        env.insert(f.blocks.params[b][n], c);
                    }
                }
                for &i in &insts {
                    let cs: Option<Vec<Const>> =
                        f.args(i).iter().map(|&a| constant(f, &env, a)).collect();
                    if let Some(r) = cs.and_then(|cs| fold(f.data(i), &cs)) {
                        env.insert(f.res(i), r);
                    }
                }
                let Some(cond) = constant(f, &env, f.arg(t, 0)).and_then(Const::as_int) else {
                    continue;
                };
                let which = if cond != 0 { 0 } else { 1 };
                let target = f.branch_targets(t)[which].block;
                if target == b {
                    continue;
                }
                let targs = f.branch_args(t, which).to_vec();
                // Each argument of the decided edge, from the predecessor's point of view.
                enum Arg {
                    Value(Value),
                    Const(Const),
                }
                let mut plan = Vec::with_capacity(targs.len());
                for a in targs {
                    plan.push(match f.value_def(a) {
                        ValueDef::Param(pb, n) if pb == b => Arg::Value(args[n as usize]),
                        _ if f.def_block(a) == Some(b) => match env.get(&a) {
                            Some(&c) => Arg::Const(c),
                            None => break,
                        },
                        _ => Arg::Value(a),
                    });
                }
                if plan.len() != f.branch_args(t, which).len() {
                    continue;
                }
                let new_args: Vec<Value> = plan
                    .into_iter()
                    .map(|a| match a {
                        Arg::Value(v) => v,
                        Arg::Const(c) => {
                            let ci = f.insert_new_before(pt, c.to_inst(), &[]);
                            f.res(ci)
                        }
                    })
                    .collect();
                let pt = f.terminator(p).unwrap();
                f.set_branch_target(pt, k, target, &new_args);
                gained.insert(target);
                changed = true;
            }
        }
    }
    Preserved::unless(changed)
}
