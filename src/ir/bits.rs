//! Known bits: which bits of an integer value are zero on every execution, read off its
//! definition (constants, masks, shifts, extensions, bitwise operations, disjoint sums), to a
//! bounded depth. The answer is conservative: a bit not in the mask may still always be zero.

use super::{Function, Opcode, Type, Value};

/// How many definitions deep `known_zero` looks.
const DEPTH: u32 = 6;

/// The bits of a value of type `ty` (all 64 for `i64`, the low 32 for `i32`, bit 0 for `i1`).
pub fn width_mask(ty: Type) -> u64 {
    match ty {
        Type::I1 => 1,
        Type::I32 => u32::MAX as u64,
        _ => u64::MAX,
    }
}

/// The number of bits of `ty`'s values (1, 32 or 64).
pub fn width(ty: Type) -> u32 {
    match ty {
        Type::I1 => 1,
        Type::I32 => 32,
        _ => 64,
    }
}

impl Function {
    /// The bits of integer `v` known to be zero, within its type's width (`width_mask`).
    pub fn known_zero(&self, v: Value) -> u64 {
        self.known_zero_at(v, DEPTH)
    }

    /// Whether `a + b` sets no bit that both may set, so it equals `a | b` and `a ^ b`.
    pub fn disjoint_bits(&self, a: Value, b: Value) -> bool {
        let m = width_mask(self.ty(a));
        self.known_zero(a) | self.known_zero(b) == m
    }

    fn known_zero_at(&self, v: Value, depth: u32) -> u64 {
        let ty = self.ty(v);
        if !ty.is_int() {
            return 0;
        }
        let m = width_mask(ty);
        let w = width(ty);
        let Some(i) = self.def_inst(v) else {
            return 0;
        };
        let d = *self.data(i);
        if d.op == Opcode::Iconst {
            return !(d.imm as u64) & m;
        }
        if depth == 0 {
            return 0;
        }
        let args = self.args(i);
        let kz = |x: Value| self.known_zero_at(x, depth - 1);
        let shift = |x: Value| {
            self.as_iconst(x)
                .filter(|&k| (0..w as i64).contains(&k))
                .map(|k| k as u32)
        };
        let z = match d.op {
            Opcode::And => kz(args[0]) | kz(args[1]),
            Opcode::Or | Opcode::Xor => kz(args[0]) & kz(args[1]),
            Opcode::Select => kz(args[1]) & kz(args[2]),
            Opcode::Shl => match shift(args[1]) {
                Some(k) => (kz(args[0]) << k) | ((1u64 << k) - 1),
                None => 0,
            },
            Opcode::Lshr => match shift(args[1]) {
                Some(k) => ((kz(args[0]) & m) >> k) | (m & !(m >> k)),
                None => 0,
            },
            Opcode::Ashr => match shift(args[1]) {
                Some(k) => {
                    let x = kz(args[0]) & m;
                    let sign = 1u64 << (w - 1);
                    let high = m & !(m >> k);
                    (x >> k) | if x & sign != 0 { high } else { 0 }
                }
                None => 0,
            },
            Opcode::Mul => {
                // A product has at least as many low zero bits as its factors together.
                let low = kz(args[0]).trailing_ones() + kz(args[1]).trailing_ones();
                if low >= w {
                    m
                } else {
                    (1u64 << low) - 1
                }
            }
            Opcode::Zext => kz(args[0]) | (m & !width_mask(self.ty(args[0]))),
            Opcode::Trunc => kz(args[0]),
            Opcode::Add => {
                let (za, zb) = (kz(args[0]), kz(args[1]));
                if za | zb == m {
                    // No carries: the sum is the union of the bits.
                    za & zb
                } else {
                    // Common low zeros stay zero; common high zeros lose one to the carry.
                    let low = (za & zb).trailing_ones().min(w);
                    let high = ((za & zb) << (64 - w)).leading_ones().min(w);
                    let low_mask = if low >= 64 {
                        u64::MAX
                    } else {
                        (1u64 << low) - 1
                    };
                    let high_mask = match high {
                        0 | 1 => 0,
                        h => m & !(m >> (h - 1)),
                    };
                    low_mask | high_mask
                }
            }
            _ => 0,
        };
        z & m
    }
}

#[cfg(test)]
mod tests {
    fn zero_of_last(src: &str) -> u64 {
        let m = crate::ir::parse::module(src).unwrap();
        let f = m.funcs.iter().next().unwrap().1;
        let b = f.layout().blocks().next().unwrap();
        let last = f
            .layout()
            .block_insts(b)
            .filter_map(|i| f.result(i))
            .last()
            .unwrap();
        f.known_zero(last)
    }

    #[test]
    fn masks_shifts_and_extensions_have_known_zero_bits() {
        let src = "func @f(i32) -> i32 {
bb0(v0: i32):
    v1 = iconst.i32 1
    v2 = and.i32 v0, v1
    v3 = iconst.i32 4
    v4 = shl.i32 v2, v3
    ret v4
}";
        assert_eq!(zero_of_last(src), 0xffff_ffef);
        let src = "func @f(i32) -> i64 {
bb0(v0: i32):
    v1 = iconst.i32 28
    v2 = lshr.i32 v0, v1
    v3 = zext.i64 v2
    ret v3
}";
        assert_eq!(zero_of_last(src), !0xf);
    }

    #[test]
    fn a_sum_of_disjoint_bits_keeps_them_and_an_unknown_operand_loses_them() {
        let src = "func @f(i32, i32) -> i32 {
bb0(v0: i32, v1: i32):
    v2 = iconst.i32 1
    v3 = shl.i32 v0, v2
    v4 = and.i32 v1, v2
    v5 = add.i32 v3, v4
    ret v5
}";
        assert_eq!(zero_of_last(src), 0);
        let src = "func @f(i32, i32) -> i32 {
bb0(v0: i32, v1: i32):
    v2 = iconst.i32 3
    v3 = and.i32 v0, v2
    v4 = and.i32 v1, v2
    v5 = add.i32 v3, v4
    ret v5
}";
        // Two 2-bit numbers: the sum fits in 3 bits.
        assert_eq!(zero_of_last(src), 0xffff_fff8);
        let src = "func @f(i32, i32) -> i32 {
bb0(v0: i32, v1: i32):
    v2 = iconst.i32 1
    v3 = ashr.i32 v0, v2
    v4 = add.i32 v3, v1
    ret v4
}";
        assert_eq!(zero_of_last(src), 0);
    }

    #[test]
    fn an_arithmetic_shift_of_a_non_negative_value_fills_with_zeros() {
        let src = "func @f(i32) -> i32 {
bb0(v0: i32):
    v1 = iconst.i32 65535
    v2 = and.i32 v0, v1
    v3 = iconst.i32 8
    v4 = ashr.i32 v2, v3
    ret v4
}";
        assert_eq!(zero_of_last(src), 0xffff_ff00);
    }
}
