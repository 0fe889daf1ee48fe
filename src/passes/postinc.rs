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
//! `run_late` rebases a pointer that is also read as `p` after its step (`a[j]` and `a[j+1]`
//! swapped in a branch after `x` is computed): `p` and `x` are then live at once and the latch
//! edge needs a copy `p := x`. Rebased, the reads of `p` become `-c(p)`, folded into their
//! accesses, and one register stepped at the latch holds the pointer.
//!
//! Needs: loop-simplified form, CFG, dominator tree, loop forest. Keeps the CFG. Cost: O(loop
//! sizes).

use crate::analysis::loop_shape::LoopInfo;
use crate::analysis::{DomTree, FuncAnalyses, Preserved};
use crate::ir::{mk, Block, Function, Inst, ModuleCx, Opcode, Type, Use, Value};

/// Whether `c` fits the 12-bit immediate of a load or store.
fn fits12(c: i64) -> bool {
    (-2048..2048).contains(&c)
}

/// Whether `p`, besides its step, is read only as the address of loads and stores (or moved by
/// small offsets), `-c(p)` folds into each of them, and one of them comes after the step (in
/// its block or in one it dominates): `p` and the next pointer are then live at once and the
/// latch edge needs a copy, where one register stepped at the latch would do.
fn accessed_past_step(f: &Function, dt: &DomTree, p: Value, step: Inst, others: &[Use]) -> bool {
    let c = f.data(step).imm;
    if !fits12(c) || !fits12(-c) {
        return false;
    }
    let address_only = others.iter().all(|&u| {
        let user = f.uses().user[u];
        let a = f.args(user);
        match f.op(user) {
            Opcode::Load => true,
            Opcode::Store => a[0] != p,
            Opcode::Offset => fits12(f.data(user).imm.wrapping_sub(c)),
            _ => false,
        }
    });
    if !address_only {
        return false;
    }
    let Some(step_block) = f.layout().inst_block(step) else {
        return false;
    };
    let mut after_step = Vec::new();
    let mut i = f.layout().next_inst(step);
    while let Some(k) = i {
        after_step.push(k);
        i = f.layout().next_inst(k);
    }
    others.iter().any(|&u| {
        let user = f.uses().user[u];
        match f.layout().inst_block(user) {
            Some(b) if b == step_block => after_step.contains(&user),
            Some(b) => dt.dominates(step_block, b),
            None => false,
        }
    })
}

/// The latch's exit test when it compares `p` with a pointer `invariant` accepts, read by
/// nothing but the branch: the comparison and the operand index of `p`.
fn exit_test_on(
    f: &Function,
    lt: Inst,
    latch: Block,
    p: Value,
    invariant: impl Fn(&Function, Value) -> bool,
) -> Option<(Inst, usize)> {
    if f.op(lt) != Opcode::Brif {
        return None;
    }
    let cond = f.args(lt)[0];
    let t = f.def_inst(cond)?;
    if f.op(t) != Opcode::Icmp || f.layout().inst_block(t) != Some(latch) || f.num_uses(cond) != 1 {
        return None;
    }
    let a = f.args(t);
    let k = a.iter().position(|&v| v == p)?;
    let other = a[1 - k];
    (other != p && f.ty(other) == Type::Ptr && invariant(f, other)).then_some((t, k))
}

/// Pointers read only through their step (before unrolling, which copies the rebased form).
pub fn run(f: &mut Function, _cx: &ModuleCx, am: &mut FuncAnalyses) -> Preserved {
    rebase(f, am, false)
}

/// Pointers also read after their step. Late: unrolling has made its copies (its shapes are
/// the plain ones), and the value numbering that ran since could not have merged the two
/// offsets back (they differ: `-c` in the header, `c` at the latch).
pub fn run_late(f: &mut Function, _cx: &ModuleCx, am: &mut FuncAnalyses) -> Preserved {
    rebase(f, am, true)
}

fn rebase(f: &mut Function, am: &mut FuncAnalyses, read_after_step: bool) -> Preserved {
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
        let params = f.blocks.params[h].to_vec();
        for (n, &p) in params.iter().enumerate() {
            if f.ty(p) != Type::Ptr {
                continue;
            }
            let next = f.branch_args(lt, back)[n];
            let Some(step) = f.uses_of(p).map(|u| f.uses().user[u]).find(|&i| {
                f.op(i) == Opcode::Offset && f.res(i) == next && info.defined_in(f, l, next)
            }) else {
                continue;
            };
            let x = f.res(step);
            let c = f.data(step).imm;
            let step_block = f.layout().inst_block(step);
            let others: Vec<Use> = f.uses_of(p).filter(|&u| f.uses().user[u] != step).collect();
            if others.is_empty() == read_after_step {
                continue;
            }
            if others.is_empty() {
                // Only worth it when something besides the latch edge reads `x`; with a step an
                // access can fold (`c(p)`), only for a load in the latch beside the step, which
                // would issue right behind the addition and wait for it (the step stays in its
                // block).
                if f.num_uses(x) < 2 {
                    continue;
                }
                let load_behind = f.uses_of(x).any(|u| {
                    let user = f.uses().user[u];
                    f.op(user) == Opcode::Load && f.layout().inst_block(user) == step_block
                });
                if fits12(c) && (!load_behind || step_block != Some(latch)) {
                    continue;
                }
            } else if !accessed_past_step(f, info.dt, p, step, &others) {
                continue;
            }
            let init = f.args(pre_t)[n];
            let i0 = f.insert_new_before(pre_t, mk::offset(c), &[init]);
            let x0 = f.res(i0);
            let mut args = f.args(pre_t).to_vec();
            args[n] = x0;
            f.set_branch_target(pre_t, 0, h, &args);
            if !others.is_empty() {
                // The accesses through the old pointer read `-c(p)`: one offset at the top of
                // the header, folded into each of them.
                let first = f.layout().first_inst(h).expect("a header ends in a branch");
                let iy = f.insert_new_before(first, mk::offset(-c), &[p]);
                let y = f.res(iy);
                for &u in &others {
                    f.set_use(u, y);
                }
            }
            f.replace_all_uses(x, p);
            f.remove_inst(step);
            // The exit test read `x`, now `p`: compared as `offset p, c` against the bound moved
            // by `c` (addresses do not wrap), `p` dies at its step and the step's register is
            // the parameter's on the latch edge.
            let test = exit_test_on(f, lt, latch, p, |f: &Function, v| !info.defined_in(f, l, v));
            let i_n = f.insert_new_before(test.map_or(lt, |(t, _)| t), mk::offset(c), &[p]);
            let xn = f.res(i_n);
            if let Some((t, k)) = test {
                let bound = f.args(t)[1 - k];
                let ib = f.insert_new_before(pre_t, mk::offset(c), &[bound]);
                let moved = f.res(ib);
                f.set_arg(t, k, xn);
                f.set_arg(t, 1 - k, moved);
            }
            let mut bargs = f.branch_args(lt, back).to_vec();
            bargs[n] = xn;
            f.set_branch_target(lt, back, h, &bargs);
            changed = true;
        }
    }
    Preserved::cfg_kept(changed)
}
