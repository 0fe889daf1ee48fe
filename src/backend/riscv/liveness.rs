//! Liveness of virtual registers on machine IR, and live intervals for the allocator.
//!
//! Instructions get a linear numbering in emission order: instruction `k` reads its operands at
//! position `2k` and writes its result at `2k + 1`, so a value whose last read is at `k` and a
//! value defined at `k` may share a register.
//!
//! Phases:
//! 1. Find the *global* virtual registers: those read in some block before (or without) being
//!    written there. Only they can be live across a block boundary, so the dataflow sets are
//!    bit sets over a dense numbering of just these (functions with many values stay cheap).
//! 2. Per block `gen` (read before written) and `kill` (written) sets; backward dataflow
//!    `in = gen | (out - kill)`, `out = union of successors' in`, iterated to a fixed point.
//! 3. Intervals: each virtual register's hull `[start, end]` of every position where it is
//!    live (block boundaries where it is live in/out, plus its reads and writes), with a spill
//!    weight (reads and writes weighted by 10^loop depth, over the hull's length).
//! 4. Fixed ranges of allocatable physical registers (argument and return registers, call
//!    clobbers), found by a backward scan of each block: physical registers never live across
//!    blocks by construction of instruction selection.
//!
//! Cost: O(instructions) for phases 1, 3, 4; phase 2 is O(blocks * globals / 64) per iteration.

use super::minst::*;

/// Dense bit rows, one per block.
struct BitRows {
    words: usize,
    bits: Vec<u64>,
}

impl BitRows {
    fn new(rows: usize, cols: usize) -> Self {
        let words = cols.div_ceil(64).max(1);
        BitRows { words, bits: vec![0; rows * words] }
    }
    fn row(&self, r: usize) -> &[u64] {
        &self.bits[r * self.words..(r + 1) * self.words]
    }
    fn set(&mut self, r: usize, c: usize) {
        self.bits[r * self.words + c / 64] |= 1 << (c % 64);
    }
    fn iter_row(&self, r: usize) -> impl Iterator<Item = usize> + '_ {
        self.row(r).iter().enumerate().flat_map(|(wi, &w)| {
            let mut w = w;
            std::iter::from_fn(move || {
                if w == 0 {
                    return None;
                }
                let b = w.trailing_zeros() as usize;
                w &= w - 1;
                Some(wi * 64 + b)
            })
        })
    }
}

/// Live intervals of one function.
#[derive(Debug, Default)]
pub struct Intervals {
    /// Per virtual register: first and last live position (`u32::MAX`, 0 when never used).
    pub start: Vec<u32>,
    pub end: Vec<u32>,
    /// Spill weight: higher means more costly to spill.
    pub weight: Vec<f32>,
    /// Per physical register (0..64): sorted, disjoint-ish ranges where it is fixed-live.
    pub fixed: Vec<Vec<(u32, u32)>>,
    /// Per virtual register: block ids where it is live-in (for the checker and splitting).
    pub live_in: Vec<Vec<u32>>,
}

impl Intervals {
    /// Whether physical `r` is fixed-live anywhere in `[s, e]`.
    pub fn fixed_conflict(&self, r: Reg, s: u32, e: u32) -> bool {
        let v = &self.fixed[r.0 as usize];
        // First range ending at or after s.
        let k = v.partition_point(|&(_, re)| re < s);
        v[k..].iter().take_while(|&&(rs, _)| rs <= e).any(|&(rs, re)| rs <= e && re >= s)
    }
}

/// Computes liveness and intervals of `mf`.
pub fn compute(mf: &MFunc) -> Intervals {
    let nv = mf.num_vregs();
    let nb = mf.blocks.len();
    // Phase 1: global registers.
    let mut def_stamp = vec![u32::MAX; nv];
    let mut gidx = vec![u32::MAX; nv];
    let mut globals: Vec<u32> = Vec::new();
    for &b in &mf.order {
        let blk = &mf.blocks[b as usize];
        for mi in &mf.insts[blk.start as usize..blk.end as usize] {
            for r in mi.uses() {
                if r.is_virt() && def_stamp[r.vindex()] != b && gidx[r.vindex()] == u32::MAX {
                    gidx[r.vindex()] = globals.len() as u32;
                    globals.push(r.vindex() as u32);
                }
            }
            if mi.rd.is_virt() {
                def_stamp[mi.rd.vindex()] = b;
            }
        }
    }
    // Phase 2: gen/kill and dataflow.
    let ng = globals.len();
    let mut gen = BitRows::new(nb, ng);
    let mut kill = BitRows::new(nb, ng);
    for &b in &mf.order {
        let bi = b as usize;
        let blk = &mf.blocks[bi];
        for mi in &mf.insts[blk.start as usize..blk.end as usize] {
            for r in mi.uses() {
                if r.is_virt() {
                    let g = gidx[r.vindex()];
                    if g != u32::MAX && kill.row(bi)[g as usize / 64] & (1 << (g % 64)) == 0 {
                        gen.set(bi, g as usize);
                    }
                }
            }
            if mi.rd.is_virt() {
                let g = gidx[mi.rd.vindex()];
                if g != u32::MAX {
                    kill.set(bi, g as usize);
                }
            }
        }
    }
    let w = gen.words;
    let mut live_in = BitRows::new(nb, ng);
    let mut live_out = BitRows::new(nb, ng);
    let mut tmp = vec![0u64; w];
    let mut changed = true;
    while changed {
        changed = false;
        for &b in mf.order.iter().rev() {
            let bi = b as usize;
            tmp.iter_mut().for_each(|x| *x = 0);
            for &s in &mf.blocks[bi].succs {
                for (t, &x) in tmp.iter_mut().zip(live_in.row(s as usize)) {
                    *t |= x;
                }
            }
            live_out.bits[bi * w..(bi + 1) * w].copy_from_slice(&tmp);
            for k in 0..w {
                let x = gen.bits[bi * w + k] | (tmp[k] & !kill.bits[bi * w + k]);
                if x != live_in.bits[bi * w + k] {
                    live_in.bits[bi * w + k] = x;
                    changed = true;
                }
            }
        }
    }
    // Phase 3: hulls and weights.
    let mut iv = Intervals {
        start: vec![u32::MAX; nv],
        end: vec![0; nv],
        weight: vec![0.0; nv],
        fixed: vec![Vec::new(); 64],
        live_in: vec![Vec::new(); nv],
    };
    let extend = |iv: &mut Intervals, v: usize, p: u32| {
        iv.start[v] = iv.start[v].min(p);
        iv.end[v] = iv.end[v].max(p);
    };
    for &b in &mf.order {
        let bi = b as usize;
        let blk = &mf.blocks[bi];
        if blk.start == blk.end {
            continue;
        }
        let (bs, be) = (2 * blk.start, 2 * blk.end - 1);
        for g in live_in.iter_row(bi) {
            let v = globals[g] as usize;
            extend(&mut iv, v, bs);
            iv.live_in[v].push(b);
        }
        for g in live_out.iter_row(bi) {
            extend(&mut iv, globals[g] as usize, be);
        }
        let freq = 10f32.powi(blk.depth.min(6) as i32);
        for k in blk.start..blk.end {
            let mi = &mf.insts[k as usize];
            for r in mi.uses() {
                if r.is_virt() {
                    extend(&mut iv, r.vindex(), 2 * k);
                    iv.weight[r.vindex()] += freq;
                }
            }
            if mi.rd.is_virt() {
                extend(&mut iv, mi.rd.vindex(), 2 * k + 1);
                iv.weight[mi.rd.vindex()] += freq;
            }
        }
    }
    for v in 0..nv {
        if iv.start[v] != u32::MAX {
            let len = (iv.end[v] - iv.start[v]) as f32 + 1.0;
            iv.weight[v] /= len.sqrt();
        }
    }
    // Phase 4: fixed ranges.
    let mut live_end: [u32; 64] = [u32::MAX; 64];
    for &b in &mf.order {
        let blk = &mf.blocks[b as usize];
        for k in (blk.start..blk.end).rev() {
            let mi = &mf.insts[k as usize];
            let dp = 2 * k + 1;
            mf.for_each_def(mi, |r| {
                if is_allocatable(r) {
                    let e = live_end[r.0 as usize];
                    iv.fixed[r.0 as usize].push((dp, if e == u32::MAX { dp } else { e }));
                    live_end[r.0 as usize] = u32::MAX;
                }
            });
            mf.for_each_use(mi, |r| {
                if is_allocatable(r) && live_end[r.0 as usize] == u32::MAX {
                    live_end[r.0 as usize] = 2 * k;
                }
            });
        }
        for r in 0..64 {
            if live_end[r] != u32::MAX {
                iv.fixed[r].push((2 * blk.start, live_end[r]));
                live_end[r] = u32::MAX;
            }
        }
    }
    for v in &mut iv.fixed {
        v.sort_unstable();
    }
    iv
}
