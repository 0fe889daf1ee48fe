//! Algebraic simplification (instruction combining).
//!
//! Local rewrites, repeated over the function until none applies (`MAX_SWEEPS` at most):
//! constant folding; constants moved to the right of commutative operations; identities
//! (`x+0`, `x-0`, `x*1`, `x*0`, `x/1`, `x%1`, `x-x`, `x^x`, shifts by 0, `select c, x, x`);
//! `x*2^k` to a shift; `x - c` to `x + (-c)`; `(x % c) % c` to `x % c`; `|x % 2|` (a select)
//! to `x & 1`; reassociation of constants (`(x+c1)+c2`, `(x*c1)*c2`, likewise `&`, `|`, `^`);
//! masks that make an addend without low bits or a power-of-two remainder moot (`(y+c)&m` to
//! `y&m`, `(x%2^k)&m` to `x&m`);
//! cancellation (`(x+a)-a`, `(x-a)+a`, `(a+x)-a`); compares of a value with itself; compares
//! of a zero-extended boolean with 0 or 1 back to the boolean; selects whose arms are 0/1
//! (constants or widened booleans) to boolean operations on the condition (`select c, 1, 0`
//! is `zext c`, `select c, 1, zext x` is `zext (c | x)`), and `c ? 1.0 : 0.0` is
//! `sitofp (zext c)`; `and`/`or` of an `i1` with true; constant flips moved out of shifts,
//! `xor`s and sums or unions the known bits (`ir::bits`) prove carry-free (`(x ^ c) + t` is
//! `(x + t) ^ c` when `t` has `c`'s bits zero and shares no bit with `x`), so the negated
//! booleans of a packed bit field cost one `xor` for the field. All rewrites hold under
//! wrapping arithmetic. Replaced instructions are left for `dce`, but for the flips' (their
//! use counts steer the rules). Cost: O(instructions) per sweep; known bits look a bounded
//! depth.

use crate::analysis::{FuncAnalyses, Preserved};
use crate::ir::bits::{width, width_mask};
use crate::ir::fold::{fold, Const};
use crate::ir::{mk, Block, CmpCond, Function, Inst, InstData, ModuleCx, Opcode, Type, Value};

/// Sweeps before giving up on a fixed point (a guard against rules that undo each other).
const MAX_SWEEPS: usize = 64;

pub fn run(f: &mut Function, _cx: &ModuleCx, _am: &mut FuncAnalyses) -> Preserved {
    let mut changed = false;
    // One buffer for every block's instructions: the walk edits the layout.
    let mut insts: Vec<Inst> = Vec::new();
    for _ in 0..MAX_SWEEPS {
        let mut round = false;
        let blocks: Vec<Block> = f.layout().blocks().collect();
        for b in blocks {
            insts.clear();
            insts.extend(f.layout().block_insts(b));
            for &i in &insts {
                if f.layout().inst_block(i).is_none() {
                    continue;
                }
                round |= simplify(f, i);
            }
        }
        if !round {
            break;
        }
        changed = true;
    }
    Preserved::cfg_kept(changed)
}

fn konst(f: &Function, v: Value) -> Option<Const> {
    let i = f.def_inst(v)?;
    let d = f.data(i);
    match d.op {
        Opcode::Iconst => Some(Const::int(d.ty, d.imm)),
        Opcode::Fconst if d.ty == Type::F32 => Some(Const::F32(d.imm as u32)),
        _ => None,
    }
}

fn int_const(f: &Function, v: Value) -> Option<i64> {
    konst(f, v).and_then(Const::as_int)
}

/// Creates an integer constant right before `at`.
fn make_int(f: &mut Function, at: Inst, ty: Type, v: i64) -> Value {
    let k = f.insert_new_before(at, mk::iconst(ty, crate::ir::fold::wrap(ty, v)), &[]);
    f.res(k)
}

fn replace(f: &mut Function, i: Inst, v: Value) -> bool {
    let r = f.res(i);
    if r == v {
        return false;
    }
    f.replace_all_uses(r, v);
    true
}

/// Operands copied out of a function, so it can be edited while they are read: up to
/// `Ops::INLINE` in place (every operation but calls), more on the heap.
#[derive(Clone)]
enum Ops {
    Inline([Value; Ops::INLINE], u8),
    Heap(Vec<Value>),
}

impl Ops {
    const INLINE: usize = 4;

    fn of(f: &Function, i: Inst) -> Ops {
        let args = f.args(i);
        if args.len() <= Ops::INLINE {
            let mut buf = [Value::new(0); Ops::INLINE];
            buf[..args.len()].copy_from_slice(args);
            Ops::Inline(buf, args.len() as u8)
        } else {
            Ops::Heap(args.to_vec())
        }
    }
}

impl std::ops::Deref for Ops {
    type Target = [Value];
    fn deref(&self) -> &[Value] {
        match self {
            Ops::Inline(buf, n) => &buf[..*n as usize],
            Ops::Heap(v) => v,
        }
    }
}

/// The defining row and operands of `v` if it is an instruction result.
fn def_of(f: &Function, v: Value) -> Option<(Inst, InstData, Ops)> {
    let i = f.def_inst(v)?;
    Some((i, *f.data(i), Ops::of(f, i)))
}

/// As `def_of`, for a definition whose row `keep` accepts (the operands are copied only then).
fn def_if(
    f: &Function,
    v: Value,
    keep: impl Fn(&InstData) -> bool,
) -> Option<(Inst, InstData, Ops)> {
    let i = f.def_inst(v)?;
    let d = *f.data(i);
    keep(&d).then(|| (i, d, Ops::of(f, i)))
}

fn simplify(f: &mut Function, i: Inst) -> bool {
    let d = *f.data(i);
    let Some(r) = f.result(i) else { return false };
    if !f.has_uses(r) || matches!(d.op, Opcode::Iconst | Opcode::Fconst) {
        return false;
    }
    let args = Ops::of(f, i);
    // Full constant folding.
    if d.op.is_pure() && d.op != Opcode::Alloca && !args.is_empty() {
        // Pure operations have at most `Ops::INLINE` operands (only calls have more).
        let mut cs = [Const::F32(0); Ops::INLINE];
        let all_const = args.len() <= Ops::INLINE
            && cs
                .iter_mut()
                .zip(args.iter())
                .all(|(c, &a)| konst(f, a).map(|k| *c = k).is_some());
        if all_const {
            if let Some(c) = fold(&d, &cs[..args.len()]) {
                if c.to_inst().ty == d.ty {
                    f.replace_inst(i, c.to_inst(), &[]);
                    return true;
                }
            }
        }
    }
    let ty = d.ty;
    use Opcode::*;
    match d.op {
        op if op.is_int_binary() => {
            let (mut a, mut b) = (args[0], args[1]);
            // Constants to the right.
            if op.is_commutative() && konst(f, a).is_some() && konst(f, b).is_none() {
                std::mem::swap(&mut a, &mut b);
                f.set_args(i, &[a, b]);
                return true;
            }
            // Zero divided, reduced or shifted stays zero (a zero divisor is undefined).
            if matches!(op, Sdiv | Srem | Shl | Ashr | Lshr | Mulhs | Mulhu)
                && int_const(f, a) == Some(0)
            {
                return replace(f, i, a);
            }
            let cb = int_const(f, b);
            match (op, cb) {
                (Add | Sub | Or | Xor | Shl | Ashr | Lshr, Some(0)) => return replace(f, i, a),
                (Mul | Sdiv, Some(1)) => return replace(f, i, a),
                (Mul | And, Some(0)) => return replace(f, i, b),
                (And, Some(c)) if ty == Type::I1 && c & 1 != 0 => return replace(f, i, a),
                (Or, Some(c)) if ty == Type::I1 && c & 1 != 0 => return replace(f, i, b),
                (Srem, Some(1 | -1)) => {
                    let z = make_int(f, i, ty, 0);
                    return replace(f, i, z);
                }
                (Mul | Sdiv, Some(-1)) => {
                    let z = make_int(f, i, ty, 0);
                    f.replace_inst(i, mk::binary(Sub, ty), &[z, a]);
                    return true;
                }
                (Mul, Some(c)) if c > 1 && (c & (c - 1)) == 0 => {
                    let k = make_int(f, i, ty, c.trailing_zeros() as i64);
                    f.replace_inst(i, mk::binary(Shl, ty), &[a, k]);
                    return true;
                }
                (Sub, Some(c)) if c != i32::MIN as i64 || ty == Type::I64 => {
                    let n = make_int(f, i, ty, c.wrapping_neg());
                    f.replace_inst(i, mk::binary(Add, ty), &[a, n]);
                    return true;
                }
                _ => {}
            }
            // (x % c) % c is x % c: the inner remainder is already below |c| with x's sign.
            if let (Srem, Some(c)) = (op, cb) {
                if let Some((_, _, aargs)) = def_if(f, a, |ad| ad.op == Srem && ad.ty == ty) {
                    if int_const(f, aargs[1]) == Some(c) {
                        return replace(f, i, a);
                    }
                }
            }
            if a == b {
                match op {
                    Sub | Xor => {
                        let z = make_int(f, i, ty, 0);
                        return replace(f, i, z);
                    }
                    And | Or => return replace(f, i, a),
                    _ => {}
                }
            }
            // Reassociate constants: (x op c1) op c2 -> x op (c1 op c2).
            if let (Some(c2), Add | Mul | And | Or | Xor) = (cb, op) {
                if let Some((_, _, aargs)) = def_if(f, a, |ad| ad.op == op && ad.ty == ty) {
                    if let Some(c1) = int_const(f, aargs[1]) {
                        let c = match op {
                            Add => c1.wrapping_add(c2),
                            Mul => c1.wrapping_mul(c2),
                            And => c1 & c2,
                            Or => c1 | c2,
                            _ => c1 ^ c2,
                        };
                        let k = make_int(f, i, ty, c);
                        f.set_args(i, &[aargs[0], k]);
                        return true;
                    }
                }
            }
            // Low bits: (y + c) & m is y & m when c has no bit at or below m's highest one
            // (carries only go up), and (x % 2^k) & m is x & m for m < 2^k (the remainder
            // keeps x's low k bits).
            if let (And, Some(m)) = (op, cb) {
                if m > 0 {
                    let low = u64::MAX >> m.leading_zeros();
                    if let Some((_, ad, aargs)) =
                        def_if(f, a, |ad| matches!(ad.op, Add | Srem) && ad.ty == ty)
                    {
                        let keeps = match (ad.op, int_const(f, aargs[1])) {
                            (Add, Some(c)) => c as u64 & low == 0,
                            (Srem, Some(c)) => {
                                c.unsigned_abs().is_power_of_two()
                                    && m.unsigned_abs() < c.unsigned_abs()
                            }
                            _ => false,
                        };
                        if keeps {
                            f.set_args(i, &[aargs[0], b]);
                            drop_if_dead(f, a, 0);
                            return true;
                        }
                    }
                }
            }
            // Cancellation.
            if op == Sub {
                if let Some((_, _, aargs)) = def_if(f, a, |ad| ad.op == Add && ad.ty == ty) {
                    if aargs[1] == b {
                        return replace(f, i, aargs[0]);
                    }
                    if aargs[0] == b {
                        return replace(f, i, aargs[1]);
                    }
                }
            }
            if matches!(op, Add | Or | Xor) && cb.is_none() && hoist_xor(f, i, op, ty, a, b, 4) {
                return true;
            }
            if let (Shl, Some(k)) = (op, cb) {
                if let Some(x) =
                    XorConst::of(f, a, ty).filter(|_| (0..width(ty) as i64).contains(&k))
                {
                    let (x, c) = x.build(f, i);
                    let n = f.insert_new_before(i, mk::binary(Shl, ty), &[x, b]);
                    let n = f.res(n);
                    let c = make_int(f, i, ty, c << k);
                    f.replace_inst(i, mk::binary(Xor, ty), &[n, c]);
                    drop_if_dead(f, a, 2);
                    return true;
                }
            }
            if op == Add {
                for (x, y) in [(a, b), (b, a)] {
                    if let Some((_, _, xargs)) = def_if(f, x, |xd| xd.op == Sub && xd.ty == ty) {
                        if xargs[1] == y {
                            return replace(f, i, xargs[0]);
                        }
                    }
                }
                if ty.is_int() && combine_like_terms(f, i, ty, a, b) {
                    return true;
                }
            }
            false
        }
        Icmp => {
            let (a, b) = (args[0], args[1]);
            let c = d.cond();
            if konst(f, a).is_some() && konst(f, b).is_none() {
                f.replace_inst(i, mk::icmp(c.swap()), &[b, a]);
                return true;
            }
            if a == b {
                let v = matches!(c, CmpCond::Eq | CmpCond::Le | CmpCond::Ge) as i64;
                let k = make_int(f, i, Type::I1, v);
                return replace(f, i, k);
            }
            // A value with a known-zero bit that the constant sets never equals it: a multiple
            // of 6 is never 7.
            if let (CmpCond::Eq | CmpCond::Ne, Some(k)) = (c, int_const(f, b)) {
                if f.known_zero(a) & k as u64 & width_mask(f.ty(a)) != 0 {
                    let k = make_int(f, i, Type::I1, (c == CmpCond::Ne) as i64);
                    return replace(f, i, k);
                }
            }
            // A 0/1 integer compared for truth is its low bit: one `trunc` (free in the
            // backend) instead of a compare.
            let truth = matches!(
                (c, int_const(f, b)),
                (CmpCond::Ne | CmpCond::Gt, Some(0)) | (CmpCond::Eq | CmpCond::Ge, Some(1))
            );
            let zext_of_bool = def_if(f, a, |ad| ad.op == Zext)
                .is_some_and(|(_, _, aargs)| f.ty(aargs[0]) == Type::I1);
            if truth && !zext_of_bool && f.ty(a) != Type::I1 && f.is_zero_one(a) {
                f.replace_inst(i, mk::unary(Trunc, Type::I1), &[a]);
                return true;
            }
            // icmp ne (zext x), 0 -> x ; icmp eq (zext x), 0 -> !x
            if let (Some(k), Some((_, ad, aargs))) = (int_const(f, b), def_of(f, a)) {
                if ad.op == Zext && f.ty(aargs[0]) == Type::I1 {
                    let x = aargs[0];
                    let truthy = match (c, k) {
                        (CmpCond::Ne, 0)
                        | (CmpCond::Eq, 1)
                        | (CmpCond::Gt, 0)
                        | (CmpCond::Ge, 1) => Some(true),
                        (CmpCond::Eq, 0)
                        | (CmpCond::Ne, 1)
                        | (CmpCond::Le, 0)
                        | (CmpCond::Lt, 1) => Some(false),
                        _ => None,
                    };
                    match truthy {
                        Some(true) => return replace(f, i, x),
                        Some(false) => {
                            // Invert: a compare with one use is rewritten, otherwise xor with 1.
                            if let Some((xi, xd, xargs)) = def_of(f, x) {
                                if xd.op == Icmp && f.has_one_use(x) {
                                    f.replace_inst(i, mk::icmp(xd.cond().invert()), &xargs);
                                    let _ = xi;
                                    return true;
                                }
                            }
                            let one = make_int(f, i, Type::I1, 1);
                            f.replace_inst(i, mk::binary(Xor, Type::I1), &[x, one]);
                            return true;
                        }
                        None => {}
                    }
                }
            }
            false
        }
        Gep => {
            // gep base, k, stride -> offset base, k * stride
            if let Some(k) = int_const(f, args[1]) {
                f.replace_inst(i, mk::offset(k.wrapping_mul(d.imm)), &[args[0]]);
                return true;
            }
            false
        }
        Offset => {
            if d.imm == 0 {
                return replace(f, i, args[0]);
            }
            // offset (offset p, a), b -> offset p, a + b
            if let Some((_, ad, aargs)) = def_if(f, args[0], |ad| ad.op == Offset) {
                f.replace_inst(i, mk::offset(ad.imm.wrapping_add(d.imm)), &[aargs[0]]);
                return true;
            }
            false
        }
        Select => {
            let (c, x, y) = (args[0], args[1], args[2]);
            if x == y {
                return replace(f, i, x);
            }
            if let Some(k) = int_const(f, c) {
                return replace(f, i, if k & 1 != 0 { x } else { y });
            }
            // |x % 2| is the low bit of x (negation keeps a number's parity).
            if let Some(r) = abs_of(f, c, x, y) {
                if let Some((_, _, rargs)) = def_if(f, r, |rd| rd.op == Srem) {
                    if matches!(int_const(f, rargs[1]), Some(2 | -2)) {
                        let one = make_int(f, i, ty, 1);
                        f.replace_inst(i, mk::binary(And, ty), &[rargs[0], one]);
                        return true;
                    }
                }
            }
            // `c ? 1.0 : 0.0` is the boolean converted: two instructions, no branch or mask.
            if ty == Type::F32 {
                let (one, zero) = (1.0f32.to_bits(), 0.0f32.to_bits());
                let bits = |v| f.as_fconst(v).map(f32::to_bits);
                let b = match (bits(x), bits(y)) {
                    (Some(p), Some(q)) if (p, q) == (one, zero) => c,
                    (Some(p), Some(q)) if (p, q) == (zero, one) => negate(f, i, c),
                    _ => return false,
                };
                let z = f.insert_new_before(i, mk::unary(Zext, Type::I32), &[b]);
                let z = f.res(z);
                f.replace_inst(i, mk::unary(Sitofp, Type::F32), &[z]);
                return true;
            }
            ty.is_int() && boolean_select(f, i, ty, c, x, y)
        }
        Fneg => {
            if let Some((_, _, aargs)) = def_if(f, args[0], |ad| ad.op == Fneg) {
                return replace(f, i, aargs[0]);
            }
            false
        }
        Zext | Sext | Trunc => {
            // zext (trunc x) -> x for a 0/1 integer x of the result's width.
            if d.op == Zext {
                if let Some((_, ad, aargs)) = def_of(f, args[0]) {
                    let x = aargs.first().copied();
                    if let Some(x) = x.filter(|&x| ad.op == Trunc && f.ty(x) == ty) {
                        if f.is_zero_one(x) {
                            return replace(f, i, x);
                        }
                    }
                }
            }
            // trunc (sext x) -> x ; trunc (zext x) -> x when widths match.
            if d.op == Trunc {
                if let Some((_, _, aargs)) = def_if(f, args[0], |ad| matches!(ad.op, Sext | Zext)) {
                    if f.ty(aargs[0]) == ty {
                        return replace(f, i, aargs[0]);
                    }
                }
            }
            false
        }
        _ => false,
    }
}

/// A value with no other use that flips constant bits of another: `x ^ c`, or a widened
/// boolean `zext (b ^ 1)`, read as `zext b ^ 1`.
enum XorConst {
    Of(Value, i64),
    WidenedNot(Value),
}

impl XorConst {
    fn of(f: &Function, s: Value, ty: Type) -> Option<XorConst> {
        if !f.has_one_use(s) || f.ty(s) != ty {
            return None;
        }
        let (_, d, args) = def_of(f, s)?;
        match d.op {
            Opcode::Xor => [(args[0], args[1]), (args[1], args[0])]
                .into_iter()
                .find_map(|(x, c)| Some(XorConst::Of(x, int_const(f, c)?))),
            Opcode::Zext if f.ty(args[0]) == Type::I1 && f.has_one_use(args[0]) => {
                let (_, xd, xargs) = def_of(f, args[0])?;
                let one = |v| int_const(f, v).is_some_and(|k| k & 1 == 1);
                let zero_one = |v| f.ty(v) == ty && f.known_zero(v) == width_mask(ty) & !1;
                match xd.op {
                    Opcode::Xor if one(xargs[1]) => Some(XorConst::WidenedNot(xargs[0])),
                    Opcode::Xor if one(xargs[0]) => Some(XorConst::WidenedNot(xargs[1])),
                    // `b == 0` (or `b != 1`) of a 0/1 integer `b` is `b ^ 1`.
                    Opcode::Icmp if zero_one(xargs[0]) => {
                        let k = int_const(f, xargs[1])?;
                        matches!((xd.cond(), k), (CmpCond::Eq, 0) | (CmpCond::Ne, 1))
                            .then_some(XorConst::Of(xargs[0], 1))
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// The bits of the unflipped value known to be zero.
    fn known_zero(&self, f: &Function, ty: Type) -> u64 {
        match *self {
            XorConst::Of(x, _) => f.known_zero(x),
            XorConst::WidenedNot(_) => width_mask(ty) & !1,
        }
    }

    fn flipped(&self) -> u64 {
        match *self {
            XorConst::Of(_, c) => c as u64,
            XorConst::WidenedNot(_) => 1,
        }
    }

    /// The unflipped value (widening the boolean before `at`) and the flipped bits.
    fn build(self, f: &mut Function, at: Inst) -> (Value, i64) {
        match self {
            XorConst::Of(x, c) => (x, c),
            XorConst::WidenedNot(b) => {
                let ty = f.ty(f.res(at));
                let z = f.insert_new_before(at, mk::unary(Opcode::Zext, ty), &[b]);
                (f.res(z), 1)
            }
        }
    }
}

/// Moves a constant flip out of an operand: `(x ^ c) op t -> (x op t) ^ c` for `xor`; for
/// `or` when `t` has every bit of `c` zero; for `add` when moreover `x` and `t` share no bit
/// (the sums are then carry-free). Repeated flips of a chain of bit fields (`s << 1 | !b`)
/// so gather into one `xor` at its end. Recurses into the new `x op t`, `depth` deep.
fn hoist_xor(
    f: &mut Function,
    i: Inst,
    op: Opcode,
    ty: Type,
    a: Value,
    b: Value,
    depth: u32,
) -> bool {
    let m = width_mask(ty);
    for (s, t) in [(a, b), (b, a)] {
        if int_const(f, t).is_some() {
            continue;
        }
        let Some(x) = XorConst::of(f, s, ty) else {
            continue;
        };
        let c = x.flipped() & m;
        let tz = f.known_zero(t);
        let ok = match op {
            Opcode::Xor => true,
            Opcode::Or => tz & c == c,
            _ => tz & c == c && (x.known_zero(f, ty) | tz) == m,
        };
        if !ok {
            continue;
        }
        let (x, c) = x.build(f, i);
        let n = f.insert_new_before(i, mk::binary(op, ty), &[x, t]);
        let (mut v, mut c) = (f.res(n), c);
        if depth > 0 && hoist_xor(f, n, op, ty, x, t, depth - 1) {
            // `n` is now `v' ^ c'`: fold the two flips.
            let inner = Ops::of(f, n);
            if let Some(c2) = int_const(f, inner[1]) {
                v = inner[0];
                c ^= c2;
            }
        }
        let k = make_int(f, i, ty, c);
        f.replace_inst(i, mk::binary(Opcode::Xor, ty), &[v, k]);
        // The flips' old rows: gone now, so use counts stay exact for the rules that follow.
        drop_if_dead(f, f.res(n), 1);
        drop_if_dead(f, s, 2);
        return true;
    }
    false
}

/// Removes the pure instruction defining `v` when nothing uses it, then its operands' in turn,
/// `depth` deep.
fn drop_if_dead(f: &mut Function, v: Value, depth: u32) {
    let Some(i) = f.def_inst(v) else { return };
    if f.has_uses(v) || !f.data(i).op.is_pure() || f.layout().inst_block(i).is_none() {
        return;
    }
    let args = Ops::of(f, i);
    f.remove_inst(i);
    if depth > 0 {
        for &a in args.iter() {
            drop_if_dead(f, a, depth - 1);
        }
    }
}

/// The value `r` of which `select c, x, y` is the absolute value: `r < 0 ? -r : r` (also
/// `r <= -1`, or `r > 0 ? r : -r`, `r >= 0`, `r > -1`), `-r` being `0 - r`.
fn abs_of(f: &Function, c: Value, x: Value, y: Value) -> Option<Value> {
    let (_, cd, cargs) = def_if(f, c, |d| d.op == Opcode::Icmp)?;
    let r = cargs[0];
    let neg_of = |n: Value, r: Value| {
        def_if(f, n, |d| d.op == Opcode::Sub)
            .is_some_and(|(_, _, a)| a[1] == r && int_const(f, a[0]) == Some(0))
    };
    let k = int_const(f, cargs[1])?;
    let negative_first = match (cd.cond(), k) {
        (CmpCond::Lt, 0) | (CmpCond::Le, -1) => true,
        (CmpCond::Gt, 0) | (CmpCond::Ge, 0) | (CmpCond::Gt, -1) => false,
        _ => return None,
    };
    let (neg, pos) = if negative_first { (x, y) } else { (y, x) };
    (pos == r && neg_of(neg, r)).then_some(r)
}

/// `v` as `x * c` for a constant `c`: a multiplication or left shift by a constant, else `v * 1`.
fn as_multiple(f: &Function, v: Value) -> (Value, i64) {
    if let Some((_, d, args)) = def_if(f, v, |d| matches!(d.op, Opcode::Mul | Opcode::Shl)) {
        if let Some(c) = int_const(f, args[1]) {
            match d.op {
                Opcode::Mul => return (args[0], c),
                Opcode::Shl if (0..31).contains(&c) => return (args[0], 1 << c),
                _ => {}
            }
        }
    }
    (v, 1)
}

/// Repeated terms of a sum: `x*c1 + x*c2 -> x*(c1+c2)` (with `x` itself as `x*1`), and
/// `(y + x*c1) + x*c2 -> y + x*(c1+c2)` when the inner sum has no other use, so a chain
/// `x + x + ... + x` of n terms becomes one multiplication. Exact in wrapping arithmetic.
fn combine_like_terms(f: &mut Function, i: Inst, ty: Type, a: Value, b: Value) -> bool {
    let ((xa, ca), (xb, cb)) = (as_multiple(f, a), as_multiple(f, b));
    if xa == xb && int_const(f, xa).is_none() {
        let k = make_int(f, i, ty, ca.wrapping_add(cb));
        f.replace_inst(i, mk::binary(Opcode::Mul, ty), &[xa, k]);
        return true;
    }
    for (s, t) in [(a, b), (b, a)] {
        if !f.has_one_use(s) {
            continue;
        }
        let (x, c) = as_multiple(f, t);
        if int_const(f, x).is_some() {
            continue;
        }
        let Some((_, _, sargs)) = def_if(f, s, |sd| sd.op == Opcode::Add && sd.ty == ty) else {
            continue;
        };
        for (y, m) in [(sargs[0], sargs[1]), (sargs[1], sargs[0])] {
            let (xm, cm) = as_multiple(f, m);
            if xm == x {
                let k = make_int(f, i, ty, cm.wrapping_add(c));
                let prod = f.insert_new_before(i, mk::binary(Opcode::Mul, ty), &[x, k]);
                let prod = f.res(prod);
                f.set_args(i, &[y, prod]);
                return true;
            }
        }
    }
    false
}

/// A 0/1 value: a constant, or an `i1` (possibly zero-extended).
#[derive(Clone, Copy)]
enum Bool {
    Const(bool),
    Val(Value),
}

fn as_bool(f: &Function, v: Value) -> Option<Bool> {
    if let Some(k) = int_const(f, v) {
        return match k {
            0 => Some(Bool::Const(false)),
            1 => Some(Bool::Const(true)),
            -1 if f.ty(v) == Type::I1 => Some(Bool::Const(true)),
            _ => None,
        };
    }
    if f.ty(v) == Type::I1 {
        return Some(Bool::Val(v));
    }
    let (_, d, args) = def_of(f, v)?;
    (d.op == Opcode::Zext && f.ty(args[0]) == Type::I1).then(|| Bool::Val(args[0]))
}

/// `!c` as a new instruction before `at`: an inverted integer compare, else `c ^ 1`.
fn negate(f: &mut Function, at: Inst, c: Value) -> Value {
    if let Some((_, d, args)) = def_of(f, c) {
        let exact = d.op == Opcode::Icmp || matches!(d.cond(), CmpCond::Eq | CmpCond::Ne);
        if matches!(d.op, Opcode::Icmp | Opcode::Fcmp) && exact {
            let row = if d.op == Opcode::Icmp {
                mk::icmp(d.cond().invert())
            } else {
                mk::fcmp(d.cond().invert())
            };
            let n = f.insert_new_before(at, row, &args);
            return f.res(n);
        }
    }
    let one = make_int(f, at, Type::I1, 1);
    let n = f.insert_new_before(at, mk::binary(Opcode::Xor, Type::I1), &[c, one]);
    f.res(n)
}

/// `select c, x, y` with 0/1 arms as boolean operations on `c`, widened to `ty`: `c`, `!c`,
/// `c | y`, `!c & y`, `c & x`, `!c | x`, and `y ^ (c & (x ^ y))` for two booleans.
fn boolean_select(f: &mut Function, i: Inst, ty: Type, c: Value, x: Value, y: Value) -> bool {
    let (Some(bx), Some(by)) = (as_bool(f, x), as_bool(f, y)) else {
        return false;
    };
    let op = |f: &mut Function, op: Opcode, a: Value, b: Value| {
        let n = f.insert_new_before(i, mk::binary(op, Type::I1), &[a, b]);
        f.res(n)
    };
    let v = match (bx, by) {
        (Bool::Const(true), Bool::Const(false)) => c,
        (Bool::Const(false), Bool::Const(true)) => negate(f, i, c),
        (Bool::Const(true), Bool::Val(v)) => op(f, Opcode::Or, c, v),
        (Bool::Const(false), Bool::Val(v)) => {
            let n = negate(f, i, c);
            op(f, Opcode::And, n, v)
        }
        (Bool::Val(v), Bool::Const(false)) => op(f, Opcode::And, c, v),
        (Bool::Val(v), Bool::Const(true)) => {
            let n = negate(f, i, c);
            op(f, Opcode::Or, n, v)
        }
        (Bool::Val(a), Bool::Val(b)) => {
            // b ^ (c & (a ^ b))
            let d = op(f, Opcode::Xor, a, b);
            let m = op(f, Opcode::And, c, d);
            op(f, Opcode::Xor, b, m)
        }
        _ => return false,
    };
    if ty == Type::I1 {
        return replace(f, i, v);
    }
    f.replace_inst(i, mk::unary(Opcode::Zext, ty), &[v]);
    true
}
