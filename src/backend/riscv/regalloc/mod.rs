//! Register allocation: linear scan over live intervals, and an independent checker.

pub mod checker;
pub mod linear_scan;

use super::minst::Reg;

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
