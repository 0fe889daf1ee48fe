//! A dependence test for two accesses to the same object inside a loop.
//!
//! Each address is read as its root pointer plus a byte offset that is linear in SSA values
//! (`gep` indices through `add`, `sub`, and multiplication or shift by constants; `offset`
//! constants). Two accesses with the same root are disjoint when the difference of their
//! offsets, a linear form, is at least the other's size in every iteration, or at most minus
//! this one's size. Counters of the loop in the difference are replaced by the end of their
//! range ([`ivrange::counter_range`](super::ivrange::counter_range)) that makes the difference
//! smallest (or largest); the test succeeds when what is left is a constant.
//!
//! `table[i][j]` against `table[i][k]` in `while (k < j)` differs by `4 * (j - k) >= 4`; against
//! `table[k + 1][j]` with `k > i` by `5600 * (i - k - 1) <= -11200`.
//!
//! Index arithmetic is read as exact, like strength reduction reads it: an index whose i32
//! arithmetic wraps addresses memory far outside any object.

use super::ivrange::Range;
use crate::ir::{Function, Opcode, Type, Value, ValueDef};

/// `sum(c * v) + k`, terms sorted by value, no zero coefficient.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Linear {
    pub terms: Vec<(Value, i64)>,
    pub k: i64,
}

impl Linear {
    pub fn value(v: Value) -> Linear {
        Linear {
            terms: vec![(v, 1)],
            k: 0,
        }
    }

    pub fn constant(k: i64) -> Linear {
        Linear {
            terms: Vec::new(),
            k,
        }
    }

    /// `self + o * scale`; `None` on overflow of a coefficient.
    pub fn add(mut self, o: &Linear, scale: i64) -> Option<Linear> {
        for &(v, c) in &o.terms {
            let c = c.checked_mul(scale)?;
            match self.terms.iter_mut().find(|(w, _)| *w == v) {
                Some(slot) => slot.1 = slot.1.checked_add(c)?,
                None => self.terms.push((v, c)),
            }
        }
        self.terms.retain(|&(_, c)| c != 0);
        self.terms.sort_by_key(|&(v, _)| v);
        self.k = self.k.checked_add(o.k.checked_mul(scale)?)?;
        Some(self)
    }

    pub fn scale(self, c: i64) -> Option<Linear> {
        Linear::default().add(&self, c)
    }

    fn coeff(&self, v: Value) -> i64 {
        self.terms.iter().find(|t| t.0 == v).map_or(0, |t| t.1)
    }

    /// `self` with `v` replaced by `by`.
    fn substitute(&self, v: Value, by: &Linear) -> Option<Linear> {
        let c = self.coeff(v);
        let rest = Linear {
            terms: self.terms.iter().copied().filter(|t| t.0 != v).collect(),
            k: self.k,
        };
        rest.add(by, c)
    }
}

/// An i32 value as a linear form, through at most `depth` levels of arithmetic.
pub fn linear_i32(f: &Function, v: Value, depth: u32) -> Option<Linear> {
    if let Some(c) = f.as_iconst(v) {
        return Some(Linear::constant(c));
    }
    let leaf = Some(Linear::value(v));
    let Some(i) = f.def_inst(v).filter(|_| depth > 0 && f.ty(v) == Type::I32) else {
        return leaf;
    };
    let go = |x: Value| linear_i32(f, x, depth - 1);
    let form = match (f.op(i), f.args(i)) {
        (Opcode::Add, &[a, b]) => go(a).and_then(|x| x.add(&go(b)?, 1)),
        (Opcode::Sub, &[a, b]) => go(a).and_then(|x| x.add(&go(b)?, -1)),
        (Opcode::Mul, &[a, b]) => match (f.as_iconst(a), f.as_iconst(b)) {
            (_, Some(c)) => go(a).and_then(|x| x.scale(c)),
            (Some(c), _) => go(b).and_then(|x| x.scale(c)),
            _ => None,
        },
        (Opcode::Shl, &[a, b]) => match f.as_iconst(b) {
            Some(c @ 0..=30) => go(a).and_then(|x| x.scale(1 << c)),
            _ => None,
        },
        _ => None,
    };
    form.or(leaf)
}

/// A pointer as a root and a linear byte offset from it.
fn address(f: &Function, mut p: Value) -> Option<(Value, Linear)> {
    let mut off = Linear::default();
    for _ in 0..16 {
        let ValueDef::Result(i) = f.value_def(p) else {
            break;
        };
        match f.op(i) {
            Opcode::Gep => {
                let idx = linear_i32(f, f.arg(i, 1), 6)?;
                off = off.add(&idx, f.data(i).imm)?;
                p = f.arg(i, 0);
            }
            Opcode::Offset => {
                off = off.add(&Linear::constant(f.data(i).imm), 1)?;
                p = f.arg(i, 0);
            }
            _ => break,
        }
    }
    Some((p, off))
}

/// Whether two roots are the same pointer: one value, or the address of one global.
fn same_root(f: &Function, a: Value, b: Value) -> bool {
    if a == b {
        return true;
    }
    match (f.def_inst(a), f.def_inst(b)) {
        (Some(x), Some(y)) => {
            f.op(x) == Opcode::Gaddr && f.op(y) == Opcode::Gaddr && f.global(x) == f.global(y)
        }
        _ => false,
    }
}

/// Whether the `size_a` bytes at `a` and the `size_b` bytes at `b` never overlap in an
/// iteration of a loop whose counters have the given ranges.
pub fn disjoint(
    f: &Function,
    a: Value,
    size_a: i64,
    b: Value,
    size_b: i64,
    counters: &[(Value, Range)],
) -> bool {
    let (Some((ra, oa)), Some((rb, ob))) = (address(f, a), address(f, b)) else {
        return false;
    };
    if !same_root(f, ra, rb) {
        return false;
    }
    let Some(d) = oa.add(&ob, -1) else {
        return false;
    };
    // d = a - b; disjoint when d >= size_b everywhere, or d <= -size_a everywhere.
    let extreme = |lowest: bool| -> Option<i64> {
        let mut e = d.clone();
        for &(v, r) in counters {
            let c = e.coeff(v);
            if c == 0 {
                continue;
            }
            // The smallest value of c * v comes from v's lower end when c > 0.
            let use_lower = (c > 0) == lowest;
            let end = if use_lower { r.lower? } else { r.upper? };
            let adj = match (use_lower, end.strict) {
                (_, false) => 0,
                (true, true) => 1,
                (false, true) => -1,
            };
            let by = linear_i32(f, end.v, 6)?.add(&Linear::constant(adj), 1)?;
            e = e.substitute(v, &by)?;
        }
        e.terms.is_empty().then_some(e.k)
    };
    extreme(true).is_some_and(|lo| lo >= size_b)
        || extreme(false).is_some_and(|hi| hi <= -size_a)
        || apart_by_stride(&d, size_a, size_b)
}

/// Whether `d = sum(c * v) + k` never falls in `(-size_a, size_b)` for integer `v`: `d` is
/// `k` modulo the gcd of the coefficients (`t[x][2]` against `t[3][8]`: rows apart, the
/// columns differ by 6 words whatever `x` is).
fn apart_by_stride(d: &Linear, size_a: i64, size_b: i64) -> bool {
    fn gcd(a: i64, b: i64) -> i64 {
        if b == 0 {
            a
        } else {
            gcd(b, a % b)
        }
    }
    let g = d
        .terms
        .iter()
        .fold(0i64, |g, &(_, c)| gcd(g, c.unsigned_abs() as i64));
    if g <= 0 {
        return false;
    }
    // The smallest value of d's residue class above -size_a.
    let lo = 1 - size_a;
    let Some(from_lo) = d.k.checked_sub(lo) else {
        return false;
    };
    lo + from_lo.rem_euclid(g) >= size_b
}
