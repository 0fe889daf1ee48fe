//! Estimated SiFive U74 cycles of a run: the per-block profile from our qemu plugin
//! ([`super::profile`]) costed block by block, two ways:
//!
//! - by our in-order model ([`crate::backend::riscv::model`]): each block issued back to back in
//!   steady state ([`model::steady_state_cycles`]);
//! - by `llvm-mca-14 -mtriple=riscv64 -mcpu=sifive-u74` (LLVM's SiFive7 model) when installed:
//!   all blocks of a program in one invocation, one `# LLVM-MCA-BEGIN/END` region per block,
//!   `Total Cycles / Iterations` per region; results cached by block text for the process.
//!
//! Both add the branch terms from the profile: [`model::TAKEN_BRANCH_BUBBLE`] per control
//! transfer (taken branch or jump) and [`model::MISPREDICT_PENALTY`] per estimated
//! misprediction. This is the method of the reference figures in ../shared/anchors.
//!
//! Blocks come from `riscv64-linux-gnu-objdump -d` of the static executable, so any compiler's
//! output (ours, gcc's) is costed the same way. `sysyc cost FILE.s...` costs the
//! `LLVM-MCA-BEGIN/END` regions of assembly files both ways (the microbenchmarks in
//! perf/microbench).

use super::profile::Profile;
use super::toolchain;
use crate::backend::riscv::model::{self, Class, SimInst};
use argh::FromArgs;
use rustc_hash::FxHashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;

/// One assembly instruction: mnemonic and operands (comments and `<symbol>` notes removed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AsmInst {
    pub mnemonic: String,
    pub operands: Vec<String>,
}

/// Register number in the model's numbering (x0..x31 = 0..31, f0..f31 = 32..63).
pub fn reg_number(name: &str) -> Option<u8> {
    const X: [&str; 32] = [
        "zero", "ra", "sp", "gp", "tp", "t0", "t1", "t2", "s0", "s1", "a0", "a1", "a2", "a3", "a4",
        "a5", "a6", "a7", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10", "s11", "t3", "t4",
        "t5", "t6",
    ];
    const F: [&str; 32] = [
        "ft0", "ft1", "ft2", "ft3", "ft4", "ft5", "ft6", "ft7", "fs0", "fs1", "fa0", "fa1", "fa2",
        "fa3", "fa4", "fa5", "fa6", "fa7", "fs2", "fs3", "fs4", "fs5", "fs6", "fs7", "fs8", "fs9",
        "fs10", "fs11", "ft8", "ft9", "ft10", "ft11",
    ];
    if name == "fp" {
        return Some(8);
    }
    if let Some(i) = X.iter().position(|r| *r == name) {
        return Some(i as u8);
    }
    if let Some(i) = F.iter().position(|r| *r == name) {
        return Some(32 + i as u8);
    }
    let numbered = |prefix: &str| -> Option<u8> {
        let n: u8 = name.strip_prefix(prefix)?.parse().ok()?;
        (n < 32).then_some(n)
    };
    numbered("x").or_else(|| numbered("f").map(|n| n + 32))
}

/// Assembly name of a register in the model's numbering.
fn reg_name(r: u8) -> &'static str {
    crate::backend::riscv::minst::Reg(r as u32).name()
}

fn regs_of(ops: &[String]) -> Vec<u8> {
    ops.iter().filter_map(|o| AsmInst::operand_reg(o)).collect()
}

impl AsmInst {
    /// Parses the instruction part of a line (`mnemonic op, op, ...`); `None` for empty lines,
    /// labels, directives and comments.
    pub fn parse(text: &str) -> Option<AsmInst> {
        let mut l = text.split('#').next().unwrap_or("");
        if let Some(i) = l.find('<') {
            l = &l[..i];
        }
        let mut l = l.trim();
        // Leading labels.
        while let Some(i) = l.find(':') {
            let head = &l[..i];
            if head.is_empty() || head.contains(char::is_whitespace) {
                break;
            }
            l = l[i + 1..].trim_start();
        }
        if l.is_empty() || l.starts_with('.') || l.starts_with("//") {
            return None;
        }
        let (mnemonic, rest) = match l.find(char::is_whitespace) {
            Some(i) => (&l[..i], l[i..].trim()),
            None => (l, ""),
        };
        let operands = if rest.is_empty() {
            Vec::new()
        } else {
            rest.split(',').map(|o| o.trim().to_string()).collect()
        };
        Some(AsmInst {
            mnemonic: mnemonic.to_string(),
            operands,
        })
    }

    /// The model's class; instructions it does not know count as integer ALU operations.
    pub fn class(&self) -> Class {
        model::class_of_mnemonic(&self.mnemonic).unwrap_or(Class::IntAlu)
    }

    /// Registers an operand names: a register, or the base of `offset(reg)`.
    fn operand_reg(op: &str) -> Option<u8> {
        match (op.find('('), op.rfind(')')) {
            (Some(a), Some(b)) if a < b => reg_number(op[a + 1..b].trim()),
            _ => reg_number(op),
        }
    }

    /// The instruction for the issue simulator: the written register (the first operand of
    /// instructions that produce one; `ra` for calls) and the registers read.
    pub fn sim(&self) -> SimInst {
        let class = self.class();
        let regs: Vec<Option<u8>> = self.operands.iter().map(|o| Self::operand_reg(o)).collect();
        let writes_first = match class {
            Class::StoreInt | Class::StoreFp | Class::Branch | Class::Jump | Class::JumpReg => {
                // Store-conditional writes its status to the first operand.
                self.mnemonic.starts_with("sc.")
            }
            Class::Call => false,
            Class::Pseudo => false,
            _ => self.operands.len() >= 2 || self.mnemonic.starts_with("csrr"),
        };
        let (def, uses): (Option<u8>, Vec<u8>) = if class == Class::Call {
            // `jalr a5` / `jalr ra,0(a5)` / `jal ra,target` / `call f`: writes ra.
            let uses = regs.iter().flatten().copied().filter(|&r| r != 1).collect();
            (Some(1), uses)
        } else if writes_first {
            (
                regs.first().copied().flatten(),
                regs.iter().skip(1).flatten().copied().collect(),
            )
        } else if self.mnemonic == "ret" {
            (None, vec![1])
        } else {
            (None, regs.iter().flatten().copied().collect())
        };
        SimInst::new(class, def, &uses)
    }

    /// The instruction as `llvm-mca` reads it: branch targets become a local label, objdump's
    /// register-immediate spellings (`add a0,a0,-4`) their `i` forms.
    pub fn mca_text(&self) -> String {
        let mut m = self.mnemonic.clone();
        let mut ops = self.operands.clone();
        let is_num = |s: &str| {
            let s = s.strip_prefix('-').unwrap_or(s);
            !s.is_empty() && (s.chars().all(|c| c.is_ascii_digit()) || s.starts_with("0x"))
        };
        let is_target = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_hexdigit());
        match self.class() {
            // llvm-mca charges a call 100 cycles of latency ("call instructions are not
            // correctly modeled"); as a block's cost it is a control transfer like a jump (the
            // callee's blocks are costed on their own), so it is given to mca as one.
            Class::Call => {
                let target = ops
                    .iter()
                    .find(|o| reg_number(o).is_none() || o.contains('('));
                return match target {
                    Some(t) if t.contains('(') => {
                        format!("jr {}", Self::operand_reg(t).map_or("ra", reg_name))
                    }
                    _ if self.mnemonic == "jalr" => {
                        let r = regs_of(&ops).into_iter().rfind(|&r| r != 1).unwrap_or(1);
                        format!("jr {}", reg_name(r))
                    }
                    _ => "j .Lmca_target".into(),
                };
            }
            Class::Branch | Class::Jump
                if ops
                    .last()
                    .is_some_and(|o| is_target(o) && reg_number(o).is_none()) =>
            {
                *ops.last_mut().unwrap() = ".Lmca_target".into();
            }
            // Fences and CSR accesses are rare (the C library) and some are unsupported by
            // llvm-mca: a nop stands in.
            Class::System => return "nop".into(),
            _ => {}
        }
        let imm_forms = [
            ("add", "addi"),
            ("addw", "addiw"),
            ("and", "andi"),
            ("or", "ori"),
            ("xor", "xori"),
            ("sll", "slli"),
            ("srl", "srli"),
            ("sra", "srai"),
            ("sllw", "slliw"),
            ("srlw", "srliw"),
            ("sraw", "sraiw"),
            ("slt", "slti"),
            ("sltu", "sltiu"),
        ];
        if ops.len() == 3 && is_num(&ops[2]) {
            if let Some((_, i)) = imm_forms.iter().find(|(r, _)| *r == m) {
                m = i.to_string();
            }
        }
        if ops.is_empty() {
            m
        } else {
            format!("{m} {}", ops.join(", "))
        }
    }
}

/// A disassembled executable: instructions in address order.
pub struct Disassembly {
    addrs: Vec<u64>,
    insts: Vec<AsmInst>,
}

impl Disassembly {
    /// `riscv64-linux-gnu-objdump -d` of an executable.
    pub fn of(exe: &Path) -> Result<Disassembly, String> {
        let out = Command::new(objdump())
            .args(["-d", "--no-show-raw-insn"])
            .arg(exe)
            .stderr(Stdio::null())
            .output()
            .map_err(|e| format!("running {}: {e}", objdump()))?;
        if !out.status.success() {
            return Err(format!("{} failed on {}", objdump(), exe.display()));
        }
        Ok(Disassembly::parse(&String::from_utf8_lossy(&out.stdout)))
    }

    /// Parses objdump's text (`   10798:\tadd\tsp,sp,-48`).
    pub fn parse(text: &str) -> Disassembly {
        let mut v: Vec<(u64, AsmInst)> = Vec::new();
        for line in text.lines() {
            let Some((addr, rest)) = line.split_once(":\t") else {
                continue;
            };
            let Ok(addr) = u64::from_str_radix(addr.trim(), 16) else {
                continue;
            };
            if let Some(i) = AsmInst::parse(&rest.replace('\t', " ")) {
                v.push((addr, i));
            }
        }
        v.sort_by_key(|p| p.0);
        v.dedup_by_key(|p| p.0);
        let (addrs, insts) = v.into_iter().unzip();
        Disassembly { addrs, insts }
    }

    /// The `n` instructions from `pc`, if `pc` starts an instruction and `n` follow.
    pub fn block(&self, pc: u64, n: u64) -> Option<&[AsmInst]> {
        let i = self.addrs.binary_search(&pc).ok()?;
        self.insts.get(i..i.checked_add(n as usize)?)
    }
}

fn objdump() -> String {
    std::env::var("SYSY_OBJDUMP").unwrap_or_else(|_| "riscv64-linux-gnu-objdump".into())
}

fn mca() -> String {
    std::env::var("SYSY_MCA").unwrap_or_else(|_| "llvm-mca-14".into())
}

/// Whether `llvm-mca-14` is installed.
pub fn mca_available() -> bool {
    toolchain::find_in_path(&mca()).is_some()
}

/// The model's steady-state cycles of a block.
pub fn model_block_cycles(block: &[AsmInst]) -> f64 {
    let sim: Vec<SimInst> = block.iter().map(AsmInst::sim).collect();
    model::steady_state_cycles(&sim)
}

/// Iterations `llvm-mca` runs per region; its Total Cycles / Iterations is the steady state.
const MCA_ITERATIONS: u32 = 100;

static MCA_CACHE: Mutex<Option<FxHashMap<String, f64>>> = Mutex::new(None);

/// `llvm-mca` cycles per iteration of each block (one invocation for all blocks not cached).
/// A block `llvm-mca` cannot read gets `None`.
pub fn mca_block_cycles(blocks: &[String]) -> Result<Vec<Option<f64>>, String> {
    let mut todo: Vec<&String> = Vec::new();
    {
        let cache = MCA_CACHE.lock().unwrap_or_else(|e| e.into_inner());
        for b in blocks {
            if !cache.as_ref().is_some_and(|c| c.contains_key(b)) && !todo.contains(&b) {
                todo.push(b);
            }
        }
    }
    if !todo.is_empty() {
        let costs = run_mca(&todo)?;
        let mut cache = MCA_CACHE.lock().unwrap_or_else(|e| e.into_inner());
        let cache = cache.get_or_insert_with(FxHashMap::default);
        for (b, c) in todo.iter().zip(costs) {
            // Unreadable blocks are remembered as NaN so they are not retried.
            cache.insert((*b).clone(), c.unwrap_or(f64::NAN));
        }
    }
    let cache = MCA_CACHE.lock().unwrap_or_else(|e| e.into_inner());
    Ok(blocks
        .iter()
        .map(|b| {
            cache
                .as_ref()
                .and_then(|c| c.get(b))
                .copied()
                .filter(|c| !c.is_nan())
        })
        .collect())
}

/// One `llvm-mca` run over regions; a line it rejects is replaced by `nop` and the run repeated
/// (the block is then marked unreadable).
fn run_mca(blocks: &[&String]) -> Result<Vec<Option<f64>>, String> {
    let mut lines: Vec<String> = vec![".Lmca_target:".into()];
    // Per block: its region's line range.
    let mut ranges = Vec::with_capacity(blocks.len());
    for (i, b) in blocks.iter().enumerate() {
        lines.push(format!("# LLVM-MCA-BEGIN b{i}"));
        let start = lines.len();
        lines.extend(b.lines().map(str::to_string));
        ranges.push(start..lines.len());
        lines.push("# LLVM-MCA-END".into());
    }
    let mut unreadable = vec![false; blocks.len()];
    for _attempt in 0..200 {
        let mut child = Command::new(mca())
            .args([
                "-mtriple=riscv64",
                "-mcpu=sifive-u74",
                &format!("-iterations={MCA_ITERATIONS}"),
                "-resource-pressure=0",
                "-instruction-info=0",
                "-timeline=0",
                "-bottleneck-analysis=0",
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("running {}: {e}", mca()))?;
        let input = lines.join("\n") + "\n";
        let mut stdin = child.stdin.take().ok_or("llvm-mca: no stdin")?;
        let writer = std::thread::spawn(move || {
            use std::io::Write;
            let _ = stdin.write_all(input.as_bytes());
        });
        let out = child
            .wait_with_output()
            .map_err(|e| format!("llvm-mca: {e}"))?;
        let _ = writer.join();
        if out.status.success() {
            let mut res = parse_mca(&String::from_utf8_lossy(&out.stdout), blocks.len());
            for (r, bad) in res.iter_mut().zip(&unreadable) {
                if *bad {
                    *r = None;
                }
            }
            return Ok(res);
        }
        // `<stdin>:LINE:COL: error: ...`: blank the line and try again.
        let err = String::from_utf8_lossy(&out.stderr);
        let line = err.lines().find_map(|l| {
            let rest = l.strip_prefix("<stdin>:")?;
            let (n, rest) = rest.split_once(':')?;
            rest.contains("error").then(|| n.parse::<usize>().ok())?
        });
        // Or `note: instruction: TEXT` after "unsupported instruction": the first line with it.
        let line = line.or_else(|| {
            let text = err
                .lines()
                .find_map(|l| l.trim().strip_prefix("note: instruction:"))?;
            let text: Vec<&str> = text
                .split(|c: char| c == ',' || c.is_whitespace())
                .filter(|t| !t.is_empty())
                .collect();
            lines
                .iter()
                .position(|l| {
                    let t: Vec<&str> = l
                        .split(|c: char| c == ',' || c.is_whitespace())
                        .filter(|t| !t.is_empty())
                        .collect();
                    t == text
                })
                .map(|i| i + 1)
        });
        let Some(n) = line.filter(|n| (1..=lines.len()).contains(n)) else {
            return Err(format!("llvm-mca failed: {}", last_lines(&err, 6)));
        };
        let idx = n - 1;
        if lines[idx] == " nop" || lines[idx].starts_with('#') || !lines[idx].starts_with(' ') {
            return Err(format!("llvm-mca failed: {}", last_lines(&err, 6)));
        }
        lines[idx] = " nop".into();
        if let Some(b) = ranges.iter().position(|r| r.contains(&idx)) {
            unreadable[b] = true;
        }
    }
    Err("llvm-mca: too many unreadable lines".into())
}

fn last_lines(text: &str, n: usize) -> String {
    let v: Vec<&str> = text.trim().lines().collect();
    v[v.len().saturating_sub(n)..].join("\n")
}

/// Cycles per iteration of regions `b0..b{n-1}` from `llvm-mca`'s summaries.
fn parse_mca(text: &str, n: usize) -> Vec<Option<f64>> {
    let mut res = vec![None; n];
    let mut current: Option<usize> = None;
    let mut iterations = None;
    for line in text.lines() {
        if let Some(rest) = line.split_once("Code Region - ").map(|p| p.1) {
            current = rest
                .trim()
                .strip_prefix('b')
                .and_then(|s| s.parse().ok())
                .filter(|&i| i < n);
            iterations = None;
        } else if let Some(v) = line.strip_prefix("Iterations:") {
            iterations = v.trim().parse::<f64>().ok();
        } else if let Some(v) = line.strip_prefix("Total Cycles:") {
            if let (Some(i), Some(it), Ok(c)) = (current, iterations, v.trim().parse::<f64>()) {
                if it > 0.0 {
                    res[i] = Some(c / it);
                }
            }
        }
    }
    res
}

/// The profile a run left in `profile` costed, after checking that it adds up to the
/// instruction count the same run reported.
pub fn measure_run(exe: &Path, profile: &Path, insns: u64) -> Result<Estimate, String> {
    let text = std::fs::read_to_string(profile)
        .map_err(|e| format!("block profile {}: {e}", profile.display()))?;
    let p = Profile::parse(&text)?;
    if p.insns() != insns {
        return Err(format!(
            "the block profile adds up to {} instructions, the count is {insns}",
            p.insns()
        ));
    }
    estimate(exe, &p, true)
}

/// The cycle estimate of one run.
#[derive(Clone, Debug, Default)]
pub struct Estimate {
    /// By our in-order model, branch terms included.
    pub cycles: f64,
    /// By `llvm-mca-14` plus the same branch terms; `None` without llvm-mca or when it failed.
    pub cycles_mca: Option<f64>,
    /// Executed instructions of blocks found in the disassembly (the rest are costed at one
    /// cycle per instruction by both).
    pub known_insns: u64,
    pub insns: u64,
    pub taken: u64,
    pub mispredicted: u64,
}

/// Costs a profile of `exe`.
pub fn estimate(exe: &Path, profile: &Profile, with_mca: bool) -> Result<Estimate, String> {
    let dis = Disassembly::of(exe)?;
    estimate_with(&dis, profile, with_mca)
}

/// Costs a profile against a disassembly.
pub fn estimate_with(
    dis: &Disassembly,
    profile: &Profile,
    with_mca: bool,
) -> Result<Estimate, String> {
    let mut e = Estimate {
        insns: profile.insns(),
        taken: profile.taken(),
        mispredicted: profile.mispredicted(),
        ..Estimate::default()
    };
    let branch_terms = e.taken as f64 * model::TAKEN_BRANCH_BUBBLE as f64
        + e.mispredicted as f64 * model::MISPREDICT_PENALTY as f64;
    let mut model_sum = 0.0;
    // Blocks for mca: text and executions; unknown blocks at 1 cycle per instruction.
    let mut texts: Vec<String> = Vec::new();
    let mut weights: Vec<u64> = Vec::new();
    let mut unknown_cost = 0.0;
    let mut model_cache: FxHashMap<(u64, u64), f64> = FxHashMap::default();
    for b in &profile.blocks {
        match dis.block(b.pc, b.insns) {
            Some(insts) => {
                e.known_insns += b.insns * b.execs;
                let c = *model_cache
                    .entry((b.pc, b.insns))
                    .or_insert_with(|| model_block_cycles(insts));
                model_sum += c * b.execs as f64;
                if with_mca {
                    let text: Vec<String> =
                        insts.iter().map(|i| format!(" {}", i.mca_text())).collect();
                    texts.push(text.join("\n"));
                    weights.push(b.execs);
                }
            }
            None => unknown_cost += (b.insns * b.execs) as f64,
        }
    }
    e.cycles = model_sum + unknown_cost + branch_terms;
    if with_mca && mca_available() {
        let costs = mca_block_cycles(&texts)?;
        let mut sum = 0.0;
        for ((c, w), t) in costs.iter().zip(&weights).zip(&texts) {
            // A block mca could not read is costed by our model instead.
            let c = match c {
                Some(c) => *c,
                None => {
                    let insts: Vec<AsmInst> = t.lines().filter_map(AsmInst::parse).collect();
                    model_block_cycles(&insts)
                }
            };
            sum += c * *w as f64;
        }
        e.cycles_mca = Some(sum + unknown_cost + branch_terms);
    }
    Ok(e)
}

/// Cost assembly regions (`# LLVM-MCA-BEGIN name` .. `# LLVM-MCA-END`) with the U74 model and
/// llvm-mca: cycles per iteration of each region repeated back to back.
#[derive(FromArgs, Debug)]
#[argh(subcommand, name = "cost")]
pub struct CostArgs {
    /// assembly files with LLVM-MCA-BEGIN/END regions (the whole file when it has none)
    #[argh(positional)]
    pub files: Vec<PathBuf>,
    /// instead: a static RISC-V executable whose run --profile describes
    #[argh(option)]
    pub exe: Option<PathBuf>,
    /// the block profile of a run of --exe (qemu-riscv64 -plugin insn_count.so,profile=FILE)
    #[argh(option)]
    pub profile: Option<PathBuf>,
    /// with --exe: also list the N blocks costing most cycles (model), with their code
    #[argh(option, default = "0")]
    pub top: usize,
}

/// `sysyc cost --exe E --profile P`: the estimate of one profiled run.
fn cost_run(exe: &Path, profile: &Path, top: usize) -> i32 {
    let p = match std::fs::read_to_string(profile)
        .map_err(|e| e.to_string())
        .and_then(|t| Profile::parse(&t))
    {
        Ok(p) => p,
        Err(e) => {
            eprintln!("sysyc cost: {}: {e}", profile.display());
            return 2;
        }
    };
    if top > 0 {
        let dis = match Disassembly::of(exe) {
            Ok(d) => d,
            Err(e) => {
                eprintln!("sysyc cost: {e}");
                return 2;
            }
        };
        let mut costed: Vec<(f64, &super::profile::Block, &[AsmInst])> = p
            .blocks
            .iter()
            .filter_map(|b| {
                let insts = dis.block(b.pc, b.insns)?;
                Some((model_block_cycles(insts) * b.execs as f64, b, insts))
            })
            .collect();
        costed.sort_by(|a, b| b.0.total_cmp(&a.0));
        costed.truncate(top);
        // The same blocks by llvm-mca, when it is there.
        let mca: Vec<Option<f64>> = if mca_available() {
            let texts: Vec<String> = costed
                .iter()
                .map(|(_, _, insts)| {
                    let lines: Vec<String> =
                        insts.iter().map(|i| format!(" {}", i.mca_text())).collect();
                    lines.join("\n")
                })
                .collect();
            mca_block_cycles(&texts).unwrap_or_else(|_| vec![None; costed.len()])
        } else {
            vec![None; costed.len()]
        };
        for ((c, b, insts), m) in costed.iter().zip(&mca) {
            println!(
                "{:x}: {:.0} cycles = {} x {:.2} (mca {}) (+ {} taken, {} mispredicted)",
                b.pc,
                c,
                b.execs,
                c / b.execs as f64,
                m.map_or("-".into(), |m| format!("{m:.2}")),
                b.taken,
                b.mispredicted
            );
            for i in *insts {
                println!("    {}", i.mca_text());
            }
        }
    }
    match estimate(exe, &p, true) {
        Ok(e) => {
            println!("insns:        {}", e.insns);
            println!("known insns:  {}", e.known_insns);
            println!("blocks:       {}", p.blocks.len());
            println!("taken:        {}", e.taken);
            println!("mispredicted: {}", e.mispredicted);
            println!("cycles:       {:.0}", e.cycles);
            println!(
                "cycles (mca): {}",
                e.cycles_mca.map_or("-".into(), |c| format!("{c:.0}"))
            );
            0
        }
        Err(e) => {
            eprintln!("sysyc cost: {e}");
            2
        }
    }
}

/// Regions of an assembly text: (name, instruction lines).
pub fn regions(text: &str) -> Vec<(String, Vec<AsmInst>)> {
    let mut out = Vec::new();
    let mut cur: Option<(String, Vec<AsmInst>)> = None;
    for line in text.lines() {
        let t = line.trim();
        if let Some(name) = t.strip_prefix("# LLVM-MCA-BEGIN") {
            cur = Some((name.trim().to_string(), Vec::new()));
        } else if t.starts_with("# LLVM-MCA-END") {
            out.extend(cur.take());
        } else if let (Some((_, v)), Some(i)) = (cur.as_mut(), AsmInst::parse(t)) {
            v.push(i);
        }
    }
    if out.is_empty() {
        let all: Vec<AsmInst> = text.lines().filter_map(AsmInst::parse).collect();
        if !all.is_empty() {
            out.push(("all".into(), all));
        }
    }
    out
}

/// `sysyc cost`: prints cycles per iteration of each region by the model and by llvm-mca.
pub fn run_cost(args: &CostArgs) -> i32 {
    match (&args.exe, &args.profile) {
        (Some(exe), Some(p)) => return cost_run(exe, p, args.top),
        (None, None) => {}
        _ => {
            eprintln!("sysyc cost: --exe and --profile go together");
            return 2;
        }
    }
    let mut rows = Vec::new();
    for f in &args.files {
        let text = match std::fs::read_to_string(f) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("sysyc cost: {}: {e}", f.display());
                return 2;
            }
        };
        let stem = f
            .file_stem()
            .map_or(String::new(), |s| s.to_string_lossy().into_owned());
        for (name, insts) in regions(&text) {
            let label = if name.is_empty() {
                stem.clone()
            } else {
                format!("{stem}/{name}")
            };
            rows.push((label, insts));
        }
    }
    let texts: Vec<String> = rows
        .iter()
        .map(|(_, insts)| {
            insts
                .iter()
                .map(|i| format!(" {}", i.mca_text()))
                .collect::<Vec<_>>()
                .join("\n")
        })
        .collect();
    let mca = if mca_available() {
        match mca_block_cycles(&texts) {
            Ok(v) => v,
            Err(e) => {
                eprintln!("sysyc cost: {e}");
                vec![None; rows.len()]
            }
        }
    } else {
        vec![None; rows.len()]
    };
    let w = rows.iter().map(|r| r.0.len()).max().unwrap_or(6).max(6);
    println!(
        "{:<w$} {:>6} {:>10} {:>10}",
        "region", "insns", "model", "llvm-mca"
    );
    for ((name, insts), m) in rows.iter().zip(&mca) {
        println!(
            "{:<w$} {:>6} {:>10.2} {:>10}",
            name,
            insts.len(),
            model_block_cycles(insts),
            m.map_or("-".into(), |c| format!("{c:.2}"))
        );
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objdump_lines_parse_and_cost() {
        let text = "0000000000010798 <main>:\n   10798:\tadd\tsp,sp,-48\n   1079a:\tsd\tra,0(sp)\n   107ae:\tjal\t1090e <getint>\n   107c2:\tblez\ts2,108e0 <main+0x148>\n   107aa:\tadd\ts1,s1,-1694 # 60108 <sy.main.table0>\n";
        let d = Disassembly::parse(text);
        let b = d.block(0x10798, 3).unwrap();
        assert_eq!(b[0].mnemonic, "add");
        assert_eq!(b[0].mca_text(), "addi sp, sp, -48");
        assert_eq!(b[1].sim().def, None);
        assert_eq!(&b[1].sim().uses[..2], &[1, 2]);
        let s = b[0].sim();
        assert_eq!((s.def, &s.uses[..s.n_uses as usize]), (Some(2), &[2u8][..]));
        assert!(d.block(0x10798, 6).is_none());
        assert!(d.block(0x10799, 1).is_none());
        let j = d.block(0x107ae, 2).unwrap();
        assert_eq!(j[0].sim().def, Some(1));
        assert_eq!(j[1].mca_text(), "blez s2, .Lmca_target");
        assert_eq!(j[1].sim().def, None);
    }

    #[test]
    fn regions_and_registers() {
        let r =
            regions("x:\n# LLVM-MCA-BEGIN dep\n ld a0, 0(a0)\n addi a0, a0, 8\n# LLVM-MCA-END\n");
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].0, "dep");
        assert_eq!(r[0].1.len(), 2);
        assert_eq!(reg_number("fa0"), Some(42));
        assert_eq!(reg_number("x31"), Some(31));
        assert_eq!(reg_number("f1"), Some(33));
        assert_eq!(reg_number("fp"), Some(8));
        assert_eq!(reg_number("rtz"), None);
        // A pointer chase: the load's 3 cycles and the add's 1.
        assert_eq!(model_block_cycles(&r[0].1), 4.0);
    }

    #[test]
    fn mca_summaries_parse() {
        let out = "[0] Code Region - b1\n\nIterations:        100\nInstructions:      200\nTotal Cycles:      302\n\n[1] Code Region - b0\nIterations:        100\nTotal Cycles:      301\n";
        assert_eq!(parse_mca(out, 2), vec![Some(3.01), Some(3.02)]);
    }

    /// A program with loops, calls, branches going both ways, division and float work.
    const PROGRAM: &str = "int a[100];
int f(int x) { if (x % 3 == 0) return x / 3; return x * 2 + 1; }
int main() {
  int i = 0, s = 0;
  float g = 1.5;
  while (i < 1000) {
    a[i % 100] = a[i % 100] + f(i);
    if (i % 7 < 3) s = s + a[(i * 13) % 100]; else s = s - 1;
    g = g * 1.0001 + 0.5;
    i = i + 1;
  }
  putint(s); putch(10);
  if (g > 10.0) putint(1);
  return s % 256;
}
";

    /// Runs PROGRAM built by `compiler` with the plugin and checks the profile against the
    /// plugin's own count and the estimate against the counts.
    fn profile_matches_count(compiler: super::super::runner::Compiler, tag: &str) {
        use super::super::cases::Case;
        use super::super::runner::{self, RunConfig, WorkDir};
        let dir = WorkDir::new(&format!("profile-test-{tag}")).unwrap();
        let sy = dir.path.join("p.sy");
        std::fs::write(&sy, PROGRAM).unwrap();
        let case = Case {
            name: format!("profile/{tag}"),
            sy,
            input: None,
            expected: None,
        };
        let cfg = RunConfig::new(compiler);
        let built = runner::build_case(&case, &cfg, &dir.path).unwrap();
        let plugin = toolchain::insn_count_plugin().unwrap();
        let (counts, profile) = (dir.path.join("counts.txt"), dir.path.join("profile.txt"));
        let arg = format!(
            "{},outfile={},profile={}",
            plugin.display(),
            counts.display(),
            profile.display()
        );
        let out = runner::execute(&built, &case, &cfg, Some(&arg)).unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let first = stdout.lines().next().unwrap_or("");
        assert!(first.trim().parse::<i64>().is_ok(), "{stdout}");
        let counts = std::fs::read_to_string(&counts).unwrap();
        let field = |k: &str| -> u64 {
            counts
                .lines()
                .find_map(|l| l.strip_prefix(k)?.trim().parse().ok())
                .unwrap()
        };
        let (insns, marker) = (field("insns:"), field("marker:"));
        assert_eq!(marker, 1, "{counts}");
        let p = Profile::parse(&std::fs::read_to_string(&profile).unwrap()).unwrap();
        // Exactly the instructions counted up to the exit marker.
        assert_eq!(p.insns(), insns);
        // 1000 iterations with a loop branch and data-dependent branches: transfers and
        // some mispredictions (the `i % 7 < 3` pattern defeats a 2-bit counter).
        assert!(p.taken() >= 1000, "{}", p.taken());
        assert!(p.mispredicted() >= 100, "{}", p.mispredicted());
        let e = measure_run(&built.exe, &profile, insns).unwrap();
        assert_eq!(e.known_insns, insns, "every block found in the disassembly");
        // Dual issue bounds cycles below by half the instructions; the divisions push the
        // total above one cycle per instruction.
        let branch_terms = (e.taken + 3 * e.mispredicted) as f64;
        assert!(e.cycles >= insns as f64 / 2.0 + branch_terms, "{e:?}");
        assert!(e.cycles > insns as f64, "{e:?}");
        if mca_available() {
            let mca = e.cycles_mca.unwrap();
            assert!(mca >= insns as f64 / 2.0 + branch_terms, "{e:?}");
        }
        // A wrong count is refused.
        assert!(measure_run(&built.exe, &profile, insns + 1).is_err());
    }

    #[test]
    fn profile_adds_up_to_the_instruction_count() {
        use super::super::runner::Compiler;
        profile_matches_count(
            Compiler::Sysyc(crate::driver::CompileOptions {
                opt_level: 2,
                ..Default::default()
            }),
            "sysyc",
        );
        profile_matches_count(Compiler::Gcc, "gcc");
    }
}
