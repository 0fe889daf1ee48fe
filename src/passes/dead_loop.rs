//! Deletion of loops without effects whose results nobody uses.
//!
//! A loop that stores nothing, calls only pure functions, and whose values nothing live after
//! it reads computes nothing observable: the preheader jumps straight to its single exit
//! instead. (C and SysY let a loop without side effects be assumed to terminate.) "Live" is
//! liveness from the roots outside the loop: the loop's results may feed its own branches and
//! dead code outside, such as a phi cycle through an enclosing loop that only this loop reads
//! (a search whose result steers only the next round of the same search). Inlining leaves such
//! loops behind when a pure callee's result was discarded (a swap routine calling a pure
//! helper). `indvars` deletes counted ones; this takes any shape. A loop that only fills a
//! local array nothing reads is dead too: the writes go first (`rewrite::locals`). Rounds
//! repeat while a loop is deleted (each round deletes one at least), dropping the exit
//! parameters the deleted loops read and the arithmetic only they read (a loop feeding only
//! another dead loop goes in the next round). Needs: CFG, dominator tree, loop forest,
//! loop-simplified form.
//! Cost: O(loop sizes) per round, plus a liveness sweep of the function (repeated while a
//! candidate turns out live) when some effect-free loop's values are read outside it.

use crate::analysis::{Cfg, FuncAnalyses, Loop, LoopForest, Preserved};
use crate::ir::{mk, Block, Function, IdSet, ModuleCx, Opcode, Type, Value};
use crate::rewrite::blocks::{remove_params, remove_unreachable};
use crate::rewrite::dead::{live_values, remove_dead};
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
    if dead_loops(f, cx, cfg, forest, false).is_empty() {
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
    let (cfg, _, forest) = am.all(f);
    let dead = dead_loops(f, cx, cfg, forest, true);
    if dead.is_empty() {
        return false;
    }
    let pres: Vec<Block> = dead
        .iter()
        .map(|d| forest.preheader(d.l, cfg).unwrap())
        .collect();
    for (d, pre) in dead.into_iter().zip(pres) {
        let e = d.exit;
        let pt = f.terminator(pre).unwrap();
        // Values of the loop that only dead code outside reads get a constant in their place
        // (that code goes with the next sweep); so do the exit parameters nobody needs.
        let zero_of = |f: &mut Function, ty: Type| -> Value {
            let data = if ty == Type::F32 {
                mk::fconst(0.0)
            } else {
                mk::iconst(ty, 0)
            };
            let i = f.insert_new_before(pt, data, &[]);
            f.result(i).unwrap()
        };
        for v in d.read_outside {
            let z = zero_of(f, f.ty(v));
            f.replace_all_uses(v, z);
        }
        let args: Vec<Value> = d
            .exit_args
            .iter()
            .zip(&f.blocks.params[e].to_vec())
            .map(|(a, &p)| match a {
                Some(v) => *v,
                None => zero_of(f, f.ty(p)),
            })
            .collect();
        f.replace_inst(pt, mk::jump(e), &args);
    }
    true
}

/// A loop found dead, with what its deletion needs.
struct DeadLoop {
    l: Loop,
    exit: Block,
    /// What the preheader passes the exit block instead: the value every exit edge passed
    /// (defined before the loop), or `None` for a parameter nothing live reads.
    exit_args: Vec<Option<Value>>,
    /// Values of the loop that code outside it reads (dead code, or the loop would be live).
    read_outside: Vec<Value>,
}

/// A loop without effects that leaves to a single exit block: deleted if nothing live outside
/// it needs its values.
struct Candidate {
    l: Loop,
    exit: Block,
    /// Whether some value of the loop reaches code outside it (then deadness takes liveness).
    escapes: bool,
}

/// The dead loops of the forest, outermost first and none inside another. A loop is dead when
/// it has no effect (no stores, impure calls or returns), leaves to one exit block, and no root
/// outside every dead loop needs a value it defines: its results may feed its own branches and
/// dead values outside (a phi cycle through an enclosing loop that only the loop itself reads).
/// With `need_preheader`, only loops with a preheader ending in a jump qualify.
fn dead_loops(
    f: &Function,
    cx: &ModuleCx,
    cfg: &Cfg,
    forest: &LoopForest,
    need_preheader: bool,
) -> Vec<DeadLoop> {
    let mut loops: Vec<_> = forest.loops.keys().collect();
    loops.sort_by_key(|&l| forest.loops[l].depth);
    let mut cands: Vec<Candidate> = loops
        .into_iter()
        .filter(|&l| {
            !need_preheader
                || forest
                    .preheader(l, cfg)
                    .is_some_and(|p| f.terminator(p).is_some_and(|t| f.op(t) == Opcode::Jump))
        })
        .filter_map(|l| candidate(f, cx, cfg, forest, l))
        .collect();
    if cands.is_empty() {
        return Vec::new();
    }
    // Liveness with the candidates' instructions not as roots, repeated while a candidate turns
    // out live (its branches are roots then, which may make another one live).
    let mut live: Option<IdSet<Value>> = None;
    if cands.iter().any(|c| c.escapes) {
        loop {
            let mut skip: IdSet<Block> = IdSet::with_capacity(f.num_blocks());
            for c in &cands {
                for &b in &forest.loops[c.l].blocks {
                    skip.insert(b);
                }
            }
            let lv = live_values(f, cx, cfg, &skip);
            let before = cands.len();
            cands.retain(|c| !c.escapes || plan(f, forest, c, Some(&lv)).is_some());
            live = Some(lv);
            if cands.len() == before || cands.is_empty() {
                break;
            }
        }
    }
    let mut out: Vec<DeadLoop> = Vec::new();
    let mut taken: Vec<Loop> = Vec::new();
    for c in &cands {
        let data = &forest.loops[c.l];
        if taken.iter().any(|&t| forest.contains(t, data.header)) {
            continue;
        }
        if let Some(d) = plan(f, forest, c, live.as_ref()) {
            taken.push(c.l);
            out.push(d);
        }
    }
    out
}

/// Whether some instruction outside loop `l` reads `v`.
fn used_outside(f: &Function, forest: &LoopForest, l: Loop, v: Value) -> bool {
    f.uses_of(v).any(|u| {
        f.layout()
            .inst_block(f.uses().user[u])
            .is_none_or(|ub| !forest.contains(l, ub))
    })
}

/// Loop `l` as a candidate: no stores, impure calls or returns inside, one exit block.
fn candidate(
    f: &Function,
    cx: &ModuleCx,
    cfg: &Cfg,
    forest: &LoopForest,
    l: Loop,
) -> Option<Candidate> {
    let data = &forest.loops[l];
    let inside = |b: Block| forest.contains(l, b);
    let used_outside = |v: Value| used_outside(f, forest, l, v);
    let mut exit: Option<Block> = None;
    let mut escapes = false;
    for &b in &data.blocks {
        for i in f.layout().block_insts(b) {
            let effect = match f.op(i) {
                Opcode::Store => true,
                Opcode::Call => !cx.decls[f.callee(i)].effects.pure,
                Opcode::Ret | Opcode::Unreachable => true,
                _ => false,
            };
            if effect {
                return None;
            }
            escapes |= f.result(i).is_some_and(used_outside);
        }
        escapes |= f.blocks.params[b].iter().any(|&p| used_outside(p));
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
    let exit = exit?;
    // Exit edges passing different values, or values of the loop, need liveness too.
    let mut first: Option<&[Value]> = None;
    for &b in &data.blocks {
        let Some(t) = f.terminator(b) else { continue };
        for c in f.branch_targets(t) {
            if c.block != exit {
                continue;
            }
            escapes |= c.args.iter().any(|&a| f.def_block(a).is_none_or(inside));
            match first {
                None => first = Some(c.args),
                Some(a) => escapes |= a != c.args,
            }
        }
    }
    Some(Candidate { l, exit, escapes })
}

/// How to delete candidate `c` given the live values (`None`: the candidate does not escape),
/// or `None` when it is live: a value of the loop is live, or a live exit parameter receives
/// different values or values of the loop, or a dead value needs a constant of a type without
/// one.
fn plan(
    f: &Function,
    forest: &LoopForest,
    c: &Candidate,
    live: Option<&IdSet<Value>>,
) -> Option<DeadLoop> {
    let data = &forest.loops[c.l];
    let inside = |b: Block| forest.contains(c.l, b);
    let is_live = |v: Value| live.is_none_or(|lv| lv.contains(v));
    let has_zero = |ty: Type| ty.is_int() || ty == Type::F32;
    let mut read_outside: Vec<Value> = Vec::new();
    if c.escapes {
        for &b in &data.blocks {
            let results = f.layout().block_insts(b).filter_map(|i| f.result(i));
            for v in f.blocks.params[b].iter().copied().chain(results) {
                if is_live(v) {
                    return None;
                }
                if used_outside(f, forest, c.l, v) {
                    if !has_zero(f.ty(v)) {
                        return None;
                    }
                    read_outside.push(v);
                }
            }
        }
    }
    let params = &f.blocks.params[c.exit];
    let mut exit_args: Vec<Option<Option<Value>>> = vec![None; params.len()];
    for &b in &data.blocks {
        let Some(t) = f.terminator(b) else { continue };
        for e in f.branch_targets(t) {
            if e.block != c.exit {
                continue;
            }
            for (slot, &a) in exit_args.iter_mut().zip(e.args) {
                let a = (!f.def_block(a).is_none_or(inside)).then_some(a);
                *slot = match *slot {
                    None => Some(a),
                    Some(prev) if prev == a => Some(a),
                    Some(_) => Some(None),
                };
            }
        }
    }
    let exit_args: Vec<Option<Value>> = exit_args.into_iter().map(Option::flatten).collect();
    for (a, &p) in exit_args.iter().zip(params) {
        if a.is_none() && (is_live(p) || !has_zero(f.ty(p))) {
            return None;
        }
    }
    Some(DeadLoop {
        l: c.l,
        exit: c.exit,
        exit_args,
        read_outside,
    })
}
