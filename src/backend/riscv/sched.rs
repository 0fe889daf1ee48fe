//! Instruction scheduling for the dual-issue in-order core (see `model`): list scheduling of
//! straight-line regions, before register allocation over virtual registers
//! ([`before_alloc`]) and after it over physical registers ([`after_alloc`]).
//!
//! A region is a run of instructions between barriers: labels, branches, jumps, returns and
//! calls always; before allocation also instructions reading or writing an allocatable
//! physical register (argument, result and parameter moves stay where instruction selection
//! put them, so fixed ranges do not grow), and at most `WINDOW` instructions. Nothing moves
//! across a barrier.
//!
//! Dependences inside a region: register read-after-write (the producer's latency), write-after-
//! read (order only) and write-after-write; memory: loads pass loads, a store stays ordered with
//! every load and store it may overlap. Two accesses are independent when they provably touch
//! different bytes: the same base register, not written between them, with disjoint offset
//! ranges; different stack objects or frame areas; accesses through registers whose memory
//! classes (the IR's base objects, carried from instruction selection as `MemClass`) cannot
//! overlap, such as two distinct arrays, or a global array and the frame; and, after
//! allocation, an `sp`-relative access below `private_below` (spill slots, saved registers:
//! never address-taken) against any access through another register.
//!
//! The scheduler walks cycles: in each it issues the ready instruction of greatest height (the
//! longest latency-weighted path to the region's end, counting the branch that ends the region
//! as a reader of the registers it compares; ties keep source order), then a second one
//! the model lets pair with it that does not depend on it. An unpipelined unit (divider) stays
//! busy for its occupancy. Before allocation it also tracks live virtual registers per class:
//! at the class's limit (`PRESSURE_LIMIT`, higher inside loops, higher
//! still in loops without calls) it issues in source order, and
//! a block whose new order needs more registers at some point than the old one (beyond the
//! limit), or spends more instructions beyond the limit, keeps its old order, so scheduling
//! adds no spills. Each block is first scheduled by latency alone, ignoring the limit; that
//! order is kept when no point of it needs more registers than the old order (beyond the
//! limit), else the pressure-watching one is tried. A loop update joined to its value by a copy (`i' = i + 1; i := i'`) stays
//! after the value's other reads, so both keep one register (see `before_alloc`).
//! Cost: O(n^2) per region of n <= `WINDOW` instructions.

use super::liveness::LiveOut;
use super::minst::*;
use rustc_hash::{FxHashMap, FxHashSet};

/// The machine as the scheduler sees it: everything comes from `model`.
mod machine {
    use super::super::minst::MOp;
    use super::super::model;

    /// Cycles from issue until a dependent instruction can issue.
    pub fn latency(op: MOp) -> u32 {
        model::latency(op)
    }

    /// Whether `a` then `b` (independent) can issue in one cycle.
    pub fn can_pair(a: MOp, b: MOp) -> bool {
        model::can_pair(a, b)
    }

    /// The unpipelined unit `op` occupies (as a small number) and for how many cycles.
    pub fn unit(op: MOp) -> Option<(usize, u32)> {
        model::unit(op).map(|(u, n)| {
            let k = match u {
                model::Unit::IntDiv => 0,
                model::Unit::FpDiv => 1,
            };
            (k, n)
        })
    }

    /// `unit`'s number for an instruction that occupies no unit.
    pub const NO_UNIT: u8 = 2;

    /// What the scheduler asks of one instruction, looked up once per region.
    #[derive(Clone, Copy)]
    pub struct Info {
        /// The unpipelined unit it occupies (`NO_UNIT`: none) and for how many cycles.
        pub unit: u8,
        pub busy: u32,
        pipes: model::Pipes,
    }

    pub fn info(op: MOp) -> Info {
        let (unit, busy) = unit(op).map_or((NO_UNIT, 0), |(u, n)| (u as u8, n));
        Info {
            unit,
            busy,
            pipes: model::pipes(op),
        }
    }

    /// [`can_pair`] on looked-up instructions.
    pub fn info_can_pair(a: &Info, b: &Info) -> bool {
        model::pipes_can_pair(a.pipes, b.pipes)
    }
}

/// Largest region scheduled at once (bounds the quadratic work on huge blocks).
const WINDOW: usize = 256;

/// Live virtual registers per class (integer, float) the scheduler may reach before it falls
/// back to source order. Outside loops: the caller-saved allocatable registers (t3-t6 and
/// a0-a7; ft3-ft11 and fa0-fa7), so a schedule needs no callee-saved register (saved and
/// restored on every call) that source order does not. Inside loops a callee-saved register
/// pays for itself over the iterations: a few more, still below the allocatable 24 and 29
/// (room for values live across calls and linear scan's imperfect packing).
const PRESSURE_LIMIT: [u32; 2] = [12, 17];
const PRESSURE_LIMIT_LOOP: [u32; 2] = [20, 22];
/// In a loop without calls (`loops::call_free_cycles`) every allocatable register can hold a
/// value of the loop (24 integer, 29 float): the limit leaves two of each for linear scan's
/// packing.
const PRESSURE_LIMIT_CALL_FREE_LOOP: [u32; 2] = [22, 27];

/// Bytes a load or store accesses.
fn width(op: MOp) -> i64 {
    match op {
        MOp::Lw | MOp::Sw | MOp::Flw | MOp::Fsw => 4,
        _ => 8,
    }
}

fn is_mem(op: MOp) -> bool {
    op.is_load() || op.is_store()
}

/// A memory access as the dependence test sees it.
#[derive(Clone, Copy)]
struct Access {
    node: u32,
    store: bool,
    base: Reg,
    /// The region node that last wrote `base` before the access (`u32::MAX`: none).
    base_def: u32,
    fref: FrameRef,
    aux: u32,
    /// What a `FrameRef::None` access may touch.
    class: MemClass,
    lo: i64,
    hi: i64,
}

/// Whether two accesses provably touch different bytes.
fn disjoint(a: &Access, b: &Access, private_below: i64) -> bool {
    let overlap = a.lo < b.hi && b.lo < a.hi;
    match (a.fref, b.fref) {
        (FrameRef::None, FrameRef::None) => {
            if a.base == b.base && a.base_def == b.base_def {
                return !overlap;
            }
            if !a.class.may_overlap(b.class) {
                return true;
            }
            // After allocation: private stack areas (spills, saves) against other pointers.
            let private = |x: &Access| x.base == Reg::SP && x.lo >= 0 && x.hi <= private_below;
            (private(a) && b.base != Reg::SP) || (private(b) && a.base != Reg::SP)
        }
        // A pointer into a global or a caller's memory never reaches this frame; one into a
        // stack object only reaches that object.
        (FrameRef::None, fr) | (fr, FrameRef::None) => {
            let p = if a.fref == FrameRef::None { a } else { b };
            match p.class {
                MemClass::Global { .. } | MemClass::Param => true,
                MemClass::Stack(_) => fr != FrameRef::Object,
                MemClass::Unknown => false,
            }
        }
        (fa, fb) if fa != fb => true,
        (FrameRef::Object, FrameRef::Object) if a.aux != b.aux => true,
        _ => !overlap,
    }
}

/// The dependence graph of one region.
#[derive(Default)]
struct Dag {
    /// (source, target, latency), in the order found: by target.
    edges: Vec<(u32, u32, u32)>,
    /// Per node: the target of its last edge (`u32::MAX`: none yet) and that edge's index.
    last: Vec<(u32, u32)>,
    /// Per node: its successors with their latencies, `succ[succ_start[k]..succ_start[k + 1]]`,
    /// by target.
    succ_start: Vec<u32>,
    succ: Vec<(u32, u32)>,
    npreds: Vec<u32>,
    height: Vec<u32>,
}

impl Dag {
    /// The successors of node `k` with their latencies.
    fn succs(&self, k: usize) -> &[(u32, u32)] {
        &self.succ[self.succ_start[k] as usize..self.succ_start[k + 1] as usize]
    }
}

/// Buffers reused by every region of a function.
#[derive(Default)]
struct Scratch {
    dag: Dag,
    regs: RegRows,
    accesses: Vec<Access>,
    readers: Vec<u32>,
    pending: Vec<Reg>,
    uses: Vec<[Reg; 2]>,
    ready: Vec<u32>,
    earliest: Vec<u32>,
    npreds: Vec<u32>,
    info: Vec<machine::Info>,
}

/// Per register seen in a region: the last writer (`u32::MAX`: none) and the readers since,
/// in a row found by the register's number.
#[derive(Default)]
struct RegRows {
    /// By register number: the region (`epoch`, counted from 1) that last gave it a row, and
    /// that row.
    stamp: Vec<u32>,
    row: Vec<u32>,
    epoch: u32,
    rows: Vec<(u32, Vec<u32>)>,
    used: usize,
}

impl RegRows {
    /// Starts a region: no register has a row.
    fn clear(&mut self) {
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.stamp.iter_mut().for_each(|s| *s = 0);
            self.epoch = 1;
        }
        self.used = 0;
    }

    /// The row of `r` if the region has seen it.
    fn get(&self, r: Reg) -> Option<usize> {
        let i = r.0 as usize;
        (i < self.stamp.len() && self.stamp[i] == self.epoch).then(|| self.row[i] as usize)
    }

    /// The row of `r`, a fresh one (no writer, no readers) on its first sight.
    #[inline]
    fn row_of(&mut self, r: Reg) -> usize {
        let i = r.0 as usize;
        if i >= self.stamp.len() {
            self.stamp.resize(i + 1, 0);
            self.row.resize(i + 1, 0);
        }
        if self.stamp[i] == self.epoch {
            return self.row[i] as usize;
        }
        if self.used == self.rows.len() {
            self.rows.push((u32::MAX, Vec::new()));
        }
        let row = &mut self.rows[self.used];
        row.0 = u32::MAX;
        row.1.clear();
        self.stamp[i] = self.epoch;
        self.row[i] = self.used as u32;
        self.used += 1;
        self.used - 1
    }
}

#[cfg(test)]
fn build_dag(
    insts: &[MInst],
    uses: &[[Reg; 2]],
    private_below: i64,
    tied: &dyn Fn(Reg, Reg) -> bool,
    exit_reads: &[Reg],
) -> Dag {
    let mut s = Scratch::default();
    build_dag_into(&mut s, insts, uses, private_below, tied, exit_reads);
    s.dag
}

/// Builds the dependence graph of `insts` into `s.dag`.
fn build_dag_into(
    s: &mut Scratch,
    insts: &[MInst],
    uses: &[[Reg; 2]],
    private_below: i64,
    tied: &dyn Fn(Reg, Reg) -> bool,
    exit_reads: &[Reg],
) {
    let n = insts.len();
    let Scratch {
        dag,
        regs,
        accesses,
        readers,
        pending,
        ..
    } = s;
    let Dag {
        edges,
        last,
        succ_start,
        succ,
        npreds,
        height,
    } = dag;
    edges.clear();
    last.clear();
    last.resize(n, (u32::MAX, 0));
    npreds.clear();
    npreds.resize(n, 0);
    // Edges into node `k` are all added while `k` is visited, so one from `from` to `k`, if
    // any, is the last of `from`'s.
    let mut edge = |from: u32, to: u32, lat: u32| {
        let l = &mut last[from as usize];
        if l.0 == to {
            let e = &mut edges[l.1 as usize].2;
            *e = (*e).max(lat);
        } else {
            *l = (to, edges.len() as u32);
            edges.push((from, to, lat));
            npreds[to as usize] += 1;
        }
    };
    // Per register: the last writer and the readers since.
    regs.clear();
    accesses.clear();
    for (k, mi) in insts.iter().enumerate() {
        let k = k as u32;
        for &r in uses[k as usize]
            .iter()
            .filter(|r| r.is_some() && **r != Reg::ZERO)
        {
            let row = regs.row_of(r);
            let e = &mut regs.rows[row];
            if e.0 != u32::MAX {
                let lat = machine::latency(insts[e.0 as usize].op);
                edge(e.0, k, lat);
            }
            if e.1.last() != Some(&k) {
                e.1.push(k);
            }
        }
        if is_mem(mi.op) {
            let base_def = regs.get(mi.rs1).map_or(u32::MAX, |row| regs.rows[row].0);
            let a = Access {
                node: k,
                store: mi.op.is_store(),
                base: mi.rs1,
                base_def,
                fref: mi.fref,
                aux: mi.aux,
                class: if mi.fref == FrameRef::None {
                    MemClass::unpack(mi.aux)
                } else {
                    MemClass::Unknown
                },
                lo: mi.imm,
                hi: mi.imm.saturating_add(width(mi.op)),
            };
            for b in accesses.iter() {
                if (a.store || b.store) && !disjoint(&a, b, private_below) {
                    // Store then load: the value passes through memory; otherwise order only.
                    edge(b.node, k, b.store as u32);
                }
            }
            accesses.push(a);
        }
        let d = mi.rd;
        // `d = f(u)` with `d` and `u` joined by a copy (a loop counter and its update): the
        // other reads of `u` stay before, or both live at once and the copy cannot go.
        for &u in uses[k as usize]
            .iter()
            .filter(|u| u.is_virt() && d.is_virt())
        {
            if tied(u, d) {
                readers.clear();
                if let Some(row) = regs.get(u) {
                    readers.extend_from_slice(&regs.rows[row].1);
                }
                for &r in readers.iter().filter(|&&r| r != k) {
                    edge(r, k, 0);
                }
            }
        }
        if d.is_some() && d != Reg::ZERO {
            let row = regs.row_of(d);
            let e = &mut regs.rows[row];
            for &u in &e.1 {
                if u != k {
                    edge(u, k, 0);
                }
            }
            if e.0 != u32::MAX {
                edge(e.0, k, 1);
            }
            e.0 = k;
            e.1.clear();
        }
    }
    // Successor lists: edges by source, each list by target.
    succ_start.clear();
    succ_start.resize(n + 1, 0);
    for &(from, _, _) in edges.iter() {
        succ_start[from as usize + 1] += 1;
    }
    for k in 0..n {
        succ_start[k + 1] += succ_start[k];
    }
    succ.clear();
    succ.resize(edges.len(), (0, 0));
    // `last` now serves as each source's next free slot.
    for k in 0..n {
        last[k].1 = succ_start[k];
    }
    for &(from, to, lat) in edges.iter() {
        let at = &mut last[from as usize].1;
        succ[*at as usize] = (to, lat);
        *at += 1;
    }
    // Heights, backwards (edges go forwards). The last write of a register the branch after
    // the region reads also counts the branch, which waits for it.
    height.clear();
    height.resize(n, 0);
    pending.clear();
    pending.extend(
        exit_reads
            .iter()
            .copied()
            .filter(|&r| r.is_some() && r != Reg::ZERO),
    );
    for k in (0..n).rev() {
        let mut own = machine::latency(insts[k].op).max(1);
        if insts[k].rd.is_some() {
            if let Some(at) = pending.iter().position(|&r| r == insts[k].rd) {
                pending.swap_remove(at);
                own += 1;
            }
        }
        height[k] = succ[succ_start[k] as usize..succ_start[k + 1] as usize]
            .iter()
            .map(|&(s, l)| l + height[s as usize])
            .fold(own, u32::max);
    }
}

/// The virtual registers one block reads or writes, each with its starting `Pressure` row
/// (reads in the block, live out, live in), computed once for the block's three walks.
#[derive(Default)]
struct BlockRegs {
    list: Vec<u32>,
    /// By register index; rows of registers not in `list` are stale.
    init: Vec<(u32, bool, bool)>,
    /// `stamp[v] == epoch`: `v` is in `list`.
    stamp: Vec<u32>,
    epoch: u32,
}

impl BlockRegs {
    /// A register is live into the block when the block reads it before writing it (a write
    /// in the block ends any value live in): when it is first seen as an operand.
    fn compute(&mut self, insts: &[MInst], is_live_out: impl Fn(Reg) -> bool) {
        self.epoch += 1;
        self.list.clear();
        for mi in insts {
            for (k, r) in [mi.rs1, mi.rs2, mi.rd].into_iter().enumerate() {
                if r.is_virt() && self.stamp[r.vindex()] != self.epoch {
                    let v = r.vindex();
                    self.stamp[v] = self.epoch;
                    self.list.push(v as u32);
                    self.init[v] = (0, is_live_out(r), k < 2);
                }
            }
            for r in mi.uses().filter(|r| r.is_virt()) {
                self.init[r.vindex()].0 += 1;
            }
        }
    }
}

/// Live-register bookkeeping of one block before allocation.
struct Pressure<'a> {
    vclass: &'a [RegClass],
    limit: [u32; 2],
    /// Per virtual register (by index; meaningful for those the block reads or writes):
    /// reads left, live out, live now.
    left: &'a mut [(u32, bool, bool)],
    cur: [u32; 2],
    peak: [u32; 2],
    /// Live registers beyond the limit, summed over the instructions issued.
    excess: [u64; 2],
}

impl<'a> Pressure<'a> {
    fn class(&self, r: Reg) -> usize {
        (self.vclass[r.vindex()] == RegClass::Float) as usize
    }

    /// Starts a block: `live_in[c]` registers of class `c` are live at its top; `left`
    /// gets each register of the block from `regs`.
    fn new(
        vclass: &'a [RegClass],
        limit: [u32; 2],
        regs: &BlockRegs,
        left: &'a mut [(u32, bool, bool)],
        live_in: [u32; 2],
    ) -> Self {
        for &v in &regs.list {
            left[v as usize] = regs.init[v as usize];
        }
        Pressure {
            vclass,
            limit,
            left,
            cur: live_in,
            peak: live_in,
            excess: [0; 2],
        }
    }

    /// How issuing `mi` changes the number of live registers (for choosing, not exact).
    fn delta(&self, mi: &MInst) -> i32 {
        let mut d = 0;
        if mi.rd.is_virt() && !self.left[mi.rd.vindex()].2 {
            d += 1;
        }
        let mut seen = Reg::NONE;
        for r in mi.uses().filter(|r| r.is_virt()) {
            let (n, out, _) = self.left[r.vindex()];
            let reads = if mi.rs1 == mi.rs2 { 2 } else { 1 };
            if r != seen && n == reads && !out {
                d -= 1;
            }
            seen = r;
        }
        d
    }

    fn issue(&mut self, mi: &MInst) {
        let mut prev = Reg::NONE;
        for r in mi.uses().filter(|r| r.is_virt()) {
            let c = self.class(r);
            let e = &mut self.left[r.vindex()];
            e.0 -= 1;
            if e.0 == 0 && !e.1 && e.2 && r != prev {
                e.2 = false;
                self.cur[c] -= 1;
            }
            prev = r;
        }
        if mi.rd.is_virt() {
            let c = self.class(mi.rd);
            let e = &mut self.left[mi.rd.vindex()];
            if !e.2 {
                self.cur[c] += 1;
                self.peak[c] = self.peak[c].max(self.cur[c]);
                if e.0 == 0 && !e.1 {
                    self.cur[c] -= 1; // dead on arrival
                } else {
                    e.2 = true;
                }
            }
        }
        for c in 0..2 {
            self.excess[c] += self.cur[c].saturating_sub(self.limit[c]) as u64;
        }
    }

    fn high(&self) -> bool {
        (0..2).any(|c| self.cur[c] >= self.limit[c])
    }
}

/// Schedules one region: `order` gets the new order as indices into `insts`. Returns whether
/// the live registers came within one of `pressure`'s limit at some choice: if not, `guard`
/// changed nothing (it acts only there), and the other `guard` gives the same order from the
/// same start.
#[allow(clippy::too_many_arguments)]
fn schedule(
    s: &mut Scratch,
    insts: &[MInst],
    private_below: i64,
    tied: &dyn Fn(Reg, Reg) -> bool,
    mut pressure: Option<&mut Pressure>,
    guard: bool,
    exit_reads: &[Reg],
    order: &mut Vec<u32>,
) -> bool {
    let n = insts.len();
    order.clear();
    if n <= 1 {
        order.extend(0..n as u32);
        return false;
    }
    // Calls and returns (whose extra reads are not in the row) are never inside a region.
    let mut uses = std::mem::take(&mut s.uses);
    uses.clear();
    uses.extend(insts.iter().map(|mi| [mi.rs1, mi.rs2]));
    build_dag_into(s, insts, &uses, private_below, tied, exit_reads);
    s.uses = uses;
    let Scratch {
        dag,
        ready,
        earliest,
        npreds,
        info,
        ..
    } = s;
    let dag = &*dag;
    npreds.clear();
    npreds.extend_from_slice(&dag.npreds);
    earliest.clear();
    earliest.resize(n, 0);
    info.clear();
    info.extend(insts.iter().map(|mi| machine::info(mi.op)));
    ready.clear();
    ready.extend((0..n as u32).filter(|&k| npreds[k as usize] == 0));
    // When each unit is free again; the last entry stands for no unit and stays 0.
    let mut unit_free = [0u32; machine::NO_UNIT as usize + 1];
    let mut cycle = 0u32;
    let start_of = |k: u32, earliest: &[u32], unit_free: &[u32; 3]| {
        earliest[k as usize].max(unit_free[info[k as usize].unit as usize])
    };
    let mut near = false;
    while !ready.is_empty() {
        near = near
            || pressure
                .as_ref()
                .is_some_and(|p| (0..2).any(|c| p.cur[c] + 1 >= p.limit[c]));
        // First slot of the cycle.
        let source_order = guard && pressure.as_ref().is_some_and(|p| p.high());
        let pick = if source_order {
            *ready.iter().min().unwrap()
        } else {
            let startable = |k: u32| start_of(k, earliest, &unit_free) <= cycle;
            match best(ready, startable, dag, insts, pressure.as_deref()) {
                Some(k) => k,
                None => {
                    cycle = ready
                        .iter()
                        .map(|&k| start_of(k, earliest, &unit_free))
                        .min()
                        .unwrap();
                    continue;
                }
            }
        };
        cycle = cycle.max(start_of(pick, earliest, &unit_free));
        let mut issued = [pick, u32::MAX];
        let mut num_issued = 1;
        // Second slot: independent of the first and allowed to pair with it. Dual issue can
        // only help if both get a slot; the pressure guard still applies.
        let guarded = guard
            && pressure
                .as_deref()
                .is_some_and(|p| (0..2).any(|c| p.cur[c] + 1 >= p.limit[c]));
        if !source_order && !guarded {
            let first = &info[pick as usize];
            let pairs = |k: u32| {
                // `k` is ready, so `pick` (not yet issued) is none of its predecessors.
                let second = &info[k as usize];
                k != pick
                    && start_of(k, earliest, &unit_free) <= cycle
                    && machine::info_can_pair(first, second)
                    && (second.unit == machine::NO_UNIT || second.unit != first.unit)
            };
            if let Some(k) = best(ready, pairs, dag, insts, pressure.as_deref()) {
                issued[1] = k;
                num_issued = 2;
            }
        }
        for &k in &issued[..num_issued] {
            // The order of `ready` does not matter: every choice among it is by a distinct key.
            let at = ready.iter().position(|&r| r == k).unwrap();
            ready.swap_remove(at);
            order.push(k);
            if let Some(p) = pressure.as_deref_mut() {
                p.issue(&insts[k as usize]);
            }
            let ik = &info[k as usize];
            if ik.unit != machine::NO_UNIT {
                unit_free[ik.unit as usize] = cycle + ik.busy;
            }
            for &(s, lat) in dag.succs(k as usize) {
                let e = &mut earliest[s as usize];
                *e = (*e).max(cycle + lat);
                npreds[s as usize] -= 1;
                if npreds[s as usize] == 0 {
                    ready.push(s);
                }
            }
        }
        cycle += 1;
    }
    debug_assert_eq!(order.len(), n);
    near
}

/// The candidate to issue among those of `ready` that `ok` accepts: greatest height, then the
/// one that frees registers, then source order (`None`: `ok` accepts none). The register count
/// is looked at only between candidates of equal height.
fn best(
    ready: &[u32],
    ok: impl Fn(u32) -> bool,
    dag: &Dag,
    insts: &[MInst],
    p: Option<&Pressure>,
) -> Option<u32> {
    let mut pick: Option<(u32, u32)> = None;
    // The register count of `pick`, once asked.
    let mut pick_delta: Option<i32> = None;
    for &k in ready {
        if !ok(k) {
            continue;
        }
        let h = dag.height[k as usize];
        let Some((b, bh)) = pick else {
            pick = Some((k, h));
            continue;
        };
        if h > bh {
            pick = Some((k, h));
            pick_delta = None;
        } else if h == bh {
            match p {
                None => {
                    if k < b {
                        pick = Some((k, h));
                    }
                }
                Some(p) => {
                    let db = *pick_delta.get_or_insert_with(|| p.delta(&insts[b as usize]));
                    let dk = p.delta(&insts[k as usize]);
                    if (dk, k) < (db, b) {
                        pick = Some((k, h));
                        pick_delta = Some(dk);
                    }
                }
            }
        }
    }
    pick.map(|(k, _)| k)
}

/// The registers a conditional branch right after a region compares.
fn branch_reads(next: Option<&MInst>) -> [Reg; 2] {
    match next {
        Some(mi) if mi.op.is_branch() => [mi.rs1, mi.rs2],
        _ => [Reg::NONE; 2],
    }
}

/// Whether `mi` ends a region before allocation.
fn barrier_before_alloc(mi: &MInst) -> bool {
    mi.op.is_branch()
        || matches!(
            mi.op,
            MOp::J | MOp::Call | MOp::Ret | MOp::TailCall | MOp::Label
        )
        || [mi.rd, mi.rs1, mi.rs2].iter().any(|&r| is_allocatable(r))
}

/// Schedules every block of `mf` (virtual registers), keeping each block's register pressure
/// where it was.
pub fn before_alloc(mf: &mut MFunc) {
    let live_out = super::liveness::live_out(mf);
    SCRATCH.with(|s| before_alloc_in(mf, &live_out, &mut s.borrow_mut()));
}

thread_local! {
    /// The scheduler's buffers, kept from function to function.
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::default();
}

fn before_alloc_in(mf: &mut MFunc, live_out: &LiveOut, scratch: &mut Scratch) {
    // Pairs of virtual registers that should share a register: joined by a copy (block
    // arguments and their parameters), and, walking back from a copied value, each step of the
    // integer chain computing it (`p1 = p0 + a; p2 = p1 + b; p := p2`: the pointer walk of an
    // unrolled loop), so each link dies where the next is born, as in source order.
    let mut copies: FxHashSet<(Reg, Reg)> = FxHashSet::default();
    let mut chained: FxHashSet<Reg> = FxHashSet::default();
    for mi in &mf.insts {
        if mi.op.is_move() && mi.rd.is_virt() && mi.rs1.is_virt() {
            copies.insert((mi.rd.min(mi.rs1), mi.rd.max(mi.rs1)));
            chained.insert(mi.rd);
            chained.insert(mi.rs1);
        }
    }
    for mi in mf.insts.iter().rev() {
        let step = matches!(
            mi.op,
            MOp::Add | MOp::Addi | MOp::Addw | MOp::Addiw | MOp::Sub
        );
        if step && mi.rd.is_virt() && mi.rs1.is_virt() && chained.contains(&mi.rd) {
            copies.insert((mi.rd.min(mi.rs1), mi.rd.max(mi.rs1)));
            chained.insert(mi.rs1);
        }
    }
    // By virtual register: whether it is in some pair (most are not: no hash lookup for them).
    let mut paired = vec![false; mf.num_vregs()];
    for &(a, b) in &copies {
        paired[a.vindex()] = true;
        paired[b.vindex()] = true;
    }
    let in_pair = |r: Reg| r.is_virt() && paired[r.vindex()];
    let tied = |a: Reg, b: Reg| in_pair(a) && in_pair(b) && copies.contains(&(a.min(b), a.max(b)));
    let call_free = super::loops::call_free_cycles(mf);
    let mut new_insts = mf.insts.clone();
    let mut order = Vec::new();
    let nv = mf.num_vregs();
    let mut block_regs = BlockRegs {
        init: vec![(0, false, false); nv],
        stamp: vec![0; nv],
        ..BlockRegs::default()
    };
    let mut left = vec![(0, false, false); nv];
    // By virtual register: the block (numbered from 1) it was last found live out of.
    let mut out_stamp = vec![0u32; nv];
    // The block's new order; and per region of the latency-led order, by the position of its
    // first instruction in the block: whether it came near the pressure limit, and its order.
    let mut out: Vec<MInst> = Vec::new();
    let (mut first_near, mut first_order) = (Vec::new(), Vec::new());
    for &b in &mf.order {
        let blk = &mf.blocks[b as usize];
        let (s, e) = (blk.start as usize, blk.end as usize);
        if e - s < 2 {
            continue;
        }
        let body = &mf.insts[s..e];
        // Registers live out of the block, and (as the allocator's intervals have it) one
        // written by its last instruction, live at that instruction's write.
        let mut out_count = [0u32; 2];
        for &v in live_out.of(b as usize) {
            out_stamp[v as usize] = b + 1;
            out_count[(mf.vclass[v as usize] == RegClass::Float) as usize] += 1;
        }
        let last_def = body[body.len() - 1].rd;
        let is_out = |r: Reg| out_stamp[r.vindex()] == b + 1 || r == last_def;
        let limit = if call_free[b as usize] {
            PRESSURE_LIMIT_CALL_FREE_LOOP
        } else if blk.depth > 0 {
            PRESSURE_LIMIT_LOOP
        } else {
            PRESSURE_LIMIT
        };
        block_regs.compute(body, is_out);
        // Registers live into the block, per class: those live out of it that it neither
        // reads nor writes, and those it reads before writing.
        let mut top = out_count;
        for &v in &block_regs.list {
            let c = (mf.vclass[v as usize] == RegClass::Float) as usize;
            top[c] -= (out_stamp[v as usize] == b + 1) as u32;
            top[c] += block_regs.init[v as usize].2 as u32;
        }
        first_near.clear();
        first_near.resize(body.len(), false);
        first_order.clear();
        first_order.resize(body.len(), 0u32);
        // The source order's peak and excess, walked only when a check below needs them.
        let mut before: Option<([u32; 2], [u64; 2])> = None;
        // Two orders: one that falls back to source order at the pressure limit, and one led
        // by latency alone (which may still need no more registers than the source order: a
        // long-latency operation moved up past a chain whose temporaries it does not outlive).
        // The first that passes the check below wins, the latency-led one first.
        let mut chosen = false;
        for guard in [false, true] {
            let mut after = Pressure::new(&mf.vclass, limit, &block_regs, &mut left, top);
            out.clear();
            let mut k = 0;
            while k < body.len() {
                if barrier_before_alloc(&body[k]) {
                    after.issue(&body[k]);
                    out.push(body[k]);
                    k += 1;
                    continue;
                }
                let mut j = k;
                while j < body.len() && j - k < WINDOW && !barrier_before_alloc(&body[j]) {
                    j += 1;
                }
                let region = &body[k..j];
                // Each region starts from the same live registers in both orders (the same
                // instructions came before), so one whose latency-led order never came near
                // the limit gets the same order when watching it.
                if guard && !first_near[k] {
                    for &idx in &first_order[k..j] {
                        // As `schedule`, which leaves a region of one instruction unissued.
                        if region.len() > 1 {
                            after.issue(&region[idx as usize]);
                        }
                        out.push(region[idx as usize]);
                    }
                    k = j;
                    continue;
                }
                let exit = branch_reads(body.get(j));
                let near = schedule(
                    scratch,
                    region,
                    0,
                    &tied,
                    Some(&mut after),
                    guard,
                    &exit,
                    &mut order,
                );
                if !guard {
                    first_near[k] = near;
                    first_order[k..j].copy_from_slice(&order);
                }
                out.extend(order.iter().map(|&idx| region[idx as usize]));
                k = j;
            }
            // No point needs more registers than before (beyond the limit), and, for the
            // order that watched the pressure, the pressure beyond the limit does not spread
            // to more of the block.
            let (peak, excess) = (after.peak, after.excess);
            if guard || (0..2).any(|c| peak[c] > limit[c]) {
                before.get_or_insert_with(|| {
                    let mut p = Pressure::new(&mf.vclass, limit, &block_regs, &mut left, top);
                    body.iter().for_each(|mi| p.issue(mi));
                    (p.peak, p.excess)
                });
            }
            let limit_ok = (0..2).all(|c| {
                let (before_peak, before_excess) = before.map_or(([0; 2], [0; 2]), |b| b);
                peak[c] <= before_peak[c].max(limit[c]) && (!guard || excess[c] <= before_excess[c])
            });
            if limit_ok {
                chosen = true;
                break;
            }
        }
        if chosen {
            new_insts[s..e].copy_from_slice(&out);
        }
    }
    mf.insts = new_insts;
}

/// Schedules allocated code (physical registers, labels present). `private_below`: `sp`
/// offsets below it address only spill slots, saved registers and outgoing arguments.
pub fn after_alloc(code: &mut [MInst], private_below: i64) {
    SCRATCH.with(|s| after_alloc_in(code, private_below, &mut s.borrow_mut()));
}

fn after_alloc_in(code: &mut [MInst], private_below: i64, scratch: &mut Scratch) {
    let barrier = |mi: &MInst| {
        mi.op.is_branch()
            || matches!(
                mi.op,
                MOp::J | MOp::Call | MOp::Ret | MOp::TailCall | MOp::Label
            )
    };
    let mut k = 0;
    let mut buf: Vec<MInst> = Vec::new();
    let mut order = Vec::new();
    while k < code.len() {
        if barrier(&code[k]) {
            k += 1;
            continue;
        }
        let mut j = k;
        while j < code.len() && j - k < WINDOW && !barrier(&code[j]) {
            j += 1;
        }
        let exit = branch_reads(code.get(j));
        schedule(
            scratch,
            &code[k..j],
            private_below,
            &|_, _| false,
            None,
            false,
            &exit,
            &mut order,
        );
        buf.clear();
        buf.extend(order.iter().map(|&i| code[k + i as usize]));
        code[k..j].copy_from_slice(&buf);
        k = j;
    }
}

/// Estimated cycles of straight-line `insts` issued in order on the model (no branch costs):
/// for tests and for comparing schedules.
pub fn estimate(insts: &[MInst]) -> u32 {
    let mut ready_at: FxHashMap<Reg, u32> = FxHashMap::default();
    let mut unit_free = [0u32; 2];
    let (mut cycle, mut slot_used, mut prev) = (0u32, 0u32, None::<(MOp, Reg)>);
    for mi in insts {
        if mi.op == MOp::Label {
            continue;
        }
        let mut t = mi
            .uses()
            .map(|r| ready_at.get(&r).copied().unwrap_or(0))
            .fold(0, u32::max);
        if let Some((u, _)) = machine::unit(mi.op) {
            t = t.max(unit_free[u]);
        }
        let pairs = match prev {
            Some((op, rd)) => {
                slot_used == 1
                    && machine::can_pair(op, mi.op)
                    && !mi.uses().any(|r| r == rd)
                    && t <= cycle
            }
            None => false,
        };
        if pairs {
            slot_used = 2;
        } else {
            cycle = if prev.is_some() {
                (cycle + 1).max(t)
            } else {
                t
            };
            slot_used = 1;
        }
        if let Some((u, busy)) = machine::unit(mi.op) {
            unit_free[u] = cycle + busy;
        }
        if mi.rd.is_some() {
            ready_at.insert(mi.rd, cycle + machine::latency(mi.op));
        }
        prev = Some((mi.op, mi.rd));
    }
    if prev.is_some() {
        cycle + 1
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn x(n: u32) -> Reg {
        Reg::x(n)
    }

    #[test]
    fn fills_load_and_multiply_latency_and_keeps_dependences() {
        // a0 = lw; a1 = a0 * a0; a2 = a1 + 1 (a chain) beside an independent chain.
        let code = vec![
            MInst::load(MOp::Lw, x(10), x(12), 0),
            MInst::r(MOp::Mulw, x(11), x(10), x(10)),
            MInst::i(MOp::Addiw, x(13), x(11), 1),
            MInst::load(MOp::Lw, x(14), x(12), 4),
            MInst::i(MOp::Addiw, x(15), x(14), 1),
            MInst::i(MOp::Addi, x(16), x(17), 1),
        ];
        let mut out = code.clone();
        after_alloc(&mut out, 0);
        assert!(estimate(&out) < estimate(&code), "{out:?}");
        let pos = |mi: &MInst| out.iter().position(|m| m == mi).unwrap();
        assert!(pos(&code[0]) < pos(&code[1]) && pos(&code[1]) < pos(&code[2]));
        assert!(pos(&code[3]) < pos(&code[4]));
        // The second load issues before the multiply waits on the first.
        assert!(pos(&code[3]) < pos(&code[1]));
    }

    #[test]
    fn memory_order() {
        let st = MInst::store(MOp::Sw, x(10), x(12), 0);
        let other = MInst::load(MOp::Lw, x(11), x(12), 4); // same base, other bytes
        let same = MInst::load(MOp::Lw, x(11), x(12), 0);
        let elsewhere = MInst::load(MOp::Lw, x(11), x(13), 4); // another base: may alias
        for (load, free) in [(other, true), (same, false), (elsewhere, false)] {
            assert_eq!(independent(st, load, 0), free, "{load:?}");
        }
        // A base written between the two accesses: no longer comparable.
        let bump = MInst::i(MOp::Addi, x(12), x(12), 8);
        let insts = [st, bump, other];
        let uses: Vec<[Reg; 2]> = insts.iter().map(|m| [m.rs1, m.rs2]).collect();
        let dag = build_dag(&insts, &uses, 0, &|_, _| false, &[]);
        assert!(dag.succs(0).iter().any(|e| e.0 == 2));
        // Spill slots below the private bound do not alias pointer accesses.
        let spill = MInst::store(MOp::Sd, x(10), Reg::SP, 8);
        assert!(independent(spill, elsewhere, 16));
        assert!(!independent(spill, elsewhere, 8));
    }

    /// Whether `b` after `a` has no dependence on it (`private_below`: the spill area's end).
    fn independent(a: MInst, b: MInst, private_below: i64) -> bool {
        let dag = build_dag(
            &[a, b],
            &[[a.rs1, a.rs2], [b.rs1, b.rs2]],
            private_below,
            &|_, _| false,
            &[],
        );
        dag.npreds[1] == 0
    }

    /// Accesses through different registers are ordered unless their memory classes (the IR's
    /// base objects) cannot overlap.
    #[test]
    fn memory_classes_order_accesses() {
        let g = |id, reachable| MemClass::Global { id, reachable }.pack();
        let st = MInst::store(MOp::Sw, x(10), x(12), 0).with_frame(FrameRef::None, g(1, true));
        let cases = [
            (g(2, true), true),                // another global
            (g(1, true), false),               // the same global
            (MemClass::Param.pack(), false),   // a parameter may point into it
            (MemClass::Stack(3).pack(), true), // a stack object never is a global
            (MemClass::Unknown.pack(), false), // anything
        ];
        for (aux, free) in cases {
            let load = MInst::load(MOp::Lw, x(11), x(13), 0).with_frame(FrameRef::None, aux);
            assert_eq!(
                independent(st, load, 0),
                free,
                "{:?}",
                MemClass::unpack(aux)
            );
        }
        // A global only parameters cannot reach; a frame object against pointer classes.
        let direct = MInst::store(MOp::Sw, x(10), x(12), 0).with_frame(FrameRef::None, g(1, false));
        let param = MInst::load(MOp::Lw, x(11), x(13), 0)
            .with_frame(FrameRef::None, MemClass::Param.pack());
        let object = MInst::load(MOp::Lw, x(11), Reg::SP, 0).with_frame(FrameRef::Object, 0);
        let stack = MInst::store(MOp::Sw, x(10), x(12), 0)
            .with_frame(FrameRef::None, MemClass::Stack(3).pack());
        for (a, b, free) in [
            (direct, param, true),
            (direct, object, true),
            (stack, object, false),
        ] {
            assert_eq!(independent(a, b, 0), free, "{a:?} {b:?}");
        }
    }

    #[test]
    fn mem_class_packs_round_trip() {
        for c in [
            MemClass::Unknown,
            MemClass::Stack(0),
            MemClass::Stack(12345),
            MemClass::Global {
                id: 7,
                reachable: false,
            },
            MemClass::Global {
                id: 7,
                reachable: true,
            },
            MemClass::Param,
        ] {
            assert_eq!(MemClass::unpack(c.pack()), c);
        }
        assert_eq!(
            MemClass::Stack(u32::MAX).pack(),
            0,
            "too large to pack: unknown"
        );
    }

    #[test]
    fn pairs_only_what_the_model_pairs() {
        // Two independent loads cannot pair; a load and an ALU op can.
        let a = MInst::load(MOp::Lw, x(10), x(12), 0);
        let b = MInst::load(MOp::Lw, x(11), x(12), 4);
        let c = MInst::i(MOp::Addi, x(13), x(14), 1);
        assert_eq!(estimate(&[a, b]), 2);
        assert_eq!(estimate(&[a, c]), 1);
        let mut out = vec![a, b, c];
        after_alloc(&mut out, 0);
        assert_eq!(estimate(&out), 2);
    }
}
