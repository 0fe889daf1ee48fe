//! Peephole clean-up of allocated code (physical registers, labels present).
//!
//! - moves to self (`mv a0, a0`, left by coalesced copies) are dropped;
//! - moves into or out of spill scratch registers are folded into the instruction that
//!   defines the scratch register or the spill store that reads it;
//! - branches to a block that only jumps on go straight to the final target (jump threading),
//!   and blocks left without predecessors after an unconditional transfer are dropped;
//! - a `j` to the label that immediately follows is dropped;
//! - a conditional branch over an unconditional jump to the next label is inverted
//!   (`bne x, L1; j L2; L1:` becomes `beq x, L2; L1:`).
//!
//! Runs to a fixed point; each rule only deletes or rewrites in place, so it terminates.
//!
//! Then, once, on the spill slots (`sp`-relative addresses in the `spill` byte range; nothing
//! else addresses them: they are never address-taken):
//! - `forward_spill_slots`: within a straight-line run (label to label), a reload of a slot
//!   whose value a register still holds (stored from it or loaded into it, neither the slot nor
//!   the register changed since) is deleted when it is that register, rewritten to read the
//!   holder when it is a scratch register whose readers all follow before either changes, and
//!   otherwise becomes a move;
//! - `drop_dead_spill_stores`: a store to a slot that no path reads before it is stored again
//!   (or the function returns) is deleted (backward slot liveness over the labelled blocks).
//!
//! Also once: `forward_constants`: within a straight-line run, a `li` or `lla` into a register
//! that still holds the same constant or address is deleted (rematerialized spills rebuild
//! them at every read).
//!
//! Also once: `unit_divisors`: within a straight-line run, a division or remainder whose divisor
//! register holds 1 or -1 from a `li` of the same run (a loop header copied into its preheader
//! can bring the counter's first value next to a division by the counter) becomes a sign
//! extension, a negation or a zero, instead of a trip through the slow divider.
//!
//! Also once: `merge_zero_stores`: two `sw zero` to the two halves of an 8-byte-aligned
//! doubleword of the stack become one `sd zero` (see there).
//!
//! These run after the fixed point because `fold_scratch_moves` relies on each scratch value
//! having one reader right after it, which forwarding no longer guarantees.

use super::minst::*;
use std::ops::Range;

pub fn run(code: &mut Vec<MInst>, spill: Option<Range<i64>>) {
    unit_divisors(code);
    cleanup(code);
    forward_constants(code);
    if let Some(spill) = spill.filter(|r| !r.is_empty()) {
        forward_spill_slots(code, &spill);
        drop_dead_spill_stores(code, &spill);
        // Deleted reloads and stores may leave moves to self and empty jump-only blocks.
        code.retain(|mi| !(mi.op.is_move() && mi.rd == mi.rs1));
    }
    merge_zero_stores(code);
}

/// How far ahead `merge_zero_stores` looks for the other half of a doubleword.
const MERGE_WINDOW: usize = 16;

/// `sw zero, k(sp)` and `sw zero, k+4(sp)` (either order) with `k` a multiple of 8 become one
/// `sd zero, k(sp)` at the first of them. `sp` is 16-byte aligned wherever code runs (the
/// ABI's alignment at entry; the frame size is a multiple of 16 and `sp` moves only by it),
/// so the doubleword is aligned: no misaligned access. The second store moves up to the first
/// only across instructions that neither touch memory other than through `sp` at offsets
/// outside the doubleword, nor change `sp`, nor end the straight-line run, so no access sees
/// the stores in a different order.
fn merge_zero_stores(code: &mut Vec<MInst>) {
    let zero_word = |mi: &MInst| mi.op == MOp::Sw && mi.rs1 == Reg::SP && mi.rs2 == Reg::ZERO;
    let mut keep = vec![true; code.len()];
    for k in 0..code.len() {
        if !keep[k] || !zero_word(&code[k]) {
            continue;
        }
        let off = code[k].imm;
        let (lo, other) = if off % 8 == 0 {
            (off, off + 4)
        } else if off.rem_euclid(8) == 4 {
            (off - 4, off - 4)
        } else {
            continue;
        };
        for j in k + 1..code.len().min(k + 1 + MERGE_WINDOW) {
            let mi = &code[j];
            if keep[j] && zero_word(mi) && mi.imm == other {
                code[k].op = MOp::Sd;
                code[k].imm = lo;
                keep[j] = false;
                break;
            }
            let blocks = mi.op == MOp::Label
                || mi.op == MOp::Call
                || mi.op.is_branch()
                || mi.op.is_terminator()
                || mi.rd == Reg::SP
                || ((mi.op.is_load() || mi.op.is_store())
                    && (mi.rs1 != Reg::SP || (mi.imm < lo + 8 && lo < mi.imm + width(mi.op))));
            if blocks {
                break;
            }
        }
    }
    if keep.contains(&false) {
        let mut it = keep.iter();
        code.retain(|_| *it.next().unwrap());
    }
}

/// The rules run to a fixed point (see the module comment) alone.
pub fn cleanup(code: &mut Vec<MInst>) {
    // Per label number (labels are block numbers, so the table is dense): the target of the
    // `j` right after it, and whether something branches to it. No rule adds a label.
    let labels = code
        .iter()
        .filter(|mi| mi.op == MOp::Label || mi.op.is_branch() || mi.op == MOp::J)
        .map(|mi| usize::try_from(mi.imm).map_or(0, |l| l + 1))
        .max()
        .unwrap_or(0);
    let mut jump_after: Vec<i64> = vec![NO_LABEL; labels];
    let mut used: Vec<bool> = vec![false; labels];
    loop {
        let before = code.len();
        fold_scratch_moves(code);
        thread_jumps(code, &mut jump_after);
        remove_dead_blocks_and_jumps_to_next(code, &mut used);
        if code.len() == before {
            break;
        }
    }
}

/// No label (in the per-label tables of `cleanup`).
const NO_LABEL: i64 = i64::MIN;

/// The entry of label `l` in a per-label table, if it has one.
fn label_entry<T>(table: &mut [T], l: i64) -> Option<&mut T> {
    usize::try_from(l).ok().and_then(|l| table.get_mut(l))
}

/// `remove_dead_blocks` then `drop_jumps_to_next`, in one walk: the instructions the first
/// keeps go straight to the second, a `j` waiting for the next kept instruction to decide.
fn remove_dead_blocks_and_jumps_to_next(code: &mut Vec<MInst>, used: &mut [bool]) {
    mark_used(code, used);
    // Compacts in place: `code[..w]` are the instructions both keep so far (never ahead of the
    // instruction read). `prev_kept` and `pending` are the state of `drop_jumps_to_next`.
    let mut w = 0;
    let mut prev_kept = false;
    let mut pending: Option<MInst> = None;
    let mut dead = false;
    for k in 0..code.len() {
        let mi = code[k];
        if mi.op == MOp::Label {
            dead = dead && k > 0 && !label_entry(used, mi.imm).is_some_and(|u| *u);
        }
        if !dead {
            if let Some(j) = pending.take() {
                if mi.op == MOp::Label && mi.imm == j.imm {
                    prev_kept = false;
                } else if prev_kept
                    && code[w - 1].op.is_branch()
                    && mi.op == MOp::Label
                    && mi.imm == code[w - 1].imm
                {
                    let b = &mut code[w - 1];
                    b.op = invert(b.op);
                    b.imm = j.imm;
                    prev_kept = false;
                } else {
                    code[w] = j;
                    w += 1;
                    prev_kept = true;
                }
            }
            if mi.op == MOp::J {
                pending = Some(mi);
            } else {
                code[w] = mi;
                w += 1;
                prev_kept = true;
            }
        }
        if matches!(mi.op, MOp::J | MOp::Ret | MOp::TailCall) {
            dead = true;
        }
    }
    if let Some(j) = pending {
        code[w] = j;
        w += 1;
    }
    code.truncate(w);
}

/// A `j` to the label right after it goes; `bcc L1; j L2; L1:` becomes `b!cc L2; L1:`.
#[cfg(test)]
fn drop_jumps_to_next(code: &mut Vec<MInst>) {
    // Compacts in place: `code[..w]` are the instructions kept so far.
    let mut w = 0;
    let mut prev_kept = false;
    for k in 0..code.len() {
        let mi = code[k];
        if mi.op == MOp::J {
            if let Some(next) = code.get(k + 1) {
                if next.op == MOp::Label && next.imm == mi.imm {
                    prev_kept = false;
                    continue;
                }
                // bcc L1; j L2; L1:  ->  b!cc L2; L1:
                if prev_kept
                    && code[w - 1].op.is_branch()
                    && next.op == MOp::Label
                    && next.imm == code[w - 1].imm
                {
                    let b = &mut code[w - 1];
                    b.op = invert(b.op);
                    b.imm = mi.imm;
                    prev_kept = false;
                    continue;
                }
            }
        }
        if w != k {
            code[w] = mi;
        }
        w += 1;
        prev_kept = true;
    }
    code.truncate(w);
}

/// Divisions and remainders by a register known (from a `li` since the last label or call) to
/// hold 1 or -1 become `sext.w`/`mv`, a negation, or zero. Exact for every dividend: `x / 1 = x`,
/// `x / -1 = -x` (wrapping at the minimum, as the divider does), `x % ±1 = 0`.
fn unit_divisors(code: &mut [MInst]) {
    // The registers known to hold 1 and -1 (bit `r` for register `r`).
    let (mut one, mut minus_one) = (0u64, 0u64);
    for mi in code.iter_mut() {
        if mi.op == MOp::Label || mi.op == MOp::Call {
            (one, minus_one) = (0, 0);
            continue;
        }
        let unit = if !mi.rs2.is_phys() {
            None
        } else if one >> mi.rs2.0 & 1 != 0 {
            Some(1)
        } else if minus_one >> mi.rs2.0 & 1 != 0 {
            Some(-1)
        } else {
            None
        };
        if let Some(c) = unit {
            let (rd, x) = (mi.rd, mi.rs1);
            *mi = match (mi.op, c) {
                (MOp::Rem | MOp::Remw, _) => MInst::li(rd, 0),
                (MOp::Divw, 1) => MInst::new(MOp::Addiw, rd, x, Reg::NONE, 0),
                (MOp::Div, 1) => MInst::new(MOp::Addi, rd, x, Reg::NONE, 0),
                (MOp::Divw, _) => MInst::r(MOp::Subw, rd, Reg::ZERO, x),
                (MOp::Div, _) => MInst::r(MOp::Sub, rd, Reg::ZERO, x),
                _ => *mi,
            };
        }
        if mi.rd.is_phys() {
            let bit = 1u64 << mi.rd.0;
            one &= !bit;
            minus_one &= !bit;
            if mi.op == MOp::Li && mi.imm == 1 {
                one |= bit;
            } else if mi.op == MOp::Li && mi.imm == -1 {
                minus_one |= bit;
            }
        }
    }
}

/// Branches to a label followed by `j X` go to `X` (edge blocks whose copies coalesced away).
/// `jump_after`: a table per label.
fn thread_jumps(code: &mut [MInst], jump_after: &mut [i64]) {
    jump_after.fill(NO_LABEL);
    let mut any = false;
    for k in 0..code.len().saturating_sub(1) {
        if code[k].op == MOp::Label && code[k + 1].op == MOp::J {
            if let Some(e) = label_entry(jump_after, code[k].imm) {
                *e = code[k + 1].imm;
                any = true;
            }
        }
    }
    if !any {
        return;
    }
    for mi in code.iter_mut() {
        if mi.op.is_branch() || mi.op == MOp::J {
            let mut t = mi.imm;
            for _ in 0..8 {
                match label_entry(jump_after, t).map(|x| *x) {
                    Some(x) if x != NO_LABEL && x != t => t = x,
                    _ => break,
                }
            }
            mi.imm = t;
        }
    }
}

/// Marks in `used` (a table per label) the labels something branches or jumps to.
fn mark_used(code: &[MInst], used: &mut [bool]) {
    used.fill(false);
    for mi in code.iter() {
        if mi.op.is_branch() || mi.op == MOp::J {
            if let Some(u) = label_entry(used, mi.imm) {
                *u = true;
            }
        }
    }
}

/// Drops code after an unconditional transfer up to a label nothing branches to. `used`: a
/// table per label.
#[cfg(test)]
fn remove_dead_blocks(code: &mut Vec<MInst>, used: &mut [bool]) {
    mark_used(code, used);
    // Compacts in place: `code[..w]` are the instructions kept so far.
    let mut w = 0;
    let mut dead = false;
    for k in 0..code.len() {
        let mi = code[k];
        if mi.op == MOp::Label {
            // The first label is the entry; a label reached by fallthrough or a branch lives.
            dead = dead && k > 0 && !label_entry(used, mi.imm).is_some_and(|u| *u);
        }
        if !dead {
            if w != k {
                code[w] = mi;
            }
            w += 1;
        }
        if matches!(mi.op, MOp::J | MOp::Ret | MOp::TailCall) {
            dead = true;
        }
    }
    code.truncate(w);
}

fn is_scratch(r: Reg) -> bool {
    matches!(r, Reg::T0 | Reg::T1 | Reg::FT0 | Reg::FT1)
}

/// Moves to self go. Spill code goes through scratch registers that die right after their one
/// reader: `X t0, ..; mv r, t0` becomes `X r, ..` and `mv t0, r; sd t0, m` becomes `sd r, m`.
fn fold_scratch_moves(code: &mut Vec<MInst>) {
    let same_class = |x: Reg, y: Reg| x.phys_class() == y.phys_class();
    // Compacts in place: `code[..w]` are the instructions kept so far. `pair`: the last of them
    // may fold with the next one (it did not just take in the move after it).
    let mut w = 0;
    let mut pair = false;
    for k in 0..code.len() {
        let b = code[k];
        if b.op.is_move() && b.rd == b.rs1 {
            continue;
        }
        if pair {
            let a = code[w - 1];
            if b.op.is_move()
                && is_scratch(b.rs1)
                && a.rd == b.rs1
                && a.op != MOp::Label
                && same_class(a.rd, b.rd)
            {
                // t0 is read only by the move (spill reloads feed one instruction).
                code[w - 1].rd = b.rd;
                pair = false;
                continue;
            } else if a.op.is_move()
                && is_scratch(a.rd)
                && b.op.is_store()
                && b.rs2 == a.rd
                && b.rs1 != a.rd
            {
                let mut b = b;
                b.rs2 = a.rs1;
                code[w - 1] = b;
                continue;
            }
        }
        if w != k {
            code[w] = b;
        }
        w += 1;
        pair = true;
    }
    code.truncate(w);
}

fn invert(op: MOp) -> MOp {
    match op {
        MOp::Beq => MOp::Bne,
        MOp::Bne => MOp::Beq,
        MOp::Blt => MOp::Bge,
        MOp::Bge => MOp::Blt,
        _ => unreachable!(),
    }
}

/// Bytes a load or store accesses.
fn width(op: MOp) -> i64 {
    match op {
        MOp::Lw | MOp::Sw | MOp::Flw | MOp::Fsw => 4,
        _ => 8,
    }
}

/// A full spill-slot access (`ld`/`sd`/`fld`/`fsd` at a slot of `spill`): the slot's offset.
fn spill_access(mi: &MInst, spill: &Range<i64>) -> Option<i64> {
    (matches!(mi.op, MOp::Ld | MOp::Sd | MOp::Fld | MOp::Fsd)
        && mi.rs1 == Reg::SP
        && spill.contains(&mi.imm)
        && (mi.imm - spill.start) % 8 == 0)
        .then_some(mi.imm)
}

/// See the module comment. `holds[r]` is the slot offset physical register `r` mirrors.
fn forward_spill_slots(code: &mut Vec<MInst>, spill: &Range<i64>) {
    const NONE: i64 = i64::MIN;
    let mut holds = [NONE; 64];
    // Bit `r`: `holds[r]` is not `NONE`.
    let mut held = 0u64;
    let mut keep = vec![true; code.len()];
    for k in 0..code.len() {
        let mi = code[k];
        if mi.op == MOp::Label {
            bits(held).for_each(|r| holds[r as usize] = NONE);
            held = 0;
            continue;
        }
        if mi.op.is_load() && mi.rs1 == Reg::SP {
            if let Some(off) = spill_access(&mi, spill) {
                let rd = mi.rd;
                if holds[rd.0 as usize] == off {
                    keep[k] = false;
                    continue;
                }
                let holder = bits(held)
                    .map(Reg)
                    .find(|&r| holds[r.0 as usize] == off && r.phys_class() == rd.phys_class());
                if let Some(h) = holder {
                    if is_scratch(rd) && redirect_readers(code, &keep, k, rd, h) {
                        keep[k] = false;
                        continue;
                    }
                    code[k] = MInst::unary(
                        if rd.phys_class() == RegClass::Float {
                            MOp::FmvD
                        } else {
                            MOp::Mv
                        },
                        rd,
                        h,
                    );
                }
                holds[rd.0 as usize] = off;
                held |= 1 << rd.0;
                continue;
            }
        }
        if mi.op.is_store() && mi.rs1 == Reg::SP {
            // The slots it overlaps change; a full spill store leaves its value in the source.
            let (lo, hi) = (mi.imm, mi.imm + width(mi.op));
            for r in bits(held) {
                let h = &mut holds[r as usize];
                if *h < hi && *h + 8 > lo {
                    *h = NONE;
                    held &= !(1 << r);
                }
            }
            if let Some(off) = spill_access(&mi, spill) {
                holds[mi.rs2.0 as usize] = off;
                held |= 1 << mi.rs2.0;
            }
            continue;
        }
        if mi.op == MOp::Call {
            bits(held & CALLER_SAVED).for_each(|r| holds[r as usize] = NONE);
            held &= !CALLER_SAVED;
        }
        if mi.rd == Reg::SP {
            // The epilogue: slots move.
            bits(held).for_each(|r| holds[r as usize] = NONE);
            held = 0;
        } else if mi.rd.is_some() {
            holds[mi.rd.0 as usize] = NONE;
            held &= !(1 << mi.rd.0);
        }
    }
    let mut it = keep.iter();
    code.retain(|_| *it.next().unwrap());
}

/// The set bits of `m`, lowest first.
fn bits(mut m: u64) -> impl Iterator<Item = u32> {
    std::iter::from_fn(move || {
        (m != 0).then(|| {
            let r = m.trailing_zeros();
            m &= m - 1;
            r
        })
    })
}

/// Within a straight-line run (label to label), a `li` or `lla` into a register that still
/// holds that very constant or address (written by the same instruction earlier in the run,
/// not written since, nor clobbered by a call) is deleted. Spilled constants and addresses
/// are recomputed into a scratch register at every read, so a run reading one twice
/// otherwise builds it twice (a 32-bit constant or an address is two instructions).
fn forward_constants(code: &mut Vec<MInst>) {
    // What each register holds: the constant-building instruction's opcode and immediate.
    let mut holds: [Option<(MOp, i64)>; 64] = [None; 64];
    // Bit `r`: `holds[r]` may be set (the entries to clear).
    let mut set = 0u64;
    let mut keep = vec![true; code.len()];
    let mut any = false;
    for (k, mi) in code.iter().enumerate() {
        match mi.op {
            MOp::Label => {
                bits(set).for_each(|r| holds[r as usize] = None);
                set = 0;
            }
            MOp::Li | MOp::Lla if mi.rd.is_some() && mi.fref == FrameRef::None => {
                let r = mi.rd.0 as usize;
                if holds[r] == Some((mi.op, mi.imm)) {
                    keep[k] = false;
                    any = true;
                } else {
                    holds[r] = Some((mi.op, mi.imm));
                    set |= 1 << r;
                }
            }
            op => {
                if op == MOp::Call {
                    bits(set & CALLER_SAVED).for_each(|r| holds[r as usize] = None);
                    set &= !CALLER_SAVED;
                }
                if mi.rd.is_some() {
                    holds[mi.rd.0 as usize] = None;
                }
            }
        }
    }
    if any {
        let mut it = keep.iter();
        code.retain(|_| *it.next().unwrap());
    }
}

/// The physical registers a call may overwrite: all but the callee-saved ones (bit `r` for
/// register `r`).
const CALLER_SAVED: u64 = {
    let mut m = !0u64;
    let mut r = 0;
    while r < 64 {
        let n = r % 32;
        if n == 8 || n == 9 || (n >= 18 && n <= 27) {
            m &= !(1 << r);
        }
        r += 1;
    }
    m
};

/// The reload at `k` writes scratch `t` with the value `h` holds. If every reader of `t` up to
/// `t`'s next write or the end of the labelled run (a scratch register never carries a value
/// into another labelled block: spill code reloads in the block that reads) comes before `h`
/// changes, make those readers read `h` and report success.
fn redirect_readers(code: &mut [MInst], keep: &[bool], k: usize, t: Reg, h: Reg) -> bool {
    let mut readers = Vec::new();
    let mut h_changed = false;
    for j in k + 1..code.len() {
        if !keep[j] {
            continue;
        }
        let mi = &code[j];
        if mi.op == MOp::Label {
            break;
        }
        if mi.rs1 == t || mi.rs2 == t {
            if h_changed {
                return false;
            }
            readers.push(j);
        }
        let clobbers = |r: Reg| mi.rd == r || (mi.op == MOp::Call && !r.is_callee_saved());
        if clobbers(t) || mi.op.is_terminator() {
            break;
        }
        h_changed |= clobbers(h);
    }
    for j in readers {
        let mi = &mut code[j];
        if mi.rs1 == t {
            mi.rs1 = h;
        }
        if mi.rs2 == t {
            mi.rs2 = h;
        }
    }
    true
}

/// See the module comment.
fn drop_dead_spill_stores(code: &mut Vec<MInst>, spill: &Range<i64>) {
    let nslots = ((spill.end - spill.start) / 8) as usize;
    let words = nslots.div_ceil(64);
    // Blocks: runs starting at labels (the code starts with the entry label).
    let blocks = super::layout::LabelBlocks::of(code);
    let starts = &blocks.starts;
    let nb = starts.len();
    // Per block, the instructions that matter to slot liveness, in code order:
    // `events[event_start[b]..event_start[b + 1]]`.
    let mut events: Vec<Event> = Vec::new();
    let mut event_start: Vec<u32> = Vec::with_capacity(nb + 1);
    // Whether each block falls through to the next one.
    let mut falls: Vec<bool> = Vec::with_capacity(nb);
    for (b, &s) in starts.iter().enumerate() {
        event_start.push(events.len() as u32);
        let e = blocks.end(b);
        let last = code[s..e].iter().rev().find(|mi| mi.op != MOp::Label);
        falls.push(!last.is_some_and(|mi| mi.op.is_terminator()) && b + 1 < nb);
        for (k, mi) in code.iter().enumerate().take(e).skip(s) {
            if mi.op.is_branch() || mi.op == MOp::J {
                if let Some(t) = blocks.block(mi.imm) {
                    events.push(Event::Branch(t as u32));
                }
            }
            if matches!(mi.op, MOp::Ret | MOp::TailCall) {
                events.push(Event::Clear);
            }
            if mi.rs1 != Reg::SP || !(mi.op.is_load() || mi.op.is_store()) {
                continue;
            }
            // Slots the access touches.
            let (lo, hi) = (
                mi.imm.max(spill.start),
                (mi.imm + width(mi.op)).min(spill.end),
            );
            if lo >= hi {
                continue;
            }
            if mi.op.is_store() {
                if let Some(off) = spill_access(mi, spill) {
                    events.push(Event::Store(k as u32, ((off - spill.start) / 8) as u32));
                }
            } else {
                let (a, z) = ((lo - spill.start) / 8, (hi - spill.start + 7) / 8);
                events.push(Event::Load(a as u32, z as u32));
            }
        }
    }
    event_start.push(events.len() as u32);
    // Walks block `b` backwards from its live-out into `live`, calling `store(k, live_after)`
    // at each full spill store; `live` ends as the block's live-in.
    let walk = |b: usize, live_in: &[u64], live: &mut [u64], store: &mut dyn FnMut(usize, bool)| {
        live.fill(0);
        if falls[b] {
            let next = &live_in[(b + 1) * words..][..words];
            live.iter_mut().zip(next).for_each(|(x, y)| *x |= y);
        }
        let evs = &events[event_start[b] as usize..event_start[b + 1] as usize];
        for ev in evs.iter().rev() {
            match *ev {
                Event::Branch(t) => {
                    let t = &live_in[t as usize * words..][..words];
                    live.iter_mut().zip(t).for_each(|(x, y)| *x |= y);
                }
                Event::Clear => live.fill(0),
                Event::Store(k, slot) => {
                    let slot = slot as usize;
                    store(k as usize, live[slot / 64] >> (slot % 64) & 1 != 0);
                    live[slot / 64] &= !(1 << (slot % 64));
                }
                Event::Load(a, z) => {
                    for slot in a as usize..z as usize {
                        live[slot / 64] |= 1 << (slot % 64);
                    }
                }
            }
        }
    };
    let mut live_in = vec![0u64; nb * words];
    let mut live = vec![0u64; words];
    let mut changed = true;
    while changed {
        changed = false;
        for b in (0..nb).rev() {
            walk(b, &live_in, &mut live, &mut |_, _| {});
            let cur = &mut live_in[b * words..][..words];
            if *cur != *live {
                cur.copy_from_slice(&live);
                changed = true;
            }
        }
    }
    let mut keep = vec![true; code.len()];
    for b in 0..nb {
        walk(b, &live_in, &mut live, &mut |k, l| keep[k] = l);
    }
    let mut it = keep.iter();
    code.retain(|_| *it.next().unwrap());
}

/// What one instruction does to the liveness of spill slots (`drop_dead_spill_stores`).
#[derive(Clone, Copy)]
enum Event {
    /// A branch or jump to a block (index): its live-in joins.
    Branch(u32),
    /// A return: nothing is live after it.
    Clear,
    /// A full spill store (instruction index, slot): kills the slot.
    Store(u32, u32),
    /// A load touching slots `[from, to)`.
    Load(u32, u32),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn label(b: i64) -> MInst {
        MInst::new(MOp::Label, Reg::NONE, Reg::NONE, Reg::NONE, b)
    }

    /// The one walk of `remove_dead_blocks_and_jumps_to_next` gives what the two passes give
    /// one after the other, on pseudo-random mixes of labels, jumps, branches, returns and
    /// plain instructions.
    #[test]
    fn one_walk_matches_the_two_passes() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        for _ in 0..20000 {
            let len = 1 + next(24) as usize;
            let labels = 1 + next(8) as i64;
            let code: Vec<MInst> = (0..len)
                .map(|_| {
                    let l = next(labels as u64) as i64;
                    match next(7) {
                        0 | 1 => label(l),
                        2 => MInst::jump(l),
                        3 => MInst::new(MOp::Bne, Reg::NONE, Reg::A0, Reg::ZERO, l),
                        4 => MInst::new(MOp::Ret, Reg::NONE, Reg::A0, Reg::NONE, 0),
                        _ => MInst::li(Reg::A0, l),
                    }
                })
                .collect();
            let mut used = vec![false; labels as usize];
            let mut two = code.clone();
            remove_dead_blocks(&mut two, &mut used);
            drop_jumps_to_next(&mut two);
            let mut one = code.clone();
            remove_dead_blocks_and_jumps_to_next(&mut one, &mut used);
            assert_eq!(one, two, "on {code:?}");
        }
    }

    #[test]
    fn caller_saved_is_all_but_callee_saved() {
        for r in 0..64 {
            assert_eq!(CALLER_SAVED >> r & 1 != 0, !Reg(r).is_callee_saved(), "{r}");
        }
    }

    #[test]
    fn divisions_by_a_unit_constant_leave_the_divider() {
        let (a0, a1, a2) = (Reg::a(0), Reg::a(1), Reg::a(2));
        let mut code = vec![
            label(0),
            MInst::li(a1, 1),
            MInst::r(MOp::Remw, a2, a0, a1),
            MInst::r(MOp::Divw, a2, a0, a1),
            MInst::li(a1, -1),
            MInst::r(MOp::Div, a2, a0, a1),
            label(1),
            MInst::r(MOp::Divw, a2, a0, a1), // a new run: a1 is unknown again
        ];
        unit_divisors(&mut code);
        assert_eq!(code[2], MInst::li(a2, 0));
        assert_eq!(code[3], MInst::new(MOp::Addiw, a2, a0, Reg::NONE, 0));
        assert_eq!(code[5], MInst::r(MOp::Sub, a2, Reg::ZERO, a0));
        assert_eq!(code[7].op, MOp::Divw);
    }

    #[test]
    fn constants_a_register_still_holds_are_not_built_again() {
        let (a0, a1, t0) = (Reg::a(0), Reg::a(1), Reg::T0);
        let lla = |r: Reg, sym: i64| MInst::new(MOp::Lla, r, Reg::NONE, Reg::NONE, sym);
        let call = MInst::new(MOp::Call, Reg::NONE, Reg::NONE, Reg::NONE, 0);
        let mut code = vec![
            label(0),
            lla(t0, 3),
            MInst::load(MOp::Lw, a0, t0, 4),
            lla(t0, 3), // still held: goes
            MInst::load(MOp::Lw, a1, t0, 8),
            MInst::li(t0, 10000),
            lla(t0, 3), // t0 rewritten: stays
            MInst::li(a1, 7),
            MInst::store(MOp::Sw, a1, t0, 0),
            MInst::li(a1, 7), // still held: goes
            call,
            MInst::li(a1, 7), // clobbered by the call: stays
            label(1),
            MInst::li(a1, 7), // another run: stays
            MInst::new(MOp::Ret, Reg::NONE, a0, Reg::NONE, 0),
        ];
        forward_constants(&mut code);
        let ops: Vec<MOp> = code.iter().map(|m| m.op).collect();
        use MOp::*;
        assert_eq!(
            ops,
            vec![Label, Lla, Lw, Lw, Li, Lla, Li, Sw, Call, Li, Label, Li, Ret]
        );
    }

    #[test]
    fn spill_reloads_forward_and_dead_spill_stores_go() {
        let (a0, a1, a2, a3) = (Reg::a(0), Reg::a(1), Reg::a(2), Reg::a(3));
        let ret = MInst::new(MOp::Ret, Reg::NONE, a0, Reg::NONE, 0);
        let mut code = vec![
            label(0),
            MInst::r(MOp::Add, Reg::T0, a0, a1),
            MInst::store(MOp::Sd, Reg::T0, Reg::SP, 16),
            MInst::load(MOp::Ld, Reg::T0, Reg::SP, 16), // t0 still holds the slot: deleted
            MInst::load(MOp::Ld, Reg::T1, Reg::SP, 16), // its reader reads t0 instead
            MInst::r(MOp::Add, a2, Reg::T1, a3),
            MInst::load(MOp::Ld, a3, Reg::SP, 16), // not a scratch register: a move
            ret,
        ];
        run(&mut code, Some(16..32));
        let want = vec![
            label(0),
            MInst::r(MOp::Add, Reg::T0, a0, a1),
            MInst::r(MOp::Add, a2, Reg::T0, a3),
            MInst::unary(MOp::Mv, a3, Reg::T0),
            ret,
        ];
        assert_eq!(
            code, want,
            "the store is dead once its reloads are forwarded"
        );

        // A slot read in another block keeps its store; a call ends what t0 holds.
        let mut code = vec![
            label(0),
            MInst::store(MOp::Sd, a1, Reg::SP, 24),
            MInst::branch(MOp::Beq, a0, Reg::ZERO, 2),
            MInst::new(MOp::Call, Reg::NONE, Reg::NONE, Reg::NONE, 0),
            MInst::load(MOp::Ld, a1, Reg::SP, 24),
            ret,
            label(2),
            MInst::load(MOp::Ld, a0, Reg::SP, 24),
            ret,
        ];
        let before = code.clone();
        run(&mut code, Some(16..32));
        assert_eq!(code, before);
    }

    #[test]
    fn zero_words_of_an_aligned_doubleword_merge() {
        let (a0, a1) = (Reg::a(0), Reg::a(1));
        let zw = |off| MInst::store(MOp::Sw, Reg::ZERO, Reg::SP, off);
        let zd = |off| MInst::store(MOp::Sd, Reg::ZERO, Reg::SP, off);
        let add = MInst::r(MOp::Add, a0, a0, a1);
        // In either order, across arithmetic and stack accesses elsewhere.
        let mut code = vec![
            label(0),
            zw(128),
            add,
            MInst::store(MOp::Sw, a1, Reg::SP, 140),
            zw(132),
            zw(148),
            MInst::load(MOp::Lw, a1, Reg::SP, 136),
            zw(144),
        ];
        merge_zero_stores(&mut code);
        let want = vec![
            label(0),
            zd(128),
            add,
            MInst::store(MOp::Sw, a1, Reg::SP, 140),
            zd(144),
            MInst::load(MOp::Lw, a1, Reg::SP, 136),
        ];
        assert_eq!(code, want);
        // Not a doubleword at a multiple of 8; an access to the doubleword, through another
        // base (it may point into the frame), a call or a label in between: left alone.
        for between in [
            None,
            Some(MInst::load(MOp::Lw, a1, Reg::SP, 4)),
            Some(MInst::store(MOp::Sd, a1, Reg::SP, 0)),
            Some(MInst::load(MOp::Lw, a1, a0, 0)),
            Some(MInst::store(MOp::Sw, a1, a0, 64)),
            Some(MInst::new(MOp::Call, Reg::NONE, Reg::NONE, Reg::NONE, 0)),
            Some(label(1)),
        ] {
            let mut code = match between {
                None => vec![zw(4), zw(8)],
                Some(mi) => vec![zw(0), mi, zw(4)],
            };
            let before = code.clone();
            merge_zero_stores(&mut code);
            assert_eq!(code, before);
        }
        // Stores of a register other than zero stay words.
        let mut code = vec![
            MInst::store(MOp::Sw, a1, Reg::SP, 0),
            MInst::store(MOp::Sw, a1, Reg::SP, 4),
        ];
        let before = code.clone();
        merge_zero_stores(&mut code);
        assert_eq!(code, before);
    }
}
