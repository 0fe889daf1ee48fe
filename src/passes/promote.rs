//! Scalar promotion of loop-invariant memory locations (store motion).
//!
//! `c[i][j] = c[i][j] + a[i][k] * b[k][j]` in a `k` loop loads and stores the same invariant
//! address every iteration. When nothing else in the loop may touch that location (no other
//! access with a possibly aliasing base, unless the dependence test of [`depend`] shows it
//! disjoint on every iteration, or the value ranges of the indices put the two accesses' bytes
//! apart at offsets from one root (asked for only when the dependence test fails); no call that may read or write it, by the callees'
//! `FuncDecl::reads` and `writes`) and some access to it runs on every
//! iteration (so the address is valid whenever the loop runs), the location lives in a register
//! across the loop: one load in the preheader, one store on each exit edge.
//!
//! Mechanics: the loop's accesses are redirected to a fresh alloca, initialised in the preheader
//! and copied back on every exit edge (split when the exit block has other predecessors);
//! `rewrite::ssa` then builds the SSA form. Loops are taken innermost first, one location at a
//! time, recomputing the analyses after each. Needs: loop-simplified form, CFG, dominator tree,
//! loop forest.
//! Cost: O(promotions * function size).

use crate::analysis::alias::{
    base_of, call_reads, call_writes, may_alias, offset_range, offset_root, Base,
};
use crate::analysis::depend;
use crate::analysis::ivrange::counter_range;
use crate::analysis::{FuncAnalyses, Preserved};
use crate::ir::{mk, Block, Function, Inst, ModuleCx, Opcode, Type, Value};

/// At most this many locations are promoted per function.
const MAX_PROMOTIONS: usize = 32;

/// A promotable location of one loop.
struct Candidate {
    pre: Block,
    addr: Value,
    ty: Type,
    /// The loads and stores of `addr` in the loop.
    accesses: Vec<Inst>,
    /// Exit edges: (block in the loop, target index of its terminator).
    exits: Vec<(Block, usize)>,
}

/// The next location to promote. Without `with_ranges`, a pair of accesses the dependence test
/// cannot separate keeps a location in memory, and the second result says whether that
/// happened (the value ranges may separate them: ask again with them).
fn find(
    f: &Function,
    cx: &ModuleCx,
    am: &mut FuncAnalyses,
    with_ranges: bool,
) -> (Option<Candidate>, bool) {
    let (cfg, dt, forest, ranges) = if with_ranges {
        let (cfg, dt, forest, r) = am.all_ranges(f, cx);
        (cfg, dt, forest, Some(r))
    } else {
        let (cfg, dt, forest) = am.all(f);
        (cfg, dt, forest, None)
    };
    let mut ranges_may_help = false;
    // Innermost loops first.
    let mut loops: Vec<_> = forest.loops.keys().collect();
    loops.sort_by_key(|&l| std::cmp::Reverse(forest.loops[l].depth));
    for l in loops {
        let Some(pre) = forest.preheader(l, cfg) else {
            continue;
        };
        let data = &forest.loops[l];
        let inside = |b: Block| forest.contains(l, b);
        // Memory operations of the loop.
        let mut accesses: Vec<(Inst, Value)> = Vec::new();
        // What the loop's calls read or write; `None` if some call may touch anything.
        let mut touched: Option<Vec<Base>> = Some(Vec::new());
        for &b in &data.blocks {
            for i in f.layout().block_insts(b) {
                match f.op(i) {
                    Opcode::Load => accesses.push((i, f.arg(i, 0))),
                    Opcode::Store => accesses.push((i, f.arg(i, 1))),
                    Opcode::Call => {
                        let (r, w) = (call_reads(f, cx, cfg, i), call_writes(f, cx, cfg, i));
                        touched = match (touched, r, w) {
                            (Some(mut t), Some(r), Some(w)) => {
                                t.extend(r);
                                t.extend(w);
                                Some(t)
                            }
                            _ => None,
                        };
                    }
                    _ => {}
                }
            }
        }
        let Some(touched) = touched else {
            continue;
        };
        let invariant = |v: Value| f.def_block(v).is_some_and(|db| !inside(db));
        // The loop's counters, computed when a candidate first reaches the dependence test.
        let mut counters: Option<Vec<_>> = None;
        let mut tried: Vec<Value> = Vec::new();
        for &(si, addr) in &accesses {
            if f.op(si) != Opcode::Store || !invariant(addr) || tried.contains(&addr) {
                continue;
            }
            tried.push(addr);
            let ty = f.ty(f.arg(si, 0));
            let mine: Vec<Inst> = accesses
                .iter()
                .filter(|a| a.1 == addr)
                .map(|a| a.0)
                .collect();
            let same_type = mine.iter().all(|&i| match f.op(i) {
                Opcode::Load => f.data(i).ty == ty,
                _ => f.ty(f.arg(i, 0)) == ty && f.arg(i, 0) != addr,
            });
            if !same_type {
                continue;
            }
            let base = base_of(f, cfg, addr);
            if touched.iter().any(|&t| may_alias(cx, t, base)) {
                continue;
            }
            let size = |i: Inst| match f.op(i) {
                Opcode::Load => f.data(i).ty.bytes(),
                _ => f.ty(f.arg(i, 0)).bytes(),
            } as i64;
            let counters = counters
                .get_or_insert_with(|| counter_range(f, cfg, dt, forest, l).into_iter().collect());
            let alone = accesses.iter().filter(|a| a.1 != addr).all(|a| {
                let other = base_of(f, cfg, a.1);
                if (!may_alias(cx, base, other) && other != base)
                    || depend::disjoint(f, addr, ty.bytes() as i64, a.1, size(a.0), counters)
                {
                    return true;
                }
                // Byte ranges at offsets from one root that cannot overlap, by the value ranges
                // of the indices where the other access runs (`t[i / 2]` below 600 against
                // `t[1999 - r]` above 1900).
                let Some(r) = ranges else {
                    ranges_may_help |= offset_root(f, addr) == offset_root(f, a.1);
                    return false;
                };
                let at = f.layout().inst_block(a.0).unwrap();
                let extent = |p: Value, bytes: i64| {
                    offset_range(f, p, |v| r.range_at(f, v, at))
                        .and_then(|(root, lo, hi)| Some((root, lo, hi.checked_add(bytes)?)))
                };
                match (extent(addr, ty.bytes() as i64), extent(a.1, size(a.0))) {
                    (Some((ra, la, ea)), Some((rb, lb, eb))) => ra == rb && (ea <= lb || eb <= la),
                    _ => false,
                }
            });
            if !alone {
                continue;
            }
            let every_iteration = mine.iter().any(|&i| {
                let b = f.layout().inst_block(i).unwrap();
                data.latches.iter().all(|&x| dt.dominates(b, x))
            });
            if !every_iteration {
                continue;
            }
            let mut exits = Vec::new();
            for &b in &data.blocks {
                let Some(t) = f.terminator(b) else { continue };
                for (k, c) in f.branch_targets(t).iter().enumerate() {
                    if !inside(c.block) {
                        exits.push((b, k));
                    }
                }
            }
            return (
                Some(Candidate {
                    pre,
                    addr,
                    ty,
                    accesses: mine,
                    exits,
                }),
                false,
            );
        }
    }
    (None, ranges_may_help)
}

fn apply(f: &mut Function, c: Candidate) {
    let entry = f.entry();
    let a = match f.layout().first_inst(entry) {
        Some(first) => f.insert_new_before(first, mk::alloca(4, 4), &[]),
        None => f.append_new(entry, mk::alloca(4, 4), &[]),
    };
    let tmp = f.res(a);
    let pre_t = f.terminator(c.pre).unwrap();
    let v = f.insert_new_before(pre_t, mk::load(c.ty), &[c.addr]);
    let v = f.res(v);
    f.insert_new_before(pre_t, mk::store(), &[v, tmp]);
    for i in c.accesses {
        let n = if f.op(i) == Opcode::Load { 0 } else { 1 };
        f.set_arg(i, n, tmp);
    }
    for (x, k) in c.exits {
        let t = f.terminator(x).unwrap();
        let target = f.branch_targets(t)[k].block;
        let args = f.branch_args(t, k).to_vec();
        let n = f.make_block();
        f.insert_block_after(n, x);
        let l = f.append_new(n, mk::load(c.ty), &[tmp]);
        let lv = f.res(l);
        f.append_new(n, mk::store(), &[lv, c.addr]);
        f.append_new(n, mk::jump(target), &args);
        f.set_branch_target(t, k, n, &[]);
    }
}

pub fn run(f: &mut Function, cx: &ModuleCx, am: &mut FuncAnalyses) -> Preserved {
    let mut changed = false;
    let mut promoted = 0;
    while promoted < MAX_PROMOTIONS {
        let c = match find(f, cx, am, false) {
            (Some(c), _) => c,
            (None, true) => match find(f, cx, am, true) {
                (Some(c), _) => c,
                (None, _) => break,
            },
            (None, false) => break,
        };
        apply(f, c);
        // Exit edges were split.
        am.invalidate(Preserved::none());
        crate::rewrite::ssa::promote_allocas(f, am);
        promoted += 1;
        changed = true;
    }
    Preserved::cached_kept(changed)
}
