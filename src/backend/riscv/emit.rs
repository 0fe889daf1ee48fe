//! From allocated machine IR to assembly text.
//!
//! `rewrite` replaces virtual registers by their allocation, inserting spill code (a spilled
//! value is reloaded into a reserved scratch register right before each instruction that reads
//! it, and stored right after the one that writes it: `t0`/`t1` and `ft0`/`ft1`), resolves
//! symbolic stack addresses with the frame layout, and adds labels, prologue and epilogues.
//! The result is physical-register code that `peephole` may still clean up.
//!
//! `print` writes GNU as syntax. Immediates that do not fit 12 bits (big frames, far stack
//! slots) are expanded here with `t2`, which nothing else uses.
//!
//! `data` writes globals: `.bss` when zero, `.data` or `.rodata` (constants) otherwise, with
//! zero runs compressed into `.zero`.

use super::frame::Frame;
use super::minst::*;
use super::regalloc::{Allocation, SpillSlot};
use super::shrinkwrap;
use crate::ir::IdVec;
use crate::ir::{global_symbol, GlobalInit, ModuleCx};
use std::fmt::Write;

/// Rewrites `mf` onto physical registers. Returns the code with `Label` pseudo-instructions.
pub fn rewrite(mf: &MFunc, alloc: &Allocation, frame: &Frame, out: &mut Vec<MInst>) {
    out.clear();
    // Out-of-line blocks closing the frame on conditional branches that leave its region:
    // (label, target block).
    let mut exits: Vec<(i64, MBlock)> = Vec::new();
    // Jumps leaving the region to a small returning block, replaced by a copy of it.
    let mut jumps_out: Vec<usize> = Vec::new();
    let mut block_at: IdVec<MBlock, Option<usize>> = IdVec::filled(mf.blocks.len(), None);
    for (n, &b) in mf.order.iter().enumerate() {
        block_at[b] = Some(out.len());
        out.push(label(b.label()));
        if frame.opens_at(b, n == 0) {
            frame.prologue(out);
        }
        let open = frame.open_in(b);
        let next = mf.order.get(n + 1).copied().filter(|&x| frame.open_in(x));
        let blk = &mf.blocks[b];
        for mi in &mf.insts[blk.start as usize..blk.end as usize] {
            let mut mi = *mi;
            if mi.fref != FrameRef::None {
                mi.imm = frame.offset_in(mi.fref, mi.aux, mi.imm, open);
                mi.fref = FrameRef::None;
            }
            if open
                && (mi.op.is_branch() || mi.op == MOp::J)
                && !frame.open_in(MBlock::target_of(&mi))
            {
                let x = MBlock::target_of(&mi);
                let mut exit_label = || match exits.iter().find(|e| e.1 == x) {
                    Some(e) => e.0,
                    None => {
                        let l = (mf.blocks.len() + exits.len()) as i64;
                        exits.push((l, x));
                        l
                    }
                };
                if mi.op != MOp::J {
                    mi.imm = exit_label();
                } else if shrinkwrap::jump_after_branch_to_next(mf, b, next) {
                    // `bcc next; j x`: the inverted branch leaves through an exit block and the
                    // fall-through stays.
                    let l = exit_label();
                    let br = out.last_mut().expect("the branch before the jump");
                    br.op = br.op.inverted();
                    br.imm = l;
                    continue;
                } else {
                    frame.epilogue(out);
                    if shrinkwrap::copyable_exit(mf, x) {
                        jumps_out.push(out.len());
                    }
                }
            }
            // Uses: reload spilled values into scratch registers.
            let mut int_scratch = [Reg::T0, Reg::T1].into_iter();
            let mut float_scratch = [Reg::FT0, Reg::FT1].into_iter();
            let mut loaded: [(Reg, Reg); 2] = [(Reg::NONE, Reg::NONE); 2];
            for k in 0..2 {
                let r = if k == 0 { mi.rs1 } else { mi.rs2 };
                if !r.is_virt() {
                    continue;
                }
                let p = if alloc.is_spilled(r) {
                    if let Some(&(_, p)) = loaded.iter().find(|(v, _)| *v == r) {
                        p
                    } else if let Some(mut rm) = mf.remat[r.as_vreg()] {
                        // Recompute instead of reloading.
                        let p = int_scratch.next().unwrap();
                        rm.rd = p;
                        if rm.fref != FrameRef::None {
                            rm.imm = frame.offset_in(rm.fref, rm.aux, rm.imm, open);
                            rm.fref = FrameRef::None;
                        }
                        out.push(rm);
                        loaded[k] = (r, p);
                        p
                    } else {
                        let (p, op) = match mf.vclass[r.as_vreg()] {
                            RegClass::Int => (int_scratch.next().unwrap(), MOp::Ld),
                            RegClass::Float => (float_scratch.next().unwrap(), MOp::Fld),
                        };
                        let off = frame.offset(FrameRef::Spill, slot_of(alloc, r).index(), 0);
                        out.push(MInst::load(op, p, Reg::SP, off));
                        loaded[k] = (r, p);
                        p
                    }
                } else {
                    alloc.reg[r.as_vreg()]
                };
                if k == 0 {
                    mi.rs1 = p;
                } else {
                    mi.rs2 = p;
                }
            }
            let mut store_after = None;
            if mi.rd.is_virt() {
                let r = mi.rd;
                if alloc.is_spilled(r) && mf.remat[r.as_vreg()].is_some() {
                    continue; // recomputed at each use
                }
                if alloc.is_spilled(r) {
                    let (p, op) = match mf.vclass[r.as_vreg()] {
                        RegClass::Int => (Reg::T0, MOp::Sd),
                        RegClass::Float => (Reg::FT0, MOp::Fsd),
                    };
                    let off = frame.offset(FrameRef::Spill, slot_of(alloc, r).index(), 0);
                    store_after = Some(MInst::store(op, p, Reg::SP, off));
                    mi.rd = p;
                } else {
                    mi.rd = alloc.reg[r.as_vreg()];
                }
            }
            if open && matches!(mi.op, MOp::Ret | MOp::TailCall) {
                frame.epilogue(out);
            }
            out.push(mi);
            if let Some(st) = store_after {
                out.push(st);
            }
        }
        // Falling through out of the region.
        let falls = !out.last().is_some_and(|mi| mi.op.is_terminator());
        if open && falls && mf.order.get(n + 1).is_some_and(|&x| !frame.open_in(x)) {
            frame.epilogue(out);
        }
    }
    // The rewritten code of block `x` (after its label), when it is laid out.
    let body = |out: &[MInst], x: MBlock| -> Option<std::ops::Range<usize>> {
        block_at[x].map(|at| {
            let end = out[at + 1..]
                .iter()
                .position(|mi| mi.op == MOp::Label)
                .map_or(out.len(), |k| at + 1 + k);
            at + 1..end
        })
    };
    for (l, x) in exits {
        out.push(label(l));
        frame.epilogue(out);
        match body(out, x).filter(|_| shrinkwrap::copyable_exit(mf, x)) {
            Some(r) => out.extend_from_within(r),
            None => out.push(MInst::jump(x.label())),
        }
    }
    if !jumps_out.is_empty() {
        let mut code = Vec::with_capacity(out.len() + 4 * jumps_out.len());
        let mut next = jumps_out.iter().peekable();
        for (k, mi) in out.iter().enumerate() {
            if next.peek() == Some(&&k) {
                next.next();
                if let Some(r) = body(out, MBlock::target_of(mi)) {
                    code.extend_from_slice(&out[r]);
                    continue;
                }
            }
            code.push(*mi);
        }
        *out = code;
    }
}

fn label(b: i64) -> MInst {
    MInst::new(MOp::Label, Reg::NONE, Reg::NONE, Reg::NONE, b)
}

fn mnemonic(op: MOp) -> &'static str {
    use MOp::*;
    match op {
        Add => "add",
        Addw => "addw",
        Sub => "sub",
        Subw => "subw",
        Mul => "mul",
        Mulw => "mulw",
        Mulh => "mulh",
        Mulhu => "mulhu",
        Sh1add => "sh1add",
        Sh2add => "sh2add",
        Sh3add => "sh3add",
        AddUw => "add.uw",
        Andn => "andn",
        Orn => "orn",
        Xnor => "xnor",
        Min => "min",
        Max => "max",
        Div => "div",
        Divw => "divw",
        Rem => "rem",
        Remw => "remw",
        Sll => "sll",
        Sllw => "sllw",
        Sra => "sra",
        Sraw => "sraw",
        Srl => "srl",
        Srlw => "srlw",
        And => "and",
        Or => "or",
        Xor => "xor",
        Slt => "slt",
        Sltu => "sltu",
        Addi => "addi",
        Addiw => "addiw",
        Slli => "slli",
        Slliw => "slliw",
        Srai => "srai",
        Sraiw => "sraiw",
        Srli => "srli",
        Srliw => "srliw",
        Andi => "andi",
        Ori => "ori",
        Xori => "xori",
        Slti => "slti",
        Sltiu => "sltiu",
        Mv => "mv",
        Neg => "neg",
        Seqz => "seqz",
        Snez => "snez",
        Li => "li",
        Lla => "lla",
        Lw => "lw",
        Ld => "ld",
        Flw => "flw",
        Fld => "fld",
        Sw => "sw",
        Sd => "sd",
        Fsw => "fsw",
        Fsd => "fsd",
        FaddS => "fadd.s",
        FsubS => "fsub.s",
        FmulS => "fmul.s",
        FdivS => "fdiv.s",
        FaddD => "fadd.d",
        FsubD => "fsub.d",
        FmulD => "fmul.d",
        FdivD => "fdiv.d",
        FnegS => "fneg.s",
        FnegD => "fneg.d",
        FmvD => "fmv.d",
        FeqS => "feq.s",
        FltS => "flt.s",
        FleS => "fle.s",
        FeqD => "feq.d",
        FltD => "flt.d",
        FleD => "fle.d",
        FcvtSW => "fcvt.s.w",
        FcvtSL => "fcvt.s.l",
        FcvtDW => "fcvt.d.w",
        FcvtDL => "fcvt.d.l",
        FcvtWS => "fcvt.w.s",
        FcvtLS => "fcvt.l.s",
        FcvtWD => "fcvt.w.d",
        FcvtLD => "fcvt.l.d",
        FcvtDS => "fcvt.d.s",
        FcvtSD => "fcvt.s.d",
        FmvWX => "fmv.w.x",
        FmvXW => "fmv.x.w",
        FmvDX => "fmv.d.x",
        FmvXD => "fmv.x.d",
        Beq => "beq",
        Bne => "bne",
        Blt => "blt",
        Bge => "bge",
        J => "j",
        Call => "call",
        Ret => "ret",
        TailCall => "tail",
        Label => "",
    }
}

/// The numbers 0 to 999, each as three digits (with leading zeros).
const DIGITS: &str = {
    const BYTES: [u8; 3000] = {
        let mut t = [0u8; 3000];
        let mut n = 0;
        while n < 1000 {
            t[3 * n] = b'0' + (n / 100) as u8;
            t[3 * n + 1] = b'0' + (n / 10 % 10) as u8;
            t[3 * n + 2] = b'0' + (n % 10) as u8;
            n += 1;
        }
        t
    };
    match std::str::from_utf8(&BYTES) {
        Ok(s) => s,
        Err(_) => panic!("ASCII digits"),
    }
};

/// Appends the decimal digits of `x` (as `{}` formats it).
fn push_int(s: &mut String, x: i64) {
    if (0..1000).contains(&x) {
        let n = x as usize;
        let skip = (n < 100) as usize + (n < 10) as usize;
        s.push_str(&DIGITS[3 * n + skip..3 * n + 3]);
        return;
    }
    let mut buf = [0u8; 20];
    let mut n = x.unsigned_abs();
    let mut k = buf.len();
    loop {
        k -= 1;
        buf[k] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    if x < 0 {
        s.push('-');
    }
    s.push_str(std::str::from_utf8(&buf[k..]).expect("ASCII digits"));
}

/// Appends the pieces, then a newline.
fn line(s: &mut String, parts: &[&str]) {
    for p in parts {
        s.push_str(p);
    }
    s.push('\n');
}

/// Writes one function's allocated code as assembly.
pub fn print(mf: &MFunc, code: &[MInst], s: &mut String) {
    s.reserve(24 * code.len() + 128);
    let sym = mf.sym.as_str();
    line(
        s,
        &[
            "\t.text\n\t.align 2\n\t.globl ",
            sym,
            "\n\t.type ",
            sym,
            ", @function\n",
            sym,
            ":",
        ],
    );
    let label_prefix = format!(".L{}_", mf.label);
    let label = |s: &mut String, b: i64| {
        s.push_str(&label_prefix);
        push_int(s, b);
    };
    // `t2 = base + k` left by the last large offset, while neither register has been written
    // since (and no label was passed): a large offset near `k` from the same base reads it with
    // a small displacement instead of rebuilding the address.
    let mut t2_base: Option<(Reg, i64)> = None;
    for mi in code {
        if matches!(mi.op, MOp::Label | MOp::Call | MOp::TailCall)
            || t2_base.is_some_and(|(b, _)| mi.rd == b)
        {
            t2_base = None;
        }
        let m = mnemonic(mi.op);
        let (rd, r1, r2) = (mi.rd.name(), mi.rs1.name(), mi.rs2.name());
        use MOp::*;
        match mi.op {
            Label => {
                label(s, mi.imm);
                s.push_str(":\n");
            }
            Add | Addw | Sub | Subw | Mul | Mulw | Mulh | Mulhu | Div | Divw | Rem | Remw | Sll
            | Sllw | Sra | Sraw | Srl | Srlw | And | Or | Xor | Slt | Sltu | FaddS | FsubS
            | FmulS | FdivS | FaddD | FsubD | FmulD | FdivD | FeqS | FltS | FleS | FeqD | FltD
            | FleD | Sh1add | Sh2add | Sh3add | AddUw | Andn | Orn | Xnor | Min | Max => {
                line(s, &["\t", m, "\t", rd, ", ", r1, ", ", r2]);
            }
            Addi | Addiw | Andi | Ori | Xori | Slti | Sltiu if !fits12(mi.imm) => {
                // Only frame addresses and stack adjustments get here.
                debug_assert!(matches!(mi.op, Addi));
                let near = t2_base.filter(|&(b, k)| b == mi.rs1 && fits12(mi.imm - k));
                if let (Some((_, k)), false) = (near, mi.rd == Reg::SP) {
                    line_start(s, &["\taddi\t", rd, ", t2, "]);
                    push_int(s, mi.imm - k);
                    s.push('\n');
                    continue;
                }
                let t = if mi.rd == mi.rs1 || mi.rd == Reg::SP {
                    t2_base = None;
                    "t2"
                } else {
                    rd
                };
                s.push_str("\tli\t");
                s.push_str(t);
                s.push_str(", ");
                push_int(s, mi.imm);
                line(s, &["\n\tadd\t", rd, ", ", r1, ", ", t]);
            }
            Addi | Addiw | Slli | Slliw | Srai | Sraiw | Srli | Srliw | Andi | Ori | Xori
            | Slti | Sltiu => {
                line_start(s, &["\t", m, "\t", rd, ", ", r1, ", "]);
                push_int(s, mi.imm);
                s.push('\n');
            }
            Mv | Neg | Seqz | Snez | FnegS | FnegD | FmvD | FcvtSW | FcvtSL | FcvtDW | FcvtDL
            | FcvtDS | FcvtSD | FmvWX | FmvXW | FmvDX | FmvXD => {
                line(s, &["\t", m, "\t", rd, ", ", r1]);
            }
            FcvtWS | FcvtLS | FcvtWD | FcvtLD => {
                line(s, &["\t", m, "\t", rd, ", ", r1, ", rtz"]);
            }
            Li => {
                line_start(s, &["\tli\t", rd, ", "]);
                push_int(s, mi.imm);
                s.push('\n');
            }
            Lla => {
                line(s, &["\tlla\t", rd, ", ", &mf.syms[mi.imm as usize]]);
            }
            Lw | Ld | Flw | Fld | Sw | Sd | Fsw | Fsd => {
                let val = if mi.op.is_load() { rd } else { r2 };
                if fits12(mi.imm) {
                    line_start(s, &["\t", m, "\t", val, ", "]);
                    push_int(s, mi.imm);
                    line(s, &["(", r1, ")"]);
                } else if let Some(k) = t2_base
                    .filter(|&(b, k)| b == mi.rs1 && fits12(mi.imm - k))
                    .map(|(_, k)| k)
                {
                    line_start(s, &["\t", m, "\t", val, ", "]);
                    push_int(s, mi.imm - k);
                    s.push_str("(t2)\n");
                } else {
                    s.push_str("\tli\tt2, ");
                    push_int(s, mi.imm);
                    line(
                        s,
                        &["\n\tadd\tt2, ", r1, ", t2\n\t", m, "\t", val, ", 0(t2)"],
                    );
                    t2_base = Some((mi.rs1, mi.imm));
                }
                if mi.op.is_load() && t2_base.is_some_and(|(b, _)| b == mi.rd) {
                    t2_base = None;
                }
            }
            Beq | Bne | Blt | Bge => {
                if mi.rs2 == Reg::ZERO && matches!(mi.op, Beq | Bne) {
                    line_start(s, &["\t", m, "z\t", r1, ", "]);
                } else {
                    line_start(s, &["\t", m, "\t", r1, ", ", r2, ", "]);
                }
                label(s, mi.imm);
                s.push('\n');
            }
            J => {
                s.push_str("\tj\t");
                label(s, mi.imm);
                s.push('\n');
            }
            Call | TailCall => {
                line(s, &["\t", m, "\t", &mf.calls[mi.imm as usize].sym]);
            }
            Ret => {
                s.push_str("\tret\n");
            }
        }
    }
    line(s, &["\t.size ", sym, ", .-", sym, "\n"]);
}

/// Appends the pieces (the start of a line).
fn line_start(s: &mut String, parts: &[&str]) {
    for p in parts {
        s.push_str(p);
    }
}

/// Writes the module's globals.
pub fn data(cx: &ModuleCx, s: &mut String) {
    for (_, g) in cx.globals_sorted() {
        let sym = global_symbol(g);
        let section = match (&g.init, g.is_const) {
            (GlobalInit::Zero, false) => ".bss",
            (_, true) => ".section .rodata",
            _ => ".data",
        };
        let _ = writeln!(s, "\t{section}\n\t.align 3\n\t.type {sym}, @object\n{sym}:");
        let mut written = 0u64;
        match &g.init {
            GlobalInit::Zero => {}
            GlobalInit::Words(w) => {
                let mut k = 0;
                while k < w.len() {
                    if w[k] == 0 {
                        let run = w[k..].iter().take_while(|&&x| x == 0).count();
                        let _ = writeln!(s, "\t.zero {}", 4 * run);
                        k += run;
                    } else {
                        let run = w[k..].iter().take_while(|&&x| x != 0).count().min(16);
                        let items: Vec<String> =
                            w[k..k + run].iter().map(|x| format!("{:#x}", x)).collect();
                        let _ = writeln!(s, "\t.word {}", items.join(", "));
                        k += run;
                    }
                }
                written = 4 * w.len() as u64;
            }
            GlobalInit::Bytes(b) => {
                for chunk in b.chunks(32) {
                    let items: Vec<String> = chunk.iter().map(|x| x.to_string()).collect();
                    let _ = writeln!(s, "\t.byte {}", items.join(", "));
                }
                written = b.len() as u64;
            }
        }
        let size = g.size.max(1);
        if size > written {
            let _ = writeln!(s, "\t.zero {}", size - written);
        }
        let _ = writeln!(s, "\t.size {sym}, {size}\n");
    }
}

/// The stack slot of `r`, spilled and reloaded (not recomputed).
fn slot_of(alloc: &Allocation, r: Reg) -> SpillSlot {
    alloc
        .slot(r)
        .unwrap_or_else(|| panic!("{r:?} is reloaded but has no stack slot"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_print_as_display_does() {
        for x in [
            0, 7, 9, 10, 42, 99, 100, 512, 999, 1000, 2047, -1, -10, -2048,
        ]
        .into_iter()
        .chain([i64::MIN, i64::MAX])
        {
            let mut s = String::from("x");
            push_int(&mut s, x);
            assert_eq!(s, format!("x{x}"));
        }
    }

    /// Large offsets from one base share the address `li t2, k; add t2, base, t2` until a
    /// label, a call or a write of the base; other bases and far offsets build their own.
    #[test]
    fn large_offsets_share_the_scratch_address() {
        let mf = MFunc {
            sym: "f".into(),
            label: "f".into(),
            ..MFunc::default()
        };
        let code = [
            MInst::load(MOp::Lw, Reg::A0, Reg::SP, 3000),
            MInst::store(MOp::Sw, Reg::A0, Reg::SP, 3008),
            MInst::i(MOp::Addi, Reg::x(11), Reg::SP, 3100),
            MInst::load(MOp::Lw, Reg::x(12), Reg::SP, 9000),
            MInst::load(MOp::Lw, Reg::x(13), Reg::SP, 9004),
            MInst::new(MOp::Label, Reg::NONE, Reg::NONE, Reg::NONE, 1),
            MInst::load(MOp::Lw, Reg::x(14), Reg::SP, 9008),
            MInst::load(MOp::Ld, Reg::x(15), Reg::x(15), 4000),
            MInst::load(MOp::Ld, Reg::x(16), Reg::x(15), 4008),
        ];
        let mut s = String::new();
        print(&mf, &code, &mut s);
        let body: Vec<&str> = s.lines().skip(5).map(str::trim).collect();
        let want = [
            "li\tt2, 3000",
            "add\tt2, sp, t2",
            "lw\ta0, 0(t2)",
            "sw\ta0, 8(t2)",
            "addi\ta1, t2, 100",
            "li\tt2, 9000",
            "add\tt2, sp, t2",
            "lw\ta2, 0(t2)",
            "lw\ta3, 4(t2)",
            ".Lf_1:",
            "li\tt2, 9008",
            "add\tt2, sp, t2",
            "lw\ta4, 0(t2)",
            "li\tt2, 4000",
            "add\tt2, a5, t2",
            "ld\ta5, 0(t2)",
            "li\tt2, 4008",
            "add\tt2, a5, t2",
            "ld\ta6, 0(t2)",
        ];
        assert_eq!(&body[..want.len()], &want[..], "{s}");
    }
}
