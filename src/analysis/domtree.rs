//! Dominator tree (the Semi-NCA algorithm: Lengauer and Tarjan's semidominators with path
//! compression, then nearest common ancestors), with pre/post numbers for O(1) dominance
//! queries and dominance frontiers on demand.
//!
//! Cost: O(edges * log blocks) for the semidominators, whatever the shape (the iterative
//! algorithm of Cooper, Harvey and Kennedy was quadratic on a block with thousands of
//! predecessors deep in the tree, such as the join of a long else-if chain), plus the climbs
//! of the last phase, each bounded by the tree depth and short in practice; frontiers
//! O(edges * depth).

use super::cfg::{BlockLists, Cfg};
use crate::ir::entity::IdVec;
use crate::ir::{Block, Function, Inst, Value, ValueDef};
use std::cell::Cell;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DomTree {
    /// Immediate dominator; `None` for the entry and unreachable blocks.
    pub idom: IdVec<Block, Option<Block>>,
    /// Children in the dominator tree, in RPO order.
    pub children: BlockLists,
    pre: IdVec<Block, u32>,
    post: IdVec<Block, u32>,
    /// Depth in the tree (entry 0).
    pub depth: IdVec<Block, u32>,
    /// Blocks in dominator-tree pre-order.
    pub preorder: Vec<Block>,
}

impl DomTree {
    pub fn compute(f: &Function, cfg: &Cfg) -> DomTree {
        let mut dt = DomTree::default();
        dt.recompute(f, cfg);
        dt
    }

    /// Makes this the dominator tree of `f`, equal to `compute(f, cfg)`, in the tables it
    /// already has: an analysis recomputed after every edit of the block graph allocates
    /// less then.
    pub fn recompute(&mut self, f: &Function, cfg: &Cfg) {
        let n = f.num_blocks();
        let rpo = &cfg.rpo;
        if rpo.is_empty() {
            *self = DomTree {
                idom: IdVec::filled(n, None),
                ..Default::default()
            };
            return;
        }
        let DomTree {
            idom,
            children,
            pre,
            post,
            depth,
            preorder,
        } = self;
        let entry = rpo[0];
        let mut scratch = SCRATCH.take();
        immediate_dominators(n, entry, cfg, idom, &mut scratch);
        children.refill(n, rpo[1..].iter().filter_map(|&b| idom[b].map(|d| (d, b))));
        pre.clear();
        pre.resize(n, u32::MAX);
        post.clear();
        post.resize(n, 0);
        depth.clear();
        depth.resize(n, 0);
        preorder.clear();
        let (mut tick_pre, mut tick_post) = (0u32, 0u32);
        // Each entry: a block and the range of its children not visited yet.
        let stack = &mut scratch.walk;
        stack.clear();
        let kids = children.entries();
        let (s, e) = children.bounds(entry);
        stack.push((entry, s, e));
        pre[entry] = 0;
        preorder.push(entry);
        tick_pre += 1;
        while let Some(top) = stack.last_mut() {
            if top.1 < top.2 {
                let c = kids[top.1 as usize];
                top.1 += 1;
                let b = top.0;
                pre[c] = tick_pre;
                tick_pre += 1;
                depth[c] = depth[b] + 1;
                preorder.push(c);
                let (s, e) = children.bounds(c);
                stack.push((c, s, e));
            } else {
                post[top.0] = tick_post;
                tick_post += 1;
                stack.pop();
            }
        }
        SCRATCH.set(scratch);
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
        match f.value_def(v) {
            ValueDef::Param(b, _) => f
                .layout()
                .inst_block(at)
                .is_some_and(|ub| self.dominates(b, ub)),
            ValueDef::Result(d) => self.inst_dominates(f, d, at),
        }
    }

    /// Whether instruction `d` runs before `at` on every path to `at` (in one block: `d`
    /// comes first).
    pub fn inst_dominates(&self, f: &Function, d: Inst, at: Inst) -> bool {
        let (Some(db), Some(ub)) = (f.layout().inst_block(d), f.layout().inst_block(at)) else {
            return false;
        };
        if db != ub {
            return self.dominates(db, ub);
        }
        let mut cur = f.layout().prev_inst(at);
        while let Some(i) = cur {
            if i == d {
                return true;
            }
            cur = f.layout().prev_inst(i);
        }
        false
    }

    /// Dominance frontier of every block, each list in reverse post-order.
    pub fn frontiers(&self, cfg: &Cfg) -> BlockLists {
        // (block, block in its frontier) pairs; `last[r]` is the join last added to `r`'s
        // frontier, so a join reached from several predecessors is listed once.
        let mut pairs: Vec<(Block, Block)> = Vec::new();
        let mut last: IdVec<Block, Option<Block>> = IdVec::filled(self.idom.len(), None);
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
                    if last[r] != Some(b) {
                        last[r] = Some(b);
                        pairs.push((r, b));
                    }
                    match self.idom[r] {
                        Some(x) => r = x,
                        None => break,
                    }
                }
            }
        }
        BlockLists::from_pairs(self.idom.len(), pairs.iter().copied())
    }
}

/// Fills `out` with the immediate dominators of the blocks reachable from `entry` (`None` for
/// the entry and unreachable blocks), by the Semi-NCA algorithm (semidominators as in Lengauer
/// and Tarjan's, then each idom as the nearest common ancestor of the block's DFS parent and
/// semidominator).
///
/// Phases: (1) an iterative DFS numbers the reachable blocks in pre-order and records each
/// one's DFS-tree parent; (2) in reverse pre-order, each block's semidominator is the least
/// `semi` that `eval` finds over its predecessors, and it is linked into the forest under its
/// parent; (3) in pre-order, each block's idom starts at its parent and climbs the (final)
/// idoms above it while they lie below its semidominator. `eval` compresses paths with an
/// explicit stack, so deep trees cannot overflow the call stack. Everything below works on
/// pre-order numbers (`u32`), `NONE` meaning absent.
fn immediate_dominators(
    n: usize,
    entry: Block,
    cfg: &Cfg,
    out: &mut IdVec<Block, Option<Block>>,
    scratch: &mut Scratch,
) {
    const NONE: u32 = u32::MAX;
    let Scratch {
        num,
        vertex,
        parent,
        walk: stack,
        semi,
        label,
        ancestor,
        path,
    } = scratch;
    // (1) DFS pre-order; each stack entry holds a block and the range of its successors not
    // visited yet.
    num.clear();
    num.resize(n, NONE);
    vertex.clear();
    parent.clear();
    stack.clear();
    let succs = cfg.succs.entries();
    let (s, e) = cfg.succs.bounds(entry);
    stack.push((entry, s, e));
    num[entry] = 0;
    vertex.push(entry);
    parent.push(NONE);
    while let Some(top) = stack.last_mut() {
        if top.1 < top.2 {
            let s = succs[top.1 as usize];
            top.1 += 1;
            if num[s] == NONE {
                let b = top.0;
                num[s] = vertex.len() as u32;
                parent.push(num[b]);
                vertex.push(s);
                let (from, to) = cfg.succs.bounds(s);
                stack.push((s, from, to));
            }
        } else {
            stack.pop();
        }
    }
    let count = vertex.len();
    // `label[v]`: the least semidominator on the compressed forest path above `v`.
    semi.clear();
    semi.extend(0..count as u32);
    label.clear();
    label.extend(0..count as u32);
    ancestor.clear();
    ancestor.resize(count, NONE);
    path.clear();

    // The least semidominator on the forest path above `v` (excluding the root).
    let mut eval = |v: u32, ancestor: &mut Vec<u32>, label: &mut Vec<u32>| -> u32 {
        if ancestor[v as usize] == NONE {
            return label[v as usize];
        }
        let mut x = v;
        while ancestor[ancestor[x as usize] as usize] != NONE {
            path.push(x);
            x = ancestor[x as usize];
        }
        while let Some(y) = path.pop() {
            let a = ancestor[y as usize] as usize;
            if label[a] < label[y as usize] {
                label[y as usize] = label[a];
            }
            ancestor[y as usize] = ancestor[a];
        }
        label[v as usize]
    };

    // (2) Semidominators.
    for w in (1..count).rev() {
        let mut sw = semi[w];
        for &p in &cfg.preds[vertex[w]] {
            let v = num[p];
            if v == NONE {
                continue; // an unreachable predecessor
            }
            let s = eval(v, &mut *ancestor, &mut *label);
            if s < sw {
                sw = s;
            }
        }
        semi[w] = sw;
        label[w] = sw;
        ancestor[w] = parent[w];
    }
    // (3) Idoms, in pre-order so each block's idom is final before its descendants'.
    let idom = parent;
    for w in 1..count {
        let mut d = idom[w];
        while d > semi[w] {
            d = idom[d as usize];
        }
        idom[w] = d;
    }
    out.clear();
    out.resize(n, None);
    for w in 1..count {
        out[vertex[w]] = Some(vertex[idom[w] as usize]);
    }
}

/// The work tables of `DomTree::recompute`, kept from one computation to the next on a thread
/// (see `immediate_dominators` for their meaning).
#[derive(Default)]
struct Scratch {
    /// By block: its pre-order number (`NONE` for one not reached).
    num: IdVec<Block, u32>,
    vertex: Vec<Block>,
    parent: Vec<u32>,
    /// The stack of a depth-first walk: a block and the range of its successors (children) not
    /// visited yet.
    walk: Vec<(Block, u32, u32)>,
    semi: Vec<u32>,
    label: Vec<u32>,
    ancestor: Vec<u32>,
    path: Vec<u32>,
}

thread_local! {
    static SCRATCH: Cell<Scratch> = Cell::default();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fuzzgen::Rng;

    /// Random CFGs (unreachable blocks, self loops, duplicate edges, irreducible loops): the
    /// idoms equal those of the definition (`d` dominates `b` iff `b` is unreachable without
    /// `d`; the idom is the strict dominator that all others dominate).
    #[test]
    fn idoms_match_the_definition_on_random_cfgs() {
        let mut rng = Rng::new(7);
        for _ in 0..400 {
            let n = rng.range(1, 24) as usize;
            let mut text = String::from("func @f() -> i32 {\n");
            let mut succs: Vec<Vec<usize>> = Vec::new();
            for b in 0..n {
                text.push_str(&format!("bb{b}:\n"));
                if b == 0 {
                    text.push_str("    v0 = iconst.i1 1\n    v1 = iconst.i32 0\n");
                }
                let s: Vec<usize> = match rng.below(5) {
                    0 => vec![],
                    1 => vec![rng.below(n as u64) as usize],
                    _ => vec![rng.below(n as u64) as usize, rng.below(n as u64) as usize],
                };
                match s.len() {
                    0 => text.push_str("    ret v1\n"),
                    1 => text.push_str(&format!("    jump bb{}\n", s[0])),
                    _ => text.push_str(&format!("    brif v0, bb{}, bb{}\n", s[0], s[1])),
                }
                succs.push(s);
            }
            text.push_str("}\n");
            let m = crate::ir::parse::module(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
            let f = m.funcs.iter().next().unwrap().1;
            let cfg = Cfg::compute(f);
            let dt = DomTree::compute(f, &cfg);
            // reach[d][b]: b reachable from the entry without passing through d.
            let reach_without = |d: Option<usize>| {
                let mut seen = vec![false; n];
                let mut stack = vec![0usize];
                if d != Some(0) {
                    seen[0] = true;
                    while let Some(b) = stack.pop() {
                        for &s in &succs[b] {
                            if !seen[s] && Some(s) != d {
                                seen[s] = true;
                                stack.push(s);
                            }
                        }
                    }
                }
                seen
            };
            let reachable = reach_without(None);
            let without: Vec<Vec<bool>> = (0..n).map(|d| reach_without(Some(d))).collect();
            let dominates = |d: usize, b: usize| reachable[b] && !without[d][b];
            for (b, &reach) in reachable.iter().enumerate() {
                let expect = if b == 0 || !reach {
                    None
                } else {
                    let strict: Vec<usize> =
                        (0..n).filter(|&d| d != b && dominates(d, b)).collect();
                    strict
                        .iter()
                        .copied()
                        .find(|&i| strict.iter().all(|&d| dominates(d, i)))
                };
                let got = dt.idom[Block::new(b)].map(|x| x.index());
                assert_eq!(got, expect, "idom of bb{b}\n{text}");
                for d in 0..n {
                    assert_eq!(
                        dt.dominates(Block::new(d), Block::new(b)),
                        dominates(d, b),
                        "bb{d} dom bb{b}\n{text}"
                    );
                }
            }
        }
    }
}
