//! Value ranges: a signed interval for every integer SSA value, under wrapping arithmetic.
//!
//! Sources: constants; the transfer function of each operation (an `add`, `sub`, `mul` or
//! `shl` whose result could leave its type's range, which would wrap, gives the whole type);
//! `srem`/`sdiv` by constants; `and` with a non-negative mask; compares (0 or 1); words loaded
//! from globals never written (the smallest and largest word of the table); block
//! parameters as the union over their incoming edges; and branch conditions. A condition
//! narrows a value in two places: on an edge into a join (the argument a latch passes back when
//! `i + 1 < n` held), and in every block dominated by the target of a branch edge (`j > 2233`
//! below `if (j < n)`), which `range_at` reads by walking the dominator tree up to the value's
//! definition.
//!
//! Solver: sweeps in reverse post-order until nothing changes. A block parameter that keeps
//! growing is widened after `WIDEN_AFTER` changes: the bound that moved jumps to the next
//! constant some compare tests against (or its neighbour) or the next bound of a remainder by a
//! constant (`m - 1` and `1 - m` for `% m`, so `a = (a + 3) % m` from 0 stays in `[0, m - 1]`
//! instead of wrapping in `a + 3`), then to the type's end, so every
//! loop terminates and an increment below a tested bound is not mistaken for one that wraps; two narrowing sweeps then recompute everything from the
//! widened state, which stays sound and recovers the bounds loop conditions imply. A loop
//! counter that only grows (by any mix of positive steps) keeps its start as lower bound, and
//! its test gives the upper one.
//!
//! A sweep recomputes only the values some of whose inputs changed since they were last
//! computed (the others would come out the same): every value's readers, the values whose
//! transfer reads its range (as an operand, or as the bound of a compare refining an operand on
//! the dominator walk), are listed once, and a change marks them for recomputation.
//!
//! The branch facts a walk up the dominator tree meets are listed once per block (those of its
//! first `WALK` blocks, with their distances: its own edge's, then its immediate dominator's
//! list one step further up); a query reads the list up to the value's definition, and not at
//! all for a value no listed fact names (most values are compared nowhere).
//!
//! Narrowing starts from the values the widening left above what their transfer gives (by
//! joining with the old range or jumping to a threshold); every other value's inputs are
//! unchanged since it was last computed (the widening ends with nothing left to recompute), so
//! it would come out as it is until a change reaches it.
//!
//! Needs: CFG and dominator tree. Cost: O(blocks * `WALK`) for the lists (one copy per listed
//! fact), O((instructions + edges) * facts read per operand, at most `WALK`) to list the
//! readers, plus that per recomputed value per sweep.

use super::alias::{base_of, Base};
use super::{Cfg, DomTree};
use crate::ir::module::{GlobalId, GlobalInit};
use crate::ir::{Block, CmpCond, Function, IdSet, IdVec, Inst, ModuleCx, Opcode, Type, Value};
use rustc_hash::FxHashMap;

/// Changes of a block parameter before its range is widened.
const WIDEN_AFTER: u32 = 3;
/// Sweeps before giving up on a fixpoint (then everything still changing is widened).
const MAX_SWEEPS: u32 = 40;
/// Dominating branch edges examined per query.
const WALK: u32 = 24;

/// The signed interval `[lo, hi]`; empty (no value seen yet) when `lo > hi`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Interval {
    pub lo: i64,
    pub hi: i64,
}

impl Interval {
    pub const EMPTY: Interval = Interval { lo: 1, hi: 0 };

    pub fn new(lo: i64, hi: i64) -> Interval {
        Interval { lo, hi }
    }
    pub fn point(k: i64) -> Interval {
        Interval { lo: k, hi: k }
    }
    /// Every value of `ty` (integers; other types have no range and get the i64 one).
    pub fn full(ty: Type) -> Interval {
        match ty {
            Type::I1 => Interval::new(0, 1),
            Type::I32 => Interval::new(i32::MIN as i64, i32::MAX as i64),
            _ => Interval::new(i64::MIN, i64::MAX),
        }
    }
    pub fn is_empty(self) -> bool {
        self.lo > self.hi
    }
    pub fn union(self, o: Interval) -> Interval {
        if self.is_empty() {
            return o;
        }
        if o.is_empty() {
            return self;
        }
        Interval::new(self.lo.min(o.lo), self.hi.max(o.hi))
    }
    pub fn meet(self, o: Interval) -> Interval {
        Interval::new(self.lo.max(o.lo), self.hi.min(o.hi))
    }
    pub fn contains(self, k: i64) -> bool {
        self.lo <= k && k <= self.hi
    }
    /// `[lo, hi]` computed in i128, or the whole type if it leaves the type's range (the
    /// operation would wrap).
    fn checked(ty: Type, lo: i128, hi: i128) -> Interval {
        let full = Interval::full(ty);
        if lo < full.lo as i128 || hi > full.hi as i128 {
            full
        } else {
            Interval::new(lo as i64, hi as i64)
        }
    }
}

/// A branch condition on the dominator walk up from a block: `cond` is `taken` on the edge
/// into the block `step` blocks up.
#[derive(Clone, Copy)]
struct Fact {
    step: u32,
    cond: Value,
    taken: bool,
    /// The values the fact can narrow (`Ranges::refine`), when they are few: the condition
    /// and a compare's operands. `None` for a conjunction known true or a disjunction known
    /// false, whose operands' facts are read too.
    subjects: Option<[Value; 3]>,
}

impl Fact {
    /// Whether `refine` by this fact may narrow the range of `v` (otherwise it returns the
    /// range unchanged, and `refine_inputs` adds nothing).
    fn may_narrow(&self, v: Value) -> bool {
        self.subjects.is_none_or(|s| s.contains(&v))
    }
}

/// The `subjects` of the fact that `c` is `t` (see `Ranges::refine`).
fn subjects(f: &Function, c: Value, t: bool) -> Option<[Value; 3]> {
    let Some(i) = f.def_inst(c) else {
        return Some([c; 3]);
    };
    match f.op(i) {
        Opcode::Icmp => Some([c, f.arg(i, 0), f.arg(i, 1)]),
        Opcode::And if t => None,
        Opcode::Or if !t => None,
        _ => Some([c; 3]),
    }
}

/// Per-value intervals of one function and the branch facts that refine them per block.
pub struct Ranges {
    range: IdVec<Value, Interval>,
    /// Per block, the conditions (and their values) known on entry to the first `WALK` blocks
    /// of its dominator-tree path up (itself first) from their single predecessors' `brif`s,
    /// each with its number of steps up, nearest first: `facts[lo..hi]` for
    /// `(lo, hi) = fact_span[b]`.
    fact_span: IdVec<Block, (u32, u32)>,
    facts: Vec<Fact>,
    /// The values some listed fact names among its `subjects`.
    fact_subjects: IdSet<Value>,
    /// The blocks whose list holds a fact without `subjects` (one that may narrow any value).
    open: IdSet<Block>,
    dt: DomTree,
    /// Where widening stops first: the constants compares test against, and their
    /// neighbours, sorted.
    thresholds: Vec<i64>,
    /// Loads of words from globals never written: the bounds of the global's contents.
    table_loads: FxHashMap<Inst, Interval>,
}

impl Ranges {
    /// Ranges of every integer value of `f`, given its CFG and dominator tree.
    /// A call's result lies in the callee's `FuncDecl::returns` bounds when it has some.
    pub fn compute(f: &Function, cx: &ModuleCx, cfg: &Cfg, dt: &DomTree) -> Ranges {
        let n = f.num_blocks();
        // A block's list is its own edge's fact, then its immediate dominator's list one step
        // further up (blocks in dominator-tree pre-order: the dominator's list is complete).
        let mut fact_span = IdVec::filled(n, (0, 0));
        let mut facts = Vec::with_capacity(n);
        let mut fact_subjects = IdSet::with_capacity(f.num_values());
        let mut open = IdSet::with_capacity(n);
        for &b in &dt.preorder {
            let start = facts.len();
            if let Some((cond, taken)) = branch_fact(f, cfg, b) {
                let subjects = subjects(f, cond, taken);
                match subjects {
                    Some(s) => {
                        for v in s {
                            fact_subjects.insert(v);
                        }
                    }
                    None => {
                        open.insert(b);
                    }
                }
                facts.push(Fact {
                    step: 0,
                    cond,
                    taken,
                    subjects,
                });
            }
            if let Some(d) = dt.idom[b] {
                let (lo, hi) = fact_span[d];
                let (lo, hi) = (lo as usize, hi as usize);
                let up = lo + facts[lo..hi].partition_point(|x: &Fact| x.step + 1 < WALK);
                let copied = facts.len();
                facts.extend_from_within(lo..up);
                for x in &mut facts[copied..] {
                    x.step += 1;
                }
                if open.contains(d) && facts[copied..].iter().any(|x| x.subjects.is_none()) {
                    open.insert(b);
                }
            }
            fact_span[b] = (start as u32, facts.len() as u32);
        }
        // The constants compares test against and the bounds of remainders, each kept once
        // before the neighbours are added (most recur).
        let (mut tested, mut bounds) = (Vec::new(), Vec::new());
        for &b in &cfg.rpo {
            for i in f.layout().block_insts(b) {
                match f.op(i) {
                    Opcode::Icmp => {
                        for &a in f.args(i) {
                            if let Some(k) = f.as_iconst(a) {
                                tested.push(k);
                            }
                        }
                    }
                    // A remainder's bounds: an accumulator `(x + a) % m` widened past them
                    // would wrap in `x + a` and lose its sign.
                    Opcode::Srem => {
                        if let Some(m) = f.as_iconst(f.arg(i, 1)).filter(|&m| m != i64::MIN) {
                            bounds.push(m.abs().saturating_sub(1));
                        }
                    }
                    _ => {}
                }
            }
        }
        tested.sort_unstable();
        tested.dedup();
        bounds.sort_unstable();
        bounds.dedup();
        let mut thresholds = Vec::with_capacity(3 * tested.len() + 2 * bounds.len());
        for k in tested {
            thresholds.extend([k.saturating_sub(1), k, k.saturating_add(1)]);
        }
        for m in bounds {
            thresholds.extend([-m, m]);
        }
        thresholds.sort_unstable();
        thresholds.dedup();
        let table_loads = table_loads(f, cx, cfg);
        let mut r = Ranges {
            range: IdVec::filled(f.num_values(), Interval::EMPTY),
            fact_span,
            facts,
            fact_subjects,
            open,
            dt: dt.clone(),
            thresholds,
            table_loads,
        };
        for &p in f.params() {
            r.range[p] = Interval::full(f.ty(p));
        }
        let mut sites = Sites::new(f, cfg, &r);
        let mut changes: IdVec<Value, u32> = IdVec::filled(f.num_values(), 0);
        let mut sweeps = 0;
        loop {
            // Past MAX_SWEEPS every change widens at once: at most two more per parameter.
            sweeps += 1;
            let widen = Some((&mut changes, sweeps >= MAX_SWEEPS));
            if !r.sweep(f, cx, cfg, &mut sites, widen) {
                break;
            }
        }
        // Narrowing computes every value afresh, from the widened state: those the widening
        // left above their transfer's result, then what their changes reach (the inputs of the
        // others have not changed since their last computation, which kept that result).
        debug_assert!(sites.dirty.is_empty());
        std::mem::swap(&mut sites.dirty, &mut sites.inexact);
        for _ in 0..2 {
            r.sweep(f, cx, cfg, &mut sites, None);
        }
        r
    }

    /// Adds to `out` the values whose ranges `raw_at(f, v, b)` reads.
    fn inputs_at(&self, f: &Function, v: Value, b: Block, out: &mut Vec<Value>) {
        if !f.ty(v).is_int() {
            return;
        }
        out.push(v);
        if !self.may_be_named(v, b) {
            return;
        }
        for x in self.facts_on_walk(f, v, b) {
            if x.may_narrow(v) {
                refine_inputs(f, x.cond, x.taken, v, 2, out);
            }
        }
    }

    /// Whether some branch fact listed for `b` may name `v`: `v` is among the subjects of a
    /// listed fact, or `b`'s list holds a fact whose subjects are not known.
    #[inline]
    fn may_be_named(&self, v: Value, b: Block) -> bool {
        self.fact_subjects.contains(v) || self.open.contains(b)
    }

    /// The branch facts the dominator walk from `b` up to the definition of `v` reads (see
    /// `facts`); empty when `v` is defined in `b` or when none of them may narrow `v`.
    fn facts_on_walk(&self, f: &Function, v: Value, b: Block) -> &[Fact] {
        if !self.may_be_named(v, b) {
            return &[];
        }
        let def = f.def_block(v);
        if def == Some(b) {
            return &[];
        }
        let limit = self.walk_limit(def, b);
        let (lo, hi) = self.fact_span[b];
        let facts = &self.facts[lo as usize..hi as usize];
        &facts[..facts.partition_point(|x| x.step < limit)]
    }

    /// The steps the dominator walk from `b` takes for a value defined in `def` (not `b`): up
    /// to `def` when it dominates `b`, at most `WALK`.
    fn walk_limit(&self, def: Option<Block>, b: Block) -> u32 {
        match def {
            Some(d) if self.dt.dominates(d, b) => (self.dt.depth[b] - self.dt.depth[d]).min(WALK),
            _ => WALK,
        }
    }

    /// The range of `v` anywhere it is defined. Values without one (floats, pointers) get
    /// the i64 range.
    pub fn range(&self, f: &Function, v: Value) -> Interval {
        let r = self.range[v];
        if r.is_empty() {
            // Unreachable or not an integer: nothing is known (callers may be asked about a
            // value the solver never reached).
            return Interval::full(f.ty(v));
        }
        r
    }

    /// Whether `v` is never negative.
    pub fn is_nonneg(&self, f: &Function, v: Value) -> bool {
        f.ty(v).is_int() && self.range(f, v).lo >= 0
    }

    /// The range of `v` where block `b` runs: its range narrowed by the branch conditions
    /// known in `b` (those on the edges into `b` and the blocks dominating it, up to the
    /// definition of `v`).
    pub fn range_at(&self, f: &Function, v: Value, b: Block) -> Interval {
        let r = self.raw_at(f, v, b);
        if r.is_empty() {
            return Interval::full(f.ty(v));
        }
        r
    }

    /// `range_at`, but empty for a value the solver never reached (in a block that cannot
    /// run, or computed from calls that never return).
    pub fn reached_at(&self, f: &Function, v: Value, b: Block) -> Interval {
        self.raw_at(f, v, b)
    }

    /// `range_at` during solving: empty for values not reached yet (optimistic).
    #[inline]
    fn raw_at(&self, f: &Function, v: Value, b: Block) -> Interval {
        if !f.ty(v).is_int() {
            return Interval::full(f.ty(v));
        }
        let r = self.range[v];
        if r.is_empty() || r.lo == r.hi || !self.may_be_named(v, b) {
            return r;
        }
        self.refined_at(f, v, b, r)
    }

    /// `r`, the range of `v`, narrowed by the branch facts known in `b` (`raw_at` when some
    /// fact may name `v`).
    #[inline(never)]
    fn refined_at(&self, f: &Function, v: Value, b: Block, mut r: Interval) -> Interval {
        for x in self.facts_on_walk(f, v, b) {
            if x.may_narrow(v) {
                r = self.refine(f, x.cond, x.taken, v, r, 2);
            }
        }
        r
    }

    /// Whether `v` is never negative where block `b` runs.
    pub fn is_nonneg_at(&self, f: &Function, v: Value, b: Block) -> bool {
        f.ty(v).is_int() && self.range_at(f, v, b).lo >= 0
    }

    /// The value of `icmp cond x, y` where block `b` runs, if the ranges decide it.
    pub fn decide_icmp(
        &self,
        f: &Function,
        cond: CmpCond,
        x: Value,
        y: Value,
        b: Block,
    ) -> Option<bool> {
        decide(cond, self.range_at(f, x, b), self.range_at(f, y, b))
    }

    /// `r` (the range of `v`) narrowed by knowing that condition `c` is `t`.
    fn refine(
        &self,
        f: &Function,
        c: Value,
        t: bool,
        v: Value,
        r: Interval,
        depth: u32,
    ) -> Interval {
        if c == v {
            return r.meet(Interval::point(t as i64));
        }
        let Some(i) = f.def_inst(c) else { return r };
        let d = f.data(i);
        match d.op {
            Opcode::Icmp => {
                let (a, b) = (f.arg(i, 0), f.arg(i, 1));
                let cond = if t { d.cond() } else { d.cond().invert() };
                if a == v && b != v {
                    constrain(r, cond, self.range[b])
                } else if b == v && a != v {
                    constrain(r, cond.swap(), self.range[a])
                } else {
                    r
                }
            }
            Opcode::And if t && depth > 0 => {
                let r = self.refine(f, f.arg(i, 0), true, v, r, depth - 1);
                self.refine(f, f.arg(i, 1), true, v, r, depth - 1)
            }
            Opcode::Or if !t && depth > 0 => {
                let r = self.refine(f, f.arg(i, 0), false, v, r, depth - 1);
                self.refine(f, f.arg(i, 1), false, v, r, depth - 1)
            }
            _ => r,
        }
    }

    /// The range of `v` as an argument on the edge from `from` (ending in `term`) into
    /// successor `k`: its range in `from`, narrowed by the branch condition of that edge.
    fn edge_arg(&self, f: &Function, from: Block, term: Inst, k: usize, v: Value) -> Interval {
        let r = self.raw_at(f, v, from);
        if r.is_empty() || f.op(term) != Opcode::Brif {
            return r;
        }
        let targets = f.branch_targets(term);
        if targets[0].block == targets[1].block {
            return r;
        }
        self.refine(f, f.arg(term, 0), k == 0, v, r, 2)
    }

    /// One sweep over the blocks in reverse post-order, recomputing the values `sites` marks;
    /// returns whether a range changed. With `widen`, block parameters count their changes and
    /// widen; without, every recomputed range is computed from the current state (narrowing).
    fn sweep(
        &mut self,
        f: &Function,
        cx: &ModuleCx,
        cfg: &Cfg,
        sites: &mut Sites,
        mut widen: Option<(&mut IdVec<Value, u32>, bool)>,
    ) -> bool {
        let mut changed = false;
        let mut next = 0;
        while let Some(s) = sites.dirty.take_from(SiteId::new(next)) {
            let s = s.index();
            next = s + 1;
            let (v, computed, new) = match sites.site[s] {
                Site::Param {
                    block: b,
                    n,
                    value: p,
                } => {
                    let mut new = Interval::EMPTY;
                    for &pred in &cfg.preds[b] {
                        if !cfg.is_reachable(pred) {
                            continue;
                        }
                        let Some(t) = f.terminator(pred) else {
                            continue;
                        };
                        for (k, call) in f.branch_targets(t).iter().enumerate() {
                            if call.block == b {
                                let a = call.args[n as usize];
                                new = new.union(self.edge_arg(f, pred, t, k, a));
                            }
                        }
                    }
                    let old = self.range[p];
                    let computed = new;
                    if let Some((counts, all)) = widen.as_mut() {
                        new = new.union(old);
                        if new != old {
                            counts[p] += 1;
                            if (counts[p] > WIDEN_AFTER || *all) && !old.is_empty() {
                                let full = Interval::full(f.ty(p));
                                let th = &self.thresholds;
                                if new.lo < old.lo {
                                    let k = th.partition_point(|&t| t <= new.lo);
                                    new.lo = if k > 0 && !*all { th[k - 1] } else { full.lo };
                                }
                                if new.hi > old.hi {
                                    let k = th.partition_point(|&t| t < new.hi);
                                    new.hi =
                                        th.get(k).copied().filter(|_| !*all).unwrap_or(full.hi);
                                }
                            }
                        }
                    }
                    (p, computed, new)
                }
                Site::Inst {
                    block: b,
                    inst: i,
                    value: v,
                } => {
                    let computed = self.transfer(f, cx, i, b);
                    let mut new = computed;
                    if widen.is_some() {
                        new = new.union(self.range[v]);
                    }
                    (v, computed, new)
                }
            };
            if widen.is_some() {
                let s = SiteId::new(s);
                if new != computed {
                    sites.inexact.insert(s);
                } else {
                    sites.inexact.remove(s);
                }
            }
            if new != self.range[v] {
                self.range[v] = new;
                changed = true;
                sites.mark_readers(v);
            }
        }
        changed
    }

    /// The range of the result of `i` (in block `b`) from its operands' ranges there.
    fn transfer(&self, f: &Function, cx: &ModuleCx, i: Inst, b: Block) -> Interval {
        use Opcode::*;
        let d = f.data(i);
        let ty = d.ty;
        let full = Interval::full(ty);
        let arg = |k: usize| self.raw_at(f, f.arg(i, k), b);
        let konst = |k: usize| f.as_iconst(f.arg(i, k));
        match d.op {
            Iconst => Interval::point(crate::ir::fold::wrap(ty, d.imm)),
            Icmp | Fcmp => {
                if d.op == Icmp {
                    if let Some(t) = decide(d.cond(), arg(0), arg(1)) {
                        return Interval::point(t as i64);
                    }
                }
                Interval::new(0, 1)
            }
            Add | Sub | Mul | Shl | And | Or | Xor | Sdiv | Srem | Ashr | Lshr => {
                let (x, y) = (arg(0), arg(1));
                if x.is_empty() || y.is_empty() {
                    return Interval::EMPTY;
                }
                binary(d.op, ty, x, y, konst(1)).meet(full)
            }
            Select => {
                let c = arg(0);
                if c == Interval::point(1) {
                    arg(1)
                } else if c == Interval::point(0) {
                    arg(2)
                } else {
                    arg(1).union(arg(2))
                }
            }
            Zext => {
                let x = arg(0);
                if x.is_empty() {
                    Interval::EMPTY
                } else if x.lo >= 0 {
                    x
                } else if f.ty(f.arg(i, 0)) == Type::I32 {
                    Interval::new(0, u32::MAX as i64)
                } else {
                    full
                }
            }
            Sext => arg(0),
            Load => self.table_loads.get(&i).copied().unwrap_or(full),
            Call => match cx.decls[f.callee(i)].returns {
                Some((lo, hi)) => Interval::new(lo, hi).meet(full),
                None => full,
            },
            Trunc => {
                let x = arg(0);
                if x.is_empty() {
                    Interval::EMPTY
                } else if full.lo <= x.lo && x.hi <= full.hi {
                    x
                } else {
                    full
                }
            }
            _ => full,
        }
    }
}

/// The `i32` loads of `f` from globals never written (read-only tables, through any offsets,
/// indices or pointers moved around loops: `alias::base_of`), each with the smallest and
/// largest word of its global (zero included where the initializer stops short). Each
/// global's words are read once.
fn table_loads(f: &Function, cx: &ModuleCx, cfg: &Cfg) -> FxHashMap<Inst, Interval> {
    let mut bounds: FxHashMap<GlobalId, Interval> = FxHashMap::default();
    let mut out = FxHashMap::default();
    for &b in &cfg.rpo {
        for i in f.layout().block_insts(b) {
            if f.op(i) != Opcode::Load || f.data(i).ty != Type::I32 {
                continue;
            }
            let Base::Global(g) = base_of(f, cfg, f.arg(i, 0)) else {
                continue;
            };
            let data = &cx.globals[g];
            if !data.is_const || data.elem != Type::I32 {
                continue;
            }
            let r = *bounds.entry(g).or_insert_with(|| {
                let words = match &data.init {
                    GlobalInit::Words(w) => w.as_slice(),
                    _ => &[],
                };
                let short = (words.len() as u64) * 4 < data.size;
                let mut r = if short {
                    Interval::point(0)
                } else {
                    Interval::EMPTY
                };
                for &w in words {
                    r = r.union(Interval::point(w as i32 as i64));
                }
                r
            });
            if !r.is_empty() {
                out.insert(i, r);
            }
        }
    }
    out
}

/// A value the solver computes: a block parameter (the `n`th of `block`, the union over the
/// incoming edges) or an instruction's result.
#[derive(Clone, Copy)]
enum Site {
    Param {
        block: Block,
        n: u32,
        value: Value,
    },
    Inst {
        block: Block,
        inst: Inst,
        value: Value,
    },
}

crate::entity!(
    /// A site's index in `Sites::site`.
    SiteId,
    "site"
);

/// The solver's schedule: the integer values (but the entry block's parameters) in sweep order,
/// the readers of each value, and which values need recomputing.
struct Sites {
    site: Vec<Site>,
    /// Per value `v`: the sites reading its range, `readers[reader_start[v]..reader_start[v + 1]]`.
    reader_start: Vec<u32>,
    readers: Vec<u32>,
    /// The sites an input of which changed since they were last computed (or never were).
    dirty: IdSet<SiteId>,
    /// The sites whose range the last widening sweep that computed them left above what their
    /// transfer gave (by the union with the old range, or a widening jump).
    inexact: IdSet<SiteId>,
}

impl Sites {
    fn new(f: &Function, cfg: &Cfg, r: &Ranges) -> Sites {
        let entry = f.entry();
        let nv = f.num_values();
        let mut site = Vec::with_capacity(nv);
        // (input, reading site), in site order.
        let mut reads: Vec<(Value, u32)> = Vec::with_capacity(2 * nv);
        let mut inputs = Vec::new();
        for &b in &cfg.rpo {
            if b != entry {
                for (n, &p) in f.blocks.params[b].iter().enumerate() {
                    if !f.ty(p).is_int() {
                        continue;
                    }
                    inputs.clear();
                    for &pred in &cfg.preds[b] {
                        if !cfg.is_reachable(pred) {
                            continue;
                        }
                        let Some(t) = f.terminator(pred) else {
                            continue;
                        };
                        let targets = f.branch_targets(t);
                        for (k, call) in targets.iter().enumerate() {
                            if call.block != b {
                                continue;
                            }
                            let a = call.args[n];
                            r.inputs_at(f, a, pred, &mut inputs);
                            if f.op(t) == Opcode::Brif && targets[0].block != targets[1].block {
                                refine_inputs(f, f.arg(t, 0), k == 0, a, 2, &mut inputs);
                            }
                        }
                    }
                    let s = site.len() as u32;
                    site.push(Site::Param {
                        block: b,
                        n: n as u32,
                        value: p,
                    });
                    add_reads(&mut reads, &mut inputs, s);
                }
            }
            for i in f.layout().block_insts(b) {
                let Some(v) = f.result(i) else { continue };
                if !f.ty(v).is_int() {
                    continue;
                }
                inputs.clear();
                for &a in f.args(i) {
                    r.inputs_at(f, a, b, &mut inputs);
                }
                let s = site.len() as u32;
                site.push(Site::Inst {
                    block: b,
                    inst: i,
                    value: v,
                });
                add_reads(&mut reads, &mut inputs, s);
            }
        }
        let mut reader_start = vec![0u32; nv + 1];
        for &(v, _) in &reads {
            reader_start[v.index() + 1] += 1;
        }
        for v in 0..nv {
            reader_start[v + 1] += reader_start[v];
        }
        let mut fill = reader_start.clone();
        let mut readers = vec![0u32; reads.len()];
        for &(v, s) in &reads {
            readers[fill[v.index()] as usize] = s;
            fill[v.index()] += 1;
        }
        let mut dirty = IdSet::with_capacity(site.len());
        dirty.fill(site.len());
        let inexact = IdSet::with_capacity(site.len());
        Sites {
            site,
            reader_start,
            readers,
            dirty,
            inexact,
        }
    }

    /// The range of `v` changed: its readers need recomputing.
    fn mark_readers(&mut self, v: Value) {
        let (lo, hi) = (
            self.reader_start[v.index()],
            self.reader_start[v.index() + 1],
        );
        for &s in &self.readers[lo as usize..hi as usize] {
            self.dirty.insert(SiteId::new(s as usize));
        }
    }
}

/// Records that site `s` reads the ranges of `inputs` (emptied).
fn add_reads(reads: &mut Vec<(Value, u32)>, inputs: &mut Vec<Value>, s: u32) {
    if inputs.len() > 1 {
        inputs.sort_unstable();
        inputs.dedup();
    }
    reads.extend(inputs.drain(..).map(|v| (v, s)));
}

/// Adds to `out` the values whose ranges `Ranges::refine(f, c, t, v, _, depth)` reads.
fn refine_inputs(f: &Function, c: Value, t: bool, v: Value, depth: u32, out: &mut Vec<Value>) {
    if c == v {
        return;
    }
    let Some(i) = f.def_inst(c) else { return };
    match f.op(i) {
        Opcode::Icmp => {
            let (a, b) = (f.arg(i, 0), f.arg(i, 1));
            if a == v && b != v {
                out.push(b);
            } else if b == v && a != v {
                out.push(a);
            }
        }
        Opcode::And if t && depth > 0 => {
            refine_inputs(f, f.arg(i, 0), true, v, depth - 1, out);
            refine_inputs(f, f.arg(i, 1), true, v, depth - 1, out);
        }
        Opcode::Or if !t && depth > 0 => {
            refine_inputs(f, f.arg(i, 0), false, v, depth - 1, out);
            refine_inputs(f, f.arg(i, 1), false, v, depth - 1, out);
        }
        _ => {}
    }
}

/// The range of `x op y` (`ky`: `y` as a constant), before clipping to `ty`.
fn binary(op: Opcode, ty: Type, x: Interval, y: Interval, ky: Option<i64>) -> Interval {
    use Opcode::*;
    let full = Interval::full(ty);
    let (xl, xh, yl, yh) = (x.lo as i128, x.hi as i128, y.lo as i128, y.hi as i128);
    match op {
        Add => Interval::checked(ty, xl + yl, xh + yh),
        Sub => Interval::checked(ty, xl - yh, xh - yl),
        Mul => {
            let p = [xl * yl, xl * yh, xh * yl, xh * yh];
            Interval::checked(ty, *p.iter().min().unwrap(), *p.iter().max().unwrap())
        }
        Shl => match ky {
            Some(k) if (0..63).contains(&k) && k < bits(ty) as i64 => {
                Interval::checked(ty, xl << k, xh << k)
            }
            _ => full,
        },
        Ashr => match ky {
            Some(k) if (0..bits(ty) as i64).contains(&k) => Interval::new(x.lo >> k, x.hi >> k),
            _ => Interval::new(x.lo.min(0), x.hi.max(0)),
        },
        Lshr => match ky {
            Some(k) if x.lo >= 0 && (0..bits(ty) as i64).contains(&k) => {
                Interval::new(x.lo >> k, x.hi >> k)
            }
            Some(k) if (1..bits(ty) as i64).contains(&k) && ty != Type::I1 => {
                Interval::new(0, ((1u64 << (bits(ty) - k as u32)) - 1) as i64)
            }
            _ => full,
        },
        And => match (x.lo >= 0, y.lo >= 0) {
            (true, true) => Interval::new(0, x.hi.min(y.hi)),
            (true, false) => Interval::new(0, x.hi),
            (false, true) => Interval::new(0, y.hi),
            _ => full,
        },
        Or | Xor if x.lo >= 0 && y.lo >= 0 => {
            let m = x.hi.max(y.hi) as u64;
            let ones = if m == 0 {
                0
            } else {
                u64::MAX >> m.leading_zeros()
            };
            Interval::new(0, ones as i64)
        }
        Sdiv => match ky {
            Some(c) if c > 0 => Interval::new(x.lo / c, x.hi / c),
            Some(c) if c < -1 => Interval::new(x.hi / c, x.lo / c),
            _ => full,
        },
        Srem => {
            // |x % y| < |y| and the sign is the dividend's.
            let m = if ky == Some(0) {
                return full;
            } else if ky.is_some() {
                yl.abs() - 1
            } else if y.lo > 0 || y.hi < 0 {
                yl.abs().max(yh.abs()) - 1
            } else {
                i128::MAX
            };
            let lo = if x.lo >= 0 { 0 } else { (-m).max(xl) };
            let hi = if x.hi <= 0 { 0 } else { m.min(xh) };
            Interval::checked(ty, lo, hi)
        }
        _ => full,
    }
}

fn bits(ty: Type) -> u32 {
    match ty {
        Type::I1 => 1,
        Type::I32 => 32,
        _ => 64,
    }
}

/// `r` narrowed by `v cond y` for `y` in `o`.
fn constrain(r: Interval, cond: CmpCond, o: Interval) -> Interval {
    if o.is_empty() {
        return r;
    }
    match cond {
        CmpCond::Lt => r.meet(Interval::new(i64::MIN, o.hi.saturating_sub(1))),
        CmpCond::Le => r.meet(Interval::new(i64::MIN, o.hi)),
        CmpCond::Gt => r.meet(Interval::new(o.lo.saturating_add(1), i64::MAX)),
        CmpCond::Ge => r.meet(Interval::new(o.lo, i64::MAX)),
        CmpCond::Eq => r.meet(o),
        CmpCond::Ne if o.lo == o.hi => {
            let mut r = r;
            if r.lo == o.lo {
                r.lo = r.lo.saturating_add(1);
            }
            if r.hi == o.lo {
                r.hi = r.hi.saturating_sub(1);
            }
            r
        }
        CmpCond::Ne => r,
    }
}

/// `x cond y` for every `x` in `a` and `y` in `b`, if it is the same for all.
pub fn decide(cond: CmpCond, a: Interval, b: Interval) -> Option<bool> {
    if a.is_empty() || b.is_empty() {
        return None;
    }
    let lt = a.hi < b.lo; // always x < y
    let ge = a.lo >= b.hi; // always x >= y
    let gt = a.lo > b.hi;
    let le = a.hi <= b.lo;
    let ne = lt || gt;
    let eq = a.lo == a.hi && b.lo == b.hi && a.lo == b.lo;
    match cond {
        CmpCond::Lt if lt => Some(true),
        CmpCond::Lt if ge => Some(false),
        CmpCond::Le if le => Some(true),
        CmpCond::Le if gt => Some(false),
        CmpCond::Gt if gt => Some(true),
        CmpCond::Gt if le => Some(false),
        CmpCond::Ge if ge => Some(true),
        CmpCond::Ge if lt => Some(false),
        CmpCond::Eq if eq => Some(true),
        CmpCond::Eq if ne => Some(false),
        CmpCond::Ne if ne => Some(true),
        CmpCond::Ne if eq => Some(false),
        _ => None,
    }
}

/// The condition `b` learns from its single predecessor's `brif`: `(cond, value on this edge)`.
fn branch_fact(f: &Function, cfg: &Cfg, b: Block) -> Option<(Value, bool)> {
    let [p] = cfg.preds[b][..] else { return None };
    let t = f.terminator(p)?;
    if f.op(t) != Opcode::Brif {
        return None;
    }
    let targets = f.branch_targets(t);
    if targets[0].block == targets[1].block {
        return None;
    }
    Some((f.arg(t, 0), b == targets[0].block))
}
