//! Peephole clean-up of allocated code (physical registers, labels present).
//!
//! - moves to self (`mv a0, a0`, left by coalesced copies) are dropped;
//! - moves into or out of spill scratch registers are folded into the instruction that
//!   defines the scratch register or the spill store that reads it;
//! - branches to a block that only jumps on go straight to the final target (jump threading),
//!   and blocks left without predecessors after an unconditional transfer are dropped;
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
        fold_scratch_moves(code);
        thread_jumps(code);
        remove_dead_blocks(code);
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

/// Branches to a label followed by `j X` go to `X` (edge blocks whose copies coalesced away).
fn thread_jumps(code: &mut [MInst]) {
    let mut jump_after: rustc_hash::FxHashMap<i64, i64> = Default::default();
    for k in 0..code.len().saturating_sub(1) {
        if code[k].op == MOp::Label && code[k + 1].op == MOp::J {
            jump_after.insert(code[k].imm, code[k + 1].imm);
        }
    }
    if jump_after.is_empty() {
        return;
    }
    for mi in code.iter_mut() {
        if mi.op.is_branch() || mi.op == MOp::J {
            let mut t = mi.imm;
            for _ in 0..8 {
                match jump_after.get(&t) {
                    Some(&x) if x != t => t = x,
                    _ => break,
                }
            }
            mi.imm = t;
        }
    }
}

/// Drops code after an unconditional transfer up to a label nothing branches to.
fn remove_dead_blocks(code: &mut Vec<MInst>) {
    let mut used = rustc_hash::FxHashSet::default();
    for mi in code.iter() {
        if mi.op.is_branch() || mi.op == MOp::J {
            used.insert(mi.imm);
        }
    }
    let mut keep = vec![true; code.len()];
    let mut dead = false;
    for k in 0..code.len() {
        let mi = code[k];
        if mi.op == MOp::Label {
            // The first label is the entry; a label reached by fallthrough or a branch lives.
            dead = dead && k > 0 && !used.contains(&mi.imm);
        }
        keep[k] = !dead;
        if matches!(mi.op, MOp::J | MOp::Ret | MOp::TailCall) {
            dead = true;
        }
    }
    let mut it = keep.iter();
    code.retain(|_| *it.next().unwrap());
}

fn is_scratch(r: Reg) -> bool {
    matches!(r, Reg::T0 | Reg::T1 | Reg::FT0 | Reg::FT1)
}

/// Spill code goes through scratch registers that die right after their one reader:
/// `X t0, ..; mv r, t0` becomes `X r, ..` and `mv t0, r; sd t0, m` becomes `sd r, m`.
fn fold_scratch_moves(code: &mut Vec<MInst>) {
    let mut keep = vec![true; code.len()];
    for k in 1..code.len() {
        let (a, b) = (code[k - 1], code[k]);
        if !keep[k - 1] {
            continue;
        }
        let same_class = |x: Reg, y: Reg| x.phys_class() == y.phys_class();
        if b.op.is_move()
            && is_scratch(b.rs1)
            && a.rd == b.rs1
            && a.op != MOp::Label
            && same_class(a.rd, b.rd)
        {
            // t0 is read only by the move (spill reloads feed one instruction).
            code[k - 1].rd = b.rd;
            keep[k] = false;
        } else if a.op.is_move()
            && is_scratch(a.rd)
            && b.op.is_store()
            && b.rs2 == a.rd
            && b.rs1 != a.rd
        {
            code[k].rs2 = a.rs1;
            keep[k - 1] = false;
        }
    }
    let mut it = keep.iter();
    code.retain(|_| *it.next().unwrap());
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
