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
//! as a reader of the registers it compares; ties go to the one that frees registers, then
//! source order), then a second one the model lets pair with it that does not depend on it.
//! An unpipelined unit (divider) stays busy for its occupancy.
//!
//! Before allocation it also tracks the live virtual registers per class (`Pressure`: the
//! block's live-in registers, each value from its write to its last read, live-out values to
//! the end) against a limit (`PRESSURE_LIMIT`, higher inside loops, higher still in loops
//! without calls) and a cap: the limit, or the source order's peak where that is higher. Each
//! region is first scheduled by latency alone; that order is kept when no point of it goes
//! beyond the cap. Next, one that issues in source order whenever a class is at its limit
//! (and takes no second slot within one of it) is kept if it passes the check below. Otherwise
//! orders that watch the pressure are tried (`Mode::Pressure`), from
//! ever farther below the limit: while every class has more than the margin left, by latency
//! as above; closer, the register count leads, as in LLVM's GenericScheduler (RegExcess,
//! then RegCritical, then latency) and GCC's pressure-aware scheduling: never beyond the cap
//! while something else can issue; an instruction that adds no register to a class near its
//! limit (the consumer that ends an operand's live range) before one that does, even if it
//! must wait for its operands; then one that can issue now, the one that frees most, the
//! greatest height. When every candidate adds a register, source order (whose pressure is
//! known to fit) picks among them. The second slot of a cycle near the limit takes only an
//! instruction that adds no register. A margin that would find the same classes near the
//! limit at every choice as the last margin tried gives the same order, and is not tried. An order that watched the pressure (either kind)
//! counts only if it stays within the cap and spends no more instructions beyond the limit
//! than the source order of the region; a `Mode::Pressure` one also only if it is faster
//! than the source order by `estimate`, the fastest such one kept. Failing all, the region
//! keeps its source order. So scheduling adds no spills: no point needs
//! more registers than the old order (beyond the limit), and the pressure beyond the limit
//! does not spread. Each region starts from the same live registers in any order of what
//! came before, so the choice is made region by region. A loop update joined to its value
//! by a copy (`i' = i + 1; i := i'`) stays after the value's other reads, so both keep one
//! register (see `before_alloc`).
//!
//! Cost: per region of n <= `WINDOW` instructions, the dependence graph is built once
//! (O(n^2) at worst: memory accesses against each other), then each order tried (at most
//! `MODES`; one for a region whose latency-led order fits) walks it in O(n^2) at worst (the
//! ready list, kept by height, is scanned per issue).

use super::liveness::LiveOut;
use super::minst::*;
use crate::ir::IdVec;
use rustc_hash::FxHashSet;

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
        /// [`latency`].
        pub latency: u32,
        pipes: model::Pipes,
    }

    pub fn info(op: MOp) -> Info {
        let row = model::class(op).info();
        let (unit, busy) = unit(op).map_or((NO_UNIT, 0), |(u, n)| (u as u8, n));
        Info {
            unit,
            busy,
            latency: row.latency,
            pipes: row.pipes,
        }
    }

    /// [`can_pair`] on looked-up instructions.
    pub fn info_can_pair(a: &Info, b: &Info) -> bool {
        model::pipes_can_pair(a.pipes, b.pipes)
    }
}

/// The orders `before_alloc` tries for a block, in turn.
const MODES: [Mode; 6] = [
    Mode::Latency,
    Mode::SourceAtLimit,
    Mode::Pressure(0),
    Mode::Pressure(2),
    Mode::Pressure(4),
    Mode::Pressure(u32::MAX),
];

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

/// Singly linked lists kept in one table, for lists that grow at the front only: each row is an
/// item and the row of the next item of its list. A list is named by the row of its first item
/// (`CHAIN_END`: the empty list). Clearing the table empties every list at once.
struct Chains<T> {
    rows: Vec<(T, u32)>,
}

/// The empty list of a `Chains` (and the end of every list).
const CHAIN_END: u32 = u32::MAX;

impl<T> Default for Chains<T> {
    fn default() -> Self {
        Chains { rows: Vec::new() }
    }
}

impl<T: Copy> Chains<T> {
    fn clear(&mut self) {
        self.rows.clear();
    }

    /// Puts `item` in front of the list starting at `head`; returns the list's new head.
    #[inline]
    fn push_front(&mut self, item: T, head: u32) -> u32 {
        self.rows.push((item, head));
        self.rows.len() as u32 - 1
    }

    /// The first item of the list starting at `head`, if it has one.
    #[inline]
    fn first(&self, head: u32) -> Option<T> {
        (head != CHAIN_END).then(|| self.rows[head as usize].0)
    }

    /// The first item of the list starting at `head`, to change in place.
    #[inline]
    fn first_mut(&mut self, head: u32) -> Option<&mut T> {
        match head {
            CHAIN_END => None,
            h => Some(&mut self.rows[h as usize].0),
        }
    }

    /// The items of the list starting at `head`, first to last.
    #[inline]
    fn iter(&self, mut head: u32) -> impl Iterator<Item = T> + '_ {
        std::iter::from_fn(move || {
            (head != CHAIN_END).then(|| {
                let (item, next) = self.rows[head as usize];
                head = next;
                item
            })
        })
    }
}

/// The dependence graph of one region.
#[derive(Default)]
struct Dag {
    /// (target, latency) of the edges: per source a list, newest (greatest target) first.
    edges: Chains<(u32, u32)>,
    /// Per node: the head of its list in `edges`.
    head: Vec<u32>,
    npreds: Vec<u32>,
    height: Vec<u32>,
    /// Per node: its ready-list key (see [`rank`]).
    rank: Vec<u64>,
}

impl Dag {
    /// The successors of node `k` with their latencies, the last in source order first.
    #[inline]
    fn succs(&self, k: usize) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.edges.iter(self.head[k])
    }
}

/// Buffers reused by every region of a function.
#[derive(Default)]
struct Scratch {
    dag: Dag,
    regs: RegRows,
    accesses: Vec<Access>,
    /// The stores among `accesses` (a load depends on stores only).
    stores: Vec<Access>,
    pending: Vec<Reg>,
    /// The ready nodes as `rank` keys, in increasing order.
    ready: Vec<u64>,
    /// Per node of the region: its virtual registers as `Pressure` reads them (filled by the
    /// caller before scheduling with a `Pressure`).
    vregs: Vec<VRegs>,
    earliest: Vec<u32>,
    npreds: Vec<u32>,
    info: Vec<machine::Info>,
    ready_at: ReadyAt,
    effects: EffectCache,
}

/// Per node of a region, its `Pressure::effect_of` while one order is scheduled, found again
/// only once an instruction issued since named one of its registers: near the limit every
/// ready node's effect is asked for at every choice, and most stay the same.
#[derive(Default)]
struct EffectCache {
    /// Per node: the effect, meaningful while `valid`.
    node: Vec<Effect>,
    valid: Vec<bool>,
    /// Per virtual register named in the region (by index): the head of its list in `users`.
    newest: ByReg<u32>,
    /// The nodes naming each register, newest first (see `index`).
    users: Chains<u32>,
}

impl EffectCache {
    /// Finds, per virtual register, the nodes of the region with virtual registers `vregs`
    /// that name it: before the first order of the region that reads the cache.
    fn index(&mut self, vregs: &[VRegs]) {
        self.newest.clear();
        self.users.clear();
        for (k, v) in vregs.iter().enumerate() {
            let k = k as u32;
            for r in [v.a, v.b, v.d] {
                if r == NO_VREG {
                    continue;
                }
                let newest = self.newest.entry_at(r as usize, CHAIN_END);
                if self.users.first(*newest) != Some(k) {
                    *newest = self.users.push_front(k, *newest);
                }
            }
        }
    }

    /// Starts an order of the `n` nodes `index` saw: nothing is known.
    fn start(&mut self, n: usize) {
        self.valid.clear();
        self.valid.resize(n, false);
        self.node.resize(n, Effect::default());
    }

    /// `p.effect_of(v)` for node `k` with virtual registers `v`.
    #[inline]
    fn get(&mut self, k: u32, v: &VRegs, p: &Pressure) -> Effect {
        if self.valid[k as usize] {
            return self.node[k as usize];
        }
        let e = p.effect_of(v);
        self.node[k as usize] = e;
        self.valid[k as usize] = true;
        e
    }

    /// Records that an instruction with virtual registers `v` issued (`Pressure::issue`
    /// changes the rows of its operands and its result, no others): the effects of the
    /// nodes naming them are found again.
    #[inline]
    fn issued(&mut self, v: &VRegs) {
        for r in [v.a, v.b, v.d] {
            if r == NO_VREG {
                continue;
            }
            let head = self.newest.get_at(r as usize).unwrap_or(CHAIN_END);
            for k in self.users.iter(head) {
                self.valid[k as usize] = false;
            }
        }
    }
}

/// Per register number, a value that holds for the current run only (one region, one
/// estimate): `clear` forgets every value in O(1) by advancing an epoch. Also by virtual
/// register index (`EffectCache`).
#[derive(Default)]
struct ByReg<T> {
    /// Per register number: the epoch its value is from (this run's when equal to `epoch`,
    /// counted from 1) and the value.
    slots: Vec<(u32, T)>,
    epoch: u32,
}

impl<T: Copy + Default> ByReg<T> {
    fn clear(&mut self) {
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.slots.iter_mut().for_each(|s| s.0 = 0);
            self.epoch = 1;
        }
    }

    #[inline]
    fn get(&self, r: Reg) -> Option<T> {
        self.get_at(r.0 as usize)
    }

    /// The value of `r`, `init` if it has none in this run.
    #[inline]
    fn entry(&mut self, r: Reg, init: T) -> &mut T {
        self.entry_at(r.0 as usize, init)
    }

    /// [`get`](Self::get) by the register's number (or any other index).
    #[inline]
    fn get_at(&self, i: usize) -> Option<T> {
        match self.slots.get(i) {
            Some(&(e, v)) if e == self.epoch => Some(v),
            _ => None,
        }
    }

    /// [`entry`](Self::entry) by the register's number (or any other index).
    #[inline]
    fn entry_at(&mut self, i: usize, init: T) -> &mut T {
        if i >= self.slots.len() {
            self.slots.resize(i + 1, (0, T::default()));
        }
        let slot = &mut self.slots[i];
        if slot.0 != self.epoch {
            *slot = (self.epoch, init);
        }
        &mut slot.1
    }

    #[inline]
    fn set(&mut self, r: Reg, v: T) {
        *self.entry(r, v) = v;
    }
}

/// Per register seen in a region, found by its number: the last writer (`u32::MAX`: none) and
/// the readers since. The readers of a register are a linked list in one table, newest first.
#[derive(Default)]
struct RegRows {
    /// Per register: the last writer and the head of its readers' list in `readers`.
    row: ByReg<(u32, u32)>,
    /// The readers of each register since its last write, newest first.
    readers: Chains<u32>,
}

/// A register's row before the region has seen it: no writer, no readers.
const NO_ROW: (u32, u32) = (u32::MAX, CHAIN_END);

impl RegRows {
    /// Starts a region: no register has a row.
    fn clear(&mut self) {
        self.row.clear();
        self.readers.clear();
    }
}

#[cfg(test)]
fn build_dag(
    insts: &[MInst],
    private_below: i64,
    tied: &impl Fn(Reg, Reg) -> bool,
    exit_reads: &[Reg],
) -> Dag {
    let mut s = Scratch::default();
    build_dag_into(&mut s, insts, private_below, tied, exit_reads);
    s.dag
}

/// Builds the dependence graph of `insts` into `s.dag`, and their model lookups into `s.info`.
/// Calls and returns (whose extra reads are not in `rs1`/`rs2`) are never inside a region.
fn build_dag_into(
    s: &mut Scratch,
    insts: &[MInst],
    private_below: i64,
    tied: &impl Fn(Reg, Reg) -> bool,
    exit_reads: &[Reg],
) {
    let n = insts.len();
    let Scratch {
        dag,
        regs,
        accesses,
        stores,
        pending,
        info,
        ..
    } = s;
    let Dag {
        edges,
        head,
        npreds,
        height,
        rank,
    } = dag;
    info.clear();
    info.extend(insts.iter().map(|mi| machine::info(mi.op)));
    edges.clear();
    head.clear();
    head.resize(n, CHAIN_END);
    npreds.clear();
    npreds.resize(n, 0);
    // Edges into node `k` are all added while `k` is visited, so one from `from` to `k`, if
    // any, is the newest of `from`'s.
    let mut edge = |from: u32, to: u32, lat: u32| {
        let h = head[from as usize];
        match edges.first_mut(h) {
            Some((t, l)) if *t == to => *l = (*l).max(lat),
            _ => {
                head[from as usize] = edges.push_front((to, lat), h);
                npreds[to as usize] += 1;
            }
        }
    };
    // Per register: the last writer and the readers since.
    regs.clear();
    let RegRows { row: rows, readers } = regs;
    accesses.clear();
    stores.clear();
    for (k, mi) in insts.iter().enumerate() {
        let k = k as u32;
        for r in [mi.rs1, mi.rs2] {
            if r.is_none() || r == Reg::ZERO {
                continue;
            }
            let row = rows.entry(r, NO_ROW);
            let (w, newest) = *row;
            if w != u32::MAX {
                edge(w, k, info[w as usize].latency);
            }
            // Reader `k` once, however many of its operands `r` is.
            if readers.first(newest) != Some(k) {
                row.1 = readers.push_front(k, newest);
            }
        }
        if is_mem(mi.op) {
            let base_def = rows.get(mi.rs1).map_or(u32::MAX, |(w, _)| w);
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
            // A store is ordered against every earlier access, a load against earlier stores.
            let earlier = if a.store { &accesses[..] } else { &stores[..] };
            for b in earlier {
                if !disjoint(&a, b, private_below) {
                    // Store then load: the value passes through memory; otherwise order only.
                    edge(b.node, k, b.store as u32);
                }
            }
            accesses.push(a);
            if a.store {
                stores.push(a);
            }
        }
        let d = mi.rd;
        // `d = f(u)` with `d` and `u` joined by a copy (a loop counter and its update): the
        // other reads of `u` stay before, or both live at once and the copy cannot go.
        if d.is_virt() {
            for u in [mi.rs1, mi.rs2] {
                if u.is_virt() && tied(u, d) {
                    if let Some((_, newest)) = rows.get(u) {
                        for r in readers.iter(newest).filter(|&r| r != k) {
                            edge(r, k, 0);
                        }
                    }
                }
            }
        }
        if d.is_some() && d != Reg::ZERO {
            let row = rows.entry(d, NO_ROW);
            let (w, newest) = *row;
            *row = (k, CHAIN_END);
            for u in readers.iter(newest).filter(|&u| u != k) {
                edge(u, k, 0);
            }
            if w != u32::MAX {
                edge(w, k, 1);
            }
        }
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
        let mut own = info[k].latency.max(1);
        if insts[k].rd.is_some() {
            if let Some(at) = pending.iter().position(|&r| r == insts[k].rd) {
                pending.swap_remove(at);
                own += 1;
            }
        }
        height[k] = edges
            .iter(head[k])
            .map(|(s, l)| l + height[s as usize])
            .fold(own, u32::max);
    }
    rank.clear();
    rank.extend(
        height
            .iter()
            .enumerate()
            .map(|(k, &h)| ((u32::MAX - h) as u64) << 32 | k as u64),
    );
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

/// No virtual register (a `VRegs` field).
const NO_VREG: u32 = u32::MAX;

/// The virtual registers of one instruction as `Pressure::effect_of` reads them, looked up once
/// per region: each register's index (`NO_VREG`: not a virtual register) and class.
#[derive(Clone, Copy)]
struct VRegs {
    /// `rs1`, and how often the instruction reads it (2 when `rs2` is the same register).
    a: u32,
    a_class: u8,
    a_reads: u32,
    /// `rs2`, unless it is `rs1`.
    b: u32,
    b_class: u8,
    /// `rd`, and whether `rs1` and `rs2` are the same register as it.
    d: u32,
    d_class: u8,
    d_is_a: bool,
    d_is_b: bool,
}

/// Live-register bookkeeping of one block before allocation.
struct Pressure<'a> {
    vclass: &'a IdVec<VReg, RegClass>,
    limit: [u32; 2],
    /// Per class: the most live registers a new order may reach (the limit, or the source
    /// order's peak when that is higher).
    cap: [u32; 2],
    /// Per virtual register (by index; meaningful for those the block reads or writes):
    /// reads left, live out, live now.
    left: &'a mut [(u32, bool, bool)],
    cur: [u32; 2],
    peak: [u32; 2],
    /// Live registers beyond the limit, summed over the instructions issued.
    excess: [u64; 2],
}

/// The counts of a `Pressure` at some point (see `Pressure::save`).
#[derive(Clone, Copy)]
struct PressureAt {
    cur: [u32; 2],
    peak: [u32; 2],
    excess: [u64; 2],
}

/// What issuing one instruction does to the live registers, per class.
#[derive(Clone, Copy, Default)]
struct Effect {
    /// The change once it has issued.
    net: [i32; 2],
    /// The change at its write, where the count peaks: operands it reads last are dead, its
    /// result is live.
    top: [i32; 2],
}

impl<'a> Pressure<'a> {
    #[inline]
    fn class(&self, r: Reg) -> usize {
        (self.vclass[r.as_vreg()] == RegClass::Float) as usize
    }

    /// Starts a block: `live_in[c]` registers of class `c` are live at its top; `left`
    /// gets each register of the block from `regs`.
    fn new(
        vclass: &'a IdVec<VReg, RegClass>,
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
            cap: limit,
            left,
            cur: live_in,
            peak: live_in,
            excess: [0; 2],
        }
    }

    /// The virtual registers of `mi` (see `effect_of`).
    fn vregs(&self, mi: &MInst) -> VRegs {
        let (a, b, d) = (mi.rs1, mi.rs2, mi.rd);
        let index = |r: Reg| {
            if r.is_virt() {
                r.vindex() as u32
            } else {
                NO_VREG
            }
        };
        let class = |r: Reg| if r.is_virt() { self.class(r) as u8 } else { 0 };
        let b_own = b.is_virt() && b != a;
        VRegs {
            a: index(a),
            a_class: class(a),
            a_reads: 1 + (a == b) as u32,
            b: if b_own { index(b) } else { NO_VREG },
            b_class: if b_own { class(b) } else { 0 },
            d: index(d),
            d_class: class(d),
            d_is_a: a == d,
            d_is_b: b == d,
        }
    }

    /// What issuing an instruction with virtual registers `v` (`vregs`) now does to the live
    /// registers (exactly what `issue` would do).
    #[inline]
    fn effect_of(&self, v: &VRegs) -> Effect {
        let mut e = Effect::default();
        // Whether the instruction reads `r`, `reads` times, for the last time.
        let dies = |r: u32, reads: u32| {
            let (n, out, live) = self.left[r as usize];
            n == reads && !out && live
        };
        let a_dies = v.a != NO_VREG && dies(v.a, v.a_reads);
        let b_dies = v.b != NO_VREG && dies(v.b, 1);
        if a_dies {
            e.net[v.a_class as usize] -= 1;
            e.top[v.a_class as usize] -= 1;
        }
        if b_dies {
            e.net[v.b_class as usize] -= 1;
            e.top[v.b_class as usize] -= 1;
        }
        if v.d != NO_VREG {
            let (n, out, live) = self.left[v.d as usize];
            if !live || (a_dies && v.d_is_a) || (b_dies && v.d_is_b) {
                let c = v.d_class as usize;
                e.top[c] += 1;
                // Dead on arrival: live only at its write.
                let reads_after = n - v.d_is_a as u32 - v.d_is_b as u32;
                if reads_after > 0 || out {
                    e.net[c] += 1;
                }
            }
        }
        e
    }

    /// How issuing an instruction with virtual registers `v` changes the number of live
    /// registers, both classes together.
    #[inline]
    fn delta(&self, v: &VRegs) -> i32 {
        let e = self.effect_of(v);
        e.net[0] + e.net[1]
    }

    fn issue(&mut self, mi: &MInst) {
        for r in mi.uses().filter(|r| r.is_virt()) {
            let e = &mut self.left[r.vindex()];
            e.0 -= 1;
            if e.0 == 0 && !e.1 && e.2 {
                e.2 = false;
                let c = self.class(r);
                self.cur[c] -= 1;
            }
        }
        if mi.rd.is_virt() {
            self.define(mi.rd.vindex(), self.class(mi.rd));
        }
        self.count_excess();
    }

    /// A write of virtual register `v` of class `c`: live from here, unless nothing reads it
    /// later and it is not live out (then live at its write only).
    #[inline]
    fn define(&mut self, v: usize, c: usize) {
        let e = &mut self.left[v];
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

    /// Adds the live registers beyond the limit at this point, per class.
    #[inline]
    fn count_excess(&mut self) {
        for c in 0..2 {
            self.excess[c] += self.cur[c].saturating_sub(self.limit[c]) as u64;
        }
    }

    /// [`issue`](Self::issue) of an instruction with virtual registers `v` (`vregs`). Its
    /// operands' rows count its reads of them, so a register it reads twice dies only at the
    /// second.
    #[inline]
    fn issue_vregs(&mut self, v: &VRegs) {
        for (r, c, reads) in [(v.a, v.a_class, v.a_reads), (v.b, v.b_class, 1)] {
            if r != NO_VREG {
                let e = &mut self.left[r as usize];
                e.0 -= reads;
                if e.0 == 0 && !e.1 && e.2 {
                    e.2 = false;
                    self.cur[c as usize] -= 1;
                }
            }
        }
        if v.d != NO_VREG {
            self.define(v.d as usize, v.d_class as usize);
        }
        self.count_excess();
    }

    /// The state before `region` issues, to try orders of it from (`restore`): the counts
    /// here, the rows of its registers into `rows`.
    fn save(&self, region: &[MInst], rows: &mut Vec<(u32, (u32, bool, bool))>) -> PressureAt {
        rows.clear();
        for mi in region {
            for r in [mi.rd, mi.rs1, mi.rs2] {
                if r.is_virt() {
                    rows.push((r.vindex() as u32, self.left[r.vindex()]));
                }
            }
        }
        PressureAt {
            cur: self.cur,
            peak: self.peak,
            excess: self.excess,
        }
    }

    /// The counts now (the rows are the caller's to keep).
    fn at(&self) -> PressureAt {
        PressureAt {
            cur: self.cur,
            peak: self.peak,
            excess: self.excess,
        }
    }

    /// Back to a state `save` kept.
    fn restore(&mut self, at: PressureAt, rows: &[(u32, (u32, bool, bool))]) {
        for &(v, row) in rows {
            self.left[v as usize] = row;
        }
        self.cur = at.cur;
        self.peak = at.peak;
        self.excess = at.excess;
    }

    /// Registers left per class before the limit (negative: beyond it); the least of the two
    /// classes.
    fn room(&self) -> i64 {
        (0..2)
            .map(|c| self.limit[c] as i64 - self.cur[c] as i64)
            .min()
            .unwrap()
    }

    /// Whether class `c` is within `margin` of its limit.
    fn tight(&self, c: usize, margin: u32) -> bool {
        self.cur[c].saturating_add(margin) >= self.limit[c]
    }
}

/// How `schedule` weighs the live registers before allocation.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    /// Greatest height first; the register count only breaks ties of height.
    Latency,
    /// As `Latency` while every class has more than `margin` registers left before its limit;
    /// closer, the register count first (see [`best_tight`]).
    Pressure(u32),
    /// As `Latency` below the limit; at it, source order (and no second slot within one of
    /// it).
    SourceAtLimit,
}

/// Schedules one region: `order` gets the new order as indices into `insts`. Returns the
/// fewest registers left before `pressure`'s limit in a class at any choice that class was not
/// within the margin at (`i64::MAX` without `pressure`, for `Mode::SourceAtLimit`, whose
/// caller does not ask, or without such a choice; every class at every choice for
/// `Mode::Latency`): a `Mode::Pressure` whose margin is below it and not
/// below `mode`'s finds the same classes near the limit at every choice, makes every choice
/// as `mode` did, and gives the same order from the same start.
#[allow(clippy::too_many_arguments)]
fn schedule(
    s: &mut Scratch,
    insts: &[MInst],
    private_below: i64,
    tied: &impl Fn(Reg, Reg) -> bool,
    pressure: Option<&mut Pressure>,
    mode: Mode,
    exit_reads: &[Reg],
    order: &mut Vec<u32>,
) -> i64 {
    let n = insts.len();
    order.clear();
    if n <= 1 {
        order.extend(0..n as u32);
        return i64::MAX;
    }
    prepare(s, insts, private_below, tied, exit_reads);
    schedule_prepared(s, insts, pressure, mode, order)
}

/// Builds the dependence graph of a region of at least two instructions and looks up its
/// instructions in the model, into `s`: what every order of the region is scheduled from
/// (`schedule_prepared`).
fn prepare(
    s: &mut Scratch,
    insts: &[MInst],
    private_below: i64,
    tied: &impl Fn(Reg, Reg) -> bool,
    exit_reads: &[Reg],
) {
    build_dag_into(s, insts, private_below, tied, exit_reads);
}

/// [`schedule`] of a region `prepare` has put into `s`. With a `pressure`, `s.vregs` holds
/// the virtual registers of the region's instructions, and for a `Mode::Pressure`,
/// `s.effects` has indexed them (`EffectCache::index`).
fn schedule_prepared(
    s: &mut Scratch,
    insts: &[MInst],
    mut pressure: Option<&mut Pressure>,
    mode: Mode,
    order: &mut Vec<u32>,
) -> i64 {
    let n = insts.len();
    order.clear();
    let Scratch {
        dag,
        ready,
        earliest,
        npreds,
        info,
        vregs,
        effects,
        ..
    } = s;
    let dag = &*dag;
    let vregs = &vregs[..if pressure.is_some() { n } else { 0 }];
    let margin = match mode {
        Mode::Latency | Mode::SourceAtLimit => None,
        Mode::Pressure(m) => Some(m),
    };
    // The effect cache serves `best_tight`, which only an order with a margin calls.
    let cached = pressure.is_some() && margin.is_some();
    if cached {
        effects.start(n);
    }
    npreds.clear();
    npreds.extend_from_slice(&dag.npreds);
    earliest.clear();
    earliest.resize(n, 0);
    // `ready` is kept by height, greatest first, then by source order: the order `best`
    // ranks candidates in.
    let rank = |k: u32| rank(dag, k);
    ready.clear();
    ready.extend((0..n as u32).filter(|&k| npreds[k as usize] == 0).map(rank));
    ready.sort_unstable();
    // When each unit is free again; the last entry stands for no unit and stays 0.
    let mut unit_free = [0u32; machine::NO_UNIT as usize + 1];
    let mut cycle = 0u32;
    let start_of = |k: u32, earliest: &[u32], unit_free: &[u32; 3]| {
        earliest[k as usize].max(unit_free[info[k as usize].unit as usize])
    };
    let source_at_limit = mode == Mode::SourceAtLimit;
    // The classes within the margin of their limit now (none: schedule by latency).
    let tight_classes = |p: Option<&Pressure>| -> [bool; 2] {
        match (p, margin) {
            (Some(p), Some(m)) => [p.tight(0, m), p.tight(1, m)],
            _ => [false; 2],
        }
    };
    let mut least_room = i64::MAX;
    // The fewest registers left in a class not within the margin now, if less than `least`
    // (not followed for `Mode::SourceAtLimit`).
    let loose_room = |p: Option<&Pressure>, tight: [bool; 2], least: i64| match p {
        Some(p) if !source_at_limit => (0..2)
            .filter(|&c| !tight[c])
            .map(|c| p.limit[c] as i64 - p.cur[c] as i64)
            .fold(least, i64::min),
        _ => least,
    };
    while !ready.is_empty() {
        // First slot of the cycle.
        let tight = tight_classes(pressure.as_deref());
        least_room = loose_room(pressure.as_deref(), tight, least_room);
        // The pick and its place in `ready`.
        let (at, pick) = if source_at_limit && pressure.as_deref().is_some_and(|p| p.room() <= 0) {
            first_in_source_order(ready)
        } else if tight.contains(&true) {
            let p = pressure.as_deref().unwrap();
            let startable = |k: u32| start_of(k, earliest, &unit_free) <= cycle;
            let (at, k, _) =
                best_tight(ready, |_| true, startable, p, vregs, effects, tight).unwrap();
            (at, k)
        } else {
            let startable = |k: u32| start_of(k, earliest, &unit_free) <= cycle;
            match best(ready, startable, pressure.as_deref(), vregs) {
                Some(found) => found,
                None => {
                    cycle = ready
                        .iter()
                        .map(|&r| start_of(node(r), earliest, &unit_free))
                        .min()
                        .unwrap();
                    continue;
                }
            }
        };
        cycle = cycle.max(start_of(pick, earliest, &unit_free));
        ready.remove(at);
        if let Some(p) = pressure.as_deref_mut() {
            p.issue_vregs(&vregs[pick as usize]);
            if cached {
                effects.issued(&vregs[pick as usize]);
            }
        }
        // Second slot: independent of the first and allowed to pair with it. Near the limit,
        // only an instruction that does not add to the tight classes' live registers.
        let first = &info[pick as usize];
        let pairs = |k: u32| {
            // `k` is ready, so `pick` (not yet released) is none of its predecessors.
            let second = &info[k as usize];
            machine::info_can_pair(first, second)
                && (second.unit == machine::NO_UNIT || second.unit != first.unit)
                && earliest[k as usize].max(unit_free[second.unit as usize]) <= cycle
        };
        let tight = tight_classes(pressure.as_deref());
        least_room = loose_room(pressure.as_deref(), tight, least_room);
        let second = if source_at_limit && pressure.as_deref().is_some_and(|p| p.room() <= 1) {
            None
        } else if tight.contains(&true) {
            let p = pressure.as_deref().unwrap();
            best_tight(ready, pairs, |_| true, p, vregs, effects, tight)
                .filter(|&(_, _, key)| !key.over() && !key.grows())
                .map(|(at, k, _)| (at, k))
        } else {
            best(ready, pairs, pressure.as_deref(), vregs)
        };
        let mut issued = [pick, u32::MAX];
        let mut num_issued = 1;
        if let Some((at, k)) = second {
            ready.remove(at);
            if let Some(p) = pressure.as_deref_mut() {
                p.issue_vregs(&vregs[k as usize]);
                if cached {
                    effects.issued(&vregs[k as usize]);
                }
            }
            issued[1] = k;
            num_issued = 2;
        }
        for &k in &issued[..num_issued] {
            order.push(k);
            let ik = &info[k as usize];
            if ik.unit != machine::NO_UNIT {
                unit_free[ik.unit as usize] = cycle + ik.busy;
            }
            for (s, lat) in dag.succs(k as usize) {
                let e = &mut earliest[s as usize];
                *e = (*e).max(cycle + lat);
                npreds[s as usize] -= 1;
                if npreds[s as usize] == 0 {
                    // Released nodes are mostly low: their place is found from the end.
                    let key = rank(s);
                    let mut at = ready.len();
                    while at > 0 && ready[at - 1] > key {
                        at -= 1;
                    }
                    ready.insert(at, key);
                }
            }
        }
        cycle += 1;
    }
    debug_assert_eq!(order.len(), n);
    least_room
}

/// The ready list's key of node `k`: by height, greatest first, then by source order, in
/// increasing order of keys (the height, complemented, above the node). Computed with the
/// heights.
#[inline]
fn rank(dag: &Dag, k: u32) -> u64 {
    dag.rank[k as usize]
}

/// The node of a ready list key (`rank`).
#[inline]
fn node(key: u64) -> u32 {
    key as u32
}

/// The candidate to issue among those of `ready` that `ok` accepts, with its place in `ready`:
/// greatest height, then the one that frees registers, then source order (`None`: `ok` accepts
/// none). The register count
/// is looked at only between candidates of equal height. `ready` holds `rank` keys in
/// increasing order: by height, greatest first, then by source order. `vregs`: the virtual
/// registers of each node (with `p`).
fn best(
    ready: &[u64],
    ok: impl Fn(u32) -> bool,
    p: Option<&Pressure>,
    vregs: &[VRegs],
) -> Option<(usize, u32)> {
    let start = ready.iter().position(|&r| ok(node(r)))?;
    let first = ready[start];
    let Some(p) = p else {
        return Some((start, node(first)));
    };
    let h = first >> 32;
    let (mut at, mut pick) = (start, node(first));
    // The register count of `pick`, once asked.
    let mut pick_delta: Option<i32> = None;
    for (i, &r) in ready.iter().enumerate().skip(start + 1) {
        if r >> 32 != h {
            break;
        }
        let k = node(r);
        if !ok(k) {
            continue;
        }
        let db = *pick_delta.get_or_insert_with(|| p.delta(&vregs[pick as usize]));
        let dk = p.delta(&vregs[k as usize]);
        if (dk, k) < (db, pick) {
            (at, pick) = (i, k);
            pick_delta = Some(dk);
        }
    }
    Some((at, pick))
}

/// The node of `ready` first in source order, with its place in `ready`.
fn first_in_source_order(ready: &[u64]) -> (usize, u32) {
    let mut found = (0, node(ready[0]));
    for (i, &r) in ready.iter().enumerate().skip(1) {
        if node(r) < found.1 {
            found = (i, node(r));
        }
    }
    found
}

/// How a candidate ranks near the limit, smaller is better, packed into one integer so that
/// comparing two is one comparison. Field by field, most significant first:
/// - it takes some class beyond its cap (bit 127, `over`);
/// - it adds to the live registers of the tight classes (bit 126, `grows`);
/// - if it grows: its source position (bits 64..96): among instructions that all add a
///   register, source order, whose pressure is known to fit (the position is unique, so
///   nothing after it counts);
/// - otherwise: it cannot issue this cycle (bit 96), then its change to the live registers of
///   the tight classes (bits 64..96, offset to be unsigned), then its `rank` (bits 0..64: the
///   greatest height, then source order).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
struct TightKey(u128);

impl TightKey {
    const OVER: u128 = 1 << 127;
    const GROWS: u128 = 1 << 126;

    fn new(over: bool, change: i32, waits: impl FnOnce() -> bool, rank: u64) -> TightKey {
        let over = if over { Self::OVER } else { 0 };
        if change > 0 {
            TightKey(over | Self::GROWS | (node(rank) as u128) << 64)
        } else {
            let change = (change as i64 - i32::MIN as i64) as u128;
            TightKey(over | (waits() as u128) << 96 | change << 64 | rank as u128)
        }
    }

    fn over(self) -> bool {
        self.0 & Self::OVER != 0
    }

    fn grows(self) -> bool {
        self.0 & Self::GROWS != 0
    }
}

/// The candidate to issue near the limit among those of `ready` that `ok` accepts, with its
/// place in `ready` and its key (`None`: `ok` accepts none): first never beyond the cap, then one that does not add to
/// the live registers of the `tight` classes (waiting for it if need be), then one that can
/// issue now, then the one that frees most, then greatest height, then source order.
fn best_tight(
    ready: &[u64],
    ok: impl Fn(u32) -> bool,
    startable: impl Fn(u32) -> bool,
    p: &Pressure,
    vregs: &[VRegs],
    effects: &mut EffectCache,
    tight: [bool; 2],
) -> Option<(usize, u32, TightKey)> {
    // Per class: 1 if tight, else 0 (the change counts tight classes only), and the registers
    // left before the cap (a candidate whose `top` exceeds them goes beyond it).
    let weight = tight.map(i32::from);
    let room = [0, 1].map(|c| p.cap[c] as i32 - p.cur[c] as i32);
    let mut pick: Option<(usize, u32, TightKey)> = None;
    for (i, &r) in ready.iter().enumerate() {
        let k = node(r);
        if !ok(k) {
            continue;
        }
        let e = effects.get(k, &vregs[k as usize], p);
        let change = e.net[0] * weight[0] + e.net[1] * weight[1];
        let over = e.top[0] > room[0] || e.top[1] > room[1];
        let key = TightKey::new(over, change, || !startable(k), r);
        if pick.is_none_or(|(_, _, b)| key < b) {
            pick = Some((i, k, key));
        }
    }
    pick
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
/// where it was. `live_out`: the registers live out of each block (`liveness::live_out`), the
/// same after as before.
pub fn before_alloc(mf: &mut MFunc, live_out: &LiveOut) {
    SCRATCH.with(|s| before_alloc_in(mf, live_out, &mut s.borrow_mut()));
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
    // The block's new order, and the live-register rows a region's trial orders start from.
    let mut out: Vec<MInst> = Vec::new();
    let mut saved = Vec::new();
    let (mut trial, mut best_order, mut best_rows) = (Vec::new(), Vec::new(), Vec::new());
    // The source order's pressure beyond the limit before each instruction of the block.
    let mut source_excess_at: Vec<[u64; 2]> = Vec::new();
    for &b in &mf.order {
        let blk = &mf.blocks[b];
        let (s, e) = (blk.start as usize, blk.end as usize);
        if e - s < 2 {
            continue;
        }
        let body = &mf.insts[s..e];
        // Registers live out of the block, and (as the allocator's intervals have it) one
        // written by its last instruction, live at that instruction's write.
        let mut out_count = [0u32; 2];
        // Stamps count blocks from 1 (0: none yet).
        let stamp = b.index() as u32 + 1;
        for &v in live_out.of(b) {
            out_stamp[v as usize] = stamp;
            out_count[(mf.vclass[VReg::new(v as usize)] == RegClass::Float) as usize] += 1;
        }
        let last_def = body[body.len() - 1].rd;
        let is_out = |r: Reg| out_stamp[r.vindex()] == stamp || r == last_def;
        let limit = if call_free[b] {
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
            let c = (mf.vclass[VReg::new(v as usize)] == RegClass::Float) as usize;
            top[c] -= (out_stamp[v as usize] == stamp) as u32;
            top[c] += block_regs.init[v as usize].2 as u32;
        }
        // The source order's peak: a new order may reach the limit or that peak, whichever
        // is higher, and no more.
        let before_peak = {
            let mut p = Pressure::new(&mf.vclass, limit, &block_regs, &mut left, top);
            source_excess_at.clear();
            source_excess_at.push(p.excess);
            for mi in body {
                p.issue(mi);
                source_excess_at.push(p.excess);
            }
            p.peak
        };
        let mut after = Pressure::new(&mf.vclass, limit, &block_regs, &mut left, top);
        after.cap = [0, 1].map(|c| before_peak[c].max(limit[c]));
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
            if region.len() == 1 {
                after.issue(&region[0]);
                out.push(region[0]);
                k = j;
                continue;
            }
            // Each region starts from the same live registers in every order (the same
            // instructions came before), so orders are chosen region by region: the latency-led
            // one if it passes the check below, else the fastest passing one that watched the
            // pressure, else source order.
            let start = after.save(region, &mut saved);
            // The source order's pressure beyond the limit in this region, found before the
            // first order that is checked against it.
            let mut source_excess = None;
            let exit = branch_reads(body.get(j));
            let mut latency_room = i64::MAX;
            // What the last `Mode::Pressure` order tried returned (`i64::MIN`: none tried).
            let mut pressure_room = i64::MIN;
            let mut chosen = None;
            // The fastest passing order watching the pressure so far (source order to begin
            // with), by `estimate`, and the state after it.
            let mut best_cycles = u32::MAX;
            let mut best_end = start;
            prepare(scratch, region, 0, &tied, &exit);
            scratch.vregs.clear();
            scratch
                .vregs
                .extend(region.iter().map(|mi| after.vregs(mi)));
            // Whether `scratch.effects` has indexed the region (for the orders with a margin).
            let mut indexed = false;
            for mode in MODES {
                // A mode whose margin the latency-led order never came within acts only as
                // `Mode::Latency`: the same order, which failed.
                let acts_below = match mode {
                    Mode::Latency => i64::MAX,
                    Mode::SourceAtLimit => 1,
                    Mode::Pressure(m) => m as i64,
                };
                if latency_room > acts_below {
                    continue;
                }
                // A greater margin that the last `Mode::Pressure` order never came within at a
                // choice it made by latency gives that same order, which did not win.
                if matches!(mode, Mode::Pressure(_)) && pressure_room > acts_below {
                    continue;
                }
                // A region starts from the same live registers as in source order, so its
                // source order adds what it added there.
                if mode != Mode::Latency && source_excess.is_none() {
                    source_excess = Some([0, 1].map(|c| {
                        start.excess[c] + (source_excess_at[j][c] - source_excess_at[k][c])
                    }));
                }
                if matches!(mode, Mode::Pressure(_)) && !indexed {
                    scratch.effects.index(&scratch.vregs);
                    indexed = true;
                }
                let room = schedule_prepared(scratch, region, Some(&mut after), mode, &mut order);
                // No point needs more registers than the cap, and, for an order that watched
                // the pressure, the pressure beyond the limit does not spread to more of the
                // region than in source order. The latency-led order, else the one issuing in
                // source order at the limit, wins if it passes; else the fastest passing
                // `Mode::Pressure` order.
                let ok = (0..2).all(|c| {
                    after.peak[c] <= after.cap[c]
                        && source_excess.is_none_or(|x: [u64; 2]| after.excess[c] <= x[c])
                });
                if ok && matches!(mode, Mode::Latency | Mode::SourceAtLimit) {
                    chosen = Some(mode);
                    break;
                }
                if ok {
                    if best_cycles == u32::MAX {
                        best_cycles = estimate_with(region, &mut scratch.ready_at);
                    }
                    trial.clear();
                    trial.extend(order.iter().map(|&idx| region[idx as usize]));
                    let cycles = estimate_with(&trial, &mut scratch.ready_at);
                    if cycles < best_cycles {
                        best_cycles = cycles;
                        best_end = after.at();
                        chosen = Some(mode);
                        best_order.clear();
                        best_order.extend_from_slice(&order);
                        best_rows.clear();
                        best_rows.extend(saved.iter().map(|&(v, _)| (v, after.left[v as usize])));
                    }
                }
                match mode {
                    Mode::Latency => latency_room = room,
                    Mode::Pressure(_) => pressure_room = room,
                    Mode::SourceAtLimit => {}
                }
                after.restore(start, &saved);
            }
            if chosen.is_some_and(|m| matches!(m, Mode::Pressure(_))) {
                after.restore(best_end, &best_rows);
                order.clear();
                order.extend_from_slice(&best_order);
            }
            match chosen {
                Some(_) => out.extend(order.iter().map(|&idx| region[idx as usize])),
                None => {
                    region.iter().for_each(|mi| after.issue(mi));
                    out.extend_from_slice(region);
                }
            }
            k = j;
        }
        new_insts[s..e].copy_from_slice(&out);
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
            Mode::Latency,
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
    estimate_with(insts, &mut ReadyAt::default())
}

/// Per register number: the cycle its value is ready (none: 0, not yet written), for one
/// `estimate` at a time.
type ReadyAt = ByReg<u32>;

/// [`estimate`] with its table of ready cycles from the caller.
fn estimate_with(insts: &[MInst], ready_at: &mut ReadyAt) -> u32 {
    ready_at.clear();
    let mut unit_free = [0u32; 2];
    let (mut cycle, mut slot_used, mut prev) = (0u32, 0u32, None::<(MOp, Reg)>);
    for mi in insts {
        if mi.op == MOp::Label {
            continue;
        }
        let mut t = mi
            .uses()
            .map(|r| ready_at.get(r).unwrap_or(0))
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
            ready_at.set(mi.rd, cycle + machine::latency(mi.op));
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
        let dag = build_dag(&insts, 0, &|_, _| false, &[]);
        assert!(dag.succs(0).any(|(s, _)| s == 2));
        // Spill slots below the private bound do not alias pointer accesses.
        let spill = MInst::store(MOp::Sd, x(10), Reg::SP, 8);
        assert!(independent(spill, elsewhere, 16));
        assert!(!independent(spill, elsewhere, 8));
    }

    /// Whether `b` after `a` has no dependence on it (`private_below`: the spill area's end).
    fn independent(a: MInst, b: MInst, private_below: i64) -> bool {
        let dag = build_dag(&[a, b], private_below, &|_, _| false, &[]);
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

    /// The most virtual registers live at once in straight-line `insts` (each from its write
    /// to its last read).
    fn max_live(insts: &[MInst]) -> usize {
        let last = |r: Reg| insts.iter().rposition(|mi| mi.uses().any(|u| u == r));
        let mut live: Vec<Reg> = Vec::new();
        let mut peak = 0;
        for (k, mi) in insts.iter().enumerate() {
            live.retain(|&r| last(r).is_some_and(|l| l > k));
            if mi.rd.is_virt() {
                live.push(mi.rd);
            }
            peak = peak.max(live.len());
        }
        peak
    }

    /// Twenty chains, each a load squared into a product chain (three-cycle multiplies) and a
    /// second load summed. By latency alone the first loads all run ahead of the product
    /// chain and need more registers than the limit; at the limit the scheduler issues the
    /// multiplies and adds that end live ranges (the second load of the oldest chain, first
    /// in source order, would open one), so the block is still scheduled, faster than source
    /// order and within the limit.
    #[test]
    fn near_the_limit_ends_live_ranges_first() {
        let chains = 20;
        let mut vregs = 0;
        let mut fresh = || {
            vregs += 1;
            Reg::vreg(vregs - 1)
        };
        let base = fresh();
        let (mut prod, mut sum) = (fresh(), fresh());
        let mut insts = vec![
            MInst::unary(MOp::Mv, base, Reg::A0),
            MInst::li(prod, 1),
            MInst::li(sum, 0),
        ];
        for i in 0..chains {
            let (z, x, y, p, q) = (fresh(), fresh(), fresh(), fresh(), fresh());
            insts.extend([
                MInst::load(MOp::Lw, z, base, 4000 + 4 * i),
                MInst::load(MOp::Lw, x, base, 4 * i),
                MInst::r(MOp::Mulw, y, x, x),
                MInst::r(MOp::Mulw, p, prod, y),
                MInst::r(MOp::Addw, q, sum, z),
            ]);
            (prod, sum) = (p, q);
        }
        let result = fresh();
        insts.push(MInst::r(MOp::Addw, result, prod, sum));
        insts.push(MInst::unary(MOp::Mv, Reg::A0, result));
        insts.push(MInst::new(MOp::Ret, Reg::NONE, Reg::NONE, Reg::NONE, 0));
        let n = insts.len() as u32;
        let mut mf = MFunc {
            sym: "f".into(),
            label: "f".into(),
            insts,
            blocks: IdVec::from_vec(vec![MBlockData {
                start: 0,
                end: n,
                succs: vec![],
                depth: 0,
            }]),
            order: vec![MBlock::new(0)],
            vclass: IdVec::filled(vregs, RegClass::Int),
            remat: IdVec::filled(vregs, None),
            ..Default::default()
        };
        let source = mf.insts.clone();
        // The premise: by latency alone the region needs more than the limit.
        let region = &source[1..source.len() - 2];
        let mut order = Vec::new();
        let mut scratch = Scratch::default();
        schedule(
            &mut scratch,
            region,
            0,
            &|_, _| false,
            None,
            Mode::Latency,
            &[],
            &mut order,
        );
        let latency: Vec<MInst> = order.iter().map(|&k| region[k as usize]).collect();
        let limit = PRESSURE_LIMIT[0] as usize;
        assert!(max_live(&latency) > limit + 1, "{}", max_live(&latency));
        assert!(max_live(&source) <= limit);
        let live_out = super::super::liveness::live_out(&mf);
        before_alloc(&mut mf, &live_out);
        // `base` lives throughout; the rest within the limit.
        assert!(max_live(&mf.insts) <= limit, "{}", max_live(&mf.insts));
        assert!(
            estimate(&mf.insts) < estimate(&source),
            "{} vs {}",
            estimate(&mf.insts),
            estimate(&source)
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
