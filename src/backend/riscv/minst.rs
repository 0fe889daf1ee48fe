//! Machine IR: flat RISC-V instructions over physical and virtual registers.
//!
//! A function is one `Vec<MInst>` in final order; a block is a range of it (`MBlockData`). Each
//! instruction has at most one register definition (`rd`) and two register uses (`rs1`, `rs2`);
//! calls additionally use their argument registers (side table `calls`) and clobber every
//! caller-saved register. Registers are one number space:
//!
//! ```text
//!   0..32    x0..x31          (integer)
//!   32..64   f0..f31          (float)
//!   64..     virtual registers (class in `MFunc::vclass`)
//! ```
//!
//! Stack addresses are symbolic until frame layout: an instruction with `fref != FrameRef::None`
//! addresses `sp + offset(fref, imm)` (see `FrameRef`). Invariants: i32 values live
//! sign-extended in 64-bit registers; i1 values are 0 or 1.

use crate::ir::IdVec;
use std::fmt;

crate::entity!(
    /// A virtual register: the index of its row in the per-register tables of its function
    /// (`MFunc::vclass`, `MFunc::remat`) and of their allocation; as a [`Reg`], number
    /// `64 + index`.
    VReg,
    "%"
);

crate::entity!(
    /// A machine block: the index of its row in `MFunc::blocks`, and the number of its label
    /// (`.L<func>_<n>`, a branch's `imm`).
    MBlock,
    "mb"
);

impl MBlock {
    /// The block a branch or jump row targets (its `imm`).
    #[inline]
    pub fn target_of(mi: &MInst) -> MBlock {
        MBlock::new(mi.imm as usize)
    }

    /// The number of its label, as a branch's `imm` holds it.
    #[inline]
    pub fn label(self) -> i64 {
        self.index() as i64
    }
}

impl VReg {
    /// The register operand naming this virtual register.
    #[inline]
    pub fn reg(self) -> Reg {
        Reg::vreg(self.index())
    }
}

/// A physical or virtual register.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Reg(pub u32);

/// Register class.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum RegClass {
    Int,
    Float,
}

impl Reg {
    pub const NONE: Reg = Reg(u32::MAX);
    pub const ZERO: Reg = Reg(0);
    pub const RA: Reg = Reg(1);
    pub const SP: Reg = Reg(2);
    /// Scratch registers reserved for spill reloads and large offsets (never allocated).
    pub const T0: Reg = Reg(5);
    pub const T1: Reg = Reg(6);
    pub const T2: Reg = Reg(7);
    pub const FT0: Reg = Reg(32);
    pub const FT1: Reg = Reg(33);
    pub const FT2: Reg = Reg(34);
    pub const A0: Reg = Reg(10);
    pub const FA0: Reg = Reg(42);

    pub const fn x(n: u32) -> Reg {
        Reg(n)
    }
    pub const fn f(n: u32) -> Reg {
        Reg(32 + n)
    }
    pub fn a(n: u32) -> Reg {
        Reg(10 + n)
    }
    pub fn fa(n: u32) -> Reg {
        Reg(42 + n)
    }
    pub fn vreg(i: usize) -> Reg {
        Reg(64 + i as u32)
    }
    #[inline]
    pub fn is_none(self) -> bool {
        self == Reg::NONE
    }
    #[inline]
    pub fn is_some(self) -> bool {
        self != Reg::NONE
    }
    #[inline]
    pub fn is_virt(self) -> bool {
        self.0 >= 64 && self != Reg::NONE
    }
    #[inline]
    pub fn is_phys(self) -> bool {
        self.0 < 64
    }
    /// The virtual register `self` is (it must be one).
    #[inline]
    pub fn as_vreg(self) -> VReg {
        VReg::new(self.vindex())
    }
    #[inline]
    pub fn vindex(self) -> usize {
        debug_assert!(self.is_virt());
        (self.0 - 64) as usize
    }
    /// Class of a physical register.
    pub fn phys_class(self) -> RegClass {
        if self.0 < 32 {
            RegClass::Int
        } else {
            RegClass::Float
        }
    }
    /// The assembly name of a physical register.
    pub fn name(self) -> &'static str {
        const X: [&str; 32] = [
            "zero", "ra", "sp", "gp", "tp", "t0", "t1", "t2", "s0", "s1", "a0", "a1", "a2", "a3",
            "a4", "a5", "a6", "a7", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10", "s11",
            "t3", "t4", "t5", "t6",
        ];
        const F: [&str; 32] = [
            "ft0", "ft1", "ft2", "ft3", "ft4", "ft5", "ft6", "ft7", "fs0", "fs1", "fa0", "fa1",
            "fa2", "fa3", "fa4", "fa5", "fa6", "fa7", "fs2", "fs3", "fs4", "fs5", "fs6", "fs7",
            "fs8", "fs9", "fs10", "fs11", "ft8", "ft9", "ft10", "ft11",
        ];
        match self.0 {
            n @ 0..=31 => X[n as usize],
            n @ 32..=63 => F[(n - 32) as usize],
            _ => "<vreg>",
        }
    }
    /// Callee-saved (s0-s11, fs0-fs11).
    pub fn is_callee_saved(self) -> bool {
        let n = self.0 % 32;
        self.0 < 64 && (n == 8 || n == 9 || (18..=27).contains(&n))
    }
}

impl fmt::Debug for Reg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_none() {
            write!(f, "-")
        } else if self.is_virt() {
            write!(f, "%{}", self.vindex())
        } else {
            f.write_str(self.name())
        }
    }
}

/// Allocatable registers, in preference order: caller-saved first (free at no cost when no
/// call crosses the interval), then callee-saved.
pub const ALLOC_INT: [Reg; 24] = [
    Reg(28),
    Reg(29),
    Reg(30),
    Reg(31), // t3-t6
    Reg(10),
    Reg(11),
    Reg(12),
    Reg(13),
    Reg(14),
    Reg(15),
    Reg(16),
    Reg(17), // a0-a7
    Reg(9),
    Reg(18),
    Reg(19),
    Reg(20),
    Reg(21),
    Reg(22),
    Reg(23),
    Reg(24),
    Reg(25),
    Reg(26),
    Reg(27),
    Reg(8), // s1-s11, s0
];
/// How many registers of `ALLOC_INT` are caller-saved (they come first).
pub const CALLER_SAVED_INT: usize = 12;
pub const ALLOC_FLOAT: [Reg; 29] = [
    Reg(35),
    Reg(36),
    Reg(37),
    Reg(38),
    Reg(39),
    Reg(60),
    Reg(61),
    Reg(62),
    Reg(63), // ft3-ft11
    Reg(42),
    Reg(43),
    Reg(44),
    Reg(45),
    Reg(46),
    Reg(47),
    Reg(48),
    Reg(49), // fa0-fa7
    Reg(40),
    Reg(41),
    Reg(50),
    Reg(51),
    Reg(52),
    Reg(53),
    Reg(54),
    Reg(55),
    Reg(56),
    Reg(57),
    Reg(58),
    Reg(59), // fs0-fs11
];
/// How many registers of `ALLOC_FLOAT` are caller-saved (they come first).
pub const CALLER_SAVED_FLOAT: usize = 17;
/// `call_clobbers` as a mask (bit `r` for register `r`).
pub const CALL_CLOBBERS: u64 = {
    let mut m = 0u64;
    let mut i = 0;
    while i < CALLER_SAVED_INT {
        m |= 1 << ALLOC_INT[i].0;
        i += 1;
    }
    let mut i = 0;
    while i < CALLER_SAVED_FLOAT {
        m |= 1 << ALLOC_FLOAT[i].0;
        i += 1;
    }
    m
};
/// Registers a call clobbers that the allocator manages (scratch t0-t2/ft0-ft2 and ra are
/// never allocated, so they need no tracking).
pub fn call_clobbers() -> impl Iterator<Item = Reg> {
    ALLOC_INT
        .iter()
        .chain(ALLOC_FLOAT.iter())
        .copied()
        .filter(|r| !r.is_callee_saved())
}

/// Whether the allocator tracks this physical register.
pub fn is_allocatable(r: Reg) -> bool {
    r.is_phys() && {
        let n = r.0 % 32;
        if r.0 < 32 {
            n > 7
        } else {
            n > 2
        }
    }
}

/// Machine opcodes. Operand use per format:
/// R: `rd, rs1, rs2`; I: `rd, rs1, imm`; unary: `rd, rs1`; load: `rd, imm(rs1)`;
/// store: `rs2, imm(rs1)`; branch: `rs1, rs2, block imm`; `j` block imm; `li rd, imm`;
/// `lla rd, symbol imm`; `call` index imm into `MFunc::calls`; `ret` uses `rs1` if set.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
#[repr(u8)]
pub enum MOp {
    // R-type integer.
    Add,
    Addw,
    Sub,
    Subw,
    Mul,
    Mulw,
    Mulh,
    Mulhu,
    Div,
    Divw,
    Rem,
    Remw,
    Sll,
    Sllw,
    Sra,
    Sraw,
    Srl,
    Srlw,
    And,
    Or,
    Xor,
    Slt,
    Sltu,
    // Zba (R-type): `shNadd rd, rs1, rs2` = `(rs1 << N) + rs2`; `add.uw rd, rs1, rs2` =
    // `zext32(rs1) + rs2` (with `rs2 = zero`: `zext.w`).
    Sh1add,
    Sh2add,
    Sh3add,
    AddUw,
    // Zbb (R-type): `andn`/`orn`/`xnor` invert rs2; signed `min`/`max`.
    Andn,
    Orn,
    Xnor,
    Min,
    Max,
    // I-type integer.
    Addi,
    Addiw,
    Slli,
    Slliw,
    Srai,
    Sraiw,
    Srli,
    Srliw,
    Andi,
    Ori,
    Xori,
    Slti,
    Sltiu,
    // Unary integer.
    Mv,
    Neg,
    Seqz,
    Snez,
    Li,
    Lla,
    // Memory.
    Lw,
    Ld,
    Flw,
    Fld,
    Sw,
    Sd,
    Fsw,
    Fsd,
    // Float arithmetic.
    FaddS,
    FsubS,
    FmulS,
    FdivS,
    FaddD,
    FsubD,
    FmulD,
    FdivD,
    FnegS,
    FnegD,
    FmvD,
    FeqS,
    FltS,
    FleS,
    FeqD,
    FltD,
    FleD,
    FcvtSW,
    FcvtSL,
    FcvtDW,
    FcvtDL,
    FcvtWS,
    FcvtLS,
    FcvtWD,
    FcvtLD,
    FcvtDS,
    FcvtSD,
    FmvWX,
    FmvXW,
    FmvDX,
    FmvXD,
    // Control.
    Beq,
    Bne,
    Blt,
    Bge,
    J,
    Call,
    Ret,
    /// Call in return position after the epilogue (`tail`): imm indexes `MFunc::calls`.
    TailCall,
    /// Block label (post-allocation code only).
    Label,
}

impl MOp {
    pub fn is_branch(self) -> bool {
        matches!(self, MOp::Beq | MOp::Bne | MOp::Blt | MOp::Bge)
    }
    pub fn is_load(self) -> bool {
        matches!(self, MOp::Lw | MOp::Ld | MOp::Flw | MOp::Fld)
    }
    pub fn is_store(self) -> bool {
        matches!(self, MOp::Sw | MOp::Sd | MOp::Fsw | MOp::Fsd)
    }
    pub fn is_terminator(self) -> bool {
        matches!(self, MOp::J | MOp::Ret | MOp::TailCall)
    }
    /// The branch taken exactly when this one is not.
    pub fn inverted(self) -> MOp {
        match self {
            MOp::Beq => MOp::Bne,
            MOp::Bne => MOp::Beq,
            MOp::Blt => MOp::Bge,
            MOp::Bge => MOp::Blt,
            _ => panic!("{self:?} is no conditional branch"),
        }
    }
    /// A register-to-register copy.
    pub fn is_move(self) -> bool {
        matches!(self, MOp::Mv | MOp::FmvD)
    }
}

/// A symbolic stack address: `sp + base(fref) + imm`, resolved by the frame layout.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
#[repr(u8)]
pub enum FrameRef {
    /// `imm` is a plain immediate.
    None,
    /// Stack object (alloca) number `aux`; `imm` is an extra byte offset.
    Object,
    /// Incoming stack argument area (the caller's outgoing area); `imm` is the byte offset.
    Incoming,
    /// Spill slot number `aux` (8 bytes each); `imm` is an extra byte offset.
    Spill,
    /// Outgoing argument area at `sp + imm`.
    Outgoing,
}

/// What an access through a pointer register (`FrameRef::None`) may touch, for the
/// scheduler's dependence test; kept packed in the access's `aux` (0: anything).
///
/// The classes follow the IR's alias facts (`analysis::alias`): distinct stack objects and
/// distinct globals never overlap; a pointer parameter never points into this function's stack
/// objects, nor into a global whose address is only used directly.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum MemClass {
    Unknown,
    /// A stack object, by the IR instruction that allocates it.
    Stack(u32),
    /// A global: its number, and whether a pointer parameter may point into it.
    Global {
        id: u32,
        reachable: bool,
    },
    /// Memory reached through pointer parameters.
    Param,
}

impl MemClass {
    const ID_BITS: u32 = 29;
    const ID_MASK: u32 = (1 << Self::ID_BITS) - 1;

    /// The class as an `aux` word; ids too large to pack become `Unknown`.
    pub fn pack(self) -> u32 {
        let (kind, id) = match self {
            MemClass::Unknown => return 0,
            MemClass::Stack(i) => (1, i),
            MemClass::Global { id, reachable } => (2 | (reachable as u32) << 2, id),
            MemClass::Param => (3, 0),
        };
        if id > Self::ID_MASK {
            return 0;
        }
        kind << Self::ID_BITS | id
    }

    pub fn unpack(aux: u32) -> MemClass {
        let id = aux & Self::ID_MASK;
        match aux >> Self::ID_BITS {
            1 => MemClass::Stack(id),
            2 => MemClass::Global {
                id,
                reachable: false,
            },
            6 => MemClass::Global {
                id,
                reachable: true,
            },
            3 => MemClass::Param,
            _ => MemClass::Unknown,
        }
    }

    /// Whether accesses of the two classes may overlap.
    pub fn may_overlap(self, other: MemClass) -> bool {
        use MemClass::*;
        match (self, other) {
            (Unknown, _) | (_, Unknown) => true,
            (Stack(a), Stack(b)) => a == b,
            (Stack(_), _) | (_, Stack(_)) => false,
            (Global { id: a, .. }, Global { id: b, .. }) => a == b,
            (Global { reachable, .. }, Param) | (Param, Global { reachable, .. }) => reachable,
            (Param, Param) => true,
        }
    }
}

/// One machine instruction: 32 bytes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct MInst {
    pub op: MOp,
    pub fref: FrameRef,
    pub rd: Reg,
    pub rs1: Reg,
    pub rs2: Reg,
    /// Frame object / spill slot number for `fref`.
    pub aux: u32,
    pub imm: i64,
}

impl MInst {
    pub fn new(op: MOp, rd: Reg, rs1: Reg, rs2: Reg, imm: i64) -> MInst {
        MInst {
            op,
            fref: FrameRef::None,
            rd,
            rs1,
            rs2,
            aux: 0,
            imm,
        }
    }
    pub fn r(op: MOp, rd: Reg, rs1: Reg, rs2: Reg) -> MInst {
        MInst::new(op, rd, rs1, rs2, 0)
    }
    pub fn i(op: MOp, rd: Reg, rs1: Reg, imm: i64) -> MInst {
        MInst::new(op, rd, rs1, Reg::NONE, imm)
    }
    pub fn unary(op: MOp, rd: Reg, rs1: Reg) -> MInst {
        MInst::new(op, rd, rs1, Reg::NONE, 0)
    }
    pub fn li(rd: Reg, imm: i64) -> MInst {
        MInst::new(MOp::Li, rd, Reg::NONE, Reg::NONE, imm)
    }
    pub fn load(op: MOp, rd: Reg, base: Reg, off: i64) -> MInst {
        MInst::new(op, rd, base, Reg::NONE, off)
    }
    pub fn store(op: MOp, val: Reg, base: Reg, off: i64) -> MInst {
        MInst::new(op, Reg::NONE, base, val, off)
    }
    /// `j` to label `l` (a block's `MBlock::label`, or after emission any label).
    pub fn jump(l: i64) -> MInst {
        MInst::new(MOp::J, Reg::NONE, Reg::NONE, Reg::NONE, l)
    }
    /// A conditional branch to label `l` (as for `jump`).
    pub fn branch(op: MOp, a: Reg, b: Reg, l: i64) -> MInst {
        MInst::new(op, Reg::NONE, a, b, l)
    }
    pub fn with_frame(mut self, fref: FrameRef, aux: u32) -> MInst {
        self.fref = fref;
        self.aux = aux;
        self
    }
    /// Registers read (not including a call's argument registers).
    #[inline]
    pub fn uses(&self) -> impl Iterator<Item = Reg> {
        [self.rs1, self.rs2].into_iter().filter(|r| r.is_some())
    }
}

/// A block: a range of `MFunc::insts`, with its successors and loop depth.
#[derive(Clone, Debug, Default)]
pub struct MBlockData {
    pub start: u32,
    pub end: u32,
    pub succs: Vec<MBlock>,
    pub depth: u32,
}

/// What a call instruction needs beyond its row.
#[derive(Clone, Debug)]
pub struct CallInfo {
    pub sym: String,
    /// Physical argument registers the call reads.
    pub args: Vec<Reg>,
}

/// A stack object (alloca).
#[derive(Clone, Copy, Debug)]
pub struct StackObject {
    pub size: u64,
    pub align: u64,
}

/// One function in machine IR.
#[derive(Clone, Debug, Default)]
pub struct MFunc {
    /// Assembly symbol.
    pub sym: String,
    /// Label stem for blocks (`.L{label}_{n}`).
    pub label: String,
    pub insts: Vec<MInst>,
    pub blocks: IdVec<MBlock, MBlockData>,
    /// Blocks in emission order (entry first). `blocks[order[k]]` ranges are increasing.
    pub order: Vec<MBlock>,
    /// Per virtual register: its class.
    pub vclass: IdVec<VReg, RegClass>,
    /// Per virtual register: its single defining instruction when that can be recomputed
    /// anywhere (`li`, `lla`, stack address), so spilling it needs no slot.
    pub remat: IdVec<VReg, Option<MInst>>,
    pub calls: Vec<CallInfo>,
    /// Global symbols referenced by `lla` (imm indexes this).
    pub syms: Vec<String>,
    pub objects: Vec<StackObject>,
    /// Bytes of outgoing stack arguments needed by the largest call.
    pub outgoing: u64,
}

impl MFunc {
    pub fn new_vreg(&mut self, class: RegClass) -> Reg {
        self.remat.push(None);
        self.vclass.push(class).reg()
    }
    pub fn class(&self, r: Reg) -> RegClass {
        if r.is_virt() {
            self.vclass[r.as_vreg()]
        } else {
            r.phys_class()
        }
    }
    pub fn num_vregs(&self) -> usize {
        self.vclass.len()
    }
    /// The registers `inst` defines, including a call's clobbers.
    pub fn for_each_def(&self, inst: &MInst, mut f: impl FnMut(Reg)) {
        if inst.rd.is_some() {
            f(inst.rd);
        }
        if inst.op == MOp::Call {
            call_clobbers().for_each(f);
        }
    }
    /// The registers `inst` reads, including a call's argument registers.
    pub fn for_each_use(&self, inst: &MInst, mut f: impl FnMut(Reg)) {
        inst.uses().for_each(&mut f);
        if matches!(inst.op, MOp::Call | MOp::TailCall) {
            self.calls[inst.imm as usize]
                .args
                .iter()
                .copied()
                .for_each(f);
        }
    }
}

/// Whether `x` fits a 12-bit signed immediate.
#[inline]
pub fn fits12(x: i64) -> bool {
    (-2048..=2047).contains(&x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_small() {
        assert_eq!(std::mem::size_of::<MInst>(), 32);
    }

    #[test]
    fn register_sets() {
        assert_eq!(Reg(8).name(), "s0");
        assert!(
            Reg(8).is_callee_saved() && Reg(27).is_callee_saved() && !Reg(28).is_callee_saved()
        );
        assert!(Reg::f(8).is_callee_saved() && !Reg::fa(0).is_callee_saved());
        assert!(ALLOC_INT
            .iter()
            .all(|&r| is_allocatable(r) && r.phys_class() == RegClass::Int));
        assert!(ALLOC_FLOAT
            .iter()
            .all(|&r| is_allocatable(r) && r.phys_class() == RegClass::Float));
        for (pool, n) in [
            (&ALLOC_INT[..], CALLER_SAVED_INT),
            (&ALLOC_FLOAT[..], CALLER_SAVED_FLOAT),
        ] {
            assert!(pool[..n].iter().all(|r| !r.is_callee_saved()));
            assert!(pool[n..].iter().all(|r| r.is_callee_saved()));
        }
        assert!(!is_allocatable(Reg::T0) && !is_allocatable(Reg::FT2) && !is_allocatable(Reg::SP));
        assert_eq!(call_clobbers().count(), 4 + 8 + 9 + 8);
        assert_eq!(
            call_clobbers().fold(0u64, |m, r| m | 1 << r.0),
            CALL_CLOBBERS
        );
    }
}
