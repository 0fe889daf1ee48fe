//! Shapes of counted loops shared by the loop passes (`indvars`, `unroll`).

use crate::ir::{CmpCond, Function, Inst, Opcode, Value};

/// A latch's exit test read as "the loop goes on while `next cond bound`".
pub struct ExitTest {
    /// The compare instruction.
    pub cmp: Inst,
    /// The loop-defined operand (the counter's next value in a counted loop).
    pub next: Value,
    /// The operand defined outside the loop.
    pub bound: Value,
    pub cond: CmpCond,
}

/// Reads the condition of the latch `brif t` as an [`ExitTest`]: the compare is inverted when the
/// back edge is the else edge (`back_when_true` false) and swapped when the loop operand is on the
/// right. `None` unless the condition is an `icmp` with exactly one operand inside the loop
/// (`inside`).
pub fn exit_test(
    f: &Function,
    t: Inst,
    back_when_true: bool,
    inside: impl Fn(&Function, Value) -> bool,
) -> Option<ExitTest> {
    let cmp = f.def_inst(f.arg(t, 0))?;
    if f.op(cmp) != Opcode::Icmp {
        return None;
    }
    let mut cond = f.data(cmp).cond();
    if !back_when_true {
        cond = cond.invert();
    }
    let (a, b) = (f.arg(cmp, 0), f.arg(cmp, 1));
    let (next, bound, cond) = if inside(f, b) {
        (b, a, cond.swap())
    } else {
        (a, b, cond)
    };
    if inside(f, bound) {
        return None;
    }
    Some(ExitTest {
        cmp,
        next,
        bound,
        cond,
    })
}
