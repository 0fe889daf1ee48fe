//! Rewrites that value ranges justify.
//!
//! With the ranges of `analysis::range` (narrowed by the dominating branch conditions where each
//! instruction runs):
//! - an integer compare the ranges decide becomes a constant (`simplify_cfg` drops the branch);
//! - `x / 2^k` and `x % 2^k` with `x >= 0` become a shift and a mask (no rounding fix-up);
//! - `x % c` with `0 <= x < |c|` is `x`; `x / c` with `|x| < |c|` is 0;
//! - `(y * c1) / c2` with `c2` dividing `c1`, where `y * c1` provably does not wrap, is
//!   `y * (c1 / c2)` (so `(i * 60) / 60` is `i`);
//! - `(x / b) / c` with `b, c >= 1` whose product provably does not wrap, and the inner quotient
//!   read nowhere else, is `x / (b * c)`: one division instead of two (truncating division by
//!   positive divisors composes: `trunc(trunc(x / b) / c) = trunc(x / bc)`).
//!
//! Needs: CFG and ranges from the analysis manager. The ranges describe the function as it was: every rewrite is decided first,
//! then applied. Keeps the CFG (only instructions change). Cost: that of the ranges
//! plus O(instructions).

use crate::analysis::{Cfg, FuncAnalyses, Preserved, Ranges};
use crate::ir::{mk, Block, Function, Inst, ModuleCx, Opcode, Type, Value};

pub fn run(f: &mut Function, cx: &ModuleCx, am: &mut FuncAnalyses) -> Preserved {
    let (cfg, _, ranges) = am.ranges(f, cx);
    Preserved::cfg_kept(apply(f, cfg, ranges))
}

/// What one instruction becomes.
enum Rewrite {
    /// The compare's result is this constant.
    Decided(Inst, bool),
    /// `x >> k` (arithmetic; `x >= 0`).
    Shift(Inst, Value, i64),
    /// `x & mask`.
    Mask(Inst, Value, i64),
    /// The result is this value.
    Same(Inst, Value),
    /// The result is `ty` constant 0.
    Zero(Inst),
    /// `y * c`.
    Scale(Inst, Value, i64),
    /// `x / (b * c)`.
    Merge(Inst, Value, Value, Value),
}

/// Applies the rewrites `ranges` (computed on `f` with `cfg`) justify.
pub fn apply(f: &mut Function, cfg: &Cfg, ranges: &Ranges) -> bool {
    let mut rewrites = Vec::new();
    for &b in &cfg.rpo {
        for i in f.layout().block_insts(b) {
            if let Some(r) = decide(f, ranges, b, i) {
                rewrites.push(r);
            }
        }
    }
    if rewrites.is_empty() {
        return false;
    }
    let mut bools: [Option<Value>; 2] = [None, None];
    for r in rewrites {
        match r {
            Rewrite::Decided(i, t) => {
                let v = *bools[t as usize].get_or_insert_with(|| {
                    let entry = f.entry();
                    let k = mk::iconst(Type::I1, t as i64);
                    let ci = match f.layout().first_inst(entry) {
                        Some(first) => f.insert_new_before(first, k, &[]),
                        None => f.append_new(entry, k, &[]),
                    };
                    f.res(ci)
                });
                f.replace_all_uses(f.res(i), v);
            }
            Rewrite::Shift(i, x, k) => {
                let ty = f.data(i).ty;
                let kv = f.insert_new_before(i, mk::iconst(ty, k), &[]);
                let kv = f.res(kv);
                f.replace_inst(i, mk::binary(Opcode::Ashr, ty), &[x, kv]);
            }
            Rewrite::Mask(i, x, m) => {
                let ty = f.data(i).ty;
                let mv = f.insert_new_before(i, mk::iconst(ty, m), &[]);
                let mv = f.res(mv);
                f.replace_inst(i, mk::binary(Opcode::And, ty), &[x, mv]);
            }
            Rewrite::Same(i, x) => f.replace_all_uses(f.res(i), x),
            Rewrite::Zero(i) => {
                let ty = f.data(i).ty;
                f.replace_inst(i, mk::iconst(ty, 0), &[]);
            }
            Rewrite::Scale(i, y, c) => {
                let ty = f.data(i).ty;
                if c == 1 {
                    f.replace_all_uses(f.res(i), y);
                } else {
                    let cv = f.insert_new_before(i, mk::iconst(ty, c), &[]);
                    let cv = f.res(cv);
                    f.replace_inst(i, mk::binary(Opcode::Mul, ty), &[y, cv]);
                }
            }
            Rewrite::Merge(i, x, b, c) => {
                let ty = f.data(i).ty;
                let m = f.insert_new_before(i, mk::binary(Opcode::Mul, ty), &[b, c]);
                let m = f.res(m);
                f.replace_inst(i, mk::binary(Opcode::Sdiv, ty), &[x, m]);
            }
        }
    }
    true
}

fn decide(f: &Function, ranges: &Ranges, b: Block, i: Inst) -> Option<Rewrite> {
    let d = f.data(i);
    let r = f.result(i)?;
    if !f.has_uses(r) {
        return None;
    }
    match d.op {
        Opcode::Icmp => {
            let (x, y) = (f.arg(i, 0), f.arg(i, 1));
            if !f.ty(x).is_int() || (f.as_iconst(x).is_some() && f.as_iconst(y).is_some()) {
                return None; // constants fold elsewhere
            }
            let t = ranges.decide_icmp(f, d.cond(), x, y, b)?;
            Some(Rewrite::Decided(i, t))
        }
        Opcode::Sdiv if f.as_iconst(f.arg(i, 1)).is_none() => {
            nested_quotient(f, ranges, b, i).map(|(x, p, q)| Rewrite::Merge(i, x, p, q))
        }
        Opcode::Sdiv | Opcode::Srem => {
            let (x, c) = (f.arg(i, 0), f.as_iconst(f.arg(i, 1))?);
            if c == 0 || c == i64::MIN {
                return None;
            }
            let rx = ranges.range_at(f, x, b);
            let m = c.abs();
            if d.op == Opcode::Srem {
                if rx.lo >= 0 && rx.hi < m {
                    return Some(Rewrite::Same(i, x));
                }
                if rx.lo >= 0 && (m as u64).is_power_of_two() {
                    return Some(Rewrite::Mask(i, x, m - 1));
                }
                return None;
            }
            if rx.lo > -m && rx.hi < m {
                return Some(Rewrite::Zero(i));
            }
            if c > 1 && rx.lo >= 0 && (c as u64).is_power_of_two() {
                return Some(Rewrite::Shift(i, x, c.trailing_zeros() as i64));
            }
            if c > 0 {
                if let Some((y, c1)) = exact_multiple(f, ranges, x) {
                    if c1 % c == 0 {
                        return Some(Rewrite::Scale(i, y, c1 / c));
                    }
                }
            }
            nested_quotient(f, ranges, b, i).map(|(x, p, q)| Rewrite::Merge(i, x, p, q))
        }
        _ => None,
    }
}

/// For `i = (x / b) / c` in block `blk` whose inner quotient only `i` reads, with `b` and `c` at
/// least 1 and `b * c` inside the type: `(x, b, c)`.
fn nested_quotient(
    f: &Function,
    ranges: &Ranges,
    blk: Block,
    i: Inst,
) -> Option<(Value, Value, Value)> {
    let (q, c) = (f.arg(i, 0), f.arg(i, 1));
    let inner = f.def_inst(q)?;
    if f.op(inner) != Opcode::Sdiv || !f.has_one_use(q) {
        return None;
    }
    let (x, b) = (f.arg(inner, 0), f.arg(inner, 1));
    let rb = ranges.range_at(f, b, f.layout().inst_block(inner)?);
    let rc = ranges.range_at(f, c, blk);
    let max = crate::analysis::Interval::full(f.data(i).ty).hi as i128;
    (rb.lo >= 1 && rc.lo >= 1 && rb.hi as i128 * rc.hi as i128 <= max).then_some((x, b, c))
}

/// `x` as `y * c1` (a `mul` or `shl` by a constant) that provably does not wrap where it is
/// computed.
fn exact_multiple(f: &Function, ranges: &Ranges, x: Value) -> Option<(Value, i64)> {
    let i = f.def_inst(x)?;
    let d = f.data(i);
    if !matches!(d.op, Opcode::Mul | Opcode::Shl) {
        return None;
    }
    let k = f.as_iconst(f.arg(i, 1))?;
    let c1 = match d.op {
        Opcode::Mul => k,
        Opcode::Shl if (0..31).contains(&k) => 1i64 << k,
        _ => return None,
    };
    let y = f.arg(i, 0);
    let b = f.layout().inst_block(i)?;
    let ry = ranges.range_at(f, y, b);
    let full = crate::analysis::Interval::full(d.ty);
    let (lo, hi) = (ry.lo as i128 * c1 as i128, ry.hi as i128 * c1 as i128);
    let (lo, hi) = (lo.min(hi), lo.max(hi));
    (lo >= full.lo as i128 && hi <= full.hi as i128).then_some((y, c1))
}
