//! Loop strength reduction of address arithmetic.
//!
//! In a loop with a preheader and one latch, a header parameter `i` stepped by a constant
//! (`i_next = i + c`) is an induction variable. Every `gep base, i + k, stride` in the loop with
//! an invariant `base` becomes an offset from a pointer induction variable `p` (a new header
//! parameter): `p` starts at `gep base, i0, stride` in the preheader and steps by `c * stride`
//! at the latch, so the loop does no multiply or shift per access. Accesses sharing `(base,
//! stride, i)` share one pointer. Wrapping of `i` would make the original index jump back; such
//! a program already indexes out of bounds, so it is not preserved.
//! Needs: loop-simplified form, CFG, dominator tree, loop forest. Cost: O(loop sizes).

use crate::analysis::loop_shape::LoopInfo;
use crate::analysis::{FuncAnalyses, Preserved};
use crate::ir::{mk, Function, Inst, ModuleCx, Opcode, Type, Value};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Scale {
    /// A constant multiplier (never 0).
    Const(i64),
    /// An invariant (non-constant) multiplier.
    Var(Value),
}

#[derive(Clone, PartialEq, Eq, Debug)]
struct GroupKey {
    base: Value,
    stride: i64,
    iv: Value,
    scale: Scale,
    /// The invariant part: values times constants, sorted by value.
    atoms: Vec<(Value, i64)>,
}

/// A linear form `scale * iv + sum(c * atom) + k` of an index, in the loop's wrapping i32
/// arithmetic read as exact (see the module note).
#[derive(Clone, Debug, Default)]
struct Lin {
    iv: Option<(Value, Scale)>,
    atoms: Vec<(Value, i64)>,
    k: i64,
}

impl Lin {
    fn atom(v: Value) -> Lin {
        Lin {
            atoms: vec![(v, 1)],
            ..Lin::default()
        }
    }

    fn add(mut self, o: Lin) -> Option<Lin> {
        self.iv = match (self.iv, o.iv) {
            (x, None) | (None, x) => x,
            (Some((a, Scale::Const(x))), Some((b, Scale::Const(y)))) if a == b => {
                let z = x.checked_add(y)?;
                (z != 0).then_some((a, Scale::Const(z)))
            }
            _ => return None,
        };
        for (v, c) in o.atoms {
            match self.atoms.iter_mut().find(|(w, _)| *w == v) {
                Some(slot) => slot.1 = slot.1.checked_add(c)?,
                None => self.atoms.push((v, c)),
            }
        }
        self.atoms.retain(|&(_, c)| c != 0);
        self.atoms.sort_by_key(|&(v, _)| v);
        self.k = self.k.checked_add(o.k)?;
        Some(self)
    }

    fn scale(mut self, c: i64) -> Option<Lin> {
        self.iv = match self.iv {
            None => None,
            Some((v, Scale::Const(x))) => Some((v, Scale::Const(x.checked_mul(c)?))),
            Some((v, Scale::Var(m))) => (c == 1).then_some((v, Scale::Var(m)))?.into(),
        };
        if c == 0 {
            return Some(Lin::default());
        }
        for a in &mut self.atoms {
            a.1 = a.1.checked_mul(c)?;
        }
        self.k = self.k.checked_mul(c)?;
        Some(self)
    }
}

/// Reads an index as a [`Lin`] through `add`, `sub`, and multiplication or left shift by a
/// constant; `iv * m` with `m` invariant is the one non-constant scale. Leaves are induction
/// variables, constants and invariant values; anything else defined in the loop fails.
fn linear(
    f: &Function,
    v: Value,
    ivs: &[(Value, i64)],
    invariant: &dyn Fn(&Function, Value) -> bool,
    depth: u32,
) -> Option<Lin> {
    if ivs.iter().any(|&(p, _)| p == v) {
        return Some(Lin {
            iv: Some((v, Scale::Const(1))),
            ..Lin::default()
        });
    }
    if let Some(c) = f.as_iconst(v) {
        return Some(Lin {
            k: c,
            ..Lin::default()
        });
    }
    let opaque = || invariant(f, v).then(|| Lin::atom(v));
    let Some(i) = f.def_inst(v).filter(|_| depth < 8 && f.ty(v) == Type::I32) else {
        return opaque();
    };
    let go = |x: Value| linear(f, x, ivs, invariant, depth + 1);
    let (a, b) = match f.args(i) {
        &[a, b] => (a, b),
        _ => return opaque(),
    };
    let form = match f.op(i) {
        Opcode::Add => go(a).and_then(|x| x.add(go(b)?)),
        Opcode::Sub => go(a).and_then(|x| x.add(go(b)?.scale(-1)?)),
        Opcode::Mul => match (f.as_iconst(a), f.as_iconst(b)) {
            (_, Some(c)) => go(a).and_then(|x| x.scale(c)),
            (Some(c), _) => go(b).and_then(|x| x.scale(c)),
            _ => {
                // `iv * m` for an invariant `m`.
                let is_iv = |x: Value| ivs.iter().any(|&(p, _)| p == x);
                let (iv, m) = if is_iv(a) {
                    (a, b)
                } else if is_iv(b) {
                    (b, a)
                } else {
                    (a, a)
                };
                (iv != m && invariant(f, m)).then(|| Lin {
                    iv: Some((iv, Scale::Var(m))),
                    ..Lin::default()
                })
            }
        },
        Opcode::Shl => match f.as_iconst(b) {
            Some(c @ 0..=30) => go(a).and_then(|x| x.scale(1 << c)),
            _ => None,
        },
        _ => None,
    };
    form.or_else(opaque)
}

/// `scale * init + sum(c * atom)`, built where `bld` inserts (the preheader): the first
/// iteration's index of a linear form without its constant.
fn initial_index(
    bld: &mut crate::ir::Builder,
    iv: Option<(Value, Scale)>,
    atoms: &[(Value, i64)],
) -> Value {
    let mut idx0 = match iv {
        None => None,
        Some((init, Scale::Const(1))) => Some(init),
        Some((init, Scale::Const(a))) => {
            let c = bld.iconst(a as i32);
            Some(bld.binary(Opcode::Mul, init, c))
        }
        Some((init, Scale::Var(m))) => Some(bld.binary(Opcode::Mul, init, m)),
    };
    for &(atom, c) in atoms {
        idx0 = Some(match (idx0, c) {
            (None, 1) => atom,
            (Some(x), 1) => bld.binary(Opcode::Add, x, atom),
            (Some(x), -1) => bld.binary(Opcode::Sub, x, atom),
            (x, _) => {
                let k = bld.iconst(c as i32);
                let t = bld.binary(Opcode::Mul, atom, k);
                match x {
                    Some(x) => bld.binary(Opcode::Add, x, t),
                    None => t,
                }
            }
        });
    }
    idx0.unwrap_or_else(|| bld.iconst(0))
}

pub fn run(f: &mut Function, _cx: &ModuleCx, am: &mut FuncAnalyses) -> Preserved {
    let mut changed = false;
    let info = LoopInfo::new(am, f);
    let forest = &info.forest;
    for sl in info.simple_loops() {
        let (l, h, pre, latch) = (sl.id, sl.header, sl.pre, sl.latch);
        let data = &forest.loops[l];
        if !info.entered_only_by(&sl) {
            continue;
        }
        let Some(lt) = f.terminator(latch) else {
            continue;
        };
        // The latch's edge(s) into the header.
        let back = f.edges_to(lt, h);
        if back.len() != 1 {
            continue;
        }
        let back = back[0];
        let pre_t = f.terminator(pre).unwrap();
        let back_args = f.branch_args(lt, back).to_vec();
        let init_args = f.args(pre_t).to_vec();
        // Induction variables: (param, step).
        let params = f.blocks.params[h].to_vec();
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
                let Some(lin) = linear(f, idx, &ivs, &invariant, 0) else {
                    continue;
                };
                let Some((iv, scale)) = lin.iv else { continue };
                // Keep every product within the i32 arithmetic it replaces.
                let small = |c: i64| c.unsigned_abs() <= 1 << 20;
                if matches!(scale, Scale::Const(a) if !small(a))
                    || !lin.atoms.iter().all(|&(_, c)| small(c))
                {
                    continue;
                }
                let key = GroupKey {
                    base,
                    stride: f.data(i).imm,
                    iv,
                    scale,
                    atoms: lin.atoms,
                };
                match groups.iter_mut().find(|g| g.0 == key) {
                    Some(g) => g.1.push((i, lin.k)),
                    None => groups.push((key, vec![(i, lin.k)])),
                }
            }
        }
        for (key, uses) in groups {
            let n = ivs.iter().position(|&(p, _)| p == key.iv).unwrap();
            let (step, init) = (ivs[n].1, inits[n]);
            // idx0 = scale * init + sum(c * atom), p0 = base + idx0 * stride, in the preheader.
            let mut bld = crate::ir::Builder::before(f, pre_t);
            let idx0 = initial_index(&mut bld, Some((init, key.scale)), &key.atoms);
            let p0 = bld.gep(key.base, idx0, key.stride);
            // The step: a constant offset, or `gep p, scale * step, stride` for a variable scale.
            let (const_step, var_step) = match key.scale {
                Scale::Const(a) => (a.wrapping_mul(step), None),
                Scale::Var(m) => {
                    let c = bld.iconst(step as i32);
                    (0, Some(bld.binary(Opcode::Mul, m, c)))
                }
            };
            let p = f.append_block_param(h, Type::Ptr);
            let mut args = f.args(pre_t).to_vec();
            args.push(p0);
            f.set_branch_target(pre_t, 0, h, &args);
            let lt = f.terminator(latch).unwrap();
            let pn = match var_step {
                None => {
                    f.insert_new_before(lt, mk::offset(const_step.wrapping_mul(key.stride)), &[p])
                }
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
            LoopEdges {
                h,
                pre,
                latch,
                back,
            },
            &ivs,
            &inits,
            &|f: &Function, v: Value| f.def_block(v).is_some_and(|db| !forest.contains(l, db)),
            &data.blocks,
        );
    }
    Preserved::cfg_kept(changed)
}

/// The blocks and edge a pointer induction variable is threaded through.
struct LoopEdges {
    h: crate::ir::Block,
    pre: crate::ir::Block,
    latch: crate::ir::Block,
    /// The latch's edge into the header.
    back: usize,
}

/// A group of geps from one pointer variable with one stride whose indices differ by
/// constants: the pointer, the stride, and the index's linear form without its constant
/// (an integer induction variable with a constant scale, and invariant atoms).
#[derive(Clone, PartialEq, Eq, Debug)]
struct GepKey {
    base: Value,
    stride: i64,
    iv: Option<(Value, i64)>,
    atoms: Vec<(Value, i64)>,
}

/// `gep p, x, stride` (or `gep (offset p, k), x, stride`) with `p` a pointer induction variable
/// of the loop (`p_next = offset p, c`) and `x` invariant, or linear in an integer induction
/// variable `i` with a constant scale `a` (`x = a * i + invariant + k`), is itself a pointer
/// induction variable: it steps by `c + a * step(i) * stride`. A column walk `a[k][j]` over `k`
/// (inner `gep` made a pointer by the groups above) then needs no add per iteration, and a
/// diagonal `a[i + 2][i]` one pointer step. Repeats for chains of such geps.
fn derive_pointer_ivs(
    f: &mut Function,
    e: LoopEdges,
    ivs: &[(Value, i64)],
    inits: &[Value],
    invariant: &dyn Fn(&Function, Value) -> bool,
    blocks: &[crate::ir::Block],
) -> bool {
    let LoopEdges {
        h,
        pre,
        latch,
        back,
    } = e;
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
        // Uses: (gep, constant byte offset from the group's pointer).
        let mut groups: Vec<(GepKey, Vec<(Inst, i64)>)> = Vec::new();
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
                if !ptr_ivs.iter().any(|&(p, _, _)| p == base) {
                    continue;
                }
                let stride = f.data(i).imm;
                let (iv, atoms, k) = if invariant(f, idx) {
                    (None, vec![(idx, 1)], 0)
                } else {
                    let Some(lin) = linear(f, idx, ivs, invariant, 0) else {
                        continue;
                    };
                    let Some((iv, Scale::Const(a))) = lin.iv else {
                        continue;
                    };
                    // Keep every product within the i32 arithmetic it replaces.
                    let small = |c: i64| c.unsigned_abs() <= 1 << 20;
                    if !small(a) || !small(stride) || !lin.atoms.iter().all(|&(_, c)| small(c)) {
                        continue;
                    }
                    (Some((iv, a)), lin.atoms, lin.k)
                };
                let Some(off) = k.checked_mul(stride).and_then(|x| x.checked_add(off)) else {
                    continue;
                };
                let key = GepKey {
                    base,
                    stride,
                    iv,
                    atoms,
                };
                match groups.iter_mut().find(|g| g.0 == key) {
                    Some(g) => g.1.push((i, off)),
                    None => groups.push((key, vec![(i, off)])),
                }
            }
        }
        if groups.is_empty() {
            break;
        }
        for (key, uses) in groups {
            let &(_, init, pstep) = ptr_ivs.iter().find(|&&(p, _, _)| p == key.base).unwrap();
            let pre_t = f.terminator(pre).unwrap();
            // The index's first value and the pointer's step.
            let (iv0, step) = match key.iv {
                None => (None, pstep),
                Some((iv, a)) => {
                    let n = ivs.iter().position(|&(p, _)| p == iv).unwrap();
                    let s = a.wrapping_mul(ivs[n].1).wrapping_mul(key.stride);
                    (Some((inits[n], Scale::Const(a))), pstep.wrapping_add(s))
                }
            };
            let mut bld = crate::ir::Builder::before(f, pre_t);
            let idx0 = initial_index(&mut bld, iv0, &key.atoms);
            let q0 = bld.gep(init, idx0, key.stride);
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
