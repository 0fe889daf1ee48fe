//! Induction variables: trip counts, final-value replacement and deletion of loops whose only
//! effect is their final values.
//!
//! Handles loops in the rotated shape lowering produces, with one latch that is also the only
//! exiting block: `latch: brif c, header(..next..), exit(..)` (either edge order). The header
//! parameters the loop reads must all be *affine*: `p_next = p + inv` (an integer invariant,
//! possibly 0). One of them is the counter `i` tested as `icmp lt (i + s), n` (or `le`, `gt`, `ge`) against an
//! invariant `n`, with a constant step `s` whose sign matches the test. The body runs
//! `k = max(1, ceil((n - i0) / s))` times (for `lt`; the others likewise), computed in 64 bits.
//!
//! When the loop has no side effects (no stores, no impure calls) and every loop value used
//! outside it is a header parameter or its next value, the loop is deleted: the preheader jumps to
//! the exit directly, and outside uses see `p0 + k*inv` (next values) or `p0 + (k-1)*inv`
//! (parameters), all in wrapping i32 arithmetic like the loop itself.
//!
//! Overflow: the counter's last value must not wrap, or the original loop would go on. This is
//! guaranteed when `n` and `i0` are constants (checked here) or when the step is ±1 with a strict
//! test (the last value is `n` itself). A step of ±1 with a non-strict test (`i <= n`) passes
//! `n` by one; it could only wrap for `n` at the end of the range, where the loop would never
//! end, and a loop without side effects may be assumed to end (C11 6.8.5p6; such a loop is the
//! only kind deleted here). Other loops are left alone.
//! Needs: loop-simplified form, CFG, dominator tree, loop forest (recomputed after each
//! deletion, which also restores the form).

use crate::analysis::loop_shape::{
    exact_trip_count, exit_test, single_exit, values_used_after, ExitTest, SingleExit,
};
use crate::analysis::loops::Loop;
use crate::analysis::{Cfg, FuncAnalyses, LoopForest, Preserved};
use crate::ir::{mk, Builder, CmpCond, Function, Inst, ModuleCx, Opcode, Type, Value};
use crate::rewrite::blocks::remove_unreachable;
use crate::rewrite::loops::{build_trip_count, ensure_preheaders};
use rustc_hash::FxHashMap;

pub fn run(f: &mut Function, cx: &ModuleCx, am: &mut FuncAnalyses) -> Preserved {
    let mut changed = false;
    for _ in 0..32 {
        changed |= ensure_preheaders(f, am);
        let (cfg, _, forest) = am.all(f);
        let mut done = false;
        for l in forest.loops.keys() {
            if try_delete(f, cx, cfg, forest, l) {
                done = true;
                break;
            }
        }
        if !done {
            break;
        }
        // The loop is unreachable now; delete it together with every other unreachable block
        // (an unreachable block left by an earlier pass may still branch into the loop).
        am.invalidate(Preserved::none());
        remove_unreachable(f, am);
        changed = true;
    }
    Preserved::unless(changed)
}

struct Affine {
    param: Value,
    init: Value,
    next: Value,
    /// `next = param + step`.
    step: Value,
}

fn try_delete(f: &mut Function, cx: &ModuleCx, cfg: &Cfg, forest: &LoopForest, l: Loop) -> bool {
    let h = forest.loops[l].header;
    let Some(SingleExit {
        pre,
        term: t,
        back_when_true,
        back_args,
        exit_args,
        exit,
        ..
    }) = single_exit(f, cx, cfg, forest, l)
    else {
        return false;
    };
    let in_loop = |f: &Function, v: Value| f.def_block(v).is_some_and(|b| forest.contains(l, b));

    // Every header parameter the loop reads is affine. One nothing reads (a value carried
    // around the loop only to be used after it, as promotion leaves a stored value) needs no
    // final value of its own: its next value, if used after the loop, is recomputed below.
    let pre_t = f.terminator(pre).unwrap();
    let init_args = f.args(pre_t).to_vec();
    let params = f.blocks.params[h].to_vec();
    let mut affine = Vec::new();
    for (n, &p) in params.iter().enumerate() {
        if !f.has_uses(p) {
            continue;
        }
        if f.ty(p) != Type::I32 {
            return false;
        }
        let next = back_args[n];
        let step = if next == p {
            None
        } else {
            let Some(i) = f.def_inst(next) else {
                return false;
            };
            if f.op(i) != Opcode::Add {
                return false;
            }
            let (a, b) = (f.arg(i, 0), f.arg(i, 1));
            let s = if a == p {
                b
            } else if b == p {
                a
            } else {
                return false;
            };
            if in_loop(f, s) {
                return false;
            }
            Some(s)
        };
        affine.push((p, init_args[n], next, step));
    }

    // The exit test.
    let Some(ExitTest {
        next: iv_next,
        bound,
        cond,
        ..
    }) = exit_test(f, t, back_when_true, in_loop)
    else {
        return false;
    };
    let Some(&(_, i0, _, Some(step_v))) = affine.iter().find(|a| a.2 == iv_next) else {
        return false;
    };
    let Some(s) = f.as_iconst(step_v) else {
        return false;
    };
    let consts = (f.as_iconst(i0), f.as_iconst(bound));
    let unit_non_strict = matches!(cond, CmpCond::Le | CmpCond::Ge)
        && (s == 1 || s == -1)
        && (consts.0.is_none() || consts.1.is_none());
    let step_agrees = if s > 0 {
        matches!(cond, CmpCond::Lt | CmpCond::Le)
    } else {
        matches!(cond, CmpCond::Gt | CmpCond::Ge)
    };
    let exact = exact_trip_count(cond, s, consts) || (unit_non_strict && step_agrees);
    if !exact {
        return false;
    }

    // Loop values used outside must be parameters or next values.
    let affine: Vec<Affine> = affine
        .into_iter()
        .map(|(param, init, next, step)| Affine {
            param,
            init,
            next,
            step: step.unwrap_or(param),
        })
        .collect();
    let is_param_or_next = |v: Value| affine.iter().any(|a| a.param == v || a.next == v);
    let outside_uses = values_used_after(f, forest, l, &exit_args);
    // Other values used after the loop are recomputed for the last trip.
    let mut last_trip: Vec<Inst> = Vec::new();
    for &v in &outside_uses {
        if !is_param_or_next(v) && !last_trip_tree(f, cx, &params, &in_loop, v, &mut last_trip) {
            return false;
        }
    }

    let last_trip: Vec<(crate::ir::InstData, Vec<Value>, Value)> = last_trip
        .iter()
        .map(|&i| (*f.data(i), f.args(i).to_vec(), f.res(i)))
        .collect();
    // Build k and the final values in the preheader.
    let mut bld = Builder::before(f, pre_t);
    let k = build_trip_count(&mut bld, cond, s, (i0, bound), consts);
    let one = bld.iconst(1);
    let km1 = bld.binary(Opcode::Sub, k, one);
    let mut repl: Vec<(Value, Value)> = Vec::new();
    // The parameters' values on the last trip, for the recomputed values.
    let mut last: FxHashMap<Value, Value> = FxHashMap::default();
    for a in &affine {
        let wants_next = outside_uses.contains(&a.next);
        let wants_param = outside_uses.contains(&a.param)
            || last_trip.iter().any(|(_, args, _)| args.contains(&a.param));
        if !wants_next && !wants_param {
            continue;
        }
        let (fin_next, fin_param) = if a.step == a.param {
            (a.init, a.init)
        } else {
            let kn = bld.binary(Opcode::Mul, k, a.step);
            let fin_next = bld.binary(Opcode::Add, a.init, kn);
            let kp = bld.binary(Opcode::Mul, km1, a.step);
            let fin_param = bld.binary(Opcode::Add, a.init, kp);
            (fin_next, fin_param)
        };
        if wants_next {
            repl.push((a.next, fin_next));
        }
        if outside_uses.contains(&a.param) {
            repl.push((a.param, fin_param));
        }
        last.insert(a.param, fin_param);
    }
    for (d, args, r) in last_trip {
        let args: Vec<Value> = args.iter().map(|x| *last.get(x).unwrap_or(x)).collect();
        let nr = bld.value(d, &args);
        last.insert(r, nr);
        if outside_uses.contains(&r) {
            repl.push((r, nr));
        }
    }
    let new_exit_args: Vec<Value> = exit_args
        .iter()
        .map(|&v| repl.iter().find(|r| r.0 == v).map_or(v, |r| r.1))
        .collect();
    // Outside uses first (uses inside the loop stay until the loop is removed).
    for &(old, new) in &repl {
        let outside = f.uses_outside(old, |b| forest.contains(l, b));
        for u in outside {
            f.set_use(u, new);
        }
    }
    f.replace_inst(pre_t, mk::jump(exit), &new_exit_args);
    true
}

/// The most instructions recomputed for the last trip.
const MAX_LAST_TRIP: usize = 32;

/// Whether `v`, defined in the loop and used after it, can be computed again for the last trip
/// alone: it and what it is computed from in the loop are pure instructions, loads (the loop
/// stores nothing) or pure calls, down to values from outside and header parameters (`params`).
/// Every one of them runs on every trip (they dominate `v`, whose block dominates the latch that
/// is the only exit). Appends the instructions to `out` in an order that defines operands first.
fn last_trip_tree(
    f: &Function,
    cx: &ModuleCx,
    params: &[Value],
    in_loop: &impl Fn(&Function, Value) -> bool,
    v: Value,
    out: &mut Vec<Inst>,
) -> bool {
    if !in_loop(f, v) || params.contains(&v) {
        return true;
    }
    let Some(i) = f.def_inst(v) else {
        return false; // a parameter of a block inside the loop
    };
    if out.contains(&i) {
        return true;
    }
    let ok = match f.op(i) {
        Opcode::Load => true,
        Opcode::Call => cx.decls[f.callee(i)].effects.pure,
        op => op.is_pure(),
    };
    if !ok {
        return false;
    }
    for &a in f.args(i) {
        if !last_trip_tree(f, cx, params, in_loop, a, out) {
            return false;
        }
    }
    out.push(i);
    out.len() <= MAX_LAST_TRIP
}
