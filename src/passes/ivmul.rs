//! Strength reduction of multiplications of induction variables.
//!
//! In a loop with a preheader and one latch, a header parameter `i` that the latch steps by a
//! constant (`i_next = i + c`) is an induction variable. Each `i * k` in the loop, with `k` a
//! constant that is not a power of two (those are shifts, as cheap as an add) or a value defined
//! outside the loop, becomes a new header parameter `m`: `m` starts at `i0 * k` in the
//! preheader and the latch adds `c * k`, so the loop does one add instead of a multiply (3
//! cycles of latency on the U74's one multiplier pipe). `i_next * k` is `m + c * k`, computed
//! right after `i_next`. Exact in wrapping arithmetic: `(i + c) * k = i * k + c * k` modulo
//! 2^n, so no range condition is needed. Multiplications sharing `(i, k)` share one `m`.
//! Addresses (`gep`) are `lsr`'s.
//!
//! Needs: CFG, dominator tree, loop forest (from the analysis manager); loops without a
//! preheader are left alone. Keeps the CFG (it adds instructions and block parameters only).
//! Cost: O(loop sizes + uses of the header parameters).

use crate::analysis::{Cfg, FuncAnalyses, Loop, LoopForest, Preserved};
use crate::ir::{mk, Block, Function, Inst, ModuleCx, Opcode, Type, Value};

pub fn run(f: &mut Function, _cx: &ModuleCx, am: &mut FuncAnalyses) -> Preserved {
    let (cfg, _, loops) = am.all(f);
    let mut changed = false;
    for l in loops.loops.keys() {
        changed |= reduce_loop(f, cfg, loops, l);
    }
    // Block parameters are not blocks or edges: the block graph stays.
    Preserved::cfg_kept(changed)
}

/// A multiplication to replace: `inst` computes `x * k` where `x` is the counter (`next`
/// false) or its stepped value (`next` true).
struct Site {
    inst: Inst,
    k: Value,
    next: bool,
}

fn reduce_loop(f: &mut Function, cfg: &Cfg, loops: &LoopForest, l: Loop) -> bool {
    let data = &loops.loops[l];
    let h = data.header;
    let [latch] = data.latches[..] else {
        return false;
    };
    let Some(pre) = loops.preheader(l, cfg) else {
        return false;
    };
    let (Some(pre_t), Some(latch_t)) = (f.terminator(pre), f.terminator(latch)) else {
        return false;
    };
    if f.op(pre_t) != Opcode::Jump || cfg.preds[h].len() != 2 {
        return false;
    }
    let back = f.edges_to(latch_t, h);
    let [back] = back[..] else { return false };
    let inside = |f: &Function, v: Value| f.def_block(v).is_some_and(|b| loops.contains(l, b));
    let mut changed = false;
    let params = f.blocks.params[h].to_vec();
    for (n, &p) in params.iter().enumerate() {
        let ty = f.ty(p);
        if !matches!(ty, Type::I32 | Type::I64) {
            continue;
        }
        let next = f.branch_args(latch_t, back)[n];
        let Some(step) = step_of(f, p, next) else {
            continue;
        };
        let mut sites: Vec<Site> = Vec::new();
        for (x, is_next) in [(p, false), (next, true)] {
            for u in f.uses_of(x) {
                let user = f.uses().user[u];
                if f.op(user) != Opcode::Mul || f.data(user).ty != ty {
                    continue;
                }
                let Some(ub) = f.layout().inst_block(user) else {
                    continue;
                };
                if !loops.contains(l, ub) {
                    continue;
                }
                let (a, b) = (f.arg(user, 0), f.arg(user, 1));
                let k = if a == x { b } else { a };
                if k == x || inside(f, k) {
                    continue;
                }
                if f.as_iconst(k)
                    .is_some_and(|c| c == 0 || (c as u64).is_power_of_two())
                {
                    continue;
                }
                sites.push(Site {
                    inst: user,
                    k,
                    next: is_next,
                });
            }
        }
        // One new counter per multiplier, constants compared by value.
        let mut done: Vec<(Option<i64>, Value, Value, Value)> = Vec::new(); // (const, k, m, m_next)
        for s in sites {
            if f.layout().inst_block(s.inst).is_none() {
                continue;
            }
            let kc = f.as_iconst(s.k);
            let found = done
                .iter()
                .find(|d| d.1 == s.k || (kc.is_some() && d.0 == kc))
                .map(|d| (d.2, d.3));
            let (m, m_next) = match found {
                Some(x) => x,
                None => {
                    let Some(x) = make_counter(f, pre_t, latch_t, back, h, p, next, s.k, step)
                    else {
                        continue;
                    };
                    done.push((kc, s.k, x.0, x.1));
                    x
                }
            };
            let r = f.res(s.inst);
            f.replace_all_uses(r, if s.next { m_next } else { m });
            f.remove_inst(s.inst);
            changed = true;
        }
    }
    changed
}

/// The constant `c` of `next = p + c` (either operand order).
fn step_of(f: &Function, p: Value, next: Value) -> Option<i64> {
    let i = f.def_inst(next)?;
    if f.op(i) != Opcode::Add {
        return None;
    }
    let (a, b) = (f.arg(i, 0), f.arg(i, 1));
    match (a == p, b == p) {
        (true, false) => f.as_iconst(b),
        (false, true) => f.as_iconst(a),
        _ => None,
    }
}

/// Makes the header parameter `m = p * k` and its stepped value `m_next = m + step * k`
/// (right after `next`'s definition), passing `i0 * k` from the preheader and `m_next` back.
#[allow(clippy::too_many_arguments)]
fn make_counter(
    f: &mut Function,
    pre_t: Inst,
    latch_t: Inst,
    back: usize,
    h: Block,
    p: Value,
    next: Value,
    k: Value,
    step: i64,
) -> Option<(Value, Value)> {
    let ty = f.ty(p);
    let n = f.blocks.params[h].iter().position(|&x| x == p)?;
    let next_def = f.def_inst(next)?;
    let i0 = f.branch_args(pre_t, 0)[n];
    let wrap = |v: i64| if ty == Type::I32 { v as i32 as i64 } else { v };
    // Preheader: m0 = i0 * k and the step c * k.
    let m0 = f.insert_new_before(pre_t, mk::binary(Opcode::Mul, ty), &[i0, k]);
    let m0 = f.res(m0);
    let inc = match f.as_iconst(k) {
        Some(kc) => {
            let c = f.insert_new_before(pre_t, mk::iconst(ty, wrap(kc.wrapping_mul(step))), &[]);
            f.res(c)
        }
        None => {
            let c = f.insert_new_before(pre_t, mk::iconst(ty, wrap(step)), &[]);
            let c = f.res(c);
            let s = f.insert_new_before(pre_t, mk::binary(Opcode::Mul, ty), &[k, c]);
            f.res(s)
        }
    };
    let m = f.append_block_param(h, ty);
    let m_next = f.make_inst(mk::binary(Opcode::Add, ty), &[m, inc]);
    f.insert_inst_after(m_next, next_def);
    let m_next = f.res(m_next);
    f.push_branch_arg(pre_t, m0, |b| b == h);
    let targets: Vec<(Block, Vec<Value>)> = f
        .branch_targets(latch_t)
        .iter()
        .map(|c| (c.block, c.args.to_vec()))
        .collect();
    let mut args = targets[back].1.clone();
    args.push(m_next);
    f.set_branch_target(latch_t, back, h, &args);
    Some((m, m_next))
}
