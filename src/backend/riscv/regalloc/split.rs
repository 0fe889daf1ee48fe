//! Splitting spilled values around innermost loops.
//!
//! Linear scan without splitting keeps a spilled interval in its slot for its whole life, so a
//! value spilled where pressure is high (say, a loop bound live across a big outer loop body)
//! is also reloaded on every iteration of a later inner loop where registers are free. This
//! pass splits such a value at the loop: for each virtual register `v` that the first
//! allocation spilled, that an innermost loop reads but does not write, a fresh register `v'`
//! gets `v' = v` on every edge entering the loop header from outside (placed before the
//! predecessor's first branch: nothing is written after it), and the loop's reads of `v` read
//! `v'` instead. A loop entered from a block nested deeper than its header (by the IR's loop
//! depths) is left alone: the copies would run on every trip of the deeper loop. `v'` is short and dense, so the next allocation gives it a register; `v`
//! stays spilled but is no longer read in the loop. Emitted, the copy is one reload in the
//! preheader (`emit` loads into a scratch register, `peephole` folds the move).
//!
//! The caller allocates the split function again and keeps whichever allocation has the
//! lower estimated spill cost (`spill_cost`), so a split never makes a function worse by this
//! measure. The checker sees the split function like any other: copies are ordinary moves.
//! Cost: O(loops * (blocks + instructions)) plus one rebuild of the instruction list.

use super::super::liveness::Intervals;
use super::super::loops::{InnerLoop, Preds};
use super::super::minst::*;
use super::{Allocation, Spill};
use crate::ir::IdVec;

/// What a split replaced in its function: the instruction list, the blocks' ranges of it and
/// the number of virtual registers (a split only adds registers), enough to undo it.
pub struct Undo {
    insts: Vec<MInst>,
    ranges: Vec<(u32, u32)>,
    num_vregs: usize,
}

impl Undo {
    /// The blocks' ranges of `mf` before its instruction list is replaced; it had `num_vregs`
    /// virtual registers before the split.
    fn of(mf: &MFunc, num_vregs: usize) -> Undo {
        Undo {
            insts: Vec::new(),
            ranges: mf.blocks.values().map(|b| (b.start, b.end)).collect(),
            num_vregs,
        }
    }

    /// Installs `insts` as the instruction list of `mf`, keeping the old one here.
    fn replace(&mut self, mf: &mut MFunc, insts: Vec<MInst>) {
        self.insts = std::mem::replace(&mut mf.insts, insts);
    }

    /// Puts `mf` back as it was before the split.
    pub fn restore(self, mf: &mut MFunc) {
        mf.insts = self.insts;
        for ((_, b), (s, e)) in mf.blocks.iter_mut().zip(self.ranges) {
            b.start = s;
            b.end = e;
        }
        mf.vclass.truncate(self.num_vregs);
        mf.remat.truncate(self.num_vregs);
    }
}

/// Splits spilled values read in (and not written in) innermost loops, in place; `None` if
/// nothing qualified (`mf` unchanged), else what undoes the split.
pub fn around_loops(mf: &mut MFunc, alloc: &Allocation, loops: &[InnerLoop]) -> Option<Undo> {
    let num_vregs = mf.num_vregs();
    let nb = mf.blocks.len();
    let preds = Preds::of(mf, &mf.order);
    // Copies to insert before the first branch of a block: (block, dst, src).
    let mut copies: Vec<(MBlock, Reg, Reg)> = Vec::new();
    // Per loop block: renames of reads.
    let mut renames: IdVec<MBlock, Vec<(Reg, Reg)>> = IdVec::filled(nb, Vec::new());
    let mut in_loop = IdVec::filled(nb, false);
    for l in loops {
        l.blocks.iter().for_each(|&b| in_loop[b] = true);
        // Each predecessor once (a block's edges to the header are next to each other).
        let mut outside: Vec<MBlock> = preds[l.header]
            .iter()
            .copied()
            .filter(|&p| !in_loop[p])
            .collect();
        outside.dedup();
        // Entered from a block nested deeper (a rotated nest whose inner loop runs straight
        // into this loop's header): copies there would run on every trip of that inner loop.
        let header_depth = mf.blocks[l.header].depth;
        if outside.iter().any(|&p| mf.blocks[p].depth > header_depth) {
            l.blocks.iter().for_each(|&b| in_loop[b] = false);
            continue;
        }
        let mut read: Vec<Reg> = Vec::new();
        let mut written: Vec<Reg> = Vec::new();
        for &b in &l.blocks {
            let blk = &mf.blocks[b];
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
        l.blocks.iter().for_each(|&b| in_loop[b] = false);
        if outside.is_empty() {
            continue;
        }
        for v in read {
            if written.contains(&v) {
                continue;
            }
            let v2 = mf.new_vreg(mf.vclass[v.as_vreg()]);
            // A rematerializable value is recomputed into its loop copy, which stays
            // rematerializable: spilled again, it is recomputed at its uses, never reloaded.
            if let Some(mut rm) = mf.remat[v.as_vreg()] {
                rm.rd = v2;
                mf.remat[v2.as_vreg()] = Some(rm);
            }
            for &p in &outside {
                copies.push((p, v2, v));
            }
            for &b in &l.blocks {
                renames[b].push((v, v2));
            }
        }
    }
    if copies.is_empty() {
        return None;
    }
    let mut undo = Undo::of(mf, num_vregs);
    // A rematerializable value whose reads all moved to loop copies (each recomputing it)
    // loses its definition.
    let mut read = vec![false; mf.num_vregs()];
    for &b in &mf.order {
        let blk = &mf.blocks[b];
        for mi in &mf.insts[blk.start as usize..blk.end as usize] {
            for r in mi.uses().filter(|r| r.is_virt()) {
                let r = renames[b]
                    .iter()
                    .find(|&&(from, _)| from == r)
                    .map_or(r, |&(_, to)| to);
                read[r.vindex()] = true;
            }
        }
    }
    let dead: Vec<bool> = (0..mf.num_vregs())
        .map(|v| !read[v] && mf.remat[VReg::new(v)].is_some())
        .collect();
    let mut insts = Vec::with_capacity(mf.insts.len() + copies.len());
    for &b in &mf.order {
        let blk = &mf.blocks[b];
        let start = insts.len() as u32;
        let body = &mf.insts[blk.start as usize..blk.end as usize];
        let first_branch = body
            .iter()
            .position(|mi| mi.op.is_branch() || mi.op.is_terminator())
            .unwrap_or(body.len());
        for (k, mi) in body.iter().enumerate() {
            if k == first_branch {
                for &(_, d, s) in copies.iter().filter(|c| c.0 == b) {
                    if let Some(rm) = mf.remat[d.as_vreg()] {
                        insts.push(rm);
                        continue;
                    }
                    let op = if mf.vclass[d.as_vreg()] == RegClass::Float {
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
            for &(from, to) in &renames[b] {
                if mi.rs1 == from {
                    mi.rs1 = to;
                }
                if mi.rs2 == from {
                    mi.rs2 = to;
                }
            }
            insts.push(mi);
        }
        let blk = &mut mf.blocks[b];
        blk.start = start;
        blk.end = insts.len() as u32;
    }
    undo.replace(mf, insts);
    Some(undo)
}

/// Values that hold a register through an innermost loop which reloads spilled values of
/// their class, without being read or written inside it: the loop's own values would rather
/// have those registers.
///
/// Linear scan spills a value for its whole life by its weight, which counts reads anywhere: a
/// value read in one hot loop keeps its register through another hot loop where it is only
/// live, while that loop reloads its own values on every iteration. The caller allocates again
/// with these values made the cheapest to spill, splits what is then spilled around the
/// innermost loops that read it (`around_loops`) and keeps the result if `spill_cost` drops.
/// A value live into a loop's header and not written in the loop is live at every point of
/// the loop (every block of a loop reaches its header), so the header's first position stands
/// for the whole loop. None when those loops' spill code (as `spill_cost` counts it) is below
/// `min_cost`. Cost: O(loop instructions + values * log loops).
pub fn loop_bystanders(
    mf: &MFunc,
    iv: &Intervals,
    alloc: &Allocation,
    loops: &[InnerLoop],
    min_cost: f64,
) -> Vec<usize> {
    let nv = mf.num_vregs();
    // The spill code of those loops, as `spill_cost` counts it: below `min_cost` no
    // reallocation can gain enough to be kept.
    let mut cost = 0.0;
    // Per class, the header positions of loops that reload a value of that class, with the
    // loop's number; and per value the loops touching it.
    let mut heads: [Vec<(u32, u32)>; 2] = [Vec::new(), Vec::new()];
    let mut touched: Vec<(u32, u32)> = Vec::new();
    for (k, l) in loops.iter().enumerate() {
        let mut reloads = [false; 2];
        let mut n = 0u32;
        for &b in &l.blocks {
            let blk = &mf.blocks[b];
            for mi in &mf.insts[blk.start as usize..blk.end as usize] {
                for r in mi.uses().chain(std::iter::once(mi.rd)) {
                    if !r.is_virt() {
                        continue;
                    }
                    touched.push((r.vindex() as u32, k as u32));
                    if alloc.slot(r).is_some() {
                        reloads[(mf.vclass[r.as_vreg()] == RegClass::Float) as usize] = true;
                        n += 1;
                    }
                }
            }
        }
        cost += n as f64 * 10f64.powi(mf.blocks[l.header].depth.min(6) as i32);
        let head = 2 * mf.blocks[l.header].start;
        for c in 0..2 {
            if reloads[c] {
                heads[c].push((head, k as u32));
            }
        }
    }
    if heads.iter().all(|h| h.is_empty()) || cost < min_cost {
        return Vec::new();
    }
    heads.iter_mut().for_each(|h| h.sort_unstable());
    touched.sort_unstable();
    touched.dedup();
    let mut out = Vec::new();
    for v in 0..nv {
        if alloc.reg[VReg::new(v)].is_none() || iv.start[v] == u32::MAX {
            continue;
        }
        let h = &heads[(mf.vclass[VReg::new(v)] == RegClass::Float) as usize];
        let first = h.partition_point(|&(p, _)| p < iv.start[v]);
        let through = h[first..]
            .iter()
            .take_while(|&&(p, _)| p <= iv.end[v])
            .any(|&(p, k)| iv.covers(v, p) && touched.binary_search(&(v as u32, k)).is_err());
        if through {
            out.push(v);
        }
    }
    out
}

/// Estimated dynamic cost of the spill code an allocation implies: per reload, rematerialization
/// or spill store, 10^(loop depth) of its block.
pub fn spill_cost(mf: &MFunc, alloc: &Allocation) -> f64 {
    let mut cost = 0.0;
    for &b in &mf.order {
        let blk = &mf.blocks[b];
        let freq = 10f64.powi(blk.depth.min(6) as i32);
        let mut n = 0u32;
        for mi in &mf.insts[blk.start as usize..blk.end as usize] {
            n += mi
                .uses()
                .filter(|r| r.is_virt() && alloc.is_spilled(*r))
                .count() as u32;
            if mi.rd.is_virt() && alloc.is_spilled(mi.rd) && mf.remat[mi.rd.as_vreg()].is_none() {
                n += 1;
            }
        }
        cost += freq * n as f64;
    }
    cost
}

/// How far apart (in instructions of a block) two accesses of a spilled value may be and still
/// share one register copy. Beyond it, holding a register between them costs more than the
/// reload it saves.
const LOCAL_GAP: usize = 32;

/// Whether rematerializing with `mi` takes more than one machine instruction (`li` of a
/// constant that neither fits 12 bits nor is a `lui` alone, `lla`): such a value is worth a
/// copy for a cluster of reads like a spilled one.
fn multi_inst(mi: &MInst) -> bool {
    match mi.op {
        MOp::Li => {
            let c = mi.imm;
            !(fits12(c) || c & 0xfff == 0 && c == c as i32 as i64)
        }
        MOp::Lla => true,
        _ => false,
    }
}

/// Splits spilled values into short register copies around their clustered accesses.
///
/// A value spilled for its whole life (typically one live across calls when every
/// callee-saved register is taken, or a long one under high pressure) is reloaded before every
/// read. Inside a block, between two calls, its accesses often come in clusters: the
/// definition and the reads right after it, or several reads close together. For each such
/// cluster (accesses of `v` in one block, no call between them, each within `LOCAL_GAP`
/// instructions of the previous one, at least two of them), a fresh register `v'` takes over:
/// a definition of `v` writes `v'` and is followed by `v = v'` (the one spill store), a
/// cluster that starts with a read begins with `v' = v` (the one reload), and the cluster's
/// reads read `v'`. Calls end clusters, so `v'` never lives across one and any
/// caller-saved register suits it. No copy is placed after a block's first branch (nothing
/// is written there); reads there use a copy made before it. A constant or address that takes
/// more than one instruction to rematerialize (`multi_inst`) is treated alike for its reads: a
/// cluster starts with one rematerialization into the copy instead of one per read.
///
/// Like `around_loops`, the caller allocates the result again and keeps the allocation with
/// the lower `spill_cost`. Splits in place; `None` if nothing qualified (`mf` unchanged),
/// else what undoes the split. Cost: O(instructions) plus one rebuild of the instruction list.
pub fn local_copies(mf: &mut MFunc, alloc: &Allocation) -> Option<Undo> {
    let nv = mf.num_vregs();
    let candidate: Vec<bool> = (0..nv)
        .map(|v| {
            alloc.spill[VReg::new(v)] != Spill::No
                && mf.remat[VReg::new(v)].is_none_or(|mi| multi_inst(&mi))
        })
        .collect();
    if !candidate.iter().any(|&c| c) {
        return None;
    }
    let is_cand = |r: Reg| r.is_virt() && r.vindex() < nv && candidate[r.vindex()];
    // Per block, backwards: for each instruction, the index of the next read of each
    // candidate it accesses within the same call-free stretch (`NONE` if none).
    const NONE: u32 = u32::MAX;
    let mut next_read = vec![NONE; nv];
    let mut touched: Vec<usize> = Vec::new();
    // (next read after this instruction of rs1, rs2, rd)
    let mut ahead: Vec<[u32; 3]> = Vec::new();
    // Copy register per candidate while its cluster is open, and the index of its last access.
    let mut copy = vec![Reg::NONE; nv];
    let mut last = vec![0usize; nv];
    let mut insts = Vec::with_capacity(mf.insts.len() + mf.insts.len() / 8);
    let mut ranges: Vec<(u32, u32)> = Vec::with_capacity(mf.order.len());
    let mut changed = false;
    for oi in 0..mf.order.len() {
        let b = mf.order[oi];
        let (start, end) = (mf.blocks[b].start as usize, mf.blocks[b].end as usize);
        ahead.clear();
        ahead.resize(end - start, [NONE; 3]);
        for k in (start..end).rev() {
            let mi = mf.insts[k];
            if mi.op == MOp::Call {
                touched.drain(..).for_each(|v| next_read[v] = NONE);
                continue;
            }
            let slot = &mut ahead[k - start];
            if is_cand(mi.rd) {
                slot[2] = next_read[mi.rd.vindex()];
                // The value read after here is this definition's: earlier reads see another.
                next_read[mi.rd.vindex()] = NONE;
            }
            for (j, r) in [mi.rs1, mi.rs2].into_iter().enumerate() {
                if is_cand(r) {
                    slot[j] = next_read[r.vindex()];
                }
            }
            for r in [mi.rs1, mi.rs2] {
                if is_cand(r) {
                    next_read[r.vindex()] = (k - start) as u32;
                    touched.push(r.vindex());
                }
            }
        }
        touched.drain(..).for_each(|v| next_read[v] = NONE);
        let new_start = insts.len() as u32;
        let mut branched = false;
        let near = |from: usize, next: u32| next != NONE && next as usize - from <= LOCAL_GAP;
        for k in start..end {
            let mut mi = mf.insts[k];
            let i = k - start;
            if mi.op == MOp::Call {
                touched.drain(..).for_each(|v| copy[v] = Reg::NONE);
                insts.push(mi);
                continue;
            }
            let next = ahead[i];
            for (j, &next_read) in next.iter().enumerate().take(2) {
                let r = if j == 0 { mi.rs1 } else { mi.rs2 };
                if !is_cand(r) {
                    continue;
                }
                let v = r.vindex();
                let c = copy[v];
                let to = if c.is_some() && i - last[v] <= LOCAL_GAP {
                    c
                } else if !branched && near(i, next_read) {
                    // Open a cluster: one reload (or rematerialization, which the copy
                    // keeps: spilled again, it is recomputed) for this read and the next ones.
                    let class = mf.vclass[r.as_vreg()];
                    let c = mf.new_vreg(class);
                    if let Some(mut rm) = mf.remat[r.as_vreg()] {
                        rm.rd = c;
                        mf.remat[c.as_vreg()] = Some(rm);
                        insts.push(rm);
                    } else {
                        insts.push(MInst::unary(move_op(class), c, r));
                    }
                    if copy[v].is_none() {
                        touched.push(v);
                    }
                    copy[v] = c;
                    changed = true;
                    c
                } else {
                    copy[v] = Reg::NONE;
                    continue;
                };
                last[v] = i;
                if mi.rs1 == r {
                    mi.rs1 = to;
                }
                if mi.rs2 == r {
                    mi.rs2 = to;
                }
            }
            branched |= mi.op.is_branch() || mi.op.is_terminator();
            let d = mi.rd;
            if !is_cand(d) || mf.remat[d.as_vreg()].is_some() {
                insts.push(mi);
                continue;
            }
            let v = d.vindex();
            if near(i, next[2]) {
                // The definition writes a register copy; one store keeps the slot current.
                let class = mf.vclass[d.as_vreg()];
                let c = mf.new_vreg(class);
                mi.rd = c;
                insts.push(mi);
                insts.push(MInst::unary(move_op(class), d, c));
                if copy[v].is_none() {
                    touched.push(v);
                }
                copy[v] = c;
                last[v] = i;
                changed = true;
            } else {
                copy[v] = Reg::NONE;
                insts.push(mi);
            }
        }
        touched.drain(..).for_each(|v| copy[v] = Reg::NONE);
        ranges.push((new_start, insts.len() as u32));
    }
    if !changed {
        return None;
    }
    let mut undo = Undo::of(mf, nv);
    for (&b, &(s, e)) in mf.order.iter().zip(&ranges) {
        mf.blocks[b].start = s;
        mf.blocks[b].end = e;
    }
    undo.replace(mf, insts);
    Some(undo)
}

fn move_op(class: RegClass) -> MOp {
    match class {
        RegClass::Int => MOp::Mv,
        RegClass::Float => MOp::FmvD,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One block: `v0 = a0 + a0`, two reads of `v0`, a call, two more reads, return.
    fn around_call() -> MFunc {
        let v: Vec<Reg> = (0..4).map(Reg::vreg).collect();
        let a0 = Reg::A0;
        let insts = vec![
            MInst::r(MOp::Addw, v[0], a0, a0),
            MInst::r(MOp::Addw, v[1], v[0], v[0]),
            MInst::r(MOp::Addw, v[1], v[1], v[0]),
            MInst::new(MOp::Call, Reg::NONE, Reg::NONE, Reg::NONE, 0),
            MInst::r(MOp::Addw, v[2], v[0], a0),
            MInst::r(MOp::Addw, v[3], v[2], v[0]),
            MInst::r(MOp::Addw, a0, v[3], v[1]),
            MInst::new(MOp::Ret, Reg::NONE, Reg::NONE, Reg::NONE, 0),
        ];
        MFunc {
            calls: vec![CallInfo {
                sym: "g".into(),
                args: vec![],
            }],
            ..super::super::one_block(insts, 4)
        }
    }

    fn spilled(mf: &MFunc, which: &[usize]) -> Allocation {
        let n = mf.num_vregs();
        let mut alloc = Allocation {
            reg: IdVec::filled(n, Reg::a(1)),
            spill: IdVec::filled(n, Spill::No),
            num_slots: which.len() as u32,
        };
        for (k, &v) in which.iter().enumerate() {
            alloc.reg[VReg::new(v)] = Reg::NONE;
            alloc.spill[VReg::new(v)] = Spill::Slot(super::super::SpillSlot::new(k));
        }
        alloc
    }

    /// `v0` and `v1` are defined before a loop; the loop reads `v1` and counts with `v2`;
    /// `v0` is read after it.
    fn loop_after_two_values() -> MFunc {
        let v: Vec<Reg> = (0..3).map(Reg::vreg).collect();
        let j = |b: i64| MInst::new(MOp::J, Reg::NONE, Reg::NONE, Reg::NONE, b);
        let code = [
            (
                vec![
                    MInst::li(v[0], 1),
                    MInst::li(v[1], 2),
                    MInst::li(v[2], 0),
                    j(1),
                ],
                vec![1],
                0,
            ),
            (
                vec![
                    MInst::r(MOp::Addw, v[2], v[2], v[1]),
                    MInst::new(MOp::Blt, Reg::NONE, v[2], Reg::A0, 1),
                    j(2),
                ],
                vec![1, 2],
                1,
            ),
            (
                vec![
                    MInst::r(MOp::Addw, Reg::A0, v[0], v[2]),
                    MInst::new(MOp::Ret, Reg::NONE, Reg::A0, Reg::NONE, 0),
                ],
                vec![],
                0,
            ),
        ];
        super::super::blocks(code.into(), 3)
    }

    #[test]
    fn a_value_live_through_a_loop_that_reloads_is_a_bystander() {
        use super::super::super::{liveness, loops};
        let mf = loop_after_two_values();
        let iv = liveness::compute(&mf);
        let inner = loops::innermost(&mf, &iv);
        assert_eq!(inner.len(), 1);
        // `v1` spilled: the loop reloads it, and `v0` holds a register through the loop.
        assert_eq!(
            loop_bystanders(&mf, &iv, &spilled(&mf, &[1]), &inner, 0.0),
            vec![0]
        );
        // One reload at depth 1 costs 10: asked for more, the loop is not worth it.
        assert!(loop_bystanders(&mf, &iv, &spilled(&mf, &[1]), &inner, 11.0).is_empty());
        // Nothing reloaded in the loop: no bystanders.
        assert!(loop_bystanders(&mf, &iv, &spilled(&mf, &[]), &inner, 0.0).is_empty());
        // `v0` spilled itself: not holding a register, so not a bystander either.
        assert!(loop_bystanders(&mf, &iv, &spilled(&mf, &[0]), &inner, 0.0).is_empty());
    }

    #[test]
    fn clusters_on_each_side_of_a_call_get_their_own_copy() {
        let mut mf = around_call();
        let alloc = spilled(&mf, &[0]);
        assert!(local_copies(&mut mf, &alloc).is_some());
        let v0 = Reg::vreg(0);
        let ops: Vec<(MOp, Reg, Reg, Reg)> = mf
            .insts
            .iter()
            .map(|m| (m.op, m.rd, m.rs1, m.rs2))
            .collect();
        // The definition writes a copy, stored once; its two reads read the copy.
        let c1 = mf.insts[0].rd;
        assert!(c1.is_virt() && c1 != v0);
        assert_eq!(ops[1], (MOp::Mv, v0, c1, Reg::NONE));
        assert_eq!((ops[2].2, ops[2].3), (c1, c1));
        assert_eq!(ops[3].3, c1);
        assert_eq!(ops[4].0, MOp::Call);
        // After the call: one reload into a second copy, read twice.
        let c2 = ops[5].1;
        assert_eq!(ops[5], (MOp::Mv, c2, v0, Reg::NONE));
        assert!(c2 != c1 && c2 != v0);
        assert_eq!(ops[6].2, c2);
        assert_eq!(ops[7].3, c2);
        // Nothing else reads the slot.
        let reads = mf.insts.iter().flat_map(|m| m.uses()).filter(|&r| r == v0);
        assert_eq!(reads.count(), 1);
        assert_eq!(mf.blocks[MBlock::new(0)].end as usize, mf.insts.len());
    }

    #[test]
    fn a_lone_read_is_left_to_reload() {
        let mut mf = around_call();
        // v1 is written, rewritten and, after the call, read once.
        let alloc = spilled(&mf, &[1]);
        assert!(local_copies(&mut mf, &alloc).is_some());
        let v1 = Reg::vreg(1);
        let last = mf.insts[mf.insts.len() - 2];
        assert_eq!((last.op, last.rs2), (MOp::Addw, v1));
        // The first write goes through a copy the rewrite reads; the rewrite, read only after
        // the call, writes the slot directly.
        let c = mf.insts[1].rd;
        assert!(c.is_virt() && c != v1);
        assert_eq!(
            (mf.insts[2].op, mf.insts[2].rd, mf.insts[2].rs1),
            (MOp::Mv, v1, c)
        );
        assert_eq!((mf.insts[3].rd, mf.insts[3].rs1), (v1, c));
    }
}
