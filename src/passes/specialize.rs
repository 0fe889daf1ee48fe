//! Copies of self-recursive functions for constant arguments (a module pass): constant
//! propagation across calls by cloning.
//!
//! A function that calls itself is never inlined into its callers, so a call `pow(x, 122)` runs
//! the general body: it tests the exponent, halves it and recurses, on every call. Here the
//! call's constant arguments are given to the body (`analysis::constants`): the tests they
//! decide fold, and the self-calls the remaining code makes get constant arguments of their own
//! (`pow(b, 61)`), which are followed in turn. When every self-call reached is on constants
//! again and the whole set of argument tuples is small (a descent that halves a constant, a
//! counter with a constant bound), each tuple gets a copy of the body with its constants folded
//! in and its self-calls sent to the copies for theirs. The copies then form a chain or a tree
//! that ends: none is recursive, so `inline` flattens them into the caller like any small
//! function. A tuple set that reaches a self-call whose arguments are not constants (the general
//! case: `qsort(a, lo, p - 1)`), grows past `MAX_COPIES` or `MAX_COPIED`, or includes a tuple
//! whose constants leave more than two thirds of the body (a depth limit tested once in a large
//! search: copies would multiply the code for little gain) is left alone.
//!
//! Copies are shared by every call with the same function and constants, are named after the
//! function with a numeric suffix (`f.1`: no source name holds a dot), and take the same
//! parameters (the constant ones are simply not read). Cost: O(tuples × body size) per
//! function and call constant tuple.

use crate::analysis::constants::{Cell, Constants};
use crate::analysis::recursion::self_calls;
use crate::analysis::{Cfg, FuncAnalyses};
use crate::ir::fold::{constant_value, Const};
use crate::ir::{FuncDecl, FuncId, Function, Inst, Module, ModuleCx, Opcode};
use crate::rewrite::blocks::{fold_constant_branches, remove_unreachable};
use crate::rewrite::consts::apply_constants;
use crate::rewrite::dead::remove_dead;
use rustc_hash::FxHashMap;

/// Functions larger than this (instructions) are not copied.
const MAX_BODY: usize = 300;
/// At most this many copies of one function for one call's constants.
const MAX_COPIES: usize = 24;
/// At most this many instructions left in the copies for one call's constants, together.
const MAX_COPIED: usize = 800;

/// What is known of each parameter: a constant or nothing.
type Key = Vec<Option<Const>>;

/// The copies one call's constants need: their keys (the call's first) and, per copy, the
/// self-calls that go to another copy.
struct Plan {
    keys: Vec<Key>,
    calls: Vec<Vec<(Inst, usize)>>,
}

fn cells(key: &Key) -> Vec<Cell> {
    key.iter()
        .map(|k| k.map_or(Cell::Bottom, Cell::Const))
        .collect()
}

/// Instructions that may run and are not proven constant.
fn residual(f: &Function, sol: &Constants) -> usize {
    f.layout()
        .blocks()
        .filter(|&b| sol.is_executable(b))
        .flat_map(|b| f.layout().block_insts(b))
        .filter(|&i| {
            f.result(i)
                .is_none_or(|r| !matches!(sol.cell(r), Cell::Const(_)))
        })
        .count()
}

/// The copies `f` needs for a call with `root`, or `None` when the tuples do not close into a
/// small set of bodies that each fold something.
fn plan(f: &Function, root: Key) -> Option<Plan> {
    let general = residual(f, &Constants::solve(f, &cells(&vec![None; root.len()])));
    let mut keys = vec![root];
    let mut index: FxHashMap<Key, usize> = FxHashMap::default();
    index.insert(keys[0].clone(), 0);
    let mut calls: Vec<Vec<(Inst, usize)>> = Vec::new();
    let mut copied = 0;
    let mut k = 0;
    while k < keys.len() {
        let sol = Constants::solve(f, &cells(&keys[k]));
        let left = residual(f, &sol);
        copied += left;
        if left * 3 > general * 2 || copied > MAX_COPIED {
            return None;
        }
        let mut mine = Vec::new();
        for b in f.layout().blocks().filter(|&b| sol.is_executable(b)) {
            for i in f.layout().block_insts(b) {
                if f.op(i) != Opcode::Call || f.callee(i) != f.id {
                    continue;
                }
                let key: Key = f
                    .args(i)
                    .iter()
                    .map(|&a| match sol.cell(a) {
                        Cell::Const(c) => Some(c),
                        _ => None,
                    })
                    .collect();
                if key.iter().all(Option::is_none) {
                    return None;
                }
                let next = keys.len();
                let to = *index.entry(key.clone()).or_insert(next);
                if to == next {
                    if next == MAX_COPIES {
                        return None;
                    }
                    keys.push(key);
                }
                mine.push((i, to));
            }
        }
        calls.push(mine);
        k += 1;
    }
    Some(Plan { keys, calls })
}

/// A copy of `f` as the new function `id` with `key`'s constants folded in, its self-calls in
/// `calls` sent to the given functions.
fn copy(
    f: &Function,
    cx: &ModuleCx,
    id: FuncId,
    name: &str,
    key: &Key,
    calls: &[(Inst, FuncId)],
) -> Function {
    let mut g = f.clone();
    g.id = id;
    g.name = name.to_string();
    for &(i, to) in calls {
        g.insts.data[i].imm = to.index() as i64;
    }
    let sol = Constants::solve(&g, &cells(key));
    apply_constants(&mut g, &sol);
    fold_constant_branches(&mut g);
    remove_unreachable(&mut g, &mut FuncAnalyses::new());
    let cfg = Cfg::compute(&g);
    remove_dead(&mut g, cx, &cfg);
    g
}

pub fn run_module(m: &mut Module) -> bool {
    let ids = m.defined_funcs();
    let candidate: Vec<bool> = (0..m.cx.decls.len())
        .map(|k| {
            let id = FuncId::new(k);
            m.cx.decls[id].defined
                && m.cx.decls[id].name != "main"
                && m.funcs[id].inst_count() <= MAX_BODY
                && !self_calls(&m.funcs[id]).is_empty()
        })
        .collect();
    // Copies made so far, by function and constants; and how many each function has.
    let mut copies: FxHashMap<(FuncId, Key), FuncId> = FxHashMap::default();
    let mut count: FxHashMap<FuncId, usize> = FxHashMap::default();
    let mut changed = false;
    for caller in ids {
        for site in m.funcs[caller].calls() {
            let f = &m.funcs[caller];
            let c = f.callee(site);
            if c == caller || !candidate[c.index()] {
                continue;
            }
            let key: Key = f.args(site).iter().map(|&a| constant_value(f, a)).collect();
            if key.iter().all(Option::is_none) {
                continue;
            }
            let target = match copies.get(&(c, key.clone())) {
                Some(&t) => t,
                None => {
                    let Some(p) = plan(&m.funcs[c], key) else {
                        continue;
                    };
                    make_copies(m, c, &p, &mut copies, &mut count)
                }
            };
            m.funcs[caller].insts.data[site].imm = target.index() as i64;
            changed = true;
        }
    }
    changed
}

/// Adds the copies of `plan` that do not exist yet; returns the one for its first key.
fn make_copies(
    m: &mut Module,
    c: FuncId,
    plan: &Plan,
    copies: &mut FxHashMap<(FuncId, Key), FuncId>,
    count: &mut FxHashMap<FuncId, usize>,
) -> FuncId {
    let mut new = Vec::new();
    let ids: Vec<FuncId> = plan
        .keys
        .iter()
        .enumerate()
        .map(|(k, key)| {
            if let Some(&id) = copies.get(&(c, key.clone())) {
                return id;
            }
            let n = count.entry(c).or_insert(0);
            *n += 1;
            let name = format!("{}.{}", m.cx.decls[c].name, n);
            let id = m.declare_func(&name, m.cx.decls[c].sig.clone(), true);
            // What the original may do and return, the copy may too.
            m.cx.decls[id] = FuncDecl {
                name,
                ..m.cx.decls[c].clone()
            };
            copies.insert((c, key.clone()), id);
            new.push((id, k));
            id
        })
        .collect();
    for (id, k) in new {
        let calls: Vec<(Inst, FuncId)> =
            plan.calls[k].iter().map(|&(i, to)| (i, ids[to])).collect();
        let name = m.cx.decls[id].name.clone();
        let g = copy(&m.funcs[c], &m.cx, id, &name, &plan.keys[k], &calls);
        m.funcs[id] = g;
    }
    ids[0]
}
