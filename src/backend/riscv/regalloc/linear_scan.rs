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
//! 2. Visit intervals by increasing start. Expire intervals that ended; move intervals between
//!    active (live here) and inactive (in a hole here). Take a register of the right class
//!    that no active interval holds, that no inactive interval overlapping this one holds, and
//!    that has no fixed range inside the interval (so values live across a call only get callee-saved registers), hints first,
//!    then in `ALLOC_*` preference order.
//! 3. If none is free: among active intervals whose register would suit the new one, the one
//!    with the lowest spill weight is spilled if it weighs less than the new interval;
//!    otherwise the new interval is spilled. A spilled interval lives in a stack slot for its
//!    whole life; each use reloads it into a reserved scratch register (see `emit`), so
//!    allocation succeeds under any register pressure.
//! 4. Spill slots are shared between spilled intervals that do not overlap (greedy interval
//!    colouring by start).
//!
//! Cost: O(n log n + n * (active + inactive * ranges + registers * ranges * log fixed)).

use super::super::liveness::Intervals;
use super::super::minst::*;
use super::Allocation;

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
    let mut order: Vec<u32> = (0..nv as u32).filter(|&v| iv.start[v as usize] != u32::MAX).collect();
    order.sort_unstable_by_key(|&v| (iv.start[v as usize], v));
    let mut alloc = Allocation { reg: vec![Reg::NONE; nv], slot: vec![u32::MAX; nv], num_slots: 0 };
    let mut spilled: Vec<u32> = Vec::new();
    // `active`: intervals covering the current position; `inactive`: started, not ended, in a
    // hole at the current position. `owner` maps registers of active intervals.
    let mut active: Vec<u32> = Vec::new();
    let mut inactive: Vec<u32> = Vec::new();
    let mut owner: [u32; 64] = [u32::MAX; 64];
    let mut blocked = [false; 64];
    for &v in &order {
        let vi = v as usize;
        let pos = iv.start[vi];
        let mut k = 0;
        while k < active.len() {
            let a = active[k] as usize;
            if iv.end[a] < pos {
                owner[alloc.reg[a].0 as usize] = u32::MAX;
                active.swap_remove(k);
            } else if !iv.covers(a, pos) {
                owner[alloc.reg[a].0 as usize] = u32::MAX;
                inactive.push(a as u32);
                active.swap_remove(k);
            } else {
                k += 1;
            }
        }
        let mut k = 0;
        while k < inactive.len() {
            let a = inactive[k] as usize;
            if iv.end[a] < pos {
                inactive.swap_remove(k);
            } else if iv.covers(a, pos) {
                owner[alloc.reg[a].0 as usize] = a as u32;
                active.push(a as u32);
                inactive.swap_remove(k);
            } else {
                k += 1;
            }
        }
        // Registers of inactive intervals that overlap this one later are not available.
        blocked.iter_mut().for_each(|b| *b = false);
        for &a in &inactive {
            let r = alloc.reg[a as usize];
            if !blocked[r.0 as usize] && iv.intersects(a as usize, vi) {
                blocked[r.0 as usize] = true;
            }
        }
        let class = mf.vclass[vi];
        let pool: &[Reg] = match class {
            RegClass::Int => &ALLOC_INT,
            RegClass::Float => &ALLOC_FLOAT,
        };
        let usable = |r: Reg| !blocked[r.0 as usize] && !iv.fixed_conflict_v(r, vi);
        let free = |r: Reg, owner: &[u32; 64]| owner[r.0 as usize] == u32::MAX && usable(r);
        let mut pick = Reg::NONE;
        for &(h, _) in &hints[vi] {
            let h = if h.is_virt() { alloc.reg[h.vindex()] } else { h };
            if h.is_some() && h.phys_class() == class && is_allocatable(h) && free(h, &owner) {
                pick = h;
                break;
            }
        }
        if pick.is_none() {
            pick = pool.iter().copied().find(|&r| free(r, &owner)).unwrap_or(Reg::NONE);
        }
        if pick.is_none() {
            // Spill the cheapest of the new interval and the active ones it could replace.
            let victim = active
                .iter()
                .copied()
                .filter(|&a| mf.vclass[a as usize] == class && usable(alloc.reg[a as usize]))
                .min_by(|&a, &b| iv.weight[a as usize].total_cmp(&iv.weight[b as usize]).then(a.cmp(&b)));
            match victim {
                Some(a) if iv.weight[a as usize] < iv.weight[vi] => {
                    let r = alloc.reg[a as usize];
                    alloc.reg[a as usize] = Reg::NONE;
                    spilled.push(a);
                    active.retain(|&x| x != a);
                    pick = r;
                }
                _ => {
                    spilled.push(v);
                    continue;
                }
            }
        }
        alloc.reg[vi] = pick;
        owner[pick.0 as usize] = v;
        active.push(v);
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
