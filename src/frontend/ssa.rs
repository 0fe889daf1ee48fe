//! SSA construction for scalar variables while lowering, after Braun et al., "Simple and
//! Efficient Construction of Static Single Assignment Form" (CC 2013).
//!
//! Lowering calls `write(var, block, value)` for every assignment and `read(var, block)` for every
//! use, `add_edge` for every CFG edge it emits and `seal(block)` once a block's predecessors are
//! all known. A phi is a block parameter of the IR; while the function is built its operands live
//! in a side table (one per incoming edge, in `preds` order), and branches carry no phi
//! arguments yet.
//!
//! Phases:
//! 1. During lowering: `read` walks up single-predecessor chains (a loop, not recursion); at a
//!    join it creates a phi, records it as the block's definition and queues it; in an unsealed
//!    block it creates an "incomplete" phi that `seal` queues. Queued phis get their operands
//!    in `fill_pending`, which only `read`s again (queueing more phis): no recursion at all, so
//!    long chains of blocks cannot overflow the stack.
//!    Before creating a phi at a sealed join, or an incomplete one in an unsealed loop header
//!    whose loop assigns the variable nowhere (`loop_header`), `read` searches back over the
//!    known edges (`known_value`): if every path meets a definition of one value, that value
//!    is the result and no phi is created (the phis it saves are those phase 2 would find
//!    trivial); if every path meets the same unsealed block instead, through sealed blocks
//!    only, the phi is created there at once. The phis that survive are created in the same
//!    order either way.
//! 2. `finish`: trivial-phi removal to a fixpoint with a worklist. A phi whose operands are all
//!    itself or one other value `v` is replaced by `v` everywhere (`replace_all_uses`, plus the
//!    phi operand table through a forwarding map); the phis that used it are re-checked. A phi
//!    with no operand other than itself (unreachable or undefined) becomes a zero constant.
//! 3. Dead phis are removed from their blocks' parameter lists and the live ones' operands are
//!    appended to the branch arguments of each incoming edge (after any arguments the lowering
//!    passed explicitly, for its own block parameters).
//!
//! Cost: O(reads + phis × preds): the per-block, per-value and per-variable facts are tables
//! indexed by id, and so are the (variable, block) definitions of functions of up to
//! `DENSE_VARS` variables and `DENSE_BLOCKS` blocks (beyond, they are hashed); the worklist
//! visits a phi once per change of one of its operands.

use crate::ir::{mk, Block, Function, Inst, Opcode, Type, Value};
use rustc_hash::FxHashMap;
use std::cell::Cell;

/// An incoming CFG edge: target `which` (0 or 1) of the terminator `inst` in block `from`.
#[derive(Clone, Copy, Debug)]
pub struct Edge {
    pub from: Block,
    pub inst: Inst,
    pub which: u8,
}

struct Phi {
    block: Block,
    /// Its local variable.
    var: u32,
    value: Value,
    /// Its operands, one per entry of `preds[block]` once filled:
    /// `SsaBuilder::ops[ops_start..ops_start + ops_len]`.
    ops_start: u32,
    ops_len: u32,
    removed: bool,
}

/// No phi (in `phi_of`).
const NO_PHI: u32 = u32::MAX;

/// No local number (in `local_of`).
const NO_LOCAL: u32 = u32::MAX;

/// The local variables and blocks whose definitions are kept in the dense tables (at most
/// `DENSE_VARS * DENSE_BLOCKS` entries); the definitions of the others are hashed.
const DENSE_VARS: usize = 256;
const DENSE_BLOCKS: usize = 4096;

/// The entry of `v` at `index` of a table growing on demand.
fn slot<T: Clone>(v: &mut Vec<T>, index: usize, fill: T) -> &mut T {
    if index >= v.len() {
        v.resize(index + 1, fill);
    }
    &mut v[index]
}

/// The SSA builder for one function. Variables are `u32` ids chosen by the caller (indices,
/// possibly sparse over a whole program); the builder numbers the variables of its function
/// densely in order of appearance (local numbers) and keys its tables by those.
#[derive(Default)]
pub struct SsaBuilder {
    /// Per caller id (by index): its local number, or `NO_LOCAL`. Kept from one function to
    /// the next: only the entries of `vars` are reset.
    local_of: Vec<u32>,
    /// Per local number: the caller's id.
    vars: Vec<u32>,
    /// The definitions of (local variable, block), except each variable's newest one, which is
    /// in `newest`: per variable below `DENSE_VARS`, a table by block index below
    /// `DENSE_BLOCKS`; the others hashed in `defs`.
    dense: Vec<Vec<Option<Value>>>,
    defs: FxHashMap<(u32, Block), Value>,
    /// Per local variable: the block and value of its newest definition (most reads and writes
    /// of a variable follow each other in one block, and find it here).
    newest: Vec<Option<(Block, Value)>>,
    /// Per local variable.
    var_ty: Vec<Option<Type>>,
    /// Per block (by index): incoming edges, sealed, incomplete phis. The lists of `preds` and
    /// `incomplete` are kept from one function to the next, emptied (up to `blocks_touched`).
    preds: Vec<Vec<Edge>>,
    sealed: Vec<bool>,
    incomplete: Vec<Vec<usize>>,
    /// One past the highest block index given a list in `preds` or `incomplete`.
    blocks_touched: usize,
    phis: Vec<Phi>,
    /// The operands of all phis.
    ops: Vec<Value>,
    /// Blocks of a single-predecessor chain `read_no_fill` walks (kept for its allocation).
    chain: Vec<Block>,
    /// Per value (by index): its phi in `phis`, or `NO_PHI`.
    phi_of: Vec<u32>,
    /// Phis created but without operands yet.
    pending: Vec<usize>,
    /// Zero constants in the entry block, per type, for undefined values.
    zeros: FxHashMap<Type, Value>,
    entry: Option<Block>,
    /// The working tables of `finish`.
    buf: FinishBuffers,
    /// Whether `read` looks for a variable's one reaching definition before creating a phi
    /// (`known_value`).
    shortcut: bool,
    /// The variables assigned in some loop, sorted: (caller's id, position), positions
    /// numbering the assignments of the function in order; per loop header (by block index),
    /// the range of positions of its loop's assignments (empty: not a registered header).
    writes: Vec<(u32, u32)>,
    loop_writes: Vec<(u32, u32)>,
    /// Per block (by index): the stamp of the `known_value` search that last visited it.
    visit: Vec<u32>,
    stamp: u32,
    /// Per block (by index): the local variable whose `known_value` search last failed through
    /// it, or `NO_LOCAL`.
    failed: Vec<u32>,
    /// The work list and visited blocks of `known_value` (kept for their allocation).
    search: Vec<Block>,
    visited: Vec<Block>,
}

/// The most blocks a failed `known_value` search visits without marking them failed.
const MARK_FAILED: usize = 32;

/// Not a loop header (in `loop_writes`).
const NO_LOOP: (u32, u32) = (u32::MAX, u32::MAX);

/// The most blocks one `known_value` search visits before giving up.
const SEARCH_LIMIT: usize = 4096;

/// The working tables of `SsaBuilder::finish`, kept for the next function (see `SPARE`).
#[derive(Default)]
struct FinishBuffers {
    forward: Vec<Option<Value>>,
    user_start: Vec<u32>,
    user_list: Vec<u32>,
    fill: Vec<u32>,
    has_phi: Vec<bool>,
    merged: MergedUsers,
    work: Vec<usize>,
    us: Vec<u32>,
    seen: Vec<u32>,
    blocks: Vec<Block>,
    live: Vec<usize>,
    args: Vec<Value>,
}

/// Per phi, a list of phis in insertion order (the users of the phis replaced by it), all
/// lists in one table: `entries` holds (phi, next entry), `head` and `tail` each list's ends.
#[derive(Default)]
struct MergedUsers {
    head: Vec<u32>,
    tail: Vec<u32>,
    entries: Vec<(u32, u32)>,
}

/// No entry (end of a `MergedUsers` list).
const NIL: u32 = u32::MAX;

impl MergedUsers {
    /// `n` empty lists.
    fn reset(&mut self, n: usize) {
        reset(&mut self.head, n, NIL);
        reset(&mut self.tail, n, NIL);
        self.entries.clear();
    }

    /// Appends `users` to the list of `k`.
    fn extend(&mut self, k: usize, users: &[u32]) {
        for &u in users {
            let e = self.entries.len() as u32;
            self.entries.push((u, NIL));
            match self.tail[k] {
                NIL => self.head[k] = e,
                t => self.entries[t as usize].1 = e,
            }
            self.tail[k] = e;
        }
    }

    /// Moves the list of `k` to the end of `out`, leaving it empty.
    fn take_into(&mut self, k: usize, out: &mut Vec<u32>) {
        let mut e = self.head[k];
        while e != NIL {
            let (u, next) = self.entries[e as usize];
            out.push(u);
            e = next;
        }
        self.head[k] = NIL;
        self.tail[k] = NIL;
    }
}

/// `v` emptied, then `n` copies of `x`.
fn reset<T: Clone>(v: &mut Vec<T>, n: usize, x: T) {
    v.clear();
    v.resize(n, x);
}

/// A table of lists per block, kept from one builder to the next.
trait ClearLists {
    /// Empties the lists of the first `n` blocks, keeping their memory (the others are empty
    /// already), or drops the table when it is large.
    fn clear_lists(&mut self, n: usize);
}

impl<T> ClearLists for Vec<Vec<T>> {
    fn clear_lists(&mut self, n: usize) {
        if self.len() > KEEP_BLOCKS {
            *self = Vec::new();
        } else {
            let n = n.min(self.len());
            self[..n].iter_mut().for_each(Vec::clear);
        }
    }
}

thread_local! {
    /// The tables of this thread's last builder, emptied, for the next one to reuse: lowering
    /// builds one function after another, mostly of similar sizes.
    static SPARE: Cell<Option<SsaBuilder>> = const { Cell::new(None) };
}

/// Definitions above which an emptied table is dropped rather than kept for the next builder
/// (emptying a hash table costs its capacity, not its contents).
const KEEP_DEFS: usize = 1 << 16;

/// Blocks above which the per-block lists are dropped rather than kept for the next builder.
const KEEP_BLOCKS: usize = 1 << 16;

impl SsaBuilder {
    pub fn new(entry: Block) -> SsaBuilder {
        let mut s = SPARE.take().unwrap_or_default();
        s.entry = Some(entry);
        *slot(&mut s.sealed, entry.index(), false) = true;
        s
    }

    /// Empties every table, keeping its memory, and leaves the builder to this thread's next
    /// `new`.
    fn recycle(mut self) {
        if self.defs.capacity() > KEEP_DEFS {
            self.defs = FxHashMap::default();
        } else {
            self.defs.clear();
        }
        for &v in &self.vars {
            self.local_of[v as usize] = NO_LOCAL;
        }
        self.vars.clear();
        self.dense.iter_mut().for_each(Vec::clear);
        self.newest.clear();
        self.var_ty.clear();
        self.preds.clear_lists(self.blocks_touched);
        self.incomplete.clear_lists(self.blocks_touched);
        self.blocks_touched = 0;
        self.sealed.clear();
        self.phis.clear();
        self.ops.clear();
        self.chain.clear();
        self.phi_of.clear();
        self.pending.clear();
        self.zeros.clear();
        self.entry = None;
        self.shortcut = false;
        self.writes.clear();
        self.loop_writes.clear();
        self.visit.clear();
        self.stamp = 0;
        self.failed.clear();
        self.search.clear();
        self.visited.clear();
        SPARE.set(Some(self));
    }

    /// The local number of the caller's variable `var`, given on first sight.
    fn local(&mut self, var: u32) -> u32 {
        let l = slot(&mut self.local_of, var as usize, NO_LOCAL);
        if *l == NO_LOCAL {
            *l = self.vars.len() as u32;
            self.vars.push(var);
            self.newest.push(None);
            self.var_ty.push(None);
        }
        *l
    }

    pub fn declare(&mut self, var: u32, ty: Type) {
        let l = self.local(var);
        self.var_ty[l as usize] = Some(ty);
    }

    /// Lets `read` skip phis that would only ever see one value: before creating a phi at a
    /// join, it looks for the one definition reaching the join over the known edges. The
    /// values are those of the phis `finish` would keep (the trivial ones were to be replaced
    /// by that definition), but values of phis never created are not numbered.
    pub fn set_shortcut(&mut self, on: bool) {
        self.shortcut = on;
    }

    /// The variables `writes` assigns, as (caller's id, position) in any order; `loop_header`
    /// names ranges of positions.
    pub fn set_writes(&mut self, mut writes: Vec<(u32, u32)>) {
        writes.sort_unstable();
        self.writes = writes;
    }

    /// `header` is a loop header whose loop assigns the variables at positions `lo..hi` of
    /// `set_writes`: a variable assigned nowhere among them has, while `header` is unsealed,
    /// the value it has on the edges into `header` known so far.
    pub fn loop_header(&mut self, header: Block, lo: u32, hi: u32) {
        *slot(&mut self.loop_writes, header.index(), NO_LOOP) = (lo, hi);
    }

    /// Whether the loop of unsealed block `b` leaves local variable `var` alone.
    fn invariant_in(&self, var: u32, b: Block) -> bool {
        let Some(&(lo, hi)) = self.loop_writes.get(b.index()) else {
            return false;
        };
        if (lo, hi) == NO_LOOP {
            return false;
        }
        let id = self.vars[var as usize];
        let k = self.writes.partition_point(|&w| w < (id, lo));
        !matches!(self.writes.get(k), Some(&(w, pos)) if w == id && pos < hi)
    }

    /// The one value local variable `var` can have at the end of `block` (which has no
    /// definition of it), searching back from `block` to the definitions: the value if every
    /// path meets a definition of that same value before any entry, unsealed block (unless its
    /// loop leaves `var` alone) or block whose search failed already; or, if every path meets
    /// the same unsealed block and no definition (through sealed blocks only), a new
    /// (incomplete) phi there. It is recorded
    /// as the definition in every block on the way. `None` (and the blocks on the way marked
    /// failed) otherwise.
    ///
    /// Where it gives a value, the phis `read` would have created on the way are the trivial
    /// ones `finish` replaces by that value; the new phi is created before any other value
    /// that survives `finish`, as it would have been.
    fn known_value(&mut self, f: &mut Function, var: u32, block: Block) -> Option<Value> {
        self.stamp += 1;
        let stamp = self.stamp;
        let mut search = std::mem::take(&mut self.search);
        let mut visited = std::mem::take(&mut self.visited);
        search.clear();
        visited.clear();
        *slot(&mut self.visit, block.index(), 0) = stamp;
        visited.push(block);
        search.extend(self.preds(block).iter().map(|e| e.from));
        let mut found: Option<Value> = None;
        let mut unsealed: Option<Block> = None;
        // Whether the search went through an unsealed block (whose phis would have been
        // filled only once it is sealed, so a phi found missing on the way would have been
        // created then, not now).
        let mut deferred = !self.is_sealed(block);
        let ok = loop {
            let Some(c) = search.pop() else {
                break match (found, unsealed) {
                    (Some(_), None) => true,
                    (None, Some(_)) => !deferred,
                    _ => false,
                };
            };
            let mark = slot(&mut self.visit, c.index(), 0);
            if *mark == stamp {
                continue;
            }
            *mark = stamp;
            if let Some(v) = self.def(var, c) {
                if found.is_some_and(|f| f != v) {
                    break false;
                }
                found = Some(v);
                continue;
            }
            if visited.len() >= SEARCH_LIMIT || self.failed.get(c.index()) == Some(&var) {
                visited.push(c);
                break false;
            }
            if !self.is_sealed(c) {
                if !self.invariant_in(var, c) {
                    if unsealed.is_some() {
                        break false;
                    }
                    unsealed = Some(c);
                    continue;
                }
                deferred = true;
            }
            visited.push(c);
            let preds = self.preds(c);
            if preds.is_empty() {
                break false;
            }
            search.extend(preds.iter().map(|e| e.from));
        };
        let result = if ok {
            let v = match (found, unsealed) {
                (Some(v), _) => v,
                (None, Some(c)) => {
                    let k = self.new_phi(f, var, c);
                    slot(&mut self.incomplete, c.index(), Vec::new()).push(k);
                    self.blocks_touched = self.blocks_touched.max(c.index() + 1);
                    let v = self.phis[k].value;
                    self.set_def(var, c, v);
                    v
                }
                (None, None) => unreachable!(),
            };
            for &c in &visited {
                self.set_def(var, c, v);
            }
            Some(v)
        } else {
            // A small search is cheaper to repeat than the phis a mark would cost; a large one
            // marks its blocks, so that the reads of the phi created instead do not search the
            // same blocks again.
            if visited.len() > MARK_FAILED {
                for &c in &visited {
                    *slot(&mut self.failed, c.index(), NO_LOCAL) = var;
                }
            }
            None
        };
        self.search = search;
        self.visited = visited;
        result
    }

    fn var_ty(&self, var: u32) -> Type {
        self.var_ty[var as usize].expect("declared variable")
    }

    pub fn add_edge(&mut self, to: Block, e: Edge) {
        debug_assert!(!self.is_sealed(to), "edge into sealed {to}");
        slot(&mut self.preds, to.index(), Vec::new()).push(e);
        self.blocks_touched = self.blocks_touched.max(to.index() + 1);
    }

    pub fn preds(&self, b: Block) -> &[Edge] {
        self.preds.get(b.index()).map_or(&[], |v| v.as_slice())
    }

    pub fn is_sealed(&self, b: Block) -> bool {
        self.sealed.get(b.index()).copied().unwrap_or(false)
    }

    fn phi_of(&self, v: Value) -> Option<usize> {
        match self.phi_of.get(v.index()) {
            Some(&k) if k != NO_PHI => Some(k as usize),
            _ => None,
        }
    }

    pub fn write(&mut self, var: u32, block: Block, v: Value) {
        let l = self.local(var);
        self.set_def(l, block, v);
    }

    /// The definition of local variable `var` in `block`, if any.
    fn def(&self, var: u32, block: Block) -> Option<Value> {
        match self.newest[var as usize] {
            Some((b, v)) if b == block => Some(v),
            _ if (var as usize) < DENSE_VARS && block.index() < DENSE_BLOCKS => self
                .dense
                .get(var as usize)
                .and_then(|d| d.get(block.index()))
                .copied()
                .flatten(),
            _ => self.defs.get(&(var, block)).copied(),
        }
    }

    /// Records `v` as the definition of local variable `var` in `block`.
    fn set_def(&mut self, var: u32, block: Block, v: Value) {
        let Some((b, old)) = self.newest[var as usize].replace((block, v)) else {
            return;
        };
        if b == block {
            return;
        }
        let l = var as usize;
        if l < DENSE_VARS && b.index() < DENSE_BLOCKS {
            if self.dense.len() <= l {
                self.dense.resize_with(l + 1, Vec::new);
            }
            *slot(&mut self.dense[l], b.index(), None) = Some(old);
        } else {
            self.defs.insert((var, b), old);
        }
    }

    /// A zero of `ty` defined at the top of the entry block.
    pub fn zero(&mut self, f: &mut Function, ty: Type) -> Value {
        if let Some(&z) = self.zeros.get(&ty) {
            return z;
        }
        let data = match ty {
            Type::F32 => mk::fconst(0.0),
            t => mk::iconst(t, 0),
        };
        let entry = self.entry.expect("entry");
        let i = match f.layout().first_inst(entry) {
            Some(first) => f.insert_new_before(first, data, &[]),
            None => f.append_new(entry, data, &[]),
        };
        let z = f.res(i);
        self.zeros.insert(ty, z);
        z
    }

    fn new_phi(&mut self, f: &mut Function, var: u32, block: Block) -> usize {
        let ty = self.var_ty(var);
        let value = f.append_block_param(block, ty);
        let k = self.phis.len();
        self.phis.push(Phi {
            block,
            var,
            value,
            ops_start: 0,
            ops_len: 0,
            removed: false,
        });
        *slot(&mut self.phi_of, value.index(), NO_PHI) = k as u32;
        k
    }

    /// The value of `var` at the end of `block` (so far).
    pub fn read(&mut self, f: &mut Function, var: u32, block: Block) -> Value {
        let l = self.local(var);
        let v = self.read_no_fill(f, l, block);
        self.fill_pending(f);
        v
    }

    /// The value of local variable `var` at the end of `block`, leaving new phis pending.
    fn read_no_fill(&mut self, f: &mut Function, var: u32, block: Block) -> Value {
        let mut chain = std::mem::take(&mut self.chain);
        let mut b = block;
        let v = loop {
            if let Some(v) = self.def(var, b) {
                break v;
            }
            if !self.is_sealed(b) {
                if self.shortcut && self.invariant_in(var, b) {
                    if let Some(v) = self.known_value(f, var, b) {
                        break v;
                    }
                }
                let k = self.new_phi(f, var, b);
                slot(&mut self.incomplete, b.index(), Vec::new()).push(k);
                self.blocks_touched = self.blocks_touched.max(b.index() + 1);
                break self.phis[k].value;
            }
            let preds = self.preds(b);
            match preds.len() {
                0 => {
                    // Entry (undefined variable) or unreachable code.
                    let ty = self.var_ty(var);
                    break self.zero(f, ty);
                }
                1 => {
                    chain.push(b);
                    b = preds[0].from;
                }
                _ => {
                    if self.shortcut {
                        if let Some(v) = self.known_value(f, var, b) {
                            break v;
                        }
                    }
                    let k = self.new_phi(f, var, b);
                    self.pending.push(k);
                    break self.phis[k].value;
                }
            }
        };
        self.set_def(var, b, v);
        for c in chain.drain(..) {
            self.set_def(var, c, v);
        }
        self.chain = chain;
        v
    }

    /// The operands of phi `k`.
    fn ops(&self, k: usize) -> &[Value] {
        let p = &self.phis[k];
        &self.ops[p.ops_start as usize..(p.ops_start + p.ops_len) as usize]
    }

    fn fill_pending(&mut self, f: &mut Function) {
        while let Some(k) = self.pending.pop() {
            let (block, var) = (self.phis[k].block, self.phis[k].var);
            // Reading adds no edges: `preds(block)` stays as it is during the loop.
            let n = self.preds(block).len();
            let start = self.ops.len();
            let placeholder = self.phis[k].value;
            self.ops.resize(start + n, placeholder);
            for i in 0..n {
                let from = self.preds[block.index()][i].from;
                self.ops[start + i] = self.read_no_fill(f, var, from);
            }
            self.phis[k].ops_start = start as u32;
            self.phis[k].ops_len = n as u32;
        }
    }

    /// All predecessors of `block` are known.
    pub fn seal(&mut self, f: &mut Function, block: Block) {
        if self.is_sealed(block) {
            return;
        }
        *slot(&mut self.sealed, block.index(), false) = true;
        if let Some(list) = self.incomplete.get_mut(block.index()) {
            self.pending.append(list);
        }
        self.fill_pending(f);
    }

    /// Phases 2 and 3: removes trivial phis and adds the remaining phi operands to the branches.
    /// Every block must be sealed.
    pub fn finish(mut self, f: &mut Function) {
        self.fill_pending(f);
        let mut buf = std::mem::take(&mut self.buf);
        let FinishBuffers {
            forward,
            user_start,
            user_list,
            fill,
            has_phi,
            merged,
            work,
            us,
            seen,
            blocks,
            live,
            args,
        } = &mut buf;
        let n = self.phis.len();
        // Per value (by index): the value a removed phi was replaced by.
        reset(forward, f.num_values(), None);
        // The value `v` stands for, shortening the chain of replacements it went through.
        let resolve = |forward: &mut [Option<Value>], v: Value| {
            let mut r = v;
            while let Some(&Some(w)) = forward.get(r.index()) {
                r = w;
            }
            let mut x = v;
            while let Some(&Some(w)) = forward.get(x.index()) {
                forward[x.index()] = Some(r);
                x = w;
            }
            r
        };
        // Per value (by index): the phis reading it, `user_list[user_start[v]..user_start[v +
        // 1]]` in phi order; per phi `k` then `merged[k]`: the users of the phis replaced by
        // it (only a phi's users are read again, when it is removed in turn).
        let nv = f.num_values();
        reset(user_start, nv + 1, 0);
        for k in 0..n {
            for &op in self.ops(k) {
                user_start[op.index() + 1] += 1;
            }
        }
        for v in 0..nv {
            user_start[v + 1] += user_start[v];
        }
        reset(user_list, user_start[nv] as usize, 0);
        fill.clone_from(user_start);
        for k in 0..n {
            for &op in self.ops(k) {
                user_list[fill[op.index()] as usize] = k as u32;
                fill[op.index()] += 1;
            }
        }
        merged.reset(n);
        reset(seen, n, 0);
        let mut round = 0u32;
        work.clear();
        work.extend((0..n).rev());
        while let Some(k) = work.pop() {
            if self.phis[k].removed {
                continue;
            }
            let me = self.phis[k].value;
            let mut same: Option<Value> = None;
            let mut trivial = true;
            for &op in self.ops(k) {
                let op = resolve(forward, op);
                if op == me || Some(op) == same {
                    continue;
                }
                if same.is_some() {
                    trivial = false;
                    break;
                }
                same = Some(op);
            }
            if !trivial {
                continue;
            }
            let v = match same {
                Some(v) => v,
                None => {
                    let ty = f.ty(me);
                    self.zero(f, ty)
                }
            };
            self.phis[k].removed = true;
            *slot(forward, me.index(), None) = Some(v);
            f.replace_all_uses(me, v);
            // A removed phi is never an operand again (it resolves to `v`), so its users are
            // read once, here.
            let m = me.index();
            us.clear();
            us.extend_from_slice(&user_list[user_start[m] as usize..user_start[m + 1] as usize]);
            merged.take_into(k, us);
            // An entry of a removed phi, or one below a later entry of the same phi, is popped
            // only to be skipped or to find the phi unchanged since its last check (each change
            // of a phi's operands pushes it again, above): only each live phi's last entry is
            // kept, in order.
            round += 1;
            let mut keep = us.len();
            for r in (0..us.len()).rev() {
                let u = us[r];
                if self.phis[u as usize].removed || seen[u as usize] == round {
                    continue;
                }
                seen[u as usize] = round;
                keep -= 1;
                us[keep] = u;
            }
            us.drain(..keep);
            work.extend(us.iter().map(|&u| u as usize).filter(|&u| u != k));
            if let Some(kv) = self.phi_of(v) {
                merged.extend(kv, us);
            }
        }
        // Phase 3a: drop removed phis from the parameter lists.
        reset(has_phi, f.num_blocks(), false);
        for p in &self.phis {
            has_phi[p.block.index()] = true;
        }
        blocks.clear();
        blocks.extend(
            has_phi
                .iter()
                .enumerate()
                .filter(|&(_, &h)| h)
                .map(|(b, _)| Block::new(b)),
        );
        for &b in blocks.iter() {
            let phis = &self.phis;
            let phi_of = &self.phi_of;
            f.retain_block_params(b, |p| match phi_of.get(p.index()) {
                Some(&k) if k != NO_PHI => !phis[k as usize].removed,
                _ => true,
            });
        }
        // Phase 3b: live phi operands become branch arguments, in parameter order, after
        // those the branch passes already: the whole operand list of the branch is written
        // anew (the condition, the then-arguments, the else-arguments).
        for &b in blocks.iter() {
            live.clear();
            live.extend(f.blocks.params[b].iter().filter_map(|&p| self.phi_of(p)));
            if live.is_empty() {
                continue;
            }
            for (e_idx, e) in self.preds(b).iter().enumerate() {
                let (i, which) = (e.inst, e.which as usize);
                let d = f.data(i);
                // Operands of `i` before and after those of target `which`.
                let (before, after) = match d.op {
                    Opcode::Jump => (0, 0),
                    Opcode::Brif => {
                        let n = f.args(i).len();
                        let then_end = 1 + d.aux as usize;
                        match which {
                            0 => (1, n - then_end),
                            _ => (then_end, 0),
                        }
                    }
                    op => panic!("{i}: {} is not a branch", op.name()),
                };
                let old = f.args(i);
                args.clear();
                args.extend_from_slice(&old[..old.len() - after]);
                for &k in live.iter() {
                    args.push(resolve(forward, self.ops(k)[e_idx]));
                }
                args.extend_from_slice(&old[old.len() - after..]);
                if d.op == Opcode::Brif && which == 0 {
                    f.insts.data[i].aux = (args.len() - after - before) as u32;
                }
                f.set_args(i, args);
            }
        }
        self.buf = buf;
        self.recycle();
    }
}
