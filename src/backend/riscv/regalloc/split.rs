//! Splitting spilled values around innermost loops.
//!
//! Linear scan without splitting keeps a spilled interval in its slot for its whole life, so a
//! value spilled where pressure is high (say, a loop bound live across a big outer loop body)
//! is also reloaded on every iteration of a later inner loop where registers are free. This
//! pass splits such a value at the loop: for each virtual register `v` that the first
//! allocation spilled, that an innermost loop reads but does not write, a fresh register `v'`
//! gets `v' = v` on every edge entering the loop header from outside (placed before the
//! predecessor's first branch: nothing is written after it), and the loop's reads of `v` read
//! `v'` instead. `v'` is short and dense, so the next allocation gives it a register; `v`
//! stays spilled but is no longer read in the loop. Emitted, the copy is one reload in the
//! preheader (`emit` loads into a scratch register, `peephole` folds the move).
//!
//! The caller allocates the split function again and keeps whichever allocation has the
//! lower estimated spill cost (`spill_cost`), so a split never makes a function worse by this
//! measure. The checker sees the split function like any other: copies are ordinary moves.
//! Cost: O(loops * (blocks + instructions)) plus one rebuild of the instruction list.

use super::super::loops::InnerLoop;
use super::super::minst::*;
use super::Allocation;

/// Splits spilled values read in (and not written in) innermost loops; `false` if nothing
/// qualified.
pub fn around_loops(mf: &mut MFunc, alloc: &Allocation, loops: &[InnerLoop]) -> bool {
    let nb = mf.blocks.len();
    let mut preds: Vec<Vec<u32>> = vec![Vec::new(); nb];
    for &b in &mf.order {
        for &s in &mf.blocks[b as usize].succs {
            if !preds[s as usize].contains(&b) {
                preds[s as usize].push(b);
            }
        }
    }
    // Copies to insert before the first branch of a block: (block, dst, src).
    let mut copies: Vec<(u32, Reg, Reg)> = Vec::new();
    // Per loop block: renames of reads.
    let mut renames: Vec<Vec<(Reg, Reg)>> = vec![Vec::new(); nb];
    let mut in_loop = vec![false; nb];
    for l in loops {
        l.blocks.iter().for_each(|&b| in_loop[b as usize] = true);
        let outside: Vec<u32> = preds[l.header as usize]
            .iter()
            .copied()
            .filter(|&p| !in_loop[p as usize])
            .collect();
        let mut read: Vec<Reg> = Vec::new();
        let mut written: Vec<Reg> = Vec::new();
        for &b in &l.blocks {
            let blk = &mf.blocks[b as usize];
            for mi in &mf.insts[blk.start as usize..blk.end as usize] {
                for r in mi.uses() {
                    if r.is_virt() && alloc.is_spilled(r) && !read.contains(&r) {
                        read.push(r);
                    }
                }
                if mi.rd.is_virt() {
                    written.push(mi.rd);
                }
            }
        }
        l.blocks.iter().for_each(|&b| in_loop[b as usize] = false);
        if outside.is_empty() {
            continue;
        }
        for v in read {
            if written.contains(&v) {
                continue;
            }
            let v2 = mf.new_vreg(mf.vclass[v.vindex()]);
            // A rematerializable value is recomputed into its loop copy, which stays
            // rematerializable: spilled again, it is recomputed at its uses, never reloaded.
            if let Some(mut rm) = mf.remat[v.vindex()] {
                rm.rd = v2;
                mf.remat[v2.vindex()] = Some(rm);
            }
            for &p in &outside {
                copies.push((p, v2, v));
            }
            for &b in &l.blocks {
                renames[b as usize].push((v, v2));
            }
        }
    }
    if copies.is_empty() {
        return false;
    }
    // A rematerializable value whose reads all moved to loop copies (each recomputing it)
    // loses its definition.
    let mut read = vec![false; mf.num_vregs()];
    for &b in &mf.order {
        let blk = &mf.blocks[b as usize];
        for mi in &mf.insts[blk.start as usize..blk.end as usize] {
            for r in mi.uses().filter(|r| r.is_virt()) {
                let r = renames[b as usize]
                    .iter()
                    .find(|&&(from, _)| from == r)
                    .map_or(r, |&(_, to)| to);
                read[r.vindex()] = true;
            }
        }
    }
    let dead: Vec<bool> = (0..mf.num_vregs())
        .map(|v| !read[v] && mf.remat[v].is_some())
        .collect();
    let mut insts = Vec::with_capacity(mf.insts.len() + copies.len());
    for &b in &mf.order {
        let blk = &mf.blocks[b as usize];
        let start = insts.len() as u32;
        let body = &mf.insts[blk.start as usize..blk.end as usize];
        let first_branch = body
            .iter()
            .position(|mi| mi.op.is_branch() || mi.op.is_terminator())
            .unwrap_or(body.len());
        for (k, mi) in body.iter().enumerate() {
            if k == first_branch {
                for &(_, d, s) in copies.iter().filter(|c| c.0 == b) {
                    if let Some(rm) = mf.remat[d.vindex()] {
                        insts.push(rm);
                        continue;
                    }
                    let op = if mf.vclass[d.vindex()] == RegClass::Float {
                        MOp::FmvD
                    } else {
                        MOp::Mv
                    };
                    insts.push(MInst::unary(op, d, s));
                }
            }
            if mi.rd.is_virt() && dead[mi.rd.vindex()] {
                continue;
            }
            let mut mi = *mi;
            for &(from, to) in &renames[b as usize] {
                if mi.rs1 == from {
                    mi.rs1 = to;
                }
                if mi.rs2 == from {
                    mi.rs2 = to;
                }
            }
            insts.push(mi);
        }
        let blk = &mut mf.blocks[b as usize];
        blk.start = start;
        blk.end = insts.len() as u32;
    }
    mf.insts = insts;
    true
}

/// Estimated dynamic cost of the spill code an allocation implies: per reload, rematerialization
/// or spill store, 10^(loop depth) of its block.
pub fn spill_cost(mf: &MFunc, alloc: &Allocation) -> f64 {
    let mut cost = 0.0;
    for &b in &mf.order {
        let blk = &mf.blocks[b as usize];
        let freq = 10f64.powi(blk.depth.min(6) as i32);
        let mut n = 0u32;
        for mi in &mf.insts[blk.start as usize..blk.end as usize] {
            n += mi
                .uses()
                .filter(|r| r.is_virt() && alloc.is_spilled(*r))
                .count() as u32;
            if mi.rd.is_virt() && alloc.is_spilled(mi.rd) && mf.remat[mi.rd.vindex()].is_none() {
                n += 1;
            }
        }
        cost += freq * n as f64;
    }
    cost
}
