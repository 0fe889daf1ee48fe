//! Linear-function test replacement: a loop's exit test moves from its counter to a pointer
//! induction variable, so the counter dies.
//!
//! After strength reduction a loop often keeps a counter only for its exit test:
//! `i_next = i + s; brif (i_next < n), ...` beside a pointer `q_next = offset q, c` that does
//! the real work. When `c` is a multiple of `s` (`r = c / s` bytes per unit of the counter),
//! `q_next = q0 + (i_next - i0) * r` on every iteration, so the test is equivalent to
//! `q_next < q0 + (n - i0) * r` (the condition swapped when `r < 0`). The bound is computed
//! once in the preheader, with 64-bit address arithmetic (`gep (gep q0, n, r), i0, -r`), and
//! dce removes the counter.
//!
//! Conditions: one latch whose branch is the exit test, a preheader, and the counter used by
//! nothing but its increment and the test (not after the loop either). The counter's 32-bit
//! arithmetic must be exact: it is when the step is ±1 and the test strict (`<` going up, `>`
//! going down: the counter stops at the bound), and otherwise when a load or store dereferences
//! the pointer on every iteration (in a block dominating the latch), since a counter that
//! wrapped would need more than 2^31 iterations and the pointer would walk more than 2^31
//! bytes, out of any object. Pointers compare as signed 64-bit integers, like the `slt` of the
//! backend.
//! Needs: loop-simplified form, CFG, dominator tree, loop forest. Cost: O(loop sizes).

use crate::analysis::loop_shape::{latch_counter, LatchCounter, LoopInfo};
use crate::analysis::DomTree;
use crate::analysis::{FuncAnalyses, Preserved};
use crate::ir::{mk, Block, CmpCond, Function, Inst, ModuleCx, Opcode, Type, Value};

pub fn run(f: &mut Function, _cx: &ModuleCx, am: &mut FuncAnalyses) -> Preserved {
    let mut changed = false;
    let info = LoopInfo::new(am, f);
    for sl in info.simple_loops() {
        let inside = |f: &Function, v: Value| info.defined_in(f, sl.id, v);
        let blocks = &info.forest.loops[sl.id].blocks;
        changed |= replace_test(f, info.dt, sl.header, sl.pre, sl.latch, blocks, &inside).is_some();
    }
    Preserved::cfg_kept(changed)
}

/// A pointer induction variable usable for the test.
struct PtrIv {
    /// Index among the header parameters.
    n: usize,
    /// Bytes per unit of the counter.
    r: i64,
}

fn replace_test(
    f: &mut Function,
    dt: &DomTree,
    h: Block,
    pre: Block,
    latch: Block,
    blocks: &[Block],
    inside: &dyn Fn(&Function, Value) -> bool,
) -> Option<()> {
    let LatchCounter {
        test,
        back,
        counter: i,
        index: ni,
        step: s,
    } = latch_counter(f, h, latch, inside)?;
    if f.num_uses(f.res(test.cmp)) != 1 {
        return None;
    }
    let lt = f.terminator(latch)?;
    let params = f.blocks.params[h].to_vec();
    let back_args = f.branch_args(lt, back).to_vec();
    // Nothing else may read the counter: `i` feeds only its increment, and `next` only the
    // test and the back edge.
    if f.num_uses(i) != 1 || f.num_uses(test.next) != 2 {
        return None;
    }
    if f.args(test.cmp).iter().filter(|&&v| v == test.next).count() != 1 {
        return None;
    }
    // A unit step with a strict test stops at the bound itself: the counter cannot wrap.
    let exact = matches!((s, test.cond), (1, CmpCond::Lt) | (-1, CmpCond::Gt));
    let q = pointer_iv(f, dt, latch, blocks, &params, &back_args, s, exact)?;
    let pre_t = f.terminator(pre)?;
    if f.op(pre_t) != Opcode::Jump {
        return None;
    }
    let init = f.args(pre_t).to_vec();
    let (i0, q0) = (init[ni], init[q.n]);
    // bound = q0 + (n - i0) * r, in 64-bit address arithmetic.
    let qb = match (f.as_iconst(test.bound), f.as_iconst(i0)) {
        (Some(n), Some(k)) => {
            let o = f.insert_new_before(pre_t, mk::offset((n - k).wrapping_mul(q.r)), &[q0]);
            f.res(o)
        }
        (_, Some(k)) => {
            let g = f.insert_new_before(pre_t, mk::gep(q.r), &[q0, test.bound]);
            let g = f.res(g);
            if k == 0 {
                g
            } else {
                let o = f.insert_new_before(
                    pre_t,
                    mk::offset(k.wrapping_mul(q.r).wrapping_neg()),
                    &[g],
                );
                f.res(o)
            }
        }
        _ => {
            let g = f.insert_new_before(pre_t, mk::gep(q.r), &[q0, test.bound]);
            let g = f.res(g);
            let o = f.insert_new_before(pre_t, mk::gep(q.r.wrapping_neg()), &[g, i0]);
            f.res(o)
        }
    };
    // The test in pointer form; the branch takes the back edge when its condition holds, so it
    // is inverted when the back edge is the else edge.
    let cond = if q.r > 0 { test.cond } else { test.cond.swap() };
    let cond = if back == 0 { cond } else { cond.invert() };
    let c = f.insert_new_before(lt, mk::icmp(cond), &[back_args[q.n], qb]);
    let c = f.res(c);
    f.set_arg(lt, 0, c);
    Some(())
}

/// The best pointer induction variable: `q_next = offset q, c` with `c` a multiple of the
/// counter's step `s`, dereferenced (directly or at a constant offset) in a block that runs on
/// every iteration. Smallest `|c / s|` first, powers of two preferred.
#[allow(clippy::too_many_arguments)] // the loop's parts, read once by the caller
fn pointer_iv(
    f: &Function,
    dt: &DomTree,
    latch: Block,
    blocks: &[Block],
    params: &[Value],
    back_args: &[Value],
    s: i64,
    exact: bool,
) -> Option<PtrIv> {
    let mut best: Option<PtrIv> = None;
    for (n, &q) in params.iter().enumerate() {
        if f.ty(q) != Type::Ptr {
            continue;
        }
        let Some(step) = f
            .def_inst(back_args[n])
            .filter(|&k| f.op(k) == Opcode::Offset && f.arg(k, 0) == q)
        else {
            continue;
        };
        let c = f.data(step).imm;
        if c % s != 0 || c == 0 || (c / s).unsigned_abs() > 1 << 20 {
            continue;
        }
        if !exact && !dereferenced_every_iteration(f, dt, latch, blocks, q) {
            continue;
        }
        let r = c / s;
        let better = |old: &PtrIv| {
            let key = |r: i64| (!r.unsigned_abs().is_power_of_two(), r.unsigned_abs());
            key(r) < key(old.r)
        };
        if best.as_ref().is_none_or(better) {
            best = Some(PtrIv { n, r });
        }
    }
    best
}

/// Whether a load or store in a block dominating the latch addresses `q` or `offset q, k`.
fn dereferenced_every_iteration(
    f: &Function,
    dt: &DomTree,
    latch: Block,
    blocks: &[Block],
    q: Value,
) -> bool {
    let is_q = |p: Value| {
        p == q
            || f.def_inst(p)
                .is_some_and(|d| f.op(d) == Opcode::Offset && f.arg(d, 0) == q)
    };
    let addr_of = |i: Inst| match f.op(i) {
        Opcode::Load => Some(f.arg(i, 0)),
        Opcode::Store => Some(f.arg(i, 1)),
        _ => None,
    };
    blocks
        .iter()
        .filter(|&&b| dt.dominates(b, latch))
        .any(|&b| {
            f.layout()
                .block_insts(b)
                .any(|i| addr_of(i).is_some_and(is_q))
        })
}
