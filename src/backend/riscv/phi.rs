//! Parallel copies: sequentializing the moves that pass block arguments to block parameters.
//!
//! A branch assigns all parameters of its target at once (`p1, p2 := a1, a2`). Done in order, a
//! copy may overwrite a register a later copy still reads (the swap `x, y := y, x`). Algorithm:
//! repeatedly emit a copy whose destination no pending copy reads; when only cycles remain, save
//! one cycle member's destination in a fresh temporary and redirect its readers to the
//! temporary, which frees that destination. Cost: O(n^2) for n copies (n is small: the
//! parameters of one block). Copies of rematerializable sources (constants, addresses) cannot
//! be part of a cycle; callers emit them after the register copies.

use super::minst::Reg;

/// Orders the parallel copies `dst := src` (distinct destinations) into a sequence of moves
/// with the same effect. `tmp(dst)` makes a fresh register of `dst`'s class; `emit(dst, src)`
/// receives each move in order. Each step emits the first pending copy (in the order
/// `pending` is kept) whose destination no pending copy reads; every pending copy counts the
/// pending copies that read its destination, so finding one is a scan, not a scan per copy.
pub fn sequentialize(
    copies: &[(Reg, Reg)],
    mut tmp: impl FnMut(Reg) -> Reg,
    mut emit: impl FnMut(Reg, Reg),
) {
    // (dst, src, pending copies reading dst)
    let mut pending: Vec<(Reg, Reg, u32)> = copies
        .iter()
        .filter(|(d, s)| d != s)
        .map(|&(d, s)| (d, s, 0))
        .collect();
    for k in 0..pending.len() {
        let d = pending[k].0;
        pending[k].2 = pending.iter().filter(|c| c.1 == d).count() as u32;
    }
    while !pending.is_empty() {
        match pending.iter().position(|c| c.2 == 0) {
            Some(k) => {
                let (d, s, _) = pending.swap_remove(k);
                emit(d, s);
                // One reader of `s` fewer (destinations are distinct: at most one copy).
                if let Some(c) = pending.iter_mut().find(|c| c.0 == s) {
                    c.2 -= 1;
                }
            }
            None => {
                // Every destination is still read: all copies are in cycles. Free one.
                let d = pending[0].0;
                let t = tmp(d);
                emit(t, d);
                for c in pending.iter_mut() {
                    if c.1 == d {
                        c.1 = t;
                    }
                }
                pending[0].2 = 0;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// Runs the sequence on a register file and checks it against the parallel semantics.
    fn check(copies: &[(u32, u32)]) {
        let copies: Vec<(Reg, Reg)> = copies.iter().map(|&(d, s)| (Reg(d), Reg(s))).collect();
        let mut next = 1000;
        let mut regs: HashMap<Reg, u32> = HashMap::new();
        for &(d, s) in &copies {
            regs.insert(d, d.0);
            regs.insert(s, s.0);
        }
        let before = regs.clone();
        let mut seq = Vec::new();
        sequentialize(
            &copies,
            |_| {
                next += 1;
                Reg(next)
            },
            |d, s| seq.push((d, s)),
        );
        for (d, s) in seq {
            let v = regs[&s];
            regs.insert(d, v);
        }
        for &(d, s) in &copies {
            assert_eq!(regs[&d], before[&s], "copy {d:?} := {s:?}");
        }
    }

    #[test]
    fn swaps_chains_and_cycles() {
        check(&[(1, 2), (2, 1)]);
        check(&[(1, 2), (2, 3), (3, 1)]);
        check(&[(1, 2), (2, 3), (4, 1)]);
        check(&[(1, 1), (2, 1), (3, 2)]);
        check(&[(1, 2), (2, 1), (3, 4), (4, 3), (5, 1)]);
        check(
            &[(1, 5), (2, 5), (3, 1), (1, 3)]
                .iter()
                .skip(1)
                .copied()
                .collect::<Vec<_>>(),
        );
    }
}
