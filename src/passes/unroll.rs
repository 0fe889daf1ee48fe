//! Partial unrolling of single-block counted loops, with a runtime trip count.
//!
//! Shape handled (rotated, as lowering makes it): a loop that is one block `B` with a preheader,
//! ending `brif c, B(next..), E(out..)` where `c = icmp lt/le (i + s), n` for a header parameter
//! `i`, a constant step `s > 0` and an invariant bound `n`. The loop becomes
//!
//! ```text
//!   pre:  brif sext(i0) < lim, U(init), B(init)        lim = sext(n) [+1 for le] - (F-1)*s
//!   U(p): F copies of B's body chained, no tests;      brif sext(i_F) < lim, U(next_F), R(next_F)
//!   R(p): brif (i < n), B(p), E(out mapped to p)        at least one more iteration?
//!   B:    unchanged: the remainder loop
//! ```
//!
//! `U` runs only when F whole iterations remain, so no test is needed inside it; the remainder
//! runs in the original loop. Bounds are compared in 64 bits, so no wrap changes the trip count.
//! Requirements: every value of `B` used outside is passed to `E` as a next value (so it can come
//! from `R`'s parameters), and the body is small. Copies of the per-iteration compare and
//! index arithmetic become dead or fold (`offset` chains, `(i+1)+1`) in the cleanups after.
//! Needs: loop-simplified form, CFG, dominator tree, loop forest.

use crate::analysis::loop_shape::{exit_test, ExitTest};
use crate::analysis::{FuncAnalyses, Preserved};
use crate::ir::{mk, Block, Builder, CmpCond, Function, Inst, ModuleCx, Opcode, Type, Value};
use crate::rewrite::blocks::{merge_into_preds, remove_unreachable};
use rustc_hash::FxHashMap;

/// When `exit`'s only predecessor is `b`, values of `b` used after the loop are passed to new
/// parameters of `exit` (which dominates all those uses), so that they can later come from
/// another predecessor too. Returns the (rewritten) terminator and the exit arguments.
fn route_outside_uses(
    f: &mut Function,
    b: Block,
    t: Inst,
    exit: Block,
    body: &[Inst],
) -> Option<(Inst, Vec<Value>)> {
    let which = f.branch_targets(t).iter().position(|c| c.block == exit)?;
    let mut exit_args = f.branch_args(t, which).to_vec();
    let mut defined: Vec<Value> = f.blocks.params[b].to_vec();
    defined.extend(body.iter().filter_map(|&i| f.result(i)));
    let outside = |f: &Function, v: Value| {
        f.uses_of(v)
            .any(|u| f.layout().inst_block(f.uses().user[u]) != Some(b))
    };
    let escaping: Vec<Value> = defined.iter().copied().filter(|&v| outside(f, v)).collect();
    if escaping.is_empty() {
        return Some((t, exit_args));
    }
    // Only when `exit` has no other predecessor.
    for blk in f.layout().blocks() {
        if blk == b {
            continue;
        }
        if let Some(bt) = f.terminator(blk) {
            if f.branch_targets(bt).iter().any(|c| c.block == exit) {
                return None;
            }
        }
    }
    if f.branch_targets(t)
        .iter()
        .filter(|c| c.block == exit)
        .count()
        != 1
    {
        return None;
    }
    for v in escaping {
        let p = f.append_block_param(exit, f.ty(v));
        let uses: Vec<_> = f
            .uses_of(v)
            .filter(|&u| f.layout().inst_block(f.uses().user[u]) != Some(b))
            .collect();
        for u in uses {
            f.set_use(u, p);
        }
        exit_args.push(v);
    }
    f.set_branch_target(t, which, exit, &exit_args);
    Some((t, exit_args))
}

/// Largest body (instructions, terminator excluded) that is unrolled partly.
const MAX_BODY: usize = 48;

/// Loops with a constant trip count up to this many iterations, and at most
/// `MAX_FULL_SIZE` instructions once copied, are unrolled completely.
const MAX_FULL_TRIP: i64 = 64;
const MAX_FULL_SIZE: usize = 256;

fn factor(body: usize) -> usize {
    if body <= 12 {
        8
    } else {
        4
    }
}

pub fn run(f: &mut Function, _cx: &ModuleCx, am: &mut FuncAnalyses) -> Preserved {
    let mut changed = false;
    // After a round that unrolled a loop completely, the loop around it may have become one
    // block (once the copies are merged into it): the next round tries to unroll those
    // completely too, so small constant nests unroll from the inside out while they fit.
    let mut full_only = false;
    loop {
        let (cfg, _, forest) = am.all(f);
        let mut candidates = Vec::new();
        for (l, data) in forest.loops.iter() {
            if data.blocks.len() != 1 {
                continue;
            }
            if let Some(pre) = forest.preheader(l, cfg) {
                candidates.push((data.header, pre, data.parent.is_some()));
            }
        }
        let mut full = false;
        // Another round only pays when a loop unrolled completely had a loop around it.
        let mut full_inner = false;
        for (b, pre, inner) in candidates {
            match unroll(f, b, pre, full_only) {
                Unrolled::No => {}
                Unrolled::Partly => changed = true,
                Unrolled::Completely => {
                    full = true;
                    full_inner |= inner;
                }
            }
        }
        if !full {
            break;
        }
        changed = true;
        am.invalidate(Preserved::none());
        remove_unreachable(f, am);
        // The copies join the blocks around them (forwarding and folding see one block).
        if !merge_into_preds(f, am.cfg(f)) {
            break;
        }
        am.invalidate(Preserved::none());
        if !full_inner {
            break;
        }
        full_only = true;
    }
    Preserved::unless(changed)
}

/// What `unroll` did to a loop.
enum Unrolled {
    No,
    Partly,
    Completely,
}

fn unroll(f: &mut Function, b: Block, pre: Block, full_only: bool) -> Unrolled {
    let Some(t) = f.terminator(b) else {
        return Unrolled::No;
    };
    if f.op(t) != Opcode::Brif {
        return Unrolled::No;
    }
    let targets: Vec<(Block, Vec<Value>)> = f
        .branch_targets(t)
        .iter()
        .map(|c| (c.block, c.args.to_vec()))
        .collect();
    let (back_when_true, back_args, exit, _) = if targets[0].0 == b && targets[1].0 != b {
        (
            true,
            targets[0].1.clone(),
            targets[1].0,
            targets[1].1.clone(),
        )
    } else if targets[1].0 == b && targets[0].0 != b {
        (
            false,
            targets[1].1.clone(),
            targets[0].0,
            targets[0].1.clone(),
        )
    } else {
        return Unrolled::No;
    };
    let body: Vec<Inst> = f.layout().block_insts(b).filter(|&i| i != t).collect();
    if body.len() > MAX_FULL_SIZE / 2 {
        return Unrolled::No;
    }
    let (t, exit_args) = match route_outside_uses(f, b, t, exit, &body) {
        Some(x) => x,
        None => return Unrolled::No,
    };
    let in_b = |f: &Function, v: Value| f.def_block(v) == Some(b);
    // The exit test: icmp (continue when true) of iv_next against an invariant bound.
    let Some(ExitTest {
        cmp,
        next: iv_next,
        bound,
        cond,
    }) = exit_test(f, t, back_when_true, in_b)
    else {
        return Unrolled::No;
    };
    if f.layout().inst_block(cmp) != Some(b) || f.ty(bound) != Type::I32 {
        return Unrolled::No;
    }
    let params = f.blocks.params[b].to_vec();
    let Some(iv_idx) = back_args.iter().position(|&v| v == iv_next) else {
        return Unrolled::No;
    };
    let iv = params[iv_idx];
    let Some(inc) = f.def_inst(iv_next) else {
        return Unrolled::No;
    };
    if f.op(inc) != Opcode::Add || f.arg(inc, 0) != iv {
        return Unrolled::No;
    }
    let Some(s) = f.as_iconst(f.arg(inc, 1)) else {
        return Unrolled::No;
    };
    let extra = match cond {
        CmpCond::Lt if s > 0 => 0,
        CmpCond::Le if s > 0 => 1,
        _ => return Unrolled::No,
    };
    // Exit arguments are next values, invariants, current values (B's parameters: the
    // remainder check receives the last copy's as well) or (for complete unrolling only, which
    // has a last copy to take them from) other values of B; nothing else of B may leave it.
    let mut exit_map = Vec::with_capacity(exit_args.len());
    // For each exit argument that is a current value, the index of its parameter.
    let mut current: Vec<Option<usize>> = Vec::with_capacity(exit_args.len());
    let mut exits_other = false;
    for &a in &exit_args {
        let param = params.iter().position(|&p| p == a);
        let next = back_args.iter().position(|&x| x == a);
        exit_map.push(next);
        current.push(param.filter(|_| next.is_none()));
        if next.is_none() && param.is_none() && in_b(f, a) {
            exits_other = true;
        }
    }
    let mut defined: Vec<Value> = params.clone();
    defined.extend(body.iter().filter_map(|&i| f.result(i)));
    for &v in &defined {
        for u in f.uses_of(v) {
            let user = f.uses().user[u];
            if f.layout().inst_block(user) != Some(b) {
                return Unrolled::No;
            }
        }
    }
    let fac = factor(body.len()) as i64;
    let tys: Vec<Type> = params.iter().map(|&p| f.ty(p)).collect();

    // Preheader: the limit and the choice between the unrolled loop and the original.
    let pre_t = f.terminator(pre).unwrap();
    if f.op(pre_t) != Opcode::Jump {
        return Unrolled::No;
    }
    let init = f.args(pre_t).to_vec();
    if let (Some(i0), Some(n)) = (f.as_iconst(init[iv_idx]), f.as_iconst(bound)) {
        // A constant trip count (the body runs once before the first test).
        let end = n + extra;
        let trip = if end <= i0 { 1 } else { (end - i0 + s - 1) / s };
        if n + s <= i32::MAX as i64
            && trip <= MAX_FULL_TRIP
            && trip as usize * body.len() <= MAX_FULL_SIZE
        {
            full_unroll(
                f,
                b,
                pre_t,
                &body,
                &params,
                &back_args,
                trip as usize,
                exit,
                &exit_map,
                &exit_args,
            );
            return Unrolled::Completely;
        }
    }
    if full_only || exits_other || body.len() > MAX_BODY {
        return Unrolled::No;
    }
    let ub = f.make_block();
    let rb = f.make_block();
    f.insert_block_after(ub, pre);
    f.insert_block_after(rb, b);
    let up: Vec<Value> = tys.iter().map(|&t| f.append_block_param(ub, t)).collect();
    let rp: Vec<Value> = tys.iter().map(|&t| f.append_block_param(rb, t)).collect();
    // The remainder check's parameters for the current values that leave: the last copy's.
    let rc: Vec<Option<Value>> = current
        .iter()
        .map(|c| c.map(|k| f.append_block_param(rb, tys[k])))
        .collect();
    let mut bld = Builder::before(f, pre_t);
    let n64 = bld.unary(Opcode::Sext, Type::I64, bound);
    let lim = bld.iconst_ty(Type::I64, extra - (fac - 1) * s);
    let lim = bld.binary(Opcode::Add, n64, lim);
    let i0 = bld.unary(Opcode::Sext, Type::I64, init[iv_idx]);
    let go = bld.icmp(CmpCond::Lt, i0, lim);
    let mut args = vec![go];
    args.extend_from_slice(&init);
    args.extend_from_slice(&init);
    f.replace_inst(pre_t, mk::brif(ub, b, init.len()), &args);

    // The unrolled body: `fac` chained copies.
    let mut vals = up.clone();
    // The parameters' values in the copy being made: the last copy's once the loop ends.
    let mut last = Vec::new();
    for _ in 0..fac {
        last.clone_from(&vals);
        let mut map: FxHashMap<Value, Value> = FxHashMap::default();
        for (k, &p) in params.iter().enumerate() {
            map.insert(p, vals[k]);
        }
        for &i in &body {
            let d = *f.data(i);
            let a: Vec<Value> = f.args(i).iter().map(|x| *map.get(x).unwrap_or(x)).collect();
            let ni = f.append_new(ub, d, &a);
            if let (Some(r), Some(nr)) = (f.result(i), f.result(ni)) {
                map.insert(r, nr);
            }
        }
        vals = back_args.iter().map(|x| *map.get(x).unwrap_or(x)).collect();
    }
    let mut bld = Builder::at_end(f, ub);
    let inext = bld.unary(Opcode::Sext, Type::I64, vals[iv_idx]);
    let more = bld.icmp(CmpCond::Lt, inext, lim);
    let mut to_check = vals.clone();
    to_check.extend(current.iter().flatten().map(|&k| last[k]));
    bld.brif(more, ub, &vals, rb, &to_check);

    // The remainder check.
    let mut bld = Builder::at_end(f, rb);
    let again = bld.icmp(cond, rp[iv_idx], bound);
    let out: Vec<Value> = exit_map
        .iter()
        .zip(&rc)
        .zip(&exit_args)
        .map(|((m, c), &a)| m.map(|k| rp[k]).or(*c).unwrap_or(a))
        .collect();
    bld.brif(again, b, &rp, exit, &out);
    Unrolled::Partly
}

/// Replaces the loop `b` by `trip` straight-line copies of its body in a new block that the
/// preheader (terminator `pre_t`, a jump) enters and that jumps to `exit` with the last values.
/// `b` becomes unreachable.
#[allow(clippy::too_many_arguments)]
fn full_unroll(
    f: &mut Function,
    b: Block,
    pre_t: Inst,
    body: &[Inst],
    params: &[Value],
    back_args: &[Value],
    trip: usize,
    exit: Block,
    exit_map: &[Option<usize>],
    exit_args: &[Value],
) {
    let init = f.args(pre_t).to_vec();
    let ub = f.make_block();
    f.insert_block_after(ub, b);
    let mut vals = init;
    let mut map: FxHashMap<Value, Value> = FxHashMap::default();
    for _ in 0..trip {
        map.clear();
        for (k, &p) in params.iter().enumerate() {
            map.insert(p, vals[k]);
        }
        for &i in body {
            let d = *f.data(i);
            let a: Vec<Value> = f.args(i).iter().map(|x| *map.get(x).unwrap_or(x)).collect();
            let ni = f.append_new(ub, d, &a);
            if let (Some(r), Some(nr)) = (f.result(i), f.result(ni)) {
                map.insert(r, nr);
            }
        }
        vals = back_args.iter().map(|x| *map.get(x).unwrap_or(x)).collect();
    }
    // Exit arguments are next values, other values of the last copy, or invariants.
    let out: Vec<Value> = exit_map
        .iter()
        .zip(exit_args)
        .map(|(m, &a)| m.map_or_else(|| *map.get(&a).unwrap_or(&a), |k| vals[k]))
        .collect();
    f.append_new(ub, mk::jump(exit), &out);
    f.replace_inst(pre_t, mk::jump(ub), &[]);
    // The copies' exit tests and the last counter steps are dead: drop them now, so that the
    // size a loop around this one is judged by is the size it will have.
    let insts: Vec<Inst> = f.layout().block_insts(ub).collect();
    for &i in insts.iter().rev() {
        if f.op(i).is_pure() && f.result(i).is_some_and(|r| !f.has_uses(r)) {
            f.remove_inst(i);
        }
    }
}
