//! Establishes loop-simplified form (`rewrite::loops`): every loop entered from outside gets a
//! preheader. The pass manager runs it before a loop pass when the form was not kept since it
//! last held. Keeps nothing when it adds a block.

use crate::analysis::{FuncAnalyses, Preserved};
use crate::ir::{Function, ModuleCx};

pub fn run(f: &mut Function, _cx: &ModuleCx, am: &mut FuncAnalyses) -> Preserved {
    if crate::rewrite::loops::ensure_preheaders(f, am) {
        Preserved::none().union(Preserved::LOOP_SIMPLIFIED)
    } else {
        Preserved::all()
    }
}
