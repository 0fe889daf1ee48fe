//! Simple alias facts: the base object of a pointer.
//!
//! SysY pointers come only from allocas, globals and pointer parameters, moved by `gep`/`offset`
//! (and block parameters after strength reduction). Distinct allocas and globals never alias; a
//! pointer parameter may point into any global or any caller's memory but never into this
//! function's allocas, nor into a global whose address is only used directly (SysY has no `&`:
//! scalar globals are reached by name alone, see `ModuleCx::direct_only`); an alias of unknown
//! origin may alias anything but a non-escaping alloca.

use crate::analysis::range::Interval;
use crate::analysis::Cfg;
use crate::ir::{Function, GlobalId, Inst, ModuleCx, Opcode, Touches, Type, Value, ValueDef};

/// Where a pointer points.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Base {
    Alloca(Inst),
    Global(GlobalId),
    /// A pointer parameter of the function (or a mix of them).
    Param(Value),
    Unknown,
}

/// The base object of `ptr`, following `gep`/`offset` and block parameters through any number
/// of levels (pointers strength-reduced in nested loops are parameters of parameters): the base
/// every definition the pointer may come from shares, or `Unknown` when they differ. A pointer
/// moved around a loop (`p' = p + k`) adds nothing of its own.
pub fn base_of(f: &Function, cfg: &Cfg, ptr: Value) -> Base {
    // Most pointers are a short chain of address arithmetic over one definition: follow it
    // without the search's tables. A chain that reaches its end within the limit visits no
    // value twice (a revisit would repeat forever), so the answer is the search's.
    let mut v = ptr;
    for _ in 0..16 {
        match f.value_def(v) {
            ValueDef::Result(i) => match f.op(i) {
                Opcode::Alloca => return Base::Alloca(i),
                Opcode::Gaddr => return Base::Global(f.global(i)),
                Opcode::Gep | Opcode::Offset => v = f.arg(i, 0),
                _ => return Base::Unknown,
            },
            ValueDef::Param(b, _) if b == f.entry() => return Base::Param(v),
            ValueDef::Param(..) => break,
        }
    }
    let mut found: Option<Base> = None;
    let mut seen: Vec<Value> = Vec::new();
    let mut work = vec![ptr];
    while let Some(v) = work.pop() {
        if seen.contains(&v) {
            continue;
        }
        if seen.len() >= 256 {
            return Base::Unknown;
        }
        seen.push(v);
        let base = match f.value_def(v) {
            ValueDef::Result(i) => match f.op(i) {
                Opcode::Alloca => Base::Alloca(i),
                Opcode::Gaddr => Base::Global(f.global(i)),
                Opcode::Gep | Opcode::Offset => {
                    work.push(f.arg(i, 0));
                    continue;
                }
                _ => Base::Unknown,
            },
            ValueDef::Param(b, n) => {
                if b == f.entry() {
                    Base::Param(v)
                } else {
                    work.extend(incoming(f, cfg, b, n as usize));
                    continue;
                }
            }
        };
        match found {
            _ if base == Base::Unknown => return Base::Unknown,
            None => found = Some(base),
            Some(x) if x == base => {}
            Some(_) => return Base::Unknown,
        }
    }
    found.unwrap_or(Base::Unknown)
}

/// The arguments passed to parameter `n` of `b` on every incoming edge.
fn incoming(f: &Function, cfg: &Cfg, b: crate::ir::Block, n: usize) -> Vec<Value> {
    let mut out = Vec::new();
    let mut preds = cfg.preds[b].to_vec();
    preds.sort();
    preds.dedup();
    for blk in preds {
        let Some(t) = f.terminator(blk) else { continue };
        for c in f.branch_targets(t) {
            if c.block == b {
                out.push(c.args[n]);
            }
        }
    }
    out
}

/// Every instruction that uses `root` or an address derived from it by `gep`/`offset`, with the
/// derived value it uses (address arithmetic itself is followed, not listed).
pub fn derived_users(f: &Function, root: Value) -> Vec<(Inst, Value)> {
    derived_users_via(f, root, false)
}

/// `derived_users`, also following addresses passed in block parameters (pointer induction
/// variables) when `through_params`: branches that only pass them along are not listed.
pub fn derived_users_via(f: &Function, root: Value, through_params: bool) -> Vec<(Inst, Value)> {
    derived_addresses(f, root, through_params).users
}

/// The addresses derived from a root and what uses them (`derived_addresses`).
pub struct Derived {
    /// Every user that is not address arithmetic (nor, when following parameters, a branch
    /// only passing an address along), with the derived value it uses.
    pub users: Vec<(Inst, Value)>,
    /// The root and every address derived from it.
    pub values: crate::ir::IdSet<Value>,
    /// The block parameters followed, as (block, index); with repeats.
    pub params: Vec<(crate::ir::Block, usize)>,
}

/// The walk behind `derived_users_via`, keeping the derived addresses and the parameters it
/// followed (a parameter may also receive other addresses: callers that need all of its values
/// derived check its incoming arguments against `values`).
pub fn derived_addresses(f: &Function, root: Value, through_params: bool) -> Derived {
    let mut out = Vec::new();
    let mut params = Vec::new();
    let mut work = vec![root];
    let mut seen: crate::ir::IdSet<Value> = crate::ir::IdSet::with_capacity(f.num_values());
    while let Some(v) = work.pop() {
        if !seen.insert(v) {
            continue;
        }
        for u in f.uses_of(v) {
            let user = f.uses().user[u];
            match f.op(user) {
                Opcode::Gep | Opcode::Offset if f.arg(user, 0) == v => work.push(f.res(user)),
                Opcode::Jump | Opcode::Brif
                    if through_params && (f.op(user) == Opcode::Jump || f.arg(user, 0) != v) =>
                {
                    for c in f.branch_targets(user) {
                        for (n, &a) in c.args.iter().enumerate() {
                            if a == v {
                                params.push((c.block, n));
                                work.push(f.blocks.params[c.block][n]);
                            }
                        }
                    }
                }
                _ => out.push((user, v)),
            }
        }
    }
    Derived {
        users: out,
        values: seen,
        params,
    }
}

/// Whether `ptr` points into a global that is never written (`is_const`), through `gep` and
/// `offset`: loads from it are pure.
pub fn points_to_const_global(f: &Function, cx: &crate::ir::ModuleCx, ptr: Value) -> bool {
    let mut v = ptr;
    for _ in 0..64 {
        let Some(i) = f.def_inst(v) else { return false };
        match f.op(i) {
            Opcode::Gaddr => return cx.globals.get(f.global(i)).is_some_and(|g| g.is_const),
            Opcode::Gep | Opcode::Offset => v = f.arg(i, 0),
            _ => return false,
        }
    }
    false
}

/// Whether an alloca's address escapes (into a call, a branch argument or memory), so that
/// code elsewhere may read or write it.
pub fn escapes(f: &Function, alloca: Inst) -> bool {
    derived_users(f, f.res(alloca))
        .iter()
        .any(|&(user, v)| match f.op(user) {
            Opcode::Load => false,
            Opcode::Store => f.arg(user, 0) == v,
            _ => true,
        })
}

/// Every use of the address of a global (through `gep`/`offset` and block parameters) is the
/// address of a load or a store: the address never reaches a call, memory or a return.
pub fn global_direct_only(f: &Function, addr: Value) -> bool {
    derived_users_via(f, addr, true)
        .iter()
        .all(|&(user, v)| match f.op(user) {
            Opcode::Load => true,
            Opcode::Store => f.arg(user, 0) != v,
            _ => false,
        })
}

/// `ptr` as `(root, bytes)`: the pointer `root` (not itself a `gep` or `offset`) moved by a
/// constant number of bytes through `gep`s with constant indices and `offset`s.
pub fn constant_offset(f: &Function, ptr: Value) -> Option<(Value, i64)> {
    // An index that is not a constant has no (empty) range: no offset.
    offset_range(f, ptr, |_| Interval::EMPTY).map(|(root, off, _)| (root, off))
}

/// The pointer `ptr` is at some offset from: the first value down its chain of `gep`s and
/// `offset`s that is neither.
pub fn offset_root(f: &Function, ptr: Value) -> Value {
    let mut v = ptr;
    while let Some(i) = f.def_inst(v) {
        if !matches!(f.op(i), Opcode::Gep | Opcode::Offset) {
            break;
        }
        v = f.arg(i, 0);
    }
    v
}

/// `ptr` as `(root, lo, hi)`: the pointer `root` (not itself a `gep` or `offset`) moved by
/// between `lo` and `hi` bytes through `offset`s and `gep`s whose index lies in the interval
/// `index` gives for it (constants are points). `None` when an index is unbounded or a
/// bound leaves i64.
pub fn offset_range(
    f: &Function,
    ptr: Value,
    mut index: impl FnMut(Value) -> Interval,
) -> Option<(Value, i64, i64)> {
    let mut v = ptr;
    let (mut lo, mut hi) = (0i64, 0i64);
    for _ in 0..64 {
        let Some(i) = f.def_inst(v) else {
            return Some((v, lo, hi));
        };
        match f.op(i) {
            Opcode::Offset => {
                let k = f.data(i).imm;
                lo = lo.checked_add(k)?;
                hi = hi.checked_add(k)?;
            }
            Opcode::Gep => {
                let idx = f.arg(i, 1);
                let r = match f.as_iconst(idx) {
                    Some(k) => Interval::point(k),
                    None => index(idx),
                };
                if r.is_empty() || r == Interval::full(f.ty(idx)) {
                    return None;
                }
                let stride = f.data(i).imm as i128;
                let (a, b) = (r.lo as i128 * stride, r.hi as i128 * stride);
                lo = i64::try_from(lo as i128 + a.min(b)).ok()?;
                hi = i64::try_from(hi as i128 + a.max(b)).ok()?;
            }
            _ => return Some((v, lo, hi)),
        }
        v = f.arg(i, 0);
    }
    None
}

/// Whether `bytes` bytes at `ptr` lie inside one global or stack object whatever the path to
/// here: a load from there cannot fault, so it may run where the program would not have.
pub fn dereferenceable(f: &Function, cx: &ModuleCx, ptr: Value, bytes: u64) -> bool {
    let Some((root, off)) = constant_offset(f, ptr) else {
        return false;
    };
    let Some(i) = f.def_inst(root) else {
        return false;
    };
    let size = match f.op(i) {
        Opcode::Gaddr => cx.globals[f.global(i)].size,
        Opcode::Alloca => f.data(i).imm as u64,
        _ => return false,
    };
    off >= 0
        && (off as u64)
            .checked_add(bytes)
            .is_some_and(|end| end <= size)
}

/// The bases a call may write, from its callee's `FuncDecl::writes`: the globals it names and
/// the bases of the pointer arguments it writes through; `None` when it may write anything.
/// Empty for a pure callee or one that writes no memory.
pub fn call_writes(f: &Function, cx: &ModuleCx, cfg: &Cfg, call: Inst) -> Option<Vec<Base>> {
    let d = &cx.decls[f.callee(call)];
    let e = d.effects;
    if e.pure || !(e.writes_memory || !d.defined || e == Default::default()) {
        return Some(Vec::new());
    }
    call_touches(f, cfg, call, &d.writes)
}

/// The bases a call may read (`FuncDecl::reads`), as `call_writes` gives those it writes.
pub fn call_reads(f: &Function, cx: &ModuleCx, cfg: &Cfg, call: Inst) -> Option<Vec<Base>> {
    let d = &cx.decls[f.callee(call)];
    if d.effects.pure {
        return Some(Vec::new());
    }
    call_touches(f, cfg, call, &d.reads)
}

fn call_touches(f: &Function, cfg: &Cfg, call: Inst, t: &Touches) -> Option<Vec<Base>> {
    let Touches::Known {
        globals,
        through_params,
    } = t
    else {
        return None;
    };
    let mut bases: Vec<Base> = globals.iter().map(|&g| Base::Global(g)).collect();
    if *through_params {
        for &a in f.args(call) {
            if f.ty(a) == Type::Ptr {
                let b = base_of(f, cfg, a);
                if !bases.contains(&b) {
                    bases.push(b);
                }
            }
        }
    }
    Some(bases)
}

/// Whether two bases may refer to overlapping memory.
pub fn may_alias(cx: &ModuleCx, a: Base, b: Base) -> bool {
    match (a, b) {
        (Base::Alloca(x), Base::Alloca(y)) => x == y,
        (Base::Global(x), Base::Global(y)) => x == y,
        (Base::Alloca(_), Base::Global(_)) | (Base::Global(_), Base::Alloca(_)) => false,
        // Parameters come from callers: they never point into this function's allocas. An
        // unknown pointer may (an alloca's address merged with another in a block parameter).
        (Base::Alloca(_), Base::Param(_)) | (Base::Param(_), Base::Alloca(_)) => false,
        // A parameter points where some caller's pointer pointed: never into a global whose
        // address is only used directly.
        (Base::Global(g), Base::Param(_)) | (Base::Param(_), Base::Global(g)) => {
            !cx.is_direct_only(g)
        }
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pointers strength-reduced in a loop nest: the inner loop's pointer is a parameter whose
    /// incoming values are the outer loop's pointer parameter and its own increment; both
    /// levels lead back to one global. A parameter mixing two globals has no single base.
    #[test]
    fn bases_through_nested_pointer_parameters() {
        let text = "global @a: 64 x i32 = zero
global @b: 64 x i32 = zero

func @f(i32) -> i32 {
bb0(v0: i32):
    v1 = gaddr @a
    v2 = gaddr @b
    v3 = iconst.i1 1
    jump bb1(v1, v1)
bb1(v10: ptr, v11: ptr):
    jump bb2(v10)
bb2(v20: ptr):
    v21 = offset v20, 4
    brif v3, bb2(v21), bb3
bb3:
    v30 = offset v10, 64
    brif v3, bb1(v30, v2), bb4
bb4:
    ret v0
}
";
        let m = crate::ir::parse::module(text).unwrap();
        let f = m.funcs.iter().next().unwrap().1;
        let cfg = Cfg::compute(f);
        // The parser keeps the text's value numbers.
        let val = |n: usize| Value::new(n);
        let a = base_of(f, &cfg, val(1));
        assert!(matches!(a, Base::Global(_)));
        assert_eq!(base_of(f, &cfg, val(10)), a);
        assert_eq!(base_of(f, &cfg, val(20)), a);
        assert_eq!(base_of(f, &cfg, val(21)), a);
        assert_eq!(base_of(f, &cfg, val(11)), Base::Unknown);
    }
}
