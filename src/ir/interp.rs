//! An IR interpreter, for differential testing: run a module before and after a pass (or against
//! the `.out` of a suite case) and compare.
//!
//! Model:
//! - memory is one byte array; addresses are `u64` offsets into it. `[0, 0x1000)` is a guard
//!   (null and small offsets from it fault), then the globals (8-aligned, initialized from their
//!   `GlobalInit`), then the stack, which grows upward to `STACK_LIMIT` bytes;
//! - each call gets a frame holding all the function's allocas at fixed offsets (as a backend
//!   lays them out), so an alloca inside a loop yields the same address every time;
//! - registers are a `u64` per value, in one array shared by all frames (a frame is a window);
//!   i1 is 0/1, i32 and f32 are zero-extended 32-bit patterns, ptr is an address;
//! - i32 arithmetic wraps; division by zero is an error; `INT_MIN / -1` gives `INT_MIN` and shift
//!   amounts are masked (RISC-V behaviour); f32 arithmetic is Rust's, i.e. IEEE like the hardware;
//! - calls do not recurse in Rust, so deep SysY recursion cannot overflow the host stack;
//! - the runtime (`getint` ... `putf`, `memset`, timers) is implemented natively: input comes
//!   from a byte slice, output goes to a byte buffer; `putfloat` prints like glibc's `%a`.
//!
//! Every executed instruction is a step; exceeding the step limit is an error, as are
//! out-of-bounds accesses, stack overflow and `unreachable`.

use super::func::brif_targets;
use super::inst::{Opcode, Type};
use super::module::{FuncId, GlobalId, GlobalInit, Module};
use super::{Block, Function, Inst, Value};

/// Bytes below this address fault.
const GUARD: u64 = 0x1000;
/// Maximum stack size in bytes.
const STACK_LIMIT: u64 = 512 << 20;
/// Maximum call depth.
const MAX_DEPTH: usize = 1 << 20;

/// Runs `main` of `m` on `input`. Returns the bytes written to stdout and the exit code as the OS
/// reports it (main's result truncated to 0..=255), or an error naming the failing instruction.
pub fn run(m: &Module, input: &[u8], step_limit: u64) -> Result<(Vec<u8>, i32), String> {
    let main = m.cx.func_by_name("main").ok_or("no function `main`")?;
    if !m.cx.decls[main].defined {
        return Err("`main` has no body".into());
    }
    let mut mc = Machine::new(m, input, step_limit);
    let code = mc.exec(main)?;
    Ok((mc.out, code & 0xff))
}

/// Where a frame returns to.
struct Frame {
    func: FuncId,
    /// Register window base of the caller.
    base: usize,
    /// The caller's call instruction.
    call: Inst,
    /// The caller's frame base.
    frame_sp: u64,
    /// Stack pointer to restore.
    sp: u64,
}

/// Per-function facts computed on first call.
struct FuncInfo {
    frame_size: u64,
    /// Frame offset of each alloca, by instruction index.
    alloca_off: Vec<u64>,
}

struct Machine<'a> {
    m: &'a Module,
    mem: Vec<u8>,
    globals: slotmap::SecondaryMap<GlobalId, u64>,
    sp: u64,
    stack_end: u64,
    regs: Vec<u64>,
    frames: Vec<Frame>,
    infos: Vec<Option<FuncInfo>>,
    input: &'a [u8],
    pos: usize,
    out: Vec<u8>,
    steps: u64,
    limit: u64,
    scratch: Vec<u64>,
}

fn align_up(x: u64, a: u64) -> u64 {
    let a = a.max(1);
    x.div_ceil(a) * a
}

#[inline]
fn w32(x: i32) -> u64 {
    x as u32 as u64
}

#[inline]
fn f32v(x: u64) -> f32 {
    f32::from_bits(x as u32)
}

#[inline]
fn i32v(x: u64) -> i32 {
    x as u32 as i32
}

impl<'a> Machine<'a> {
    fn new(m: &'a Module, input: &'a [u8], limit: u64) -> Self {
        let mut mem = vec![0u8; GUARD as usize];
        let mut globals = slotmap::SecondaryMap::new();
        for (id, g) in m.cx.globals_sorted() {
            let at = align_up(mem.len() as u64, 8);
            mem.resize((at + g.size) as usize, 0);
            let dst = &mut mem[at as usize..(at + g.size) as usize];
            match &g.init {
                GlobalInit::Zero => {}
                GlobalInit::Words(w) => {
                    for (k, x) in w.iter().enumerate().take(dst.len() / 4) {
                        dst[k * 4..k * 4 + 4].copy_from_slice(&x.to_le_bytes());
                    }
                }
                GlobalInit::Bytes(b) => {
                    let n = b.len().min(dst.len());
                    dst[..n].copy_from_slice(&b[..n]);
                }
            }
            globals.insert(id, at);
        }
        let sp = align_up(mem.len() as u64 + 64, 16);
        Machine {
            m,
            mem,
            globals,
            sp,
            stack_end: sp + STACK_LIMIT,
            regs: Vec::new(),
            frames: Vec::new(),
            infos: (0..m.cx.decls.len()).map(|_| None).collect(),
            input,
            pos: 0,
            out: Vec::new(),
            steps: 0,
            limit,
            scratch: Vec::new(),
        }
    }

    // ---- memory --------------------------------------------------------------------------

    fn bytes(&self, addr: u64, n: u64) -> Result<&[u8], String> {
        if addr < GUARD
            || addr
                .checked_add(n)
                .is_none_or(|e| e > self.mem.len() as u64)
        {
            return Err(format!("out-of-bounds read of {n} bytes at {addr:#x}"));
        }
        Ok(&self.mem[addr as usize..(addr + n) as usize])
    }

    fn bytes_mut(&mut self, addr: u64, n: u64) -> Result<&mut [u8], String> {
        if addr < GUARD
            || addr
                .checked_add(n)
                .is_none_or(|e| e > self.mem.len() as u64)
        {
            return Err(format!("out-of-bounds write of {n} bytes at {addr:#x}"));
        }
        Ok(&mut self.mem[addr as usize..(addr + n) as usize])
    }

    fn load(&self, ty: Type, addr: u64) -> Result<u64, String> {
        Ok(match ty.bytes() {
            4 => u32::from_le_bytes(self.bytes(addr, 4)?.try_into().unwrap()) as u64,
            8 => u64::from_le_bytes(self.bytes(addr, 8)?.try_into().unwrap()),
            1 => self.bytes(addr, 1)?[0] as u64,
            _ => return Err(format!("load of {ty}")),
        })
    }

    fn store(&mut self, ty: Type, addr: u64, v: u64) -> Result<(), String> {
        match ty.bytes() {
            4 => self
                .bytes_mut(addr, 4)?
                .copy_from_slice(&(v as u32).to_le_bytes()),
            8 => self.bytes_mut(addr, 8)?.copy_from_slice(&v.to_le_bytes()),
            1 => self.bytes_mut(addr, 1)?[0] = v as u8,
            _ => return Err(format!("store of {ty}")),
        }
        Ok(())
    }

    fn info(&mut self, id: FuncId) -> &FuncInfo {
        if self.infos[id.index()].is_none() {
            let f = &self.m.funcs[id];
            let mut alloca_off = vec![0u64; f.num_insts()];
            let mut size = 0u64;
            for b in f.layout().blocks() {
                for i in f.layout().block_insts(b) {
                    let d = f.data(i);
                    if d.op == Opcode::Alloca {
                        size = align_up(size, d.aux.max(1) as u64);
                        alloca_off[i.index()] = size;
                        size += d.imm as u64;
                    }
                }
            }
            self.infos[id.index()] = Some(FuncInfo {
                frame_size: align_up(size, 16),
                alloca_off,
            });
        }
        self.infos[id.index()].as_ref().unwrap()
    }

    /// Opens a frame for `callee` with `scratch` as its arguments; returns (new base, first inst).
    fn enter(&mut self, callee: FuncId) -> Result<(usize, Inst), String> {
        let f = &self.m.funcs[callee];
        let frame_size = self.info(callee).frame_size;
        self.sp = align_up(self.sp, 16) + frame_size;
        if self.sp > self.stack_end {
            return Err("stack overflow".into());
        }
        if self.sp as usize > self.mem.len() {
            let want = (self.sp as usize)
                .max(self.mem.len() + (self.mem.len() >> 2))
                .min(self.stack_end as usize);
            self.mem.resize(want, 0);
        }
        let base = self.regs.len();
        self.regs.resize(base + f.num_values(), 0);
        let entry = f.entry();
        for (k, &p) in f.blocks.params[entry].iter().enumerate() {
            self.regs[base + p.index()] = self.scratch[k];
        }
        let first = f.layout().first_inst(entry).ok_or("empty entry block")?;
        Ok((base, first))
    }

    // ---- execution -----------------------------------------------------------------------

    fn exec(&mut self, main: FuncId) -> Result<i32, String> {
        let m = self.m;
        let mut fid = main;
        let mut f: &Function = &m.funcs[main];
        self.scratch.clear();
        let (mut base, mut pc) = self.enter(main)?;
        let mut frame_sp = self.sp - self.info(main).frame_size;
        loop {
            self.steps += 1;
            if self.steps > self.limit {
                return Err(format!(
                    "step limit of {} exceeded in @{}",
                    self.limit, f.name
                ));
            }
            let d = *f.data(pc);
            let args = f.args(pc);
            macro_rules! r {
                ($k:expr) => {
                    self.regs[base + args[$k].index()]
                };
            }
            macro_rules! fail {
                ($e:expr) => {
                    return Err(self.context(f, pc, $e))
                };
            }
            let mut next = f.layout().next_inst(pc);
            use Opcode::*;
            let val: u64 = match d.op {
                Iconst => match d.ty {
                    Type::I32 => w32(d.imm as i32),
                    Type::I1 => (d.imm & 1) as u64,
                    _ => d.imm as u64,
                },
                Fconst => {
                    if d.ty == Type::F32 {
                        d.imm as u32 as u64
                    } else {
                        d.imm as u64
                    }
                }
                Add | Sub | Mul | Sdiv | Srem | Shl | Ashr | Lshr | And | Or | Xor | Mulhs
                | Mulhu => {
                    let (a, b) = (r!(0), r!(1));
                    match int_binary(d.op, d.ty, a, b) {
                        Some(v) => v,
                        None => fail!("division by zero".to_string()),
                    }
                }
                Fadd | Fsub | Fmul | Fdiv => {
                    let (a, b) = (r!(0), r!(1));
                    if d.ty == Type::F32 {
                        let (x, y) = (f32v(a), f32v(b));
                        let z = match d.op {
                            Fadd => x + y,
                            Fsub => x - y,
                            Fmul => x * y,
                            _ => x / y,
                        };
                        z.to_bits() as u64
                    } else {
                        let (x, y) = (f64::from_bits(a), f64::from_bits(b));
                        let z = match d.op {
                            Fadd => x + y,
                            Fsub => x - y,
                            Fmul => x * y,
                            _ => x / y,
                        };
                        z.to_bits()
                    }
                }
                Fneg => {
                    if d.ty == Type::F32 {
                        r!(0) ^ 0x8000_0000
                    } else {
                        r!(0) ^ (1 << 63)
                    }
                }
                Icmp => {
                    let t = f.ty(args[0]);
                    let (a, b) = (r!(0), r!(1));
                    let (x, y) = match t {
                        Type::I32 => (i32v(a) as i64, i32v(b) as i64),
                        _ => (a as i64, b as i64),
                    };
                    d.cond().eval_int(x, y) as u64
                }
                Fcmp => {
                    let t = f.ty(args[0]);
                    let (a, b) = (r!(0), r!(1));
                    let (x, y) = if t == Type::F32 {
                        (f32v(a) as f64, f32v(b) as f64)
                    } else {
                        (f64::from_bits(a), f64::from_bits(b))
                    };
                    d.cond().eval_float(x, y) as u64
                }
                Select => {
                    if r!(0) & 1 != 0 {
                        r!(1)
                    } else {
                        r!(2)
                    }
                }
                Zext => {
                    let a = r!(0);
                    match f.ty(args[0]) {
                        Type::I1 => a & 1,
                        _ => a & 0xffff_ffff,
                    }
                }
                Sext => {
                    let a = r!(0);
                    let wide: i64 = match f.ty(args[0]) {
                        Type::I1 => -((a & 1) as i64),
                        _ => i32v(a) as i64,
                    };
                    if d.ty == Type::I32 {
                        w32(wide as i32)
                    } else {
                        wide as u64
                    }
                }
                Trunc => {
                    let a = r!(0);
                    if d.ty == Type::I1 {
                        a & 1
                    } else {
                        a & 0xffff_ffff
                    }
                }
                Sitofp => {
                    let a = r!(0);
                    let x = if f.ty(args[0]) == Type::I64 {
                        a as i64
                    } else {
                        i32v(a) as i64
                    };
                    if d.ty == Type::F32 {
                        // i32 -> f32 directly (one rounding), as the hardware does.
                        let y = if f.ty(args[0]) == Type::I64 {
                            x as f32
                        } else {
                            i32v(a) as f32
                        };
                        y.to_bits() as u64
                    } else {
                        (x as f64).to_bits()
                    }
                }
                Fptosi => {
                    let a = r!(0);
                    let x = if f.ty(args[0]) == Type::F32 {
                        f32v(a) as f64
                    } else {
                        f64::from_bits(a)
                    };
                    if d.ty == Type::I32 {
                        w32(x as i32)
                    } else {
                        (x as i64) as u64
                    }
                }
                Fpext => (f32v(r!(0)) as f64).to_bits(),
                // i32 and f32 are both held as their 32 bits.
                Bitcast => r!(0) & 0xffff_ffff,
                Alloca => frame_sp + self.info(fid).alloca_off[pc.index()],
                Gaddr => match self.globals.get(f.global(pc)) {
                    Some(&a) => a,
                    None => fail!("gaddr of a deleted global".to_string()),
                },
                Gep => {
                    let idx = if f.ty(args[1]) == Type::I32 {
                        i32v(r!(1)) as i64
                    } else {
                        r!(1) as i64
                    };
                    r!(0).wrapping_add(idx.wrapping_mul(d.imm) as u64)
                }
                Offset => r!(0).wrapping_add(d.imm as u64),
                Load => match self.load(d.ty, r!(0)) {
                    Ok(v) => v,
                    Err(e) => fail!(e),
                },
                Store => {
                    let (v, p) = (r!(0), r!(1));
                    if let Err(e) = self.store(f.ty(args[0]), p, v) {
                        fail!(e)
                    }
                    0
                }
                Call => {
                    let callee = f.callee(pc);
                    self.scratch.clear();
                    for &a in args {
                        self.scratch.push(self.regs[base + a.index()]);
                    }
                    if m.cx.decls[callee].defined {
                        if self.frames.len() >= MAX_DEPTH {
                            fail!("call depth limit exceeded".to_string());
                        }
                        self.frames.push(Frame {
                            func: fid,
                            base,
                            call: pc,
                            frame_sp,
                            sp: self.sp,
                        });
                        let (nb, first) = match self.enter(callee) {
                            Ok(x) => x,
                            Err(e) => fail!(e),
                        };
                        fid = callee;
                        f = &m.funcs[callee];
                        base = nb;
                        frame_sp = self.sp - self.info(callee).frame_size;
                        pc = first;
                        continue;
                    }
                    let tys: Vec<Type> = args.iter().map(|&a| f.ty(a)).collect();
                    match self.external(callee, &tys) {
                        Ok(v) => v,
                        Err(e) => fail!(e),
                    }
                }
                Jump => {
                    let to = Block::new(d.imm as usize);
                    pc = self.branch(f, base, to, args);
                    continue;
                }
                Brif => {
                    let (t, e) = brif_targets(&d);
                    let n = d.aux as usize;
                    pc = if r!(0) & 1 != 0 {
                        self.branch(f, base, t, &args[1..1 + n])
                    } else {
                        self.branch(f, base, e, &args[1 + n..])
                    };
                    continue;
                }
                Ret => {
                    let v = if args.is_empty() { 0 } else { r!(0) };
                    let Some(fr) = self.frames.pop() else {
                        return Ok(i32v(v));
                    };
                    self.regs.truncate(base);
                    self.sp = fr.sp;
                    fid = fr.func;
                    f = &m.funcs[fid];
                    base = fr.base;
                    frame_sp = fr.frame_sp;
                    pc = fr.call;
                    next = f.layout().next_inst(pc);
                    if let Some(r) = f.result(pc) {
                        self.regs[base + r.index()] = v;
                    }
                    match next {
                        Some(n) => pc = n,
                        None => fail!("call at the end of a block".to_string()),
                    }
                    continue;
                }
                Unreachable => fail!("reached `unreachable`".to_string()),
            };
            if let Some(r) = f.result(pc) {
                self.regs[base + r.index()] = val;
            }
            match next {
                Some(n) => pc = n,
                None => fail!("fell off the end of a block".to_string()),
            }
        }
    }

    /// Passes `args` to `to`'s parameters (all read before any is written); returns its first inst.
    fn branch(&mut self, f: &Function, base: usize, to: Block, args: &[Value]) -> Inst {
        let params = &f.blocks.params[to];
        if !params.is_empty() {
            self.scratch.clear();
            for &a in args {
                self.scratch.push(self.regs[base + a.index()]);
            }
            for (k, &p) in params.iter().enumerate() {
                self.regs[base + p.index()] = self.scratch[k];
            }
        }
        f.layout().first_inst(to).expect("branch to an empty block")
    }

    fn context(&self, f: &Function, i: Inst, msg: String) -> String {
        let mut s = String::new();
        super::print::inst(&mut s, f, &self.m.cx, i);
        format!("{msg}\n  in @{} at `{s}`", f.name)
    }

    // ---- runtime -------------------------------------------------------------------------

    /// Calls runtime function `callee` with arguments in `scratch` of types `tys`.
    fn external(&mut self, callee: FuncId, tys: &[Type]) -> Result<u64, String> {
        let name = self.m.cx.decls[callee].name.as_str();
        let a = std::mem::take(&mut self.scratch);
        let r = self.runtime(name, &a, tys);
        self.scratch = a;
        r
    }

    fn runtime(&mut self, name: &str, a: &[u64], tys: &[Type]) -> Result<u64, String> {
        let need = |n: usize| -> Result<(), String> {
            if a.len() < n {
                Err(format!("@{name} called with {} arguments", a.len()))
            } else {
                Ok(())
            }
        };
        Ok(match name {
            "getint" => w32(self.read_int()),
            "getch" => match self.input.get(self.pos) {
                Some(&c) => {
                    self.pos += 1;
                    c as u64
                }
                None => w32(-1),
            },
            "getfloat" => self.read_float().to_bits() as u64,
            "getarray" | "getfarray" => {
                need(1)?;
                let n = self.read_int();
                for k in 0..n.max(0) as u64 {
                    let v = if name == "getarray" {
                        w32(self.read_int())
                    } else {
                        self.read_float().to_bits() as u64
                    };
                    self.store(Type::I32, a[0].wrapping_add(4 * k), v)?;
                }
                w32(n)
            }
            "putint" => {
                need(1)?;
                self.out
                    .extend_from_slice(i32v(a[0]).to_string().as_bytes());
                0
            }
            "putch" => {
                need(1)?;
                self.out.push(a[0] as u8);
                0
            }
            "putfloat" => {
                need(1)?;
                self.out
                    .extend_from_slice(hex_float(f32v(a[0]) as f64).as_bytes());
                0
            }
            "putarray" | "putfarray" => {
                need(2)?;
                let n = i32v(a[0]);
                self.out.extend_from_slice(format!("{n}:").as_bytes());
                for k in 0..n.max(0) as u64 {
                    let x = self.load(Type::I32, a[1].wrapping_add(4 * k))?;
                    let s = if name == "putarray" {
                        i32v(x).to_string()
                    } else {
                        hex_float(f32v(x) as f64)
                    };
                    self.out.push(b' ');
                    self.out.extend_from_slice(s.as_bytes());
                }
                self.out.push(b'\n');
                0
            }
            "putf" => {
                need(1)?;
                self.putf(a, tys)?;
                0
            }
            "memset" => {
                need(3)?;
                let n = if tys[2] == Type::I64 {
                    a[2]
                } else {
                    a[2] & 0xffff_ffff
                };
                let byte = a[1] as u8;
                self.bytes_mut(a[0], n)?.fill(byte);
                a[0]
            }
            "_sysy_starttime" | "_sysy_stoptime" | "starttime" | "stoptime" => 0,
            _ => return Err(format!("call to unknown external function @{name}")),
        })
    }

    fn skip_ws(&mut self) {
        while self.pos < self.input.len() && self.input[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
    }

    /// scanf `%d`: whitespace, optional sign, digits (wrapping). 0 when nothing can be read.
    fn read_int(&mut self) -> i32 {
        self.skip_ws();
        let inp = self.input;
        let mut p = self.pos;
        let neg = match inp.get(p) {
            Some(b'-') => {
                p += 1;
                true
            }
            Some(b'+') => {
                p += 1;
                false
            }
            _ => false,
        };
        let start = p;
        let mut v: i32 = 0;
        while p < inp.len() && inp[p].is_ascii_digit() {
            v = v.wrapping_mul(10).wrapping_add((inp[p] - b'0') as i32);
            p += 1;
        }
        if p == start {
            return 0;
        }
        self.pos = p;
        if neg {
            v.wrapping_neg()
        } else {
            v
        }
    }

    /// scanf `%f`/`%a`: decimal or hexadecimal float, `inf`, `nan`.
    fn read_float(&mut self) -> f32 {
        self.skip_ws();
        let inp = self.input;
        let mut p = self.pos;
        let mut neg = false;
        if let Some(&c @ (b'-' | b'+')) = inp.get(p) {
            neg = c == b'-';
            p += 1;
        }
        let rest = &inp[p..];
        let lower: Vec<u8> = rest
            .iter()
            .take(3)
            .map(|c| c.to_ascii_lowercase())
            .collect();
        let (v, len) = if lower.starts_with(b"inf") {
            (f32::INFINITY, 3)
        } else if lower.starts_with(b"nan") {
            (f32::NAN, 3)
        } else if lower.len() >= 2 && lower[0] == b'0' && lower[1] == b'x' {
            parse_hex_float(&rest[2..])
                .map(|(v, n)| (v, n + 2))
                .unwrap_or((0.0, 1))
        } else {
            parse_dec_float(rest).unwrap_or((0.0, 0))
        };
        if len == 0 {
            return 0.0;
        }
        self.pos = p + len;
        if neg {
            -v
        } else {
            v
        }
    }

    /// printf subset: `%d %i %u %x %X %c %s %f %F %e %E %g %G %a %A %%` with flags, width and
    /// precision. Floating arguments are `f64` (promoted with `fpext`, as C varargs are).
    fn putf(&mut self, a: &[u64], tys: &[Type]) -> Result<(), String> {
        let mut fmt = Vec::new();
        let mut p = a[0];
        loop {
            let c = self.bytes(p, 1)?[0];
            if c == 0 {
                break;
            }
            fmt.push(c);
            p += 1;
        }
        let mut next_arg = 1;
        let mut k = 0;
        while k < fmt.len() {
            let c = fmt[k];
            k += 1;
            if c != b'%' {
                self.out.push(c);
                continue;
            }
            let mut flags = String::new();
            while k < fmt.len() && b"-+ 0#".contains(&fmt[k]) {
                flags.push(fmt[k] as char);
                k += 1;
            }
            let mut width = 0usize;
            while k < fmt.len() && fmt[k].is_ascii_digit() {
                width = width * 10 + (fmt[k] - b'0') as usize;
                k += 1;
            }
            let mut prec: Option<usize> = None;
            if k < fmt.len() && fmt[k] == b'.' {
                k += 1;
                let mut pr = 0;
                while k < fmt.len() && fmt[k].is_ascii_digit() {
                    pr = pr * 10 + (fmt[k] - b'0') as usize;
                    k += 1;
                }
                prec = Some(pr);
            }
            while k < fmt.len() && b"hlLqjzt".contains(&fmt[k]) {
                k += 1;
            }
            let Some(&conv) = fmt.get(k) else { break };
            k += 1;
            if conv == b'%' {
                self.out.push(b'%');
                continue;
            }
            let Some(&arg) = a.get(next_arg) else {
                return Err("putf: too few arguments".into());
            };
            let aty = tys.get(next_arg).copied().unwrap_or(Type::I32);
            next_arg += 1;
            let as_f64 = || {
                if aty == Type::F32 {
                    f32v(arg) as f64
                } else {
                    f64::from_bits(arg)
                }
            };
            let body = match conv {
                b'd' | b'i' => {
                    let v = if aty == Type::I64 {
                        arg as i64
                    } else {
                        i32v(arg) as i64
                    };
                    let mut s = v.unsigned_abs().to_string();
                    if let Some(pr) = prec {
                        while s.len() < pr {
                            s.insert(0, '0');
                        }
                    }
                    sign_prefix(v < 0, &flags) + &s
                }
                b'u' => (arg as u32).to_string(),
                b'x' => format!("{:x}", arg as u32),
                b'X' => format!("{:X}", arg as u32),
                b'c' => (arg as u8 as char).to_string(),
                b's' => {
                    let mut s = String::new();
                    let mut q = arg;
                    loop {
                        let ch = self.bytes(q, 1)?[0];
                        if ch == 0 {
                            break;
                        }
                        s.push(ch as char);
                        q += 1;
                    }
                    s
                }
                b'f' | b'F' => {
                    let x = as_f64();
                    if x.is_finite() {
                        sign_prefix(x.is_sign_negative(), &flags)
                            + &format!("{:.*}", prec.unwrap_or(6), x.abs())
                    } else {
                        nonfinite(x)
                    }
                }
                b'e' | b'E' => {
                    let x = as_f64();
                    let s = if x.is_finite() {
                        let s = format!("{:.*e}", prec.unwrap_or(6), x.abs());
                        let (m, e) = s.split_once('e').unwrap();
                        let e: i32 = e.parse().unwrap();
                        sign_prefix(x.is_sign_negative(), &flags)
                            + &format!("{m}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs())
                    } else {
                        nonfinite(x)
                    };
                    if conv == b'E' {
                        s.to_uppercase()
                    } else {
                        s
                    }
                }
                b'g' | b'G' => {
                    let x = as_f64();
                    let s = format!("{x}");
                    if conv == b'G' {
                        s.to_uppercase()
                    } else {
                        s
                    }
                }
                b'a' | b'A' => {
                    let s = hex_float(as_f64());
                    if conv == b'A' {
                        s.to_uppercase()
                    } else {
                        s
                    }
                }
                _ => return Err(format!("putf: unsupported conversion `%{}`", conv as char)),
            };
            if body.len() < width {
                let pad = width - body.len();
                if flags.contains('-') {
                    self.out.extend_from_slice(body.as_bytes());
                    self.out.extend(std::iter::repeat_n(b' ', pad));
                } else if flags.contains('0') && !matches!(conv, b'c' | b's') {
                    let (sign, digits) = match body.as_bytes().first() {
                        Some(b'-' | b'+' | b' ') => body.split_at(1),
                        _ => ("", body.as_str()),
                    };
                    self.out.extend_from_slice(sign.as_bytes());
                    self.out.extend(std::iter::repeat_n(b'0', pad));
                    self.out.extend_from_slice(digits.as_bytes());
                } else {
                    self.out.extend(std::iter::repeat_n(b' ', pad));
                    self.out.extend_from_slice(body.as_bytes());
                }
            } else {
                self.out.extend_from_slice(body.as_bytes());
            }
        }
        Ok(())
    }
}

fn sign_prefix(neg: bool, flags: &str) -> String {
    if neg {
        "-".into()
    } else if flags.contains('+') {
        "+".into()
    } else if flags.contains(' ') {
        " ".into()
    } else {
        String::new()
    }
}

fn nonfinite(x: f64) -> String {
    match (x.is_nan(), x.is_sign_negative()) {
        (true, false) => "nan".into(),
        (true, true) => "-nan".into(),
        (false, false) => "inf".into(),
        (false, true) => "-inf".into(),
    }
}

/// Integer arithmetic on i1/i32/i64; `None` for division by zero.
fn int_binary(op: Opcode, ty: Type, a: u64, b: u64) -> Option<u64> {
    use Opcode::*;
    if ty == Type::I64 {
        let (x, y) = (a as i64, b as i64);
        return Some(match op {
            Add => x.wrapping_add(y),
            Sub => x.wrapping_sub(y),
            Mul => x.wrapping_mul(y),
            Sdiv => x.checked_div(y).or_else(|| (y != 0).then_some(x))?,
            Srem => x.checked_rem(y).or_else(|| (y != 0).then_some(0))?,
            Shl => x.wrapping_shl(y as u32),
            Ashr => x.wrapping_shr(y as u32),
            Lshr => (x as u64).wrapping_shr(y as u32) as i64,
            And => x & y,
            Or => x | y,
            Xor => x ^ y,
            Mulhs => ((x as i128 * y as i128) >> 64) as i64,
            Mulhu => ((x as u64 as u128 * y as u64 as u128) >> 64) as i64,
            _ => unreachable!(),
        } as u64);
    }
    if ty == Type::I1 {
        return Some(match op {
            And => a & b,
            Or => a | b,
            Xor => a ^ b,
            _ => return int_binary(op, Type::I32, a, b).map(|v| v & 1),
        });
    }
    let (x, y) = (i32v(a), i32v(b));
    Some(w32(match op {
        Add => x.wrapping_add(y),
        Sub => x.wrapping_sub(y),
        Mul => x.wrapping_mul(y),
        Sdiv => {
            if y == 0 {
                return None;
            }
            x.wrapping_div(y)
        }
        Srem => {
            if y == 0 {
                return None;
            }
            x.wrapping_rem(y)
        }
        Shl => x.wrapping_shl(y as u32),
        Ashr => x.wrapping_shr(y as u32),
        Lshr => (x as u32).wrapping_shr(y as u32) as i32,
        And => x & y,
        Or => x | y,
        Xor => x ^ y,
        Mulhs => ((x as i64 * y as i64) >> 32) as i32,
        Mulhu => ((x as u32 as u64 * y as u32 as u64) >> 32) as i32,
        _ => unreachable!(),
    }))
}

/// glibc's `%a` for a double: `0x1.8p+1`, `0x1p+0`, `0x0p+0`, `-0x1.2p-13`, `inf`, `nan`.
pub fn hex_float(x: f64) -> String {
    if !x.is_finite() {
        return nonfinite(x);
    }
    let sign = if x.is_sign_negative() { "-" } else { "" };
    if x == 0.0 {
        return format!("{sign}0x0p+0");
    }
    let bits = x.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i64;
    let mant = bits & ((1u64 << 52) - 1);
    let (lead, e) = if exp == 0 {
        (0, -1022)
    } else {
        (1, exp - 1023)
    };
    let digits = format!("{mant:013x}");
    let digits = digits.trim_end_matches('0');
    let dot = if digits.is_empty() { "" } else { "." };
    format!("{sign}0x{lead}{dot}{digits}p{e:+}")
}

/// A decimal float prefix of `s`: digits, optional fraction, optional exponent. Returns the value
/// (correctly rounded to f32) and the length consumed.
fn parse_dec_float(s: &[u8]) -> Option<(f32, usize)> {
    let mut p = 0;
    let digits = |p: &mut usize| {
        let st = *p;
        while *p < s.len() && s[*p].is_ascii_digit() {
            *p += 1;
        }
        *p - st
    };
    let mut n = digits(&mut p);
    if p < s.len() && s[p] == b'.' {
        p += 1;
        n += digits(&mut p);
    }
    if n == 0 {
        return None;
    }
    if p < s.len() && (s[p] == b'e' || s[p] == b'E') {
        let mut q = p + 1;
        if q < s.len() && (s[q] == b'+' || s[q] == b'-') {
            q += 1;
        }
        if digits(&mut q) > 0 {
            p = q;
        }
    }
    let mut text = String::from_utf8_lossy(&s[..p]).into_owned();
    if text.starts_with('.') {
        text.insert(0, '0');
    }
    let text = text.replace(".e", ".0e").replace(".E", ".0E");
    let text = if text.ends_with('.') {
        text + "0"
    } else {
        text
    };
    text.parse::<f32>().ok().map(|v| (v, p))
}

/// A hex float after the `0x`: hex digits, optional fraction, optional `p` exponent.
fn parse_hex_float(s: &[u8]) -> Option<(f32, usize)> {
    let mut p = 0;
    let mut mant: u64 = 0;
    let mut exp: i64 = 0;
    let mut any = false;
    let mut sticky = false;
    let mut frac = false;
    while p < s.len() {
        let c = s[p];
        if c == b'.' && !frac {
            frac = true;
            p += 1;
            continue;
        }
        let Some(d) = (c as char).to_digit(16) else {
            break;
        };
        any = true;
        if mant >> 56 == 0 {
            mant = mant * 16 + d as u64;
            if frac {
                exp -= 4;
            }
        } else {
            sticky |= d != 0;
            if !frac {
                exp += 4;
            }
        }
        p += 1;
    }
    if !any {
        return None;
    }
    if p < s.len() && (s[p] == b'p' || s[p] == b'P') {
        let mut q = p + 1;
        let mut neg = false;
        if q < s.len() && (s[q] == b'+' || s[q] == b'-') {
            neg = s[q] == b'-';
            q += 1;
        }
        let st = q;
        let mut e: i64 = 0;
        while q < s.len() && s[q].is_ascii_digit() {
            e = (e * 10 + (s[q] - b'0') as i64).min(100_000);
            q += 1;
        }
        if q > st {
            exp += if neg { -e } else { e };
            p = q;
        }
    }
    if sticky {
        mant |= 1;
    }
    // mant < 2^60: to f64 may round once (only with > 53 significant bits), then to f32.
    let v = (mant as f64) * 2f64.powi(exp.clamp(-2000, 2000) as i32);
    Some((v as f32, p))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::parse;

    fn exec(ir: &str, input: &str) -> Result<(String, i32), String> {
        let m = parse::module(ir).unwrap_or_else(|e| panic!("{e}"));
        crate::ir::verify::module(&m).unwrap_or_else(|e| panic!("{e}"));
        run(&m, input.as_bytes(), 10_000_000)
            .map(|(o, c)| (String::from_utf8_lossy(&o).into_owned(), c))
    }

    #[test]
    fn hex_float_matches_glibc() {
        assert_eq!(hex_float(3.0), "0x1.8p+1");
        assert_eq!(hex_float(1.0), "0x1p+0");
        assert_eq!(hex_float(0.0), "0x0p+0");
        assert_eq!(hex_float(-0.0), "-0x0p+0");
        assert_eq!(hex_float(-(0x12 as f64) * 2f64.powi(-17)), "-0x1.2p-13");
        assert_eq!(hex_float((-0.3f32) as f64), "-0x1.333334p-2");
        assert_eq!(hex_float(f64::INFINITY), "inf");
        assert_eq!(hex_float(f64::NAN), "nan");
    }

    #[test]
    fn reads_floats_like_scanf() {
        assert_eq!(parse_hex_float(b"1.8p+1"), Some((3.0, 6)));
        assert_eq!(parse_hex_float(b".Ap-3 "), Some((0.078125, 5)));
        assert_eq!(parse_dec_float(b"1e-3x"), Some((1e-3, 4)));
        assert_eq!(parse_dec_float(b"1."), Some((1.0, 2)));
        assert_eq!(parse_dec_float(b".5"), Some((0.5, 2)));
        assert_eq!(parse_dec_float(b"x"), None);
    }

    // The same program as the LLVM emitter's test; outputs checked against clang there.
    const ARITH: &str = include_str!("../../fixtures/programs/arith.ir");

    #[test]
    fn runs_arithmetic_and_runtime() {
        let (out, code) = exec(ARITH, "3 0x1.8p+1").unwrap();
        assert_eq!(out, "-2\n-1\n-3\n-0x1.333334p-2\n0\n-0x1.8p+1\n10\n4: -1 -1 -1 -1\n3 3.000000\n-25\n536870911\n3\n");
        assert_eq!(code, 3);
    }

    const REC: &str = r#"
declare @getint() -> i32
declare @putint(i32) -> void
func @main() -> i32 {
bb0:
    v0 = call.i32 @getint()
    v1 = call.i32 @depth(v0)
    call.void @putint(v1)
    v2 = iconst.i32 300
    ret v2
}
func @depth(i32) -> i32 {
bb0(v0: i32):
    v1 = alloca 4, align 4
    store v0, v1
    v2 = iconst.i32 0
    v3 = icmp.eq v0, v2
    brif v3, bb1, bb2
bb1:
    ret v2
bb2:
    v4 = iconst.i32 1
    v5 = sub.i32 v0, v4
    v6 = call.i32 @depth(v5)
    v7 = load.i32 v1
    v8 = add.i32 v6, v7
    ret v8
}
"#;

    #[test]
    fn deep_recursion_keeps_frames_apart() {
        assert_eq!(exec(REC, "100000").unwrap(), ("705082704".to_string(), 44));
    }

    #[test]
    fn reports_errors() {
        let e = exec(REC, "-1").unwrap_err();
        assert!(e.contains("limit"), "{e}");
        let div = "func @main() -> i32 {\nbb0:\n    v0 = iconst.i32 0\n    v1 = sdiv.i32 v0, v0\n    ret v1\n}\n";
        let e = exec(div, "").unwrap_err();
        assert!(
            e.starts_with("division by zero\n  in @main at `v1 = sdiv.i32 v0, v0`"),
            "{e}"
        );
        let oob = "func @main() -> i32 {\nbb0:\n    v0 = alloca 4, align 4\n    v1 = offset v0, -100000000\n    v2 = load.i32 v1\n    ret v2\n}\n";
        let e = exec(oob, "").unwrap_err();
        assert!(e.starts_with("out-of-bounds read"), "{e}");
    }

    #[test]
    fn loops_with_block_params_swap() {
        // bb1(a, b) -> bb1(b, a): arguments are read before parameters are written.
        let ir = r#"
func @main() -> i32 {
bb0:
    v0 = iconst.i32 1
    v1 = iconst.i32 2
    v2 = iconst.i32 0
    jump bb1(v0, v1, v2)
bb1(v3: i32, v4: i32, v5: i32):
    v6 = iconst.i32 1
    v7 = add.i32 v5, v6
    v8 = iconst.i32 3
    v9 = icmp.lt v7, v8
    brif v9, bb1(v4, v3, v7), bb2
bb2:
    v10 = iconst.i32 10
    v11 = mul.i32 v3, v10
    v12 = add.i32 v11, v4
    ret v12
}
"#;
        // Swapped 3 times: (1,2) -> (2,1) -> (1,2) -> exits after the third increment with (1,2)?
        // iterations: v5=0 -> v7=1 <3 swap (2,1); v5=1 -> 2 <3 swap (1,2); v5=2 -> 3 exit: (1,2).
        assert_eq!(exec(ir, "").unwrap(), (String::new(), 12));
    }
}
