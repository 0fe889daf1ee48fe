//! Sparse conditional constant propagation: the values `analysis::constants` proves constant
//! (with nothing known of the parameters) are rewritten into constants (`rewrite::consts`);
//! branches on constants are left for `simplify_cfg` (their condition is now an `iconst`).
//! Cost: O(instructions + uses).

use crate::analysis::constants::{Cell, Constants};
use crate::analysis::{FuncAnalyses, Preserved};
use crate::ir::{Function, ModuleCx};
use crate::rewrite::consts::apply_constants;

pub fn run(f: &mut Function, _cx: &ModuleCx, _am: &mut FuncAnalyses) -> Preserved {
    let consts = Constants::solve(f, &vec![Cell::Bottom; f.params().len()]);
    let changed = apply_constants(f, &consts);
    Preserved::cfg_kept(changed)
}
