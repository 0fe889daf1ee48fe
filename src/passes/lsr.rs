//! Loop strength reduction of address arithmetic.
//!
//! In a loop with a preheader and one latch, a header parameter `i` stepped by a constant
//! (`i_next = i + c`) is an induction variable. Every `gep base, i + k, stride` in the loop with
//! an invariant `base` becomes an offset from a pointer induction variable `p` (a new header
//! parameter): `p` starts at `gep base, i0, stride` in the preheader and steps by `c * stride`
//! at the latch, so the loop does no multiply or shift per access. Accesses sharing `(base,
//! stride, i)` share one pointer. Wrapping of `i` would make the original index jump back; such
//! a program already indexes out of bounds, so it is not preserved.
//! Needs: CFG, dominator tree, loop forest (computed here). Cost: O(loop sizes).

use super::licm::ensure_preheaders;
use crate::ir::analysis::{Cfg, DomTree, LoopForest};
use crate::ir::{mk, Function, Inst, ModuleCx, Opcode, Type, Value};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Scale {
    One,
    /// An invariant (non-constant) multiplier.
    Var(Value),
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct GroupKey {
    base: Value,
    stride: i64,
    iv: Value,
    scale: Scale,
    /// Invariant non-constant addend.
    add: Option<Value>,
}

/// An index `scale * iv + add + k`.
struct AffineIndex {
    iv: Value,
    scale: Scale,
    add: Option<Value>,
    k: i64,
}

/// Recognises `iv`, `iv * m` (m invariant) and either plus a constant or an invariant.
fn affine_index(
    f: &Function,
    v: Value,
    ivs: &[(Value, i64)],
    invariant: &dyn Fn(&Function, Value) -> bool,
) -> Option<AffineIndex> {
    let is_iv = |x: Value| ivs.iter().any(|&(p, _)| p == x);
    let scaled = |x: Value| -> Option<(Value, Scale)> {
        if is_iv(x) {
            return Some((x, Scale::One));
        }
        let i = f.def_inst(x)?;
        if f.op(i) != Opcode::Mul {
            return None;
        }
        let (a, b) = (f.arg(i, 0), f.arg(i, 1));
        let (iv, m) = if is_iv(a) {
            (a, b)
        } else if is_iv(b) {
            (b, a)
        } else {
            return None;
        };
        (invariant(f, m) && f.as_iconst(m).is_none()).then_some((iv, Scale::Var(m)))
    };
    if let Some((iv, scale)) = scaled(v) {
        return Some(AffineIndex {
            iv,
            scale,
            add: None,
            k: 0,
        });
    }
    let i = f.def_inst(v)?;
    if f.op(i) != Opcode::Add {
        return None;
    }
    let (a, b) = (f.arg(i, 0), f.arg(i, 1));
    for (x, y) in [(a, b), (b, a)] {
        if let Some((iv, scale)) = scaled(x) {
            if let Some(k) = f.as_iconst(y) {
                return Some(AffineIndex {
                    iv,
                    scale,
                    add: None,
                    k,
                });
            }
            if invariant(f, y) {
                return Some(AffineIndex {
                    iv,
                    scale,
                    add: Some(y),
                    k: 0,
                });
            }
        }
    }
    None
}

pub fn run(f: &mut Function, _cx: &ModuleCx) -> bool {
    let mut changed = ensure_preheaders(f);
    let cfg = Cfg::compute(f);
    let dt = DomTree::compute(f, &cfg);
    let forest = LoopForest::compute(&cfg, &dt);
    for (l, data) in forest.loops.iter() {
        let h = data.header;
        let [latch] = data.latches[..] else { continue };
        let Some(pre) = forest.preheader(l, &cfg) else {
            continue;
        };
        let mut preds = cfg.preds[h].clone();
        preds.sort();
        preds.dedup();
        if preds.len() != 2 || !preds.contains(&latch) || !preds.contains(&pre) {
            continue;
        }
        let Some(lt) = f.terminator(latch) else {
            continue;
        };
        // The latch's edge(s) into the header.
        let back: Vec<usize> = f
            .branch_targets(lt)
            .iter()
            .enumerate()
            .filter(|(_, c)| c.block == h)
            .map(|(k, _)| k)
            .collect();
        if back.len() != 1 {
            continue;
        }
        let back = back[0];
        let pre_t = f.terminator(pre).unwrap();
        let back_args = f.branch_args(lt, back).to_vec();
        let init_args = f.args(pre_t).to_vec();
        // Induction variables: (param, step).
        let params = f.blocks.params[h].clone();
        let mut ivs: Vec<(Value, i64)> = Vec::new();
        let mut inits: Vec<Value> = Vec::new();
        for (n, &p) in params.iter().enumerate() {
            if f.ty(p) != Type::I32 {
                continue;
            }
            let Some(i) = f.def_inst(back_args[n]) else {
                continue;
            };
            if f.op(i) == Opcode::Add && f.arg(i, 0) == p {
                if let Some(c) = f.as_iconst(f.arg(i, 1)) {
                    ivs.push((p, c));
                    inits.push(init_args[n]);
                }
            }
        }
        if ivs.is_empty() {
            continue;
        }
        // Candidate address computations, grouped by (base, stride, iv, scale, invariant part).
        let invariant =
            |f: &Function, v: Value| f.def_block(v).is_some_and(|db| !forest.contains(l, db));
        let mut groups: Vec<(GroupKey, Vec<(Inst, i64)>)> = Vec::new();
        for &b in &data.blocks {
            for i in f.layout().block_insts(b) {
                if f.op(i) != Opcode::Gep {
                    continue;
                }
                let (base, idx) = (f.arg(i, 0), f.arg(i, 1));
                if !invariant(f, base) {
                    continue;
                }
                let Some(a) = affine_index(f, idx, &ivs, &invariant) else {
                    continue;
                };
                let key = GroupKey {
                    base,
                    stride: f.data(i).imm,
                    iv: a.iv,
                    scale: a.scale,
                    add: a.add,
                };
                match groups.iter_mut().find(|g| g.0 == key) {
                    Some(g) => g.1.push((i, a.k)),
                    None => groups.push((key, vec![(i, a.k)])),
                }
            }
        }
        for (key, uses) in groups {
            let n = ivs.iter().position(|&(p, _)| p == key.iv).unwrap();
            let (step, init) = (ivs[n].1, inits[n]);
            // idx0 = scale * init + add, p0 = base + idx0 * stride, in the preheader.
            let mut bld = crate::ir::Builder::before(f, pre_t);
            let mut idx0 = init;
            if let Scale::Var(m) = key.scale {
                idx0 = bld.binary(Opcode::Mul, idx0, m);
            }
            if let Some(a) = key.add {
                idx0 = bld.binary(Opcode::Add, idx0, a);
            }
            let p0 = bld.gep(key.base, idx0, key.stride);
            // The step: a constant offset, or `gep p, scale * step, stride` for a variable scale.
            let var_step = match key.scale {
                Scale::One => None,
                Scale::Var(m) => {
                    let c = bld.iconst(step as i32);
                    Some(bld.binary(Opcode::Mul, m, c))
                }
            };
            let p = f.append_block_param(h, Type::Ptr);
            let mut args = f.args(pre_t).to_vec();
            args.push(p0);
            f.set_branch_target(pre_t, 0, h, &args);
            let lt = f.terminator(latch).unwrap();
            let pn = match var_step {
                None => f.insert_new_before(lt, mk::offset(step.wrapping_mul(key.stride)), &[p]),
                Some(sv) => f.insert_new_before(lt, mk::gep(key.stride), &[p, sv]),
            };
            let pn = f.res(pn);
            let mut bargs = f.branch_args(lt, back).to_vec();
            bargs.push(pn);
            f.set_branch_target(lt, back, h, &bargs);
            for (i, k) in uses {
                let off = k.wrapping_mul(key.stride);
                if off == 0 {
                    let r = f.res(i);
                    f.replace_all_uses(r, p);
                } else {
                    f.replace_inst(i, mk::offset(off), &[p]);
                }
            }
            changed = true;
        }
        changed |= derive_pointer_ivs(
            f,
            h,
            pre,
            latch,
            back,
            &|f: &Function, v: Value| f.def_block(v).is_some_and(|db| !forest.contains(l, db)),
            &data.blocks,
        );
    }
    changed
}

/// `gep p, x, stride` (or `gep (offset p, k), x, stride`) with `p` a pointer induction variable
/// of the loop (`p_next = offset p, c`) and `x` invariant is itself a pointer induction variable with the same step: a column walk
/// `a[k][j]` over `k` (inner `gep` made a pointer by the groups above) then needs no add per
/// iteration. Repeats for chains of such geps.
fn derive_pointer_ivs(
    f: &mut Function,
    h: crate::ir::Block,
    pre: crate::ir::Block,
    latch: crate::ir::Block,
    back: usize,
    invariant: &dyn Fn(&Function, Value) -> bool,
    blocks: &[crate::ir::Block],
) -> bool {
    let mut changed = false;
    for _round in 0..4 {
        let pre_t = f.terminator(pre).unwrap();
        let lt = f.terminator(latch).unwrap();
        let back_args = f.branch_args(lt, back).to_vec();
        let init_args = f.args(pre_t).to_vec();
        // (param, init, step)
        let mut ptr_ivs: Vec<(Value, Value, i64)> = Vec::new();
        for (n, &p) in f.blocks.params[h].iter().enumerate() {
            if f.ty(p) != Type::Ptr {
                continue;
            }
            let Some(i) = f.def_inst(back_args[n]) else {
                continue;
            };
            if f.op(i) == Opcode::Offset && f.arg(i, 0) == p {
                ptr_ivs.push((p, init_args[n], f.data(i).imm));
            }
        }
        // Uses: (gep, constant offset of its base from the pointer variable).
        let mut groups: Vec<((Value, Value, i64), Vec<(Inst, i64)>)> = Vec::new();
        for &b in blocks {
            for i in f.layout().block_insts(b) {
                if f.op(i) != Opcode::Gep {
                    continue;
                }
                let (mut base, idx) = (f.arg(i, 0), f.arg(i, 1));
                let mut off = 0;
                if let Some(bi) = f.def_inst(base).filter(|&bi| f.op(bi) == Opcode::Offset) {
                    if ptr_ivs.iter().any(|&(p, _, _)| p == f.arg(bi, 0)) {
                        off = f.data(bi).imm;
                        base = f.arg(bi, 0);
                    }
                }
                if !ptr_ivs.iter().any(|&(p, _, _)| p == base) || !invariant(f, idx) {
                    continue;
                }
                let key = (base, idx, f.data(i).imm);
                match groups.iter_mut().find(|g| g.0 == key) {
                    Some(g) => g.1.push((i, off)),
                    None => groups.push((key, vec![(i, off)])),
                }
            }
        }
        if groups.is_empty() {
            break;
        }
        for ((base, idx, stride), uses) in groups {
            let &(_, init, step) = ptr_ivs.iter().find(|&&(p, _, _)| p == base).unwrap();
            let pre_t = f.terminator(pre).unwrap();
            let q0 = f.insert_new_before(pre_t, mk::gep(stride), &[init, idx]);
            let q0 = f.res(q0);
            let q = f.append_block_param(h, Type::Ptr);
            let mut args = f.args(pre_t).to_vec();
            args.push(q0);
            f.set_branch_target(pre_t, 0, h, &args);
            let lt = f.terminator(latch).unwrap();
            let qn = f.insert_new_before(lt, mk::offset(step), &[q]);
            let qn = f.res(qn);
            let mut bargs = f.branch_args(lt, back).to_vec();
            bargs.push(qn);
            f.set_branch_target(lt, back, h, &bargs);
            for (i, off) in uses {
                if off == 0 {
                    let r = f.res(i);
                    f.replace_all_uses(r, q);
                    f.remove_inst(i);
                } else {
                    f.replace_inst(i, mk::offset(off), &[q]);
                }
            }
            changed = true;
        }
    }
    changed
}
