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
//! The conditions are checked at compile time where everything is constant, else at run time in
//! the preheader: each linear value must stay in the i32 range at both ends of the trip range (it
//! is monotone in `j`, so the ends bound it; then the body's wrapping i32 arithmetic computes it
//! exactly), each addend in `[0, i32::MAX - (m - 1)]`, each initial accumulator in `[0, m)`. The
//! preheader then branches to the loop's exit with the closed forms, or into the loop when a
//! condition fails (the loop is kept for that case and left alone afterwards). Values of the
//! loop used after it must be counters, invariants or the accumulators' next values; the exit
//! receives them as block arguments.
//!
//! Loop shape as for `indvars`: one latch, which is the only exiting block, with an exact trip
//! count (`loop_shape::exact_trip_count`). Needs: loop-simplified form, CFG, dominator tree,
//! loop forest (recomputed after each loop it rewrites). Cost: O(loops * instructions).

use crate::analysis::loop_shape::{
    exact_trip_count, exit_test, single_exit, trip_count, values_used_after, ExitTest, SingleExit,
};
use crate::analysis::loops::Loop;
use crate::analysis::{Cfg, FuncAnalyses, LoopForest, Preserved};
use crate::ir::{mk, Block, Builder, CmpCond, Function, ModuleCx, Opcode, Type, Value};
use crate::rewrite::blocks::remove_unreachable;
use crate::rewrite::loops::{build_trip_count, ensure_preheaders};
use rustc_hash::FxHashMap;

pub fn run(f: &mut Function, cx: &ModuleCx, am: &mut FuncAnalyses) -> Preserved {
    let mut changed = false;
    // Headers already rewritten or refused: the loop kept for the failing guard stays as it is.
    let mut seen: Vec<Block> = Vec::new();
    loop {
        changed |= ensure_preheaders(f, am);
        let (cfg, _, forest) = am.all(f);
        let mut next = None;
        for l in forest.loops.keys() {
            let h = forest.loops[l].header;
            if seen.contains(&h) {
                continue;
            }
            seen.push(h);
            if let Some(plan) = analyze(f, cx, cfg, forest, l) {
                next = Some(plan);
                break;
            }
        }
        let Some(plan) = next else { break };
        let removed = apply(f, &plan);
        am.invalidate(Preserved::none());
        if removed {
            remove_unreachable(f, am);
        }
        changed = true;
    }
    Preserved::unless(changed)
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
}

fn analyze(f: &Function, cx: &ModuleCx, cfg: &Cfg, forest: &LoopForest, l: Loop) -> Option<Plan> {
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
            match value {
                Some(v) if c.eval_int(v, bound) => {}
                Some(_) => return None,
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
    })
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
                let mv = bld.iconst_ty(Type::I64, m);
                // sum_j a_j = K*a_0 + d*K*(K-1)/2, reduced modulo m on the way.
                let a0 = emit_linear(&mut bld, &mut syms, lin, None);
                let ka = bld.binary(Opcode::Mul, k64, a0);
                let t1 = bld.binary(Opcode::Srem, ka, mv);
                let kk = bld.binary(Opcode::Mul, k64, km1);
                let two = bld.iconst_ty(Type::I64, 2);
                let tri = bld.binary(Opcode::Sdiv, kk, two);
                let tri_m = bld.binary(Opcode::Srem, tri, mv);
                let dm = bld.iconst_ty(Type::I64, lin.step.rem_euclid(m));
                let t2 = bld.binary(Opcode::Mul, dm, tri_m);
                let t2 = bld.binary(Opcode::Srem, t2, mv);
                let x0 = bld.unary(Opcode::Sext, Type::I64, init);
                let sum = bld.binary(Opcode::Add, x0, t1);
                let sum = bld.binary(Opcode::Add, sum, t2);
                let r = bld.binary(Opcode::Srem, sum, mv);
                let r = bld.unary(Opcode::Trunc, Type::I32, r);
                finals.push((next, r));
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
