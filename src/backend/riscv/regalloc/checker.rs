//! Register-allocation checker: an independent proof that the allocation preserves meaning.
//!
//! Like regalloc2's checker, it executes the allocated function symbolically. The abstract
//! state maps every location (allocatable physical register, spill slot) to the virtual
//! register whose current value it holds, or to nothing. Transfer per instruction:
//! - each virtual register read must find its own location (register or slot) holding it;
//! - writing virtual `v` makes its location hold `v`;
//! - writing a physical register (argument setup, call clobbers) makes it hold nothing.
//!
//! Block entry states are the meet (agreement) of the states at the branches that reach the
//! block (a branch in mid-block passes the state at that point), computed to a fixed point; then every read is checked. It relies only on `MFunc` and the
//! `Allocation`, not on liveness or the allocator's data, so it catches errors in either.
//! Cost: O(iterations * instructions + blocks * locations).

use super::super::minst::*;
use super::{Allocation, Spill};
use crate::ir::IdVec;

const NOTHING: u32 = u32::MAX - 1;
const TOP: u32 = u32::MAX;

struct Ck<'a> {
    mf: &'a MFunc,
    alloc: &'a Allocation,
}

impl Ck<'_> {
    /// The location of `r`; `None` for a rematerialized value (recomputed at each use from
    /// its constant definition, so it cannot be clobbered).
    fn loc(&self, r: Reg) -> Option<usize> {
        let v = r.as_vreg();
        Some(match self.alloc.spill[v] {
            Spill::Remat => {
                assert!(
                    self.mf.remat[v].is_some(),
                    "%{v} marked rematerializable without a definition"
                );
                return None;
            }
            Spill::Slot(s) => 64 + s.index() as usize,
            Spill::No => {
                let p = self.alloc.reg[v];
                assert!(p.is_some(), "%{v} has neither a register nor a slot");
                p.0 as usize
            }
        })
    }

    /// Applies block `b` to `st`; with `check`, reports the first bad read. Each branch hands
    /// the state at that point to `edge(target, state)`.
    fn block(
        &self,
        b: MBlock,
        st: &mut [u32],
        check: bool,
        mut edge: impl FnMut(MBlock, &[u32]),
    ) -> Result<(), String> {
        let blk = &self.mf.blocks[b];
        for k in blk.start..blk.end {
            let mi = &self.mf.insts[k as usize];
            if check {
                for r in mi.uses() {
                    if r.is_virt() {
                        let Some(l) = self.loc(r) else { continue };
                        if st[l] != r.vindex() as u32 {
                            let held = match st[l] {
                                NOTHING | TOP => "nothing".to_string(),
                                v => format!("%{v}"),
                            };
                            return Err(format!(
                                "instruction {k} ({:?}) in block {b} reads {r:?} from {} which holds {held}",
                                mi.op,
                                if l < 64 { Reg(l as u32).name().to_string() } else { format!("slot {}", l - 64) }
                            ));
                        }
                    }
                }
            }
            if mi.op.is_branch() || mi.op == MOp::J {
                edge(MBlock::target_of(mi), st);
            }
            self.mf.for_each_def(mi, |r| {
                if r.is_virt() {
                    if let Some(l) = self.loc(r) {
                        st[l] = r.vindex() as u32;
                    }
                } else if r.is_phys() {
                    st[r.0 as usize] = NOTHING;
                }
            });
        }
        Ok(())
    }
}

/// Checks `alloc` against `mf`; `Err` describes the first read of a wrong value.
pub fn check(mf: &MFunc, alloc: &Allocation) -> Result<(), String> {
    let ck = Ck { mf, alloc };
    let nl = 64 + alloc.num_slots as usize;
    let nb = mf.blocks.len();
    let mut entry: IdVec<MBlock, Vec<u32>> = IdVec::filled(nb, vec![TOP; nl]);
    let Some(&first) = mf.order.first() else {
        return Ok(());
    };
    entry[first] = vec![NOTHING; nl];
    let mut changed = true;
    let mut st = vec![0; nl];
    while changed {
        changed = false;
        for &b in &mf.order {
            if entry[b][0] == TOP {
                continue; // not reached yet
            }
            st.copy_from_slice(&entry[b]);
            ck.block(b, &mut st, false, |s, st| {
                let e = &mut entry[s];
                for (x, &y) in e.iter_mut().zip(st) {
                    let m = if *x == TOP || *x == y { y } else { NOTHING };
                    if m != *x {
                        *x = m;
                        changed = true;
                    }
                }
            })?;
        }
    }
    for &b in &mf.order {
        if entry[b][0] == TOP {
            continue;
        }
        st.copy_from_slice(&entry[b]);
        ck.block(b, &mut st, true, |_, _| {})?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catches_a_shared_register() {
        // %0 = li 1; %1 = li 2; %2 = add %0, %1 with %0 and %1 both in t3.
        let mut mf = MFunc::default();
        let a = mf.new_vreg(RegClass::Int);
        let b = mf.new_vreg(RegClass::Int);
        let c = mf.new_vreg(RegClass::Int);
        mf.insts = vec![
            MInst::li(a, 1),
            MInst::li(b, 2),
            MInst::r(MOp::Add, c, a, b),
        ];
        mf.blocks = IdVec::from_vec(vec![MBlockData {
            start: 0,
            end: 3,
            succs: vec![],
            depth: 0,
        }]);
        mf.order = vec![MBlock::new(0)];
        let t3 = Reg(28);
        let mut alloc = Allocation {
            reg: IdVec::from_vec(vec![t3, t3, t3]),
            spill: IdVec::filled(3, Spill::No),
            num_slots: 0,
        };
        let e = check(&mf, &alloc).unwrap_err();
        assert!(e.contains("reads %0 from t3 which holds %1"), "{e}");
        alloc.reg[VReg::new(1)] = Reg(29);
        check(&mf, &alloc).unwrap();
        // A spilled value shares a slot with a later one: fine; clobbered by a call: not.
        alloc.reg[VReg::new(1)] = Reg::NONE;
        alloc.spill[VReg::new(1)] = Spill::Slot(super::super::SpillSlot::new(0));
        alloc.num_slots = 1;
        check(&mf, &alloc).unwrap();
    }
}
