//! Local copy propagation on machine IR, before register allocation.
//!
//! Tail duplication (`layout`) copies a loop test into the block that jumps to it, so a block
//! often ends `x := y; blt x, n, ...` where `x` is the test block's parameter and dies at the
//! test while `y` lives on. `x` and `y` then interfere (both live at the branch), no hint can
//! coalesce them, and the copy costs an instruction per iteration. When `x := y` (virtual
//! registers of one class) is followed in its block by no other write of `x` or `y`, and `x`
//! is not live out of the block, the block's later reads of `x` read `y` and the copy goes.
//! Needs: intervals (for live-out). Cost: O(instructions).

use super::liveness::Intervals;
use super::minst::*;

/// Propagates copies; `false` if nothing changed.
pub fn run(mf: &mut MFunc, iv: &Intervals) -> bool {
    let mut dead = vec![false; mf.insts.len()];
    let mut any = false;
    for &b in &mf.order {
        let blk = &mf.blocks[b];
        let (s, e) = (blk.start as usize, blk.end as usize);
        #[allow(clippy::needless_range_loop)] // the body rewrites `mf.insts[k..]`
        for k in s..e {
            let mi = mf.insts[k];
            let (x, y) = (mi.rd, mi.rs1);
            if !(mi.op.is_move()
                && x.is_virt()
                && y.is_virt()
                && x != y
                && mf.vclass[x.as_vreg()] == mf.vclass[y.as_vreg()])
            {
                continue;
            }
            if iv.covers(x.vindex(), 2 * blk.end - 1) {
                continue; // live out
            }
            if mf.insts[k + 1..e].iter().any(|m| m.rd == x || m.rd == y) {
                continue;
            }
            for m in &mut mf.insts[k + 1..e] {
                if m.rs1 == x {
                    m.rs1 = y;
                }
                if m.rs2 == x {
                    m.rs2 = y;
                }
            }
            dead[k] = true;
            any = true;
        }
    }
    if !any {
        return false;
    }
    let mut insts = Vec::with_capacity(mf.insts.len());
    for &b in &mf.order {
        let blk = &mut mf.blocks[b];
        let start = insts.len() as u32;
        let range = blk.start as usize..blk.end as usize;
        for (mi, _) in mf.insts[range.clone()]
            .iter()
            .zip(&dead[range])
            .filter(|(_, &d)| !d)
        {
            insts.push(*mi);
        }
        blk.start = start;
        blk.end = insts.len() as u32;
    }
    mf.insts = insts;
    true
}
