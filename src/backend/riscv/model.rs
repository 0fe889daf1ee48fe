//! The SiFive U74 machine model: one table of instruction classes (result latency, issue pipes,
//! unpipelined units and their occupancy), the dual-issue pairing rule and the branch costs.
//! The instruction scheduler and the cycle estimate of `sysyc bench` both read it.
//!
//! Sources, named per figure below:
//! - [manual]: SiFive U74 Core Complex Manual (21G1), chapter "U7 RISC-V Core", section
//!   "Execution Pipeline": an 8-stage, dual-issue, in-order pipeline "fully bypassed so that most
//!   instructions have a one-cycle result latency", and its instruction latency table (loads 3,
//!   MUL/MULH/MULHU/MULHSU/MULW 3, DIV/DIVU/REM/REMU 6 to 68 and DIVW/DIVUW/REMW/REMUW 6 to 36
//!   cycles depending on the operands).
//! - [sifive7]: LLVM 14's `llvm/lib/Target/RISCV/RISCVSchedSiFive7.td`, the model behind
//!   `llvm-mca-14 -mcpu=sifive-u74`: two pipes, A (memory, integer ALU) and B (integer ALU,
//!   control flow, multiply/divide, all floating point), an unpipelined integer divider and
//!   FP divider/sqrt unit on pipe B, FP latencies, `LoadLatency = 3`, `MispredictPenalty = 3`.
//! - [anchors]: the method of the reference cycle figures (../shared/anchors/README.md): ALU
//!   results usable the next cycle, loads and multiplies 3 cycles, a 34-cycle unpipelined divider
//!   for the 32-bit forms, FP latencies of [sifive7], 1 cycle per taken branch and 3 per
//!   misprediction. Our figures follow it so that they compare with the anchors.
//!
//! Where we choose against [sifive7] (and so against mca):
//! - Integer ALU and shift results: 1 cycle ([manual]: fully bypassed, one-cycle result latency;
//!   ALU ops execute in AG, or late in M2 when an operand is not ready at AG) where [sifive7]
//!   says 3. mca therefore over-charges dependent ALU chains by 3x.
//! - Integer division: 34 cycles (32-bit) and 66 (64-bit) of latency and divider occupancy
//!   ([manual]'s ranges 6..36 and 6..68, near their tops: SysY divides full-width `int`s, and the
//!   divider's time grows with the quotient's bits; [anchors] uses 34), where [sifive7] says 16
//!   for every form.
//!
//! Pairing: the U74 issues an older and a younger instruction in the same cycle when they fit
//! the two pipes ([sifive7]'s pipe assignment): at most one memory operation (pipe A only), at
//! most one of {branch/jump/call, multiply/divide, floating point} (pipe B only); integer ALU
//! operations go to either pipe. Data dependences between the two are the caller's business.

use super::minst::MOp;

/// Issue pipes, as a bit set.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Pipes(pub u8);

impl Pipes {
    /// Issues no instruction (labels).
    pub const NONE: Pipes = Pipes(0);
    /// Pipe A: loads, stores, integer ALU ([sifive7]).
    pub const A: Pipes = Pipes(1);
    /// Pipe B: integer ALU, control flow, multiply/divide, floating point ([sifive7]).
    pub const B: Pipes = Pipes(2);
    pub const AB: Pipes = Pipes(3);

    pub fn contains(self, other: Pipes) -> bool {
        self.0 & other.0 == other.0
    }
}

/// Unpipelined units: an instruction using one keeps it busy for `occupancy` cycles, and the
/// next instruction needing it waits until it is free.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Unit {
    /// Integer divider (div/rem in all forms) on pipe B ([sifive7] `SiFive7IDiv`).
    IntDiv,
    /// FP divide/square-root unit on pipe B ([sifive7] `SiFive7FDiv`).
    FpDiv,
}

/// Instruction classes of the model.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
#[repr(u8)]
pub enum Class {
    /// add/sub/logic/compare/set, lui/auipc/li/mv, Zba (shNadd, add.uw) and most of Zbb
    /// (andn/orn/xnor, min/max, sext/zext, rev8, orc.b).
    IntAlu,
    /// Shifts and rotates (sll/srl/sra and immediate and word forms, rol/ror).
    Shift,
    /// Count leading/trailing zeros and population count (Zbb clz/ctz/cpop).
    BitCount,
    /// mul, mulw, mulh, mulhu, mulhsu.
    Mul,
    /// divw/divuw/remw/remuw.
    Div32,
    /// div/divu/rem/remu.
    Div64,
    /// Integer loads (lb .. ld).
    LoadInt,
    /// flw, fld.
    LoadFp,
    /// Integer stores.
    StoreInt,
    /// fsw, fsd.
    StoreFp,
    /// Conditional branches.
    Branch,
    /// Direct jumps (j, jal without a link that is used as a call).
    Jump,
    /// Indirect jumps (jr, jalr without link), returns.
    JumpReg,
    /// Calls (call, jal ra, jalr ra); tail calls are jumps.
    Call,
    /// Single-precision add/sub/mul and fused multiply-add.
    FpArithS,
    /// Double-precision add/sub/mul and fused multiply-add.
    FpArithD,
    /// fdiv.s, fsqrt.s.
    FpDivS,
    /// fdiv.d, fsqrt.d.
    FpDivD,
    /// Sign injection (fmv.s/d, fneg, fabs), fmin/fmax.
    FpMove,
    /// feq/flt/fle, fclass.
    FpCompare,
    /// fcvt between integer and FP and between FP widths.
    FpConvert,
    /// fmv.x.w/fmv.w.x/fmv.x.d/fmv.d.x (bit moves between register files).
    FpIntMove,
    /// CSR access (frrm, frflags, csrr ...), fences and system calls.
    System,
    /// Issues nothing (labels).
    Pseudo,
}

impl Class {
    pub const ALL: [Class; 24] = [
        Class::IntAlu,
        Class::Shift,
        Class::BitCount,
        Class::Mul,
        Class::Div32,
        Class::Div64,
        Class::LoadInt,
        Class::LoadFp,
        Class::StoreInt,
        Class::StoreFp,
        Class::Branch,
        Class::Jump,
        Class::JumpReg,
        Class::Call,
        Class::FpArithS,
        Class::FpArithD,
        Class::FpDivS,
        Class::FpDivD,
        Class::FpMove,
        Class::FpCompare,
        Class::FpConvert,
        Class::FpIntMove,
        Class::System,
        Class::Pseudo,
    ];

    pub fn info(self) -> &'static ClassInfo {
        &TABLE[self as usize]
    }
    pub fn latency(self) -> u32 {
        self.info().latency
    }
    pub fn pipes(self) -> Pipes {
        self.info().pipes
    }
    pub fn is_memory(self) -> bool {
        matches!(
            self,
            Class::LoadInt | Class::LoadFp | Class::StoreInt | Class::StoreFp
        )
    }
    pub fn is_control(self) -> bool {
        matches!(
            self,
            Class::Branch | Class::Jump | Class::JumpReg | Class::Call
        )
    }
}

/// One row of the table.
#[derive(Clone, Copy, Debug)]
pub struct ClassInfo {
    pub class: Class,
    /// Cycles from issue until a dependent instruction can issue (1: the next cycle).
    /// Stores and branches produce no register; theirs is 1.
    pub latency: u32,
    /// Pipes the instruction may issue to.
    pub pipes: Pipes,
    /// The unpipelined unit it occupies, if any, and for how many cycles (from issue).
    pub unit: Option<(Unit, u32)>,
}

const fn row(class: Class, latency: u32, pipes: Pipes, unit: Option<(Unit, u32)>) -> ClassInfo {
    ClassInfo {
        class,
        latency,
        pipes,
        unit,
    }
}

/// The table, indexed by `Class as usize` (checked by a test).
pub static TABLE: [ClassInfo; 24] = [
    // [manual] one-cycle result latency, fully bypassed; [sifive7] pipes A or B (latency 3 there:
    // chosen against, see the module comment).
    row(Class::IntAlu, 1, Pipes::AB, None),
    // Shifts are ALU operations ([manual]; [sifive7] WriteShiftImm/Reg on A or B).
    row(Class::Shift, 1, Pipes::AB, None),
    // Not in LLVM 14's SiFive7 (Zbb unsupported there); later versions of the file put
    // clz/ctz/cpop on pipe B with the multiplier-like 3 cycles. We follow that.
    row(Class::BitCount, 3, Pipes::B, None),
    // [manual] MUL/MULH/MULHU/MULHSU/MULW three-cycle latency; pipelined ([sifive7] WriteIMul,
    // pipe B, latency 3).
    row(Class::Mul, 3, Pipes::B, None),
    // [manual] 6..36 cycles; [anchors] 34; unpipelined ([sifive7] SiFive7IDiv, BufferSize 1).
    row(Class::Div32, 34, Pipes::B, Some((Unit::IntDiv, 34))),
    // [manual] 6..68 cycles; 66 near the top as for the 32-bit forms.
    row(Class::Div64, 66, Pipes::B, Some((Unit::IntDiv, 66))),
    // [manual] loads three-cycle latency on a cache hit; [sifive7] LoadLatency 3, pipe A.
    row(Class::LoadInt, 3, Pipes::A, None),
    // [sifive7] WriteFLD32/WriteFLD64 latency 2, pipe A.
    row(Class::LoadFp, 2, Pipes::A, None),
    // [sifive7] stores on pipe A.
    row(Class::StoreInt, 1, Pipes::A, None),
    row(Class::StoreFp, 1, Pipes::A, None),
    // [sifive7] control flow on pipe B. Taken and mispredicted costs: see BRANCH_* below.
    row(Class::Branch, 1, Pipes::B, None),
    row(Class::Jump, 1, Pipes::B, None),
    row(Class::JumpReg, 1, Pipes::B, None),
    // The link register is an ALU-like result ([manual] one-cycle).
    row(Class::Call, 1, Pipes::B, None),
    // [sifive7] WriteFALU32/WriteFMul32/WriteFMA32 latency 5, pipe B (pipelined).
    row(Class::FpArithS, 5, Pipes::B, None),
    // [sifive7] WriteFALU64/WriteFMul64/WriteFMA64 latency 7, pipe B (pipelined).
    row(Class::FpArithD, 7, Pipes::B, None),
    // [sifive7] WriteFDiv32/WriteFSqrt32 latency 27, SiFive7FDiv busy 26.
    row(Class::FpDivS, 27, Pipes::B, Some((Unit::FpDiv, 26))),
    // [sifive7] WriteFDiv64/WriteFSqrt64 latency 56, SiFive7FDiv busy 55.
    row(Class::FpDivD, 56, Pipes::B, Some((Unit::FpDiv, 55))),
    // [sifive7] WriteFSGNJ32/64 and WriteFMinMax32/64 latency 3, pipe B.
    row(Class::FpMove, 3, Pipes::B, None),
    // [sifive7] WriteFCmp32/64, WriteFClass32/64 latency 3, pipe B.
    row(Class::FpCompare, 3, Pipes::B, None),
    // [sifive7] WriteFCvt* latency 3, pipe B.
    row(Class::FpConvert, 3, Pipes::B, None),
    // [sifive7] WriteFMov* latency 3, pipe B.
    row(Class::FpIntMove, 3, Pipes::B, None),
    // [manual] CSR reads three-cycle latency; [sifive7] WriteCSR on pipe B.
    row(Class::System, 3, Pipes::B, None),
    // Labels issue nothing.
    row(Class::Pseudo, 0, Pipes::NONE, None),
];

/// Instructions issued per cycle ([manual] dual issue; [sifive7] IssueWidth = 2).
pub const ISSUE_WIDTH: u32 = 2;
/// Extra cycles of a taken branch or jump: the fetch redirect bubble ([anchors]: 1 per taken
/// branch; [manual] describes the fetch unit redirecting on predicted-taken control flow).
pub const TAKEN_BRANCH_BUBBLE: u32 = 1;
/// Extra cycles of a mispredicted branch ([sifive7] MispredictPenalty = 3; [anchors] 3).
pub const MISPREDICT_PENALTY: u32 = 3;

/// The class of one of our machine opcodes. Exhaustive on purpose: a new opcode must be
/// classified here before it compiles.
pub fn class(op: MOp) -> Class {
    use MOp::*;
    match op {
        Add | Addw | Sub | Subw | And | Or | Xor | Slt | Sltu | Addi | Addiw | Andi | Ori
        | Xori | Slti | Sltiu | Mv | Neg | Seqz | Snez | Li | Lla => Class::IntAlu,
        // Zba and Zbb's logic and min/max: single-cycle ALU operations (see `IntAlu`).
        Sh1add | Sh2add | Sh3add | AddUw | Andn | Orn | Xnor | Min | Max => Class::IntAlu,
        Sll | Sllw | Sra | Sraw | Srl | Srlw | Slli | Slliw | Srai | Sraiw | Srli | Srliw => {
            Class::Shift
        }
        Mul | Mulw | Mulh | Mulhu => Class::Mul,
        Divw | Remw => Class::Div32,
        Div | Rem => Class::Div64,
        Lw | Ld => Class::LoadInt,
        Flw | Fld => Class::LoadFp,
        Sw | Sd => Class::StoreInt,
        Fsw | Fsd => Class::StoreFp,
        FaddS | FsubS | FmulS => Class::FpArithS,
        FaddD | FsubD | FmulD => Class::FpArithD,
        FdivS => Class::FpDivS,
        FdivD => Class::FpDivD,
        FnegS | FnegD | FmvD => Class::FpMove,
        FeqS | FltS | FleS | FeqD | FltD | FleD => Class::FpCompare,
        FcvtSW | FcvtSL | FcvtDW | FcvtDL | FcvtWS | FcvtLS | FcvtWD | FcvtLD | FcvtDS | FcvtSD => {
            Class::FpConvert
        }
        FmvWX | FmvXW | FmvDX | FmvXD => Class::FpIntMove,
        Beq | Bne | Blt | Bge => Class::Branch,
        J | TailCall => Class::Jump,
        Ret => Class::JumpReg,
        Call => Class::Call,
        Label => Class::Pseudo,
    }
}

/// Result latency of an opcode (cycles until a dependent instruction can issue).
pub fn latency(op: MOp) -> u32 {
    class(op).latency()
}

/// The pipes an opcode may issue to.
pub fn pipes(op: MOp) -> Pipes {
    class(op).pipes()
}

/// The unpipelined unit an opcode occupies and for how long.
pub fn unit(op: MOp) -> Option<(Unit, u32)> {
    class(op).info().unit
}

/// Whether two instructions (in program order `a` then `b`, with no data dependence between
/// them) can issue in the same cycle: each gets a pipe of its own.
pub fn can_pair(a: MOp, b: MOp) -> bool {
    classes_can_pair(class(a), class(b))
}

/// [`can_pair`] on classes.
pub fn classes_can_pair(a: Class, b: Class) -> bool {
    pipes_can_pair(a.pipes(), b.pipes())
}

/// [`can_pair`] on the pipes of the two instructions.
pub fn pipes_can_pair(pa: Pipes, pb: Pipes) -> bool {
    if pa == Pipes::NONE || pb == Pipes::NONE {
        return true;
    }
    // Two distinct pipes exist unless both are confined to the same single pipe.
    !(pa == pb && pa != Pipes::AB)
}

/// The class of an assembly mnemonic as GNU as and objdump spell them (compressed `c.` forms and
/// the usual pseudo-instructions included), so code from other compilers can be costed.
/// `None` for mnemonics the model does not know.
pub fn class_of_mnemonic(mnemonic: &str) -> Option<Class> {
    let m = mnemonic.trim();
    let m = m.strip_prefix("c.").unwrap_or(m);
    // Atomic ordering suffixes do not change the class.
    let m = m
        .strip_suffix(".aqrl")
        .or_else(|| m.strip_suffix(".aq"))
        .or_else(|| m.strip_suffix(".rl"))
        .unwrap_or(m);
    let c = match m {
        // Integer ALU, including pseudo-instructions and Zba/Zbb.
        "add" | "addw" | "addi" | "addiw" | "sub" | "subw" | "neg" | "negw" | "mv" | "li"
        | "lui" | "auipc" | "lla" | "la" | "and" | "andi" | "or" | "ori" | "xor" | "xori"
        | "not" | "slt" | "slti" | "sltu" | "sltiu" | "seqz" | "snez" | "sltz" | "sgtz" | "nop"
        | "sext.w" | "sext.b" | "sext.h" | "zext.b" | "zext.h" | "zext.w" | "sh1add" | "sh2add"
        | "sh3add" | "sh1add.uw" | "sh2add.uw" | "sh3add.uw" | "add.uw" | "andn" | "orn"
        | "xnor" | "min" | "minu" | "max" | "maxu" | "rev8" | "orc.b" => Class::IntAlu,
        "sll" | "sllw" | "slli" | "slliw" | "srl" | "srlw" | "srli" | "srliw" | "sra" | "sraw"
        | "srai" | "sraiw" | "slli.uw" | "rol" | "rolw" | "ror" | "rorw" | "rori" | "roriw" => {
            Class::Shift
        }
        "clz" | "clzw" | "ctz" | "ctzw" | "cpop" | "cpopw" => Class::BitCount,
        "mul" | "mulw" | "mulh" | "mulhu" | "mulhsu" => Class::Mul,
        "divw" | "divuw" | "remw" | "remuw" => Class::Div32,
        "div" | "divu" | "rem" | "remu" => Class::Div64,
        "lb" | "lbu" | "lh" | "lhu" | "lw" | "lwu" | "ld" | "lr.w" | "lr.d" => Class::LoadInt,
        "flw" | "fld" | "flh" => Class::LoadFp,
        "sb" | "sh" | "sw" | "sd" | "sc.w" | "sc.d" => Class::StoreInt,
        "fsw" | "fsd" | "fsh" => Class::StoreFp,
        "beq" | "bne" | "blt" | "bge" | "bltu" | "bgeu" | "beqz" | "bnez" | "blez" | "bgez"
        | "bltz" | "bgtz" | "bgt" | "ble" | "bgtu" | "bleu" => Class::Branch,
        "j" | "tail" => Class::Jump,
        "jr" | "ret" => Class::JumpReg,
        "call" | "jal" | "jalr" => Class::Call,
        "fadd.s" | "fsub.s" | "fmul.s" | "fmadd.s" | "fmsub.s" | "fnmadd.s" | "fnmsub.s" => {
            Class::FpArithS
        }
        "fadd.d" | "fsub.d" | "fmul.d" | "fmadd.d" | "fmsub.d" | "fnmadd.d" | "fnmsub.d" => {
            Class::FpArithD
        }
        "fdiv.s" | "fsqrt.s" => Class::FpDivS,
        "fdiv.d" | "fsqrt.d" => Class::FpDivD,
        "fsgnj.s" | "fsgnjn.s" | "fsgnjx.s" | "fsgnj.d" | "fsgnjn.d" | "fsgnjx.d" | "fmv.s"
        | "fmv.d" | "fneg.s" | "fneg.d" | "fabs.s" | "fabs.d" | "fmin.s" | "fmax.s" | "fmin.d"
        | "fmax.d" => Class::FpMove,
        "feq.s" | "flt.s" | "fle.s" | "feq.d" | "flt.d" | "fle.d" | "fgt.s" | "fge.s" | "fgt.d"
        | "fge.d" | "fclass.s" | "fclass.d" => Class::FpCompare,
        "fmv.x.w" | "fmv.w.x" | "fmv.x.d" | "fmv.d.x" | "fmv.x.s" | "fmv.s.x" => Class::FpIntMove,
        _ if m.starts_with("fcvt.") => Class::FpConvert,
        _ if m.starts_with("amo") => Class::LoadInt,
        _ if m.starts_with("csr")
            || m.starts_with("fence")
            || matches!(
                m,
                "frcsr"
                    | "fscsr"
                    | "frrm"
                    | "fsrm"
                    | "fsrmi"
                    | "frflags"
                    | "fsflags"
                    | "fsflagsi"
                    | "ecall"
                    | "ebreak"
                    | "rdcycle"
                    | "rdtime"
                    | "rdinstret"
                    | "unimp"
            ) =>
        {
            Class::System
        }
        _ => return None,
    };
    Some(c)
}

/// One instruction for the issue simulator: its class and registers in our numbering (0..32
/// integer, 32..64 float; `x0` is never a dependence).
#[derive(Clone, Copy, Debug)]
pub struct SimInst {
    pub class: Class,
    /// Written register, if any.
    pub def: Option<u8>,
    /// Read registers (the first `n_uses`).
    pub uses: [u8; 4],
    pub n_uses: u8,
}

impl SimInst {
    pub fn new(class: Class, def: Option<u8>, uses: &[u8]) -> SimInst {
        let mut u = [0u8; 4];
        let n = uses.len().min(4);
        u[..n].copy_from_slice(&uses[..n]);
        SimInst {
            class,
            def: def.filter(|&r| r != 0 && r < 64),
            uses: u,
            n_uses: n as u8,
        }
    }
}

/// The state of an in-order dual-issue simulation: when each register's value is ready, when
/// each unpipelined unit is free, the current issue cycle and what issued in it.
struct IssueState {
    ready: [u64; 64],
    unit_free: [u64; 2],
    cycle: u64,
    /// Classes issued in `cycle` (at most [`ISSUE_WIDTH`]).
    issued: Vec<Class>,
}

impl IssueState {
    fn new() -> IssueState {
        IssueState {
            ready: [0; 64],
            unit_free: [0; 2],
            cycle: 0,
            issued: Vec::with_capacity(2),
        }
    }

    /// Issues `i` after everything before it (in order); returns its issue cycle.
    fn issue(&mut self, i: &SimInst) -> u64 {
        let info = i.class.info();
        if info.pipes == Pipes::NONE {
            return self.cycle;
        }
        // Operands ready (read-after-write interlock).
        let mut t = self.cycle;
        for &r in &i.uses[..i.n_uses as usize] {
            if r != 0 && (r as usize) < 64 {
                t = t.max(self.ready[r as usize]);
            }
        }
        // Write-after-write interlock: the result may not land before an older one to the
        // same register ([manual]: the pipeline interlocks on RAW and WAW hazards).
        if let Some(d) = i.def {
            t = t.max(self.ready[d as usize].saturating_sub(info.latency as u64));
        }
        if let Some((unit, _)) = info.unit {
            t = t.max(self.unit_free[unit as usize]);
        }
        if t > self.cycle {
            self.cycle = t;
            self.issued.clear();
        }
        // A free pipe in this cycle, else the next one.
        let fits = self.issued.len() < ISSUE_WIDTH as usize
            && self.issued.iter().all(|&c| classes_can_pair(c, i.class));
        if !fits {
            self.cycle += 1;
            self.issued.clear();
        }
        let t = self.cycle;
        self.issued.push(i.class);
        if let Some(d) = i.def {
            self.ready[d as usize] = t + info.latency as u64;
        }
        if let Some((unit, busy)) = info.unit {
            self.unit_free[unit as usize] = t + busy as u64;
        }
        t
    }
}

/// Cycles per execution of a straight-line block in steady state: the block issued back to back
/// many times (values and busy units carried from one copy into the next), in order, two per
/// cycle under the pairing rule, each instruction waiting for its operands and units. Branch
/// costs (taken bubbles, mispredictions) are not included; callers add them from a profile.
/// May be fractional (a block of one independent ALU instruction: 1/2 cycle). 0 for a block
/// that issues nothing.
///
/// Loads count their full 3 cycles before any consumer issues, as the anchors' model does. The
/// U74 can execute an ALU operation late (in M2, [manual]) so that an ALU consumer issued right
/// after a load does not stall issue; this estimate does not model that and is conservative
/// for load-then-ALU pairs.
pub fn steady_state_cycles(block: &[SimInst]) -> f64 {
    if block.iter().all(|i| i.class.pipes() == Pipes::NONE) {
        return 0.0;
    }
    // Long enough for the carried dependences and the divider to settle into their period;
    // the first copies (warm-up) are not measured.
    const WARMUP: u64 = 8;
    const MEASURED: u64 = 32;
    let mut st = IssueState::new();
    let mut starts = Vec::with_capacity((WARMUP + MEASURED + 1) as usize);
    for _ in 0..=WARMUP + MEASURED {
        let mut first = None;
        for i in block {
            let t = st.issue(i);
            first.get_or_insert(t);
        }
        starts.push(first.unwrap_or(st.cycle));
    }
    let (a, b) = (
        starts[WARMUP as usize],
        starts[(WARMUP + MEASURED) as usize],
    );
    (b - a) as f64 / MEASURED as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_indexed_by_class() {
        for (i, c) in Class::ALL.iter().enumerate() {
            assert_eq!(*c as usize, i);
            assert_eq!(TABLE[i].class, *c);
        }
    }

    #[test]
    fn the_documented_latencies() {
        assert_eq!(latency(MOp::Add), 1);
        assert_eq!(latency(MOp::Slli), 1);
        assert_eq!(latency(MOp::Lw), 3);
        assert_eq!(latency(MOp::Mul), 3);
        assert_eq!(latency(MOp::Divw), 34);
        assert_eq!(latency(MOp::Rem), 66);
        assert_eq!(latency(MOp::FaddS), 5);
        assert_eq!(latency(MOp::FmulD), 7);
        assert_eq!(unit(MOp::Remw), Some((Unit::IntDiv, 34)));
        assert_eq!(unit(MOp::Add), None);
    }

    #[test]
    fn pairing_follows_the_two_pipes() {
        // Two ALU ops, ALU + memory, ALU + branch, memory + branch, memory + FP pair.
        assert!(can_pair(MOp::Add, MOp::Addi));
        assert!(can_pair(MOp::Lw, MOp::Add));
        assert!(can_pair(MOp::Add, MOp::Bne));
        assert!(can_pair(MOp::Ld, MOp::Bne));
        assert!(can_pair(MOp::Fld, MOp::FmulD));
        // At most one memory op, one pipe-B op (branch, mul/div, FP).
        assert!(!can_pair(MOp::Lw, MOp::Sw));
        assert!(!can_pair(MOp::Mul, MOp::Bne));
        assert!(!can_pair(MOp::FaddS, MOp::Mul));
        assert!(!can_pair(MOp::FaddD, MOp::FmulD));
        assert!(can_pair(MOp::Label, MOp::Lw));
    }

    #[test]
    fn our_mnemonics_and_gccs_agree_with_the_opcode_classes() {
        use MOp::*;
        let ours = [
            (Add, "add"),
            (Sraiw, "sraiw"),
            (Mulh, "mulh"),
            (Mulhu, "mulhu"),
            (Divw, "divw"),
            (Rem, "rem"),
            (Lw, "lw"),
            (Fsd, "fsd"),
            (FdivS, "fdiv.s"),
            (FmvD, "fmv.d"),
            (FcvtWD, "fcvt.w.d"),
            (FmvXW, "fmv.x.w"),
            (Bge, "bge"),
            (J, "j"),
            (Ret, "ret"),
            (Call, "call"),
            (Li, "li"),
        ];
        for (op, m) in ours {
            assert_eq!(class_of_mnemonic(m), Some(class(op)), "{m}");
        }
        for (m, c) in [
            ("sh2add", Class::IntAlu),
            ("add.uw", Class::IntAlu),
            ("andn", Class::IntAlu),
            ("sext.w", Class::IntAlu),
            ("zext.h", Class::IntAlu),
            ("max", Class::IntAlu),
            ("rol", Class::Shift),
            ("cpop", Class::BitCount),
            ("mulhsu", Class::Mul),
            ("mulhu", Class::Mul),
            ("remuw", Class::Div32),
            ("divu", Class::Div64),
            ("c.addi", Class::IntAlu),
            ("c.lw", Class::LoadInt),
            ("bgeu", Class::Branch),
            ("fmadd.d", Class::FpArithD),
            ("fcvt.d.wu", Class::FpConvert),
            ("frrm", Class::System),
            ("jalr", Class::Call),
        ] {
            assert_eq!(class_of_mnemonic(m), Some(c), "{m}");
        }
        assert_eq!(class_of_mnemonic("vadd.vv"), None);
    }

    fn alu(d: u8, a: u8, b: u8) -> SimInst {
        SimInst::new(Class::IntAlu, Some(d), &[a, b])
    }

    #[test]
    fn steady_state_of_small_blocks() {
        // A dependent add chain: 1 cycle each. Independent adds: two per cycle.
        let dep = [
            alu(10, 10, 11),
            alu(10, 10, 11),
            alu(10, 10, 11),
            alu(10, 10, 11),
        ];
        assert_eq!(steady_state_cycles(&dep), 4.0);
        let indep = [
            alu(10, 10, 0),
            alu(11, 11, 0),
            alu(12, 12, 0),
            alu(13, 13, 0),
        ];
        assert_eq!(steady_state_cycles(&indep), 2.0);
        // A load chain (pointer chasing): 3 cycles per load.
        let ld = [SimInst::new(Class::LoadInt, Some(10), &[10])];
        assert_eq!(steady_state_cycles(&ld), 3.0);
        // Independent loads: one memory pipe, one per cycle.
        let lds = [
            SimInst::new(Class::LoadInt, Some(11), &[10]),
            SimInst::new(Class::LoadInt, Some(12), &[10]),
        ];
        assert_eq!(steady_state_cycles(&lds), 2.0);
        // Independent divw: the unpipelined divider, 34 cycles each.
        let div = [
            SimInst::new(Class::Div32, Some(11), &[10, 12]),
            SimInst::new(Class::Div32, Some(13), &[10, 12]),
        ];
        assert_eq!(steady_state_cycles(&div), 68.0);
        // A dependent multiply chain: 3 cycles.
        let mul = [SimInst::new(Class::Mul, Some(10), &[10, 11])];
        assert_eq!(steady_state_cycles(&mul), 3.0);
        // A loop body: ld / addi pair; add waits for the load (3 cycles) and pairs with bne;
        // the next copy's ld finds both pipes of that cycle taken: 4 cycles.
        let body = [
            SimInst::new(Class::LoadInt, Some(12), &[10]),
            alu(10, 10, 0),
            alu(11, 11, 12),
            SimInst::new(Class::Branch, None, &[10, 13]),
        ];
        assert_eq!(steady_state_cycles(&body), 4.0);
        assert_eq!(steady_state_cycles(&[]), 0.0);
    }
}
