//! Simple alias facts: the base object of a pointer.
//!
//! SysY pointers come only from allocas, globals and pointer parameters, moved by `gep`/`offset`
//! (and block parameters after strength reduction). Distinct allocas and globals never alias; a
//! pointer parameter may point into any global or any caller's memory but never into this
//! function's allocas, nor into a global whose address is only used directly (SysY has no `&`:
//! scalar globals are reached by name alone, see `ModuleCx::direct_only`); an alias of unknown
//! origin may alias anything but a non-escaping alloca.

use crate::analysis::Cfg;
use crate::ir::{Function, GlobalId, Inst, ModuleCx, Opcode, Value, ValueDef};

/// Where a pointer points.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Base {
    Alloca(Inst),
    Global(GlobalId),
    /// A pointer parameter of the function (or a mix of them).
    Param(Value),
    Unknown,
}

/// The base object of `ptr`, following `gep`/`offset` and block parameters whose incoming
/// values share one base.
pub fn base_of(f: &Function, cfg: &Cfg, ptr: Value) -> Base {
    let mut v = ptr;
    for _ in 0..64 {
        match f.values.def[v] {
            ValueDef::Result(i) => match f.op(i) {
                Opcode::Alloca => return Base::Alloca(i),
                Opcode::Gaddr => return Base::Global(f.global(i)),
                Opcode::Gep | Opcode::Offset => v = f.arg(i, 0),
                _ => return Base::Unknown,
            },
            ValueDef::Param(b, n) => {
                if b == f.entry() {
                    return Base::Param(v);
                }
                // A block parameter: the common base of its incoming arguments, when the
                // incoming values are simple (one level, avoiding cycles through the parameter).
                let mut found: Option<Base> = None;
                let preds = incoming(f, cfg, b, n as usize);
                for a in preds {
                    if a == v {
                        continue;
                    }
                    // Values derived from the parameter itself (`p' = p + k`) share its base.
                    let Some(ab) = base_of_shallow(f, a, v) else {
                        continue;
                    };
                    match found {
                        None => found = Some(ab),
                        Some(x) if x == ab => {}
                        Some(_) => return Base::Unknown,
                    }
                }
                return found.unwrap_or(Base::Unknown);
            }
        }
    }
    Base::Unknown
}

/// Base of `a` without entering block parameters; `None` when `a` is `through` moved by
/// `gep`/`offset` (a loop-carried pointer increment, which has the base of `through`).
fn base_of_shallow(f: &Function, a: Value, through: Value) -> Option<Base> {
    let mut v = a;
    for _ in 0..64 {
        if v == through {
            return None;
        }
        match f.values.def[v] {
            ValueDef::Result(i) => match f.op(i) {
                Opcode::Alloca => return Some(Base::Alloca(i)),
                Opcode::Gaddr => return Some(Base::Global(f.global(i))),
                Opcode::Gep | Opcode::Offset => v = f.arg(i, 0),
                _ => return Some(Base::Unknown),
            },
            ValueDef::Param(b, _) => {
                if b == f.entry() {
                    return Some(Base::Param(v));
                }
                return Some(Base::Unknown);
            }
        }
    }
    Some(Base::Unknown)
}

/// The arguments passed to parameter `n` of `b` on every incoming edge.
fn incoming(f: &Function, cfg: &Cfg, b: crate::ir::Block, n: usize) -> Vec<Value> {
    let mut out = Vec::new();
    let mut preds = cfg.preds[b].clone();
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
    let mut out = Vec::new();
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
                                work.push(f.blocks.params[c.block][n]);
                            }
                        }
                    }
                }
                _ => out.push((user, v)),
            }
        }
    }
    out
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
