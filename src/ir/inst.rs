//! Types, opcodes and the packed instruction row.
//!
//! An instruction is a 16-byte `InstData` row plus an operand range (in `Function`). What the
//! `aux` and `imm` fields mean depends on the opcode:
//!
//! ```text
//!   op      ty      aux                      imm
//!   iconst  I1/32/64                         the value, sign-extended
//!   fconst  F32/F64                          the bits (f32 bits in the low 32)
//!   icmp    I1      CmpCond                  -
//!   fcmp    I1      CmpCond                  -
//!   alloca  Ptr     alignment                size in bytes
//!   gaddr   Ptr                              GlobalId (slotmap ffi bits)
//!   gep     Ptr                              stride in bytes: base + sext(index) * stride
//!   offset  Ptr                              byte offset: base + imm
//!   load    T                                -
//!   call    T/Void                           callee FuncId index
//!   jump                                     target block index
//!   brif            #args to `then`          then block index | else block index << 32
//! ```
//!
//! Operands: binary ops `[a, b]`; `select [c, a, b]`; `store [value, ptr]`; `load [ptr]`;
//! `gep [base, index]`; `call [args..]`; `jump [args..]`; `brif [cond, then_args.., else_args..]`;
//! `ret [value?]`.

use std::fmt;

/// A value type. Pointers are 64-bit addresses; memory holds only i32, f32 and bytes.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
#[repr(u8)]
pub enum Type {
    Void,
    I1,
    I32,
    I64,
    F32,
    F64,
    Ptr,
}

impl Type {
    pub fn is_int(self) -> bool {
        matches!(self, Type::I1 | Type::I32 | Type::I64)
    }
    pub fn is_float(self) -> bool {
        matches!(self, Type::F32 | Type::F64)
    }
    /// Size in bytes in memory.
    pub fn bytes(self) -> u64 {
        match self {
            Type::Void => 0,
            Type::I1 => 1,
            Type::I32 | Type::F32 => 4,
            Type::I64 | Type::F64 | Type::Ptr => 8,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Type::Void => "void",
            Type::I1 => "i1",
            Type::I32 => "i32",
            Type::I64 => "i64",
            Type::F32 => "f32",
            Type::F64 => "f64",
            Type::Ptr => "ptr",
        }
    }
    pub fn from_name(s: &str) -> Option<Type> {
        Some(match s {
            "void" => Type::Void,
            "i1" => Type::I1,
            "i32" => Type::I32,
            "i64" => Type::I64,
            "f32" => Type::F32,
            "f64" => Type::F64,
            "ptr" => Type::Ptr,
            _ => return None,
        })
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Comparison condition. Integer compares are signed; float compares are ordered except `Ne`,
/// which is true for NaN operands (C's `!=`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
#[repr(u8)]
pub enum CmpCond {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl CmpCond {
    pub const ALL: [CmpCond; 6] = [
        CmpCond::Eq,
        CmpCond::Ne,
        CmpCond::Lt,
        CmpCond::Le,
        CmpCond::Gt,
        CmpCond::Ge,
    ];

    pub fn name(self) -> &'static str {
        match self {
            CmpCond::Eq => "eq",
            CmpCond::Ne => "ne",
            CmpCond::Lt => "lt",
            CmpCond::Le => "le",
            CmpCond::Gt => "gt",
            CmpCond::Ge => "ge",
        }
    }
    pub fn from_u32(x: u32) -> CmpCond {
        Self::ALL[x as usize]
    }
    /// The condition with operands swapped: `a < b` == `b > a`.
    pub fn swap(self) -> CmpCond {
        match self {
            CmpCond::Lt => CmpCond::Gt,
            CmpCond::Le => CmpCond::Ge,
            CmpCond::Gt => CmpCond::Lt,
            CmpCond::Ge => CmpCond::Le,
            c => c,
        }
    }
    /// The negated condition (for integers; for floats only `Eq`/`Ne` negate exactly).
    pub fn invert(self) -> CmpCond {
        match self {
            CmpCond::Eq => CmpCond::Ne,
            CmpCond::Ne => CmpCond::Eq,
            CmpCond::Lt => CmpCond::Ge,
            CmpCond::Le => CmpCond::Gt,
            CmpCond::Gt => CmpCond::Le,
            CmpCond::Ge => CmpCond::Lt,
        }
    }
    /// Evaluates the comparison on any ordered values (floats: ordered, except `Ne`).
    pub fn eval<T: PartialOrd>(self, a: T, b: T) -> bool {
        match self {
            CmpCond::Eq => a == b,
            CmpCond::Ne => a != b,
            CmpCond::Lt => a < b,
            CmpCond::Le => a <= b,
            CmpCond::Gt => a > b,
            CmpCond::Ge => a >= b,
        }
    }
    pub fn eval_int(self, a: i64, b: i64) -> bool {
        self.eval(a, b)
    }
    pub fn eval_float(self, a: f64, b: f64) -> bool {
        self.eval(a, b)
    }
}

macro_rules! opcodes {
    ($($(#[$doc:meta])* $name:ident = $text:expr,)*) => {
        /// What an instruction does. See the module header for operand layouts.
        #[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
        #[repr(u8)]
        pub enum Opcode { $($(#[$doc])* $name,)* }

        impl Opcode {
            pub const ALL: &'static [Opcode] = &[$(Opcode::$name,)*];
            pub fn name(self) -> &'static str {
                match self { $(Opcode::$name => $text,)* }
            }
        }
    };
}

opcodes! {
    Iconst = "iconst",
    Fconst = "fconst",
    // Integer arithmetic on i32 (wrapping) or i64.
    Add = "add",
    Sub = "sub",
    Mul = "mul",
    /// Signed division, truncating toward zero.
    Sdiv = "sdiv",
    /// Signed remainder, sign of the dividend.
    Srem = "srem",
    Shl = "shl",
    /// Arithmetic shift right.
    Ashr = "ashr",
    /// Logical shift right.
    Lshr = "lshr",
    And = "and",
    Or = "or",
    Xor = "xor",
    /// High half of the signed product (of two i32: bits 32..63 of the 64-bit product).
    Mulhs = "mulhs",
    /// High half of the unsigned product (of two i64: bits 64..127 of the 128-bit product).
    Mulhu = "mulhu",
    Fadd = "fadd",
    Fsub = "fsub",
    Fmul = "fmul",
    Fdiv = "fdiv",
    Fneg = "fneg",
    Icmp = "icmp",
    Fcmp = "fcmp",
    /// `[cond, a, b]`: a if cond else b.
    Select = "select",
    /// i1 -> i32/i64, or i32 -> i64, zero-extending.
    Zext = "zext",
    /// i32 -> i64, sign-extending.
    Sext = "sext",
    /// i64 -> i32.
    Trunc = "trunc",
    /// i32 -> f32.
    Sitofp = "sitofp",
    /// f32 -> i32, truncating toward zero.
    Fptosi = "fptosi",
    /// f32 -> f64 (for variadic arguments).
    Fpext = "fpext",
    /// f32 <-> i32 with the same bits.
    Bitcast = "bitcast",
    Alloca = "alloca",
    Gaddr = "gaddr",
    Gep = "gep",
    Offset = "offset",
    Load = "load",
    Store = "store",
    Call = "call",
    Jump = "jump",
    Brif = "brif",
    Ret = "ret",
    Unreachable = "unreachable",
}

impl Opcode {
    pub fn from_name(s: &str) -> Option<Opcode> {
        Opcode::ALL.iter().copied().find(|o| o.name() == s)
    }

    pub fn is_terminator(self) -> bool {
        matches!(
            self,
            Opcode::Jump | Opcode::Brif | Opcode::Ret | Opcode::Unreachable
        )
    }

    pub fn is_branch(self) -> bool {
        matches!(self, Opcode::Jump | Opcode::Brif)
    }

    /// Two-operand integer arithmetic.
    pub fn is_int_binary(self) -> bool {
        use Opcode::*;
        matches!(
            self,
            Add | Sub | Mul | Sdiv | Srem | Shl | Ashr | Lshr | And | Or | Xor | Mulhs | Mulhu
        )
    }

    pub fn is_float_binary(self) -> bool {
        matches!(
            self,
            Opcode::Fadd | Opcode::Fsub | Opcode::Fmul | Opcode::Fdiv
        )
    }

    pub fn is_commutative(self) -> bool {
        use Opcode::*;
        matches!(
            self,
            Add | Mul | And | Or | Xor | Mulhs | Mulhu | Fadd | Fmul
        )
    }

    /// One-operand conversions.
    pub fn is_conversion(self) -> bool {
        use Opcode::*;
        matches!(
            self,
            Zext | Sext | Trunc | Sitofp | Fptosi | Fpext | Bitcast
        )
    }

    /// Has effects beyond its result (or may trap / read memory): never removed or moved freely.
    /// Calls are judged by their callee's summary elsewhere.
    pub fn has_side_effects(self) -> bool {
        matches!(self, Opcode::Store | Opcode::Call) || self.is_terminator()
    }

    /// Reads memory.
    pub fn reads_memory(self) -> bool {
        matches!(self, Opcode::Load | Opcode::Call)
    }

    /// A pure computation of its operands: may be deduplicated, hoisted and deleted when unused.
    /// Division is included: SysY programs never divide by zero, and RISC-V division does not trap.
    pub fn is_pure(self) -> bool {
        use Opcode::*;
        !matches!(self, Alloca | Load | Store | Call) && !self.is_terminator()
    }
}

/// One instruction row: 16 bytes. See the module header for `aux` and `imm`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct InstData {
    pub op: Opcode,
    /// Result type (`Void` when there is no result).
    pub ty: Type,
    pub aux: u32,
    pub imm: i64,
}

impl InstData {
    pub fn new(op: Opcode, ty: Type) -> Self {
        InstData {
            op,
            ty,
            aux: 0,
            imm: 0,
        }
    }
    pub fn with_imm(op: Opcode, ty: Type, imm: i64) -> Self {
        InstData {
            op,
            ty,
            aux: 0,
            imm,
        }
    }
    pub fn cond(&self) -> CmpCond {
        CmpCond::from_u32(self.aux)
    }
    /// The f32 value of an `fconst.f32`.
    pub fn f32(&self) -> f32 {
        f32::from_bits(self.imm as u32)
    }
    pub fn f64(&self) -> f64 {
        f64::from_bits(self.imm as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inst_row_is_16_bytes() {
        assert_eq!(std::mem::size_of::<InstData>(), 16);
    }

    #[test]
    fn opcode_names_round_trip() {
        for &op in Opcode::ALL {
            assert_eq!(Opcode::from_name(op.name()), Some(op));
        }
    }
}
