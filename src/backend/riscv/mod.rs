//! RISC-V64 (rv64gc, lp64d) backend: instruction selection, register allocation, frames, emission.
//!
//! Pipeline per function (functions in parallel, output in `FuncId` order):
//! `isel` (IR -> machine IR over virtual registers, phi copies, ABI) -> `layout` (tail
//! duplication of loop tests; -O1 and up) -> `liveness` (intervals) -> `copyprop` (-O1 and up,
//! linear scan) -> `shrinkwrap::split_at_region` (-O1 and up, linear scan) ->
//! `regalloc::linear_scan` (or `regalloc::simple`, the baseline, with `--regalloc=simple`)
//! -> `regalloc::split` (spilled values read in innermost loops get a register there; the
//! function is allocated again and the cheaper allocation kept) -> [`regalloc::checker`] ->
//! `frame` (with `shrinkwrap::place`: the block where the frame opens) -> `emit::rewrite`
//! (physical code with spill code, prologue, epilogues) ->
//! `peephole` (with spill-slot forwarding and dead spill stores; at -O0 its clean-up alone) ->
//! `sched::after_alloc`,
//! `placement` (block order from static edge probabilities: likely successors fall through),
//! `layout::latch_fallthrough`, `exits_out_of_line` and `copy_jump_targets` (-O1 and up) ->
//! `emit::print`. At -O1 and up `sched::before_alloc`
//! schedules each block between `layout` and `liveness`.
//! `stats` reports static counts per function, including each innermost loop's spill code and
//! register pressure (`loops`).
//! Globals go to `.data`/`.bss`/`.rodata` after the code. Output is byte-identical for any
//! thread count: labels come from function names and block numbers only.

pub mod copyprop;
pub mod emit;
pub mod frame;
pub mod isa;
pub mod isel;
pub mod layout;
pub mod liveness;
pub mod loops;
pub mod minst;
pub mod model;
pub mod peephole;
pub mod phi;
pub mod placement;
pub mod regalloc;
pub mod sched;
pub mod shrinkwrap;

#[cfg(test)]
mod tests;

use crate::ir::{Function, Module, ModuleCx};
use crate::timing::{Lap, Timings};
use minst::{MInst, MOp};
use rayon::prelude::*;
use regalloc::Spill;

/// Backend options.
#[derive(Clone, Debug, Default)]
pub struct RiscvOptions {
    pub opt_level: u8,
    /// Run the register-allocation checker on every function (panics naming the function).
    pub check_regalloc: bool,
    /// Which register allocator runs.
    pub regalloc: regalloc::Allocator,
    /// Extensions beyond rv64gc that instruction selection may use.
    pub isa: isa::Isa,
}

/// Static counts of one compiled function.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FuncStats {
    pub name: String,
    pub insts: usize,
    pub spill_loads: usize,
    pub spill_stores: usize,
    pub moves: usize,
    pub frame_size: u64,
    pub spilled_vregs: usize,
    /// The innermost loops, with their spill code and register pressure.
    pub loops: Vec<LoopStats>,
}

/// Static counts of one innermost loop (see `loops`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LoopStats {
    /// Machine block number of the header (`.L<func>_<header>` in the assembly).
    pub header: u32,
    pub blocks: usize,
    /// Spill loads and stores in the body after the peephole.
    pub spill_insts: usize,
    /// Register moves and all instructions in the body after the peephole.
    pub moves: usize,
    pub insts: usize,
    /// Most virtual registers live at one point: all classes, integer, float.
    pub pressure: u32,
    pub pressure_int: u32,
    pub pressure_float: u32,
    pub has_call: bool,
}

/// Per-thread scratch buffers.
#[derive(Default)]
struct Scratch {
    code: Vec<MInst>,
}

struct Compiled {
    text: String,
    /// Only when asked for (`stats`): counting costs a pass over the code and the loops.
    stats: Option<FuncStats>,
}

/// The estimated spill cost an allocation with loop bystanders demoted must reach, as a share
/// of the cost before: the estimate weighs every block of a loop alike, so a small estimated
/// gain from moving reloads between a loop's blocks is as likely a loss.
const BYSTANDER_GAIN: f64 = 0.9;

fn compile_function(
    f: &Function,
    cx: &ModuleCx,
    opts: &RiscvOptions,
    s: &mut Scratch,
    t: &Timings,
    want_stats: bool,
) -> Compiled {
    let mut lap = Lap::start(t);
    let mut mf = isel::select(f, cx, opts.isa);
    lap.done("instruction selection");
    // Tail duplication rotates loops: an optimization, left out at -O0 as gcc does.
    if opts.opt_level > 0 {
        layout::run(&mut mf);
    }
    lap.done("block layout");
    let mut iv = if opts.opt_level > 0 {
        // Scheduling keeps the registers live out of each block.
        let live_out = liveness::live_out(&mf);
        sched::before_alloc(&mut mf, &live_out);
        lap.done("scheduling");
        liveness::compute_with(&mf, &live_out)
    } else {
        liveness::compute(&mf)
    };
    lap.done("liveness");
    // Copy propagation coalesces what the allocator cannot; the simple baseline goes without.
    if opts.opt_level > 0
        && opts.regalloc == regalloc::Allocator::LinearScan
        && copyprop::run(&mut mf, &iv)
    {
        iv = liveness::compute(&mf);
    }
    lap.done("copy propagation");
    // Values computed before the frame's save block get their own copies inside its region.
    if opts.opt_level > 0
        && opts.regalloc == regalloc::Allocator::LinearScan
        && shrinkwrap::split_at_region(&mut mf, &iv)
    {
        iv = liveness::compute(&mf);
    }
    lap.done("shrink-wrap splitting");
    let mut alloc = match opts.regalloc {
        regalloc::Allocator::LinearScan => regalloc::linear_scan::allocate(&mf, &iv),
        regalloc::Allocator::Simple => regalloc::simple::allocate(&mf),
    };
    // Splitting spilled values and allocating again pays at -O1 and above; -O0 compiles fast.
    if opts.opt_level > 0 && opts.regalloc == regalloc::Allocator::LinearScan && alloc.any_spilled()
    {
        use regalloc::split::spill_cost;
        let mut cost = spill_cost(&mf, &alloc);
        // Values spilled for their whole life get a register inside innermost loops that read
        // them; kept only if the estimated spill cost drops.
        let inner = loops::innermost(&mf, &iv);
        if let Some(undo) = regalloc::split::around_loops(&mut mf, &alloc, &inner) {
            let iv2 = liveness::compute(&mf);
            let alloc2 = regalloc::linear_scan::allocate(&mf, &iv2);
            let cost2 = spill_cost(&mf, &alloc2);
            if cost2 < cost {
                (iv, alloc, cost) = (iv2, alloc2, cost2);
            } else {
                undo.restore(&mut mf);
            }
        }
        // Values held in registers through loops that reload others give way: allocated again
        // with them the cheapest to spill, then split around the loops that read them.
        let bystanders = regalloc::split::loop_bystanders(
            &mf,
            &iv,
            &alloc,
            &inner,
            cost * (1.0 - BYSTANDER_GAIN),
        );
        if !bystanders.is_empty() {
            let saved: Vec<f32> = bystanders.iter().map(|&v| iv.weight[v]).collect();
            bystanders.iter().for_each(|&v| iv.weight[v] = 0.0);
            let demoted = regalloc::linear_scan::allocate(&mf, &iv);
            for (&v, w) in bystanders.iter().zip(saved) {
                iv.weight[v] = w;
            }
            if let Some(undo) = regalloc::split::around_loops(&mut mf, &demoted, &inner) {
                let iv2 = liveness::compute(&mf);
                let alloc2 = regalloc::linear_scan::allocate(&mf, &iv2);
                let cost2 = spill_cost(&mf, &alloc2);
                if cost2 < cost * BYSTANDER_GAIN {
                    (iv, alloc, cost) = (iv2, alloc2, cost2);
                } else {
                    undo.restore(&mut mf);
                }
            }
        }
        // Values still spilled (not recomputed) get a register for each cluster of nearby
        // accesses.
        if alloc.any_in_slot() {
            if let Some(undo) = regalloc::split::local_copies(&mut mf, &alloc) {
                let iv2 = liveness::compute(&mf);
                let alloc2 = regalloc::linear_scan::allocate(&mf, &iv2);
                if spill_cost(&mf, &alloc2) < cost {
                    (iv, alloc) = (iv2, alloc2);
                } else {
                    undo.restore(&mut mf);
                }
            }
        }
    }
    lap.done("register allocation");
    if opts.check_regalloc {
        if let Err(e) = regalloc::checker::check(&mf, &alloc) {
            panic!("register allocation checker failed in `{}`: {e}", f.name);
        }
    }
    lap.done("allocation checker");
    let frame = frame::Frame::compute(&mf, &alloc);
    emit::rewrite(&mf, &alloc, &frame, &mut s.code);
    let spill_lo = frame.spill_base as i64;
    let spill_hi = spill_lo + 8 * alloc.num_slots as i64;
    // The simple allocator is the unoptimized baseline: its spill code stays as emitted.
    let slots = (opts.regalloc != regalloc::Allocator::Simple).then_some(spill_lo..spill_hi);
    lap.done("frame and rewrite");
    // At -O0 only the clean-up of what allocation and rewriting leave (moves to self, scratch
    // moves, jumps to jumps and to the next label), none of the optimizations over spill
    // slots, constants, divisions and stores.
    if opts.opt_level > 0 {
        peephole::run(&mut s.code, slots);
    } else {
        peephole::cleanup(&mut s.code);
    }
    if opts.opt_level > 0 {
        layout::copies_before_exit(&mut s.code);
    }
    lap.done("peephole");
    if opts.opt_level > 0 {
        sched::after_alloc(&mut s.code, spill_hi);
        placement::run(&mut s.code);
        layout::latch_fallthrough(&mut s.code);
        let blocks = &mf.blocks;
        layout::exits_out_of_line(&mut s.code, |l| {
            usize::try_from(l)
                .ok()
                .and_then(|b| blocks.get(minst::MBlock::new(b)))
                .map(|b| b.depth)
        });
        layout::copy_jump_targets(&mut s.code);
        lap.done("scheduling");
    }
    let mut text = String::new();
    emit::print(&mf, &s.code, &mut text);
    lap.done("emission");
    if !want_stats {
        return Compiled { text, stats: None };
    }
    let is_spill = |m: &MInst| {
        (m.op.is_load() || m.op.is_store())
            && m.rs1 == minst::Reg::SP
            && (spill_lo..spill_hi).contains(&m.imm)
    };
    // Spill code per block (labels carry block numbers), then per innermost loop.
    let mut per_block = vec![[0usize; 3]; mf.blocks.len()];
    let mut cur = 0usize;
    for m in &s.code {
        if m.op == MOp::Label {
            // Labels past the blocks are out-of-line branch blocks (`layout`): counted with
            // the block laid out before them.
            if (m.imm as usize) < per_block.len() {
                cur = m.imm as usize;
            }
        } else {
            per_block[cur][0] += is_spill(m) as usize;
            per_block[cur][1] += m.op.is_move() as usize;
            per_block[cur][2] += 1;
        }
    }
    let loops = loops::innermost(&mf, &iv)
        .into_iter()
        .map(|l| LoopStats {
            header: l.header.index() as u32,
            blocks: l.blocks.len(),
            spill_insts: l.blocks.iter().map(|&b| per_block[b.index()][0]).sum(),
            moves: l.blocks.iter().map(|&b| per_block[b.index()][1]).sum(),
            insts: l.blocks.iter().map(|&b| per_block[b.index()][2]).sum(),
            pressure: l.pressure,
            pressure_int: l.pressure_int,
            pressure_float: l.pressure_float,
            has_call: l.has_call,
        })
        .collect();
    let stats = FuncStats {
        name: f.name.clone(),
        insts: s.code.iter().filter(|m| m.op != MOp::Label).count(),
        spill_loads: s
            .code
            .iter()
            .filter(|m| m.op.is_load() && is_spill(m))
            .count(),
        spill_stores: s
            .code
            .iter()
            .filter(|m| m.op.is_store() && is_spill(m))
            .count(),
        moves: s.code.iter().filter(|m| m.op.is_move()).count(),
        frame_size: frame.size,
        spilled_vregs: alloc.spill.values().filter(|&&s| s != Spill::No).count(),
        loops,
    };
    lap.done("backend statistics");
    Compiled {
        text,
        stats: Some(stats),
    }
}

fn compile_all(
    m: &Module,
    opts: &RiscvOptions,
    t: &Timings,
    want_stats: bool,
) -> Vec<Option<Compiled>> {
    let cx = &m.cx;
    m.funcs
        .par_iter()
        .map_init(Scratch::default, |s, (id, f)| {
            cx.decls[id]
                .defined
                .then(|| compile_function(f, cx, opts, s, t, want_stats))
        })
        .collect()
}

/// A function body the backend reads, and may free once its assembly is written.
trait Body: Send {
    fn body(&self) -> &Function;
    /// The body to edit before compiling it, if it may be edited.
    fn body_mut(&mut self) -> Option<&mut Function>;
    fn release(&mut self);
}

impl Body for &Function {
    fn body(&self) -> &Function {
        self
    }
    fn body_mut(&mut self) -> Option<&mut Function> {
        None
    }
    fn release(&mut self) {}
}

impl Body for &mut Function {
    fn body(&self) -> &Function {
        self
    }
    fn body_mut(&mut self) -> Option<&mut Function> {
        Some(self)
    }
    fn release(&mut self) {
        let id = self.id;
        **self = Function::new(id, String::new());
    }
}

/// Defined functions from which `write_module` compiles on a pool of its own.
const OWN_POOL_FUNCS: usize = 1024;

/// Stack of each code generation thread: the passes left to the backend run there too, on
/// deeply nested programs (as much as the command line gives the global pool).
const CODEGEN_STACK: usize = 64 << 20;

/// Functions compiled per round of `write_module`: enough to keep every thread busy, few
/// enough that the assembly waiting to be written stays small.
const FUNCS_PER_ROUND: usize = 64;

/// Compiles `bodies` (the defined functions, in `FuncId` order) in rounds of
/// `FUNCS_PER_ROUND`, each round in parallel, writing each round's assembly to `out` in order
/// before the next round starts (on a pool of its own: while the next round compiles), then
/// the globals. `prepare` runs on each body that may be
/// edited just before it is compiled. Times code generation and output writing as stages of
/// `t`.
fn write_module<B: Body>(
    cx: &ModuleCx,
    mut bodies: Vec<B>,
    opts: &RiscvOptions,
    t: &Timings,
    out: &mut dyn std::io::Write,
    prepare: &Prepare,
) -> std::io::Result<()> {
    let mut header = opts.isa.asm_directive().unwrap_or_default();
    let mut texts: Vec<String> = Vec::with_capacity(FUNCS_PER_ROUND);
    let threads = rayon::current_num_threads();
    let per_round = FUNCS_PER_ROUND.max(4 * threads);
    // The functions of a large module are compiled on threads of their own. The allocator
    // gives each thread a heap arena; those of the threads that built the IR hold it, riddled
    // with holes as bodies are freed, and every allocation there searches them. Fresh threads
    // allocate from fresh arenas. Otherwise (or without such a pool) the calling pool compiles.
    let pool = if bodies.len() >= OWN_POOL_FUNCS {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .stack_size(CODEGEN_STACK)
            .build()
            .ok()
    } else {
        None
    };
    // Assembly compiled and not yet written, in order.
    let mut ready: Vec<String> = Vec::with_capacity(FUNCS_PER_ROUND);
    for round in bodies.chunks_mut(per_round) {
        let start = std::time::Instant::now();
        let mut compile = |texts: &mut Vec<String>| {
            round
                .par_iter_mut()
                .map_init(Scratch::default, |s, b| {
                    if let Some(f) = b.body_mut() {
                        prepare(f, cx);
                    }
                    let c = compile_function(b.body(), cx, opts, s, t, false);
                    b.release();
                    c.text
                })
                .collect_into_vec(texts)
        };
        match &pool {
            Some(pool) => {
                // The calling thread is idle while the pool compiles: it writes the round
                // before meanwhile (inside this stage's wall time).
                let written = std::thread::scope(|scope| {
                    let job = scope.spawn(|| pool.install(|| compile(&mut texts)));
                    let written = write_texts(out, &mut header, &mut ready);
                    if let Err(panic) = job.join() {
                        std::panic::resume_unwind(panic);
                    }
                    written
                });
                t.add_stage("code generation", start.elapsed());
                written?;
                std::mem::swap(&mut ready, &mut texts);
            }
            None => {
                compile(&mut texts);
                t.add_stage("code generation", start.elapsed());
                t.stage("output writing", || {
                    write_texts(out, &mut header, &mut texts)
                })?;
            }
        }
    }
    t.stage("output writing", || {
        write_texts(out, &mut header, &mut ready)
    })?;
    let data = t.stage("code generation", || {
        let mut data = std::mem::take(&mut header);
        emit::data(cx, &mut data);
        data
    });
    t.stage("output writing", || out.write_all(data.as_bytes()))
}

/// Writes `header` (once: it is emptied) and then `texts`, emptying it.
fn write_texts(
    out: &mut dyn std::io::Write,
    header: &mut String,
    texts: &mut Vec<String>,
) -> std::io::Result<()> {
    if !header.is_empty() {
        out.write_all(header.as_bytes())?;
        header.clear();
    }
    for text in texts.drain(..) {
        out.write_all(text.as_bytes())?;
    }
    Ok(())
}

/// Compiles a whole module to one assembly file.
pub fn compile_module(m: &Module, opts: &RiscvOptions) -> String {
    let bodies: Vec<&Function> = m
        .funcs
        .iter()
        .filter(|(id, _)| m.cx.decls[*id].defined)
        .map(|(_, f)| f)
        .collect();
    let mut out = Vec::new();
    write_module(&m.cx, bodies, opts, &Timings::off(), &mut out, &|_, _| {})
        .expect("writing to memory cannot fail");
    String::from_utf8(out).expect("assembly is UTF-8")
}

/// What runs on each function body just before it is compiled (the passes left to the backend,
/// `passes::pipeline::Deferred`).
pub type Prepare<'a> = dyn Fn(&mut Function, &ModuleCx) + Sync + 'a;

/// Compiles a whole module, writing the assembly to `out` as it is generated (functions in
/// `FuncId` order, then the globals), and frees each function body once its assembly is
/// written: the module keeps its declarations and globals, with empty bodies. `prepare` runs
/// on each body just before it is compiled. Times each backend phase, code generation and
/// output writing into `t`.
pub fn write_module_consuming(
    m: &mut Module,
    opts: &RiscvOptions,
    t: &Timings,
    out: &mut dyn std::io::Write,
    prepare: &Prepare,
) -> std::io::Result<()> {
    let Module { cx, funcs } = m;
    let bodies: Vec<&mut Function> = funcs
        .iter_mut()
        .filter(|(id, _)| cx.decls[*id].defined)
        .map(|(_, f)| f)
        .collect();
    write_module(cx, bodies, opts, t, out, prepare)
}

/// Static counts per defined function (compiles the module).
pub fn stats(m: &Module, opts: &RiscvOptions) -> Vec<FuncStats> {
    compile_all(m, opts, &Timings::off(), true)
        .into_iter()
        .flatten()
        .filter_map(|c| c.stats)
        .collect()
}
