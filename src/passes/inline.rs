//! Function inlining (a module pass), followed by removal of functions nobody calls.
//!
//! Order: callers are visited by call-graph level (a function after every callee it may copy),
//! so a callee has already received its own inlining when it is copied; the callers of one
//! level run in parallel. Recursive functions (in a call-graph cycle) are never inlined into
//! others; a small one calling itself from one place is inlined into itself a few levels deep.
//! A call site is inlined when the callee is small (`SMALL` instructions), or is called from
//! exactly one place and is not huge (`SINGLE_SITE`), as long as the caller stays under `CAP`.
//!
//! Mechanics: the caller's block is split after the call; the continuation gets a parameter for
//! the result. The callee's reachable blocks are copied in reverse post-order (so definitions
//! are copied before uses), its entry block becomes an ordinary block whose parameters receive
//! the call's arguments, `ret v` becomes `jump cont(v)`, and copied allocas move to the caller's
//! entry block so that a call inside a loop does not grow the stack.
//! Cost: O(size of the copies).

use crate::analysis::recursion::{self_calls, stepped_self_calls};
use crate::analysis::Cfg;
use crate::ir::func::map_targets;
use crate::ir::{mk, Block, FuncId, Function, IdVec, Inst, Module, ModuleCx, Opcode, Type, Value};
use rayon::prelude::*;
use std::sync::atomic::{AtomicUsize, Ordering};

const SMALL: usize = 40;
const SINGLE_SITE: usize = 4000;
const CAP: usize = 6000;
/// A small function that calls itself from one place gets this many copies of its body at that
/// place (once its own callees are inlined), so it calls itself that many times less often.
const SELF_COPIES: usize = 3;
/// A small function that calls itself from up to this many places gets its body inlined once
/// at each of them.
const MAX_TREE_SITES: usize = 3;

/// Functions in a call-graph cycle (including self-recursion), by Tarjan's SCC algorithm.
fn recursive_funcs(m: &Module, callees: &IdVec<FuncId, Vec<FuncId>>) -> Vec<bool> {
    let n = m.cx.decls.len();
    let mut index = vec![u32::MAX; n];
    let mut low = vec![0u32; n];
    let mut on_stack = vec![false; n];
    let mut stack: Vec<usize> = Vec::new();
    let mut rec = vec![false; n];
    let mut next = 0u32;
    for root in 0..n {
        if index[root] != u32::MAX {
            continue;
        }
        // Iterative Tarjan: (node, next callee position).
        let mut work: Vec<(usize, usize)> = vec![(root, 0)];
        index[root] = next;
        low[root] = next;
        next += 1;
        stack.push(root);
        on_stack[root] = true;
        while let Some(&mut (v, ref mut k)) = work.last_mut() {
            let cs = &callees[FuncId::new(v)];
            if let Some(&c) = cs.get(*k) {
                *k += 1;
                let w = c.index();
                if index[w] == u32::MAX {
                    index[w] = next;
                    low[w] = next;
                    next += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    work.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
            } else {
                work.pop();
                if let Some(&(p, _)) = work.last() {
                    low[p] = low[p].min(low[v]);
                }
                if low[v] == index[v] {
                    let mut comp = Vec::new();
                    loop {
                        let w = stack.pop().unwrap();
                        on_stack[w] = false;
                        comp.push(w);
                        if w == v {
                            break;
                        }
                    }
                    let self_loop = callees[FuncId::new(v)].contains(&FuncId::new(v));
                    if comp.len() > 1 || self_loop {
                        for w in comp {
                            rec[w] = true;
                        }
                    }
                }
            }
        }
    }
    rec
}

pub fn run_module(m: &mut Module) -> bool {
    let ids = m.defined_funcs();
    let mut callees: IdVec<FuncId, Vec<FuncId>> = IdVec::filled(m.cx.decls.len(), Vec::new());
    let mut site_count = vec![0usize; m.cx.decls.len()];
    for &id in &ids {
        let f = &m.funcs[id];
        for i in f.calls() {
            let c = f.callee(i);
            site_count[c.index()] += 1;
            if !callees[id].contains(&c) {
                callees[id].push(c);
            }
        }
    }
    let rec = recursive_funcs(m, &callees);

    // Post-order over the call graph from every defined function.
    let mut order = Vec::new();
    let mut seen = vec![false; m.cx.decls.len()];
    for &root in &ids {
        if seen[root.index()] {
            continue;
        }
        let mut work: Vec<(FuncId, usize)> = vec![(root, 0)];
        seen[root.index()] = true;
        while let Some(&mut (v, ref mut k)) = work.last_mut() {
            if let Some(&c) = callees[v].get(*k) {
                *k += 1;
                if !seen[c.index()] && m.cx.decls[c].defined {
                    seen[c.index()] = true;
                    work.push((c, 0));
                }
            } else {
                order.push(v);
                work.pop();
            }
        }
    }

    // Levels: a function's level is one more than the highest level among the callees it may
    // copy (defined, not recursive, not itself), so the callers of one level read only
    // callees of lower levels, finished already, and take their copies in parallel. A caller's
    // choices depend on its own body and its callees alone: a callee beyond `SMALL` is copied
    // only while its count is 1, when every other counted site is gone, so no other caller
    // holds one; any order of the callers of a level gives the same module.
    let copyable =
        |c: FuncId, caller: FuncId| m.cx.decls[c].defined && !rec[c.index()] && c != caller;
    let mut level = vec![0usize; m.cx.decls.len()];
    let mut levels: Vec<Vec<FuncId>> = Vec::new();
    for &v in &order {
        let l = callees[v]
            .iter()
            .filter(|&&c| copyable(c, v))
            .map(|&c| level[c.index()] + 1)
            .max()
            .unwrap_or(0);
        level[v.index()] = l;
        if levels.len() <= l {
            levels.resize_with(l + 1, Vec::new);
        }
        levels[l].push(v);
    }
    let site_count: Vec<AtomicUsize> = site_count.into_iter().map(AtomicUsize::new).collect();
    let mut changed = false;
    for callers in levels {
        let taken: Vec<(FuncId, Function)> = callers
            .iter()
            .map(|&id| {
                (
                    id,
                    std::mem::replace(&mut m.funcs[id], Function::new(id, "")),
                )
            })
            .collect();
        let (cx, funcs) = (&m.cx, &m.funcs);
        let done: Vec<(FuncId, Function, bool)> = taken
            .into_par_iter()
            .map(|(id, mut f)| {
                let changed = inline_into(&mut f, funcs, cx, &rec, &site_count);
                (id, f, changed)
            })
            .collect();
        for (id, f, c) in done {
            m.funcs[id] = f;
            changed |= c;
        }
    }

    // Functions `main` no longer reaches through calls (all of them, also callees of removed
    // functions) become declarations without bodies. Without `main` (a library module), the
    // functions nobody calls are the roots.
    let mut called = vec![false; m.cx.decls.len()];
    for &id in &ids {
        for i in m.funcs[id].calls() {
            called[m.funcs[id].callee(i).index()] = true;
        }
    }
    let mut reached = vec![false; m.cx.decls.len()];
    let mut work: Vec<FuncId> = match m.cx.func_by_name("main") {
        Some(main) if m.cx.decls[main].defined => vec![main],
        _ => ids
            .iter()
            .copied()
            .filter(|id| !called[id.index()])
            .collect(),
    };
    for &id in &work {
        reached[id.index()] = true;
    }
    while let Some(id) = work.pop() {
        for i in m.funcs[id].calls() {
            let c = m.funcs[id].callee(i);
            if m.cx.decls[c].defined && !reached[c.index()] {
                reached[c.index()] = true;
                work.push(c);
            }
        }
    }
    for &id in &ids {
        if !reached[id.index()] {
            m.cx.decls[id].defined = false;
            let name = m.funcs[id].name.clone();
            m.funcs[id] = Function::new(id, name);
            changed = true;
        }
    }
    changed
}

/// Inlines into `caller` (taken out of `funcs`) the calls it may copy, reading the callees in
/// `funcs`; `site_count` counts the call sites of each function not copied yet. Returns whether
/// `caller` changed.
fn inline_into(
    caller: &mut Function,
    funcs: &id_arena::Arena<Function, FuncId>,
    cx: &ModuleCx,
    rec: &[bool],
    site_count: &[AtomicUsize],
) -> bool {
    // Calls whose results nobody reads (a callee's constant result taken by `retconst`) are
    // not copied, and the code copies leave dead does not count in this function's size when
    // its own callers judge it.
    let mut changed = remove_dead(caller, cx);
    for i in caller.calls() {
        let c = caller.callee(i);
        if !cx.decls[c].defined || rec[c.index()] || c == caller.id {
            continue;
        }
        let csize = funcs[c].inst_count();
        let sites = &site_count[c.index()];
        let ok = csize <= SMALL || (sites.load(Ordering::Relaxed) == 1 && csize <= SINGLE_SITE);
        if !ok || caller.inst_count() + csize > CAP {
            continue;
        }
        inline_call(caller, i, &funcs[c]);
        sites.fetch_sub(1, Ordering::Relaxed);
        changed = true;
    }
    changed |= unroll_recursion(caller);
    remove_dead(caller, cx);
    changed
}

/// `rewrite::dead` on `f`.
fn remove_dead(f: &mut Function, cx: &crate::ir::ModuleCx) -> bool {
    let cfg = Cfg::compute(f);
    crate::rewrite::dead::remove_dead(f, cx, &cfg)
}

/// Inlines a small function into its calls of itself. One call of itself (linear recursion: a
/// descent that halves or divides its argument, say) gets `SELF_COPIES` levels of its body;
/// two or three on split arguments (divide and conquer: `(lo + hi) / 2`) get one level at each,
/// so the body grows at most fourfold and each call does the work of a node and its children:
/// fewer calls, and each copy's tests branch from a place of their own (the leaf test of a
/// child is not the parent's). Calls on `param ± constant` (overlapping subproblems) are left
/// for memoisation. Returns whether it did.
fn unroll_recursion(f: &mut Function) -> bool {
    if f.inst_count() > SMALL {
        return false;
    }
    let sites = self_calls(f);
    let tree = (2..=MAX_TREE_SITES).contains(&sites.len()) && stepped_self_calls(f) == 0;
    if sites.len() != 1 && !tree {
        return false;
    }
    let body = f.clone();
    if tree {
        for site in sites {
            inline_call(f, site, &body);
        }
    } else {
        for _ in 0..SELF_COPIES {
            let [site] = self_calls(f)[..] else { break };
            inline_call(f, site, &body);
        }
    }
    true
}

/// Replaces call `call` in `f` by a copy of `callee`'s body.
pub fn inline_call(f: &mut Function, call: Inst, callee: &Function) {
    let b = f.layout().inst_block(call).unwrap();
    let args = f.args(call).to_vec();
    let ret_ty = f.data(call).ty;
    let result = f.result(call);

    // Continuation block: everything after the call.
    let cont = f.make_block();
    f.insert_block_after(cont, b);
    if let Some(next) = f.layout().next_inst(call) {
        f.split_tail(next, cont);
    }
    if let Some(r) = result {
        let p = f.append_block_param(cont, ret_ty);
        f.replace_all_uses(r, p);
    }
    f.remove_inst(call);

    // Room for the whole copy at once: the tables grow once, not by doubling as rows arrive.
    f.reserve(
        callee.insts.data.len(),
        callee.num_values(),
        callee.uses().value.len(),
    );
    let cfg = Cfg::compute(callee);
    let mut bmap: IdVec<Block, Option<Block>> = IdVec::filled(callee.num_blocks(), None);
    let mut vmap: IdVec<Value, Option<Value>> = IdVec::filled(callee.num_values(), None);
    // Insert copies between the call block and the continuation, in callee RPO.
    let mut prev = b;
    for &cb in &cfg.rpo {
        let nb = f.make_block();
        f.insert_block_after(nb, prev);
        prev = nb;
        bmap[cb] = Some(nb);
        for &p in &callee.blocks.params[cb] {
            let np = f.append_block_param(nb, callee.ty(p));
            vmap[p] = Some(np);
        }
    }
    let entry_copy = bmap[callee.entry()].unwrap();
    f.append_new(b, mk::jump(entry_copy), &args);
    let caller_entry = f.entry();
    let map_block =
        |bm: &IdVec<Block, Option<Block>>, x: Block| bm[x].expect("branch to unreachable block");
    let mut new_args: Vec<Value> = Vec::new();
    for &cb in &cfg.rpo {
        let nb = bmap[cb].unwrap();
        for i in callee.layout().block_insts(cb) {
            let mut d = *callee.data(i);
            new_args.clear();
            new_args.extend(
                callee
                    .args(i)
                    .iter()
                    .map(|&a| vmap[a].expect("use before definition in RPO copy")),
            );
            match d.op {
                Opcode::Ret => {
                    f.append_new(nb, mk::jump(cont), &new_args);
                    continue;
                }
                _ => map_targets(&mut d, |x| map_block(&bmap, x)),
            }
            let ni = if d.op == Opcode::Alloca {
                let ni = f.make_inst(d, &[]);
                match f.layout().first_inst(caller_entry) {
                    Some(first) => f.insert_inst_before(ni, first),
                    None => f.append_inst(ni, caller_entry),
                }
                ni
            } else {
                f.append_new(nb, d, &new_args)
            };
            if let (Some(r), Some(nr)) = (callee.result(i), f.result(ni)) {
                vmap[r] = Some(nr);
            }
        }
    }
    debug_assert!(ret_ty == Type::Void || !f.blocks.params[cont].is_empty());
}
