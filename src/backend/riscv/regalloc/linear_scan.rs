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
//!    registers), hints first, heaviest first: a lighter hint's register is passed over when
//!    heavier copy partners not allocated yet could not take it (a partner live across a call
//!    and a caller-saved register: the heavy copy would stay). A value with copies whose
//!    partners are not allocated yet
//!    looks further along the copies, through values not allocated yet, for the nearest
//!    allocated one and takes its register (a loop parameter whose next value is also copied
//!    into a later loop's parameter, allocated already); failing that, the register the most
//!    copy weight of those partners could take too (a partner live across a call steers it
//!    to a callee-saved register), first fit among equals. A value without copies takes the
//!    register of an operand dying at its definition (the definition waits for that operand
//!    anyway), else with enough caller-saved registers free the one released longest ago
//!    (so the scheduler after allocation is not tied by a register rewritten right after its
//!    last read), else the first free one in `ALLOC_*` order; callee-saved registers come
//!    last, in order. The active and inactive
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
//! Cost: O(n log n + n * registers * ranges * (log n + log fixed)), plus, for each range
//! marked or looked up, a word per position of the two blocks of 64 positions it ends in and
//! a word per block it covers (see `Occupancy`).

use super::super::liveness::Intervals;
use super::super::minst::*;
use super::{Allocation, Spill, SpillSlot};
use crate::ir::IdVec;

/// Free caller-saved registers needed before a value takes the one released longest ago rather
/// than the first: with fewer, first fit packs intervals tighter (fewer spills).
const ROTATE_MIN_FREE: usize = 2;

pub fn allocate(mf: &MFunc, iv: &Intervals) -> Allocation {
    let nv = mf.num_vregs();
    // Phase 1: hints, each weighted by the execution frequency of its copies. First every
    // (register, hinted register, frequency) in code order, then grouped by register.
    // At most two entries per instruction (the operand hints below).
    let mut moves: Vec<(u32, Reg, f32)> = Vec::with_capacity(2 * mf.insts.len());
    for &b in &mf.order {
        let blk = &mf.blocks[b];
        let freq = 10f32.powi(blk.depth.min(6) as i32);
        for mi in &mf.insts[blk.start as usize..blk.end as usize] {
            if !mi.op.is_move() {
                continue;
            }
            let (d, s) = (mi.rd, mi.rs1);
            match (d.is_virt(), s.is_virt()) {
                (true, false) if is_allocatable(s) => moves.push((d.vindex() as u32, s, freq)),
                (false, true) if is_allocatable(d) => moves.push((s.vindex() as u32, d, freq)),
                (true, true) if d != s => {
                    moves.push((d.vindex() as u32, s, freq));
                    moves.push((s.vindex() as u32, d, freq));
                }
                _ => {}
            }
        }
    }
    let hints = Hints::new(nv, &moves);
    // Operands of each value's definitions: reusing the register of an operand that dies there
    // costs the scheduler nothing (the definition already waits for it).
    moves.clear();
    for mi in &mf.insts {
        if mi.op.is_move() || !mi.rd.is_virt() {
            continue;
        }
        for u in [mi.rs1, mi.rs2] {
            if u.is_virt() && u != mi.rd && mf.vclass[u.as_vreg()] == mf.vclass[mi.rd.as_vreg()] {
                moves.push((mi.rd.vindex() as u32, u, 1.0));
            }
        }
    }
    let operands = Hints::new(nv, &moves);
    drop(moves);
    // Phase 2-3: intervals by increasing start (then number), by a counting sort on starts.
    let order = by_start(iv);
    let mut alloc = Allocation {
        reg: IdVec::filled(nv, Reg::NONE),
        spill: IdVec::filled(nv, Spill::No),
        num_slots: 0,
    };
    let mut spilled: Vec<u32> = Vec::new();
    let mut occ = Occupancy::new(iv);
    // Per physical register: the end of the last interval allocated to it.
    let mut released = [0u32; 64];
    let mut group = CopyGroup::new(nv);
    // Each pool, and its caller-saved registers, as masks.
    let mask = |rs: &[Reg]| rs.iter().fold(0u64, |m, r| m | 1 << r.0);
    let caller_masks = [
        mask(&ALLOC_INT[..CALLER_SAVED_INT]),
        mask(&ALLOC_FLOAT[..CALLER_SAVED_FLOAT]),
    ];
    let pool_masks = [mask(&ALLOC_INT), mask(&ALLOC_FLOAT)];
    // See `pending` below: one buffer for all values.
    let mut pending: Vec<(u64, f32)> = Vec::new();
    for &v in &order {
        let vi = v as usize;
        let vr = VReg::new(vi);
        let pos = iv.start[vi];
        let ranges = &iv.ranges[vi];
        let class = mf.vclass[vr];
        let (pool, caller_saved) = match class {
            RegClass::Int => (&ALLOC_INT[..], CALLER_SAVED_INT),
            RegClass::Float => (&ALLOC_FLOAT[..], CALLER_SAVED_FLOAT),
        };
        let k = (class == RegClass::Float) as usize;
        let (caller_mask, pool_mask) = (caller_masks[k], pool_masks[k]);
        let copies = hints.of(vi);
        // `r` could take this interval if its holder here (the active interval holding it, if
        // any) were spilled: no other interval holding `r` overlaps, and `r` is not fixed-live.
        // `h` is that holder, `occ.holder(r, pos, iv)`.
        let usable = |r: Reg, h: u32, occ: &Occupancy| {
            !occ.conflicts_except(r, ranges, h, iv)
                && !ranges.iter().any(|&(s, e)| iv.fixed_conflict(r, s, e))
        };
        // The registers no interval allocated so far holds, nor fixed-live, over `ranges`
        // (allocating this value changes nothing before its register is chosen).
        let free_mask = occ.free_mask(ranges);
        let free = |r: Reg| free_mask >> r.0 & 1 != 0;
        let mut pick = Reg::NONE;
        // Partners not allocated yet met before the hint taken, each with the registers it
        // could take: a lighter hint's register that a heavier pending partner cannot take
        // (one live across a call, where the register is caller-saved) would move the heavier
        // copy instead of removing it.
        pending.clear();
        let lost = |r: Reg, pending: &[(u64, f32)]| -> f32 {
            pending
                .iter()
                .filter(|&&(m, _)| m >> r.0 & 1 == 0)
                .map(|&(_, w)| w)
                .sum()
        };
        for &(h, w) in copies {
            let h = if h.is_virt() {
                let r = alloc.reg[h.as_vreg()];
                if r.is_none() && iv.start[h.vindex()] >= pos {
                    let m = occ.free_mask(&iv.ranges[h.vindex()]) & pool_mask;
                    if m != 0 {
                        pending.push((m, w));
                    }
                }
                r
            } else {
                h
            };
            if h.is_some() && h.phys_class() == class && is_allocatable(h) && free(h) {
                if lost(h, &pending) <= w {
                    pick = h;
                }
                break;
            }
        }
        if pick.is_none() && !copies.is_empty() {
            // Copy partners not allocated yet: the register of the nearest allocated value
            // joined to this one by copies that the heavier pending partners could take too,
            // else one its partners could take too.
            pick = group.register_of(vi, &hints, alloc.reg.as_slice(), |r| {
                r.phys_class() == class && is_allocatable(r) && free(r) && lost(r, &pending) == 0.0
            });
            if pick.is_none() {
                pick = shared_register(pool, group.members(), &occ, iv, &released, pos, free_mask);
            }
        }
        if pick.is_none() {
            // A value without copies takes the register of an operand dying at its
            // definition (a chain `acc = acc + x` stays in one register, which a copy at the
            // loop's end may then coalesce with; the definition waits for the operand anyway,
            // so this costs the scheduler nothing even under pressure), else, with enough
            // free, the caller-saved register released longest ago: a value written into a
            // register just read by an unrelated instruction leaves the scheduler after
            // allocation no room to overlap the two. Then first fit: callee-saved registers
            // last, to save as few as possible.
            if copies.is_empty() {
                pick = operands
                    .of(vi)
                    .iter()
                    .map(|&(u, _)| alloc.reg[u.as_vreg()])
                    .find(|&r| r.is_some() && free(r))
                    .unwrap_or(Reg::NONE);
                let caller_free = (free_mask & caller_mask).count_ones() as usize;
                if pick.is_none() && caller_free >= ROTATE_MIN_FREE {
                    // The first in `pool` order among those released longest ago.
                    let mut oldest = Reg::NONE;
                    for &r in &pool[..caller_saved] {
                        if free(r)
                            && (oldest.is_none()
                                || released[r.0 as usize] < released[oldest.0 as usize])
                        {
                            oldest = r;
                        }
                    }
                    pick = oldest;
                }
            }
            if pick.is_none() {
                pick = pool.iter().copied().find(|&r| free(r)).unwrap_or(Reg::NONE);
            }
        }
        if pick.is_none() {
            // Spill the cheapest of the new interval and the active ones it could replace.
            let first = match class {
                RegClass::Int => 0,
                RegClass::Float => 32,
            };
            let holders: [u32; 32] =
                std::array::from_fn(|r| occ.holder(Reg(first + r as u32), pos, iv));
            // The lightest usable one (by weight, then number): the active intervals are
            // tried lightest first, and none at least as heavy as the new one can be taken.
            let mut active = [0u32; 32];
            let mut n = 0;
            for a in holders {
                if a != u32::MAX && mf.vclass[VReg::new(a as usize)] == class {
                    active[n] = a;
                    n += 1;
                }
            }
            let active = &mut active[..n];
            active.sort_unstable_by(|&a, &b| {
                iv.weight[a as usize]
                    .total_cmp(&iv.weight[b as usize])
                    .then(a.cmp(&b))
            });
            let mut victim = None;
            for &a in active.iter() {
                if iv.weight[a as usize] >= iv.weight[vi] {
                    break;
                }
                if usable(alloc.reg[VReg::new(a as usize)], a, &occ) {
                    victim = Some(a);
                    break;
                }
            }
            match victim {
                Some(a) if iv.weight[a as usize] < iv.weight[vi] => {
                    let r = std::mem::replace(&mut alloc.reg[VReg::new(a as usize)], Reg::NONE);
                    spilled.push(a);
                    occ.remove(r, a, &iv.ranges[a as usize], iv);
                    pick = r;
                }
                _ => {
                    spilled.push(v);
                    continue;
                }
            }
        }
        alloc.reg[vr] = pick;
        occ.insert(pick, v, ranges);
        let r = &mut released[pick.0 as usize];
        *r = (*r).max(iv.end[vi]);
    }
    occ.recycle();
    // Phase 4: slots.
    spilled.sort_unstable_by_key(|&v| (iv.start[v as usize], v));
    let mut slot_end: Vec<u32> = Vec::new();
    for v in spilled {
        let vi = v as usize;
        let vr = VReg::new(vi);
        if mf.remat[vr].is_some() {
            alloc.spill[vr] = Spill::Remat;
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
        alloc.spill[vr] = Spill::Slot(SpillSlot::new(k));
    }
    alloc.num_slots = slot_end.len() as u32;
    alloc
}

/// Hints of one register up to which `Hints::new` orders them by insertion.
const SMALL_GROUP: usize = 16;

/// Per virtual register, its hinted registers with their summed weights, heaviest first (then
/// by register number): one table, `list[offset[v]..offset[v + 1]]` for `v`.
struct Hints {
    offset: Vec<u32>,
    list: Vec<(Reg, f32)>,
}

impl Hints {
    /// Groups `moves` (register, hinted register, weight) by register; the weights of one
    /// pair are summed in the order of `moves`.
    fn new(nv: usize, moves: &[(u32, Reg, f32)]) -> Hints {
        let mut offset = vec![0u32; nv + 1];
        for &(v, _, _) in moves {
            offset[v as usize + 1] += 1;
        }
        for k in 0..nv {
            offset[k + 1] += offset[k];
        }
        let mut fill = offset.clone();
        let mut list = vec![(Reg::NONE, 0f32); moves.len()];
        for &(v, r, w) in moves {
            list[fill[v as usize] as usize] = (r, w);
            fill[v as usize] += 1;
        }
        // Merge repeated registers into their first entry, then sort each group.
        let mut out = 0usize;
        for v in 0..nv {
            let (s, e) = (offset[v] as usize, offset[v + 1] as usize);
            offset[v] = out as u32;
            if e - s <= 1 {
                // Nothing to merge or order (most registers).
                if e > s {
                    list[out] = list[s];
                    out += 1;
                }
                continue;
            }
            let first = out;
            for k in s..e {
                let (r, w) = list[k];
                match list[first..out].iter_mut().find(|(x, _)| *x == r) {
                    Some(e) => e.1 += w,
                    None => {
                        list[out] = (r, w);
                        out += 1;
                    }
                }
            }
            // Heaviest first, then by register (registers are distinct: a total order).
            let order = |a: &(Reg, f32), b: &(Reg, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
            let group = &mut list[first..out];
            if group.len() <= SMALL_GROUP {
                // Insertion sort: most groups hold two or three hints.
                for i in 1..group.len() {
                    let x = group[i];
                    let mut j = i;
                    while j > 0 && order(&x, &group[j - 1]).is_lt() {
                        group[j] = group[j - 1];
                        j -= 1;
                    }
                    group[j] = x;
                }
            } else {
                group.sort_by(order);
            }
        }
        offset[nv] = out as u32;
        list.truncate(out);
        Hints { offset, list }
    }

    fn of(&self, v: usize) -> &[(Reg, f32)] {
        &self.list[self.offset[v] as usize..self.offset[v + 1] as usize]
    }
}

/// A search through chains of copies: values joined by copies are best all in one register, so
/// a value whose copy partners are not allocated yet takes the register of the nearest
/// allocated value it is joined to through them (say, a loop parameter whose next value, not
/// allocated yet, is also copied into the parameter of a later loop already allocated).
struct CopyGroup {
    /// Per virtual register, the number of the search that last reached it.
    seen: Vec<u32>,
    search: u32,
    /// The values the last search reached and did not find allocated, with the weight of the
    /// copy it reached each through; the first is the value searched from.
    queue: Vec<(u32, f32)>,
}

/// Values a search visits at most: copy chains are short; this bounds the cost on long ones.
const GROUP_SEARCH_LIMIT: usize = 32;

impl CopyGroup {
    fn new(nv: usize) -> CopyGroup {
        CopyGroup {
            seen: vec![0; nv],
            search: 0,
            queue: Vec::new(),
        }
    }

    /// The register of the allocated value nearest to `v` (fewest copies away, then heaviest
    /// copy) through copies between virtual registers that satisfies `ok`, or `Reg::NONE`. The
    /// search goes through values not allocated yet only: an allocated value's register is
    /// what its own copy partners already had the chance to take.
    fn register_of(
        &mut self,
        v: usize,
        hints: &Hints,
        reg: &[Reg],
        ok: impl Fn(Reg) -> bool,
    ) -> Reg {
        self.search += 1;
        self.queue.clear();
        self.queue.push((v as u32, 0.0));
        self.seen[v] = self.search;
        let mut k = 0;
        while k < self.queue.len() && self.queue.len() < GROUP_SEARCH_LIMIT {
            let u = self.queue[k].0 as usize;
            k += 1;
            for &(h, w) in hints.of(u) {
                if !h.is_virt() || self.seen[h.vindex()] == self.search {
                    continue;
                }
                self.seen[h.vindex()] = self.search;
                let r = reg[h.vindex()];
                if r.is_some() {
                    if u != v && ok(r) {
                        return r;
                    }
                } else {
                    self.queue.push((h.vindex() as u32, w));
                }
            }
        }
        Reg::NONE
    }

    /// The values not allocated yet that the last `register_of` reached, nearest first, with
    /// the weight of the copy joining each.
    fn members(&self) -> &[(u32, f32)] {
        &self.queue[1..]
    }
}

/// Copy partners a register choice looks at, at most: the nearest ones carry the weight.
const SHARED_MEMBERS_LIMIT: usize = 8;

/// Estimated cost of the first use of a callee-saved register (its save and restore), in the
/// unit of copy weights (one copy executed once).
const CALLEE_SAVE_COST: f32 = 2.0;

/// For a value over `ranges` whose copy partners (`members`: virtual register, weight of the
/// copy that joins it) are not allocated yet: the register of `pool` free over `ranges` that
/// the most weight of them could take too (free over their ranges now, fixed ranges included,
/// so a partner live across a call steers the value to a callee-saved register), less the
/// cost of a callee-saved register not used yet. Partners starting before `pos` were spilled
/// already and do not count. Ties go to the earlier in `pool`, so with no
/// partner in the way this is first fit. `Reg::NONE` if none is free.
fn shared_register(
    pool: &[Reg],
    members: &[(u32, f32)],
    occ: &Occupancy,
    iv: &Intervals,
    released: &[u32; 64],
    pos: u32,
    free_mask: u64,
) -> Reg {
    let members = &members[..members.len().min(SHARED_MEMBERS_LIMIT)];
    let mut best = Reg::NONE;
    let mut best_score = f32::NEG_INFINITY;
    let pending = |u: u32| iv.start[u as usize] >= pos;
    let all: f32 = members
        .iter()
        .filter(|&&(u, _)| pending(u))
        .map(|&(_, w)| w)
        .sum();
    // The registers each partner could take, computed once (0 for one not pending).
    let mut member_free = [0u64; SHARED_MEMBERS_LIMIT];
    for (k, &(u, _)) in members.iter().enumerate() {
        if pending(u) {
            member_free[k] = occ.free_mask(&iv.ranges[u as usize]);
        }
    }
    for &r in pool {
        if free_mask >> r.0 & 1 == 0 {
            continue;
        }
        let mut score: f32 = members
            .iter()
            .zip(&member_free)
            .filter(|&(&(u, _), &m)| pending(u) && m >> r.0 & 1 != 0)
            .map(|(&(_, w), _)| w)
            .sum();
        if r.is_callee_saved() && released[r.0 as usize] == 0 {
            score -= CALLEE_SAVE_COST;
        }
        if score > best_score {
            best = r;
            best_score = score;
            if score >= all {
                break;
            }
        }
    }
    best
}

/// The live intervals (those with a start) ordered by start, then by number.
fn by_start(iv: &Intervals) -> Vec<u32> {
    let nv = iv.start.len();
    let max = (0..nv)
        .map(|v| iv.start[v])
        .filter(|&s| s != u32::MAX)
        .max();
    let Some(max) = max else {
        return Vec::new();
    };
    let mut count = vec![0u32; max as usize + 1];
    for &s in &iv.start {
        if s != u32::MAX {
            count[s as usize] += 1;
        }
    }
    // Each start's first place in `order`: the intervals starting before it.
    let mut total = 0u32;
    for c in &mut count {
        let n = *c;
        *c = total;
        total += n;
    }
    let mut order = vec![0u32; total as usize];
    for (v, &s) in iv.start.iter().enumerate() {
        if s != u32::MAX {
            order[count[s as usize] as usize] = v as u32;
            count[s as usize] += 1;
        }
    }
    order
}

/// For each physical register, the positions where an interval allocated to it so far is live
/// (one bit per position) and the intervals holding it that may still be live (where it is
/// fixed-live, `Intervals::fixed` tells). The ranges of the intervals sharing a register are
/// disjoint, so whether a register is free over some ranges is whether a bit is set there, and
/// the positions an interval holds are exactly its ranges.
struct Occupancy {
    /// Words of bits per register.
    words: usize,
    /// `held[r * words ..][..words]`: live positions of the intervals allocated to `r`.
    held: Vec<u64>,
    /// The union of `held` and the fixed ranges by position rather than by register (bit `r` for
    /// register `r`), so the registers free over some ranges are read off at once, in two
    /// levels over blocks of 64 positions: `full[k]`, the registers busy over all of block `k`
    /// by one range; `busy[p]`, those busy at position `p` by a range covering part of its
    /// block only; `any[k]`, those busy anywhere in block `k` (`full[k]` and every `busy[p]`
    /// of the block). Ranges cost a word per block they cover and a word per position of the
    /// two blocks they end in.
    busy: Vec<u64>,
    full: Vec<u64>,
    any: Vec<u64>,
    /// Per register, the intervals allocated to it, less some that ended before the current
    /// position (pruned when searched).
    holders: Vec<Vec<u32>>,
}

/// Whether a bit of `bits` is set in positions `[s, e]`.
#[inline]
fn any_bit(bits: &[u64], s: u32, e: u32) -> bool {
    let (s, e) = (s as usize, e as usize);
    let (ws, we) = (s / 64, e / 64);
    let lo = !0u64 << (s % 64);
    let hi = !0u64 >> (63 - e % 64);
    if ws == we {
        return bits[ws] & lo & hi != 0;
    }
    bits[ws] & lo != 0 || bits[ws + 1..we].iter().any(|&w| w != 0) || bits[we] & hi != 0
}

/// Sets (or clears) the bits of positions `[s, e]`.
fn set_bits(bits: &mut [u64], s: u32, e: u32, on: bool) {
    let (s, e) = (s as usize, e as usize);
    let (ws, we) = (s / 64, e / 64);
    let lo = !0u64 << (s % 64);
    let hi = !0u64 >> (63 - e % 64);
    let apply = |word: &mut u64, m: u64| {
        if on {
            *word |= m;
        } else {
            *word &= !m;
        }
    };
    if ws == we {
        apply(&mut bits[ws], lo & hi);
        return;
    }
    apply(&mut bits[ws], lo);
    for word in &mut bits[ws + 1..we] {
        apply(word, !0);
    }
    apply(&mut bits[we], hi);
}

thread_local! {
    /// The tables of the last `Occupancy` of this thread, for the next one to reuse.
    static SPARE: std::cell::Cell<Option<Occupancy>> = const { std::cell::Cell::new(None) };
}

impl Occupancy {
    /// The occupancy before any interval is allocated, in the tables of this thread's spare
    /// (`recycle`) when there is one.
    fn new(iv: &Intervals) -> Occupancy {
        // The last position of an interval (`end`: 0 for one without ranges) or fixed range.
        let last = iv
            .end
            .iter()
            .map(|&e| e as usize)
            .chain((0..64).flat_map(|r| iv.fixed[r].iter().map(|&(_, e)| e as usize)))
            .max()
            .unwrap_or(0);
        let words = last / 64 + 1;
        let mut occ = SPARE.take().unwrap_or_else(|| Occupancy {
            words: 0,
            held: Vec::new(),
            busy: Vec::new(),
            full: Vec::new(),
            any: Vec::new(),
            holders: vec![Vec::new(); 64],
        });
        occ.words = words;
        for table in [&mut occ.held, &mut occ.busy] {
            table.clear();
            table.resize(64 * words, 0);
        }
        for table in [&mut occ.full, &mut occ.any] {
            table.clear();
            table.resize(words, 0);
        }
        for r in 0..64 {
            for &(s, e) in &iv.fixed[r] {
                occ.mark(1 << r, s, e);
            }
        }
        occ.holders.iter_mut().for_each(Vec::clear);
        occ
    }

    /// Keeps the tables of `self` for this thread's next `new`.
    fn recycle(self) {
        SPARE.set(Some(self));
    }

    fn bits(&self, r: Reg) -> &[u64] {
        &self.held[r.0 as usize * self.words..][..self.words]
    }

    /// The interval holding `r` at `pos` (`u32::MAX` if none): an active interval. Positions
    /// are asked in increasing order: intervals ending before `pos` are dropped.
    fn holder(&mut self, r: Reg, pos: u32, iv: &Intervals) -> u32 {
        if !any_bit(self.bits(r), pos, pos) {
            return u32::MAX;
        }
        let list = &mut self.holders[r.0 as usize];
        list.retain(|&v| iv.end[v as usize] >= pos);
        list.iter()
            .copied()
            .find(|&v| iv.covers(v as usize, pos))
            .expect("a set bit has a holder")
    }

    /// Whether an interval holding `r` overlaps one of `ranges`.
    fn conflicts(&self, r: Reg, ranges: &[(u32, u32)]) -> bool {
        let bits = self.bits(r);
        ranges.iter().any(|&(s, e)| any_bit(bits, s, e))
    }

    /// Whether an interval holding `r`, other than `except` (`u32::MAX`: none), overlaps one
    /// of `ranges`: a bit is set outside the ranges of `except`.
    fn conflicts_except(&self, r: Reg, ranges: &[(u32, u32)], except: u32, iv: &Intervals) -> bool {
        if except == u32::MAX {
            return self.conflicts(r, ranges);
        }
        let bits = self.bits(r);
        let skip = &iv.ranges[except as usize];
        let mut k = 0;
        for &(s, e) in ranges {
            k += skip[k..].partition_point(|&(_, xe)| xe < s);
            let mut cur = s;
            let mut j = k;
            while cur <= e && j < skip.len() && skip[j].0 <= e {
                let (xs, xe) = skip[j];
                if xs > cur && any_bit(bits, cur, xs - 1) {
                    return true;
                }
                cur = cur.max(xe.saturating_add(1));
                j += 1;
            }
            if cur <= e && any_bit(bits, cur, e) {
                return true;
            }
        }
        false
    }

    /// The registers (bit `r` for register `r`) neither held by an interval nor fixed-live
    /// anywhere in `ranges`.
    fn free_mask(&self, ranges: &[(u32, u32)]) -> u64 {
        let or = |ps: &[u64]| ps.iter().fold(0, |acc, &m| acc | m);
        let mut busy = 0u64;
        for &(s, e) in ranges {
            let (s, e) = (s as usize, e as usize);
            let (ks, ke) = (s / 64, e / 64);
            if ks == ke {
                busy |= self.full[ks] | or(&self.busy[s..=e]);
            } else {
                busy |= self.full[ks] | or(&self.busy[s..(ks + 1) * 64]);
                busy |= or(&self.any[ks + 1..ke]);
                busy |= self.full[ke] | or(&self.busy[ke * 64..=e]);
            }
        }
        !busy
    }

    /// Marks the registers of `bits` busy over `[s, e]`.
    fn mark(&mut self, bits: u64, s: u32, e: u32) {
        let (s, e) = (s as usize, e as usize);
        for k in s / 64..=e / 64 {
            let (lo, hi) = (s.max(k * 64), e.min(k * 64 + 63));
            if hi - lo == 63 {
                self.full[k] |= bits;
            } else {
                for m in &mut self.busy[lo..=hi] {
                    *m |= bits;
                }
            }
            self.any[k] |= bits;
        }
    }

    /// Marks register `r` free over `[s, e]`, which one range marked busy, its `held` bits
    /// cleared already. Where `r` is fixed-live in `[s, e]`, the caller marks it busy again.
    fn unmark(&mut self, r: Reg, s: u32, e: u32, iv: &Intervals) {
        let (s, e) = (s as usize, e as usize);
        let bit = 1u64 << r.0;
        let at = r.0 as usize * self.words;
        for k in s / 64..=e / 64 {
            let (lo, hi) = (s.max(k * 64), e.min(k * 64 + 63));
            if hi - lo == 63 {
                self.full[k] &= !bit;
            } else {
                for m in &mut self.busy[lo..=hi] {
                    *m &= !bit;
                }
            }
            // Busy somewhere in the block: held (one word of `held`) or fixed-live.
            if self.held[at + k] == 0 && !iv.fixed_conflict(r, k as u32 * 64, k as u32 * 64 + 63) {
                self.any[k] &= !bit;
            }
        }
    }

    fn insert(&mut self, r: Reg, v: u32, ranges: &[(u32, u32)]) {
        let at = r.0 as usize * self.words;
        for &(s, e) in ranges {
            set_bits(&mut self.held[at..][..self.words], s, e, true);
            self.mark(1 << r.0, s, e);
        }
        self.holders[r.0 as usize].push(v);
    }

    fn remove(&mut self, r: Reg, v: u32, ranges: &[(u32, u32)], iv: &Intervals) {
        let at = r.0 as usize * self.words;
        let fixed = &iv.fixed[r.0 as usize];
        for &(s, e) in ranges {
            set_bits(&mut self.held[at..][..self.words], s, e, false);
            self.unmark(r, s, e, iv);
            // Where `r` is fixed-live it stays busy.
            let k = fixed.partition_point(|&(_, fe)| fe < s);
            for &(fs, fe) in fixed[k..].iter().take_while(|&&(fs, _)| fs <= e) {
                self.mark(1 << r.0, fs.max(s), fe.min(e));
            }
        }
        self.holders[r.0 as usize].retain(|&x| x != v);
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::liveness;
    use super::super::one_block;
    use super::*;

    /// A chain (`v1 = v0 + 1`, `v0` dying there) stays in one register: the definition waits
    /// for its operand anyway. A value unrelated to the register just released (`v2 = 7`
    /// after the last read of `v1`) takes another one, so the scheduler after allocation may
    /// still move it above that read. A value copied into the result register takes it.
    #[test]
    fn chains_keep_a_register_unrelated_values_rotate() {
        let v: Vec<Reg> = (0..4).map(Reg::vreg).collect();
        let insts = vec![
            MInst::i(MOp::Addiw, v[0], Reg::A0, 1),
            MInst::i(MOp::Addiw, v[1], v[0], 1),
            MInst::store(MOp::Sw, v[1], Reg::a(1), 0),
            MInst::li(v[2], 7),
            MInst::i(MOp::Addiw, v[3], v[2], 1),
            MInst::unary(MOp::Mv, Reg::A0, v[3]),
            MInst::new(MOp::Ret, Reg::NONE, Reg::A0, Reg::NONE, 0),
        ];
        let mf = one_block(insts, 4);
        let iv = liveness::compute(&mf);
        let alloc = allocate(&mf, &iv);
        assert_eq!(
            alloc.reg[VReg::new(1)],
            alloc.reg[VReg::new(0)],
            "the chain keeps its register"
        );
        assert_ne!(
            alloc.reg[VReg::new(2)],
            alloc.reg[VReg::new(1)],
            "an unrelated value rotates"
        );
        assert!(!alloc.reg[VReg::new(2)].is_callee_saved());
        assert_eq!(
            alloc.reg[VReg::new(3)],
            Reg::A0,
            "the copied result coalesces"
        );
        super::super::checker::check(&mf, &alloc).unwrap();
    }

    /// Under pressure (fewer than `ROTATE_MIN_FREE` caller-saved registers free) a chain still
    /// keeps its register rather than taking the first free one, here the one `v0` released.
    #[test]
    fn chains_keep_a_register_under_pressure() {
        let v: Vec<Reg> = (0..12).map(Reg::vreg).collect();
        let mut insts: Vec<MInst> = (0..11).map(|k| MInst::li(v[k], k as i64)).collect();
        insts.push(MInst::store(MOp::Sw, v[0], Reg::SP, 0));
        insts.push(MInst::i(MOp::Addiw, v[11], v[10], 1));
        for &r in &v[1..10] {
            insts.push(MInst::store(MOp::Sw, r, Reg::SP, 0));
        }
        insts.push(MInst::store(MOp::Sw, v[11], Reg::SP, 0));
        insts.push(MInst::new(MOp::Ret, Reg::NONE, Reg::NONE, Reg::NONE, 0));
        let mf = one_block(insts, 12);
        let iv = liveness::compute(&mf);
        let alloc = allocate(&mf, &iv);
        assert!(alloc.reg[VReg::new(11)].is_some());
        assert_eq!(
            alloc.reg[VReg::new(11)],
            alloc.reg[VReg::new(10)],
            "the chain keeps its register"
        );
        assert_ne!(alloc.reg[VReg::new(11)], alloc.reg[VReg::new(0)]);
        super::super::checker::check(&mf, &alloc).unwrap();
    }

    /// `v1` is copied into `v2`, which is copied into `v3`; `v3` is allocated first (its block
    /// comes first) and takes `a0`, its copy into the result. `v1`, when its turn comes, has no
    /// allocated copy partner of its own but reaches `v3` through `v2`, and takes `a0` too, so
    /// neither copy remains.
    #[test]
    fn copy_chains_share_the_register_of_a_far_partner() {
        let v: Vec<Reg> = (0..4).map(Reg::vreg).collect();
        let j = |b: i64| MInst::new(MOp::J, Reg::NONE, Reg::NONE, Reg::NONE, b);
        let code = [
            (
                vec![MInst::new(MOp::Bne, Reg::NONE, Reg::A0, Reg::ZERO, 2), j(1)],
                vec![2, 1],
                0,
            ),
            (
                vec![MInst::i(MOp::Addiw, v[3], Reg::a(1), 5), j(4)],
                vec![4],
                0,
            ),
            (
                vec![MInst::i(MOp::Addiw, v[1], Reg::a(1), 7), j(3)],
                vec![3],
                0,
            ),
            (
                vec![
                    MInst::unary(MOp::Mv, v[2], v[1]),
                    MInst::unary(MOp::Mv, v[3], v[2]),
                    j(4),
                ],
                vec![4],
                0,
            ),
            (
                vec![
                    MInst::unary(MOp::Mv, Reg::A0, v[3]),
                    MInst::new(MOp::Ret, Reg::NONE, Reg::A0, Reg::NONE, 0),
                ],
                vec![],
                0,
            ),
        ];
        let mf = super::super::blocks(code.into(), 4);
        let iv = liveness::compute(&mf);
        let alloc = allocate(&mf, &iv);
        assert_eq!(
            alloc.reg[VReg::new(3)],
            Reg::A0,
            "the first allocated takes its hint"
        );
        assert_eq!(
            alloc.reg[VReg::new(1)],
            Reg::A0,
            "found through the copy into v2"
        );
        assert_eq!(alloc.reg[VReg::new(2)], Reg::A0);
        super::super::checker::check(&mf, &alloc).unwrap();
    }

    /// `v1` is copied from `v0` (which took `a1`, its own hint) once, and into `v2`, live
    /// across a call, ten times as often. `a1` would remove the light copy only: `v1` takes
    /// a callee-saved register `v2` can take too, and the heavy copy coalesces.
    #[test]
    fn a_heavier_pending_partner_outweighs_a_lighter_allocated_one() {
        let v: Vec<Reg> = (0..3).map(Reg::vreg).collect();
        let j = MInst::new(MOp::J, Reg::NONE, Reg::NONE, Reg::NONE, 1);
        let code = [
            (
                vec![
                    MInst::unary(MOp::Mv, v[0], Reg::a(1)),
                    MInst::unary(MOp::Mv, v[1], v[0]),
                    j,
                ],
                vec![1],
                0,
            ),
            (
                vec![
                    MInst::unary(MOp::Mv, v[2], v[1]),
                    MInst::new(MOp::Call, Reg::NONE, Reg::NONE, Reg::NONE, 0),
                    MInst::i(MOp::Addiw, Reg::A0, v[2], 1),
                    MInst::new(MOp::Ret, Reg::NONE, Reg::A0, Reg::NONE, 0),
                ],
                vec![],
                1,
            ),
        ];
        let mf = MFunc {
            calls: vec![CallInfo {
                sym: "g".into(),
                args: vec![],
            }],
            ..super::super::blocks(code.into(), 3)
        };
        let iv = liveness::compute(&mf);
        let alloc = allocate(&mf, &iv);
        assert_eq!(alloc.reg[VReg::new(0)], Reg::a(1));
        assert!(alloc.reg[VReg::new(2)].is_callee_saved());
        assert_eq!(
            alloc.reg[VReg::new(1)],
            alloc.reg[VReg::new(2)],
            "the heavy copy coalesces"
        );
        super::super::checker::check(&mf, &alloc).unwrap();
    }

    /// `v0` is copied into `v1`, live across a call, in a loop: `v0` takes the callee-saved
    /// register `v1` will need rather than the first free caller-saved one, and the copy
    /// coalesces.
    #[test]
    fn a_value_takes_the_register_its_partner_across_a_call_needs() {
        let v: Vec<Reg> = (0..2).map(Reg::vreg).collect();
        let insts = vec![
            MInst::i(MOp::Addiw, v[0], Reg::A0, 1),
            MInst::store(MOp::Sw, v[0], Reg::SP, 0),
            MInst::unary(MOp::Mv, v[1], v[0]),
            MInst::new(MOp::Call, Reg::NONE, Reg::NONE, Reg::NONE, 0),
            MInst::i(MOp::Addiw, Reg::A0, v[1], 1),
            MInst::new(MOp::Ret, Reg::NONE, Reg::A0, Reg::NONE, 0),
        ];
        let mut mf = MFunc {
            calls: vec![CallInfo {
                sym: "g".into(),
                args: vec![],
            }],
            ..one_block(insts, 2)
        };
        mf.blocks[MBlock::new(0)].depth = 1;
        let iv = liveness::compute(&mf);
        let alloc = allocate(&mf, &iv);
        assert!(alloc.reg[VReg::new(1)].is_callee_saved());
        assert_eq!(
            alloc.reg[VReg::new(0)],
            alloc.reg[VReg::new(1)],
            "the copy coalesces"
        );
        super::super::checker::check(&mf, &alloc).unwrap();
    }
}
