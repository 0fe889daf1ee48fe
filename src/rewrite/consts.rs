//! Rewriting a function by what `analysis::constants` proved of it.

use crate::analysis::constants::{Cell, Constants};
use crate::ir::{Block, Function, Inst, Opcode, ValueDef};

/// Replaces every value `consts` (solved for `f` as it is) proves constant: an instruction's
/// result is rewritten in place into the constant, a block parameter (the entry block's
/// included) by a constant at the top of its block. Calls stay (their effects still happen);
/// branches on the constants are left for the caller to fold. Returns whether anything changed.
pub fn apply_constants(f: &mut Function, consts: &Constants) -> bool {
    let mut changed = false;
    let cfg_blocks: Vec<Block> = f.layout().blocks().collect();
    // One buffer for every block's instructions: the rewrite edits the layout.
    let mut insts: Vec<Inst> = Vec::new();
    for b in cfg_blocks {
        // Constant block parameters become constants at the top of the block.
        let params = f.blocks.params[b].to_vec();
        for p in params {
            if let Cell::Const(c) = consts.cell(p) {
                if !f.has_uses(p) {
                    continue;
                }
                let first = f.layout().first_inst(b).unwrap();
                let k = f.insert_new_before(first, c.to_inst(), &[]);
                let v = f.res(k);
                f.replace_all_uses(p, v);
                changed = true;
            }
        }
        insts.clear();
        insts.extend(f.layout().block_insts(b));
        for &i in &insts {
            let Some(r) = f.result(i) else { continue };
            let Cell::Const(c) = consts.cell(r) else {
                continue;
            };
            let op = f.op(i);
            if op == Opcode::Iconst || op == Opcode::Fconst || op == Opcode::Call {
                continue;
            }
            if matches!(f.value_def(r), ValueDef::Result(_)) && f.data(i).ty == c.to_inst().ty {
                f.replace_inst(i, c.to_inst(), &[]);
                changed = true;
            }
        }
    }
    changed
}
