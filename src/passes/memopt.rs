//! Memory optimizations: store-to-load forwarding, redundant load elimination and dead store
//! elimination.
//!
//! A pointer is described as `root + constant offset` (following `offset` and constant-index
//! `gep`), and the root's base object (`alias`). Two accesses certainly touch the same word when
//! they have the same root and offset; they certainly do not when their bases cannot alias or
//! their roots are equal and their offsets differ.
//!
//! Forwarding walks blocks in reverse post-order carrying a table of known memory contents
//! (`(root, offset, type) -> value`). A block with one predecessor starts from that
//! predecessor's final table (extended basic blocks); a join starts from the entries all its
//! predecessors' tables share (a word loaded before an `if` whose arms do not write it is known
//! after it), a loop header from nothing. A load with a known
//! value is replaced; a store records its value after invalidating what it may overwrite; a call
//! that may write memory forgets all but non-escaping allocas. A store of the value the table
//! already holds for its word is removed.
//!
//! Dead stores: within a block, a store overwritten by a later store to the same word with no
//! possible read in between is removed; writes into a local array that is never read are
//! removed everywhere (`rewrite::locals`). Needs: CFG. Cost: O(instructions * table size).

use crate::analysis::alias::{base_of, call_writes, escapes, may_alias, Base};
use crate::analysis::{Cfg, FuncAnalyses, Preserved};
use crate::ir::{Block, Function, IdVec, Inst, ModuleCx, Opcode, Type, Value, ValueDef};
use rustc_hash::FxHashSet;

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
struct Addr {
    root: Value,
    off: i64,
    base: Base,
}

fn addr_of(f: &Function, cfg: &Cfg, ptr: Value) -> Addr {
    let mut root = ptr;
    let mut off = 0i64;
    while let ValueDef::Result(i) = f.value_def(root) {
        match f.op(i) {
            Opcode::Offset => {
                off = off.wrapping_add(f.data(i).imm);
                root = f.arg(i, 0);
            }
            Opcode::Gep => match f.as_iconst(f.arg(i, 1)) {
                Some(k) => {
                    off = off.wrapping_add(k.wrapping_mul(f.data(i).imm));
                    root = f.arg(i, 0);
                }
                None => break,
            },
            _ => break,
        }
    }
    Addr {
        root,
        off,
        base: base_of(f, cfg, root),
    }
}

/// Whether a write of `wsize` bytes at `w` may change the `rsize` bytes at `r`.
fn may_overlap(cx: &ModuleCx, w: &Addr, wsize: i64, r: &Addr, rsize: i64) -> bool {
    if !may_alias(cx, w.base, r.base) {
        return false;
    }
    if w.root == r.root {
        return w.off < r.off + rsize && r.off < w.off + wsize;
    }
    true
}

#[derive(Clone)]
struct Entry {
    addr: Addr,
    ty: Type,
    value: Value,
}

pub fn run(f: &mut Function, cx: &ModuleCx, am: &mut FuncAnalyses) -> Preserved {
    let cfg = am.cfg(f);
    let mut changed = forward(f, cx, cfg);
    changed |= dead_stores_local(f, cx, cfg);
    changed |= crate::rewrite::locals::remove_unread_writes(f, cx);
    // Loads and stores go; no branch changes.
    Preserved::cfg_kept(changed)
}

fn call_reads(f: &Function, cx: &ModuleCx, i: Inst) -> bool {
    let e = cx.decls[f.callee(i)].effects;
    !e.pure
}

fn forward(f: &mut Function, cx: &ModuleCx, cfg: &Cfg) -> bool {
    let mut changed = false;
    let mut out: IdVec<Block, Option<Vec<Entry>>> = IdVec::filled(f.num_blocks(), None);
    let mut escape_cache: Vec<(Inst, bool)> = Vec::new();
    for &b in &cfg.rpo {
        let mut table: Vec<Entry> = match &cfg.preds[b] {
            [p] => out[*p].clone().unwrap_or_default(),
            ps => common_entries(ps, &out),
        };
        let insts: Vec<Inst> = f.layout().block_insts(b).collect();
        for i in insts {
            match f.op(i) {
                Opcode::Load => {
                    let ty = f.data(i).ty;
                    let a = addr_of(f, cfg, f.arg(i, 0));
                    let r = f.res(i);
                    if let Some(e) = table.iter().find(|e| e.addr == a && e.ty == ty) {
                        let v = e.value;
                        f.replace_all_uses(r, v);
                        f.remove_inst(i);
                        changed = true;
                    } else {
                        table.push(Entry {
                            addr: a,
                            ty,
                            value: r,
                        });
                    }
                }
                Opcode::Store => {
                    let v = f.arg(i, 0);
                    let ty = f.ty(v);
                    let a = addr_of(f, cfg, f.arg(i, 1));
                    if table
                        .iter()
                        .any(|e| e.addr == a && e.ty == ty && e.value == v)
                    {
                        // The word already holds `v` (a swap of an element with itself).
                        f.remove_inst(i);
                        changed = true;
                        continue;
                    }
                    let size = ty.bytes() as i64;
                    table.retain(|e| !may_overlap(cx, &a, size, &e.addr, e.ty.bytes() as i64));
                    table.push(Entry {
                        addr: a,
                        ty,
                        value: v,
                    });
                }
                Opcode::Call => {
                    let Some(written) = call_writes(f, cx, cfg, i) else {
                        table.retain(|e| kept_by_any_call(f, &e.addr, &mut escape_cache));
                        continue;
                    };
                    table.retain(|e| !written.iter().any(|&w| may_alias(cx, w, e.addr.base)));
                }
                _ => {}
            }
            if table.len() > 256 {
                table.drain(..128);
            }
        }
        out[b] = Some(table);
    }
    changed
}

/// What a join knows on entry: the words every predecessor's table holds with the same value
/// (a value known on every incoming path dominates the join). Nothing when a predecessor has
/// not been visited yet (a loop's back edge).
fn common_entries(preds: &[Block], out: &IdVec<Block, Option<Vec<Entry>>>) -> Vec<Entry> {
    let mut tables = Vec::with_capacity(preds.len());
    for &p in preds {
        match &out[p] {
            Some(t) => tables.push(t),
            None => return Vec::new(),
        }
    }
    let Some((&first, rest)) = tables.split_first() else {
        return Vec::new();
    };
    if first.is_empty() || rest.iter().any(|t| t.is_empty()) {
        return Vec::new();
    }
    let sets: Vec<FxHashSet<(Addr, Type, Value)>> = rest
        .iter()
        .map(|t| t.iter().map(|e| (e.addr, e.ty, e.value)).collect())
        .collect();
    first
        .iter()
        .filter(|e| sets.iter().all(|s| s.contains(&(e.addr, e.ty, e.value))))
        .cloned()
        .collect()
}

/// Whether a known word at `a` survives a call that may write any memory: only in an alloca
/// whose address never leaves the function.
fn kept_by_any_call(f: &Function, a: &Addr, escape_cache: &mut Vec<(Inst, bool)>) -> bool {
    match a.base {
        Base::Alloca(al) => {
            let esc = match escape_cache.iter().find(|x| x.0 == al) {
                Some(x) => x.1,
                None => {
                    let x = escapes(f, al);
                    escape_cache.push((al, x));
                    x
                }
            };
            !esc
        }
        _ => false,
    }
}

fn dead_stores_local(f: &mut Function, cx: &ModuleCx, cfg: &Cfg) -> bool {
    let mut changed = false;
    let blocks: Vec<Block> = f.layout().blocks().collect();
    for b in blocks {
        // Stores not yet known to be read, newest last.
        let mut pending: Vec<(Inst, Addr, i64)> = Vec::new();
        let insts: Vec<Inst> = f.layout().block_insts(b).collect();
        for i in insts {
            match f.op(i) {
                Opcode::Store => {
                    let size = f.ty(f.arg(i, 0)).bytes() as i64;
                    let a = addr_of(f, cfg, f.arg(i, 1));
                    if let Some(k) = pending
                        .iter()
                        .position(|(_, pa, ps)| *pa == a && *ps == size)
                    {
                        let (dead, _, _) = pending.remove(k);
                        f.remove_inst(dead);
                        changed = true;
                    }
                    pending.push((i, a, size));
                    // Bounded, like the forwarding table: a huge initialiser stays linear.
                    if pending.len() > 256 {
                        pending.drain(..128);
                    }
                }
                Opcode::Load => {
                    let size = f.data(i).ty.bytes() as i64;
                    let a = addr_of(f, cfg, f.arg(i, 0));
                    pending.retain(|(_, pa, ps)| !may_overlap(cx, pa, *ps, &a, size));
                }
                Opcode::Call if call_reads(f, cx, i) => {
                    pending.clear();
                }
                _ => {}
            }
        }
    }
    changed
}
