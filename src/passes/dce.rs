//! Dead code elimination: `rewrite::dead` (mark and sweep from the instructions with effects,
//! aggressive over block parameters) on the whole function.
//! Needs: CFG. Keeps the CFG and everything computed from it. Cost: O(instructions + uses).

use crate::analysis::{FuncAnalyses, Preserved};
use crate::ir::{Function, ModuleCx};

pub fn run(f: &mut Function, cx: &ModuleCx, am: &mut FuncAnalyses) -> Preserved {
    let cfg = am.cfg(f);
    // Only instructions and block parameters go: every branch keeps its targets.
    Preserved::cfg_kept(crate::rewrite::dead::remove_dead(f, cx, cfg))
}
