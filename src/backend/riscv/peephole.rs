//! Peephole clean-up of allocated code (physical registers, labels present).
//!
//! - moves to self (`mv a0, a0`, left by coalesced copies) are dropped;
//! - a `j` to the label that immediately follows is dropped;
//! - a conditional branch over an unconditional jump to the next label is inverted
//!   (`bne x, L1; j L2; L1:` becomes `beq x, L2; L1:`).
//!
//! Runs to a fixed point; each rule only deletes or rewrites in place, so it terminates.

use super::minst::*;

pub fn run(code: &mut Vec<MInst>) {
    loop {
        let before = code.len();
        code.retain(|mi| !(mi.op.is_move() && mi.rd == mi.rs1));
        let mut keep = vec![true; code.len()];
        for k in 0..code.len() {
            let mi = code[k];
            if mi.op == MOp::J {
                if let Some(next) = code.get(k + 1) {
                    if next.op == MOp::Label && next.imm == mi.imm {
                        keep[k] = false;
                        continue;
                    }
                }
                // bcc L1; j L2; L1:  ->  b!cc L2; L1:
                if k > 0 && keep[k - 1] && code[k - 1].op.is_branch() {
                    if let Some(next) = code.get(k + 1) {
                        if next.op == MOp::Label && next.imm == code[k - 1].imm {
                            let b = &mut code[k - 1];
                            b.op = invert(b.op);
                            b.imm = mi.imm;
                            keep[k] = false;
                        }
                    }
                }
            }
        }
        let mut it = keep.iter();
        code.retain(|_| *it.next().unwrap());
        if code.len() == before {
            break;
        }
    }
}

fn invert(op: MOp) -> MOp {
    match op {
        MOp::Beq => MOp::Bne,
        MOp::Bne => MOp::Beq,
        MOp::Blt => MOp::Bge,
        MOp::Bge => MOp::Blt,
        _ => unreachable!(),
    }
}
