//! Innermost loops of machine code and their register pressure, for the static statistics.
//!
//! The allocator's goal, stated by the backend issue, is that no spill code stays inside an
//! innermost loop that needs fewer than 20 simultaneously live values. This module finds those
//! loops on the allocated function (natural loops of the machine CFG: an edge `t -> h` where
//! `h` dominates `t`, the body being what reaches `t` without passing `h`; loops sharing a
//! header merge) and measures the most values live at one point inside each (from the live
//! intervals). `mod.rs` then counts the spill loads and stores emitted in its blocks.
//! Cost: O(blocks^2) worst case for dominators (iterative, few rounds in practice),
//! O(loops * blocks) for bodies, O(instructions + ranges) for pressure.

use super::liveness::Intervals;
use super::minst::*;

/// One innermost loop.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InnerLoop {
    pub header: u32,
    /// Blocks of the body (header included), sorted.
    pub blocks: Vec<u32>,
    /// Most virtual registers live at one point in the body: all, integer, float.
    pub pressure: u32,
    pub pressure_int: u32,
    pub pressure_float: u32,
    /// Whether the body calls a function (values live across it need callee-saved registers).
    pub has_call: bool,
}

/// The predecessors of each block in one table: `preds[b]` is the slice of block `b`.
pub(super) struct Preds {
    start: Vec<u32>,
    list: Vec<u32>,
}

impl Preds {
    /// The predecessors among `blocks` of every block, each list in the order of `blocks`
    /// (once per edge).
    pub(super) fn of(mf: &MFunc, blocks: &[u32]) -> Preds {
        let nb = mf.blocks.len();
        let mut start = vec![0u32; nb + 1];
        for &b in blocks {
            for &s in &mf.blocks[b as usize].succs {
                start[s as usize + 1] += 1;
            }
        }
        for k in 0..nb {
            start[k + 1] += start[k];
        }
        let mut list = vec![0u32; start[nb] as usize];
        let mut fill = start.clone();
        for &b in blocks {
            for &s in &mf.blocks[b as usize].succs {
                list[fill[s as usize] as usize] = b;
                fill[s as usize] += 1;
            }
        }
        Preds { start, list }
    }
}

impl std::ops::Index<usize> for Preds {
    type Output = [u32];
    #[inline]
    fn index(&self, b: usize) -> &[u32] {
        &self.list[self.start[b] as usize..self.start[b + 1] as usize]
    }
}

/// Reverse postorder of the blocks reachable from `entry`, and the predecessors of each (in
/// reverse postorder, once per edge).
pub(super) fn rpo_and_preds(mf: &MFunc, entry: u32) -> (Vec<u32>, Preds) {
    let nb = mf.blocks.len();
    // Reverse postorder from the entry.
    let mut rpo = Vec::with_capacity(nb);
    let mut seen = vec![false; nb];
    let mut stack: Vec<(u32, usize)> = vec![(entry, 0)];
    seen[entry as usize] = true;
    while let Some(top) = stack.last_mut() {
        let (b, k) = *top;
        let succs = &mf.blocks[b as usize].succs;
        if k < succs.len() {
            let s = succs[k];
            top.1 += 1;
            if !seen[s as usize] {
                seen[s as usize] = true;
                stack.push((s, 0));
            }
        } else {
            rpo.push(b);
            stack.pop();
        }
    }
    rpo.reverse();
    let preds = Preds::of(mf, &rpo);
    (rpo, preds)
}

/// Per block: whether it lies on a cycle of the CFG (its strongly connected component has an
/// edge inside it) and no block of that component calls a function, so no value live only
/// inside the cycle is live across a call.
pub fn call_free_cycles(mf: &MFunc) -> Vec<bool> {
    let nb = mf.blocks.len();
    let Some(&entry) = mf.order.first() else {
        return Vec::new();
    };
    let (rpo, preds) = rpo_and_preds(mf, entry);
    let scc = components(&rpo, &mf.blocks, &preds);
    let mut cyclic = vec![false; nb];
    let mut calls = vec![false; nb];
    for &b in &rpo {
        let blk = &mf.blocks[b as usize];
        let c = scc[b as usize] as usize;
        if blk.succs.iter().any(|&s| scc[s as usize] as usize == c) {
            cyclic[c] = true;
        }
        calls[c] |= mf.insts[blk.start as usize..blk.end as usize]
            .iter()
            .any(|mi| mi.op == MOp::Call);
    }
    (0..nb)
        .map(|b| {
            let c = scc[b] as usize;
            c < nb && cyclic[c] && !calls[c]
        })
        .collect()
}

/// The innermost natural loops of `mf`, with their register pressure.
pub fn innermost(mf: &MFunc, iv: &Intervals) -> Vec<InnerLoop> {
    let nb = mf.blocks.len();
    let Some(&entry) = mf.order.first() else {
        return Vec::new();
    };
    let (rpo, preds) = rpo_and_preds(mf, entry);
    let (idom, _) = dominators(&rpo, &preds, entry, nb);
    let dominates = |h: u32, mut b: u32| loop {
        if b == h {
            return true;
        }
        let d = idom[b as usize];
        if d == b || d == u32::MAX {
            return false;
        }
        b = d;
    };
    // Natural loops, merged per header.
    let mut headers: Vec<u32> = Vec::new();
    let mut bodies: Vec<Vec<bool>> = Vec::new();
    let mut work: Vec<u32> = Vec::new();
    for &t in &rpo {
        for &h in &mf.blocks[t as usize].succs {
            if !dominates(h, t) {
                continue;
            }
            let k = match headers.iter().position(|&x| x == h) {
                Some(k) => k,
                None => {
                    headers.push(h);
                    bodies.push(vec![false; nb]);
                    headers.len() - 1
                }
            };
            let body = &mut bodies[k];
            body[h as usize] = true;
            work.push(t);
            while let Some(b) = work.pop() {
                if !body[b as usize] {
                    body[b as usize] = true;
                    work.extend(preds[b as usize].iter().copied());
                }
            }
        }
    }
    // Live values per position, by class.
    let npos = 2 * mf.insts.len() + 2;
    let mut diff = [vec![0i32; npos], vec![0i32; npos]];
    for v in 0..mf.num_vregs() {
        let c = (mf.vclass[VReg::new(v)] == RegClass::Float) as usize;
        for &(s, e) in &iv.ranges[v] {
            diff[c][s as usize] += 1;
            diff[c][e as usize + 1] -= 1;
        }
    }
    let mut live = [vec![0u32; npos], vec![0u32; npos]];
    for c in 0..2 {
        let mut acc = 0i32;
        for p in 0..npos {
            acc += diff[c][p];
            live[c][p] = acc as u32;
        }
    }
    // A natural loop inside an irreducible cycle (a cycle entered at two places, which tail
    // duplication of a header with two successors in its loop creates) is only part of the
    // loop the program runs: the strongly connected component around its header is larger
    // and no natural loop holds it. Such a loop is not reported as innermost.
    let scc = components(&rpo, &mf.blocks, &preds);
    // The blocks of each component, grouped: `members[member_start[c]..member_start[c + 1]]`.
    let ncomp = rpo.iter().map(|&b| scc[b as usize] + 1).max().unwrap_or(0) as usize;
    let mut member_start = vec![0u32; ncomp + 1];
    for &b in &rpo {
        member_start[scc[b as usize] as usize + 1] += 1;
    }
    for c in 0..ncomp {
        member_start[c + 1] += member_start[c];
    }
    let mut members = vec![0u32; rpo.len()];
    let mut fill = member_start.clone();
    for &b in &rpo {
        let c = scc[b as usize] as usize;
        members[fill[c] as usize] = b;
        fill[c] += 1;
    }
    drop(fill);
    let mut out = Vec::new();
    for (k, &h) in headers.iter().enumerate() {
        let body = &bodies[k];
        let inner = !headers.iter().any(|&o| o != h && body[o as usize]);
        if !inner {
            continue;
        }
        let c = scc[h as usize] as usize;
        let component = &members[member_start[c] as usize..member_start[c + 1] as usize];
        let in_region = |b: &[bool]| component.iter().all(|&x| b[x as usize]);
        if !bodies.iter().any(|b| in_region(b)) {
            continue;
        }
        let blocks: Vec<u32> = (0..nb as u32).filter(|&b| body[b as usize]).collect();
        let mut l = InnerLoop {
            header: h,
            ..Default::default()
        };
        for &b in &blocks {
            let blk = &mf.blocks[b as usize];
            l.has_call |= mf.insts[blk.start as usize..blk.end as usize]
                .iter()
                .any(|mi| mi.op == MOp::Call);
            let range = 2 * blk.start as usize..2 * blk.end as usize;
            for (&i, &f) in live[0][range.clone()].iter().zip(&live[1][range]) {
                l.pressure = l.pressure.max(i + f);
                l.pressure_int = l.pressure_int.max(i);
                l.pressure_float = l.pressure_float.max(f);
            }
        }
        l.blocks = blocks;
        out.push(l);
    }
    out.sort_by_key(|l| l.header);
    out
}

/// Immediate dominators (Cooper, Harvey, Kennedy; the entry is its own, unreachable blocks
/// get `u32::MAX`) and reverse postorder numbers (`u32::MAX` when unreachable).
pub(super) fn dominators(
    rpo: &[u32],
    preds: &Preds,
    entry: u32,
    nb: usize,
) -> (Vec<u32>, Vec<u32>) {
    let mut rpo_num = vec![u32::MAX; nb];
    for (i, &b) in rpo.iter().enumerate() {
        rpo_num[b as usize] = i as u32;
    }
    let mut idom = vec![u32::MAX; nb];
    idom[entry as usize] = entry;
    let mut changed = true;
    while changed {
        changed = false;
        for &b in rpo.iter().skip(1) {
            let mut new = u32::MAX;
            for &p in &preds[b as usize] {
                if idom[p as usize] == u32::MAX {
                    continue;
                }
                new = if new == u32::MAX {
                    p
                } else {
                    let (mut x, mut y) = (p, new);
                    while x != y {
                        while rpo_num[x as usize] > rpo_num[y as usize] {
                            x = idom[x as usize];
                        }
                        while rpo_num[y as usize] > rpo_num[x as usize] {
                            y = idom[y as usize];
                        }
                    }
                    x
                };
            }
            if new != idom[b as usize] {
                idom[b as usize] = new;
                changed = true;
            }
        }
    }
    (idom, rpo_num)
}

/// Strongly connected components of the blocks reachable from the entry (`rpo` in reverse
/// postorder), numbered from 0 (Kosaraju: the second search runs on reversed edges in reverse
/// postorder); unreachable blocks get `u32::MAX`.
pub(super) fn components(rpo: &[u32], blocks: &[MBlock], preds: &Preds) -> Vec<u32> {
    let mut comp = vec![u32::MAX; blocks.len()];
    let mut reachable = vec![false; blocks.len()];
    rpo.iter().for_each(|&b| reachable[b as usize] = true);
    let mut n = 0;
    let mut stack = Vec::new();
    for &root in rpo {
        if comp[root as usize] != u32::MAX {
            continue;
        }
        comp[root as usize] = n;
        stack.push(root);
        while let Some(b) = stack.pop() {
            for &p in &preds[b as usize] {
                if reachable[p as usize] && comp[p as usize] == u32::MAX {
                    comp[p as usize] = n;
                    stack.push(p);
                }
            }
        }
        n += 1;
    }
    comp
}
