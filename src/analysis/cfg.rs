//! Control-flow graph: predecessors and successors of every block, and a reverse post-order of
//! the blocks reachable from the entry. O(blocks + edges).

use crate::ir::entity::IdVec;
use crate::ir::func::brif_targets;
use crate::ir::{Block, Function, Opcode};
use std::cell::Cell;

/// Predecessor and successor lists. An edge appears once per branch target, so a `brif` with
/// both targets equal gives two entries.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Cfg {
    pub preds: BlockLists,
    pub succs: BlockLists,
    /// Reachable blocks in reverse post-order (entry first).
    pub rpo: Vec<Block>,
    /// Position of each block in `rpo` (`u32::MAX` if unreachable).
    pub rpo_index: IdVec<Block, u32>,
}

/// A list of blocks per block, all in one table: `lists[b]` is the slice of `b`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BlockLists {
    /// `data[offset[b]..offset[b + 1]]` is the list of `b`.
    offset: Vec<u32>,
    data: Vec<Block>,
}

impl BlockLists {
    /// The number of blocks (lists).
    pub fn len(&self) -> usize {
        self.offset.len().saturating_sub(1)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `n` lists from `(list, block)` pairs: each list keeps the pairs' order.
    pub fn from_pairs(n: usize, pairs: impl Iterator<Item = (Block, Block)> + Clone) -> BlockLists {
        let mut lists = BlockLists::default();
        lists.refill(n, pairs);
        lists
    }

    /// Makes these lists `from_pairs(n, pairs)`, in the tables they already have.
    pub fn refill(&mut self, n: usize, pairs: impl Iterator<Item = (Block, Block)> + Clone) {
        let BlockLists { offset, data } = self;
        // The length of the list of `b` is counted in `offset[b + 2]`; the running sums make
        // `offset[b + 1]` the start of the list of `b`, the next free slot while the entries are
        // placed, and its end afterwards, which is the table's meaning once the last slot goes.
        offset.clear();
        offset.resize(n + 2, 0);
        for (b, _) in pairs.clone() {
            offset[b.index() + 2] += 1;
        }
        let mut total = 0u32;
        for o in offset.iter_mut() {
            total += *o;
            *o = total;
        }
        data.clear();
        data.resize(total as usize, Block::new(0));
        for (b, x) in pairs {
            let at = &mut offset[b.index() + 1];
            data[*at as usize] = x;
            *at += 1;
        }
        offset.pop();
    }

    /// The start and end in `entries()` of the list of `b`.
    #[inline]
    pub fn bounds(&self, b: Block) -> (u32, u32) {
        (self.offset[b.index()], self.offset[b.index() + 1])
    }

    /// All the lists' entries, list after list (see `bounds`).
    #[inline]
    pub fn entries(&self) -> &[Block] {
        &self.data
    }

    /// Keeps, in order, the entries `keep_entry` accepts of the lists `keep_list` accepts, and
    /// empties the other lists.
    pub fn retain_lists(
        &mut self,
        keep_list: impl Fn(Block) -> bool + Copy,
        keep_entry: impl Fn(Block) -> bool,
    ) {
        let mut at = 0usize;
        let mut start = 0usize;
        for k in 0..self.len() {
            let end = self.offset[k + 1] as usize;
            if keep_list(Block::new(k)) {
                for j in start..end {
                    let x = self.data[j];
                    if keep_entry(x) {
                        self.data[at] = x;
                        at += 1;
                    }
                }
            }
            start = end;
            self.offset[k + 1] = at as u32;
        }
        self.data.truncate(at);
    }

    /// The lists as a table of vectors, to edit.
    pub fn to_vecs(&self) -> IdVec<Block, Vec<Block>> {
        let mut v = IdVec::with_capacity(self.len());
        for k in 0..self.len() {
            v.push(self[Block::new(k)].to_vec());
        }
        v
    }
}

impl std::ops::Index<Block> for BlockLists {
    type Output = [Block];
    #[inline]
    fn index(&self, b: Block) -> &[Block] {
        &self.data[self.offset[b.index()] as usize..self.offset[b.index() + 1] as usize]
    }
}

/// Successors of a block read off its terminator (up to two, and how many).
type BlockEdges = (Block, [Block; 2], u8);

/// A block on the stack of the depth-first walk, with the range of its successors not
/// visited yet.
type WalkEntry = (Block, u32, u32);

thread_local! {
    /// `Cfg::recompute`'s work lists (each block's successors, the walk's stack), kept from one
    /// computation to the next on this thread.
    static SCRATCH: Cell<(Vec<BlockEdges>, Vec<WalkEntry>)> = Cell::default();
}

impl Cfg {
    pub fn compute(f: &Function) -> Cfg {
        let mut cfg = Cfg::default();
        cfg.recompute(f);
        cfg
    }

    /// Makes this the CFG of `f`, equal to `compute(f)`, in the tables it already has: an
    /// analysis recomputed after every edit of the block graph allocates nothing then.
    pub fn recompute(&mut self, f: &Function) {
        let n = f.num_blocks();
        let Cfg {
            preds,
            succs,
            rpo,
            rpo_index,
        } = self;
        // Every block's successors, read off its terminator once, in layout order, and the
        // stack of the walk below: this thread's buffers from the last computation.
        let (mut edges_of, mut stack) = SCRATCH.take();
        edges_of.clear();
        stack.clear();
        // Counted per block first, then turned into the ends of the lists (see below).
        let succ_off = &mut succs.offset;
        succ_off.clear();
        succ_off.resize(n + 1, 0);
        let pred_off = &mut preds.offset;
        pred_off.clear();
        pred_off.resize(n + 1, 0);
        let mut edges = 0usize;
        for b in f.layout().blocks() {
            let (ss, ns) = match f.terminator(b).map(|t| f.data(t)) {
                Some(d) if d.op == Opcode::Jump => ([Block::new(d.imm as usize), b], 1u8),
                Some(d) if d.op == Opcode::Brif => {
                    let (t, e) = brif_targets(d);
                    ([t, e], 2u8)
                }
                _ => ([b, b], 0u8),
            };
            succ_off[b.index()] = ns as u32;
            for s in &ss[..ns as usize] {
                pred_off[s.index()] += 1;
            }
            edges += ns as usize;
            edges_of.push((b, ss, ns));
        }
        // Running sums: `off[b]` becomes the end of the list of `b`; placing the entries from
        // the last edge to the first, each one step down, leaves `off[b]` at its start and the
        // entries in order (successors in terminator order, predecessors in layout order).
        let (mut ts, mut tp) = (0u32, 0u32);
        for (so, po) in succ_off[..n].iter_mut().zip(&mut pred_off[..n]) {
            ts += *so;
            *so = ts;
            tp += *po;
            *po = tp;
        }
        succ_off[n] = ts;
        pred_off[n] = tp;
        let succ_data = &mut succs.data;
        succ_data.clear();
        succ_data.resize(edges, Block::new(0));
        let pred_data = &mut preds.data;
        pred_data.clear();
        pred_data.resize(edges, Block::new(0));
        for &(b, ss, ns) in edges_of.iter().rev() {
            for &s in ss[..ns as usize].iter().rev() {
                let at = &mut succ_off[b.index()];
                *at -= 1;
                succ_data[*at as usize] = s;
                let at = &mut pred_off[s.index()];
                *at -= 1;
                pred_data[*at as usize] = b;
            }
        }
        // Iterative DFS for post-order; `rpo_index` marks the blocks seen until it is filled.
        const UNSEEN: u32 = u32::MAX;
        rpo_index.clear();
        rpo_index.resize(n, UNSEEN);
        let post = rpo;
        post.clear();
        if let Some(entry) = f.layout().entry_block() {
            let off = &succs.offset;
            stack.push((entry, off[entry.index()], off[entry.index() + 1]));
            rpo_index[entry] = 0;
            while let Some(top) = stack.last_mut() {
                if top.1 < top.2 {
                    let s = succs.data[top.1 as usize];
                    top.1 += 1;
                    if rpo_index[s] == UNSEEN {
                        rpo_index[s] = 0;
                        stack.push((s, off[s.index()], off[s.index() + 1]));
                    }
                } else {
                    post.push(top.0);
                    stack.pop();
                }
            }
        }
        post.reverse();
        for (i, &b) in post.iter().enumerate() {
            rpo_index[b] = i as u32;
        }
        SCRATCH.set((edges_of, stack));
    }

    pub fn is_reachable(&self, b: Block) -> bool {
        self.rpo_index[b] != u32::MAX
    }

    /// The CFG after the unreachable blocks left the layout: their edges go (a reachable
    /// block's predecessors keep their order), the reverse post-order stays. Equal to a fresh
    /// computation.
    pub fn drop_unreachable(&mut self) {
        let rpo_index = &self.rpo_index;
        let reachable = |b: Block| rpo_index[b] != u32::MAX;
        self.preds.retain_lists(reachable, reachable);
        self.succs.retain_lists(reachable, |_| true);
    }
}
