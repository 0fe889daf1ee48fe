//! Dominator tree (Cooper, Harvey and Kennedy's iterative algorithm over reverse post-order),
//! with pre/post numbers for O(1) dominance queries and dominance frontiers on demand.
//!
//! Cost: a few passes over the RPO, each O(edges); frontiers O(edges * depth).

use super::cfg::Cfg;
use crate::ir::entity::IdVec;
use crate::ir::{Block, Function, Inst, Value, ValueDef};

#[derive(Clone, Debug, Default)]
pub struct DomTree {
    /// Immediate dominator; `None` for the entry and unreachable blocks.
    pub idom: IdVec<Block, Option<Block>>,
    /// Children in the dominator tree, in RPO order.
    pub children: IdVec<Block, Vec<Block>>,
    pre: IdVec<Block, u32>,
    post: IdVec<Block, u32>,
    /// Depth in the tree (entry 0).
    pub depth: IdVec<Block, u32>,
    /// Blocks in dominator-tree pre-order.
    pub preorder: Vec<Block>,
}

impl DomTree {
    pub fn compute(f: &Function, cfg: &Cfg) -> DomTree {
        let n = f.num_blocks();
        let mut idom: IdVec<Block, Option<Block>> = IdVec::filled(n, None);
        let rpo = &cfg.rpo;
        if rpo.is_empty() {
            return DomTree {
                idom,
                ..Default::default()
            };
        }
        let entry = rpo[0];
        idom[entry] = Some(entry);
        let idx = &cfg.rpo_index;
        let mut changed = true;
        while changed {
            changed = false;
            for &b in &rpo[1..] {
                let mut new: Option<Block> = None;
                for &p in &cfg.preds[b] {
                    if idom[p].is_none() {
                        continue;
                    }
                    new = Some(match new {
                        None => p,
                        Some(mut a) => {
                            let mut c = p;
                            while a != c {
                                while idx[a] > idx[c] {
                                    a = idom[a].unwrap();
                                }
                                while idx[c] > idx[a] {
                                    c = idom[c].unwrap();
                                }
                            }
                            a
                        }
                    });
                }
                if new.is_some() && idom[b] != new {
                    idom[b] = new;
                    changed = true;
                }
            }
        }
        idom[entry] = None;
        let mut children: IdVec<Block, Vec<Block>> = IdVec::filled(n, Vec::new());
        for &b in &rpo[1..] {
            if let Some(d) = idom[b] {
                children[d].push(b);
            }
        }
        let mut pre = IdVec::filled(n, u32::MAX);
        let mut post = IdVec::filled(n, 0);
        let mut depth = IdVec::filled(n, 0);
        let mut preorder = Vec::with_capacity(rpo.len());
        let (mut tick_pre, mut tick_post) = (0u32, 0u32);
        let mut stack: Vec<(Block, usize)> = vec![(entry, 0)];
        pre[entry] = 0;
        preorder.push(entry);
        tick_pre += 1;
        while let Some(&mut (b, ref mut k)) = stack.last_mut() {
            if let Some(&c) = children[b].get(*k) {
                *k += 1;
                pre[c] = tick_pre;
                tick_pre += 1;
                depth[c] = depth[b] + 1;
                preorder.push(c);
                stack.push((c, 0));
            } else {
                post[b] = tick_post;
                tick_post += 1;
                stack.pop();
            }
        }
        DomTree {
            idom,
            children,
            pre,
            post,
            depth,
            preorder,
        }
    }

    pub fn is_reachable(&self, b: Block) -> bool {
        self.pre.get(b).is_some_and(|&p| p != u32::MAX)
    }

    /// Whether `a` dominates `b` (every block dominates itself). False for unreachable blocks.
    pub fn dominates(&self, a: Block, b: Block) -> bool {
        self.is_reachable(a)
            && self.is_reachable(b)
            && self.pre[a] <= self.pre[b]
            && self.post[a] >= self.post[b]
    }

    /// Whether the definition of `v` dominates instruction `at` in `f`.
    pub fn value_dominates(&self, f: &Function, v: Value, at: Inst) -> bool {
        let Some(ub) = f.layout().inst_block(at) else {
            return false;
        };
        match f.values.def[v] {
            ValueDef::Param(b, _) => self.dominates(b, ub),
            ValueDef::Result(d) => {
                let Some(db) = f.layout().inst_block(d) else {
                    return false;
                };
                if db != ub {
                    return self.dominates(db, ub);
                }
                // Same block: `d` must come before `at`.
                let mut cur = f.layout().prev_inst(at);
                while let Some(i) = cur {
                    if i == d {
                        return true;
                    }
                    cur = f.layout().prev_inst(i);
                }
                false
            }
        }
    }

    /// Dominance frontier of every block.
    pub fn frontiers(&self, cfg: &Cfg) -> IdVec<Block, Vec<Block>> {
        let mut df: IdVec<Block, Vec<Block>> = IdVec::filled(self.idom.len(), Vec::new());
        for &b in &cfg.rpo {
            let preds = &cfg.preds[b];
            if preds.len() < 2 {
                continue;
            }
            let Some(id) = self.idom[b] else { continue };
            for &p in preds {
                if !self.is_reachable(p) {
                    continue;
                }
                let mut r = p;
                while r != id {
                    if !df[r].contains(&b) {
                        df[r].push(b);
                    }
                    match self.idom[r] {
                        Some(x) => r = x,
                        None => break,
                    }
                }
            }
        }
        df
    }
}
