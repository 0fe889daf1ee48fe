//! Modular recurrences: closed forms for loops that accumulate modulo a constant.
//!
//! A counted loop without side effects whose header parameters are counters and invariants
//! (`p' = p + s`, `s` a constant) and accumulators `x' = (x + a) % m` (`m > 1` a constant, `a` a
//! value of the body) computes
//!
//! ```text
//! x_K = (x_0 + a_0 + a_1 + ... + a_{K-1}) mod m
//! ```
//!
//! after its `K` trips, provided no step wraps: `0 <= x_0 < m` keeps every `x_j` in `[0, m)`, and
//! `0 <= a_j <= i32::MAX - (m - 1)` keeps every `x_j + a_j` from wrapping (so `%` is the
//! mathematical remainder). When every `a_j` is linear in the trip number `j`, built from
//! counters, invariants and constants by `+`, `-`, multiplication by a constant and exact
//! division by a positive constant, the sum has a closed form (`K*a_0 + d*K*(K-1)/2` for
//! `a_j = a_0 + d*j`), computed modulo `m` in 64 bits without overflow.
//!
//! The conditions are checked at compile time where everything is constant or the value ranges
//! (`analysis::range`, at the preheader) decide them, else at run time in the preheader: each
//! linear value must stay in the i32 range at both ends of the trip range (it is monotone in `j`,
//! so the ends bound it; then the body's wrapping i32 arithmetic computes it exactly), each
//! addend in `[0, i32::MAX - (m - 1)]`, each initial accumulator in `[0, m)`. The preheader then
//! branches to the loop's exit with the closed forms, or into the loop when a condition fails
//! (the loop is kept for that case and left alone afterwards). Values of the loop used after it
//! must be counters, invariants or the accumulators' next values; the exit receives them as
//! block arguments.
//!
//! Nests: the closed form is `(x_0 + t) % m` in i32 (`t` the addends' sum reduced modulo `m`,
//! a constant when the trip count and the addends are), the shape of an accumulator again. When
//! no run-time check was needed the loop is gone and the exit's parameters are forwarded, so the
//! loop around it now has a straight-line body `x' = (x + t) % m` and is rewritten in turn:
//! refused loops are looked at again after every rewrite, and a nest of counted loops around
//! such an accumulator closes outward to its outermost loop.
//!
//! Loop shape as for `indvars`: one latch, which is the only exiting block, with an exact trip
//! count (`loop_shape::exact_trip_count`). Needs: loop-simplified form, CFG, dominator tree,
//! loop forest (recomputed after each loop it rewrites), value ranges (computed here, once per
//! rewrite, when a check needs them). Cost: O(loops * instructions) per rewrite.

use crate::analysis::loop_shape::{
    exact_trip_count, exit_test, single_exit, trip_count, values_used_after, ExitTest, SingleExit,
};
use crate::analysis::loops::Loop;
use crate::analysis::{Cfg, DomTree, FuncAnalyses, LoopForest, Preserved, Ranges};
use crate::ir::{mk, Block, Builder, CmpCond, Function, ModuleCx, Opcode, Type, Value};
use crate::rewrite::blocks::{forward_params, remove_unreachable};
use crate::rewrite::loops::{build_trip_count, ensure_preheaders};
use rustc_hash::FxHashMap;

pub fn run(f: &mut Function, cx: &ModuleCx, am: &mut FuncAnalyses) -> Preserved {
    let mut changed = false;
    // Headers of loops kept behind a run-time guard: left as they are for good.
    let mut guarded: Vec<Block> = Vec::new();
    // Headers refused since the last rewrite: a rewrite can turn the loop around it into one
    // this pass reads (its body then computes `a = (a + t) % m` straight-line), so they are
    // looked at again after each change.
    let mut refused: Vec<Block> = Vec::new();
    loop {
        changed |= ensure_preheaders(f, am);
        let (cfg, dt, forest) = am.all(f);
        // Computed on the first loop that needs them, for this version of the function.
        let mut ranges: Option<Ranges> = None;
        let mut next = None;
        for l in forest.loops.keys() {
            let h = forest.loops[l].header;
            if guarded.contains(&h) || refused.contains(&h) {
                continue;
            }
            let lx = LoopCx { cfg, dt, forest, l };
            match analyze(f, cx, &lx, &mut ranges) {
                Some(plan) => {
                    next = Some(plan);
                    break;
                }
                None => refused.push(h),
            }
        }
        let Some(plan) = next else { break };
        refused.clear();
        let removed = apply(f, &plan);
        am.invalidate(Preserved::none());
        if removed {
            remove_unreachable(f, am);
            let cfg = am.cfg(f);
            if forward_params(f, cfg, plan.exit) {
                am.invalidate(Preserved::none());
            }
        } else {
            guarded.push(plan.header);
        }
        changed = true;
    }
    Preserved::cached_kept(changed)
}

/// A value of the body as `c + sum(coef * sym) + j * step` in exact (unbounded) arithmetic,
/// `j` the trip number, `sym` i32 values defined outside the loop.
#[derive(Clone, Debug, PartialEq)]
struct Linear {
    c: i64,
    syms: Vec<(Value, i64)>,
    step: i64,
}

/// Coefficients stay small enough that the 64-bit evaluation in the preheader cannot overflow:
/// |c| < 2^40, |coef| <= 2^20 with at most 4 symbols (each symbol an i32), |step| <= 2^31 with
/// j < 2^31.
const MAX_C: i64 = 1 << 40;
const MAX_COEF: i64 = 1 << 20;
const MAX_SYMS: usize = 4;
const MAX_STEP: i64 = 1 << 31;

impl Linear {
    fn constant(c: i64) -> Linear {
        Linear {
            c,
            syms: Vec::new(),
            step: 0,
        }
    }

    /// An i32 value defined outside the loop: its constant, or itself as a symbol.
    fn of_value(f: &Function, v: Value) -> Linear {
        match f.as_iconst(v) {
            Some(c) => Linear::constant(c),
            None => Linear::symbol(v),
        }
    }

    fn symbol(v: Value) -> Linear {
        Linear {
            c: 0,
            syms: vec![(v, 1)],
            step: 0,
        }
    }

    fn small(self) -> Option<Linear> {
        (self.c.abs() < MAX_C
            && self.step.abs() <= MAX_STEP
            && self.syms.len() <= MAX_SYMS
            && self.syms.iter().all(|&(_, k)| k.abs() <= MAX_COEF))
        .then_some(self)
    }

    fn add(&self, o: &Linear, sign: i64) -> Option<Linear> {
        let mut syms = self.syms.clone();
        for &(v, k) in &o.syms {
            match syms.iter_mut().find(|s| s.0 == v) {
                Some(s) => s.1 += sign * k,
                None => syms.push((v, sign * k)),
            }
        }
        syms.retain(|s| s.1 != 0);
        Linear {
            c: self.c.checked_add(sign * o.c)?,
            syms,
            step: self.step.checked_add(sign * o.step)?,
        }
        .small()
    }

    fn scale(&self, k: i64) -> Option<Linear> {
        Linear {
            c: self.c.checked_mul(k)?,
            syms: self
                .syms
                .iter()
                .map(|&(v, x)| x.checked_mul(k).map(|y| (v, y)))
                .collect::<Option<Vec<_>>>()?,
            step: self.step.checked_mul(k)?,
        }
        .small()
    }

    /// Division by `d > 0` that is exact for every `j` and every symbol value.
    fn exact_div(&self, d: i64) -> Option<Linear> {
        let divisible =
            self.c % d == 0 && self.step % d == 0 && self.syms.iter().all(|s| s.1 % d == 0);
        divisible.then(|| Linear {
            c: self.c / d,
            syms: self.syms.iter().map(|&(v, k)| (v, k / d)).collect(),
            step: self.step / d,
        })
    }
}

/// What a header parameter is.
#[derive(Clone, Copy, Debug)]
enum Param {
    /// `p' = p + step`; 0 for an invariant.
    Counter { step: i64 },
    /// `p' = sum % m`, `sum` being `p` plus an addend.
    Accumulator { sum: Value, m: i64 },
}

struct Plan {
    header: Block,
    /// The loop's blocks.
    blocks: Vec<Block>,
    pre: Block,
    latch: Block,
    exit: Block,
    back_when_true: bool,
    /// Per header parameter: the parameter, its initial value, its next value, its kind.
    params: Vec<(Value, Value, Value, Param)>,
    /// The counter's initial value and bound, the test and the step (for the trip count).
    count: (Value, Value, CmpCond, i64),
    /// Linear forms of the accumulators' addends (by parameter index).
    addends: Vec<(usize, Linear)>,
    /// Run-time checks: a linear value at the first or the last trip, compared with a bound.
    checks: Vec<(Linear, bool, CmpCond, i64)>,
    /// The trip count, when it is a constant.
    k_const: Option<i64>,
}

/// The loop being read and the analyses it is read with.
struct LoopCx<'a> {
    cfg: &'a Cfg,
    dt: &'a DomTree,
    forest: &'a LoopForest,
    l: Loop,
}

/// Reads loop `lx.l`; `ranges` holds the value ranges of `f`, computed here on first need.
fn analyze(f: &Function, cx: &ModuleCx, lx: &LoopCx, ranges: &mut Option<Ranges>) -> Option<Plan> {
    let &LoopCx { cfg, dt, forest, l } = lx;
    let data = &forest.loops[l];
    let h = data.header;
    let SingleExit {
        pre,
        latch,
        exit,
        term: t,
        back_when_true,
        back_args,
        exit_args,
    } = single_exit(f, cx, cfg, forest, l)?;
    let in_loop = |f: &Function, v: Value| f.def_block(v).is_some_and(|b| forest.contains(l, b));

    // Classify the header parameters.
    let init_args = f.args(f.terminator(pre)?).to_vec();
    let mut params = Vec::new();
    for (n, &p) in f.blocks.params[h].iter().enumerate() {
        if f.ty(p) != Type::I32 {
            return None;
        }
        let next = back_args[n];
        let kind = if next == p {
            Param::Counter { step: 0 }
        } else {
            let i = f.def_inst(next)?;
            if !matches!(f.op(i), Opcode::Add | Opcode::Sub | Opcode::Srem) {
                return None;
            }
            let (a, b) = (f.arg(i, 0), f.arg(i, 1));
            match f.op(i) {
                Opcode::Add if a == p || b == p => {
                    let other = if a == p { b } else { a };
                    Param::Counter {
                        step: f.as_iconst(other).filter(|_| !in_loop(f, other))?,
                    }
                }
                Opcode::Sub if a == p => Param::Counter {
                    step: f
                        .as_iconst(b)
                        .filter(|&c| c != i32::MIN as i64 && !in_loop(f, b))?
                        .checked_neg()?,
                },
                Opcode::Srem => Param::Accumulator {
                    sum: a,
                    m: f.as_iconst(b).filter(|&m| m > 1)?,
                },
                _ => return None,
            }
        };
        params.push((p, init_args[n], next, kind));
    }
    if !params
        .iter()
        .any(|p| matches!(p.3, Param::Accumulator { .. }))
    {
        return None;
    }

    // The trip count.
    let ExitTest {
        next: iv_next,
        bound,
        cond,
        ..
    } = exit_test(f, t, back_when_true, in_loop)?;
    let &(_, i0, _, Param::Counter { step: s }) = params.iter().find(|p| p.2 == iv_next)? else {
        return None;
    };
    let consts = (f.as_iconst(i0), f.as_iconst(bound));
    if s == 0 || !exact_trip_count(cond, s, consts) {
        return None;
    }

    // Values used after the loop: counters (parameters or next values), invariants, or the
    // accumulators' next values.
    for v in values_used_after(f, forest, l, &exit_args) {
        let ok = params.iter().any(|&(p, _, next, kind)| match kind {
            Param::Counter { .. } => v == p || v == next,
            Param::Accumulator { .. } => v == next,
        });
        if !ok {
            return None;
        }
    }

    // Linear forms of the addends (each accumulator's sum less the accumulator), with the range
    // every intermediate value must keep.
    let mut checks = Vec::new();
    let mut addends = Vec::new();
    for (n, &(p, _, _, kind)) in params.iter().enumerate() {
        if let Param::Accumulator { sum, m } = kind {
            let mut ev = Eval {
                f,
                in_loop: &in_loop,
                params: &params,
                this: (p, m),
                memo: FxHashMap::default(),
                checks: Vec::new(),
            };
            let mut lin = ev.linear(sum)?;
            let k = lin.syms.iter().position(|s| s.0 == p)?;
            if lin.syms.remove(k).1 != 1 {
                return None;
            }
            checks.extend(ev.checks);
            checks.push((lin.clone(), 0, i32::MAX as i64 - (m - 1)));
            addends.push((n, lin));
        }
    }
    for &(_, init, _, kind) in &params {
        if let Param::Accumulator { m, .. } = kind {
            let lin = Linear::of_value(f, init);
            // The initial value holds at every trip of this linear form (step 0).
            checks.push((lin, 0, m - 1));
        }
    }
    // Checks that hold at compile time go; one that fails there refuses the loop.
    let k_const = match consts {
        (Some(a), Some(b)) => Some(trip_count(cond, a, b, s)),
        _ => None,
    };
    // A linear value is monotone in j: it stays in [lo, hi] when its first value is at least lo
    // and its last at most hi (rising), or the other way round (falling). Each compare that is
    // constant is decided here (a failing one refuses the loop); the rest are run-time checks.
    let mut kept: Vec<(Linear, bool, CmpCond, i64)> = Vec::new();
    for (lin, lo, hi) in checks {
        let rising = lin.step >= 0;
        let compares = [(!rising, CmpCond::Ge, lo), (rising, CmpCond::Le, hi)];
        for (at_last, c, bound) in compares {
            let value = match (lin.syms.is_empty(), at_last && lin.step != 0, k_const) {
                (true, false, _) => Some(lin.c),
                (true, true, Some(k)) => Some(lin.c + (k - 1) * lin.step),
                _ => None,
            };
            // Else the ranges of the symbols where the preheader runs may decide it (an
            // accumulator's start that an outer loop keeps in [0, m)).
            let value = value.map(|v| (v as i128, v as i128)).or_else(|| {
                let j = match (at_last && lin.step != 0, k_const) {
                    (false, _) => 0,
                    (true, Some(k)) => k - 1,
                    (true, None) => return None,
                };
                let r = ranges.get_or_insert_with(|| Ranges::compute(f, cx, cfg, dt));
                Some(linear_range(f, r, pre, &lin, j))
            });
            let decided = value.and_then(|(lo, hi)| {
                let b = bound as i128;
                match c {
                    CmpCond::Ge if lo >= b => Some(true),
                    CmpCond::Ge if hi < b => Some(false),
                    CmpCond::Le if hi <= b => Some(true),
                    CmpCond::Le if lo > b => Some(false),
                    _ => None,
                }
            });
            match decided {
                Some(true) => {}
                Some(false) => return None,
                None => {
                    let check = (lin.clone(), at_last && lin.step != 0, c, bound);
                    if !kept.contains(&check) {
                        kept.push(check);
                    }
                }
            }
        }
    }
    Some(Plan {
        header: h,
        blocks: data.blocks.clone(),
        pre,
        latch,
        exit,
        back_when_true,
        params,
        count: (i0, bound, cond, s),
        addends,
        checks: kept,
        k_const,
    })
}

/// The values `lin` can take at trip `j`, from the ranges of its symbols where `pre` runs.
fn linear_range(f: &Function, ranges: &Ranges, pre: Block, lin: &Linear, j: i64) -> (i128, i128) {
    let at = lin.c as i128 + lin.step as i128 * j as i128;
    let (mut lo, mut hi) = (at, at);
    for &(v, k) in &lin.syms {
        let r = ranges.range_at(f, v, pre);
        let (a, b) = (r.lo as i128 * k as i128, r.hi as i128 * k as i128);
        lo += a.min(b);
        hi += a.max(b);
    }
    (lo, hi)
}

/// Reads body values as linear forms in the trip number.
struct Eval<'a, F: Fn(&Function, Value) -> bool> {
    f: &'a Function,
    in_loop: &'a F,
    params: &'a [(Value, Value, Value, Param)],
    /// The accumulator whose sum is read, and its modulus: it stands for itself (a symbol in
    /// `[0, m)`), every other accumulator is opaque.
    this: (Value, i64),
    memo: FxHashMap<Value, Option<Linear>>,
    checks: Vec<(Linear, i64, i64)>,
}

impl<F: Fn(&Function, Value) -> bool> Eval<'_, F> {
    fn linear(&mut self, v: Value) -> Option<Linear> {
        if let Some(r) = self.memo.get(&v) {
            return r.clone();
        }
        let r = self.compute(v);
        self.memo.insert(v, r.clone());
        r
    }

    fn compute(&mut self, v: Value) -> Option<Linear> {
        let f = self.f;
        if f.ty(v) != Type::I32 {
            return None;
        }
        if let Some(c) = f.as_iconst(v) {
            return Some(Linear::constant(c));
        }
        if !(self.in_loop)(f, v) {
            return Some(Linear::symbol(v));
        }
        if v == self.this.0 {
            return Some(Linear::symbol(v));
        }
        if let Some(&(_, init, _, kind)) = self.params.iter().find(|p| p.0 == v) {
            let Param::Counter { step } = kind else {
                return None;
            };
            let lin = Linear {
                step,
                ..Linear::of_value(f, init)
            }
            .small()?;
            self.in_i32(&lin);
            return Some(lin);
        }
        let i = f.def_inst(v)?;
        let lin = match f.op(i) {
            Opcode::Add | Opcode::Sub => {
                let a = self.linear(f.arg(i, 0))?;
                let b = self.linear(f.arg(i, 1))?;
                a.add(&b, if f.op(i) == Opcode::Add { 1 } else { -1 })?
            }
            Opcode::Mul => {
                let (x, y) = (f.arg(i, 0), f.arg(i, 1));
                match (f.as_iconst(x), f.as_iconst(y)) {
                    (_, Some(k)) => self.linear(x)?.scale(k)?,
                    (Some(k), _) => self.linear(y)?.scale(k)?,
                    _ => return None,
                }
            }
            Opcode::Shl => {
                let k = f.as_iconst(f.arg(i, 1)).filter(|k| (0..31).contains(k))?;
                self.linear(f.arg(i, 0))?.scale(1 << k)?
            }
            Opcode::Sdiv => {
                let d = f.as_iconst(f.arg(i, 1)).filter(|&d| d > 0)?;
                self.linear(f.arg(i, 0))?.exact_div(d)?
            }
            _ => return None,
        };
        self.in_i32(&lin);
        Some(lin)
    }

    /// Records that `lin` must stay in the i32 range; the accumulator's share, in `[0, m)`
    /// times its coefficient, narrows the range the rest must keep.
    fn in_i32(&mut self, lin: &Linear) {
        let (mut lo, mut hi) = (i32::MIN as i64, i32::MAX as i64);
        let mut rest = lin.clone();
        if let Some(k) = rest.syms.iter().position(|s| s.0 == self.this.0) {
            let c = rest.syms.remove(k).1;
            let share = c * (self.this.1 - 1);
            lo -= share.min(0);
            hi -= share.max(0);
        }
        self.checks.push((rest, lo, hi));
    }
}

/// Rewrites the preheader to branch to the exit with the closed forms when the run-time checks
/// hold (or jump there when there are none). Returns whether the loop became unreachable.
fn apply(f: &mut Function, p: &Plan) -> bool {
    let t = f.terminator(p.latch).unwrap();
    let exit_which = if p.back_when_true { 1 } else { 0 };
    // Loop values used after the loop other than through the exit's arguments become exit
    // parameters (only when the exit's one predecessor is the latch can such uses exist: the
    // values must dominate them).
    let loop_values: Vec<Value> = p
        .params
        .iter()
        .flat_map(|&(param, _, next, _)| [param, next])
        .collect();
    for v in loop_values {
        let outside = f.uses_outside(v, |b| p.blocks.contains(&b));
        if outside.is_empty() {
            continue;
        }
        let param = f.append_block_param(p.exit, Type::I32);
        for u in outside {
            f.set_use(u, param);
        }
        let mut args = f.branch_args(t, exit_which).to_vec();
        args.push(v);
        f.set_branch_target(t, exit_which, p.exit, &args);
    }
    let exit_args = f.branch_args(t, exit_which).to_vec();

    let pre_t = f.terminator(p.pre).unwrap();
    let init_args = f.args(pre_t).to_vec();
    let (i0, bound, cond, s) = p.count;
    let consts = (f.as_iconst(i0), f.as_iconst(bound));
    let mut bld = Builder::before(f, pre_t);
    let k = build_trip_count(&mut bld, cond, s, (i0, bound), consts);
    let k64 = bld.unary(Opcode::Sext, Type::I64, k);
    let one = bld.iconst_ty(Type::I64, 1);
    let km1 = bld.binary(Opcode::Sub, k64, one);
    let mut syms: FxHashMap<Value, Value> = FxHashMap::default();

    // Run-time checks.
    let mut guard: Option<Value> = None;
    for (lin, at_last, c, bound) in &p.checks {
        let v = emit_linear(&mut bld, &mut syms, lin, at_last.then_some(km1));
        let b = bld.iconst_ty(Type::I64, *bound);
        let ok = bld.icmp(*c, v, b);
        guard = Some(match guard {
            Some(g) => bld.binary(Opcode::And, g, ok),
            None => ok,
        });
    }

    // Closed forms.
    let one32 = bld.iconst(1);
    let kp = bld.binary(Opcode::Sub, k, one32);
    let mut finals: Vec<(Value, Value)> = Vec::new();
    for (n, &(param, init, next, kind)) in p.params.iter().enumerate() {
        match kind {
            Param::Counter { step: 0 } => {
                finals.push((param, init));
                finals.push((next, init));
            }
            Param::Counter { step } => {
                let sv = bld.iconst(step as i32);
                let kn = bld.binary(Opcode::Mul, k, sv);
                let fin_next = bld.binary(Opcode::Add, init, kn);
                let kpv = bld.binary(Opcode::Mul, kp, sv);
                let fin_param = bld.binary(Opcode::Add, init, kpv);
                finals.push((param, fin_param));
                finals.push((next, fin_next));
            }
            Param::Accumulator { m, .. } => {
                let lin = &p.addends.iter().find(|a| a.0 == n).unwrap().1;
                let t = addend_sum(&mut bld, &mut syms, lin, m, p.k_const, (k64, km1));
                finals.push((next, reduce(&mut bld, init, t, m)));
            }
        }
    }
    let new_exit_args: Vec<Value> = exit_args
        .iter()
        .map(|&v| finals.iter().find(|r| r.0 == v).map_or(v, |r| r.1))
        .collect();
    match guard {
        Some(g) => {
            let n_then = new_exit_args.len();
            let mut args = vec![g];
            args.extend_from_slice(&new_exit_args);
            args.extend_from_slice(&init_args);
            f.replace_inst(pre_t, mk::brif(p.exit, p.header, n_then), &args);
            false
        }
        None => {
            f.replace_inst(pre_t, mk::jump(p.exit), &new_exit_args);
            true
        }
    }
}

/// Emits `(a_0 + a_1 + ... + a_{K-1}) mod m` for the addends `a_j = lin` at trip `j` (each in
/// `[0, i32::MAX - (m - 1)]`, so the sum is not negative), an i64 value in `[0, m)`; a constant
/// when the trip count `k_const` and the addends are. `k` is the trip count in i64, `km1` one
/// less.
fn addend_sum(
    bld: &mut Builder,
    syms: &mut FxHashMap<Value, Value>,
    lin: &Linear,
    m: i64,
    k_const: Option<i64>,
    (k64, km1): (Value, Value),
) -> Value {
    if let (Some(k), true) = (k_const, lin.syms.is_empty()) {
        let (k, m) = (k as i128, m as i128);
        let sum = k * lin.c as i128 + lin.step as i128 * (k * (k - 1) / 2);
        return bld.iconst_ty(Type::I64, sum.rem_euclid(m) as i64);
    }
    let mv = bld.iconst_ty(Type::I64, m);
    // sum_j a_j = K*a_0 + d*K*(K-1)/2, reduced modulo m on the way.
    let a0 = emit_linear(bld, syms, lin, None);
    let ka = bld.binary(Opcode::Mul, k64, a0);
    let t1 = bld.binary(Opcode::Srem, ka, mv);
    if lin.step.rem_euclid(m) == 0 {
        return t1;
    }
    let kk = bld.binary(Opcode::Mul, k64, km1);
    let two = bld.iconst_ty(Type::I64, 2);
    let tri = bld.binary(Opcode::Sdiv, kk, two);
    let tri_m = bld.binary(Opcode::Srem, tri, mv);
    let dm = bld.iconst_ty(Type::I64, lin.step.rem_euclid(m));
    let t2 = bld.binary(Opcode::Mul, dm, tri_m);
    let t2 = bld.binary(Opcode::Srem, t2, mv);
    let t = bld.binary(Opcode::Add, t1, t2);
    bld.binary(Opcode::Srem, t, mv)
}

/// `(x0 + t) mod m` for `x0` (i32) and `t` (i64), both in `[0, m)`. When `2(m - 1)` fits in
/// i32 the sum is taken in i32, in the shape `(x + a) % m` this pass reads as an accumulator:
/// the loop around a rewritten one can then be rewritten in turn.
fn reduce(bld: &mut Builder, x0: Value, t: Value, m: i64) -> Value {
    if 2 * (m - 1) <= i32::MAX as i64 {
        let t32 = match bld.f.as_iconst(t) {
            Some(k) => bld.iconst(k as i32),
            None => bld.unary(Opcode::Trunc, Type::I32, t),
        };
        let sum = bld.binary(Opcode::Add, x0, t32);
        let mv = bld.iconst(m as i32);
        return bld.binary(Opcode::Srem, sum, mv);
    }
    let x = bld.unary(Opcode::Sext, Type::I64, x0);
    let sum = bld.binary(Opcode::Add, x, t);
    let mv = bld.iconst_ty(Type::I64, m);
    let r = bld.binary(Opcode::Srem, sum, mv);
    bld.unary(Opcode::Trunc, Type::I32, r)
}

/// Emits `lin` at trip `j` (`None`: 0) as an i64 value.
fn emit_linear(
    bld: &mut Builder,
    syms: &mut FxHashMap<Value, Value>,
    lin: &Linear,
    j: Option<Value>,
) -> Value {
    let mut terms: Vec<Value> = Vec::new();
    for &(v, k) in &lin.syms {
        let s = *syms
            .entry(v)
            .or_insert_with(|| bld.unary(Opcode::Sext, Type::I64, v));
        terms.push(scaled(bld, s, k));
    }
    if let Some(j) = j.filter(|_| lin.step != 0) {
        terms.push(scaled(bld, j, lin.step));
    }
    if lin.c != 0 || terms.is_empty() {
        terms.push(bld.iconst_ty(Type::I64, lin.c));
    }
    let mut acc = terms[0];
    for &t in &terms[1..] {
        acc = bld.binary(Opcode::Add, acc, t);
    }
    acc
}

fn scaled(bld: &mut Builder, v: Value, k: i64) -> Value {
    if k == 1 {
        return v;
    }
    let kv = bld.iconst_ty(Type::I64, k);
    bld.binary(Opcode::Mul, v, kv)
}
