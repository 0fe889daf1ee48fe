//! Peeling the first iteration of a loop whose first iteration exhausts an inner loop.
//!
//! ```c
//! int i = 0, j = 0;
//! while (i < n) {
//!     while (j < n) { ...; j = j + 1; }   // j is not reset: only the first i runs this
//!     out[i] = sum; i = i + 1;
//! }
//! ```
//! Rotated, the outer loop `L` carries `j` in a header parameter `x`, and the inner loop is
//! entered through a guard `brif (icmp cond x, n), inner, skip` with `n` defined outside `L`.
//! When every value `L`'s latches pass for `x` is one for which `icmp cond _, n` is known false
//! (it arrives on the false edge of that very compare: the inner loop's exit test, or the guard
//! itself on the skip path, possibly through block parameters), then from the second iteration
//! on the guard is false. This is a fact about the same predicate on the same values, so no
//! wrapping argument is needed, whatever the condition.
//!
//! The loop's blocks are copied once in front of it (the copy's back edges enter the original
//! header), the preheader enters the copy, and in the original loop the guard compares become
//! `false`: `sccp`/`simplify_cfg`/`dce` then delete the inner loop from the remaining loop, and
//! the copy, which runs with the initial values, is specialised by them (`i == 0`).
//!
//! Values of the loop used after it get a parameter on the exit block below which they are used
//! (fed by the copy's and the original's exit edges); when that exit block has predecessors
//! outside the loop, the loop is left alone. Only when the guard's true edge dominates an inner
//! loop (otherwise the copy buys nothing), the loop is small and has no `alloca`.
//! Needs: loop-simplified form, CFG, dominator tree, loop forest. Cost: O(loop size) per loop.

use crate::analysis::loop_shape::copyable_size;
use crate::analysis::loops::Loop;
use crate::analysis::{Cfg, DomTree, FuncAnalyses, LoopForest, Preserved};
use crate::ir::{mk, Block, CmpCond, Function, Inst, ModuleCx, Opcode, Type, Value};
use crate::rewrite::loops::{copy_loop, ensure_preheaders, escaping_values, route_escapes, Escape};
use rustc_hash::FxHashMap;

/// Largest loop (instructions, nested loops included) that is peeled.
const MAX_SIZE: usize = 200;

/// Peels per function at most (each one removes its guard, so this only bounds nests).
const MAX_PEELS: usize = 4;

pub fn run(f: &mut Function, _cx: &ModuleCx, am: &mut FuncAnalyses) -> Preserved {
    let mut changed = false;
    for _ in 0..MAX_PEELS {
        // A peel adds blocks in front of its loop: restore the form for the next round.
        changed |= ensure_preheaders(f, am);
        let (cfg, dt, forest) = am.all(f);
        let found = forest
            .loops
            .keys()
            .find_map(|l| candidate(f, cfg, dt, forest, l).map(|g| (l, g)));
        let Some((l, plan)) = found else { break };
        let Some(pre) = forest.preheader(l, cfg) else {
            break;
        };
        peel(f, cfg, forest, l, pre, &plan);
        am.invalidate(Preserved::none());
        changed = true;
    }
    Preserved::cached_kept(changed)
}

/// Two values that are the same number: one value or equal integer constants.
fn same(f: &Function, a: Value, b: Value) -> bool {
    a == b
        || matches!((f.as_iconst(a), f.as_iconst(b)), (Some(x), Some(y)) if x == y && f.ty(a) == f.ty(b))
}

/// `c` read as `icmp cond a, bound` with `a` on the left, if it compares `a` at all.
fn compare_of(f: &Function, c: Value, a: Value) -> Option<(CmpCond, Value)> {
    let i = f.def_inst(c)?;
    if f.op(i) != Opcode::Icmp {
        return None;
    }
    let cond = f.data(i).cond();
    let (l, r) = (f.arg(i, 0), f.arg(i, 1));
    if l == a && r != a {
        Some((cond, r))
    } else if r == a && l != a {
        Some((cond.swap(), l))
    } else {
        None
    }
}

/// A predicate `icmp cond _, bound` known to be false of some values.
#[derive(Clone, Copy)]
struct Pred {
    cond: CmpCond,
    bound: Value,
}

struct Prover<'a> {
    f: &'a Function,
    cfg: &'a Cfg,
    dt: &'a DomTree,
    /// Parameters under proof (a cycle proves nothing).
    visiting: Vec<Block>,
    /// Results for parameters, per predicate (a result reached through a cycle is only
    /// conservative, so caching it is sound); keeps diamonds of parameters linear.
    memo: FxHashMap<(Value, u32, Value), bool>,
}

impl Prover<'_> {
    /// Whether taking edge `which` of `q`'s terminator means `icmp cond a, bound` is false.
    fn edge_says(&self, q: Block, which: usize, a: Value, p: Pred) -> bool {
        let f = self.f;
        let Some(t) = f.terminator(q) else {
            return false;
        };
        if f.op(t) != Opcode::Brif {
            return false;
        }
        let targets = f.branch_targets(t);
        if targets[0].block == targets[1].block {
            return false;
        }
        let Some((cond, bound)) = compare_of(f, f.arg(t, 0), a) else {
            return false;
        };
        if !same(f, bound, p.bound) {
            return false;
        }
        // The then edge: the compare holds, so its inverse is false.
        if which == 0 {
            cond.invert() == p.cond
        } else {
            cond == p.cond
        }
    }

    /// Whether `icmp cond a, bound` is false at the end of block `b`: a branch on it
    /// dominates `b`, or `a` is a parameter of a block of the loop (`in_loop`, not its header)
    /// whose every incoming value is known false on its edge.
    fn false_at(&mut self, a: Value, p: Pred, b: Block, in_loop: &dyn Fn(Block) -> bool) -> bool {
        let f = self.f;
        let mut d = Some(b);
        while let Some(x) = d {
            if let [q] = self.cfg.preds[x][..] {
                let t = f.terminator(q).unwrap();
                let which = f.branch_targets(t).iter().position(|c| c.block == x);
                if which.is_some_and(|w| self.edge_says(q, w, a, p)) {
                    return true;
                }
            }
            d = self.dt.idom[x];
        }
        if f.def_inst(a).is_some() {
            return false;
        }
        let Some(pb) = f.def_block(a) else {
            return false;
        };
        if !in_loop(pb) || self.visiting.contains(&pb) {
            return false;
        }
        let key = (a, p.cond as u32, p.bound);
        if let Some(&known) = self.memo.get(&key) {
            return known;
        }
        let k = f.blocks.params[pb].iter().position(|&x| x == a).unwrap();
        self.visiting.push(pb);
        let mut preds = self.cfg.preds[pb].to_vec();
        preds.sort();
        preds.dedup();
        let ok = preds.iter().all(|&q| {
            let t = f.terminator(q).unwrap();
            let edges: Vec<(usize, Value)> = f
                .branch_targets(t)
                .iter()
                .enumerate()
                .filter(|(_, c)| c.block == pb)
                .map(|(w, c)| (w, c.args[k]))
                .collect();
            edges
                .into_iter()
                .all(|(w, v)| self.edge_says(q, w, v, p) || self.false_at(v, p, q, in_loop))
        });
        self.visiting.pop();
        self.memo.insert(key, ok);
        ok
    }
}

/// What peeling a loop does besides copying it.
struct Plan {
    /// Compares that are false after the first iteration.
    guards: Vec<Inst>,
    escapes: Vec<Escape>,
}

/// The plan for peeling loop `l`, when it should be peeled.
fn candidate(f: &Function, cfg: &Cfg, dt: &DomTree, forest: &LoopForest, l: Loop) -> Option<Plan> {
    let data = &forest.loops[l];
    let h = data.header;
    let pre = forest.preheader(l, cfg)?;
    if f.op(f.terminator(pre)?) != Opcode::Jump {
        return None;
    }
    let in_loop = |b: Block| forest.contains(l, b);
    let size = copyable_size(f, &data.blocks)?;
    if size > MAX_SIZE {
        return None;
    }
    let escapes = escaping_values(f, cfg, dt, &data.blocks, &in_loop)?;
    let inner_headers: Vec<Block> = forest
        .loops
        .keys()
        .filter(|&m| m != l && in_loop(forest.loops[m].header))
        .map(|m| forest.loops[m].header)
        .collect();
    // The edge `q -> t` dominates an inner loop's header.
    let guards_inner = |q: Block, t: Block| {
        in_loop(t)
            && t != h
            && cfg.preds[t]
                .iter()
                .all(|&p| if p == q { true } else { dt.dominates(t, p) })
            && cfg.preds[t].iter().filter(|&&p| p == q).count() == 1
            && inner_headers.iter().any(|&ih| dt.dominates(t, ih))
    };
    let mut prover = Prover {
        f,
        cfg,
        dt,
        visiting: Vec::new(),
        memo: FxHashMap::default(),
    };
    let params = f.blocks.params[h].to_vec();
    let mut guards: Vec<Inst> = Vec::new();
    for &q in &data.blocks {
        let Some(t) = f.terminator(q) else { continue };
        if f.op(t) != Opcode::Brif {
            continue;
        }
        let c = f.arg(t, 0);
        let Some(ci) = f.def_inst(c) else { continue };
        if f.op(ci) != Opcode::Icmp || !f.layout().inst_block(ci).is_some_and(in_loop) {
            continue;
        }
        let then = f.branch_targets(t)[0].block;
        if !guards_inner(q, then) {
            continue;
        }
        let Some((k, cond, bound)) = params
            .iter()
            .enumerate()
            .find_map(|(k, &x)| compare_of(f, c, x).map(|(cond, bound)| (k, cond, bound)))
        else {
            continue;
        };
        if f.def_block(bound).is_none_or(in_loop) {
            continue;
        }
        let p = Pred { cond, bound };
        let all_latches = data.latches.iter().all(|&lt| {
            let lt_t = f.terminator(lt).unwrap();
            f.branch_targets(lt_t)
                .iter()
                .filter(|c| c.block == h)
                .all(|c| prover.false_at(c.args[k], p, lt, &in_loop))
        });
        if all_latches {
            guards.push(ci);
        }
    }
    (!guards.is_empty()).then_some(Plan { guards, escapes })
}

/// Copies `l`'s blocks in front of it for its first iteration, routes the escaping values
/// through exit parameters and makes the guards false in the original.
fn peel(f: &mut Function, cfg: &Cfg, forest: &LoopForest, l: Loop, pre: Block, plan: &Plan) {
    let blocks = forest.loops[l].blocks.clone();
    let h = blocks[0];
    let after = f.layout().prev_block(h).unwrap_or(pre);
    // The copy's back edges enter the original loop.
    let copy = copy_loop(f, &blocks, after, h);
    let pt = f.terminator(pre).unwrap();
    f.retarget(pt, h, copy.blocks[&h]);
    let first = f.layout().first_inst(h).unwrap();
    let no = f.insert_new_before(first, mk::iconst(Type::I1, 0), &[]);
    let no = f.result(no).unwrap();
    route_escapes(f, cfg, &plan.escapes, std::slice::from_ref(&copy));
    for &g in &plan.guards {
        let c = f.result(g).unwrap();
        f.replace_all_uses(c, no);
    }
}
