//! Control-flow graph: predecessors and successors of every block, and a reverse post-order of
//! the blocks reachable from the entry. O(blocks + edges).

use crate::ir::entity::{IdSet, IdVec};
use crate::ir::{Block, Function};

/// Predecessor and successor lists. An edge appears once per branch target, so a `brif` with
/// both targets equal gives two entries.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Cfg {
    pub preds: IdVec<Block, Vec<Block>>,
    pub succs: IdVec<Block, Vec<Block>>,
    /// Reachable blocks in reverse post-order (entry first).
    pub rpo: Vec<Block>,
    /// Position of each block in `rpo` (`u32::MAX` if unreachable).
    pub rpo_index: IdVec<Block, u32>,
}

impl Cfg {
    pub fn compute(f: &Function) -> Cfg {
        let n = f.num_blocks();
        let mut preds = IdVec::filled(n, Vec::new());
        let mut succs = IdVec::filled(n, Vec::new());
        for b in f.layout().blocks() {
            for s in f.succs(b) {
                succs[b].push(s);
                preds[s].push(b);
            }
        }
        // Iterative DFS for post-order.
        let mut post = Vec::with_capacity(n);
        let mut seen: IdSet<Block> = IdSet::with_capacity(n);
        if let Some(entry) = f.layout().entry_block() {
            let mut stack: Vec<(Block, usize)> = vec![(entry, 0)];
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
