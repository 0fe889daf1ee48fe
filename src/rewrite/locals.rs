//! Local arrays nothing reads: their writes are dead.
//!
//! An alloca whose every use (through `gep`, `offset` and pointer block parameters that receive
//! only its addresses) is a store into it, a `memset` of it whose result is unused, or a load
//! whose value only feeds stores into the same object (a histogram nobody reads), is never
//! read: the writes go. Once they are gone the alloca has no users and `dce` drops it; the loops
//! that only computed what was stored may then be dead too (`dead_loop` alternates the two).
//! Needs: nothing cached; keeps the CFG. Cost: O(uses of the allocas' addresses), plus one scan
//! of the branches when an address flows through a block parameter.

use crate::analysis::alias::{derived_addresses, Derived};
use crate::ir::{Function, IdSet, Inst, ModuleCx, Opcode, Value};

/// Removes every write into an entry-block alloca that is never read; returns whether one went.
pub fn remove_unread_writes(f: &mut Function, cx: &ModuleCx) -> bool {
    let mut changed = false;
    let entry = f.entry();
    let allocas: Vec<Inst> = f
        .layout()
        .block_insts(entry)
        .filter(|&i| f.op(i) == Opcode::Alloca)
        .collect();
    for al in allocas {
        if let Some(writes) = unread_writes(f, cx, f.res(al)) {
            for s in writes {
                f.remove_inst(s);
            }
            changed = true;
        }
    }
    changed
}

/// The writes into `root`'s object when nothing else uses its addresses (and there is one).
fn unread_writes(f: &Function, cx: &ModuleCx, root: Value) -> Option<Vec<Inst>> {
    let Derived {
        users,
        values,
        mut params,
    } = derived_addresses(f, root, true);
    let mut writes: Vec<Inst> = Vec::with_capacity(users.len());
    let mut reads: Vec<Value> = Vec::new();
    for (user, v) in users {
        match f.op(user) {
            Opcode::Store if f.arg(user, 1) == v && f.arg(user, 0) != v => writes.push(user),
            Opcode::Call if is_memset_of(f, cx, user, v) => writes.push(user),
            Opcode::Load => reads.push(f.res(user)),
            _ => return None,
        }
    }
    if writes.is_empty() || !feed_only_own_writes(f, cx, &reads, &values) {
        return None;
    }
    if !params.is_empty() {
        // A parameter that also receives some other address could write elsewhere.
        params.sort();
        params.dedup();
        for b in f.layout().blocks() {
            let Some(t) = f.terminator(b) else { continue };
            for c in f.branch_targets(t) {
                for (n, &a) in c.args.iter().enumerate() {
                    if params.binary_search(&(c.block, n)).is_ok() && !values.contains(a) {
                        return None;
                    }
                }
            }
        }
    }
    writes.sort();
    writes.dedup();
    Some(writes)
}

/// Whether the values loaded from the object (`reads`) reach nothing but the values stored into
/// it (`h[x] = h[x] + 1`): through instructions without effects, branch arguments into block
/// parameters and addresses (`values`) of the object itself. Then no read is observable and the
/// object is as unread as one nothing loads from.
fn feed_only_own_writes(
    f: &Function,
    cx: &ModuleCx,
    reads: &[Value],
    values: &IdSet<Value>,
) -> bool {
    let mut seen: IdSet<Value> = IdSet::with_capacity(f.num_values());
    let mut work: Vec<Value> = reads.to_vec();
    while let Some(x) = work.pop() {
        if !seen.insert(x) {
            continue;
        }
        for u in f.uses_of(x) {
            let user = f.uses().user[u];
            match f.op(user) {
                Opcode::Store => {
                    if f.arg(user, 0) != x
                        || f.arg(user, 1) == x
                        || !values.contains(f.arg(user, 1))
                    {
                        return false;
                    }
                }
                Opcode::Jump | Opcode::Brif => {
                    if f.op(user) == Opcode::Brif && f.arg(user, 0) == x {
                        return false;
                    }
                    for c in f.branch_targets(user) {
                        for (n, &a) in c.args.iter().enumerate() {
                            if a == x {
                                work.push(f.blocks.params[c.block][n]);
                            }
                        }
                    }
                }
                _ if crate::rewrite::dead::is_root(f, cx, user) => return false,
                _ => {
                    if let Some(r) = f.result(user) {
                        if !values.contains(r) {
                            work.push(r);
                        }
                    }
                }
            }
        }
    }
    true
}

/// Whether `call` is `memset(v, byte, len)` with its result unused.
fn is_memset_of(f: &Function, cx: &ModuleCx, call: Inst, v: Value) -> bool {
    let d = &cx.decls[f.callee(call)];
    !d.defined
        && d.name == "memset"
        && f.args(call).len() == 3
        && f.arg(call, 0) == v
        && f.arg(call, 1) != v
        && f.arg(call, 2) != v
        && !f.has_uses(f.res(call))
}
