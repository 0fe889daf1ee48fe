//! Loads from cleared local memory that no store reaches become constant zeros.
//!
//! A local array cleared by `memset(a, 0, size)` (how `int a[n] = {}` and short initialiser
//! lists are lowered) and afterwards written only by stores still holds zero in every byte
//! outside the stores' reach. The reach of an access is an interval of byte offsets from the
//! array's start: constant offsets add a point, a `gep` index adds its value range from
//! `analysis::range` (narrowed by the branch conditions where the `gep` is computed) times the
//! element size. A load that the clearing call dominates and whose bytes lie outside every
//! store's interval reads zero (stores of zero do not count: they keep the bytes cleared).
//! Accessing bytes outside the array is undefined, so only the part of an interval inside the
//! array counts (an index known only to lie in `[-5, 9]` reads bytes 0 to 39 of its array).
//!
//! The array must not escape: every use of an address derived from it is address arithmetic
//! (`offset`, `gep` on it as the base), a load, a store into it, a clearing call, or a call that
//! does not write it (by its callee's effect summary); an address passed to any other call, to a
//! block parameter or stored as a value keeps the array as it is.
//!
//! A global cleared whole by `memset(g, 0, size)` (what `loop_idiom` makes of a zeroing loop)
//! holds zero until something may write it again; a load from it at any offset reads zero
//! where every path from the entry passes a clearing call after its last possible write. That
//! is a forward must-dataflow over the blocks, one bit per cleared global: a clearing call sets
//! the bit, a store of a value other than zero or a call that may write the global clears it,
//! a block starts from the meet (and) of its predecessors, the entry from nothing, and the
//! iteration starts optimistic (every bit set) so that a loop that does not write the global
//! keeps it cleared around its back edge.
//!
//! Needs: CFG, dominator tree and ranges from the analysis manager, the ranges asked for only
//! in functions with a cleared array whose loads the ranges may decide: a load no clearing
//! call dominates, or at a constant offset that a store at a constant offset overlaps, reads
//! what it reads whatever the ranges say. Keeps the CFG (loads become constants).
//! Cost: that of the ranges plus O(uses of the arrays' addresses * stores); for globals,
//! O(instructions) once plus O(blocks * edges) per round of the dataflow.

use crate::analysis::alias::{base_of, call_writes, may_alias, Base};
use crate::analysis::{Cfg, DomTree, FuncAnalyses, Interval, Preserved, Ranges};
use crate::ir::{mk, Block, Function, GlobalId, Inst, ModuleCx, Opcode, Type, Value};

pub fn run(f: &mut Function, cx: &ModuleCx, am: &mut FuncAnalyses) -> Preserved {
    let arrays: Vec<Inst> = f
        .layout()
        .block_insts(f.entry())
        .filter(|&i| f.op(i) == Opcode::Alloca && is_cleared_and_loaded(f, cx, f.res(i)))
        .collect();
    let mut zeros = Vec::new();
    zero_global_loads(f, cx, am, &mut zeros);
    if !arrays.is_empty() {
        // The ranges cost more than the rest of the pass: asked for only when some load may
        // read zero whatever they say (see `may_read_zero`).
        let (cfg, dt) = am.cfg_domtree(f);
        let arrays: Vec<Inst> = arrays
            .into_iter()
            .filter(|&a| {
                accesses(f, cx, cfg, a, |v, _| Interval::full(f.ty(v)))
                    .is_some_and(|acc| may_read_zero(f, dt, f.data(a).imm, &acc))
            })
            .collect();
        if !arrays.is_empty() {
            let (cfg, dt, ranges) = am.ranges(f, cx);
            for a in arrays {
                zero_loads(f, cx, cfg, dt, ranges, a, &mut zeros);
            }
        }
    }
    for &l in &zeros {
        let data = match f.data(l).ty {
            Type::F32 => mk::fconst(0.0),
            ty => mk::iconst(ty, 0),
        };
        f.replace_inst(l, data, &[]);
    }
    Preserved::cfg_kept(!zeros.is_empty())
}

/// The global `call memset(gaddr g, 0, n)` with `n >= size of g` clears whole, if `i` is one.
fn cleared_global(f: &Function, cx: &ModuleCx, i: Inst) -> Option<GlobalId> {
    if f.op(i) != Opcode::Call || f.args(i).len() != 3 {
        return None;
    }
    let g = f
        .def_inst(f.arg(i, 0))
        .filter(|&d| f.op(d) == Opcode::Gaddr)?;
    let g = f.global(g);
    let size = cx.globals.get(g)?.size;
    is_clearing(f, cx, f.arg(i, 0), size as i64, i).then_some(g)
}

/// What an instruction does to the cleared bits of the globals (`zero_global_loads`).
enum Event {
    /// Clears the bits `kill` (a possible write), then sets `gen` (a clearing call).
    Write { kill: u64, gen: u64 },
    /// A load from the global of bit `bit`.
    Load { inst: Inst, bit: u32 },
}

/// Pushes onto `out` the loads from globals cleared on every path to them (see the module
/// comment). At most 64 globals are followed: the first cleared ones in layout order.
fn zero_global_loads(f: &Function, cx: &ModuleCx, am: &mut FuncAnalyses, out: &mut Vec<Inst>) {
    let mut globals: Vec<GlobalId> = Vec::new();
    for b in f.layout().blocks() {
        for i in f.layout().block_insts(b) {
            if let Some(g) = cleared_global(f, cx, i) {
                if !globals.contains(&g) && globals.len() < 64 {
                    globals.push(g);
                }
            }
        }
    }
    if globals.is_empty() {
        return;
    }
    let cfg = am.cfg(f);
    let bits_of = |base: Base| -> u64 {
        let mut m = 0u64;
        for (k, &g) in globals.iter().enumerate() {
            if may_alias(cx, base, Base::Global(g)) {
                m |= 1 << k;
            }
        }
        m
    };
    let all = bits_of(Base::Unknown);
    // The events of each reachable block, in order.
    let mut events: Vec<Vec<Event>> = Vec::with_capacity(cfg.rpo.len());
    let mut loads = 0usize;
    for &b in &cfg.rpo {
        let mut ev = Vec::new();
        for i in f.layout().block_insts(b) {
            match f.op(i) {
                Opcode::Store if !is_zero(f, f.arg(i, 0)) => {
                    let kill = bits_of(base_of(f, cfg, f.arg(i, 1)));
                    if kill != 0 {
                        ev.push(Event::Write { kill, gen: 0 });
                    }
                }
                Opcode::Call => {
                    let d = cx.decl(f.callee(i));
                    let kill = if !d.defined && d.name == "memset" && f.args(i).len() == 3 {
                        // Writes only where its first argument points.
                        bits_of(base_of(f, cfg, f.arg(i, 0)))
                    } else {
                        match call_writes(f, cx, cfg, i) {
                            None => all,
                            Some(bases) => bases.into_iter().fold(0, |m, b| m | bits_of(b)),
                        }
                    };
                    let gen = cleared_global(f, cx, i)
                        .and_then(|g| globals.iter().position(|&x| x == g))
                        .map_or(0, |k| 1u64 << k);
                    if kill != 0 || gen != 0 {
                        ev.push(Event::Write { kill, gen });
                    }
                }
                Opcode::Load if matches!(f.data(i).ty, Type::I32 | Type::F32) => {
                    if let Base::Global(g) = base_of(f, cfg, f.arg(i, 0)) {
                        if let Some(k) = globals.iter().position(|&x| x == g) {
                            ev.push(Event::Load {
                                inst: i,
                                bit: k as u32,
                            });
                            loads += 1;
                        }
                    }
                }
                _ => {}
            }
        }
        events.push(ev);
    }
    if loads == 0 {
        return;
    }
    let transfer = |ev: &[Event], mut m: u64| {
        for e in ev {
            if let Event::Write { kill, gen } = *e {
                m = (m & !kill) | gen;
            }
        }
        m
    };
    // Optimistic start: every bit set on every block's exit but the entry's inputs.
    let n = cfg.rpo.len();
    let mut exit_bits = vec![all; n];
    let mut entry_bits = vec![0u64; n];
    let mut changed = true;
    while changed {
        changed = false;
        for (k, &b) in cfg.rpo.iter().enumerate() {
            let inb = if k == 0 {
                0
            } else {
                cfg.preds[b]
                    .iter()
                    .map(|&p| cfg.rpo_index[p])
                    .filter(|&pi| pi != u32::MAX)
                    .fold(all, |m, pi| m & exit_bits[pi as usize])
            };
            entry_bits[k] = inb;
            let outb = transfer(&events[k], inb);
            if outb != exit_bits[k] {
                exit_bits[k] = outb;
                changed = true;
            }
        }
    }
    for (k, ev) in events.iter().enumerate() {
        let mut m = entry_bits[k];
        for e in ev {
            match *e {
                Event::Write { kill, gen } => m = (m & !kill) | gen,
                Event::Load { inst, bit } => {
                    if m & (1 << bit) != 0 {
                        out.push(inst);
                    }
                }
            }
        }
    }
}

/// Whether `v` is a constant whose bits are all zero (a store of it keeps memory cleared).
fn is_zero(f: &Function, v: Value) -> bool {
    f.as_iconst(v) == Some(0) || f.as_fconst(v).is_some_and(|x| x.to_bits() == 0)
}

/// `call memset(root, 0, n)` with `n >= size`: clears the whole alloca at `root`.
fn is_clearing(f: &Function, cx: &ModuleCx, root: Value, size: i64, user: Inst) -> bool {
    if f.op(user) != Opcode::Call {
        return false;
    }
    let d = cx.decl(f.callee(user));
    let args = f.args(user);
    !d.defined
        && d.name == "memset"
        && args.len() == 3
        && args[0] == root
        && f.as_iconst(args[1]) == Some(0)
        && f.as_iconst(args[2]).is_some_and(|n| n >= size)
}

/// A quick filter before the ranges are computed: the alloca is cleared directly and some
/// address derived from it is loaded.
fn is_cleared_and_loaded(f: &Function, cx: &ModuleCx, root: Value) -> bool {
    let Some(a) = f.def_inst(root) else {
        return false;
    };
    let size = f.data(a).imm;
    let cleared = f
        .uses_of(root)
        .any(|u| is_clearing(f, cx, root, size, f.uses().user[u]));
    cleared
        && crate::analysis::alias::derived_users_via(f, root, false)
            .iter()
            .any(|&(u, _)| f.op(u) == Opcode::Load)
}

/// Offsets (bytes) beyond this bound are clamped to it: no array is that large.
const FAR: i128 = 1 << 62;

/// The bytes `[lo, hi]` an access may touch, as offsets from the array's start.
#[derive(Clone, Copy)]
struct Reach {
    lo: i64,
    hi: i64,
}

impl Reach {
    fn meet(self, o: Reach) -> Reach {
        Reach {
            lo: self.lo.max(o.lo),
            hi: self.hi.min(o.hi),
        }
    }

    fn overlaps(self, o: Reach) -> bool {
        self.lo <= o.hi && o.lo <= self.hi
    }
}

/// The accesses of a cleared alloca that does not escape (`accesses`).
struct Accesses {
    /// The calls clearing it whole.
    clears: Vec<Inst>,
    /// Each load with the bytes it may read, and whether its address is the alloca plus a
    /// constant (no `gep` on the way: the bytes do not depend on the ranges).
    loads: Vec<(Inst, Reach, bool)>,
    /// The bytes each store of a value other than zero may write, and whether its address is
    /// the alloca plus a constant.
    stores: Vec<(Reach, bool)>,
}

/// The accesses of alloca `a`, a `gep` index `v` in block `b` taken to lie in `index(v, b)`;
/// `None` when the array escapes.
fn accesses(
    f: &Function,
    cx: &ModuleCx,
    cfg: &Cfg,
    a: Inst,
    mut index: impl FnMut(Value, Block) -> Interval,
) -> Option<Accesses> {
    let root = f.res(a);
    let size = f.data(a).imm;
    // Offsets of every derived address, from the root outwards, and whether each is constant.
    let mut offs: Vec<(Value, i128, i128, bool)> = vec![(root, 0, 0, true)];
    let mut acc = Accesses {
        clears: Vec::new(),
        loads: Vec::new(),
        stores: Vec::new(),
    };
    let mut k = 0;
    while k < offs.len() {
        let (v, lo, hi, exact) = offs[k];
        k += 1;
        // Beyond any array: kept finite so that sums of offsets cannot overflow.
        let (lo, hi) = (lo.max(-FAR), hi.min(FAR));
        for u in f.uses_of(v) {
            let user = f.uses().user[u];
            match f.op(user) {
                Opcode::Offset if f.arg(user, 0) == v => {
                    let c = f.data(user).imm as i128;
                    offs.push((f.res(user), lo + c, hi + c, exact));
                }
                Opcode::Gep if f.arg(user, 0) == v && f.arg(user, 1) != v => {
                    let scale = f.data(user).imm as i128;
                    let idx = f.arg(user, 1);
                    let b = f.layout().inst_block(user)?;
                    let r = index(idx, b);
                    let (x, y) = (r.lo as i128 * scale, r.hi as i128 * scale);
                    offs.push((f.res(user), lo + x.min(y), hi + x.max(y), false));
                }
                Opcode::Load if f.arg(user, 0) == v => {
                    let bytes = f.data(user).ty.bytes() as i128;
                    acc.loads.push((user, reach(lo, hi + bytes - 1), exact));
                }
                Opcode::Store if f.arg(user, 1) == v && f.arg(user, 0) != v => {
                    let val = f.arg(user, 0);
                    let bytes = f.ty(val).bytes() as i128;
                    if !is_zero(f, val) {
                        acc.stores.push((reach(lo, hi + bytes - 1), exact));
                    }
                }
                Opcode::Call if v == root && is_clearing(f, cx, root, size, user) => {
                    acc.clears.push(user)
                }
                // A call that only reads the array (printing it).
                Opcode::Call
                    if call_writes(f, cx, cfg, user)
                        .is_some_and(|w| !w.contains(&Base::Alloca(a))) => {}
                _ => return None,
            }
        }
    }
    Some(acc)
}

/// The bytes of an alloca of `size` bytes: an access outside the array is undefined, so only
/// the bytes inside count.
fn inside(size: i64) -> Reach {
    Reach {
        lo: 0,
        hi: size - 1,
    }
}

/// Whether a load of `acc` (found with any index ranges) may read zero under some ranges: one
/// a clearing call dominates, unless its constant bytes lie outside the array or a store at a
/// constant offset overlaps them (the ranges change neither).
fn may_read_zero(f: &Function, dt: &DomTree, size: i64, acc: &Accesses) -> bool {
    acc.loads.iter().any(|&(l, r, exact)| {
        if exact {
            let r = r.meet(inside(size));
            if r.lo > r.hi || acc.stores.iter().any(|&(s, sx)| sx && s.overlaps(r)) {
                return false;
            }
        }
        acc.clears.iter().any(|&c| dt.inst_dominates(f, c, l))
    })
}

/// Pushes onto `out` the loads of alloca `a` that read zero; nothing when the array escapes or
/// is not cleared.
fn zero_loads(
    f: &Function,
    cx: &ModuleCx,
    cfg: &Cfg,
    dt: &DomTree,
    ranges: &Ranges,
    a: Inst,
    out: &mut Vec<Inst>,
) {
    let size = f.data(a).imm;
    let Some(acc) = accesses(f, cx, cfg, a, |v, b| ranges.range_at(f, v, b)) else {
        return;
    };
    for &(l, r, _) in &acc.loads {
        let r = r.meet(inside(size));
        if r.lo > r.hi
            || acc.stores.iter().any(|&(s, _)| s.overlaps(r))
            || !acc.clears.iter().any(|&c| dt.inst_dominates(f, c, l))
        {
            continue;
        }
        out.push(l);
    }
}

/// The bytes `[lo, hi]`, clamped to `FAR`.
fn reach(lo: i128, hi: i128) -> Reach {
    Reach {
        lo: lo.clamp(-FAR, FAR) as i64,
        hi: hi.clamp(-FAR, FAR) as i64,
    }
}
