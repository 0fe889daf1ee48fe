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
        let n = cfg.preds.len();
        let mut innermost: IdVec<Block, Option<Loop>> = IdVec::filled(n, None);
        let mut loops: IdVec<Loop, LoopData> = IdVec::new();
        // Headers, innermost first: reverse dominator-tree pre-order visits a header after all
        // headers it dominates.
        for &h in dt.preorder.iter().rev() {
            let latches: Vec<Block> = cfg.preds[h]
                .iter()
                .copied()
                .filter(|&p| dt.dominates(h, p))
                .collect();
            if latches.is_empty() {
                continue;
            }
            let l = loops.next_key();
            let mut blocks = vec![h];
            let mut stack: Vec<Block> = Vec::new();
            // Claim blocks; a block already in an inner loop stands for that loop: jump to the
            // inner loop's outermost ancestor and continue from its header.
            let claim = |b: Block,
                         blocks: &mut Vec<Block>,
                         stack: &mut Vec<Block>,
                         loops: &mut IdVec<Loop, LoopData>,
                         innermost: &mut IdVec<Block, Option<Loop>>| {
                match innermost[b] {
                    None if b != h => {
                        innermost[b] = Some(l);
                        blocks.push(b);
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
                latches: latches.clone(),
                blocks: Vec::new(),
                parent: None,
                depth: 0,
            });
            for &lt in &latches {
                if lt != h {
                    claim(lt, &mut blocks, &mut stack, &mut loops, &mut innermost);
                }
            }
            while let Some(b) = stack.pop() {
                for &p in &cfg.preds[b] {
                    if !dt.is_reachable(p) || p == h {
                        continue;
                    }
                    claim(p, &mut blocks, &mut stack, &mut loops, &mut innermost);
                }
            }
            loops[l].blocks = blocks;
        }
        // Outer loops' block lists include nested loops' blocks: each loop's own blocks (those
        // it claimed itself) go to every ancestor once, so the total stays O(blocks * depth).
        // Lists only grow at their ends: a loop's own blocks stay the first `own[l]` of its list.
        let ids: Vec<Loop> = loops.keys().collect();
        let own: Vec<usize> = ids.iter().map(|&l| loops[l].blocks.len()).collect();
        for &l in &ids {
            if loops[l].parent.is_none() {
                continue;
            }
            let blocks = std::mem::take(&mut loops[l].blocks);
            let mine = &blocks[..own[l.index()]];
            let mut p = loops[l].parent;
            while let Some(outer) = p {
                loops[outer].blocks.extend_from_slice(mine);
                p = loops[outer].parent;
            }
            loops[l].blocks = blocks;
        }
        for &l in &ids {
            let mut d = 1;
            let mut p = loops[l].parent;
            while let Some(x) = p {
                d += 1;
                p = loops[x].parent;
            }
            loops[l].depth = d;
            let h = loops[l].header;
            let blocks = &mut loops[l].blocks;
            blocks.sort_by_key(|&b| (b != h, cfg.rpo_index[b]));
            blocks.dedup();
        }
        LoopForest { loops, innermost }
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
