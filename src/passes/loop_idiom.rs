//! Loop idioms: loop nests that only fill a contiguous range of memory with one repeated byte
//! become one call of the C library's `memset`.
//!
//! A loop qualifies when its one latch is its only exit, every block of it (outside one inner
//! loop) runs on every trip, it loads nothing, calls nothing, and leaves no value behind, and its
//! one side effect per trip is either
//! - a store of a constant whose bytes are all equal (`0`, `-1`, `0.0`, ...) to an address that
//!   moves by exactly the stored width per trip (`a[i] = 0` counting `i` up), or
//! - one inner loop of that kind whose whole range is exactly as long as the outer step, so the
//!   ranges of consecutive trips touch (`a[i][j] = -1` over whole rows).
//!
//! The outermost such loop of a nest is replaced by a call in its preheader when it fills at
//! least [`MIN_BYTES`] bytes; a trip count known only at run time (a counter stepping by one to a
//! bound) gets a guard that calls `memset` for long ranges and keeps the loop for short ones.
//! Shorter constant ranges stay loops: unrolling turns them into a few stores, which is cheaper
//! than a call. The counter's range cannot wrap: a wrapping counter would store outside every
//! object.
//!
//! A module pass: it declares `memset` when a function needs it (functions are matched and
//! rewritten in parallel). `memset` keeps no pointer, so globals filled this way stay
//! directly-addressed for alias analysis. Runs after `indvars`, which has given the counters'
//! exit values closed forms, and before `lsr` rewrites the addresses into pointer steps.

use crate::analysis::loop_shape::{
    exact_trip_count, latch_counter, latch_exit, trip_count, values_used_after, SingleExit,
};
use crate::analysis::{Cfg, DomTree, Loop, LoopForest};
use crate::ir::{
    mk, Block, Builder, CmpCond, Effects, FuncId, Function, Module, Opcode, Signature, Type, Value,
};
use rayon::prelude::*;

/// Ranges shorter than this stay loops. A call of glibc's `memset` costs a few dozen
/// instructions before its first store and then stores eight bytes at a time, where a loop
/// stores four: the call pays from about this length on.
pub const MIN_BYTES: i64 = 256;

/// The bytes a loop (with its inner loops) writes: from `base + sum(index * scale) + off`, `len`
/// bytes, every one equal to `byte`. `base` and the indices are defined outside the loop.
#[derive(Clone, Debug)]
struct Fill {
    base: Value,
    terms: Vec<(Value, i64)>,
    off: i64,
    len: Len,
    byte: u8,
}

#[derive(Clone, Copy, Debug)]
enum Len {
    Const(i64),
    /// `trips * stride` bytes, the trip count of a counter from `i0` up by one while it is below
    /// `n` (or at most `n`, `inclusive`).
    Runtime {
        i0: Value,
        n: Value,
        inclusive: bool,
        stride: i64,
    },
}

/// One loop to replace.
struct Plan {
    pre: Block,
    exit: Block,
    exit_args: Vec<Value>,
    header: Block,
    header_args: Vec<Value>,
    fill: Fill,
}

pub fn run_module(m: &mut Module) -> bool {
    if let Some(id) = m.cx.func_by_name("memset") {
        if m.cx.decls[id].defined {
            return false; // the program's own function of that name
        }
    }
    let ids = m.defined_funcs();
    let plans: Vec<(FuncId, Vec<Plan>)> = ids
        .par_iter()
        .map(|&id| (id, plan_function(&m.funcs[id])))
        .filter(|(_, p)| !p.is_empty())
        .collect();
    if plans.is_empty() {
        return false;
    }
    let memset = m.cx.func_by_name("memset").unwrap_or_else(|| {
        let sig = Signature {
            params: vec![Type::Ptr, Type::I32, Type::I64],
            ret: Type::Ptr,
            variadic: false,
        };
        let id = m.declare_func("memset", sig, false);
        m.cx.decls[id].effects = Effects {
            pure: false,
            reads_memory: true,
            writes_memory: true,
        };
        id
    });
    let ret = m.cx.decls[memset].sig.ret;
    let mut funcs: Vec<(FuncId, &mut Function)> = m
        .funcs
        .iter_mut()
        .filter(|(id, _)| plans.iter().any(|(p, _)| p == id))
        .collect();
    funcs.par_iter_mut().for_each(|(id, f)| {
        let plans = &plans.iter().find(|(p, _)| p == id).expect("planned").1;
        for p in plans {
            apply(f, p, memset, ret);
        }
    });
    true
}

/// The loops of `f` to replace: the outermost fill of each nest that is long enough or has a
/// run-time length.
fn plan_function(f: &Function) -> Vec<Plan> {
    let cfg = Cfg::compute(f);
    let dt = DomTree::compute(f, &cfg);
    let forest = LoopForest::compute(&cfg, &dt);
    if forest.loops.is_empty() {
        return Vec::new();
    }
    // Loop ids number inner loops before the loops around them.
    let mut fills: Vec<Option<(Fill, SingleExit)>> = Vec::with_capacity(forest.loops.len());
    for (l, _) in forest.loops.iter() {
        let fill = summarize(f, &cfg, &dt, &forest, l, &fills);
        fills.push(fill);
    }
    let mut plans = Vec::new();
    for (l, data) in forest.loops.iter() {
        let Some((fill, shape)) = &fills[l.index()] else {
            continue;
        };
        if data.parent.is_some_and(|p| fills[p.index()].is_some()) {
            continue; // the loop around fills more
        }
        if matches!(fill.len, Len::Const(n) if n < MIN_BYTES) {
            continue;
        }
        let pt = f.terminator(shape.pre).expect("preheader jumps");
        plans.push(Plan {
            pre: shape.pre,
            exit: shape.exit,
            exit_args: shape.exit_args.clone(),
            header: data.header,
            header_args: f.branch_args(pt, 0).to_vec(),
            fill: fill.clone(),
        });
    }
    plans
}

/// The fill loop `l` does, if it is one, with the loop's shape; `inner` holds the summaries of
/// the loops numbered before it (its inner loops among them).
fn summarize(
    f: &Function,
    cfg: &Cfg,
    dt: &DomTree,
    forest: &LoopForest,
    l: Loop,
    inner: &[Option<(Fill, SingleExit)>],
) -> Option<(Fill, SingleExit)> {
    let data = &forest.loops[l];
    let h = data.header;
    // One latch, the only exit (so no block inside, inner loops' included, leaves elsewhere).
    let shape = latch_exit(f, cfg, forest, l)?;
    let (pre, latch) = (shape.pre, shape.latch);
    let in_loop = |f: &Function, v: Value| f.def_block(v).is_some_and(|b| forest.contains(l, b));
    // The trips: a counter the latch tests.
    let lc = latch_counter(f, h, latch, in_loop)?;
    let pt = f.terminator(pre)?;
    let i0 = f.branch_args(pt, 0)[lc.index];
    let s = lc.step;
    let (cond, bound) = (lc.test.cond, lc.test.bound);
    let consts = (f.as_iconst(i0), f.as_iconst(bound));
    let trips = match consts {
        (Some(a), Some(n)) if exact_trip_count(cond, s, consts) => Some(trip_count(cond, a, n, s)),
        _ => None,
    };
    // Runtime counts: the counter steps up by one, so its last value is the bound.
    if trips.is_none() && !(s == 1 && matches!(cond, CmpCond::Lt | CmpCond::Le)) {
        return None;
    }

    // The body: straight-line around at most one inner loop; one store or one inner fill.
    let child = {
        let mut children = forest
            .loops
            .iter()
            .filter(|(_, d)| d.parent == Some(l))
            .map(|(c, _)| c);
        let c = children.next();
        if children.next().is_some() {
            return None;
        }
        c
    };
    let mut store = None;
    for &b in &data.blocks {
        if child.is_some_and(|c| forest.contains(c, b)) {
            continue;
        }
        if !dt.dominates(b, latch) {
            return None;
        }
        for i in f.layout().block_insts(b) {
            match f.op(i) {
                Opcode::Store if store.is_none() && child.is_none() => store = Some(i),
                Opcode::Store | Opcode::Load | Opcode::Call | Opcode::Alloca => return None,
                _ => {}
            }
        }
    }
    if !values_used_after(f, forest, l, &[]).is_empty() {
        return None;
    }
    if shape.exit_args.iter().any(|&v| in_loop(f, v)) {
        return None;
    }

    // What one trip writes, as an address affine in the counter.
    let (addr, step_len, byte) = match (store, child) {
        (Some(st), None) => {
            let v = f.arg(st, 0);
            let (byte, width) = splat_byte(f, v)?;
            (
                Affine::of(f, f.arg(st, 1), lc.counter, &in_loop)?,
                width,
                byte,
            )
        }
        (None, Some(c)) => {
            let (cf, _) = inner[c.index()].as_ref()?;
            let Len::Const(len) = cf.len else {
                return None;
            };
            // The inner loop runs on every trip and its range moves with the counter.
            if !dt.dominates(forest.loops[c].header, latch) {
                return None;
            }
            let mut a = Affine::of(f, cf.base, lc.counter, &in_loop)?;
            for &(v, scale) in &cf.terms {
                a.add_index(f, v, scale, lc.counter, &in_loop)?;
            }
            a.off += cf.off;
            (a, len, cf.byte)
        }
        _ => return None,
    };
    if addr.coef * s != step_len || step_len <= 0 {
        return None;
    }
    // The lowest byte is the first trip's.
    let mut terms = addr.terms;
    let mut off = addr.off;
    match f.as_iconst(i0) {
        Some(a) => off += a * addr.coef,
        None => terms.push((i0, addr.coef)),
    }
    let len = match trips {
        Some(k) => Len::Const(k.checked_mul(step_len)?),
        None => Len::Runtime {
            i0,
            n: bound,
            inclusive: cond == CmpCond::Le,
            stride: step_len,
        },
    };
    Some((
        Fill {
            base: addr.base,
            terms,
            off,
            len,
            byte,
        },
        shape,
    ))
}

/// The byte every byte of constant `v` equals, and the width of `v` in bytes.
fn splat_byte(f: &Function, v: Value) -> Option<(u8, i64)> {
    let bits = match f.ty(v) {
        Type::I32 => f.as_iconst(v)? as u32,
        Type::F32 => f.as_fconst(v)?.to_bits(),
        _ => return None,
    };
    let b = bits.to_le_bytes();
    b.iter().all(|&x| x == b[0]).then_some((b[0], 4))
}

/// An address `base + coef * counter + sum(index * scale) + off`, with `base` and the indices
/// defined outside the loop.
struct Affine {
    base: Value,
    coef: i64,
    terms: Vec<(Value, i64)>,
    off: i64,
}

impl Affine {
    fn of(
        f: &Function,
        mut p: Value,
        counter: Value,
        in_loop: &impl Fn(&Function, Value) -> bool,
    ) -> Option<Affine> {
        let mut a = Affine {
            base: p,
            coef: 0,
            terms: Vec::new(),
            off: 0,
        };
        while in_loop(f, p) {
            let i = f.def_inst(p)?;
            match f.op(i) {
                Opcode::Gep => {
                    let scale = f.data(i).imm;
                    a.add_index(f, f.arg(i, 1), scale, counter, in_loop)?;
                }
                Opcode::Offset => a.off += f.data(i).imm,
                _ => return None,
            }
            p = f.arg(i, 0);
        }
        a.base = p;
        Some(a)
    }

    /// Adds `v * scale`: `v` the counter, the counter plus a constant, or a value defined
    /// outside the loop.
    fn add_index(
        &mut self,
        f: &Function,
        v: Value,
        scale: i64,
        counter: Value,
        in_loop: &impl Fn(&Function, Value) -> bool,
    ) -> Option<()> {
        if v == counter {
            self.coef += scale;
        } else if !in_loop(f, v) {
            match f.as_iconst(v) {
                Some(c) => self.off += c * scale,
                None => self.terms.push((v, scale)),
            }
        } else {
            let i = f.def_inst(v)?;
            if f.op(i) != Opcode::Add || f.arg(i, 0) != counter {
                return None;
            }
            let c = f.as_iconst(f.arg(i, 1))?;
            self.coef += scale;
            self.off += c * scale;
        }
        Some(())
    }
}

/// Replaces the loop of `p` by a call in its preheader (behind a length test for run-time
/// lengths, keeping the loop for short ranges).
fn apply(f: &mut Function, p: &Plan, memset: FuncId, ret: Type) {
    let pt = f.terminator(p.pre).expect("preheader jumps");
    let fill = &p.fill;
    let mut bld = Builder::before(f, pt);
    let mut addr = fill.base;
    for &(v, scale) in &fill.terms {
        addr = bld.gep(addr, v, scale);
    }
    if fill.off != 0 {
        addr = bld.offset(addr, fill.off);
    }
    let byte = bld.iconst(fill.byte as i32);
    match fill.len {
        Len::Const(n) => {
            let len = bld.iconst_ty(Type::I64, n);
            bld.call(memset, ret, &[addr, byte, len]);
            f.replace_inst(pt, mk::jump(p.exit), &p.exit_args);
        }
        Len::Runtime {
            i0,
            n,
            inclusive,
            stride,
        } => {
            // trips = max(1, n - i0 (+ 1)) in 64 bits; the loop runs at least once.
            let a64 = bld.unary(Opcode::Sext, Type::I64, i0);
            let n64 = bld.unary(Opcode::Sext, Type::I64, n);
            let mut d = bld.binary(Opcode::Sub, n64, a64);
            if inclusive {
                let one = bld.iconst_ty(Type::I64, 1);
                d = bld.binary(Opcode::Add, d, one);
            }
            let one = bld.iconst_ty(Type::I64, 1);
            let lt = bld.icmp(CmpCond::Lt, d, one);
            let trips = bld.select(lt, one, d);
            let sz = bld.iconst_ty(Type::I64, stride);
            let len = bld.binary(Opcode::Mul, trips, sz);
            let min = bld.iconst_ty(Type::I64, MIN_BYTES);
            let long = bld.icmp(CmpCond::Ge, len, min);
            let call_block = f.make_block();
            f.insert_block_after(call_block, p.pre);
            let mut bld = Builder::at_end(f, call_block);
            bld.call(memset, ret, &[addr, byte, len]);
            bld.jump(p.exit, &p.exit_args);
            f.replace_inst(
                pt,
                mk::brif(call_block, p.header, 0),
                &[long]
                    .iter()
                    .chain(p.header_args.iter())
                    .copied()
                    .collect::<Vec<_>>(),
            );
        }
    }
}
