//! Promotion of scalar allocas to SSA values (`rewrite::ssa`). Keeps the CFG.

use crate::analysis::{FuncAnalyses, Preserved};
use crate::ir::{Function, ModuleCx};

pub fn run(f: &mut Function, _cx: &ModuleCx, am: &mut FuncAnalyses) -> Preserved {
    Preserved::cfg_kept(crate::rewrite::ssa::promote_allocas(f, am))
}
