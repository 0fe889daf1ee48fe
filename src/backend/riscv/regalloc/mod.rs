//! Register allocation: linear scan over live intervals, a spill-everything baseline, and an
//! independent checker.

pub mod checker;
pub mod linear_scan;
pub mod simple;
pub mod split;

use super::minst::{Reg, VReg};
use crate::ir::IdVec;

/// Which allocator `compile_module` runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Allocator {
    /// Linear scan over live intervals (`linear_scan`).
    #[default]
    LinearScan,
    /// Every virtual register in its own stack slot (`simple`): the baseline.
    Simple,
}

impl std::str::FromStr for Allocator {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "linear-scan" | "linear_scan" | "linear" => Ok(Allocator::LinearScan),
            "simple" => Ok(Allocator::Simple),
            _ => Err(format!(
                "unknown register allocator `{s}` (try linear-scan or simple)"
            )),
        }
    }
}

impl Allocator {
    pub fn name(self) -> &'static str {
        match self {
            Allocator::LinearScan => "linear-scan",
            Allocator::Simple => "simple",
        }
    }
}

/// Where each virtual register lives.
#[derive(Clone, Debug, Default)]
pub struct Allocation {
    /// Physical register per virtual register (`Reg::NONE` if spilled or unused).
    pub reg: IdVec<VReg, Reg>,
    /// How each virtual register is kept without a register, if it is.
    pub spill: IdVec<VReg, Spill>,
    /// Slots of the frame's spill area in use (`SpillSlot`s `0..num_slots`).
    pub num_slots: u32,
}

/// How a virtual register without a register of its own is kept.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum Spill {
    /// Not spilled: it has a register (`Allocation::reg`), or it is never used.
    #[default]
    No,
    /// Stored to a stack slot where it is written, loaded from it where it is read.
    Slot(SpillSlot),
    /// Recomputed at each use from its constant definition (`MFunc::remat`): no slot.
    Remat,
}

/// An 8-byte slot of the frame's spill area, numbered from 0.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct SpillSlot(u32);

impl SpillSlot {
    pub fn new(index: usize) -> SpillSlot {
        SpillSlot(u32::try_from(index).expect("spill slots fit in u32"))
    }

    /// Its number in the spill area (the offset from the area's base, in 8-byte units).
    pub fn index(self) -> u32 {
        self.0
    }
}

impl Allocation {
    /// Whether `r` (virtual) is spilled: in a stack slot or rematerialized.
    pub fn is_spilled(&self, r: Reg) -> bool {
        self.spill[r.as_vreg()] != Spill::No
    }

    /// The stack slot `r` (virtual) is kept in, if it is.
    pub fn slot(&self, r: Reg) -> Option<SpillSlot> {
        match self.spill[r.as_vreg()] {
            Spill::Slot(s) => Some(s),
            Spill::No | Spill::Remat => None,
        }
    }

    /// Whether any virtual register is spilled (in a slot or rematerialized).
    pub fn any_spilled(&self) -> bool {
        self.spill.values().any(|&s| s != Spill::No)
    }

    /// Whether any virtual register is kept in a stack slot (reloaded, not recomputed).
    pub fn any_in_slot(&self) -> bool {
        self.spill.values().any(|s| matches!(s, Spill::Slot(_)))
    }
}

/// A function of one block holding `insts`, with `nv` integer virtual registers: the shape the
/// allocator's unit tests start from.
#[cfg(test)]
pub(crate) fn one_block(insts: Vec<super::minst::MInst>, nv: usize) -> super::minst::MFunc {
    use super::minst::{MBlock, MBlockData, MFunc, RegClass};
    let end = insts.len() as u32;
    MFunc {
        sym: "f".into(),
        label: "f".into(),
        insts,
        blocks: IdVec::from_vec(vec![MBlockData {
            start: 0,
            end,
            succs: vec![],
            depth: 0,
        }]),
        order: vec![MBlock::new(0)],
        vclass: IdVec::filled(nv, RegClass::Int),
        remat: IdVec::filled(nv, None),
        ..Default::default()
    }
}

/// A function of the given blocks, in order: each its instructions, successors and loop
/// depth, with `nv` integer virtual registers.
#[cfg(test)]
pub(crate) fn blocks(
    code: Vec<(Vec<super::minst::MInst>, Vec<u32>, u32)>,
    nv: usize,
) -> super::minst::MFunc {
    use super::minst::{MBlock, MBlockData};
    let mut mf = one_block(Vec::new(), nv);
    mf.blocks.clear();
    mf.order.clear();
    for (insts, succs, depth) in code {
        let start = mf.insts.len() as u32;
        mf.insts.extend(insts);
        let b = mf.blocks.push(MBlockData {
            start,
            end: mf.insts.len() as u32,
            succs: succs.into_iter().map(|s| MBlock::new(s as usize)).collect(),
            depth,
        });
        mf.order.push(b);
    }
    mf
}
