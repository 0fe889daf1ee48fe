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

/// `(iv, k)` if `v` is `iv + k` for a constant `k` (or `iv` itself).
fn iv_plus_const(f: &Function, v: Value, ivs: &[(Value, i64)]) -> Option<(Value, i64)> {
    if ivs.iter().any(|&(p, _)| p == v) {
        return Some((v, 0));
    }
    let i = f.def_inst(v)?;
    if f.op(i) != Opcode::Add {
        return None;
    }
    let (a, b) = (f.arg(i, 0), f.arg(i, 1));
    let k = f.as_iconst(b)?;
    ivs.iter().any(|&(p, _)| p == a).then_some((a, k))
}

pub fn run(f: &mut Function, _cx: &ModuleCx) -> bool {
    let mut changed = ensure_preheaders(f);
    let cfg = Cfg::compute(f);
    let dt = DomTree::compute(f, &cfg);
    let forest = LoopForest::compute(&cfg, &dt);
    for (l, data) in forest.loops.iter() {
        let h = data.header;
        let [latch] = data.latches[..] else { continue };
        let Some(pre) = forest.preheader(l, &cfg) else { continue };
        let mut preds = cfg.preds[h].clone();
        preds.sort();
        preds.dedup();
        if preds.len() != 2 || !preds.contains(&latch) || !preds.contains(&pre) {
            continue;
        }
        let Some(lt) = f.terminator(latch) else { continue };
        // The latch's edge(s) into the header.
        let back: Vec<usize> =
            f.branch_targets(lt).iter().enumerate().filter(|(_, c)| c.block == h).map(|(k, _)| k).collect();
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
            let Some(i) = f.def_inst(back_args[n]) else { continue };
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
        // Candidate address computations.
        let mut groups: Vec<((Value, i64, Value), Vec<(Inst, i64)>)> = Vec::new();
        for &b in &data.blocks {
            for i in f.layout().block_insts(b) {
                if f.op(i) != Opcode::Gep {
                    continue;
                }
                let (base, idx) = (f.arg(i, 0), f.arg(i, 1));
                if f.def_block(base).is_none_or(|db| forest.contains(l, db)) {
                    continue;
                }
                let Some((iv, k)) = iv_plus_const(f, idx, &ivs) else { continue };
                let key = (base, f.data(i).imm, iv);
                match groups.iter_mut().find(|g| g.0 == key) {
                    Some(g) => g.1.push((i, k)),
                    None => groups.push((key, vec![(i, k)])),
                }
            }
        }
        for ((base, stride, iv), uses) in groups {
            let n = ivs.iter().position(|&(p, _)| p == iv).unwrap();
            let (step, init) = (ivs[n].1, inits[n]);
            // p0 = base + init * stride, in the preheader.
            let p0 = f.insert_new_before(pre_t, mk::gep(stride), &[base, init]);
            let p0 = f.res(p0);
            let p = f.append_block_param(h, Type::Ptr);
            let mut args = f.args(pre_t).to_vec();
            args.push(p0);
            f.set_branch_target(pre_t, 0, h, &args);
            let lt = f.terminator(latch).unwrap();
            let pn = f.insert_new_before(lt, mk::offset(step.wrapping_mul(stride)), &[p]);
            let pn = f.res(pn);
            let mut bargs = f.branch_args(lt, back).to_vec();
            bargs.push(pn);
            f.set_branch_target(lt, back, h, &bargs);
            for (i, k) in uses {
                let off = k.wrapping_mul(stride);
                if off == 0 {
                    let r = f.res(i);
                    f.replace_all_uses(r, p);
                } else {
                    f.replace_inst(i, mk::offset(off), &[p]);
                }
            }
            changed = true;
        }
    }
    changed
}
