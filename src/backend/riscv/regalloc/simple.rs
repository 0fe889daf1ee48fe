//! The baseline allocator: every virtual register lives in its own stack slot.
//!
//! Each read reloads the value into a reserved scratch register and each write stores it back
//! (the spill code of `emit`), so nothing is kept in registers across instructions. It is what
//! a compiler without register allocation does, and the yardstick `sysyc bench` compares the
//! linear-scan allocator against (`--regalloc=simple`). No remat, no slot sharing: the result
//! is trivially right, and the checker proves it like any other allocation.
//! Cost: O(virtual registers).

use super::super::minst::*;
use super::{Allocation, Spill, SpillSlot};
use crate::ir::IdVec;

pub fn allocate(mf: &MFunc) -> Allocation {
    let nv = mf.num_vregs();
    Allocation {
        reg: IdVec::filled(nv, Reg::NONE),
        spill: IdVec::from_vec((0..nv).map(|v| Spill::Slot(SpillSlot::new(v))).collect()),
        num_slots: nv as u32,
    }
}
