//! Shapes of values that passes and instruction selection both recognise, so that a pass's
//! cost of a shape is the cost of the code the backend gives it.

use crate::ir::{CmpCond, Function, Opcode, Type, Value};

/// `c` as a test of the sign of an integer `x`: `(x, true)` when `c` is `x < 0`, `(x, false)`
/// when it is `x >= 0`. With `exact` false also `x <= 0` and `x > 0`, for selects whose two
/// arms agree at zero.
pub fn sign_test(f: &Function, c: Value, exact: bool) -> Option<(Value, bool)> {
    let ci = f.def_inst(c).filter(|&ci| f.op(ci) == Opcode::Icmp)?;
    let (x, y) = (f.arg(ci, 0), f.arg(ci, 1));
    if !matches!(f.ty(x), Type::I32 | Type::I64) || f.as_iconst(y) != Some(0) {
        return None;
    }
    match f.data(ci).cond() {
        CmpCond::Lt => Some((x, true)),
        CmpCond::Ge => Some((x, false)),
        CmpCond::Le if !exact => Some((x, true)),
        CmpCond::Gt if !exact => Some((x, false)),
        _ => None,
    }
}

/// `select c, a, b` of type `ty` as `(x, true)` for `|x|`, `(x, false)` for `-|x|`.
pub fn abs_select(f: &Function, ty: Type, c: Value, a: Value, b: Value) -> Option<(Value, bool)> {
    let (x, negative) = sign_test(f, c, false)?;
    if !matches!(ty, Type::I32 | Type::I64) || f.ty(x) != ty {
        return None;
    }
    let (if_neg, if_pos) = if negative { (a, b) } else { (b, a) };
    if if_pos == x && is_negation_of(f, if_neg, x) {
        Some((x, true))
    } else if if_neg == x && is_negation_of(f, if_pos, x) {
        Some((x, false))
    } else {
        None
    }
}

/// Whether `v` is `0 - x`.
pub fn is_negation_of(f: &Function, v: Value, x: Value) -> bool {
    f.def_inst(v).is_some_and(|i| {
        f.op(i) == Opcode::Sub && f.arg(i, 1) == x && f.as_iconst(f.arg(i, 0)) == Some(0)
    })
}
