//! Innermost loops of machine code and their register pressure, for the static statistics.
//!
//! The allocator's goal is that no spill code stays inside an
//! innermost loop that needs fewer than 20 simultaneously live values. This module finds those
//! loops on the allocated function (natural loops of the machine CFG: an edge `t -> h` where
//! `h` dominates `t`, the body being what reaches `t` without passing `h`; loops sharing a
//! header merge) and measures the most values live at one point inside each (from the live
//! intervals). `mod.rs` then counts the spill loads and stores emitted in its blocks.
//! Cost: O(blocks^2) worst case for dominators (iterative, few rounds in practice),
//! O(loops * blocks) for bodies, O(instructions + ranges) for pressure.

use super::liveness::Intervals;
use super::minst::*;
use crate::ir::IdVec;

/// One innermost loop.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InnerLoop {
    pub header: MBlock,
    /// Blocks of the body (header included), sorted.
    pub blocks: Vec<MBlock>,
    /// Most virtual registers live at one point in the body: all, integer, float.
    pub pressure: u32,
    pub pressure_int: u32,
    pub pressure_float: u32,
    /// Whether the body calls a function (values live across it need callee-saved registers).
    pub has_call: bool,
}

/// The predecessors of each block in one table: `preds[b]` is the slice of block `b`.
pub(super) struct Preds {
    start: IdVec<MBlock, u32>,
    list: Vec<MBlock>,
}

impl Preds {
    /// The predecessors among `blocks` of every block, each list in the order of `blocks`
    /// (once per edge).
    pub(super) fn of(mf: &MFunc, blocks: &[MBlock]) -> Preds {
        let nb = mf.blocks.len();
        let mut start = vec![0u32; nb + 1];
        for &b in blocks {
            for &s in &mf.blocks[b].succs {
                start[s.index() + 1] += 1;
            }
        }
        for k in 0..nb {
            start[k + 1] += start[k];
        }
        let mut list = vec![MBlock::new(0); start[nb] as usize];
        let mut fill = start.clone();
        for &b in blocks {
            for &s in &mf.blocks[b].succs {
                list[fill[s.index()] as usize] = b;
                fill[s.index()] += 1;
            }
        }
        Preds {
            start: IdVec::from_vec(start),
            list,
        }
    }
}

impl std::ops::Index<MBlock> for Preds {
    type Output = [MBlock];
    #[inline]
    fn index(&self, b: MBlock) -> &[MBlock] {
        let next = MBlock::new(b.index() + 1);
        &self.list[self.start[b] as usize..self.start[next] as usize]
    }
}

/// Reverse postorder of the blocks reachable from `entry`, and the predecessors of each (in
/// reverse postorder, once per edge).
pub(super) fn rpo_and_preds(mf: &MFunc, entry: MBlock) -> (Vec<MBlock>, Preds) {
    let nb = mf.blocks.len();
    // Reverse postorder from the entry.
    let mut rpo = Vec::with_capacity(nb);
    let mut seen: IdVec<MBlock, bool> = IdVec::filled(nb, false);
    let mut stack: Vec<(MBlock, usize)> = vec![(entry, 0)];
    seen[entry] = true;
    while let Some(top) = stack.last_mut() {
        let (b, k) = *top;
        let succs = &mf.blocks[b].succs;
        if k < succs.len() {
            let s = succs[k];
            top.1 += 1;
            if !seen[s] {
                seen[s] = true;
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
pub fn call_free_cycles(mf: &MFunc) -> IdVec<MBlock, bool> {
    let nb = mf.blocks.len();
    let Some(&entry) = mf.order.first() else {
        return IdVec::new();
    };
    let (rpo, preds) = rpo_and_preds(mf, entry);
    let scc = components(&rpo, &mf.blocks, &preds);
    let mut cyclic = vec![false; nb];
    let mut calls = vec![false; nb];
    for &b in &rpo {
        let blk = &mf.blocks[b];
        let c = scc[b].expect("a reachable block is in a component") as usize;
        if blk.succs.iter().any(|&s| scc[s] == Some(c as u32)) {
            cyclic[c] = true;
        }
        calls[c] |= mf.insts[blk.start as usize..blk.end as usize]
            .iter()
            .any(|mi| mi.op == MOp::Call);
    }
    scc.values()
        .map(|&c| c.is_some_and(|c| cyclic[c as usize] && !calls[c as usize]))
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
    let dominates = |h: MBlock, mut b: MBlock| loop {
        if b == h {
            return true;
        }
        match idom[b] {
            Some(d) if d != b => b = d,
            _ => return false,
        }
    };
    // Natural loops, merged per header.
    let mut headers: Vec<MBlock> = Vec::new();
    let mut bodies: Vec<IdVec<MBlock, bool>> = Vec::new();
    let mut work: Vec<MBlock> = Vec::new();
    for &t in &rpo {
        for &h in &mf.blocks[t].succs {
            if !dominates(h, t) {
                continue;
            }
            let k = match headers.iter().position(|&x| x == h) {
                Some(k) => k,
                None => {
                    headers.push(h);
                    bodies.push(IdVec::filled(nb, false));
                    headers.len() - 1
                }
            };
            let body = &mut bodies[k];
            body[h] = true;
            work.push(t);
            while let Some(b) = work.pop() {
                if !body[b] {
                    body[b] = true;
                    work.extend(preds[b].iter().copied());
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
    let comp = |b: MBlock| scc[b].expect("a reachable block is in a component") as usize;
    // The blocks of each component, grouped: `members[member_start[c]..member_start[c + 1]]`.
    let ncomp = rpo.iter().map(|&b| comp(b) + 1).max().unwrap_or(0);
    let mut member_start = vec![0u32; ncomp + 1];
    for &b in &rpo {
        member_start[comp(b) + 1] += 1;
    }
    for c in 0..ncomp {
        member_start[c + 1] += member_start[c];
    }
    let mut members = vec![entry; rpo.len()];
    let mut fill = member_start.clone();
    for &b in &rpo {
        let c = comp(b);
        members[fill[c] as usize] = b;
        fill[c] += 1;
    }
    drop(fill);
    let mut out = Vec::new();
    for (k, &h) in headers.iter().enumerate() {
        let body = &bodies[k];
        let inner = !headers.iter().any(|&o| o != h && body[o]);
        if !inner {
            continue;
        }
        let c = comp(h);
        let component = &members[member_start[c] as usize..member_start[c + 1] as usize];
        let in_region = |b: &IdVec<MBlock, bool>| component.iter().all(|&x| b[x]);
        if !bodies.iter().any(in_region) {
            continue;
        }
        let blocks: Vec<MBlock> = body.keys().filter(|&b| body[b]).collect();
        let mut l = InnerLoop {
            header: h,
            blocks: Vec::new(),
            pressure: 0,
            pressure_int: 0,
            pressure_float: 0,
            has_call: false,
        };
        for &b in &blocks {
            let blk = &mf.blocks[b];
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
/// have none) and reverse postorder numbers (`None` when unreachable).
pub(super) fn dominators(
    rpo: &[MBlock],
    preds: &Preds,
    entry: MBlock,
    nb: usize,
) -> (IdVec<MBlock, Option<MBlock>>, IdVec<MBlock, Option<u32>>) {
    let mut rpo_num = IdVec::filled(nb, None);
    for (i, &b) in rpo.iter().enumerate() {
        rpo_num[b] = Some(i as u32);
    }
    let mut idom = IdVec::filled(nb, None);
    idom[entry] = Some(entry);
    let mut changed = true;
    while changed {
        changed = false;
        for &b in rpo.iter().skip(1) {
            let mut new: Option<MBlock> = None;
            for &p in &preds[b] {
                if idom[p].is_none() {
                    continue;
                }
                new = Some(match new {
                    None => p,
                    Some(n) => {
                        // Both are reachable and have dominators: the walks end at the entry.
                        let (mut x, mut y) = (p, n);
                        while x != y {
                            while rpo_num[x] > rpo_num[y] {
                                x = idom[x].expect("a processed block has a dominator");
                            }
                            while rpo_num[y] > rpo_num[x] {
                                y = idom[y].expect("a processed block has a dominator");
                            }
                        }
                        x
                    }
                });
            }
            if new != idom[b] {
                idom[b] = new;
                changed = true;
            }
        }
    }
    (idom, rpo_num)
}

/// Strongly connected components of the blocks reachable from the entry (`rpo` in reverse
/// postorder), numbered from 0 (Kosaraju: the second search runs on reversed edges in reverse
/// postorder); unreachable blocks have none.
pub(super) fn components(
    rpo: &[MBlock],
    blocks: &IdVec<MBlock, MBlockData>,
    preds: &Preds,
) -> IdVec<MBlock, Option<u32>> {
    let mut comp = IdVec::filled(blocks.len(), None);
    let mut reachable = IdVec::filled(blocks.len(), false);
    rpo.iter().for_each(|&b| reachable[b] = true);
    let mut n = 0;
    let mut stack = Vec::new();
    for &root in rpo {
        if comp[root].is_some() {
            continue;
        }
        comp[root] = Some(n);
        stack.push(root);
        while let Some(b) = stack.pop() {
            for &p in &preds[b] {
                if reachable[p] && comp[p].is_none() {
                    comp[p] = Some(n);
                    stack.push(p);
                }
            }
        }
        n += 1;
    }
    comp
}
