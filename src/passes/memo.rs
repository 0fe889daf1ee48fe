//! Memoisation of pure tree-recursive functions (a module pass).
//!
//! A pure function's result depends on its arguments alone, so a call may return a remembered
//! result. For a function that calls itself at two or more sites with an argument of the form
//! `param ± constant` (fib, tak and friends: overlapping subproblems), the exponential call
//! tree then collapses to the number of distinct argument tuples.
//!
//! Each such function gets a direct-mapped cache, a zero-initialised global of `ENTRIES` rows
//! `[tag, key_0 .. key_n-1, value]` (32-bit words; float keys compared by their bits, so `-0.0`
//! and `0.0` stay distinct). The entry block hashes the arguments, loads the row and returns the
//! value when the tag is set and the keys match; every `ret` stores its row first. A collision
//! only overwrites the row, so the function stays correct for any argument sequence.
//!
//! The cache is invisible to callers: the function stays pure in its effect summary, which is
//! why this pass runs after the last `effects` and after the passes that move or merge calls.
//! Cost: O(instructions of the candidates).

use crate::analysis::recursion::stepped_self_calls;
use crate::ir::{
    mk, CmpCond, FuncId, Function, GlobalData, GlobalId, GlobalInit, Inst, Module, Opcode, Type,
    Value,
};

/// Rows per cache (a power of two).
const ENTRIES_LOG2: u32 = 12;
/// At most this many parameters take part in the key.
const MAX_PARAMS: usize = 4;
/// Fibonacci hashing multiplier (2^32 / golden ratio).
const HASH_MUL: i64 = 0x9E37_79B1u32 as i32 as i64;

/// Whether `id` is worth a cache: pure, scalar in and out, and tree-recursive on stepped args.
fn candidate(m: &Module, id: FuncId) -> bool {
    let decl = &m.cx.decls[id];
    let sig = &decl.sig;
    if !decl.defined || decl.name == "main" || !decl.effects.pure || sig.variadic {
        return false;
    }
    let scalar = |t: Type| matches!(t, Type::I32 | Type::F32);
    if sig.params.is_empty()
        || sig.params.len() > MAX_PARAMS
        || !sig.params.iter().all(|&t| scalar(t))
        || !scalar(sig.ret)
    {
        return false;
    }
    stepped_self_calls(&m.funcs[id]) >= 2
}

pub fn run_module(m: &mut Module) -> bool {
    let mut changed = false;
    for id in m.defined_funcs() {
        if !candidate(m, id) {
            continue;
        }
        let n = m.cx.decls[id].sig.params.len();
        let stride = 4 * (n as i64 + 2);
        let g = m.add_global(GlobalData {
            name: format!("memo.{}", m.cx.decls[id].name),
            size: (stride as u64) << ENTRIES_LOG2,
            elem: Type::I32,
            init: GlobalInit::Zero,
            is_const: false,
        });
        instrument(&mut m.funcs[id], g, stride);
        changed = true;
    }
    changed
}

/// Rewrites `f` to consult and fill the cache `g` with rows of `stride` bytes.
fn instrument(f: &mut Function, g: GlobalId, stride: i64) {
    let entry = f.entry();
    let params: Vec<Value> = f.params().to_vec();
    let rets: Vec<Inst> = f
        .layout()
        .blocks()
        .filter_map(|b| f.terminator(b))
        .filter(|&t| f.op(t) == Opcode::Ret)
        .collect();
    let ret_ty = f.ty(f.arg(rets[0], 0));

    // The old entry body (after its allocas) moves to a new block; the entry keeps the params.
    let body = f.make_block();
    f.insert_block_after(body, entry);
    let first_real = f
        .layout()
        .block_insts(entry)
        .find(|&i| f.op(i) != Opcode::Alloca);
    if let Some(i) = first_real {
        f.split_tail(i, body);
    }

    // Keys as 32-bit words, hash, row address.
    let at = |f: &mut Function, d, args: &[Value]| {
        let i = f.append_new(entry, d, args);
        f.res(i)
    };
    let mut keys = Vec::with_capacity(params.len());
    for &p in &params {
        keys.push(if f.ty(p) == Type::F32 {
            at(f, mk::unary(Opcode::Bitcast, Type::I32), &[p])
        } else {
            p
        });
    }
    let mul = at(f, mk::iconst(Type::I32, HASH_MUL), &[]);
    let mut h = at(f, mk::binary(Opcode::Mul, Type::I32), &[keys[0], mul]);
    for &k in &keys[1..] {
        let x = at(f, mk::binary(Opcode::Xor, Type::I32), &[h, k]);
        h = at(f, mk::binary(Opcode::Mul, Type::I32), &[x, mul]);
    }
    let shift = at(f, mk::iconst(Type::I32, 32 - ENTRIES_LOG2 as i64), &[]);
    let idx = at(f, mk::binary(Opcode::Lshr, Type::I32), &[h, shift]);
    let base = at(f, mk::gaddr(g), &[]);
    let row = at(f, mk::gep(stride), &[base, idx]);
    let addrs: Vec<Value> = (0..params.len() + 2)
        .map(|k| {
            if k == 0 {
                row
            } else {
                at(f, mk::offset(4 * k as i64), &[row])
            }
        })
        .collect();

    // Hit test: (tag ^ 1) | (key_0 ^ p_0) | ... == 0.
    let tag = at(f, mk::load(Type::I32), &[addrs[0]]);
    let one = at(f, mk::iconst(Type::I32, 1), &[]);
    let mut diff = at(f, mk::binary(Opcode::Xor, Type::I32), &[tag, one]);
    for (k, &key) in keys.iter().enumerate() {
        let stored = at(f, mk::load(Type::I32), &[addrs[k + 1]]);
        let x = at(f, mk::binary(Opcode::Xor, Type::I32), &[stored, key]);
        diff = at(f, mk::binary(Opcode::Or, Type::I32), &[diff, x]);
    }
    let zero = at(f, mk::iconst(Type::I32, 0), &[]);
    let hit = at(f, mk::icmp(CmpCond::Eq), &[diff, zero]);
    let hit_block = f.make_block();
    f.insert_block_after(hit_block, entry);
    f.append_new(entry, mk::brif(hit_block, body, 0), &[hit]);
    let value_addr = addrs[params.len() + 1];
    let load = f.append_new(hit_block, mk::load(ret_ty), &[value_addr]);
    let cached = f.res(load);
    f.append_new(hit_block, mk::ret(), &[cached]);

    // Every original return fills the row.
    for r in rets {
        let v = f.arg(r, 0);
        f.insert_new_before(r, mk::store(), &[v, value_addr]);
        for (k, &key) in keys.iter().enumerate() {
            f.insert_new_before(r, mk::store(), &[key, addrs[k + 1]]);
        }
        f.insert_new_before(r, mk::store(), &[one, addrs[0]]);
    }
}
