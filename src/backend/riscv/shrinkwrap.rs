//! Shrink-wrapping: the frame (stack adjustment, `ra` and callee-saved saves) opens at a block
//! that dominates every block needing it instead of at the entry, so paths that need nothing
//! (an early return, the base case of a recursion) run without it.
//!
//! A block needs the frame when it calls, addresses the frame (stack objects, spill slots,
//! outgoing arguments) or reads or writes a callee-saved register. The save block `S` is the
//! nearest common dominator of those blocks, moved up the dominator tree while it lies on a
//! cycle. The region is the set of blocks `S` dominates. It holds every block needing the frame,
//! it is entered only through `S` (no cycle passes through `S`), and every block reachable from
//! a block outside it is outside it: each block runs either always with the frame open or always
//! without it, and no callee-saved register carries a value of ours outside the region (all
//! reads and writes of one are inside, and a path that leaves never comes back).
//!
//! The frame closes before each `ret` or tail call inside the region and on each edge leaving
//! it: before the block's final `j` (replaced by a copy of its target when that is a small
//! block ending in a return), at the end of a block falling through, and, for a conditional
//! branch, in an out-of-line block holding the epilogue and a copy of the target, which must be
//! a small block ending in a return (so leaving costs no extra jump; otherwise `S` moves up).
//! A block ending `bcc next; j X` with `next` laid out after it leaves the same way through the
//! inverted branch, so the path staying in the region keeps falling through. Incoming stack
//! arguments are addressed with the frame size added inside the region only. The frame moves
//! only when some path from the entry returns without passing `S`; functions with stack objects
//! keep it at the entry.
//!
//! Before allocation, [`split_at_region`] keeps values computed before `S` out of callee-saved
//! registers: each value live into `S` and across a call inside the region is copied into a new
//! virtual register at the top of `S` (recomputed there when it is a constant or an address)
//! that the region reads instead, so only the copy lives across calls and the code before `S`
//! can use caller-saved registers. When one of them is also live into a block the region exits
//! to, it needs a callee-saved register outside the region anyway, and nothing is copied.
//! Cost: O(blocks^2) worst case for dominators and the common dominator, O(instructions) per
//! candidate save block (at most `MAX_LIFTS + 1` of them).

use super::liveness::Intervals;
use super::loops::{components, dominators, rpo_and_preds};
use super::minst::*;
use super::regalloc::Allocation;
use crate::ir::IdVec;

/// Largest block (instructions) copied into an out-of-line exit block.
const MAX_EXIT_COPY: u32 = 4;

/// Most times the save block moves up for a region whose exits cost jumps.
const MAX_LIFTS: usize = 4;

/// Where the frame opens and which blocks run with it open.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Wrap {
    /// The block whose start opens the frame.
    pub save: MBlock,
    /// Per block: whether it runs with the frame open (the blocks `save` dominates).
    pub inside: IdVec<MBlock, bool>,
}

struct Cfg {
    entry: MBlock,
    rpo: Vec<MBlock>,
    /// Reverse postorder number; `None` for unreachable blocks.
    rpo_num: IdVec<MBlock, Option<u32>>,
    /// Immediate dominator (the entry's is itself); `None` for unreachable blocks.
    idom: IdVec<MBlock, Option<MBlock>>,
    /// Per block: on a cycle of the CFG.
    cyclic: IdVec<MBlock, bool>,
}

impl Cfg {
    fn new(mf: &MFunc) -> Option<Cfg> {
        let &entry = mf.order.first()?;
        let nb = mf.blocks.len();
        let (rpo, preds) = rpo_and_preds(mf, entry);
        let (idom, rpo_num) = dominators(&rpo, &preds, entry, nb);
        let scc = components(&rpo, &mf.blocks, &preds);
        let mut cyclic_comp = vec![false; nb];
        for &b in &rpo {
            let c = scc[b];
            if mf.blocks[b].succs.iter().any(|&s| scc[s] == c) {
                cyclic_comp[c.expect("a reachable block is in a component") as usize] = true;
            }
        }
        let cyclic = scc
            .values()
            .map(|&c| c.is_some_and(|c| cyclic_comp[c as usize]))
            .collect();
        Some(Cfg {
            entry,
            rpo,
            rpo_num,
            idom,
            cyclic,
        })
    }

    fn reachable(&self, b: MBlock) -> bool {
        self.rpo_num[b].is_some()
    }

    /// The immediate dominator of `b` (reachable; the entry's is itself).
    fn idom(&self, b: MBlock) -> MBlock {
        self.idom[b].expect("a reachable block has an immediate dominator")
    }

    /// The nearest common dominator of `x` and `y` (both reachable).
    fn ncd(&self, mut x: MBlock, mut y: MBlock) -> MBlock {
        while x != y {
            while self.rpo_num[x] > self.rpo_num[y] {
                x = self.idom(x);
            }
            while self.rpo_num[y] > self.rpo_num[x] {
                y = self.idom(y);
            }
        }
        x
    }

    /// The nearest common dominator of `need`, moved up off cycles; `None` when that is the
    /// entry or nothing needs the frame.
    fn save_block(&self, need: &IdVec<MBlock, bool>) -> Option<MBlock> {
        let mut s: Option<MBlock> = None;
        for (b, _) in need.iter().filter(|(_, &n)| n) {
            if self.reachable(b) {
                s = Some(s.map_or(b, |x| self.ncd(x, b)));
                if s == Some(self.entry) {
                    return None;
                }
            }
        }
        self.lift(s?)
    }

    /// `s`, or its nearest dominator not on a cycle; `None` when that is the entry.
    fn lift(&self, mut s: MBlock) -> Option<MBlock> {
        while s != self.entry && self.cyclic[s] {
            s = self.idom(s);
        }
        (s != self.entry).then_some(s)
    }

    /// The blocks `s` dominates (in reverse postorder an immediate dominator comes first).
    fn region(&self, s: MBlock) -> IdVec<MBlock, bool> {
        let mut inside = IdVec::filled(self.rpo_num.len(), false);
        for &b in &self.rpo {
            let d = self.idom(b);
            inside[b] = b == s || (d != b && inside[d]);
        }
        inside
    }
}

/// Whether some path from the entry returns without passing `s`.
fn returns_around(mf: &MFunc, cfg: &Cfg, s: MBlock) -> bool {
    let mut seen = IdVec::filled(mf.blocks.len(), false);
    let mut stack = vec![cfg.entry];
    seen[cfg.entry] = true;
    while let Some(b) = stack.pop() {
        let blk = &mf.blocks[b];
        if mf.insts[blk.start as usize..blk.end as usize]
            .iter()
            .any(|mi| matches!(mi.op, MOp::Ret | MOp::TailCall))
        {
            return true;
        }
        for &x in &blk.succs {
            if x != s && !seen[x] {
                seen[x] = true;
                stack.push(x);
            }
        }
    }
    false
}

/// Whether `mi` addresses this function's frame (not the caller's incoming arguments).
fn frame_access(fref: FrameRef) -> bool {
    !matches!(fref, FrameRef::None | FrameRef::Incoming)
}

/// Per block: whether it needs the frame before allocation (calls, frame accesses, callee-saved
/// registers named directly).
fn needs_before_alloc(mf: &MFunc) -> IdVec<MBlock, bool> {
    mf.blocks
        .values()
        .map(|blk| {
            mf.insts[blk.start as usize..blk.end as usize]
                .iter()
                .any(|mi| {
                    mi.op == MOp::Call
                        || frame_access(mi.fref)
                        || [mi.rd, mi.rs1, mi.rs2]
                            .iter()
                            .any(|r| r.is_phys() && r.is_callee_saved())
                })
        })
        .collect()
}

/// Before allocation: values live into the save block and across a call inside the region get
/// a copy of their own there (see the module comment). Returns whether anything changed
/// (liveness is then stale).
pub fn split_at_region(mf: &mut MFunc, iv: &Intervals) -> bool {
    if !mf.objects.is_empty() {
        return false;
    }
    let Some(cfg) = Cfg::new(mf) else {
        return false;
    };
    let need = needs_before_alloc(mf);
    let Some((s, inside)) = cfg.save_block(&need).and_then(|s| choose(mf, &cfg, s)) else {
        return false;
    };
    let mut exits: Vec<MBlock> = Vec::new();
    let mut calls: Vec<u32> = Vec::new();
    for (b, blk) in mf.blocks.iter() {
        if !inside[b] {
            continue;
        }
        exits.extend(blk.succs.iter().filter(|&&x| !inside[x]));
        for k in blk.start..blk.end {
            if mf.insts[k as usize].op == MOp::Call {
                calls.push(2 * k + 1);
            }
        }
    }
    calls.sort_unstable();
    let at = |b: MBlock| 2 * mf.blocks[b].start;
    let crosses_call = |v: usize| {
        iv.ranges[v].iter().any(|&(lo, hi)| {
            let i = calls.partition_point(|&c| c < lo);
            i < calls.len() && calls[i] <= hi
        })
    };
    let split: Vec<usize> = (0..mf.num_vregs())
        .filter(|&v| iv.covers(v, at(s)) && crosses_call(v))
        .collect();
    // A value live across the region's calls and out of it keeps a callee-saved register
    // outside the region, which then needs the frame: copies would not help.
    if split.is_empty()
        || split
            .iter()
            .any(|&v| exits.iter().any(|&x| iv.covers(v, at(x))))
    {
        return false;
    }
    let mut rename: rustc_hash::FxHashMap<Reg, Reg> = Default::default();
    let mut head = Vec::with_capacity(split.len());
    for &v in &split {
        let v = VReg::new(v);
        let old = v.reg();
        let class = mf.vclass[v];
        let new = mf.new_vreg(class);
        rename.insert(old, new);
        let copy = match mf.remat[v] {
            Some(mut rm) => {
                rm.rd = new;
                mf.remat[new.as_vreg()] = Some(rm);
                rm
            }
            None => MInst::unary(
                match class {
                    RegClass::Int => MOp::Mv,
                    RegClass::Float => MOp::FmvD,
                },
                new,
                old,
            ),
        };
        head.push(copy);
    }
    let mut insts = Vec::with_capacity(mf.insts.len() + head.len());
    for &b in &mf.order {
        let blk = &mut mf.blocks[b];
        let range = blk.start as usize..blk.end as usize;
        blk.start = insts.len() as u32;
        if b == s {
            insts.extend_from_slice(&head);
        }
        for &mi in &mf.insts[range] {
            let mut mi = mi;
            if inside[b] {
                for r in [&mut mi.rd, &mut mi.rs1, &mut mi.rs2] {
                    if let Some(&n) = rename.get(r) {
                        *r = n;
                    }
                }
            }
            insts.push(mi);
        }
        blk.end = insts.len() as u32;
    }
    mf.insts = insts;
    true
}

/// Per block: whether it needs the frame after allocation.
fn needs_after_alloc(mf: &MFunc, alloc: &Allocation) -> IdVec<MBlock, bool> {
    let reg_needs = |r: Reg| {
        if r.is_none() {
            false
        } else if r.is_virt() {
            if alloc.is_spilled(r) {
                match mf.remat[r.as_vreg()] {
                    Some(rm) => frame_access(rm.fref),
                    None => true,
                }
            } else {
                let p = alloc.reg[r.as_vreg()];
                p.is_some() && p.is_callee_saved()
            }
        } else {
            r.is_callee_saved()
        }
    };
    mf.blocks
        .values()
        .map(|blk| {
            mf.insts[blk.start as usize..blk.end as usize]
                .iter()
                .any(|mi| {
                    mi.op == MOp::Call
                        || frame_access(mi.fref)
                        || reg_needs(mi.rd)
                        || reg_needs(mi.rs1)
                        || reg_needs(mi.rs2)
                })
        })
        .collect()
}

/// Whether block `x` may be copied into an out-of-line exit block: small, returning, with no
/// successors.
pub fn copyable_exit(mf: &MFunc, x: MBlock) -> bool {
    let blk = &mf.blocks[x];
    blk.succs.is_empty()
        && blk.end > blk.start
        && blk.end - blk.start <= MAX_EXIT_COPY
        && matches!(mf.insts[blk.end as usize - 1].op, MOp::Ret | MOp::TailCall)
}

/// Whether block `b` ends `bcc next; j X` with `next` the block laid out after it (inside the
/// region): leaving by the jump then goes through the inverted branch to an out-of-line exit
/// block, so the path staying inside keeps falling through.
pub fn jump_after_branch_to_next(mf: &MFunc, b: MBlock, next: Option<MBlock>) -> bool {
    let blk = &mf.blocks[b];
    let (s, e) = (blk.start as usize, blk.end as usize);
    e >= s + 2
        && mf.insts[e - 1].op == MOp::J
        && mf.insts[e - 2].op.is_branch()
        && next == Some(MBlock::target_of(&mf.insts[e - 2]))
}

/// After allocation: where the frame opens, or `None` for the entry.
pub fn place(mf: &MFunc, alloc: &Allocation) -> Option<Wrap> {
    if !mf.objects.is_empty() {
        return None;
    }
    let cfg = Cfg::new(mf)?;
    let s = cfg.save_block(&needs_after_alloc(mf, alloc))?;
    choose(mf, &cfg, s).map(|(save, inside)| Wrap { save, inside })
}

/// From `s` up the dominator tree, the first save block whose region every conditional branch
/// leaves to a copyable block, with its region; `None` when only the entry qualifies or no
/// path returns around it.
fn choose(mf: &MFunc, cfg: &Cfg, mut s: MBlock) -> Option<(MBlock, IdVec<MBlock, bool>)> {
    for _ in 0..=MAX_LIFTS {
        if !returns_around(mf, cfg, s) {
            return None;
        }
        let inside = cfg.region(s);
        let ok = mf.order.iter().enumerate().all(|(n, &b)| {
            if !inside[b] {
                return true;
            }
            let blk = &mf.blocks[b];
            let next = mf.order.get(n + 1).copied().filter(|&x| inside[x]);
            let by_branch = jump_after_branch_to_next(mf, b, next);
            mf.insts[blk.start as usize..blk.end as usize]
                .iter()
                .filter(|mi| {
                    (mi.op.is_branch() || (by_branch && mi.op == MOp::J))
                        && !inside[MBlock::target_of(mi)]
                })
                .all(|mi| copyable_exit(mf, MBlock::target_of(mi)))
        });
        if ok {
            return Some((s, inside));
        }
        s = cfg.lift(cfg.idom(s))?;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::super::emit;
    use super::super::frame::Frame;
    use super::*;

    fn block(start: u32, end: u32, succs: &[usize], depth: u32) -> MBlockData {
        MBlockData {
            start,
            end,
            succs: succs.iter().map(|&s| MBlock::new(s)).collect(),
            depth,
        }
    }

    fn label(b: i64) -> MInst {
        MInst::new(MOp::Label, Reg::NONE, Reg::NONE, Reg::NONE, b)
    }

    fn ret() -> MInst {
        MInst::new(MOp::Ret, Reg::NONE, Reg::NONE, Reg::NONE, 0)
    }

    /// A function `name` of `vregs` integer virtual registers (none rematerialisable) whose one
    /// call site calls `callee` with `args`.
    fn func(
        name: &str,
        insts: Vec<MInst>,
        blocks: Vec<MBlockData>,
        order: Vec<usize>,
        vregs: usize,
        (callee, args): (&str, Vec<Reg>),
    ) -> MFunc {
        MFunc {
            sym: name.into(),
            label: name.into(),
            insts,
            blocks: IdVec::from_vec(blocks),
            order: order.into_iter().map(MBlock::new).collect(),
            vclass: IdVec::filled(vregs, RegClass::Int),
            remat: IdVec::filled(vregs, None),
            calls: vec![CallInfo {
                sym: callee.into(),
                args,
            }],
            ..Default::default()
        }
    }

    /// `b0` tests the argument against a stack-passed bound and returns 1 early (`b2`); `b1`
    /// calls with the argument in `s1`, then leaves through a branch to `b2` or falls through
    /// to `b3`, which returns a sum. `b2_extra` pads `b2`.
    fn recursion(b2_extra: usize) -> (MFunc, Allocation) {
        let v: Vec<Reg> = (0..6).map(Reg::vreg).collect();
        let (t3, t4, t5, t6, s1) = (Reg(28), Reg(29), Reg(30), Reg(31), Reg(9));
        let a0 = Reg::A0;
        let mut insts = vec![
            // b0
            MInst::unary(MOp::Mv, v[0], a0),
            MInst::load(MOp::Lw, v[1], Reg::SP, 8).with_frame(FrameRef::Incoming, 0),
            MInst::branch(MOp::Blt, v[0], v[1], 2),
            // b1
            MInst::unary(MOp::Mv, v[2], v[0]),
            MInst::i(MOp::Addiw, a0, v[2], -1),
            MInst::new(MOp::Call, Reg::NONE, Reg::NONE, Reg::NONE, 0),
            MInst::unary(MOp::Mv, v[3], a0),
            MInst::load(MOp::Lw, v[4], Reg::SP, 0).with_frame(FrameRef::Incoming, 0),
            MInst::branch(MOp::Bge, v[3], v[4], 2),
            // b3
            MInst::r(MOp::Addw, a0, v[3], v[2]),
            ret(),
        ];
        // b2
        let b2 = insts.len() as u32;
        for _ in 0..b2_extra {
            insts.push(MInst::i(MOp::Addi, a0, a0, 1));
        }
        insts.push(MInst::li(a0, 1));
        insts.push(ret());
        let n = insts.len() as u32;
        let mf = func(
            "f",
            insts,
            vec![
                block(0, 3, &[2, 1], 0),
                block(3, 9, &[2, 3], 0),
                block(b2, n, &[], 0),
                block(9, 11, &[], 0),
            ],
            vec![0, 1, 3, 2],
            6,
            ("f", vec![a0]),
        );
        let alloc = Allocation {
            reg: IdVec::from_vec(vec![t3, t4, s1, t5, t6, Reg::NONE]),
            spill: IdVec::filled(6, super::super::regalloc::Spill::No),
            num_slots: 0,
        };
        (mf, alloc)
    }

    #[test]
    fn frame_opens_after_the_early_return() {
        let (mf, alloc) = recursion(0);
        let frame = Frame::compute(&mf, &alloc);
        assert_eq!(frame.size, 16);
        assert_eq!(
            frame.wrap,
            Some(Wrap {
                save: MBlock::new(1),
                inside: IdVec::from_vec(vec![false, true, false, true]),
            })
        );
        let mut code = Vec::new();
        emit::rewrite(&mf, &alloc, &frame, &mut code);
        let (t3, t4, t5, t6, s1, a0, sp) =
            (Reg(28), Reg(29), Reg(30), Reg(31), Reg(9), Reg::A0, Reg::SP);
        let epilogue = [
            MInst::load(MOp::Ld, Reg::RA, sp, 0),
            MInst::load(MOp::Ld, s1, sp, 8),
            MInst::i(MOp::Addi, sp, sp, 16),
        ];
        let mut want = vec![
            label(0),
            MInst::unary(MOp::Mv, t3, a0),
            // The caller's stack argument, without the frame.
            MInst::load(MOp::Lw, t4, sp, 8),
            MInst::branch(MOp::Blt, t3, t4, 2),
            label(1),
            MInst::i(MOp::Addi, sp, sp, -16),
            MInst::store(MOp::Sd, Reg::RA, sp, 0),
            MInst::store(MOp::Sd, s1, sp, 8),
            MInst::unary(MOp::Mv, s1, t3),
            MInst::i(MOp::Addiw, a0, s1, -1),
            MInst::new(MOp::Call, Reg::NONE, Reg::NONE, Reg::NONE, 0),
            MInst::unary(MOp::Mv, t5, a0),
            // The same area, past the frame.
            MInst::load(MOp::Lw, t6, sp, 16),
            // Leaving the frame's region: an out-of-line block closes it.
            MInst::branch(MOp::Bge, t5, t6, 4),
            label(3),
            MInst::r(MOp::Addw, a0, t5, s1),
        ];
        want.extend(epilogue);
        want.extend([ret(), label(2), MInst::li(a0, 1), ret(), label(4)]);
        want.extend(epilogue);
        want.extend([MInst::li(a0, 1), ret()]);
        assert_eq!(code, want);
    }

    #[test]
    fn frame_stays_at_the_entry_when_leaving_would_cost_a_jump() {
        // The branch target is too large to copy: the save block moves up to the entry.
        let (mf, alloc) = recursion(MAX_EXIT_COPY as usize);
        let frame = Frame::compute(&mf, &alloc);
        assert_eq!(frame.wrap, None);
        let mut code = Vec::new();
        emit::rewrite(&mf, &alloc, &frame, &mut code);
        assert_eq!(code[1], MInst::i(MOp::Addi, Reg::SP, Reg::SP, -16));
        assert_eq!(code[4], MInst::unary(MOp::Mv, Reg(28), Reg::A0));
        // Incoming arguments past the frame everywhere.
        assert_eq!(code[5], MInst::load(MOp::Lw, Reg(29), Reg::SP, 24));
    }

    #[test]
    fn save_block_leaves_loops() {
        // b0: early exit to b3 | b1: preheader | b2: loop calling, exits by falling into b3.
        let v0 = Reg::vreg(0);
        let insts = vec![
            MInst::unary(MOp::Mv, v0, Reg::A0),
            MInst::branch(MOp::Beq, v0, Reg::ZERO, 3),
            MInst::i(MOp::Addi, v0, v0, 1),
            MInst::new(MOp::Call, Reg::NONE, Reg::NONE, Reg::NONE, 0),
            MInst::i(MOp::Addi, v0, v0, -1),
            MInst::branch(MOp::Bne, v0, Reg::ZERO, 2),
            ret(),
        ];
        let mf = func(
            "g",
            insts,
            vec![
                block(0, 2, &[3, 1], 0),
                block(2, 3, &[2], 0),
                block(3, 6, &[2, 3], 1),
                block(6, 7, &[], 0),
            ],
            vec![0, 1, 2, 3],
            1,
            ("h", vec![]),
        );
        let alloc = Allocation {
            reg: IdVec::from_vec(vec![Reg(9)]),
            spill: IdVec::filled(1, super::super::regalloc::Spill::No),
            num_slots: 0,
        };
        // b0 writes s1 itself: the frame must open at the entry.
        assert_eq!(place(&mf, &alloc), None);
        let mut mf = mf;
        mf.insts[0] = MInst::unary(MOp::Mv, Reg(28), Reg::A0);
        mf.insts[1] = MInst::branch(MOp::Beq, Reg(28), Reg::ZERO, 3);
        mf.insts[2] = MInst::unary(MOp::Mv, v0, Reg(28));
        let w = place(&mf, &alloc).expect("the frame moves off the entry");
        assert_eq!(w.save, MBlock::new(1));
        let frame = Frame::compute(&mf, &alloc);
        let mut code = Vec::new();
        emit::rewrite(&mf, &alloc, &frame, &mut code);
        // The loop's exit falls through into the epilogue, then the shared return.
        let k = code.iter().position(|mi| mi.op == MOp::Bne).unwrap();
        assert_eq!(code[k + 1], MInst::load(MOp::Ld, Reg::RA, Reg::SP, 0));
        assert_eq!(code[k + 3], MInst::i(MOp::Addi, Reg::SP, Reg::SP, 16));
        assert_eq!(code[k + 4], label(3));
        assert_eq!(code[k + 5], ret());
    }

    #[test]
    fn loop_exit_by_jump_keeps_the_fall_through() {
        // b0: early return to b3 | b1: opens | b2: calls, `bne next; j b3` | b4: back edge.
        let (v0, v1) = (Reg::vreg(0), Reg::vreg(1));
        let (t3, s1, sp) = (Reg(28), Reg(9), Reg::SP);
        let call = MInst::new(MOp::Call, Reg::NONE, Reg::NONE, Reg::NONE, 0);
        let insts = vec![
            MInst::unary(MOp::Mv, v0, Reg::A0),
            MInst::branch(MOp::Beq, v0, Reg::ZERO, 3),
            MInst::unary(MOp::Mv, v1, v0),
            call,
            MInst::i(MOp::Addi, v1, v1, -1),
            MInst::branch(MOp::Bne, v1, Reg::ZERO, 4),
            MInst::jump(3),
            MInst::jump(2),
            ret(),
        ];
        let mf = func(
            "g",
            insts,
            vec![
                block(0, 2, &[3, 1], 0),
                block(2, 3, &[2], 0),
                block(3, 7, &[4, 3], 1),
                block(8, 9, &[], 0),
                block(7, 8, &[2], 1),
            ],
            vec![0, 1, 2, 4, 3],
            2,
            ("h", vec![]),
        );
        let alloc = Allocation {
            reg: IdVec::from_vec(vec![t3, s1]),
            spill: IdVec::filled(2, super::super::regalloc::Spill::No),
            num_slots: 0,
        };
        let frame = Frame::compute(&mf, &alloc);
        assert_eq!(frame.wrap.as_ref().map(|w| w.save), Some(MBlock::new(1)));
        let mut code = Vec::new();
        emit::rewrite(&mf, &alloc, &frame, &mut code);
        let want = vec![
            label(0),
            MInst::unary(MOp::Mv, t3, Reg::A0),
            MInst::branch(MOp::Beq, t3, Reg::ZERO, 3),
            label(1),
            MInst::i(MOp::Addi, sp, sp, -16),
            MInst::store(MOp::Sd, Reg::RA, sp, 0),
            MInst::store(MOp::Sd, s1, sp, 8),
            MInst::unary(MOp::Mv, s1, t3),
            label(2),
            call,
            MInst::i(MOp::Addi, s1, s1, -1),
            // Leaving: the inverted branch to an exit block; staying falls through.
            MInst::branch(MOp::Beq, s1, Reg::ZERO, 5),
            label(4),
            MInst::jump(2),
            label(3),
            ret(),
            label(5),
            MInst::load(MOp::Ld, Reg::RA, sp, 0),
            MInst::load(MOp::Ld, s1, sp, 8),
            MInst::i(MOp::Addi, sp, sp, 16),
            ret(),
        ];
        assert_eq!(code, want);
    }

    #[test]
    fn values_from_before_the_save_block_get_copies_there() {
        // b0: `n < 2` returns n (b2) | b1: f(n - 1) + f(n - 2).
        let v: Vec<Reg> = (0..3).map(Reg::vreg).collect();
        let a0 = Reg::A0;
        let call = MInst::new(MOp::Call, Reg::NONE, Reg::NONE, Reg::NONE, 0);
        let insts = vec![
            MInst::unary(MOp::Mv, v[0], a0),
            MInst::li(v[1], 2),
            MInst::branch(MOp::Blt, v[0], v[1], 2),
            MInst::i(MOp::Addiw, a0, v[0], -1),
            call,
            MInst::unary(MOp::Mv, v[2], a0),
            MInst::i(MOp::Addiw, a0, v[0], -2),
            call,
            MInst::r(MOp::Addw, a0, v[2], a0),
            ret(),
            MInst::unary(MOp::Mv, a0, v[0]),
            ret(),
        ];
        let mut mf = func(
            "f",
            insts,
            vec![
                block(0, 3, &[2, 1], 0),
                block(3, 10, &[], 0),
                block(10, 12, &[], 0),
            ],
            vec![0, 1, 2],
            3,
            ("f", vec![a0]),
        );
        mf.remat[VReg::new(1)] = Some(MInst::li(v[1], 2));
        let iv = super::super::liveness::compute(&mf);
        assert!(split_at_region(&mut mf, &iv));
        let copy = Reg::vreg(3);
        assert_eq!(mf.insts[3], MInst::unary(MOp::Mv, copy, v[0]));
        assert_eq!(mf.insts[4], MInst::i(MOp::Addiw, a0, copy, -1));
        let b1 = &mf.blocks[MBlock::new(1)];
        assert_eq!((b1.start, b1.end), (3, 11));
        assert_eq!(mf.insts[11], MInst::unary(MOp::Mv, a0, v[0]));
        let iv = super::super::liveness::compute(&mf);
        let alloc = super::super::regalloc::linear_scan::allocate(&mf, &iv);
        super::super::regalloc::checker::check(&mf, &alloc).unwrap();
        assert!(
            !alloc.reg[VReg::new(0)].is_callee_saved() && alloc.reg[VReg::new(3)].is_callee_saved()
        );
        assert_eq!(place(&mf, &alloc).map(|w| w.save), Some(MBlock::new(1)));
        // Nothing to copy once the entry needs the frame itself.
        let iv = super::super::liveness::compute(&mf);
        mf.insts[0] = MInst::new(MOp::Call, Reg::NONE, Reg::NONE, Reg::NONE, 0);
        assert!(!split_at_region(&mut mf, &iv));
    }
}
