//! Division and remainder by constants without a divider.
//!
//! The U74's divider is unpipelined and slow (tens of cycles for `divw`/`remw`, more for the
//! 64-bit forms); a multiply takes 3. Every `sdiv`/`srem` by a constant becomes shifts, adds and
//! at most one multiplication, exact for the whole 32- or 64-bit range (wrapping semantics:
//! `INT_MIN / -1 == INT_MIN`, `INT_MIN % -1 == 0`):
//!
//! - `|d| = 2^k`: `q = (x + bias) >> k` where `bias = 2^k - 1` for negative `x`, else 0 (the
//!   top `k` bits of the sign-extended 64-bit register: one logical shift), negated for `d < 0`;
//!   `x % d = x - ((x + bias) & -2^k)`; `x % 2^k == 0` (or `!= 0`) is `x & (2^k - 1)` tested
//!   against 0. For `d = INT_MIN`: `q = (x == INT_MIN)`.
//! - other `d`, 32-bit: with the magic number `m` and shift `s` of Granlund–Montgomery
//!   (Hacker's Delight, 10-1 and 10-5), `t = sext(x) * m` is one 64-bit `mul` (|m| < 2^32, so it
//!   cannot overflow), `q = (t >> (32 + s)) + (t < 0)`: four instructions, no `mulh`, and the
//!   fix-up reads `t` beside the quotient's shift.
//! - other `d`, 64-bit: `q = mulhs(x, M) (+/- x) >> s`, plus its own sign bit.
//! - `x % d = x - q * d`, with `q * d` as a shift and an add or subtract when `|d| = 2^k +/- 1`.
//! - `x % d == 0` (or `!= 0`) for odd `|d|`, when the remainder is only tested so: one
//!   multiplication by the inverse of `|d|` modulo `2^w`, an add and a compare (Hacker's
//!   Delight, 10-17), three instructions and one multiply's latency in a loop instead of seven.
//! - A dividend known to be non-negative (a constant, a mask, a shifted or zero-extended value,
//!   a loop counter counting up from a non-negative start, a sum whose terms' bounds keep it
//!   so, such as `x % m + m`) needs no sign fix-up; nor does one
//!   known to be a multiple of `2^k` (reached through a branch on `x & (2^k - 1) == 0`) when
//!   divided by `±2^k`.
//! - A remainder whose dividend lies in `[0, 2|d|)` (`(v % m + m) % m`, by the bounds below)
//!   subtracts `|d|` at most once: a compare or sign test, a mask and an addition.
//! - `fdiv x, c` where `1/c` is exact (`c` a power of two whose reciprocal is a normal number)
//!   becomes `fmul x, 1/c`: the same real quotient, so the same rounding.
//!
//! New constants go right after the divisor's own constant (which dominates the division and
//! was already hoisted out of loops). The quotient of `x / d` and `x % d` is built the same way
//! for both, so `gvn` afterwards shares it. Needs: CFG, dominator tree and loop forest (computed
//! here, for counter ranges). Keeps the CFG.

use crate::analysis::ivrange::counter_range;
use crate::analysis::{Cfg, DomTree, FuncAnalyses, LoopForest, Preserved};
use crate::ir::{mk, Block, CmpCond, Function, Inst, InstData, ModuleCx, Opcode, Type, Value};
use rustc_hash::{FxHashMap, FxHashSet};

pub fn run(f: &mut Function, _cx: &ModuleCx, am: &mut FuncAnalyses) -> Preserved {
    let mut work = Vec::new();
    let mut tests = Vec::new();
    for b in f.layout().blocks() {
        for i in f.layout().block_insts(b) {
            let d = f.data(i);
            match d.op {
                Opcode::Sdiv | Opcode::Srem if f.as_iconst(f.arg(i, 1)).is_some() => work.push(i),
                Opcode::Fdiv if reciprocal(f, f.arg(i, 1)).is_some() => work.push(i),
                Opcode::Icmp if matches!(d.cond(), CmpCond::Eq | CmpCond::Ne) => tests.push(i),
                _ => {}
            }
        }
    }
    if work.is_empty() {
        return Preserved::all();
    }
    let (cfg, dt, forest) = am.all(f);
    // Blocks of loops that call: constants there would be held across the calls.
    let mut calling = FxHashSet::default();
    for l in forest.loops.keys() {
        let blocks = &forest.loops[l].blocks;
        let calls = blocks
            .iter()
            .any(|&b| f.layout().block_insts(b).any(|i| f.op(i) == Opcode::Call));
        if calls {
            calling.extend(blocks.iter().copied());
        }
    }
    let mut e = Emit {
        nonneg: counters_from_nonneg(f, cfg, dt, forest),
        divided: work
            .iter()
            .filter(|&&i| f.op(i) == Opcode::Sdiv)
            .map(|&i| {
                let ty = f.data(i).ty;
                let d = f.as_iconst(f.arg(i, 1)).unwrap_or(0);
                let d = if ty == Type::I32 { d as i32 as i64 } else { d };
                (f.arg(i, 0), wrap_abs(ty, d))
            })
            .collect(),
        calling,
        looped: forest
            .loops
            .keys()
            .flat_map(|l| forest.loops[l].blocks.iter().copied())
            .collect(),
        cfg,
        dt,
        consts: FxHashMap::default(),
        at: work[0],
    };
    // Dividends known non-negative, decided before any expansion hides the remainders they
    // are built from (`x % m + m`); remainders whose dividend lies in [0, 2|d|).
    let mut reduce = FxHashSet::default();
    for &i in &work {
        let x = f.arg(i, 0);
        if f.op(i) == Opcode::Fdiv {
            continue;
        }
        let (lo, hi) = e.bounds(f, x, 4);
        if lo >= 0 {
            e.nonneg.insert(x);
        }
        let ty = f.data(i).ty;
        let d = f.as_iconst(f.arg(i, 1)).unwrap_or(0);
        let mag = wrap_abs(ty, if ty == Type::I32 { d as i32 as i64 } else { d });
        if f.op(i) == Opcode::Srem && lo >= 0 && hi < 2 * mag as i128 && !mag.is_power_of_two() {
            reduce.insert(i);
        }
    }
    let mut changed = false;
    // Masks first, so a remainder read only by its test is left dead instead of expanded.
    for i in tests {
        changed |= mask_test(f, &mut e, i);
    }
    for i in work {
        let r = f.res(i);
        if !f.has_uses(r) {
            continue;
        }
        e.at = i;
        let (x, y) = (f.arg(i, 0), f.arg(i, 1));
        let ty = f.data(i).ty;
        let new = match f.op(i) {
            Opcode::Fdiv => {
                let Some(rc) = reciprocal(f, y) else { continue };
                let c = e.fconst(f, y, ty, rc);
                f.replace_inst(i, mk::binary(Opcode::Fmul, ty), &[x, c]);
                changed = true;
                continue;
            }
            Opcode::Sdiv => {
                let d = f.as_iconst(y).unwrap_or(0);
                quotient(f, &mut e, ty, x, y, d)
            }
            _ if reduce.contains(&i) => {
                let d = f.as_iconst(y).unwrap_or(0);
                Some(reduce_once(f, &mut e, ty, x, y, d))
            }
            _ => {
                let d = f.as_iconst(y).unwrap_or(0);
                remainder(f, &mut e, ty, x, y, d)
            }
        };
        if let Some(v) = new {
            f.replace_all_uses(r, v);
            f.remove_inst(i);
            changed = true;
        }
    }
    // Only instructions changed: every block and branch is as it was.
    Preserved::cfg_kept(changed)
}

/// Where new instructions go and what is already known.
struct Emit<'a> {
    /// Loop counters that never go below 0.
    nonneg: FxHashSet<Value>,
    /// `(x, |d|)` of every `x / d` by a constant: the remainder of such an `x` reuses the
    /// quotient instead of computing its own.
    divided: FxHashSet<(Value, u64)>,
    /// Blocks inside a loop that contains a call.
    calling: FxHashSet<Block>,
    /// Blocks inside a loop (where constants are materialized once, before it).
    looped: FxHashSet<Block>,
    cfg: &'a Cfg,
    dt: &'a DomTree,
    /// `(anchor constant, type, value) -> constant` created so far.
    consts: FxHashMap<(Value, Type, i64), Value>,
    /// New arithmetic goes right before this instruction.
    at: Inst,
}

impl Emit<'_> {
    fn op(&self, f: &mut Function, data: InstData, args: &[Value]) -> Value {
        let i = f.insert_new_before(self.at, data, args);
        f.res(i)
    }

    fn bin(&self, f: &mut Function, op: Opcode, ty: Type, a: Value, b: Value) -> Value {
        self.op(f, mk::binary(op, ty), &[a, b])
    }

    /// An integer constant placed right after `anchor`'s definition (a constant that
    /// dominates the current instruction).
    fn iconst(&mut self, f: &mut Function, anchor: Value, ty: Type, v: i64) -> Value {
        let v = match ty {
            Type::I32 => v as i32 as i64,
            _ => v,
        };
        self.konst(f, anchor, mk::iconst(ty, v))
    }

    fn fconst(&mut self, f: &mut Function, anchor: Value, ty: Type, bits: i64) -> Value {
        self.konst(f, anchor, InstData::with_imm(Opcode::Fconst, ty, bits))
    }

    fn konst(&mut self, f: &mut Function, anchor: Value, data: InstData) -> Value {
        // In a loop that calls, a constant held in a register across the calls takes a
        // callee-saved register from the loop's other values: computed at its use instead.
        let at_use = f
            .layout()
            .inst_block(self.at)
            .is_some_and(|b| self.calling.contains(&b));
        if at_use && data.op == Opcode::Iconst && !fits_li12(data.imm) {
            let c = f.insert_new_before(self.at, data, &[]);
            return f.res(c);
        }
        let key = (anchor, data.ty, data.imm);
        if let Some(&c) = self.consts.get(&key) {
            return c;
        }
        let c = f.make_inst(data, &[]);
        match f.def_inst(anchor) {
            Some(a) => f.insert_inst_after(c, a),
            None => f.insert_inst_before(c, self.at),
        }
        let v = f.res(c);
        self.consts.insert(key, v);
        v
    }

    /// Whether `x` is a multiple of `2^k` wherever `e.at` runs: a branch on `x & m == 0` (or
    /// `x % 2^j == 0`, `j >= k`) with the low `k` bits in `m` was taken to reach it. Walks the
    /// dominator tree up from `e.at`, reading the branch into each block entered by one edge.
    fn is_multiple(&self, f: &Function, x: Value, k: u32) -> bool {
        let low = (1i64 << k) - 1;
        let Some(mut c) = f.layout().inst_block(self.at) else {
            return false;
        };
        for _ in 0..16 {
            if let [p] = self.cfg.preds[c][..] {
                let t = f.terminator(p).filter(|&t| f.op(t) == Opcode::Brif);
                if let Some(t) = t {
                    let targets = f.branch_targets(t);
                    let taken = targets[0].block == c;
                    if self.says_multiple(f, f.arg(t, 0), taken, x, low) {
                        return true;
                    }
                }
            }
            match self.dt.idom[c] {
                Some(d) => c = d,
                None => return false,
            }
        }
        false
    }

    /// Whether condition `cv` being `truth` means the bits `low` of `x` are zero.
    fn says_multiple(&self, f: &Function, cv: Value, truth: bool, x: Value, low: i64) -> bool {
        let Some(ci) = f.def_inst(cv) else {
            return false;
        };
        let d = f.data(ci);
        if d.op != Opcode::Icmp || f.as_iconst(f.arg(ci, 1)) != Some(0) {
            return false;
        }
        let zero = match d.cond() {
            CmpCond::Eq => truth,
            CmpCond::Ne => !truth,
            _ => return false,
        };
        let Some(ai) = f.def_inst(f.arg(ci, 0)).filter(|_| zero) else {
            return false;
        };
        if !matches!(f.op(ai), Opcode::And | Opcode::Srem) {
            return false;
        }
        let (a, b) = (f.arg(ai, 0), f.arg(ai, 1));
        let ty = f.data(ai).ty;
        match f.op(ai) {
            Opcode::And => {
                let m = if a == x {
                    f.as_iconst(b)
                } else if b == x {
                    f.as_iconst(a)
                } else {
                    None
                };
                m.is_some_and(|m| m & low == low)
            }
            Opcode::Srem if a == x => f.as_iconst(b).is_some_and(|c| {
                let mag = wrap_abs(ty, c);
                mag.is_power_of_two() && (mag - 1) as i64 & low == low
            }),
            _ => false,
        }
    }

    /// Signed bounds of `v` from its definition (constants, remainders by constants, masks,
    /// sums and differences that cannot wrap, non-negative values), looking `depth` definitions deep;
    /// the whole type when unknown.
    fn bounds(&self, f: &Function, v: Value, depth: u32) -> (i128, i128) {
        let ty = f.ty(v);
        let full = if ty == Type::I64 {
            (i64::MIN as i128, i64::MAX as i128)
        } else {
            (i32::MIN as i128, i32::MAX as i128)
        };
        if let Some(c) = f.as_iconst(v) {
            return (c as i128, c as i128);
        }
        let Some(i) = f.def_inst(v).filter(|_| depth > 0) else {
            return full;
        };
        let a = f.args(i);
        let fits = |(lo, hi): (i128, i128)| {
            if lo >= full.0 && hi <= full.1 {
                (lo, hi)
            } else {
                full
            }
        };
        match f.op(i) {
            Opcode::Srem => match f.as_iconst(a[1]).filter(|&c| c != 0 && c != i64::MIN) {
                Some(c) => {
                    let m = c.unsigned_abs() as i128 - 1;
                    if self.is_nonneg(f, a[0], depth - 1) {
                        (0, m)
                    } else {
                        (-m, m)
                    }
                }
                None => full,
            },
            Opcode::Add => {
                let (x, y) = (
                    self.bounds(f, a[0], depth - 1),
                    self.bounds(f, a[1], depth - 1),
                );
                fits((x.0 + y.0, x.1 + y.1))
            }
            Opcode::Sub => {
                let (x, y) = (
                    self.bounds(f, a[0], depth - 1),
                    self.bounds(f, a[1], depth - 1),
                );
                fits((x.0 - y.1, x.1 - y.0))
            }
            Opcode::And => match f.as_iconst(a[1]).filter(|&c| c >= 0) {
                Some(c) => (0, c as i128),
                None if self.is_nonneg(f, v, depth) => (0, full.1),
                None => full,
            },
            _ if self.is_nonneg(f, v, depth) => (0, full.1),
            _ => full,
        }
    }

    /// Whether `v` is never negative (as a signed value of its type).
    fn is_nonneg(&self, f: &Function, v: Value, depth: u32) -> bool {
        if let Some(c) = f.as_iconst(v) {
            return c >= 0;
        }
        if self.nonneg.contains(&v) {
            return true;
        }
        let Some(i) = f.def_inst(v) else { return false };
        if depth == 0 {
            return false;
        }
        let a = f.args(i);
        let ty = f.data(i).ty;
        let bits = if ty == Type::I64 { 64 } else { 32 };
        match f.op(i) {
            Opcode::And => self.is_nonneg(f, a[0], depth - 1) || self.is_nonneg(f, a[1], depth - 1),
            Opcode::Lshr => f.as_iconst(a[1]).is_some_and(|k| (k & (bits - 1)) != 0),
            Opcode::Ashr | Opcode::Srem | Opcode::Sext => self.is_nonneg(f, a[0], depth - 1),
            Opcode::Sdiv => {
                f.as_iconst(a[1]).is_some_and(|d| d > 0) && self.is_nonneg(f, a[0], depth - 1)
            }
            Opcode::Zext => true,
            Opcode::Add | Opcode::Sub => self.bounds(f, v, depth).0 >= 0,
            Opcode::Select => {
                self.is_nonneg(f, a[1], depth - 1) && self.is_nonneg(f, a[2], depth - 1)
            }
            _ => false,
        }
    }
}

/// Whether `li` of `v` is one instruction (no register worth holding).
fn fits_li12(v: i64) -> bool {
    (-2048..=2047).contains(&v)
}

/// Loop counters whose range starts at a non-negative constant.
fn counters_from_nonneg(
    f: &Function,
    cfg: &Cfg,
    dt: &DomTree,
    forest: &LoopForest,
) -> FxHashSet<Value> {
    let mut out = FxHashSet::default();
    for l in forest.loops.keys() {
        let Some((v, r)) = counter_range(f, cfg, dt, forest, l) else {
            continue;
        };
        let from = r.lower.and_then(|b| Some((f.as_iconst(b.v)?, b.strict)));
        if let Some((c, strict)) = from {
            if c >= 0 || (strict && c == -1) {
                out.insert(v);
            }
        }
    }
    out
}

/// `fconst` bits of `1/c` when `c` is a constant whose reciprocal is exact and normal.
fn reciprocal(f: &Function, c: Value) -> Option<i64> {
    let i = f.def_inst(c)?;
    let d = f.data(i);
    if d.op != Opcode::Fconst {
        return None;
    }
    match d.ty {
        Type::F32 => {
            let c = d.f32();
            let r = 1.0 / c;
            let exact = c.is_normal() && c.to_bits() & 0x7f_ffff == 0 && r.is_normal();
            exact.then_some(r.to_bits() as i64)
        }
        Type::F64 => {
            let c = d.f64();
            let r = 1.0 / c;
            let exact = c.is_normal() && c.to_bits() & ((1 << 52) - 1) == 0 && r.is_normal();
            exact.then_some(r.to_bits() as i64)
        }
        _ => None,
    }
}

/// `icmp eq/ne (srem x, ±2^k), 0` -> `icmp eq/ne (and x, 2^k - 1), 0`.
fn mask_test(f: &mut Function, e: &mut Emit, i: Inst) -> bool {
    let (a, z) = (f.arg(i, 0), f.arg(i, 1));
    if f.as_iconst(z) != Some(0) {
        return false;
    }
    let Some(ri) = f.def_inst(a) else {
        return false;
    };
    if f.op(ri) != Opcode::Srem {
        return false;
    }
    let (x, y) = (f.arg(ri, 0), f.arg(ri, 1));
    let ty = f.ty(a);
    let Some(d) = f.as_iconst(y) else {
        return false;
    };
    let mag = wrap_abs(ty, d);
    if mag < 2 || !matches!(ty, Type::I32 | Type::I64) {
        return false;
    }
    e.at = i;
    if mag.is_power_of_two() {
        let m = e.iconst(f, y, ty, (mag - 1) as i64);
        let masked = e.bin(f, Opcode::And, ty, x, m);
        f.set_arg(i, 0, masked);
        return true;
    }
    // Odd divisors, when the remainder is only tested against 0: `x * inverse(d)` maps the
    // multiples of `d` onto `[-A, A]` (`A = (2^(w-1) - 1) / d`) and every other value outside
    // it, so `x % d == 0` is `x * inv + A <= 2A` unsigned, the unsigned order read as the
    // signed one of both sides moved by `2^(w-1)` (Hacker's Delight, 10-17).
    let only_tests = f.uses_of(a).all(|u| {
        let user = f.uses().user[u];
        f.op(user) == Opcode::Icmp
            && matches!(f.data(user).cond(), CmpCond::Eq | CmpCond::Ne)
            && f.as_iconst(f.arg(user, 1)) == Some(0)
    });
    if mag.is_multiple_of(2) || !only_tests {
        return false;
    }
    let w = width(ty);
    let keep = |v: u64| if w == 64 { v } else { v & 0xffff_ffff };
    let inv = keep(inverse_mod_2_64(mag));
    let half = 1u64 << (w - 1);
    let a_bound = (half - 1) / mag;
    let q = e.iconst(f, y, ty, inv as i64);
    let q = e.bin(f, Opcode::Mul, ty, x, q);
    let shift = e.iconst(f, y, ty, keep(a_bound.wrapping_add(half)) as i64);
    let q = e.bin(f, Opcode::Add, ty, q, shift);
    let bound = e.iconst(f, y, ty, keep((2 * a_bound).wrapping_sub(half)) as i64);
    let cond = match f.data(i).cond() {
        CmpCond::Eq => CmpCond::Le,
        _ => CmpCond::Gt,
    };
    f.replace_inst(i, mk::icmp(cond), &[q, bound]);
    true
}

/// The inverse of odd `d` modulo 2^64 (Newton's iteration: each step doubles the correct low
/// bits, from 3 for `d` itself).
fn inverse_mod_2_64(d: u64) -> u64 {
    let mut x = d;
    for _ in 0..5 {
        x = x.wrapping_mul(2u64.wrapping_sub(d.wrapping_mul(x)));
    }
    x
}

/// `|d|` as an unsigned number of the type's width (`|INT_MIN| = 2^31`).
fn wrap_abs(ty: Type, d: i64) -> u64 {
    match ty {
        Type::I32 => (d as i32).unsigned_abs() as u64,
        _ => d.unsigned_abs(),
    }
}

fn width(ty: Type) -> u32 {
    if ty == Type::I64 {
        64
    } else {
        32
    }
}

/// `x / d`, built before `e.at`; `None` when nothing is gained (`d = 0`, or an `i1`).
fn quotient(f: &mut Function, e: &mut Emit, ty: Type, x: Value, y: Value, d: i64) -> Option<Value> {
    if !matches!(ty, Type::I32 | Type::I64) || d == 0 {
        return None;
    }
    let n = width(ty);
    let d = if n == 32 { d as i32 as i64 } else { d };
    let mag = wrap_abs(ty, d);
    if d == 1 {
        return Some(x);
    }
    if d == -1 {
        let zero = e.iconst(f, y, ty, 0);
        return Some(e.bin(f, Opcode::Sub, ty, zero, x));
    }
    if mag == 1u64 << (n - 1) {
        // d = INT_MIN: 1 for INT_MIN itself, 0 for everything else.
        let min = e.iconst(f, y, ty, d);
        let eq = e.op(f, mk::icmp(CmpCond::Eq), &[x, min]);
        return Some(e.op(f, mk::unary(Opcode::Zext, ty), &[eq]));
    }
    let q = if mag.is_power_of_two() {
        let k = mag.trailing_zeros() as i64;
        // Exact or non-negative: the plain shift rounds the right way.
        let t = if e.is_nonneg(f, x, 4) || e.is_multiple(f, x, k as u32) {
            x
        } else {
            let bias = bias(f, e, ty, x, y, k);
            e.bin(f, Opcode::Add, ty, x, bias)
        };
        let kc = e.iconst(f, y, ty, k);
        e.bin(f, Opcode::Ashr, ty, t, kc)
    } else if n == 32 {
        return Some(magic_div32(f, e, x, y, d));
    } else {
        return Some(magic_div64(f, e, x, y, d));
    };
    if d < 0 {
        let zero = e.iconst(f, y, ty, 0);
        return Some(e.bin(f, Opcode::Sub, ty, zero, q));
    }
    Some(q)
}

/// `2^k - 1` if `x < 0`, else 0 (`1 <= k < width`): the top `k` bits of the sign.
fn bias(f: &mut Function, e: &mut Emit, ty: Type, x: Value, y: Value, k: i64) -> Value {
    if ty == Type::I32 {
        // The register holds x sign-extended to 64 bits: its top k bits are all sign bits,
        // and shifting them down by 64 - k >= 33 leaves a value that fits in i32.
        let wide = e.op(f, mk::unary(Opcode::Sext, Type::I64), &[x]);
        let sh = e.iconst(f, y, Type::I64, 64 - k);
        let b = e.bin(f, Opcode::Lshr, Type::I64, wide, sh);
        return e.op(f, mk::unary(Opcode::Trunc, Type::I32), &[b]);
    }
    let c63 = e.iconst(f, y, ty, 63);
    let sign = e.bin(f, Opcode::Ashr, ty, x, c63);
    let sh = e.iconst(f, y, ty, 64 - k);
    e.bin(f, Opcode::Lshr, ty, sign, sh)
}

/// Magic multiplier and shift for signed division by `d` (`|d| >= 3`, not a power of two) at
/// width `n`: Hacker's Delight, figure 10-1, in 128-bit arithmetic. Returns the true multiplier
/// (not reduced to `n` bits: it lies in `(-2^n, 2^n)`) and the shift `s`;
/// `x / d = floor(x * m / 2^(n + s)) + (1 if that product is negative)`.
pub fn signed_magic(d: i64, n: u32) -> (i128, u32) {
    let two = 1u128 << (n - 1);
    let ad = d.unsigned_abs() as u128;
    let t = two + (d < 0) as u128;
    let anc = t - 1 - t % ad;
    let mut p = n - 1;
    let (mut q1, mut r1) = (two / anc, two % anc);
    let (mut q2, mut r2) = (two / ad, two % ad);
    loop {
        p += 1;
        q1 *= 2;
        r1 *= 2;
        if r1 >= anc {
            q1 += 1;
            r1 -= anc;
        }
        q2 *= 2;
        r2 *= 2;
        if r2 >= ad {
            q2 += 1;
            r2 -= ad;
        }
        let delta = ad - r2;
        if !(q1 < delta || (q1 == delta && r1 == 0)) {
            break;
        }
    }
    let m = (q2 + 1) as i128;
    (if d < 0 { -m } else { m }, p - n)
}

/// 32-bit `x / d` by one 64-bit multiplication: `t = sext(x) * m`,
/// `q = trunc(t >> (32 + s)) + trunc(t >>> 63)`; both truncations are free (the shifted values
/// fit in 32 bits).
fn magic_div32(f: &mut Function, e: &mut Emit, x: Value, y: Value, d: i64) -> Value {
    let (m, s) = signed_magic(d, 32);
    let wide = e.op(f, mk::unary(Opcode::Sext, Type::I64), &[x]);
    let mc = e.iconst(f, y, Type::I64, m as i64);
    let t = e.bin(f, Opcode::Mul, Type::I64, wide, mc);
    let sc = e.iconst(f, y, Type::I64, 32 + s as i64);
    let q0 = e.bin(f, Opcode::Ashr, Type::I64, t, sc);
    let q0 = e.op(f, mk::unary(Opcode::Trunc, Type::I32), &[q0]);
    if d > 0 && e.is_nonneg(f, x, 4) {
        return q0;
    }
    let c63 = e.iconst(f, y, Type::I64, 63);
    let neg = e.bin(f, Opcode::Lshr, Type::I64, t, c63);
    let neg = e.op(f, mk::unary(Opcode::Trunc, Type::I32), &[neg]);
    e.bin(f, Opcode::Add, Type::I32, q0, neg)
}

/// 64-bit `x / d`: the high half of `x * M` (`M` the magic reduced to 64 bits, corrected by
/// `± x`), shifted, plus its own sign bit.
fn magic_div64(f: &mut Function, e: &mut Emit, x: Value, y: Value, d: i64) -> Value {
    let ty = Type::I64;
    let (m, s) = signed_magic(d, 64);
    let mw = m as i64; // reduced to 64 bits
    let mc = e.iconst(f, y, ty, mw);
    let mut h = e.bin(f, Opcode::Mulhs, ty, x, mc);
    if d > 0 && mw < 0 {
        h = e.bin(f, Opcode::Add, ty, h, x);
    } else if d < 0 && mw > 0 {
        h = e.bin(f, Opcode::Sub, ty, h, x);
    }
    let q0 = if s > 0 {
        let sc = e.iconst(f, y, ty, s as i64);
        e.bin(f, Opcode::Ashr, ty, h, sc)
    } else {
        h
    };
    let c63 = e.iconst(f, y, ty, 63);
    let neg = e.bin(f, Opcode::Lshr, ty, q0, c63);
    e.bin(f, Opcode::Add, ty, q0, neg)
}

/// `x % d`, built before `e.at`.
fn remainder(
    f: &mut Function,
    e: &mut Emit,
    ty: Type,
    x: Value,
    y: Value,
    d: i64,
) -> Option<Value> {
    if !matches!(ty, Type::I32 | Type::I64) || d == 0 {
        return None;
    }
    let n = width(ty);
    let d = if n == 32 { d as i32 as i64 } else { d };
    let mag = wrap_abs(ty, d);
    if mag == 1 {
        return Some(e.iconst(f, y, ty, 0));
    }
    if mag.is_power_of_two() && mag < 1u64 << (n - 1) {
        let k = mag.trailing_zeros() as i64;
        if e.is_multiple(f, x, k as u32) {
            return Some(e.iconst(f, y, ty, 0));
        }
        if e.is_nonneg(f, x, 4) {
            let m = e.iconst(f, y, ty, (mag - 1) as i64);
            return Some(e.bin(f, Opcode::And, ty, x, m));
        }
        let bias = bias(f, e, ty, x, y, k);
        let t = e.bin(f, Opcode::Add, ty, x, bias);
        let m = e.iconst(f, y, ty, -(mag as i64));
        let down = e.bin(f, Opcode::And, ty, t, m);
        return Some(e.bin(f, Opcode::Sub, ty, x, down));
    }
    // Its 64-bit constant takes up to eight instructions to build: worth it where it is built
    // once, before a loop.
    let looped = f
        .layout()
        .inst_block(e.at)
        .is_some_and(|b| e.looped.contains(&b));
    if n == 32 && mag < 1 << 31 && looped && !e.divided.contains(&(x, mag)) {
        return Some(low_bits_remainder(f, e, x, y, mag));
    }
    let q = quotient(f, e, ty, x, y, d)?;
    Some(minus_product(f, e, ty, x, q, y, d))
}

/// `x % d` for `0 <= x < 2|d|`: `|d|` subtracted at most once, `x - (x >= |d| ? |d| : 0)`; for
/// `x = r + |d|` (the idiom `(v % m + m) % m`) `r + (r < 0 ? |d| : 0)`, a sign test. A compare
/// (or a sign shift), a mask and an addition: three cycles where the multiplications take six.
fn reduce_once(f: &mut Function, e: &mut Emit, ty: Type, x: Value, y: Value, d: i64) -> Value {
    let mag = wrap_abs(ty, if ty == Type::I32 { d as i32 as i64 } else { d }) as i64;
    let m = e.iconst(f, y, ty, mag);
    let zero = e.iconst(f, y, ty, 0);
    let r = f
        .def_inst(x)
        .filter(|&xi| f.op(xi) == Opcode::Add && f.as_iconst(f.arg(xi, 1)) == Some(mag))
        .map(|xi| f.arg(xi, 0));
    let (c, op, base) = match r {
        Some(r) => (e.op(f, mk::icmp(CmpCond::Lt), &[r, zero]), Opcode::Add, r),
        None => (e.op(f, mk::icmp(CmpCond::Ge), &[x, m]), Opcode::Sub, x),
    };
    let s = e.op(f, mk::unary(Opcode::Select, ty), &[c, m, zero]);
    e.bin(f, op, ty, base, s)
}

/// `x % d` for 32-bit `x` and `1 < |d| < 2^31` (`mag = |d|`, not a power of two) from the low
/// bits of a fixed-point quotient (Lemire, Kaser and Kurz, "Faster remainder by direct
/// computation", 2019): with `M = 2^64 / mag + 1`, the low 64 bits of `M * x` are the fraction
/// of `x / mag`, and the high 64 bits of that fraction times `mag` are `|x| mod mag` for
/// `x >= 0`; a negative `x` (sign-extended) gives it plus `mag - 1`, removed by masking
/// with the sign: `r - ((x >> 31) & (mag - 1))`. Two multiplications and no quotient: two
/// instructions for a non-negative dividend (four with the quotient), five otherwise (six).
/// Used inside loops only: `M` needs up to eight instructions where the magic number of the
/// quotient needs two, paid on every run outside a loop.
fn low_bits_remainder(f: &mut Function, e: &mut Emit, x: Value, y: Value, mag: u64) -> Value {
    let (i32t, i64t) = (Type::I32, Type::I64);
    let m = e.iconst(f, y, i64t, (u64::MAX / mag).wrapping_add(1) as i64);
    let dc = e.iconst(f, y, i64t, mag as i64);
    let wide = e.op(f, mk::unary(Opcode::Sext, i64t), &[x]);
    let frac = e.bin(f, Opcode::Mul, i64t, wide, m);
    let high = e.bin(f, Opcode::Mulhu, i64t, frac, dc);
    let r = e.op(f, mk::unary(Opcode::Trunc, i32t), &[high]);
    if e.is_nonneg(f, x, 4) {
        return r;
    }
    let k = e.iconst(f, y, i32t, 31);
    let sign = e.bin(f, Opcode::Ashr, i32t, x, k);
    let mask = e.iconst(f, y, i32t, (mag - 1) as i64);
    let fix = e.bin(f, Opcode::And, i32t, sign, mask);
    e.bin(f, Opcode::Sub, i32t, r, fix)
}

/// `x - q * d`, with `q * d` as a shift and an add or subtract when `|d| = 2^k ± 1`.
fn minus_product(
    f: &mut Function,
    e: &mut Emit,
    ty: Type,
    x: Value,
    q: Value,
    y: Value,
    d: i64,
) -> Value {
    let mag = wrap_abs(ty, d);
    // x - q*d = x -/+ q*|d| (sign of d); with |d| = 2^k + 1 that is (x -/+ q) -/+ (q << k),
    // with |d| = 2^k - 1 it is (x +/- q) -/+ (q << k).
    let (sub, add) = if d > 0 {
        (Opcode::Sub, Opcode::Add)
    } else {
        (Opcode::Add, Opcode::Sub)
    };
    let split = if (mag - 1).is_power_of_two() {
        Some(((mag - 1).trailing_zeros(), sub))
    } else if (mag + 1).is_power_of_two() {
        Some(((mag + 1).trailing_zeros(), add))
    } else {
        None
    };
    match split {
        Some((k, near)) if k >= 1 && k < width(ty) => {
            let kc = e.iconst(f, y, ty, k as i64);
            let big = e.bin(f, Opcode::Shl, ty, q, kc);
            let t = e.bin(f, near, ty, x, q);
            e.bin(f, sub, ty, t, big)
        }
        _ => {
            let p = e.bin(f, Opcode::Mul, ty, q, y);
            e.bin(f, Opcode::Sub, ty, x, p)
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::ir::{interp, parse};
    use crate::passes::pipeline::{run_steps, PassOptions};
    use std::fmt::Write;

    /// Every divisor of the exhaustive test: all of [-1000, 1000] but 0, every power of two and
    /// its negation, and values near the ends of the range.
    fn divisors32() -> Vec<i32> {
        let mut ds: Vec<i32> = (-1000..=1000).filter(|&d| d != 0).collect();
        for k in 0..31 {
            ds.push(1 << k);
            ds.push(-(1 << k));
        }
        ds.push(i32::MIN);
        for d in [
            i32::MAX,
            i32::MAX - 1,
            i32::MAX - 2,
            i32::MIN + 1,
            i32::MIN + 2,
            (1 << 30) + 1,
            (1 << 30) - 1,
            -(1 << 30) - 1,
            -(1 << 30) + 1,
            1_000_000_007,
            -1_000_000_007,
            641,
            6_700_417,
            65537,
            -65535,
        ] {
            ds.push(d);
        }
        ds.sort_unstable();
        ds.dedup();
        ds
    }

    /// Fixed-seed dividends: the extremes, small values and pseudo-random words.
    fn dividends32(n: usize) -> Vec<i32> {
        let mut xs = vec![
            i32::MIN,
            i32::MIN + 1,
            i32::MIN + 2,
            -1,
            0,
            1,
            2,
            i32::MAX,
            i32::MAX - 1,
            -1000,
            1000,
            -7,
            7,
            1 << 30,
            -(1 << 30),
        ];
        let mut s: u64 = 0x9e37_79b9_7f4a_7c15;
        while xs.len() < n {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let w = (s >> 32) as i32;
            // A mix of full-range words and small ones.
            xs.push(if xs.len() % 3 == 0 { w % 5000 } else { w });
        }
        xs
    }

    fn run_divconst(text: &str, input: &str) -> (String, String) {
        let mut m = parse::module(text).unwrap_or_else(|e| panic!("{}: {}", e.line, e.message));
        let before = interp::run(&m, input.as_bytes(), u64::MAX).unwrap();
        let opts = PassOptions {
            opt_level: 2,
            verify_each: true,
            ..Default::default()
        };
        run_steps(&mut m, &[crate::pass!(divconst), crate::pass!(dce)], &opts);
        let printed = crate::ir::print::module(&m);
        let after = interp::run(&m, input.as_bytes(), u64::MAX).unwrap();
        assert_eq!(before.1, after.1);
        let b = String::from_utf8(before.0).unwrap();
        let a = String::from_utf8(after.0).unwrap();
        assert_eq!(b, a, "interpreter disagrees before and after divconst");
        (a, printed)
    }

    /// `main` reads dividends until `stop`, and prints `x / d` and `x % d` for every divisor,
    /// and the same for `x & INT_MAX` (a dividend known not negative).
    #[test]
    fn exhaustive_i32_divisors_match_wrapping_semantics() {
        let ds = divisors32();
        let xs = dividends32(120);
        let mut t = String::new();
        t.push_str("declare @getint() -> i32\ndeclare @putint(i32) -> void\n");
        t.push_str("declare @putch(i32) -> void\n\n");
        t.push_str("func @main() -> i32 {\nbb0:\n    v0 = iconst.i32 0\n");
        t.push_str("    v1 = iconst.i32 2147483647\n    v2 = iconst.i32 32\n    jump bb1\n");
        t.push_str("bb1:\n    v4 = call.i32 @getint()\n");
        t.push_str("    v5 = call.i32 @getint()\n    v6 = and.i32 v4, v1\n");
        let put = |t: &mut String, v: usize| {
            writeln!(t, "    call.void @putint(v{v})\n    call.void @putch(v2)").unwrap();
        };
        let mut n = 7;
        for &d in &ds {
            let c = n;
            writeln!(t, "    v{c} = iconst.i32 {d}").unwrap();
            n += 1;
            for x in [4, 6] {
                for op in ["sdiv", "srem"] {
                    writeln!(t, "    v{n} = {op}.i32 v{x}, v{c}").unwrap();
                    put(&mut t, n);
                    n += 1;
                }
            }
            // The remainder's mask test (powers of two) and its negation.
            writeln!(t, "    v{n} = srem.i32 v4, v{c}").unwrap();
            writeln!(t, "    v{} = icmp.eq v{n}, v0", n + 1).unwrap();
            writeln!(t, "    v{} = zext.i32 v{}", n + 2, n + 1).unwrap();
            put(&mut t, n + 2);
            writeln!(t, "    v{} = icmp.ne v{n}, v0", n + 3).unwrap();
            writeln!(t, "    v{} = zext.i32 v{}", n + 4, n + 3).unwrap();
            put(&mut t, n + 4);
            n += 5;
        }
        writeln!(t, "    v{n} = icmp.ne v5, v0").unwrap();
        writeln!(t, "    brif v{n}, bb1, bb2\nbb2:\n    ret v0\n}}").unwrap();
        let mut input = String::new();
        let mut want = String::new();
        for (k, &x) in xs.iter().enumerate() {
            // Each dividend is followed by a flag: nonzero while more follow.
            write!(input, "{x} {} ", (k + 1 < xs.len()) as i32).unwrap();
            for &d in &ds {
                for x in [x, x & i32::MAX] {
                    write!(want, "{} {} ", x.wrapping_div(d), x.wrapping_rem(d)).unwrap();
                }
                let r = x.wrapping_rem(d);
                write!(want, "{} {} ", (r == 0) as i32, (r != 0) as i32).unwrap();
            }
        }
        let (got, printed) = run_divconst(&t, &input);
        assert_eq!(got, want);
        for op in ["sdiv", "srem"] {
            assert!(
                !printed.contains(op),
                "a division by a constant is left:\n{printed}"
            );
        }
    }

    /// The 64-bit forms: dividends built from two words, results printed as two words.
    #[test]
    fn i64_divisors_match_wrapping_semantics() {
        let mut ds: Vec<i64> = (-300..=300).filter(|&d| d != 0).collect();
        for k in 0..63 {
            ds.push(1 << k);
            ds.push(-(1 << k));
        }
        ds.extend([
            i64::MIN,
            i64::MAX,
            i64::MAX - 1,
            i64::MIN + 1,
            1_000_000_007,
            -(1 << 40) - 3,
        ]);
        ds.extend([(1 << 32) + 1, (1 << 32) - 1, 7 << 33, -(1 << 33) - 1]);
        ds.sort_unstable();
        ds.dedup();
        let words = dividends32(40);
        let mut xs: Vec<i64> = vec![i64::MIN, i64::MIN + 1, i64::MAX, -1, 0, 1, 1 << 32];
        for (k, &w) in words.iter().enumerate() {
            xs.push(w as i64);
            xs.push(((w as i64) << 32) | words[(k * 7 + 3) % words.len()] as u32 as i64);
        }
        let mut t = String::new();
        t.push_str("declare @getint() -> i32\ndeclare @putint(i32) -> void\n");
        t.push_str("declare @putch(i32) -> void\n\n");
        t.push_str("func @main() -> i32 {\nbb0:\n    v0 = iconst.i32 0\n");
        t.push_str("    v1 = iconst.i64 32\n    v2 = iconst.i32 32\n    jump bb1\n");
        t.push_str("bb1:\n    v3 = call.i32 @getint()\n    v4 = call.i32 @getint()\n");
        t.push_str("    v5 = call.i32 @getint()\n    v6 = sext.i64 v3\n");
        t.push_str("    v7 = shl.i64 v6, v1\n    v8 = zext.i64 v4\n    v9 = or.i64 v7, v8\n");
        let mut n = 10;
        for &d in &ds {
            let c = n;
            writeln!(t, "    v{c} = iconst.i64 {d}").unwrap();
            n += 1;
            for op in ["sdiv", "srem"] {
                let r = n;
                writeln!(t, "    v{r} = {op}.i64 v9, v{c}").unwrap();
                writeln!(t, "    v{} = trunc.i32 v{r}", r + 1).unwrap();
                writeln!(t, "    v{} = ashr.i64 v{r}, v1", r + 2).unwrap();
                writeln!(t, "    v{} = trunc.i32 v{}", r + 3, r + 2).unwrap();
                for v in [r + 1, r + 3] {
                    writeln!(t, "    call.void @putint(v{v})\n    call.void @putch(v2)").unwrap();
                }
                n += 4;
            }
            // The remainder's test against 0.
            writeln!(
                t,
                "    v{n} = iconst.i64 0\n    v{} = srem.i64 v9, v{c}",
                n + 1
            )
            .unwrap();
            writeln!(t, "    v{} = icmp.eq v{}, v{n}", n + 2, n + 1).unwrap();
            writeln!(t, "    v{} = zext.i32 v{}", n + 3, n + 2).unwrap();
            writeln!(
                t,
                "    call.void @putint(v{})\n    call.void @putch(v2)",
                n + 3
            )
            .unwrap();
            n += 4;
        }
        writeln!(t, "    v{n} = icmp.ne v5, v0").unwrap();
        writeln!(t, "    brif v{n}, bb1, bb2\nbb2:\n    ret v0\n}}").unwrap();
        let mut input = String::new();
        let mut want = String::new();
        for (k, &x) in xs.iter().enumerate() {
            let more = (k + 1 < xs.len()) as i32;
            write!(input, "{} {} {more} ", (x >> 32) as i32, x as i32).unwrap();
            for &d in &ds {
                for r in [x.wrapping_div(d), x.wrapping_rem(d)] {
                    write!(want, "{} {} ", r as i32, (r >> 32) as i32).unwrap();
                }
                write!(want, "{} ", (x.wrapping_rem(d) == 0) as i32).unwrap();
            }
        }
        let (got, printed) = run_divconst(&t, &input);
        assert_eq!(got, want);
        for op in ["sdiv", "srem"] {
            assert!(
                !printed.contains(op),
                "a division by a constant is left:\n{printed}"
            );
        }
    }

    /// Division by a power of two whose reciprocal is exact becomes a multiplication with the
    /// same result on every input class (normal, subnormal, zero, infinite, NaN); other
    /// divisors stay divisions.
    #[test]
    fn float_division_by_powers_of_two() {
        let divisors = [
            2.0f32,
            0.5,
            -4.0,
            1.0,
            1024.0,
            2f32.powi(-126),
            2f32.powi(126),
            2f32.powi(127),
            3.0,
        ];
        let mut t = String::new();
        t.push_str("declare @getint() -> i32\ndeclare @putint(i32) -> void\n");
        t.push_str("declare @putch(i32) -> void\n\n");
        t.push_str("func @main() -> i32 {\nbb0:\n    v0 = iconst.i32 0\n");
        t.push_str("    v2 = iconst.i32 32\n    jump bb1\n");
        t.push_str("bb1:\n    v3 = call.i32 @getint()\n    v4 = call.i32 @getint()\n");
        t.push_str("    v5 = bitcast.f32 v3\n");
        let mut n = 10;
        for &d in &divisors {
            writeln!(t, "    v{n} = fconst.f32 {:?}", d).unwrap();
            writeln!(t, "    v{} = fdiv.f32 v5, v{n}", n + 1).unwrap();
            writeln!(t, "    v{} = bitcast.i32 v{}", n + 2, n + 1).unwrap();
            writeln!(
                t,
                "    call.void @putint(v{})\n    call.void @putch(v2)",
                n + 2
            )
            .unwrap();
            n += 3;
        }
        writeln!(t, "    v{n} = icmp.ne v4, v0").unwrap();
        writeln!(t, "    brif v{n}, bb1, bb2\nbb2:\n    ret v0\n}}").unwrap();
        let xs = [
            1.0f32,
            -3.5,
            0.0,
            -0.0,
            f32::MAX,
            f32::MIN_POSITIVE,
            1e-45,
            3e-39,
            f32::INFINITY,
            f32::NEG_INFINITY,
            1.1754942e-38,
            123456.79,
        ];
        let mut input = String::new();
        let mut want = String::new();
        for (k, &x) in xs.iter().enumerate() {
            write!(
                input,
                "{} {} ",
                x.to_bits() as i32,
                (k + 1 < xs.len()) as i32
            )
            .unwrap();
            for &d in &divisors {
                write!(want, "{} ", (x / d).to_bits() as i32).unwrap();
            }
        }
        let (got, printed) = run_divconst(&t, &input);
        assert_eq!(got, want);
        // 3.0 has an inexact reciprocal and 2^127 a subnormal one.
        assert_eq!(printed.matches("fdiv").count(), 2, "{printed}");
    }

    /// Behind a branch on `x & 3 == 0`, `x / 4` is a plain shift and `x % 4` is 0; elsewhere
    /// the sign fix-up stays. Both paths agree with Rust's semantics on every dividend.
    #[test]
    fn exact_division_behind_a_mask_test() {
        let t = "declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
    v0 = iconst.i32 0
    v1 = iconst.i32 3
    v2 = iconst.i32 4
    v3 = iconst.i32 -4
    jump bb1
bb1:
    v4 = call.i32 @getint()
    v5 = call.i32 @getint()
    v6 = and.i32 v4, v1
    v7 = icmp.eq v6, v0
    brif v7, bb2, bb3
bb2:
    v8 = sdiv.i32 v4, v2
    call.void @putint(v8)
    v9 = sdiv.i32 v4, v3
    call.void @putint(v9)
    v10 = srem.i32 v4, v2
    call.void @putint(v10)
    jump bb4
bb3:
    v11 = sdiv.i32 v4, v2
    call.void @putint(v11)
    v12 = sdiv.i32 v4, v3
    call.void @putint(v12)
    v13 = srem.i32 v4, v2
    call.void @putint(v13)
    jump bb4
bb4:
    v14 = icmp.ne v5, v0
    brif v14, bb1, bb5
bb5:
    ret v0
}
";
        let xs = dividends32(200);
        let mut input = String::new();
        let mut want = String::new();
        for (k, &x) in xs.iter().enumerate() {
            write!(input, "{x} {} ", (k + 1 < xs.len()) as i32).unwrap();
            for r in [x.wrapping_div(4), x.wrapping_div(-4), x.wrapping_rem(4)] {
                write!(want, "{r}").unwrap();
            }
        }
        let (got, printed) = run_divconst(t, &input);
        assert_eq!(got, want);
        let exact = &printed[printed.find("bb2:").unwrap()..printed.find("bb3:").unwrap()];
        let other = &printed[printed.find("bb3:").unwrap()..printed.find("bb4:").unwrap()];
        assert!(
            !exact.contains("lshr") && !exact.contains("add"),
            "{printed}"
        );
        assert!(other.contains("lshr"), "{printed}");
    }
}
