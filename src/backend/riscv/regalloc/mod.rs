//! Register allocation: linear scan over live intervals, a spill-everything baseline, and an
//! independent checker.

pub mod checker;
pub mod linear_scan;
pub mod simple;
pub mod split;

use super::minst::Reg;

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
    pub reg: Vec<Reg>,
    /// Spill slot per virtual register (`u32::MAX` if in a register, `REMAT` if spilled and
    /// recomputed at each use, which needs no slot).
    pub slot: Vec<u32>,
    pub num_slots: u32,
}

/// The `slot` of a spilled register that is rematerialized instead of reloaded.
pub const REMAT: u32 = u32::MAX - 1;

impl Allocation {
    /// Whether `r` (virtual) lives in a stack slot.
    pub fn is_spilled(&self, r: Reg) -> bool {
        self.slot[r.vindex()] != u32::MAX
    }
}

/// A function of one block holding `insts`, with `nv` integer virtual registers: the shape the
/// allocator's unit tests start from.
#[cfg(test)]
pub(crate) fn one_block(insts: Vec<super::minst::MInst>, nv: usize) -> super::minst::MFunc {
    use super::minst::{MBlock, MFunc, RegClass};
    let end = insts.len() as u32;
    MFunc {
        sym: "f".into(),
        label: "f".into(),
        insts,
        blocks: vec![MBlock {
            start: 0,
            end,
            succs: vec![],
            depth: 0,
        }],
        order: vec![0],
        vclass: vec![RegClass::Int; nv],
        remat: vec![None; nv],
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
    use super::minst::MBlock;
    let mut mf = one_block(Vec::new(), nv);
    mf.blocks.clear();
    mf.order.clear();
    for (b, (insts, succs, depth)) in code.into_iter().enumerate() {
        let start = mf.insts.len() as u32;
        mf.insts.extend(insts);
        mf.blocks.push(MBlock {
            start,
            end: mf.insts.len() as u32,
            succs,
            depth,
        });
        mf.order.push(b as u32);
    }
    mf
}
