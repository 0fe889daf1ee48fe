//! Pointer induction variables stepped after their use.
//!
//! A header parameter `p` whose only use is its own step `x = offset p, c`, with `x` passed back
//! on the latch edge, makes every access through `x` wait for the addition at the top of the
//! iteration: `x` is computed anyway (it is the next pointer), so the accesses read it rather
//! than `c(p)` (which would keep `p` live beside `x`), and each iteration computes the address
//! before it can load (one cycle on an in-order core; more with a step too wide for an
//! immediate, which takes two instructions). The parameter is
//! rebased to hold `x` itself: it starts at `offset init, c` in the preheader, the uses of `x`
//! read the parameter, and the latch steps it (`offset p, c`) after the body. Same values,
//! same instruction count in the loop, one more in the preheader; the accesses issue at the
//! top of the iteration.
//!
//! Needs: loop-simplified form, CFG, dominator tree, loop forest. Keeps the CFG. Cost: O(loop
//! sizes).

use crate::analysis::loop_shape::LoopInfo;
use crate::analysis::{FuncAnalyses, Preserved};
use crate::ir::{mk, Function, ModuleCx, Opcode, Type};

/// Whether `c` fits the 12-bit immediate of a load or store.
fn fits12(c: i64) -> bool {
    (-2048..2048).contains(&c)
}

pub fn run(f: &mut Function, _cx: &ModuleCx, am: &mut FuncAnalyses) -> Preserved {
    let mut changed = false;
    let info = LoopInfo::new(am, f);
    for sl in info.simple_loops() {
        let (l, h, pre, latch) = (sl.id, sl.header, sl.pre, sl.latch);
        if !info.entered_only_by(&sl) {
            continue;
        }
        let (Some(lt), Some(pre_t)) = (f.terminator(latch), f.terminator(pre)) else {
            continue;
        };
        if f.op(pre_t) != Opcode::Jump {
            continue;
        }
        let back = f.edges_to(lt, h);
        let [back] = back[..] else { continue };
        let params = f.blocks.params[h].clone();
        for (n, &p) in params.iter().enumerate() {
            if f.ty(p) != Type::Ptr || f.num_uses(p) != 1 {
                continue;
            }
            let u = f.uses_of(p).next().unwrap();
            let step = f.uses().user[u];
            if f.op(step) != Opcode::Offset {
                continue;
            }
            let x = f.res(step);
            if f.branch_args(lt, back)[n] != x || !info.defined_in(f, l, x) {
                continue;
            }
            // Only worth it when something besides the latch edge reads `x`; with a step an
            // access can fold (`c(p)`), only for a load in the latch beside the step, which would
            // issue right behind the addition and wait for it (the step stays in its block).
            if f.num_uses(x) < 2 {
                continue;
            }
            let c = f.data(step).imm;
            let step_block = f.layout().inst_block(step);
            let load_behind = f.uses_of(x).any(|u| {
                let user = f.uses().user[u];
                f.op(user) == Opcode::Load && f.layout().inst_block(user) == step_block
            });
            if fits12(c) && (!load_behind || step_block != Some(latch)) {
                continue;
            }
            let init = f.args(pre_t)[n];
            let i0 = f.insert_new_before(pre_t, mk::offset(c), &[init]);
            let x0 = f.res(i0);
            let mut args = f.args(pre_t).to_vec();
            args[n] = x0;
            f.set_branch_target(pre_t, 0, h, &args);
            f.replace_all_uses(x, p);
            f.remove_inst(step);
            let i_n = f.insert_new_before(lt, mk::offset(c), &[p]);
            let xn = f.res(i_n);
            let mut bargs = f.branch_args(lt, back).to_vec();
            bargs[n] = xn;
            f.set_branch_target(lt, back, h, &bargs);
            changed = true;
        }
    }
    Preserved::cfg_kept(changed)
}
