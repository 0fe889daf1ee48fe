//! Control-flow graph: predecessors and successors of every block, and a reverse post-order of
//! the blocks reachable from the entry. O(blocks + edges).

use crate::ir::entity::{IdSet, IdVec};
use crate::ir::{Block, Function};

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
        let mut offset = vec![0u32; n + 1];
        for (b, _) in pairs.clone() {
            offset[b.index() + 1] += 1;
        }
        for k in 0..n {
            offset[k + 1] += offset[k];
        }
        let mut data = vec![Block::new(0); offset[n] as usize];
        let mut fill: Vec<u32> = offset[..n].to_vec();
        for (b, x) in pairs {
            let at = &mut fill[b.index()];
            data[*at as usize] = x;
            *at += 1;
        }
        BlockLists { offset, data }
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

impl Cfg {
    pub fn compute(f: &Function) -> Cfg {
        let n = f.num_blocks();
        // Every block's successors, read off its terminator once, in layout order.
        let mut edges_of: Vec<(Block, [Block; 2], u8)> = Vec::with_capacity(n);
        for b in f.layout().blocks() {
            let mut e = (b, [Block::new(0); 2], 0u8);
            for s in f.succs(b) {
                e.1[e.2 as usize] = s;
                e.2 += 1;
            }
            edges_of.push(e);
        }
        // Count, then place: successors in terminator order, predecessors in layout order.
        let mut succ_off = vec![0u32; n + 1];
        let mut pred_off = vec![0u32; n + 1];
        for &(b, ss, ns) in &edges_of {
            succ_off[b.index() + 1] += ns as u32;
            for s in &ss[..ns as usize] {
                pred_off[s.index() + 1] += 1;
            }
        }
        for k in 0..n {
            succ_off[k + 1] += succ_off[k];
            pred_off[k + 1] += pred_off[k];
        }
        let edges = succ_off[n] as usize;
        let mut succ_data = vec![Block::new(0); edges];
        let mut pred_data = vec![Block::new(0); edges];
        let mut pred_fill: Vec<u32> = pred_off[..n].to_vec();
        for &(b, ss, ns) in &edges_of {
            for (k, &s) in (succ_off[b.index()] as usize..).zip(&ss[..ns as usize]) {
                succ_data[k] = s;
                let p = &mut pred_fill[s.index()];
                pred_data[*p as usize] = b;
                *p += 1;
            }
        }
        let succs = BlockLists {
            offset: succ_off,
            data: succ_data,
        };
        let preds = BlockLists {
            offset: pred_off,
            data: pred_data,
        };
        // Iterative DFS for post-order.
        let mut post = Vec::with_capacity(n);
        let mut seen: IdSet<Block> = IdSet::with_capacity(n);
        if let Some(entry) = f.layout().entry_block() {
            let mut stack: Vec<(Block, usize)> = Vec::with_capacity(n);
            stack.push((entry, 0));
            seen.insert(entry);
            while let Some(&mut (b, ref mut k)) = stack.last_mut() {
                if let Some(&s) = succs[b].get(*k) {
                    *k += 1;
                    if seen.insert(s) {
                        stack.push((s, 0));
                    }
                } else {
                    post.push(b);
                    stack.pop();
                }
            }
        }
        post.reverse();
        let mut rpo_index = IdVec::filled(n, u32::MAX);
        for (i, &b) in post.iter().enumerate() {
            rpo_index[b] = i as u32;
        }
        Cfg {
            preds,
            succs,
            rpo: post,
            rpo_index,
        }
    }

    pub fn is_reachable(&self, b: Block) -> bool {
        self.rpo_index[b] != u32::MAX
    }
}
