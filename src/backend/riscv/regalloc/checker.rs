//! Register-allocation checker (placeholder until the symbolic checker lands).

use super::super::minst::MFunc;
use super::Allocation;

pub fn check(_mf: &MFunc, _alloc: &Allocation) -> Result<(), String> {
    Ok(())
}
