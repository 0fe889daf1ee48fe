//! Constant folding of single instructions, shared by SCCP and instcombine.
//!
//! Integer arithmetic wraps at the type's width (SysY ints are two's complement); nothing is
//! folded whose machine result would differ from this evaluation: division by zero, `fptosi` of
//! NaN or out-of-range values. Float arithmetic is done in f32, exactly as the hardware does.

use crate::ir::{Function, InstData, Opcode, Type, Value};

/// A constant: an integer (sign-extended to i64, wrapped to its type) or float bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Const {
    Int(Type, i64),
    F32(u32),
}

impl Const {
    pub fn int(ty: Type, v: i64) -> Const {
        Const::Int(ty, wrap(ty, v))
    }
    pub fn f32(x: f32) -> Const {
        Const::F32(x.to_bits())
    }
    pub fn as_int(self) -> Option<i64> {
        match self {
            Const::Int(_, v) => Some(v),
            _ => None,
        }
    }
    pub fn as_f32(self) -> Option<f32> {
        match self {
            Const::F32(b) => Some(f32::from_bits(b)),
            _ => None,
        }
    }
    /// The instruction row that materialises this constant.
    pub fn to_inst(self) -> InstData {
        match self {
            Const::Int(ty, v) => InstData::with_imm(Opcode::Iconst, ty, v),
            Const::F32(b) => InstData::with_imm(Opcode::Fconst, Type::F32, b as i64),
        }
    }
}

/// The constant `v` holds when a constant instruction defines it.
pub fn constant_value(f: &Function, v: Value) -> Option<Const> {
    let i = f.def_inst(v)?;
    let d = f.data(i);
    match d.op {
        Opcode::Iconst | Opcode::Fconst => fold(d, &[]),
        _ => None,
    }
}

/// Wraps `v` to the width of `ty` and sign-extends it back.
pub fn wrap(ty: Type, v: i64) -> i64 {
    match ty {
        Type::I1 => v & 1,
        Type::I32 => v as i32 as i64,
        _ => v,
    }
}

/// The constant an instruction row produces from constant operands, if it can be known.
pub fn fold(d: &InstData, args: &[Const]) -> Option<Const> {
    use Opcode::*;
    let ty = d.ty;
    match d.op {
        Iconst => Some(Const::int(ty, d.imm)),
        Fconst if ty == Type::F32 => Some(Const::F32(d.imm as u32)),
        op if op.is_int_binary() => {
            let (a, b) = (args[0].as_int()?, args[1].as_int()?);
            let bits = if ty == Type::I64 { 64 } else { 32 };
            let r = match op {
                Add => a.wrapping_add(b),
                Sub => a.wrapping_sub(b),
                Mul => a.wrapping_mul(b),
                Sdiv => {
                    if b == 0 {
                        return None;
                    }
                    if ty == Type::I32 {
                        (a as i32).wrapping_div(b as i32) as i64
                    } else {
                        a.wrapping_div(b)
                    }
                }
                Srem => {
                    if b == 0 {
                        return None;
                    }
                    if ty == Type::I32 {
                        (a as i32).wrapping_rem(b as i32) as i64
                    } else {
                        a.wrapping_rem(b)
                    }
                }
                Shl => {
                    if ty == Type::I32 {
                        (a as i32).wrapping_shl(b as u32 & 31) as i64
                    } else {
                        a.wrapping_shl(b as u32 & 63)
                    }
                }
                Ashr => {
                    if ty == Type::I32 {
                        ((a as i32) >> (b as u32 & 31)) as i64
                    } else {
                        a >> (b as u32 & 63)
                    }
                }
                Lshr => {
                    if ty == Type::I32 {
                        ((a as u32) >> (b as u32 & 31)) as i32 as i64
                    } else {
                        ((a as u64) >> (b as u32 & 63)) as i64
                    }
                }
                And => a & b,
                Or => a | b,
                Xor => a ^ b,
                Mulhs => {
                    if bits == 32 {
                        ((a as i32 as i64 * b as i32 as i64) >> 32) as i32 as i64
                    } else {
                        ((a as i128 * b as i128) >> 64) as i64
                    }
                }
                Mulhu => {
                    if bits == 32 {
                        ((a as u32 as u64 * b as u32 as u64) >> 32) as i32 as i64
                    } else {
                        ((a as u64 as u128 * b as u64 as u128) >> 64) as i64
                    }
                }
                _ => return None,
            };
            Some(Const::int(ty, r))
        }
        op if op.is_float_binary() && ty == Type::F32 => {
            let (a, b) = (args[0].as_f32()?, args[1].as_f32()?);
            let r = match op {
                Fadd => a + b,
                Fsub => a - b,
                Fmul => a * b,
                Fdiv => a / b,
                _ => return None,
            };
            Some(Const::f32(r))
        }
        Fneg if ty == Type::F32 => Some(Const::f32(-args[0].as_f32()?)),
        Icmp => {
            let (a, b) = (args[0].as_int()?, args[1].as_int()?);
            Some(Const::int(Type::I1, d.cond().eval_int(a, b) as i64))
        }
        Fcmp => {
            let (a, b) = (args[0].as_f32()?, args[1].as_f32()?);
            Some(Const::int(
                Type::I1,
                d.cond().eval_float(a as f64, b as f64) as i64,
            ))
        }
        Select => {
            let c = args[0].as_int()?;
            Some(if c != 0 { args[1] } else { args[2] })
        }
        Zext => {
            let a = args[0].as_int()?;
            let src_bits = match args[0] {
                Const::Int(Type::I1, _) => 1,
                Const::Int(Type::I32, _) => 32,
                _ => 64,
            };
            let v = if src_bits == 64 {
                a
            } else {
                a & ((1i64 << src_bits) - 1)
            };
            Some(Const::int(ty, v))
        }
        Sext => Some(Const::int(ty, args[0].as_int()?)),
        Trunc => Some(Const::int(ty, args[0].as_int()?)),
        Sitofp if ty == Type::F32 => Some(Const::f32(args[0].as_int()? as f32)),
        Fptosi if ty == Type::I32 => {
            let x = args[0].as_f32()?;
            if x.is_nan() || !(-2147483648.0..2147483648.0).contains(&x) {
                return None;
            }
            Some(Const::int(ty, x.trunc() as i64))
        }
        Bitcast => match (args[0], ty) {
            (Const::Int(Type::I32, a), Type::F32) => Some(Const::F32(a as u32)),
            (Const::F32(bits), Type::I32) => Some(Const::int(ty, bits as i32 as i64)),
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{mk, CmpCond};

    fn i(v: i64) -> Const {
        Const::int(Type::I32, v)
    }

    #[test]
    fn int_arithmetic_wraps_like_the_machine() {
        let add = mk::binary(Opcode::Add, Type::I32);
        assert_eq!(
            fold(&add, &[i(i32::MAX as i64), i(1)]),
            Some(i(i32::MIN as i64))
        );
        let div = mk::binary(Opcode::Sdiv, Type::I32);
        assert_eq!(fold(&div, &[i(-7), i(2)]), Some(i(-3)));
        assert_eq!(
            fold(&div, &[i(i32::MIN as i64), i(-1)]),
            Some(i(i32::MIN as i64))
        );
        assert_eq!(fold(&div, &[i(1), i(0)]), None);
        let rem = mk::binary(Opcode::Srem, Type::I32);
        assert_eq!(fold(&rem, &[i(-7), i(2)]), Some(i(-1)));
        let mh = mk::binary(Opcode::Mulhs, Type::I32);
        assert_eq!(fold(&mh, &[i(0x4000_0000), i(8)]), Some(i(2)));
    }

    #[test]
    fn float_folds_in_single_precision() {
        let d = mk::binary(Opcode::Fdiv, Type::F32);
        assert_eq!(
            fold(&d, &[Const::f32(1.0), Const::f32(3.0)]),
            Some(Const::f32(1.0f32 / 3.0))
        );
        let c = mk::fcmp(CmpCond::Ne);
        assert_eq!(
            fold(&c, &[Const::f32(f32::NAN), Const::f32(1.0)]),
            Some(Const::int(Type::I1, 1))
        );
        let cv = mk::unary(Opcode::Fptosi, Type::I32);
        assert_eq!(fold(&cv, &[Const::f32(-2.7)]), Some(i(-2)));
        assert_eq!(fold(&cv, &[Const::f32(3e9)]), None);
    }
}
