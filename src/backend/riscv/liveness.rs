//! Liveness of virtual registers on machine IR, and live intervals for the allocator.
//!
//! Instructions get a linear numbering in emission order: instruction `k` reads its operands at
//! position `2k` and writes its result at `2k + 1`, so a value whose last read is at `k` and a
//! value defined at `k` may share a register.
//!
//! Phases:
//! 1. Find the *global* virtual registers: those read in some block before (or without) being
//!    written there. Only they can be live across a block boundary.
//! 2. Per block `gen` (read before written) and `kill` (written) sets, and the least solution
//!    of `in = gen | (out - kill)`, `out = union of successors' in`, found one global at a time:
//!    from the blocks that read it first, walk predecessors (each becomes live-out) and go on
//!    through those that do not write it. The work is the number of (block, live global)
//!    pairs, not blocks times globals (dense bit sets took 1.2 GB on a 30000-arm else-if chain
//!    at -O0, whose phi copies make 30000 globals over 90000 blocks).
//! 3. Intervals: each virtual register's sorted list of live ranges (with holes: a loop
//!    counter is dead between its last read and the back-edge copy that redefines it), built
//!    by the classic backward walk (live-out ranges cover the block; a write cuts the range it
//!    ends; a read opens a range from the block start), with a spill weight (reads and writes
//!    weighted by 10^loop depth, over the square root of the covered length).
//! 4. Fixed ranges of allocatable physical registers (argument and return registers, call
//!    clobbers), found by a backward scan of each block: physical registers never live across
//!    blocks by construction of instruction selection.
//!
//! Cost: O(instructions) for phases 1, 3, 4; phase 2 is O(instructions + live-out pairs *
//! predecessors).

use super::loops::Preds;
use super::minst::*;

/// Live intervals of one function.
#[derive(Debug, Default)]
pub struct Intervals {
    /// Per virtual register: first and last live position (`u32::MAX`, 0 when never used).
    pub start: Vec<u32>,
    pub end: Vec<u32>,
    /// Spill weight: higher means more costly to spill.
    pub weight: Vec<f32>,
    /// Per physical register (0..64): sorted, disjoint-ish ranges where it is fixed-live.
    pub fixed: RangeLists,
    /// Per virtual register: sorted disjoint live ranges `[s, e]` (inclusive), with holes.
    pub ranges: RangeLists,
}

/// Per virtual register, a list of live ranges; all lists in one table (`ranges[v]` is the
/// slice of `v`).
#[derive(Clone, Debug, Default)]
pub struct RangeLists {
    /// `data[offset[v]..offset[v + 1]]` are the ranges of `v`.
    offset: Vec<u32>,
    data: Vec<(u32, u32)>,
}

impl std::ops::Index<usize> for RangeLists {
    type Output = [(u32, u32)];
    #[inline]
    fn index(&self, v: usize) -> &[(u32, u32)] {
        &self.data[self.offset[v] as usize..self.offset[v + 1] as usize]
    }
}

/// No entry (end of a linked list of `compute`).
const NIL: u32 = u32::MAX;

impl Intervals {
    /// Whether physical `r` is fixed-live anywhere in the ranges of virtual `v`.
    pub fn fixed_conflict_v(&self, r: Reg, v: usize) -> bool {
        self.ranges[v]
            .iter()
            .any(|&(s, e)| self.fixed_conflict(r, s, e))
    }

    /// Whether `v` is live at `pos`.
    pub fn covers(&self, v: usize, pos: u32) -> bool {
        let r = &self.ranges[v];
        let k = r.partition_point(|&(_, e)| e < pos);
        k < r.len() && r[k].0 <= pos
    }

    /// Whether the live ranges of `a` and `b` intersect.
    pub fn intersects(&self, a: usize, b: usize) -> bool {
        let (x, y) = (&self.ranges[a], &self.ranges[b]);
        let (Some(&(xs, _)), Some(&(ys, _))) = (x.first(), y.first()) else {
            return false;
        };
        // Skip, by binary search, the ranges of each that end before the other starts: the
        // allocator asks this of a short new interval against long ones with many holes (a phi
        // of a long else-if chain), where a merge from the start was quadratic overall.
        let mut i = x.partition_point(|&(_, e)| e < ys);
        let mut j = y.partition_point(|&(_, e)| e < xs);
        while i < x.len() && j < y.len() {
            if x[i].1 < y[j].0 {
                i += 1;
            } else if y[j].1 < x[i].0 {
                j += 1;
            } else {
                return true;
            }
        }
        false
    }

    /// Whether physical `r` is fixed-live anywhere in `[s, e]`.
    pub fn fixed_conflict(&self, r: Reg, s: u32, e: u32) -> bool {
        let v = &self.fixed[r.0 as usize];
        // First range ending at or after s.
        let k = v.partition_point(|&(_, re)| re < s);
        v[k..]
            .iter()
            .take_while(|&&(rs, _)| rs <= e)
            .any(|&(rs, re)| rs <= e && re >= s)
    }
}

/// Live ranges while `compute` builds them: per virtual register a linked list of
/// `(start, end, next)` entries, newest (lowest) first.
struct RangeBuilder<'a> {
    head: &'a mut Vec<u32>,
    recs: &'a mut Vec<(u32, u32, u32)>,
}

impl RangeBuilder<'_> {
    /// Adds `[s, e]` to `v`, merged into its newest range when they touch.
    #[inline]
    fn add(&mut self, v: usize, s: u32, e: u32) {
        let h = self.head[v];
        if h != NIL {
            let last = &mut self.recs[h as usize];
            if last.0 <= e.saturating_add(1) {
                last.0 = last.0.min(s);
                last.1 = last.1.max(e);
                return;
            }
        }
        self.recs.push((s, e, h));
        self.head[v] = self.recs.len() as u32 - 1;
    }

    /// [`add`](Self::add) for a block `[s, e]` before every range added so far: it merges
    /// only with a newest range starting right after it.
    #[inline]
    fn add_before(&mut self, v: usize, s: u32, e: u32) {
        let h = self.head[v];
        if h != NIL {
            let last = &mut self.recs[h as usize];
            debug_assert!(last.0 > e);
            if last.0 == e + 1 {
                last.0 = s;
                return;
            }
        }
        self.recs.push((s, e, h));
        self.head[v] = self.recs.len() as u32 - 1;
    }
}

/// The working tables of `compute`, kept per thread between calls so that compiling many
/// functions does not allocate them again for each.
#[derive(Default)]
struct Scratch {
    def_stamp: Vec<u32>,
    gidx: Vec<u32>,
    globals: Vec<u32>,
    gen_head: Vec<u32>,
    kill_head: Vec<u32>,
    lists: Vec<(u32, u32)>,
    kill_stamp: Vec<u32>,
    gen_stamp: Vec<u32>,
    out_head: Vec<u32>,
    outs: Vec<(u32, u32)>,
    kills: Vec<u32>,
    live_in_at: Vec<u32>,
    live_out_at: Vec<u32>,
    work: Vec<MBlock>,
    head: Vec<u32>,
    recs: Vec<(u32, u32, u32)>,
    live: Vec<u32>,
    fixed: Vec<(u32, u32, u32)>,
    dense: Dense,
}

/// The tables of the dense phase 2: per block, bit sets of globals (`words` words each).
#[derive(Default)]
struct Dense {
    gen: Vec<u64>,
    kill: Vec<u64>,
    live_in: Vec<u64>,
    live_out: Vec<u64>,
    queued: Vec<bool>,
}

/// Bit-set words (blocks times words per set of globals) up to which phase 2 is solved densely
/// whatever the function's size; beyond, only while there are no more than instructions.
const DENSE_MIN_WORDS: usize = 4096;

thread_local! {
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::default();
}

/// `v` emptied, then `n` copies of `x`.
fn reset<T: Clone>(v: &mut Vec<T>, n: usize, x: T) {
    v.clear();
    v.resize(n, x);
}

/// Computes liveness and intervals of `mf`.
///
/// The per-global, per-block and per-register lists are linked lists in flat tables (a head
/// per owner, a `next` per entry), so the work uses a fixed number of tables whatever the
/// numbers of registers and blocks (per-thread tables, reused from one call to the next).
pub fn compute(mf: &MFunc) -> Intervals {
    SCRATCH.with(|s| {
        let s = &mut *s.borrow_mut();
        let live_out = live_out_in(mf, s);
        compute_in(mf, &live_out, s)
    })
}

/// [`compute`] given the registers live out of each block, as [`live_out`] found them on this
/// code or on code that differs from it only by the order of instructions inside blocks, every
/// register's reads and writes keeping their order (what the scheduler does): which registers
/// a block reads before writing them, and so the registers live out of it, are the same.
pub fn compute_with(mf: &MFunc, live_out: &LiveOut) -> Intervals {
    SCRATCH.with(|s| compute_in(mf, live_out, &mut s.borrow_mut()))
}

/// The virtual registers live out of each block: phases 1 and 2 of [`compute`] alone, without
/// intervals.
pub struct LiveOut {
    /// `list[offset[b]..offset[b + 1]]`: the registers (by index) live out of block `b`.
    offset: Vec<u32>,
    list: Vec<u32>,
}

impl LiveOut {
    /// The registers (by index) live out of block `b`.
    pub fn of(&self, b: MBlock) -> &[u32] {
        let b = b.index();
        &self.list[self.offset[b] as usize..self.offset[b + 1] as usize]
    }
}

/// The virtual registers live out of each block of `mf` (the live-out ranges [`compute`]
/// would give).
pub fn live_out(mf: &MFunc) -> LiveOut {
    SCRATCH.with(|s| live_out_in(mf, &mut s.borrow_mut()))
}

/// Phases 1 and 2: the registers live out of each block, per block in decreasing order of
/// their number among the globals (`s.globals`, the global registers).
fn live_out_in(mf: &MFunc, s: &mut Scratch) -> LiveOut {
    let nv = mf.num_vregs();
    let nb = mf.blocks.len();
    // Phase 1: global registers.
    let Scratch {
        def_stamp,
        gidx,
        globals,
        gen_head,
        kill_head,
        lists,
        kill_stamp,
        gen_stamp,
        out_head,
        outs,
        kills,
        live_in_at,
        live_out_at,
        work,
        dense,
        ..
    } = s;
    reset(def_stamp, nv, u32::MAX);
    reset(gidx, nv, u32::MAX);
    globals.clear();
    for &b in &mf.order {
        let blk = &mf.blocks[b];
        // The block's number, as the stamps hold it.
        let bn = b.index() as u32;
        let mut branched = false;
        for mi in &mf.insts[blk.start as usize..blk.end as usize] {
            assert!(
                !(branched && mi.rd.is_some()),
                "{}: write after a branch in block {b}",
                mf.sym
            );
            branched |= mi.op.is_branch();
            for r in [mi.rs1, mi.rs2] {
                if r.is_virt() && def_stamp[r.vindex()] != bn && gidx[r.vindex()] == u32::MAX {
                    gidx[r.vindex()] = globals.len() as u32;
                    globals.push(r.vindex() as u32);
                }
            }
            if mi.rd.is_virt() {
                def_stamp[mi.rd.vindex()] = bn;
            }
        }
    }
    let ng = globals.len();
    let preds = Preds::of(mf, &mf.order);
    let words = ng.div_ceil(64);
    let mut offset = Vec::with_capacity(nb + 1);
    offset.push(0);
    if nb * words <= mf.insts.len().max(DENSE_MIN_WORDS) {
        // Phase 2, dense: bit sets per block, solved by a worklist of blocks.
        let Dense {
            gen,
            kill,
            live_in,
            live_out,
            queued,
        } = dense;
        for t in [&mut *gen, &mut *kill, &mut *live_out] {
            reset(t, nb * words, 0);
        }
        for &b in &mf.order {
            let blk = &mf.blocks[b];
            let at = b.index() * words;
            for mi in &mf.insts[blk.start as usize..blk.end as usize] {
                for r in [mi.rs1, mi.rs2] {
                    if r.is_virt() {
                        let g = gidx[r.vindex()] as usize;
                        if g != u32::MAX as usize && kill[at + g / 64] >> (g % 64) & 1 == 0 {
                            gen[at + g / 64] |= 1 << (g % 64);
                        }
                    }
                }
                if mi.rd.is_virt() {
                    let g = gidx[mi.rd.vindex()] as usize;
                    if g != u32::MAX as usize {
                        kill[at + g / 64] |= 1 << (g % 64);
                    }
                }
            }
        }
        live_in.clone_from(gen);
        reset(queued, nb, false);
        work.clear();
        for &b in &mf.order {
            queued[b.index()] = true;
            work.push(b);
        }
        while let Some(b) = work.pop() {
            queued[b.index()] = false;
            let at = b.index() * words;
            let mut changed = false;
            for w in 0..words {
                let mut out = 0;
                for &s in &mf.blocks[b].succs {
                    out |= live_in[s.index() * words + w];
                }
                live_out[at + w] = out;
                let new_in = gen[at + w] | (out & !kill[at + w]);
                changed |= new_in != live_in[at + w];
                live_in[at + w] = new_in;
            }
            if changed {
                for &p in &preds[b] {
                    if !queued[p.index()] {
                        queued[p.index()] = true;
                        work.push(p);
                    }
                }
            }
        }
        // Per block, globals in decreasing order (blocks not in the layout have none).
        for &b in &mf.order {
            queued[b.index()] = true;
        }
        let mut list = Vec::new();
        for bi in 0..nb {
            for w in (0..words).rev().filter(|_| queued[bi]) {
                let mut m = live_out[bi * words + w];
                while m != 0 {
                    let top = 63 - m.leading_zeros();
                    m &= !(1 << top);
                    list.push(globals[w * 64 + top as usize]);
                }
            }
            offset.push(list.len() as u32);
        }
        return LiveOut { offset, list };
    } else {
        // Phase 2: per block, the globals read before written (`gen`) and the blocks writing each
        // global (`kill`); then liveness one global at a time (see the module comment).
        // Linked lists of (block, next) entries: per global its gen blocks and its kill blocks.
        reset(gen_head, ng, NIL);
        reset(kill_head, ng, NIL);
        lists.clear();
        reset(kill_stamp, ng, u32::MAX);
        reset(gen_stamp, ng, u32::MAX);
        for &b in &mf.order {
            let blk = &mf.blocks[b];
            let bn = b.index() as u32;
            for mi in &mf.insts[blk.start as usize..blk.end as usize] {
                for r in [mi.rs1, mi.rs2] {
                    if r.is_virt() {
                        let g = gidx[r.vindex()] as usize;
                        if g != u32::MAX as usize && kill_stamp[g] != bn && gen_stamp[g] != bn {
                            gen_stamp[g] = bn;
                            lists.push((bn, gen_head[g]));
                            gen_head[g] = lists.len() as u32 - 1;
                        }
                    }
                }
                if mi.rd.is_virt() {
                    let g = gidx[mi.rd.vindex()] as usize;
                    if g != u32::MAX as usize && kill_stamp[g] != bn {
                        kill_stamp[g] = bn;
                        lists.push((bn, kill_head[g]));
                        kill_head[g] = lists.len() as u32 - 1;
                    }
                }
            }
        }
        // The globals live out of each block: a linked list of (global, next) entries per block.
        reset(out_head, nb, NIL);
        outs.clear();
        reset(kills, nb, u32::MAX);
        reset(live_in_at, nb, u32::MAX);
        reset(live_out_at, nb, u32::MAX);
        work.clear();
        for g in 0..ng as u32 {
            let mut e = kill_head[g as usize];
            while e != NIL {
                let (b, next) = lists[e as usize];
                kills[b as usize] = g;
                e = next;
            }
            let mut e = gen_head[g as usize];
            while e != NIL {
                let (b, next) = lists[e as usize];
                live_in_at[b as usize] = g;
                work.push(MBlock::new(b as usize));
                e = next;
            }
            while let Some(b) = work.pop() {
                for &p in &preds[b] {
                    let pi = p.index();
                    if live_out_at[pi] != g {
                        live_out_at[pi] = g;
                        outs.push((g, out_head[pi]));
                        out_head[pi] = outs.len() as u32 - 1;
                        if kills[pi] != g && live_in_at[pi] != g {
                            live_in_at[pi] = g;
                            work.push(p);
                        }
                    }
                }
            }
        }
    }
    drop(preds);
    let mut list = Vec::with_capacity(outs.len());
    for &head in out_head.iter() {
        let mut e = head;
        while e != NIL {
            let (g, next) = outs[e as usize];
            list.push(globals[g as usize]);
            e = next;
        }
        offset.push(list.len() as u32);
    }
    LiveOut { offset, list }
}

fn compute_in(mf: &MFunc, live_out: &LiveOut, s: &mut Scratch) -> Intervals {
    let nv = mf.num_vregs();
    let Scratch {
        head,
        recs,
        live,
        fixed,
        ..
    } = s;
    // Phase 3: ranges (backward over blocks and instructions, so each register's ranges come
    // in decreasing order and merge with their successor when they touch), then weights.
    // Ranges are linked lists of (start, end, next) entries, newest (lowest) first.
    let mut iv = Intervals {
        start: vec![u32::MAX; nv],
        end: vec![0; nv],
        weight: vec![0.0; nv],
        fixed: RangeLists::default(),
        ranges: RangeLists::default(),
    };
    reset(head, nv, NIL);
    recs.clear();
    let mut rl = RangeBuilder { head, recs };
    // `live[v] == bn`: `v` is live at the current instruction of the block numbered `bn`
    // (from 1 in the walk), so the set needs no clearing between blocks.
    reset(live, nv, 0);
    let mut bn = 0u32;
    // Phase 4 runs in the same walk: fixed ranges as (register, start, end), per physical
    // register the end of its range open at the current instruction, and the set of registers
    // with an open range (so closing them at a block's start visits those only).
    fixed.clear();
    let mut live_end: [u32; 64] = [u32::MAX; 64];
    let mut open: u64 = 0;
    for &b in mf.order.iter().rev() {
        let blk = &mf.blocks[b];
        if blk.start == blk.end {
            continue;
        }
        let (bs, be) = (2 * blk.start, 2 * blk.end - 1);
        bn += 1;
        for &v in live_out.of(b) {
            let v = v as usize;
            // Blocks are walked backward: every range added so far lies after this block.
            rl.add_before(v, bs, be);
            live[v] = bn;
        }
        let freq = 10f32.powi(blk.depth.min(6) as i32);
        for k in (blk.start..blk.end).rev() {
            let mi = &mf.insts[k as usize];
            if mi.rd.is_virt() {
                let v = mi.rd.vindex();
                if live[v] == bn {
                    // The open range of `v` (its newest) starts at this write.
                    rl.recs[rl.head[v] as usize].0 = 2 * k + 1;
                    live[v] = 0;
                } else {
                    rl.add(v, 2 * k + 1, 2 * k + 1);
                }
                iv.weight[v] += freq;
            }
            for r in [mi.rs1, mi.rs2] {
                if r.is_virt() {
                    let v = r.vindex();
                    if live[v] != bn {
                        rl.add(v, bs, 2 * k);
                        live[v] = bn;
                    }
                    iv.weight[v] += freq;
                }
            }
            let dp = 2 * k + 1;
            let mut def = |r: u32| {
                let e = live_end[r as usize];
                fixed.push((r, dp, if e == u32::MAX { dp } else { e }));
                live_end[r as usize] = u32::MAX;
                open &= !(1 << r);
            };
            if is_allocatable(mi.rd) {
                def(mi.rd.0);
            }
            if mi.op == MOp::Call {
                // The order among registers is free: phase 4 sorts each register's ranges.
                let mut m = CALL_CLOBBERS;
                while m != 0 {
                    def(m.trailing_zeros());
                    m &= m - 1;
                }
            }
            mf.for_each_use(mi, |r| {
                if is_allocatable(r) && live_end[r.0 as usize] == u32::MAX {
                    live_end[r.0 as usize] = 2 * k;
                    open |= 1 << r.0;
                }
            });
        }
        while open != 0 {
            let r = open.trailing_zeros();
            open &= open - 1;
            fixed.push((r, 2 * blk.start, live_end[r as usize]));
            live_end[r as usize] = u32::MAX;
        }
    }
    let RangeBuilder { head, recs } = rl;
    // Flatten: each list from its head is in increasing order.
    let mut offset = Vec::with_capacity(nv + 1);
    let mut data = Vec::with_capacity(recs.len());
    offset.push(0u32);
    for (v, &h) in head.iter().enumerate() {
        if h == NIL {
            offset.push(data.len() as u32);
            continue;
        }
        let mut len = 0u32;
        let mut e = h;
        iv.start[v] = recs[e as usize].0;
        while e != NIL {
            let (s, en, next) = recs[e as usize];
            data.push((s, en));
            len += en - s + 1;
            iv.end[v] = en;
            e = next;
        }
        offset.push(data.len() as u32);
        iv.weight[v] /= (len as f32).sqrt();
        if mf.remat[VReg::new(v)].is_some() {
            iv.weight[v] *= 0.5; // spilling it costs a recomputation, not a memory access
        }
    }
    iv.ranges = RangeLists { offset, data };
    // Phase 4, grouped by register and sorted.
    let mut offset = vec![0u32; 65];
    for &(r, _, _) in fixed.iter() {
        offset[r as usize + 1] += 1;
    }
    for r in 0..64 {
        offset[r + 1] += offset[r];
    }
    let mut data = vec![(0u32, 0u32); fixed.len()];
    let mut fill = offset.clone();
    for &(r, s, e) in fixed.iter() {
        data[fill[r as usize] as usize] = (s, e);
        fill[r as usize] += 1;
    }
    drop(fill);
    for r in 0..64 {
        data[offset[r] as usize..offset[r + 1] as usize].sort_unstable();
    }
    iv.fixed = RangeLists { offset, data };
    iv
}
