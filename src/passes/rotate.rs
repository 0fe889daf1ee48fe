//! Loop rotation: a loop that tests its exit in the header gets the test at the bottom.
//!
//! Lowering puts a `while`'s condition both in front of the loop and at its end, but a loop whose
//! exit is a `break` at the top of its body (`while (1) { if (i >= n) break; ... }`), or that
//! inlining or branch folding left with the test first, runs its header's test on entry to every
//! trip and jumps back to it from the latch. Loop passes that count trips, compute exit values,
//! unroll or delete loops read the rotated shape (the latch is the exiting block), and the
//! machine code of an unrotated loop spends a jump per trip.
//!
//! Shape handled: header `H(p)` whose terminator `brif c, X(..), Y(..)` leaves the loop on one
//! edge and stays on the other, at most `MAX_HEADER` instructions, every latch ending in
//! `jump H(a)`. Each latch's jump is replaced by a copy of `H` with `p := a`; `H` is then entered
//! only from the preheader and becomes the loop's guard, and the block `H` branched to inside
//! the loop becomes the header. Values of `H` used elsewhere now have two definitions (the guard's
//! and each latch's copy): each goes through a fresh stack slot, stored where it is defined and
//! loaded where it is used, and `rewrite::ssa::promote_slots` places the block parameters. The
//! trip count and the code executed per trip are unchanged; the code grows by one header per
//! latch. A latch that only joins back edges ending in jumps (loop-simplified form gives a loop
//! with `continue`s one latch) is taken apart first, so each of those paths gets its own copy of
//! the test instead of sharing one that half of them must jump to. Needs: CFG, dominator tree,
//! loop forest, loop-simplified form. Preserves nothing.
//! Cost: O(loop headers) plus one promotion per value crossing a rotated header.

use crate::analysis::{FuncAnalyses, Preserved};
use crate::ir::{mk, Block, Function, Inst, ModuleCx, Opcode, Value};
use crate::rewrite::blocks::forwarded_args;
use rustc_hash::FxHashMap;

/// Largest header copied, in instructions (its terminator included), per latch.
const MAX_HEADER: usize = 16;

pub fn run(f: &mut Function, _cx: &ModuleCx, am: &mut FuncAnalyses) -> Preserved {
    let (cfg, _, forest) = am.all(f);
    let mut plans: Vec<(Block, Vec<Block>, Option<Block>)> = Vec::new();
    for (l, data) in forest.loops.iter() {
        let h = data.header;
        let Some(t) = f.terminator(h) else { continue };
        if f.op(t) != Opcode::Brif || forest.preheader(l, cfg).is_none() {
            continue;
        }
        let succs: Vec<Block> = f.succs(h).collect();
        let inside: Vec<bool> = succs.iter().map(|&s| forest.contains(l, s)).collect();
        // One edge out, one in, and not back into the header itself.
        if inside[0] == inside[1] || succs.contains(&h) {
            continue;
        }
        // A latch that only joins back edges ending in jumps (loop-simplified form's single
        // latch) is taken apart: each of those edges gets its own copy of the header, as with
        // the `continue`s of a loop before the join, so each path tests on its own.
        let join = match data.latches[..] {
            [b] if f.layout().block_insts(b).count() == 1
                && cfg.preds[b].len() > 1
                && cfg.preds[b]
                    .iter()
                    .all(|&p| f.terminator(p).map(|j| f.op(j)) == Some(Opcode::Jump)) =>
            {
                Some(b)
            }
            _ => None,
        };
        let latches = match join {
            Some(b) => &cfg.preds[b],
            None => &data.latches,
        };
        if latches
            .iter()
            .any(|&b| f.terminator(b).map(|j| f.op(j)) != Some(Opcode::Jump))
        {
            continue;
        }
        let size = f.layout().block_insts(h).count();
        if size * latches.len() > MAX_HEADER {
            continue;
        }
        if f.layout()
            .block_insts(h)
            .any(|i| matches!(f.op(i), Opcode::Alloca | Opcode::Ret))
        {
            continue;
        }
        plans.push((h, latches.to_vec(), join));
    }
    if plans.is_empty() {
        return Preserved::all();
    }
    let mut slots: Vec<Inst> = Vec::new();
    for (h, latches, join) in plans {
        if let Some(b) = join {
            unjoin(f, b, h, &latches);
        }
        rotate(f, h, &latches, &mut slots);
    }
    am.invalidate(Preserved::none());
    crate::rewrite::ssa::promote_slots(f, am, &slots);
    Preserved::cached_kept(true)
}

/// Sends the jumps of `preds` to `join` (a block that only jumps to `h`) straight to `h`, with
/// `join`'s arguments to `h` read through its parameters, and drops `join`.
fn unjoin(f: &mut Function, join: Block, h: Block, preds: &[Block]) {
    let jt = f.terminator(join).unwrap();
    let out: Vec<Value> = f.branch_args(jt, 0).to_vec();
    let params: Vec<Value> = f.blocks.params[join].to_vec();
    for &p in preds {
        let t = f.terminator(p).unwrap();
        let args = forwarded_args(&out, &params, f.branch_args(t, 0));
        f.set_branch_target(t, 0, h, &args);
    }
    f.remove_block(join);
}

/// Replaces each latch's `jump h(..)` by a copy of `h` and routes `h`'s values used outside it
/// through stack slots (appended to `slots`).
fn rotate(f: &mut Function, h: Block, latches: &[Block], slots: &mut Vec<Inst>) {
    let params: Vec<Value> = f.blocks.params[h].to_vec();
    let insts: Vec<Inst> = f.layout().block_insts(h).collect();
    // Per latch: the copy's value for each value of `h`, and the first copied instruction.
    let mut copies: Vec<(FxHashMap<Value, Value>, Inst)> = Vec::with_capacity(latches.len());
    // Per latch: its last instruction before the copy.
    let mut kept: Vec<Option<Inst>> = Vec::with_capacity(latches.len());
    for &lt in latches {
        let j = f.terminator(lt).unwrap();
        let mut vmap: FxHashMap<Value, Value> = FxHashMap::default();
        for (&p, &a) in params.iter().zip(f.args(j)) {
            vmap.insert(p, a);
        }
        f.remove_inst(j);
        kept.push(f.layout().last_inst(lt));
        let mut first = None;
        for &i in &insts {
            let d = *f.data(i);
            let args: Vec<Value> = f
                .args(i)
                .iter()
                .map(|a| *vmap.get(a).unwrap_or(a))
                .collect();
            let ni = f.append_new(lt, d, &args);
            first.get_or_insert(ni);
            if let (Some(r), Some(nr)) = (f.result(i), f.result(ni)) {
                vmap.insert(r, nr);
            }
        }
        copies.push((vmap, first.unwrap()));
    }
    // Values of `h` read outside it, with their definitions: a parameter (None) or an
    // instruction. A parameter read outside is redefined at each latch by the value the latch
    // passed, which is read there too (a rotating `h(p2, p3, p1)`).
    let all: Vec<(Value, Option<Inst>)> = params
        .iter()
        .map(|&p| (p, None))
        .chain(
            insts
                .iter()
                .filter_map(|&i| f.result(i).map(|r| (r, Some(i)))),
        )
        .collect();
    let index: FxHashMap<Value, usize> = all.iter().enumerate().map(|(k, d)| (d.0, k)).collect();
    let mut read: Vec<bool> = all
        .iter()
        .map(|&(v, _)| {
            f.uses_of(v)
                .any(|u| f.layout().inst_block(f.uses().user[u]) != Some(h))
        })
        .collect();
    let mut work: Vec<usize> = (0..params.len()).filter(|&k| read[k]).collect();
    while let Some(k) = work.pop() {
        for (vmap, _) in &copies {
            if let Some(&j) = index.get(&vmap[&params[k]]) {
                if !read[j] {
                    read[j] = true;
                    if j < params.len() {
                        work.push(j);
                    }
                }
            }
        }
    }
    let defs: Vec<(Value, Option<Inst>)> = all
        .into_iter()
        .zip(read)
        .filter_map(|(d, r)| r.then_some(d))
        .collect();
    if defs.is_empty() {
        return;
    }
    let entry_first = f.layout().first_inst(f.entry()).unwrap();
    let h_first = insts[0];
    let mut slot_of: Vec<Value> = Vec::with_capacity(defs.len());
    for &(v, def) in &defs {
        let slot = f.insert_new_before(entry_first, mk::alloca(8, 8), &[]);
        slots.push(slot);
        let s = f.res(slot);
        slot_of.push(s);
        match def {
            None => {
                f.insert_new_before(h_first, mk::store(), &[v, s]);
            }
            Some(i) => {
                let st = f.make_inst(mk::store(), &[v, s]);
                f.insert_inst_after(st, i);
            }
        }
        for (vmap, first) in &copies {
            let nv = vmap[&v];
            match def {
                None => {
                    f.insert_new_before(*first, mk::store(), &[nv, s]);
                }
                Some(_) => {
                    let ni = f.def_inst(nv).unwrap();
                    let st = f.make_inst(mk::store(), &[nv, s]);
                    f.insert_inst_after(st, ni);
                }
            }
        }
    }
    // The copy at the end of a latch reads `h`'s values as they were when the latch jumped,
    // before its own stores redefine them (`h(p2, p1)` swaps): its loads go in front of it.
    let mut copy_start: FxHashMap<Inst, Inst> = FxHashMap::default();
    for (&lt, &last) in latches.iter().zip(&kept) {
        let start = match last {
            Some(i) => f.layout().next_inst(i),
            None => f.layout().first_inst(lt),
        }
        .unwrap();
        let mut i = Some(start);
        while let Some(x) = i {
            copy_start.insert(x, start);
            i = f.layout().next_inst(x);
        }
    }
    // Every read outside `h` (the copies' reads of `h`'s values included) becomes a load.
    for (&(v, _), &s) in defs.iter().zip(&slot_of) {
        let ty = f.ty(v);
        let outside: Vec<_> = f
            .uses_of(v)
            .filter(|&u| f.layout().inst_block(f.uses().user[u]) != Some(h))
            .collect();
        for u in outside {
            let user = f.uses().user[u];
            let at = copy_start.get(&user).copied().unwrap_or(user);
            let ld = f.insert_new_before(at, mk::load(ty), &[s]);
            let r = f.res(ld);
            f.set_use(u, r);
        }
    }
}
