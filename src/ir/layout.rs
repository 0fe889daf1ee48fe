//! The order of blocks in a function and of instructions in a block.
//!
//! Two link tables, one row per block and one per instruction; the layout defines no entity, it
//! only orders them. An entity not in the layout is dead (it may still sit in the tables until the
//! function is compacted). All edits are O(1).

use super::entity::IdVec;
use super::{Block, Inst};

#[derive(Clone, Copy, Default, Debug)]
struct BlockNode {
    prev: Option<Block>,
    next: Option<Block>,
    first: Option<Inst>,
    last: Option<Inst>,
    inserted: bool,
}

#[derive(Clone, Copy, Default, Debug)]
struct InstNode {
    block: Option<Block>,
    prev: Option<Inst>,
    next: Option<Inst>,
}

/// Block and instruction order.
#[derive(Clone, Default, Debug)]
pub struct Layout {
    blocks: IdVec<Block, BlockNode>,
    insts: IdVec<Inst, InstNode>,
    first_block: Option<Block>,
    last_block: Option<Block>,
}

impl Layout {
    /// Gives back the capacity of the tables beyond their lengths.
    pub fn shrink_to_fit(&mut self) {
        self.blocks.shrink_to_fit();
        self.insts.shrink_to_fit();
    }

    /// Makes room for at least `insts` more instructions.
    pub fn reserve_insts(&mut self, insts: usize) {
        self.insts.reserve(insts);
    }

    /// Renumbers the instructions: `new[i]` is the id of old instruction `i` afterwards, `None`
    /// for one that leaves (it must not be in the layout); `n` instructions remain.
    pub fn renumber_insts(&mut self, new: &[Option<Inst>], n: usize) {
        let map = |i: Option<Inst>| i.map(|i| new[i.index()].expect("laid-out instruction kept"));
        // The kept rows, in their old order, are the new ids in order.
        let mut insts = Vec::with_capacity(n);
        for (k, (node, ni)) in self.insts.values().zip(new).enumerate() {
            match ni {
                Some(_) => insts.push(InstNode {
                    block: node.block,
                    prev: map(node.prev),
                    next: map(node.next),
                }),
                None => assert!(node.block.is_none(), "{} is in the layout", Inst::new(k)),
            }
        }
        // Kept instructions past the end of the table were never laid out.
        insts.resize(n, InstNode::default());
        self.insts = IdVec::from_vec(insts);
        for (_, node) in self.blocks.iter_mut() {
            node.first = map(node.first);
            node.last = map(node.last);
        }
    }

    pub fn entry_block(&self) -> Option<Block> {
        self.first_block
    }

    pub fn last_block(&self) -> Option<Block> {
        self.last_block
    }

    pub fn is_block_inserted(&self, b: Block) -> bool {
        self.blocks.get(b).is_some_and(|n| n.inserted)
    }

    pub fn next_block(&self, b: Block) -> Option<Block> {
        self.blocks[b].next
    }

    pub fn prev_block(&self, b: Block) -> Option<Block> {
        self.blocks[b].prev
    }

    pub fn first_inst(&self, b: Block) -> Option<Inst> {
        self.blocks[b].first
    }

    /// The last instruction of `b`: its terminator once the block is complete.
    pub fn last_inst(&self, b: Block) -> Option<Inst> {
        self.blocks[b].last
    }

    pub fn next_inst(&self, i: Inst) -> Option<Inst> {
        self.insts[i].next
    }

    pub fn prev_inst(&self, i: Inst) -> Option<Inst> {
        self.insts[i].prev
    }

    /// The block holding `i`, or `None` if `i` is not in the layout.
    pub fn inst_block(&self, i: Inst) -> Option<Block> {
        self.insts.get(i).and_then(|n| n.block)
    }

    /// Blocks in layout order.
    pub fn blocks(&self) -> Blocks<'_> {
        Blocks {
            layout: self,
            next: self.first_block,
        }
    }

    /// Instructions of `b` in order.
    pub fn block_insts(&self, b: Block) -> Insts<'_> {
        Insts {
            layout: self,
            next: self.blocks[b].first,
        }
    }

    pub fn num_blocks_inserted(&self) -> usize {
        self.blocks().count()
    }

    fn grow_block(&mut self, b: Block) {
        self.blocks.ensure(b, BlockNode::default());
    }

    fn grow_inst(&mut self, i: Inst) {
        self.insts.ensure(i, InstNode::default());
    }

    /// Appends `b` at the end of the function.
    pub fn append_block(&mut self, b: Block) {
        self.grow_block(b);
        assert!(!self.blocks[b].inserted, "{b} already in layout");
        let node = &mut self.blocks[b];
        node.inserted = true;
        node.prev = self.last_block;
        node.next = None;
        match self.last_block {
            Some(last) => self.blocks[last].next = Some(b),
            None => self.first_block = Some(b),
        }
        self.last_block = Some(b);
    }

    /// Inserts `b` right after `after`.
    pub fn insert_block_after(&mut self, b: Block, after: Block) {
        self.grow_block(b);
        assert!(!self.blocks[b].inserted, "{b} already in layout");
        let next = self.blocks[after].next;
        {
            let node = &mut self.blocks[b];
            node.inserted = true;
            node.prev = Some(after);
            node.next = next;
        }
        self.blocks[after].next = Some(b);
        match next {
            Some(n) => self.blocks[n].prev = Some(b),
            None => self.last_block = Some(b),
        }
    }

    /// Removes `b` from the block order. Its instructions stay attached to it.
    pub fn remove_block(&mut self, b: Block) {
        let BlockNode { prev, next, .. } = self.blocks[b];
        assert!(self.blocks[b].inserted, "{b} not in layout");
        match prev {
            Some(p) => self.blocks[p].next = next,
            None => self.first_block = next,
        }
        match next {
            Some(n) => self.blocks[n].prev = prev,
            None => self.last_block = prev,
        }
        let node = &mut self.blocks[b];
        node.inserted = false;
        node.prev = None;
        node.next = None;
    }

    /// Appends `i` at the end of `b`.
    pub fn append_inst(&mut self, i: Inst, b: Block) {
        self.grow_block(b);
        self.grow_inst(i);
        debug_assert!(self.insts[i].block.is_none(), "{i} already in layout");
        let last = self.blocks[b].last;
        self.insts[i] = InstNode {
            block: Some(b),
            prev: last,
            next: None,
        };
        match last {
            Some(l) => self.insts[l].next = Some(i),
            None => self.blocks[b].first = Some(i),
        }
        self.blocks[b].last = Some(i);
    }

    /// Inserts `i` right before `before`.
    pub fn insert_inst_before(&mut self, i: Inst, before: Inst) {
        self.grow_inst(i);
        debug_assert!(self.insts[i].block.is_none(), "{i} already in layout");
        let b = self.insts[before]
            .block
            .expect("insert before an instruction not in layout");
        let prev = self.insts[before].prev;
        self.insts[i] = InstNode {
            block: Some(b),
            prev,
            next: Some(before),
        };
        self.insts[before].prev = Some(i);
        match prev {
            Some(p) => self.insts[p].next = Some(i),
            None => self.blocks[b].first = Some(i),
        }
    }

    /// Inserts `i` right after `after`.
    pub fn insert_inst_after(&mut self, i: Inst, after: Inst) {
        self.grow_inst(i);
        debug_assert!(self.insts[i].block.is_none(), "{i} already in layout");
        let b = self.insts[after]
            .block
            .expect("insert after an instruction not in layout");
        let next = self.insts[after].next;
        self.insts[i] = InstNode {
            block: Some(b),
            prev: Some(after),
            next,
        };
        self.insts[after].next = Some(i);
        match next {
            Some(n) => self.insts[n].prev = Some(i),
            None => self.blocks[b].last = Some(i),
        }
    }

    /// Unlinks `i` from its block.
    pub fn remove_inst(&mut self, i: Inst) {
        let InstNode { block, prev, next } = self.insts[i];
        let b = block.expect("remove an instruction not in layout");
        match prev {
            Some(p) => self.insts[p].next = next,
            None => self.blocks[b].first = next,
        }
        match next {
            Some(n) => self.insts[n].prev = prev,
            None => self.blocks[b].last = prev,
        }
        self.insts[i] = InstNode::default();
    }

    /// Moves every instruction from `i` (inclusive) to the end of its block to the end of `to`.
    pub fn split_tail(&mut self, i: Inst, to: Block) {
        let mut cur = Some(i);
        while let Some(x) = cur {
            cur = self.insts[x].next;
            self.remove_inst(x);
            self.append_inst(x, to);
        }
    }
}

/// Iterator over blocks in layout order.
pub struct Blocks<'a> {
    layout: &'a Layout,
    next: Option<Block>,
}

impl Iterator for Blocks<'_> {
    type Item = Block;
    fn next(&mut self) -> Option<Block> {
        let b = self.next?;
        self.next = self.layout.blocks[b].next;
        Some(b)
    }
}

/// Iterator over the instructions of a block.
pub struct Insts<'a> {
    layout: &'a Layout,
    next: Option<Inst>,
}

impl Iterator for Insts<'_> {
    type Item = Inst;
    fn next(&mut self) -> Option<Inst> {
        let i = self.next?;
        self.next = self.layout.insts[i].next;
        Some(i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_and_insts_link_both_ways() {
        let mut l = Layout::default();
        let (b0, b1, b2) = (Block::new(0), Block::new(1), Block::new(2));
        l.append_block(b0);
        l.append_block(b2);
        l.insert_block_after(b1, b0);
        assert_eq!(l.blocks().collect::<Vec<_>>(), vec![b0, b1, b2]);
        l.remove_block(b1);
        assert_eq!(l.blocks().collect::<Vec<_>>(), vec![b0, b2]);
        assert_eq!(l.prev_block(b2), Some(b0));

        let (i0, i1, i2, i3) = (Inst::new(0), Inst::new(1), Inst::new(2), Inst::new(3));
        l.append_inst(i0, b0);
        l.append_inst(i2, b0);
        l.insert_inst_before(i1, i2);
        l.insert_inst_after(i3, i2);
        assert_eq!(l.block_insts(b0).collect::<Vec<_>>(), vec![i0, i1, i2, i3]);
        l.remove_inst(i0);
        l.remove_inst(i3);
        assert_eq!(l.block_insts(b0).collect::<Vec<_>>(), vec![i1, i2]);
        assert_eq!(l.first_inst(b0), Some(i1));
        assert_eq!(l.last_inst(b0), Some(i2));
        assert_eq!(l.inst_block(i0), None);
        l.split_tail(i2, b2);
        assert_eq!(l.block_insts(b2).collect::<Vec<_>>(), vec![i2]);
        assert_eq!(l.last_inst(b0), Some(i1));
    }
}
