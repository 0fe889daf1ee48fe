//! Linear-scan register allocation over live intervals with holes (Traub et al. / Wimmer's
//! active and inactive sets, without splitting inside the scan: `split` splits spilled values
//! around loops between two runs), with fixed physical-register ranges, move hints and spill
//! weights.
//!
//! Phases:
//! 1. Collect move hints: a copy between a virtual and a physical register (arguments, results,
//!    parameters) hints that register; a virtual-to-virtual copy (block arguments) hints the
//!    other side's register once it is allocated, coalescing most phi copies. A register may
//!    have several hints (a loop parameter is copied from its initial value before the loop and
//!    from its next value inside it); each weighs the frequency of its copies (10^loop depth)
//!    and they are tried heaviest first, so the copy inside the loop is the one coalesced.
//! 2. Visit intervals by increasing start. Take a register of the right class that no
//!    interval allocated so far and overlapping this one holds (neither an active one, live
//!    here, nor an inactive one, in a hole here and live again later) and that has no fixed
//!    range inside the interval (so values live across a call only get callee-saved
//!    registers), hints first, then in `ALLOC_*` preference order. The active and inactive
//!    intervals are not kept in lists (the inactive list grew to thousands of intervals with
//!    holes in a long else-if chain, scanned at every step): each register keeps the ranges of
//!    the intervals holding it (`Occupancy`), so both tests are lookups.
//! 3. If none is free: among active intervals whose register would suit the new one, the one
//!    with the lowest spill weight is spilled if it weighs less than the new interval;
//!    otherwise the new interval is spilled. A spilled interval lives in a stack slot for its
//!    whole life; each use reloads it into a reserved scratch register (see `emit`), so
//!    allocation succeeds under any register pressure.
//! 4. Spill slots are shared between spilled intervals that do not overlap (greedy interval
//!    colouring by start).
//!
//! Cost: O(n log n + n * registers * ranges * (log n + log fixed)), plus the ranges of other
//! intervals a long range spans.

use super::super::liveness::Intervals;
use super::super::minst::*;
use super::Allocation;
use std::collections::BTreeMap;

pub fn allocate(mf: &MFunc, iv: &Intervals) -> Allocation {
    let nv = mf.num_vregs();
    // Phase 1: hints, each weighted by the execution frequency of its copies.
    let mut hints: Vec<Vec<(Reg, f32)>> = vec![Vec::new(); nv];
    fn add(list: &mut Vec<(Reg, f32)>, r: Reg, w: f32) {
        match list.iter_mut().find(|(x, _)| *x == r) {
            Some(e) => e.1 += w,
            None => list.push((r, w)),
        }
    }
    for &b in &mf.order {
        let blk = &mf.blocks[b as usize];
        let freq = 10f32.powi(blk.depth.min(6) as i32);
        for mi in &mf.insts[blk.start as usize..blk.end as usize] {
            if !mi.op.is_move() {
                continue;
            }
            let (d, s) = (mi.rd, mi.rs1);
            match (d.is_virt(), s.is_virt()) {
                (true, false) if is_allocatable(s) => add(&mut hints[d.vindex()], s, freq),
                (false, true) if is_allocatable(d) => add(&mut hints[s.vindex()], d, freq),
                (true, true) if d != s => {
                    add(&mut hints[d.vindex()], s, freq);
                    add(&mut hints[s.vindex()], d, freq);
                }
                _ => {}
            }
        }
    }
    for h in &mut hints {
        h.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    }
    // Phase 2-3.
    let mut order: Vec<u32> = (0..nv as u32)
        .filter(|&v| iv.start[v as usize] != u32::MAX)
        .collect();
    order.sort_unstable_by_key(|&v| (iv.start[v as usize], v));
    let mut alloc = Allocation {
        reg: vec![Reg::NONE; nv],
        slot: vec![u32::MAX; nv],
        num_slots: 0,
    };
    let mut spilled: Vec<u32> = Vec::new();
    let mut occ = Occupancy::default();
    for &v in &order {
        let vi = v as usize;
        let pos = iv.start[vi];
        let ranges = &iv.ranges[vi];
        let class = mf.vclass[vi];
        let pool: &[Reg] = match class {
            RegClass::Int => &ALLOC_INT,
            RegClass::Float => &ALLOC_FLOAT,
        };
        // `r` could take this interval if its holder here (the active interval holding it, if
        // any) were spilled: no other interval holding `r` overlaps, and `r` is not fixed-live.
        let usable = |r: Reg, occ: &Occupancy| {
            !occ.conflicts(r, ranges, occ.holder(r, pos)) && !iv.fixed_conflict_v(r, vi)
        };
        let free = |r: Reg, occ: &Occupancy| {
            !occ.conflicts(r, ranges, u32::MAX) && !iv.fixed_conflict_v(r, vi)
        };
        let mut pick = Reg::NONE;
        for &(h, _) in &hints[vi] {
            let h = if h.is_virt() {
                alloc.reg[h.vindex()]
            } else {
                h
            };
            if h.is_some() && h.phys_class() == class && is_allocatable(h) && free(h, &occ) {
                pick = h;
                break;
            }
        }
        if pick.is_none() {
            pick = pool
                .iter()
                .copied()
                .find(|&r| free(r, &occ))
                .unwrap_or(Reg::NONE);
        }
        if pick.is_none() {
            // Spill the cheapest of the new interval and the active ones it could replace.
            let victim = (0..64)
                .map(|r| occ.holder(Reg(r), pos))
                .filter(|&a| {
                    a != u32::MAX
                        && mf.vclass[a as usize] == class
                        && usable(alloc.reg[a as usize], &occ)
                })
                .min_by(|&a, &b| {
                    iv.weight[a as usize]
                        .total_cmp(&iv.weight[b as usize])
                        .then(a.cmp(&b))
                });
            match victim {
                Some(a) if iv.weight[a as usize] < iv.weight[vi] => {
                    let r = alloc.reg[a as usize];
                    alloc.reg[a as usize] = Reg::NONE;
                    spilled.push(a);
                    occ.remove(r, &iv.ranges[a as usize]);
                    pick = r;
                }
                _ => {
                    spilled.push(v);
                    continue;
                }
            }
        }
        alloc.reg[vi] = pick;
        occ.insert(pick, v, ranges);
    }
    // Phase 4: slots.
    spilled.sort_unstable_by_key(|&v| (iv.start[v as usize], v));
    let mut slot_end: Vec<u32> = Vec::new();
    for v in spilled {
        let vi = v as usize;
        if mf.remat[vi].is_some() {
            alloc.slot[vi] = super::REMAT;
            continue;
        }
        let k = match slot_end.iter().position(|&e| e < iv.start[vi]) {
            Some(k) => k,
            None => {
                slot_end.push(0);
                slot_end.len() - 1
            }
        };
        slot_end[k] = iv.end[vi];
        alloc.slot[vi] = k as u32;
    }
    alloc.num_slots = slot_end.len() as u32;
    alloc
}

/// For each physical register, the live ranges of the intervals allocated to it so far:
/// start -> (end, interval). The ranges of one register are disjoint (intervals sharing a
/// register never overlap), so the one covering a position is the last starting at or before it.
struct Occupancy {
    by_reg: Vec<BTreeMap<u32, (u32, u32)>>,
}

impl Default for Occupancy {
    fn default() -> Self {
        Occupancy {
            by_reg: vec![BTreeMap::new(); 64],
        }
    }
}

impl Occupancy {
    /// The interval holding `r` at `pos` (`u32::MAX` if none): an active interval.
    fn holder(&self, r: Reg, pos: u32) -> u32 {
        match self.by_reg[r.0 as usize].range(..=pos).next_back() {
            Some((_, &(e, v))) if e >= pos => v,
            _ => u32::MAX,
        }
    }

    /// Whether an interval holding `r`, other than `except`, overlaps one of `ranges`.
    fn conflicts(&self, r: Reg, ranges: &[(u32, u32)], except: u32) -> bool {
        let m = &self.by_reg[r.0 as usize];
        ranges.iter().any(|&(s, e)| {
            let before = m
                .range(..s)
                .next_back()
                .is_some_and(|(_, &(pe, pv))| pe >= s && pv != except);
            before || m.range(s..=e).any(|(_, &(_, pv))| pv != except)
        })
    }

    fn insert(&mut self, r: Reg, v: u32, ranges: &[(u32, u32)]) {
        let m = &mut self.by_reg[r.0 as usize];
        for &(s, e) in ranges {
            m.insert(s, (e, v));
        }
    }

    fn remove(&mut self, r: Reg, ranges: &[(u32, u32)]) {
        let m = &mut self.by_reg[r.0 as usize];
        for &(s, _) in ranges {
            m.remove(&s);
        }
    }
}
