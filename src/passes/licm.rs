//! Loop-invariant code motion.
//!
//! 1. Every loop has a preheader (loop-simplified form, established before the pass).
//! 2. Loops are visited innermost first; in each, instructions in reverse post-order whose
//!    operands are all defined outside the loop move to the end of the preheader:
//!    - pure arithmetic freely; a division must not trap (or overflow) where the program would
//!      not have run it, so one whose block may not run on every iteration moves as it is
//!      only by a constant other than 0 and -1, or by a value whose range at the preheader
//!      excludes 0, and -1 unless the dividend cannot be the type's minimum; otherwise its
//!      divisor is guarded in the preheader (`d == 0 ? 1 : d`; for a remainder, whose -1
//!      case equals its 1 case, `d` in {0, -1} becomes 1), which changes nothing where the
//!      division ran before; a division that may overflow stays;
//!    - loads, pure calls and divisions that may overflow only when their block runs on every iteration
//!      (it dominates every latch and exit) or, for loads, when the address is a constant
//!      offset inside a global or stack object (it cannot fault); loads also only when nothing
//!      in the loop may write the loaded bytes (`alias`): a store through a different base,
//!      or at offsets from the same root that cannot overlap, by constant offsets or by the
//!      value ranges of its indices (`a[24][i % 30]` against `a[20][14]`; ranges computed
//!      only when a loop asks), or by offsets that differ by whole rows plus a part that keeps
//!      the accesses apart (`a[i][4]` against `a[14][6]`, `analysis::depend`).
//!    - instructions that compute the same (equal operands, constants by value: the copies
//!      of an unrolled body) move once; the others' uses read the first.
//! 3. Then whole inner loops move out of their parent loop when they compute the same thing on
//!    every visit (see [`hoist_loops`]).
//!
//! Needs: loop-simplified form, CFG, dominator tree, loop forest. Keeps the CFG unless a loop
//! moves. Cost: O(loops * loop size).

use crate::analysis::alias::{
    base_of, call_writes, constant_offset, dereferenceable, escapes, may_alias, offset_range,
    offset_root, Base,
};
use crate::analysis::depend::disjoint;
use crate::analysis::loops::Loop;
use crate::analysis::range::{Interval, Ranges};
use crate::analysis::{Cfg, DomTree, FuncAnalyses, LoopForest, Preserved};
use crate::ir::{mk, Block, CmpCond, Function, Inst, ModuleCx, Opcode, Type, Value};
use rustc_hash::FxHashMap;
use std::collections::hash_map::Entry;

/// Whether an instruction may be executed even where the original program would not have.
fn speculatable(f: &Function, i: Inst) -> bool {
    let d = f.data(i);
    match d.op {
        Opcode::Sdiv | Opcode::Srem => {
            matches!(f.as_iconst(f.arg(i, 1)), Some(c) if c != 0 && c != -1)
        }
        Opcode::Alloca | Opcode::Load | Opcode::Call => false,
        op => op.is_pure(),
    }
}

/// Whether `i` is a load that cannot fault wherever it runs: from inside a global or stack
/// object (whether the loop writes it is checked apart).
fn speculatable_load(f: &Function, cx: &ModuleCx, i: Inst) -> bool {
    f.op(i) == Opcode::Load && dereferenceable(f, cx, f.arg(i, 0), f.data(i).ty.bytes())
}

/// Whether an instruction may move at all (given its block runs every iteration).
fn movable(f: &Function, cx: &ModuleCx, i: Inst) -> bool {
    let d = f.data(i);
    match d.op {
        Opcode::Call => cx.decls[f.callee(i)].effects.pure && d.ty != Type::Void,
        Opcode::Load => true,
        Opcode::Alloca => false,
        op => op.is_pure(),
    }
}

/// Where a write of the loop lands inside its root pointer.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Extent {
    /// Bytes `[lo, end)` from `root`.
    Bytes {
        root: Value,
        lo: i64,
        end: i64,
    },
    /// A store of `bytes` bytes at `ptr` in `block`, at an offset from `root` that is not
    /// constant: its extent comes from the ranges of its indices, computed when a load at the
    /// same root asks.
    Indexed {
        root: Value,
        ptr: Value,
        block: Block,
        bytes: i64,
    },
    Unknown,
}

/// A write of the loop: its base, where it lands, and for a store its address and size (for
/// the dependence test when the extents overlap).
#[derive(PartialEq)]
struct LoopWrite {
    base: Base,
    extent: Extent,
    store: Option<(Value, i64)>,
}

struct LoopMem {
    /// What the loop's stores write, and what its calls write when their summary is known
    /// (whole objects).
    writes: Vec<LoopWrite>,
    /// A call in the loop may write any memory.
    writing_call: bool,
}

/// Value ranges, computed on the first question (most loops never ask).
struct LazyRanges<'a> {
    cfg: &'a Cfg,
    dt: &'a DomTree,
    ranges: Option<Ranges>,
    /// The values that existed when `ranges` was computed.
    known: usize,
}

impl LazyRanges<'_> {
    fn get(&mut self, f: &Function, cx: &ModuleCx) -> &Ranges {
        let (cfg, dt) = (self.cfg, self.dt);
        let known = &mut self.known;
        self.ranges.get_or_insert_with(|| {
            *known = f.num_values();
            Ranges::compute(f, cx, cfg, dt)
        })
    }

    /// The range of `v` where block `at` runs; the whole type for a value made after the
    /// ranges were computed (a guard's).
    fn range_at(&mut self, f: &Function, cx: &ModuleCx, v: Value, at: Block) -> Interval {
        self.get(f, cx);
        match &self.ranges {
            Some(r) if v.index() < self.known => r.range_at(f, v, at),
            _ => Interval::full(f.ty(v)),
        }
    }

    /// What division or remainder `i` needs to run at the end of block `at` wherever it ran
    /// before: `Some(Guard::None)` when the ranges there keep its divisor from 0 (and from -1
    /// unless the dividend cannot be the type's minimum), or when the divisor is a guard's
    /// result; a zero guard for a division whose -1 case is excluded that way; a guard of 0
    /// and -1 for a remainder (`x % -1` is 0, as `x % 1`); `None` for anything else.
    fn division_guard(&mut self, f: &Function, cx: &ModuleCx, i: Inst, at: Block) -> Option<Guard> {
        let op = f.op(i);
        if !matches!(op, Opcode::Sdiv | Opcode::Srem) {
            return None;
        }
        let (x, d) = (f.arg(i, 0), f.arg(i, 1));
        let guarded = guard_of(f, d);
        if guarded == Some(Guard::ZeroOrMinusOne) {
            return Some(Guard::None);
        }
        let rd = self.range_at(f, cx, d, at);
        if rd.is_empty() {
            return None;
        }
        let min = Interval::full(f.ty(x)).lo;
        let overflow = rd.contains(-1) && self.range_at(f, cx, x, at).contains(min);
        let zero = rd.contains(0) && guarded.is_none();
        match (overflow, zero, op) {
            (false, false, _) => Some(Guard::None),
            (false, true, _) => Some(Guard::Zero),
            (true, _, Opcode::Srem) => Some(Guard::ZeroOrMinusOne),
            (true, _, _) => None,
        }
    }

    /// The bytes a `bytes`-byte access at `ptr` in `block` may touch, as `(root, lo, end)`.
    fn extent(
        &mut self,
        f: &Function,
        cx: &ModuleCx,
        ptr: Value,
        block: Block,
        bytes: i64,
    ) -> Option<(Value, i64, i64)> {
        let r = self.get(f, cx);
        let (root, lo, hi) = offset_range(f, ptr, |v| r.range_at(f, v, block))?;
        Some((root, lo, hi.checked_add(bytes)?))
    }
}

impl LoopMem {
    /// Whether the loop may write the `bytes` bytes at `ptr` (whose base is `base`, read in
    /// `block`): a write to a possibly aliasing base, unless both lie at offsets from one root
    /// whose byte ranges do not overlap.
    fn may_write(
        &mut self,
        f: &Function,
        cx: &ModuleCx,
        ranges: &mut LazyRanges,
        (base, ptr, block, bytes): (Base, Value, Block, i64),
    ) -> bool {
        let at = constant_offset(f, ptr).map(|(root, off)| (root, off, off + bytes));
        // The loaded bytes by the ranges, asked for once and only without a constant offset.
        let mut read: Option<Option<(Value, i64, i64)>> = at.map(Some);
        for w in &mut self.writes {
            if !may_alias(cx, w.base, base) {
                continue;
            }
            // Offsets that differ by a multiple of a row plus a constant part that keeps the
            // accesses apart (`t[i][4]` against `t[14][6]`): disjoint whatever the extents say.
            let apart = |w: &LoopWrite| {
                w.store
                    .is_some_and(|(wptr, wbytes)| disjoint(f, ptr, bytes, wptr, wbytes, &[]))
            };
            if let Extent::Indexed {
                root,
                ptr: wptr,
                block: wblock,
                bytes: wbytes,
            } = w.extent
            {
                let same_root = match at {
                    Some((r, _, _)) => r == root,
                    None => offset_root(f, ptr) == root,
                };
                if !same_root {
                    if apart(w) {
                        continue;
                    }
                    return true;
                }
                w.extent = match ranges.extent(f, cx, wptr, wblock, wbytes) {
                    Some((root, lo, end)) => Extent::Bytes { root, lo, end },
                    None => Extent::Unknown,
                };
            }
            let Extent::Bytes { root, lo, end } = w.extent else {
                if apart(w) {
                    continue;
                }
                return true;
            };
            let read = *read.get_or_insert_with(|| ranges.extent(f, cx, ptr, block, bytes));
            match read {
                Some((r, rlo, rend)) if r == root && (rend <= lo || end <= rlo) => {}
                _ if apart(w) => {}
                _ => return true,
            }
        }
        false
    }
}

fn loop_memory(f: &Function, cx: &ModuleCx, cfg: &Cfg, blocks: &[Block]) -> LoopMem {
    let mut m = LoopMem {
        writes: Vec::new(),
        writing_call: false,
    };
    let mut add = |w: LoopWrite| {
        if !m.writes.contains(&w) {
            m.writes.push(w);
        }
    };
    for &b in blocks {
        for i in f.layout().block_insts(b) {
            match f.op(i) {
                Opcode::Store => {
                    let ptr = f.arg(i, 1);
                    let bytes = f.ty(f.arg(i, 0)).bytes() as i64;
                    let extent = match constant_offset(f, ptr) {
                        Some((root, off)) => Extent::Bytes {
                            root,
                            lo: off,
                            end: off + bytes,
                        },
                        None => Extent::Indexed {
                            root: offset_root(f, ptr),
                            ptr,
                            block: b,
                            bytes,
                        },
                    };
                    add(LoopWrite {
                        base: base_of(f, cfg, ptr),
                        extent,
                        store: Some((ptr, bytes)),
                    });
                }
                Opcode::Call => match call_writes(f, cx, cfg, i) {
                    None => m.writing_call = true,
                    Some(bases) => {
                        for base in bases {
                            add(LoopWrite {
                                base,
                                extent: Extent::Unknown,
                                store: None,
                            });
                        }
                    }
                },
                _ => {}
            }
        }
    }
    m
}

/// An inner loop `m` to run once before its parent loop instead of on every iteration.
struct LoopHoist {
    /// The parent loop's preheader and header.
    outer_pre: Block,
    outer_header: Block,
    /// Where the parent loop enters `m`: its preheader, or the guard block branching to it.
    entry: Block,
    /// `(c, then_enters, args)`: the guard `brif c` that enters `m` when `c == then_enters` and
    /// otherwise jumps to `m`'s exit with `args`.
    guard: Option<(Value, bool, Vec<Value>)>,
    header: Block,
    /// `m`'s initial values.
    init: Vec<Value>,
    blocks: Vec<Block>,
    exit: Block,
}

/// Whether `m`, an inner loop, computes the same on every iteration of its parent `l` and runs
/// on each of them (or, behind a guard with an invariant condition, on none or on each):
/// `l` has no effects at all (no stores, only pure calls, no return), so memory does not change
/// while it runs; every operand of `m` from outside `m`, its initial values and the guard's
/// values are defined outside `l`; the entry (preheader or guard) dominates every latch and
/// exiting block of `l` (so `m` ran in the first iteration wherever `l` was entered: hoisting
/// adds no trap or non-termination); and `m` leaves through one exit block that only `m` (and
/// the guard) enter. Run after the instruction hoisting, which makes those values invariant.
fn hoistable_loop(
    f: &Function,
    cx: &ModuleCx,
    cfg: &Cfg,
    dt: &DomTree,
    forest: &LoopForest,
    m: Loop,
) -> Option<LoopHoist> {
    let l = forest.loops[m].parent?;
    let outer_pre = forest.preheader(l, cfg)?;
    let pre = forest.preheader(m, cfg)?;
    let (ld, md) = (&forest.loops[l], &forest.loops[m]);
    let pre_t = f.terminator(pre)?;
    if f.op(f.terminator(outer_pre)?) != Opcode::Jump || f.op(pre_t) != Opcode::Jump {
        return None;
    }
    let in_l = |b: Block| forest.contains(l, b);
    let in_m = |b: Block| forest.contains(m, b);
    let from_outside = |v: Value| f.def_block(v).is_some_and(|d| !in_l(d));
    let exits = forest.exits(m, cfg);
    let [exit] = exits[..] else { return None };
    // The block entering the preheader, and its edge's arguments (for the preheader's params).
    let (entry, guard, pre_args) = match cfg.preds[pre][..] {
        [g] => {
            let gt = f.terminator(g)?;
            let targets = f.branch_targets(gt);
            let k = targets.iter().position(|c| c.block == pre)?;
            let pre_args = targets[k].args.to_vec();
            let guarded = f.op(gt) == Opcode::Brif
                && targets[1 - k].block == exit
                && from_outside(f.arg(gt, 0))
                && targets[1 - k].args.iter().all(|&v| from_outside(v));
            if guarded {
                let args = targets[1 - k].args.to_vec();
                (g, Some((f.arg(gt, 0), k == 0, args)), pre_args)
            } else {
                (pre, None, pre_args)
            }
        }
        // Initial values that are the preheader's parameters are then defined in `l`: refused.
        _ => (pre, None, Vec::new()),
    };
    let init: Vec<Value> = f
        .args(pre_t)
        .iter()
        .map(
            |&v| match f.blocks.params[pre].iter().position(|&p| p == v) {
                Some(k) => pre_args.get(k).copied().unwrap_or(v),
                None => v,
            },
        )
        .collect();
    if !init.iter().all(|&v| from_outside(v)) {
        return None;
    }
    if !cfg.preds[exit]
        .iter()
        .all(|&q| in_m(q) || (guard.is_some() && q == entry))
    {
        return None;
    }
    for &b in &ld.blocks {
        for i in f.layout().block_insts(b) {
            let ok = match f.op(i) {
                Opcode::Call => cx.decls[f.callee(i)].effects.pure,
                Opcode::Store | Opcode::Alloca | Opcode::Ret | Opcode::Unreachable => false,
                _ => true,
            };
            if !ok {
                return None;
            }
        }
        let exiting = cfg.succs[b].iter().any(|&s| !in_l(s)) || cfg.succs[b].is_empty();
        if (exiting || ld.latches.contains(&b)) && !dt.dominates(entry, b) {
            return None;
        }
    }
    for &b in &md.blocks {
        for i in f.layout().block_insts(b) {
            if !f
                .args(i)
                .iter()
                .all(|&v| f.def_block(v).is_some_and(|d| in_m(d) || !in_l(d)))
            {
                return None;
            }
        }
    }
    Some(LoopHoist {
        outer_pre,
        outer_header: ld.header,
        entry,
        guard,
        header: md.header,
        init,
        blocks: md.blocks.clone(),
        exit,
    })
}

/// Moves inner loops that compute the same thing on every iteration of their parent in front
/// of the parent: `outer_pre -> [guard] -> m -> X -> outer header`, and the parent's entry into
/// `m` (its preheader or guard) jumps straight to `m`'s exit block with `X`'s parameters (`m`'s
/// exit values, or the guard's). `m` then runs once per entry into its parent instead of once
/// per iteration (a dot product of two arrays filled before the loop, otherwise recomputed on
/// every iteration of the loop around it).
fn hoist_loops(f: &mut Function, cx: &ModuleCx, am: &mut FuncAnalyses) -> bool {
    let mut changed = false;
    // Each hoist changes the loop forest: recompute, a bounded number of times.
    for _ in 0..8 {
        let (cfg, dt, forest) = am.all(f);
        let Some(h) = forest
            .loops
            .keys()
            .find_map(|m| hoistable_loop(f, cx, cfg, dt, forest, m))
        else {
            break;
        };
        let tys: Vec<_> = f.blocks.params[h.exit].iter().map(|&p| f.ty(p)).collect();
        let x = f.make_block();
        let xp: Vec<Value> = tys.iter().map(|&t| f.append_block_param(x, t)).collect();
        let outer_t = f.terminator(h.outer_pre).unwrap();
        let outer_args = f.args(outer_t).to_vec();
        f.append_new(x, mk::jump(h.outer_header), &outer_args);
        for &b in &h.blocks {
            let t = f.terminator(b).unwrap();
            f.retarget(t, h.exit, x);
        }
        let entry_t = f.terminator(h.entry).unwrap();
        f.replace_inst(entry_t, mk::jump(h.exit), &xp);
        match &h.guard {
            None => f.replace_inst(outer_t, mk::jump(h.header), &h.init),
            Some((c, then_enters, skip)) => {
                let (data, args) = if *then_enters {
                    (
                        mk::brif(h.header, x, h.init.len()),
                        [&[*c], &h.init[..], skip].concat(),
                    )
                } else {
                    (
                        mk::brif(x, h.header, skip.len()),
                        [&[*c], &skip[..], &h.init].concat(),
                    )
                };
                f.replace_inst(outer_t, data, &args);
            }
        }
        lay_out_after(f, h.outer_pre, h.blocks.iter().chain([&x]));
        am.invalidate(Preserved::none());
        changed = true;
    }
    changed
}

/// Places `blocks` in order right after `prev` in the layout (moving those already placed).
fn lay_out_after<'a>(f: &mut Function, mut prev: Block, blocks: impl Iterator<Item = &'a Block>) {
    for &b in blocks {
        if f.layout().is_block_inserted(b) {
            f.move_block_after(b, prev);
        } else {
            f.insert_block_after(b, prev);
        }
        prev = b;
    }
}

pub fn run(f: &mut Function, cx: &ModuleCx, am: &mut FuncAnalyses) -> Preserved {
    let changed = hoist_insts(f, cx, am);
    let mut moved_blocks = false;
    // Invariant branches moved out leave the values they join invariant: hoist again.
    if hoist_regions(f, am) {
        moved_blocks = true;
        hoist_insts(f, cx, am);
    }
    moved_blocks |= hoist_loops(f, cx, am);
    // Hoisting instructions keeps the block graph; hoisting regions and loops does not.
    if moved_blocks {
        Preserved::none()
    } else {
        Preserved::cfg_kept(changed)
    }
}

/// Moves the invariant instructions of every loop to its preheader (innermost loops first).
fn hoist_insts(f: &mut Function, cx: &ModuleCx, am: &mut FuncAnalyses) -> bool {
    let mut changed = false;
    let (cfg, dt, forest) = am.all(f);
    let mut ranges = LazyRanges {
        cfg,
        dt,
        ranges: None,
        known: 0,
    };
    let loops: Vec<Loop> = forest.loops.keys().collect();
    for l in loops {
        let Some(pre) = forest.preheader(l, cfg) else {
            continue;
        };
        let data = &forest.loops[l];
        let blocks = data.blocks.clone();
        let latches = data.latches.clone();
        let exiting: Vec<Block> = blocks
            .iter()
            .copied()
            .filter(|&b| cfg.succs[b].iter().any(|&s| !forest.contains(l, s)))
            .collect();
        let mut mem = loop_memory(f, cx, cfg, &blocks);
        let pre_term = f.terminator(pre).unwrap();
        let mut moved: FxHashMap<HoistKey, Value> = FxHashMap::default();
        for &b in &blocks {
            let every_iteration = !exiting.is_empty()
                && latches.iter().all(|&x| dt.dominates(b, x))
                && exiting.iter().all(|&x| dt.dominates(b, x));
            let insts: Vec<Inst> = f.layout().block_insts(b).collect();
            for i in insts {
                if f.result(i).is_none() || !movable(f, cx, i) {
                    continue;
                }
                let invariant = f.args(i).iter().all(|&a| match f.def_block(a) {
                    Some(db) => !forest.contains(l, db),
                    None => false,
                });
                if !invariant {
                    continue;
                }
                let mut guard = Guard::None;
                if !every_iteration && !speculatable(f, i) && !speculatable_load(f, cx, i) {
                    match ranges.division_guard(f, cx, i, pre) {
                        Some(g) => guard = g,
                        None => continue,
                    }
                }
                if f.op(i) == Opcode::Load {
                    let ptr = f.arg(i, 0);
                    let base = base_of(f, cfg, ptr);
                    let bytes = f.data(i).ty.bytes() as i64;
                    if mem.may_write(f, cx, &mut ranges, (base, ptr, b, bytes)) {
                        continue;
                    }
                    if mem.writing_call {
                        let safe = matches!(base, Base::Alloca(a) if !escapes(f, a));
                        if !safe {
                            continue;
                        }
                    }
                }
                changed = true;
                if let Some(k) = hoist_key(f, i) {
                    match moved.entry(k) {
                        Entry::Occupied(e) => {
                            // The same computation already moved out of this loop.
                            let r = f.res(i);
                            f.replace_all_uses(r, *e.get());
                            f.remove_inst(i);
                            continue;
                        }
                        Entry::Vacant(e) => {
                            e.insert(f.res(i));
                        }
                    }
                }
                if guard != Guard::None {
                    let d = insert_guard(f, pre_term, f.arg(i, 1), guard);
                    f.set_arg(i, 1, d);
                }
                f.move_inst_before(i, pre_term);
            }
        }
    }
    changed
}

/// The divisor a division moved out of a block that may not run on every iteration needs
/// instead of its own, so that it cannot trap (or overflow) where the program never divided:
/// where the original division ran, the guarded divisor equals the original one.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Guard {
    /// The divisor as it is.
    None,
    /// `d == 0 ? 1 : d`.
    Zero,
    /// `d == 0 || d == -1 ? 1 : d`, tested as `(d + 1) >> 1 == 0` (for remainders only).
    ZeroOrMinusOne,
}

/// Inserts the guarded form of divisor `d` before `before`; returns it.
fn insert_guard(f: &mut Function, before: Inst, d: Value, guard: Guard) -> Value {
    let ty = f.ty(d);
    let zero = f.insert_new_before(before, mk::iconst(ty, 0), &[]);
    let zero = f.res(zero);
    let one = f.insert_new_before(before, mk::iconst(ty, 1), &[]);
    let one = f.res(one);
    let tested = match guard {
        Guard::None => return d,
        Guard::Zero => d,
        Guard::ZeroOrMinusOne => {
            let up = f.insert_new_before(before, mk::binary(Opcode::Add, ty), &[d, one]);
            let up = f.res(up);
            let half = f.insert_new_before(before, mk::binary(Opcode::Ashr, ty), &[up, one]);
            f.res(half)
        }
    };
    let c = f.insert_new_before(before, mk::icmp(CmpCond::Eq), &[tested, zero]);
    let c = f.res(c);
    let s = f.insert_new_before(before, mk::unary(Opcode::Select, ty), &[c, one, d]);
    f.res(s)
}

/// Which guard made `v` (`insert_guard`'s shape), if one did.
fn guard_of(f: &Function, v: Value) -> Option<Guard> {
    let s = f.def_inst(v).filter(|&s| f.op(s) == Opcode::Select)?;
    let (c, one, d) = (f.arg(s, 0), f.arg(s, 1), f.arg(s, 2));
    if f.as_iconst(one) != Some(1) {
        return None;
    }
    let c = f.def_inst(c).filter(|&c| f.op(c) == Opcode::Icmp)?;
    if f.data(c).cond() != CmpCond::Eq || f.as_iconst(f.arg(c, 1)) != Some(0) {
        return None;
    }
    let tested = f.arg(c, 0);
    if tested == d {
        return Some(Guard::Zero);
    }
    let half = f.def_inst(tested).filter(|&h| f.op(h) == Opcode::Ashr)?;
    let up = f
        .def_inst(f.arg(half, 0))
        .filter(|&u| f.op(u) == Opcode::Add)?;
    let one_up = f.as_iconst(f.arg(up, 1)) == Some(1) && f.as_iconst(f.arg(half, 1)) == Some(1);
    (one_up && f.arg(up, 0) == d).then_some(Guard::ZeroOrMinusOne)
}

/// An operand of a `HoistKey`: a value, or a constant by its value (copies of one loop body
/// each have their own constants).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum KeyArg {
    Value(Value),
    Const(Type, i64),
}

/// What a hoisted instruction computes: instructions with equal keys moved out of one loop
/// (to the end of its preheader, where nothing writes memory between them) compute the same.
type HoistKey = (Opcode, Type, u32, i64, Vec<KeyArg>);

fn hoist_key(f: &Function, i: Inst) -> Option<HoistKey> {
    let d = f.data(i);
    if !(d.op.is_pure() || d.op == Opcode::Load) || d.ty == Type::Void {
        return None;
    }
    let mut args: Vec<KeyArg> = f
        .args(i)
        .iter()
        .map(|&a| match f.def_inst(a) {
            Some(c) if matches!(f.op(c), Opcode::Iconst | Opcode::Fconst) => {
                KeyArg::Const(f.data(c).ty, f.data(c).imm)
            }
            _ => KeyArg::Value(a),
        })
        .collect();
    if d.op.is_commutative() {
        args.sort();
    }
    Some((d.op, d.ty, d.aux, d.imm, args))
}

/// The most instructions a hoisted region may hold: its blocks run once per entry into the loop
/// even when the loop would not have reached them.
const MAX_REGION_INSTS: usize = 64;

/// An acyclic region of loop `l` that computes the same on every iteration: entered by the
/// `brif` ending `entry` (its operands defined outside `l`), every other block entered only from
/// the region, holding only speculatable instructions whose operands are defined outside `l` or
/// in the region, and all of it leaving to one block `join` that only the region enters.
struct Region {
    pre: Block,
    header: Block,
    entry: Block,
    blocks: Vec<Block>,
    join: Block,
}

fn invariant_region(
    f: &Function,
    cfg: &Cfg,
    forest: &LoopForest,
    l: Loop,
    entry: Block,
) -> Option<Region> {
    let t = f.terminator(entry)?;
    let in_l = |b: Block| forest.contains(l, b);
    let outside = |v: Value| f.def_block(v).is_some_and(|d| !in_l(d));
    if f.op(t) != Opcode::Brif || !f.args(t).iter().all(|&v| outside(v)) {
        return None;
    }
    let header = forest.loops[l].header;
    let pre = forest.preheader(l, cfg)?;
    let mut region = vec![entry];
    let mut size = 0;
    loop {
        let mut grown = false;
        for k in 0..region.len() {
            for &b in &cfg.succs[region[k]] {
                if region.contains(&b)
                    || b == header
                    || !in_l(b)
                    || !cfg.preds[b].iter().all(|p| region.contains(p))
                    || cfg.succs[b].iter().any(|&s| !in_l(s) || s == header)
                {
                    continue;
                }
                // Values of the entry block stay in the loop: not invariant.
                let ok = f.layout().block_insts(b).all(|i| {
                    let op = f.op(i);
                    (matches!(op, Opcode::Jump | Opcode::Brif) || speculatable(f, i))
                        && f.args(i).iter().all(|&v| {
                            outside(v)
                                || f.def_block(v)
                                    .is_some_and(|d| d == b || region[1..].contains(&d))
                        })
                });
                if !ok {
                    continue;
                }
                size += f.layout().block_insts(b).count();
                if size > MAX_REGION_INSTS {
                    return None;
                }
                region.push(b);
                grown = true;
                break;
            }
            if grown {
                break;
            }
        }
        if !grown {
            break;
        }
    }
    let mut frontier: Vec<Block> = region
        .iter()
        .flat_map(|&b| cfg.succs[b].iter().copied())
        .filter(|b| !region.contains(b))
        .collect();
    frontier.sort();
    frontier.dedup();
    let [join] = frontier[..] else { return None };
    if region.len() < 2 || join == header || !cfg.preds[join].iter().all(|p| region.contains(p)) {
        return None;
    }
    Some(Region {
        pre,
        header,
        entry,
        blocks: region,
        join,
    })
}

/// Moves invariant acyclic regions (an if/else on loop-invariant values, as inlining leaves
/// them) in front of their loop: the preheader takes the region's entry branch, the region's
/// blocks follow it and leave to a new block `X` (the join's parameters) that enters the
/// header; in the loop the entry jumps straight to the join, whose parameters become `X`'s.
/// What the join computes from them (a pure call, say) is then invariant too.
fn hoist_regions(f: &mut Function, am: &mut FuncAnalyses) -> bool {
    let mut changed = false;
    loop {
        let (cfg, _, forest) = am.all(f);
        let mut found = None;
        'search: for (l, data) in forest.loops.iter() {
            for &b in &data.blocks {
                if forest.innermost[b] == Some(l) {
                    if let Some(r) = invariant_region(f, cfg, forest, l, b) {
                        found = Some(r);
                        break 'search;
                    }
                }
            }
        }
        let Some(r) = found else { break };
        let tys: Vec<_> = f.blocks.params[r.join].iter().map(|&p| f.ty(p)).collect();
        let x = f.make_block();
        let xp: Vec<Value> = tys.iter().map(|&t| f.append_block_param(x, t)).collect();
        let pre_t = f.terminator(r.pre).expect("preheader jumps");
        let init = f.args(pre_t).to_vec();
        f.append_new(x, mk::jump(r.header), &init);
        let entry_t = f.terminator(r.entry).expect("entry branches");
        let mut d = *f.data(entry_t);
        crate::ir::func::map_targets(&mut d, |b| if b == r.join { x } else { b });
        let args = f.args(entry_t).to_vec();
        f.replace_inst(pre_t, d, &args);
        let params = f.blocks.params[r.join].to_vec();
        for (&p, &np) in params.iter().zip(&xp) {
            f.replace_all_uses(p, np);
        }
        f.replace_inst(entry_t, mk::jump(r.join), &[]);
        for &b in &r.blocks[1..] {
            let t = f.terminator(b).expect("region blocks branch");
            f.retarget(t, r.join, x);
        }
        for n in (0..params.len()).rev() {
            f.remove_block_param(r.join, n);
        }
        lay_out_after(f, r.pre, r.blocks[1..].iter().chain([&x]));
        am.invalidate(Preserved::none());
        changed = true;
    }
    changed
}
