//! Natural loops: headers, latches, bodies, nesting, exits and preheaders.
//!
//! A back edge is `l -> h` with `h` dominating `l`; the loop of `h` is every block that reaches
//! a latch without passing `h`. Loops sharing a header merge. Nesting follows from visiting
//! headers in reverse dominator pre-order (inner loops first), so each block's innermost loop is
//! the first that claims it. Cost: O(blocks * depth + edges).

use super::cfg::Cfg;
use super::domtree::DomTree;
use crate::entity;
use crate::ir::entity::IdVec;
use crate::ir::Block;

entity!(
    /// A natural loop.
    Loop,
    "loop"
);

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoopData {
    pub header: Block,
    pub latches: Vec<Block>,
    /// Every block of the loop, including nested loops' blocks; header first.
    pub blocks: Vec<Block>,
    pub parent: Option<Loop>,
    /// 1 for outermost loops.
    pub depth: u32,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LoopForest {
    pub loops: IdVec<Loop, LoopData>,
    /// Innermost loop containing each block.
    pub innermost: IdVec<Block, Option<Loop>>,
}

impl LoopForest {
    pub fn compute(cfg: &Cfg, dt: &DomTree) -> LoopForest {
        let mut forest = LoopForest::default();
        forest.recompute(cfg, dt);
        forest
    }

    /// Makes this the loop forest of `cfg` and `dt`, equal to `compute(cfg, dt)`, in the
    /// tables it already has.
    pub fn recompute(&mut self, cfg: &Cfg, dt: &DomTree) {
        let n = cfg.preds.len();
        let LoopForest { loops, innermost } = self;
        innermost.clear();
        innermost.resize(n, None);
        loops.clear();
        // The blocks whose predecessors are still to be claimed (empty between headers).
        let mut stack: Vec<Block> = Vec::new();
        // Headers, innermost first: reverse dominator-tree pre-order visits a header after all
        // headers it dominates.
        for &h in dt.preorder.iter().rev() {
            let is_latch = |p: Block| dt.dominates(h, p);
            if !cfg.preds[h].iter().any(|&p| is_latch(p)) {
                continue;
            }
            let latches: Vec<Block> = cfg.preds[h]
                .iter()
                .copied()
                .filter(|&p| is_latch(p))
                .collect();
            let l = loops.next_key();
            // Claim blocks; a block already in an inner loop stands for that loop: jump to the
            // inner loop's outermost ancestor and continue from its header.
            let claim = |b: Block,
                         stack: &mut Vec<Block>,
                         loops: &mut IdVec<Loop, LoopData>,
                         innermost: &mut IdVec<Block, Option<Loop>>| {
                match innermost[b] {
                    None if b != h => {
                        innermost[b] = Some(l);
                        stack.push(b);
                    }
                    Some(mut inner) if inner != l => {
                        while let Some(p) = loops[inner].parent {
                            inner = p;
                        }
                        if inner != l {
                            loops[inner].parent = Some(l);
                            let ih = loops[inner].header;
                            stack.push(ih);
                        }
                    }
                    _ => {}
                }
            };
            innermost[h] = Some(l);
            loops.push(LoopData {
                header: h,
                latches,
                blocks: Vec::new(),
                parent: None,
                depth: 0,
            });
            for k in 0..loops[l].latches.len() {
                let lt = loops[l].latches[k];
                if lt != h {
                    claim(lt, &mut stack, loops, innermost);
                }
            }
            while let Some(b) = stack.pop() {
                for &p in &cfg.preds[b] {
                    if !dt.is_reachable(p) || p == h {
                        continue;
                    }
                    claim(p, &mut stack, loops, innermost);
                }
            }
        }
        let ids: Vec<Loop> = loops.keys().collect();
        for &l in &ids {
            let mut d = 1;
            let mut p = loops[l].parent;
            while let Some(x) = p {
                d += 1;
                p = loops[x].parent;
            }
            loops[l].depth = d;
        }
        // A loop's blocks are those whose innermost loop is it or a loop nested in it, in
        // reverse post-order: the header, which dominates them all, comes first. They are
        // counted, then listed in one walk over the reverse post-order; each block goes to its
        // innermost loop and every ancestor, O(blocks * depth) in all.
        let mut len: IdVec<Loop, u32> = IdVec::filled(loops.len(), 0);
        for &b in &cfg.rpo {
            let mut cur = innermost[b];
            while let Some(x) = cur {
                len[x] += 1;
                cur = loops[x].parent;
            }
        }
        for &l in &ids {
            loops[l].blocks = Vec::with_capacity(len[l] as usize);
        }
        for &b in &cfg.rpo {
            let mut cur = innermost[b];
            while let Some(x) = cur {
                loops[x].blocks.push(b);
                cur = loops[x].parent;
            }
        }
    }

    /// Loop depth of a block (0 outside loops).
    pub fn depth(&self, b: Block) -> u32 {
        self.innermost
            .get(b)
            .copied()
            .flatten()
            .map_or(0, |l| self.loops[l].depth)
    }

    pub fn contains(&self, l: Loop, b: Block) -> bool {
        let mut cur = self.innermost.get(b).copied().flatten();
        while let Some(x) = cur {
            if x == l {
                return true;
            }
            cur = self.loops[x].parent;
        }
        false
    }

    /// Blocks outside `l` that some block of `l` branches to.
    pub fn exits(&self, l: Loop, cfg: &Cfg) -> Vec<Block> {
        let mut out = Vec::new();
        for &b in &self.loops[l].blocks {
            for &s in &cfg.succs[b] {
                if !self.contains(l, s) && !out.contains(&s) {
                    out.push(s);
                }
            }
        }
        out
    }

    /// The unique predecessor of the header from outside the loop, if that block's only
    /// successor is the header.
    pub fn preheader(&self, l: Loop, cfg: &Cfg) -> Option<Block> {
        let h = self.loops[l].header;
        let mut outside = cfg.preds[h]
            .iter()
            .copied()
            .filter(|&p| !self.contains(l, p));
        match (outside.next(), outside.next()) {
            (Some(p), None) if cfg.succs[p].len() == 1 => Some(p),
            _ => None,
        }
    }

    /// Whether every loop entered from outside has a preheader.
    pub fn is_loop_simplified(&self, cfg: &Cfg) -> bool {
        self.loops.iter().all(|(l, data)| {
            self.preheader(l, cfg).is_some()
                || cfg.preds[data.header].iter().all(|&p| self.contains(l, p))
        })
    }
}
