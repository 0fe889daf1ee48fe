//! Loop unswitching: a loop that branches on a condition computed outside it becomes two
//! loops, one for each value of the condition, chosen once in front of them.
//!
//! ```c
//! while (i < n) { if (flag) a[i] = x; else s = s + a[i]; i = i + 1; }
//! // becomes
//! if (flag) while (i < n) { a[i] = x; i = i + 1; }
//! else      while (i < n) { s = s + a[i]; i = i + 1; }
//! ```
//! The branch is gone from both loops, and each body is one straight run of code that the
//! later passes (invariant code motion, strength reduction, unrolling, scheduling) treat
//! without the other arm in the way. The loop's blocks are copied (`copy_loop`) with their
//! back edges to the copy's own header; the preheader branches on the condition to the
//! original (condition true) or the copy (false); inside each, the condition's uses read the
//! constant, which `simplify_cfg` then folds. Values of the loop used after it get a parameter
//! on their exit block fed by both loops (`route_escapes`); when that is not possible, the
//! loop is left alone.
//!
//! Cost model: a loop is copied only when it is small (`MAX_SIZE` instructions, nested loops
//! included), the condition is not the loop's own exit (a branch out of the loop on an
//! invariant condition is taken at most once; both arms of the unswitched branch stay in the
//! loop), and the function grows by at most `MAX_GROWTH` instructions in all. Calls in the
//! loop do not stop it: a call in one arm often leaves the other arm's loop empty or pure.
//! Needs: loop-simplified form, CFG, dominator tree, loop forest. Cost: O(loop size) per loop.

use crate::analysis::loop_shape::copyable_size;
use crate::analysis::loops::Loop;
use crate::analysis::{Cfg, FuncAnalyses, LoopForest, Preserved};
use crate::ir::{mk, Block, Function, ModuleCx, Opcode, Value};
use crate::rewrite::loops::{copy_loop, ensure_preheaders, escaping_values, route_escapes, Escape};
use rustc_hash::FxHashSet;

/// Largest loop (instructions, nested loops included) that is copied.
const MAX_SIZE: usize = 80;

/// Most instructions a function grows by through unswitching.
const MAX_GROWTH: usize = 240;

/// Unswitches per function at most (each copy may expose another invariant branch).
const MAX_UNSWITCHES: usize = 4;

pub fn run(f: &mut Function, _cx: &ModuleCx, am: &mut FuncAnalyses) -> Preserved {
    let mut changed = false;
    let mut budget = MAX_GROWTH;
    for _ in 0..MAX_UNSWITCHES {
        // An unswitch leaves both loops behind one branching block: restore their preheaders.
        changed |= ensure_preheaders(f, am);
        let (cfg, dt, forest) = am.all(f);
        let found = forest.loops.keys().find_map(|l| {
            let plan = candidate(f, cfg, forest, l, budget)?;
            let escapes = escaping_values(f, cfg, dt, &forest.loops[l].blocks, &|b| {
                forest.contains(l, b)
            })?;
            Some((l, plan, escapes))
        });
        let Some((l, plan, escapes)) = found else {
            break;
        };
        budget -= plan.size;
        unswitch(f, cfg, forest, l, &plan, &escapes);
        am.invalidate(Preserved::none());
        changed = true;
    }
    Preserved::cached_kept(changed)
}

/// What unswitching a loop needs: its preheader, the condition and the loop's size.
struct Plan {
    pre: Block,
    cond: Value,
    size: usize,
}

/// The plan for unswitching loop `l`, if it qualifies.
fn candidate(f: &Function, cfg: &Cfg, forest: &LoopForest, l: Loop, budget: usize) -> Option<Plan> {
    let data = &forest.loops[l];
    let pre = forest.preheader(l, cfg)?;
    if f.op(f.terminator(pre)?) != Opcode::Jump {
        return None;
    }
    let size = copyable_size(f, &data.blocks)?;
    if size > MAX_SIZE || size > budget {
        return None;
    }
    let in_loop = |b: Block| forest.contains(l, b);
    let mut cond = None;
    for &b in &data.blocks {
        for i in f.layout().block_insts(b) {
            match f.op(i) {
                Opcode::Brif if cond.is_none() => {
                    let c = f.arg(i, 0);
                    let targets = f.branch_targets(i);
                    let (t, e) = (targets[0].block, targets[1].block);
                    let invariant = f.def_block(c).is_some_and(|d| !in_loop(d));
                    if invariant && t != e && in_loop(t) && in_loop(e) && f.as_iconst(c).is_none() {
                        cond = Some(c);
                    }
                }
                _ => {}
            }
        }
    }
    Some(Plan {
        pre,
        cond: cond?,
        size,
    })
}

/// Copies loop `l` for the false case of the plan's condition, branches to it or to the
/// original from the preheader, and makes the condition constant inside each.
fn unswitch(
    f: &mut Function,
    cfg: &Cfg,
    forest: &LoopForest,
    l: Loop,
    plan: &Plan,
    escapes: &[Escape],
) {
    let data = &forest.loops[l];
    let blocks = data.blocks.clone();
    let h = data.header;
    let after = f.layout().prev_block(h).unwrap_or(plan.pre);
    let copy = copy_loop(f, &blocks, after, h);
    let h2 = copy.blocks[&h];
    for lt in &data.latches {
        let t = f.terminator(copy.blocks[lt]).unwrap();
        f.retarget(t, h, h2);
    }
    route_escapes(f, cfg, escapes, std::slice::from_ref(&copy));
    // The preheader chooses the loop.
    let pt = f.terminator(plan.pre).unwrap();
    let args: Vec<Value> = f.branch_targets(pt)[0].args.to_vec();
    let c = plan.cond;
    let all: Vec<Value> = [&[c][..], &args, &args].concat();
    f.replace_inst(pt, mk::brif(h, h2, args.len()), &all);
    // Inside each loop the condition is a constant.
    let ty = f.ty(c);
    let first = f.layout().first_inst(h).unwrap();
    let yes = f.insert_new_before(first, mk::iconst(ty, 1), &[]);
    let yes = f.result(yes).unwrap();
    let first = f.layout().first_inst(h2).unwrap();
    let no = f.insert_new_before(first, mk::iconst(ty, 0), &[]);
    let no = f.result(no).unwrap();
    let original: FxHashSet<Block> = blocks.iter().copied().collect();
    let copied: FxHashSet<Block> = copy.blocks.values().copied().collect();
    let uses: Vec<_> = f.uses_of(c).collect();
    for u in uses {
        let user = f.uses().user[u];
        let Some(b) = f.layout().inst_block(user) else {
            continue;
        };
        if original.contains(&b) {
            f.set_use(u, yes);
        } else if copied.contains(&b) {
            f.set_use(u, no);
        }
    }
}
