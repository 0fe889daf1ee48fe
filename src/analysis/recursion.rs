//! Shapes of self-recursive functions: where a function calls itself and with what arguments.
//!
//! A call of itself whose argument is `param ± constant` (fib, tak, binomials) recurs on
//! overlapping subproblems: memoisation collapses its call tree, and copying its body into itself
//! would hide that shape. A call on a split argument (`(lo + hi) / 2`) or a quotient does not.

use crate::ir::{Function, Inst, Opcode, Value};

/// Whether `v` is `param ± constant` for a parameter of `f`.
pub fn is_param_step(f: &Function, v: Value) -> bool {
    let Some(i) = f.def_inst(v) else { return false };
    if !matches!(
        f.op(i),
        Opcode::Add | Opcode::Sub | Opcode::Fadd | Opcode::Fsub
    ) {
        return false;
    }
    let (a, b) = (f.arg(i, 0), f.arg(i, 1));
    let is_const = |x: Value| f.as_iconst(x).is_some() || f.as_fconst(x).is_some();
    let params = f.params();
    (params.contains(&a) && is_const(b)) || (params.contains(&b) && is_const(a))
}

/// The calls `f` makes of itself, in layout order.
pub fn self_calls(f: &Function) -> Vec<Inst> {
    let mut calls = f.calls();
    calls.retain(|&i| f.callee(i) == f.id);
    calls
}

/// How many of `f`'s calls of itself pass an argument `param ± constant`.
pub fn stepped_self_calls(f: &Function) -> usize {
    self_calls(f)
        .into_iter()
        .filter(|&i| f.args(i).iter().any(|&a| is_param_step(f, a)))
        .count()
}
