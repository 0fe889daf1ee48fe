//! Stack frame layout, prologue and epilogue.
//!
//! The stack pointer moves only in the prologue and epilogue; everything is addressed from it:
//!
//! ```text
//!   sp + size + k        incoming stack arguments (caller's outgoing area)
//!   ---------------------  sp + size (16-byte aligned)
//!   stack objects        allocas, each at its alignment (large arrays last: keeps the
//!                        frequent slots below within 12-bit offsets)
//!   spill slots          8 bytes each
//!   saved registers      ra (if the function calls), used callee-saved s*/fs*
//!   outgoing arguments   8 bytes per stack-passed argument of the largest call
//!   ---------------------  sp
//! ```
//!
//! A function that needs nothing (leaf, no spills, no stack objects, no callee-saved registers)
//! gets no frame at all. With `wrap` set the frame opens at the start of its save block instead
//! of the entry and is open only in the blocks it marks (see `shrinkwrap`).

use super::minst::*;
use super::regalloc::Allocation;
use super::shrinkwrap::{self, Wrap};

#[derive(Clone, Debug, Default)]
pub struct Frame {
    /// Total bytes, a multiple of 16.
    pub size: u64,
    /// Registers saved by the prologue, with their offsets.
    pub saves: Vec<(Reg, u64)>,
    pub spill_base: u64,
    pub object_off: Vec<u64>,
    /// Where the frame opens when not at the entry.
    pub wrap: Option<Wrap>,
}

impl Frame {
    /// Lays out the frame of an allocated function.
    pub fn compute(mf: &MFunc, alloc: &Allocation) -> Frame {
        let mut frame = Frame::layout(mf, alloc);
        if frame.size > 0 {
            frame.wrap = shrinkwrap::place(mf, alloc);
        }
        frame
    }

    /// The layout alone, opening at the entry.
    fn layout(mf: &MFunc, alloc: &Allocation) -> Frame {
        let has_calls = mf.insts.iter().any(|mi| mi.op == MOp::Call);
        let mut used: Vec<Reg> = alloc
            .reg
            .values()
            .copied()
            .filter(|r| r.is_some() && r.is_callee_saved())
            .collect();
        used.sort_unstable();
        used.dedup();
        let mut off = mf.outgoing.next_multiple_of(8);
        let mut saves = Vec::new();
        if has_calls {
            saves.push((Reg::RA, off));
            off += 8;
        }
        for r in used {
            saves.push((r, off));
            off += 8;
        }
        let spill_base = off;
        off += 8 * alloc.num_slots as u64;
        // Objects: small ones first so they stay within short offsets.
        let mut idx: Vec<usize> = (0..mf.objects.len()).collect();
        idx.sort_by_key(|&k| (mf.objects[k].size, k));
        let mut object_off = vec![0; mf.objects.len()];
        for k in idx {
            let o = mf.objects[k];
            let align = o.align.clamp(1, 16);
            off = off.next_multiple_of(align);
            object_off[k] = off;
            off += o.size;
        }
        Frame {
            size: off.next_multiple_of(16),
            saves,
            spill_base,
            object_off,
            wrap: None,
        }
    }

    /// The sp-relative offset of a symbolic stack address, with the frame open.
    pub fn offset(&self, fref: FrameRef, aux: u32, imm: i64) -> i64 {
        self.offset_in(fref, aux, imm, true)
    }

    /// Whether block `b` runs with the frame open.
    pub fn open_in(&self, b: MBlock) -> bool {
        self.size > 0 && self.wrap.as_ref().is_none_or(|w| w.inside[b])
    }

    /// Whether the frame opens at the start of block `b` (`first`: the entry block).
    pub fn opens_at(&self, b: MBlock, first: bool) -> bool {
        match &self.wrap {
            Some(w) => w.save == b,
            None => first,
        }
    }

    /// The sp-relative offset of a symbolic stack address in a block where the frame is open
    /// (`open`) or not (only incoming arguments are addressed there).
    pub fn offset_in(&self, fref: FrameRef, aux: u32, imm: i64, open: bool) -> i64 {
        match fref {
            FrameRef::None | FrameRef::Outgoing => imm,
            FrameRef::Object => self.object_off[aux as usize] as i64 + imm,
            FrameRef::Incoming if !open => imm,
            FrameRef::Incoming => self.size as i64 + imm,
            FrameRef::Spill => (self.spill_base + 8 * aux as u64) as i64 + imm,
        }
    }

    /// Instructions that open the frame.
    pub fn prologue(&self, out: &mut Vec<MInst>) {
        if self.size == 0 {
            return;
        }
        out.push(MInst::i(MOp::Addi, Reg::SP, Reg::SP, -(self.size as i64)));
        for &(r, off) in &self.saves {
            let op = if r.phys_class() == RegClass::Float {
                MOp::Fsd
            } else {
                MOp::Sd
            };
            out.push(MInst::store(op, r, Reg::SP, off as i64));
        }
    }

    /// Instructions that close the frame (before `ret` or a tail call).
    pub fn epilogue(&self, out: &mut Vec<MInst>) {
        if self.size == 0 {
            return;
        }
        for &(r, off) in &self.saves {
            let op = if r.phys_class() == RegClass::Float {
                MOp::Fld
            } else {
                MOp::Ld
            };
            out.push(MInst::load(op, r, Reg::SP, off as i64));
        }
        out.push(MInst::i(MOp::Addi, Reg::SP, Reg::SP, self.size as i64));
    }
}
