//! Block layout on machine IR: before register allocation, jump threading and tail
//! duplication of small branch blocks; after it, latches whose loop-staying edge goes through a
//! back-edge block fall through to it (`latch_fallthrough`).
//!
//! Jump threading: a branch to a block holding only `j X` is retargeted to `X`.
//!
//! A loop lowered as `header: bge i, n, exit; j body` ... `body: ...; j header` runs two
//! branches per iteration. When a block ends in `j H` and `H` is small (at most
//! `MAX_DUP` instructions, no calls or returns) and ends in a branch, the `j H` is replaced by a
//! copy of `H`. The latch then ends in `bge i, n, exit; j body`; with the exit laid out next,
//! `peephole` turns that into a single `blt i, n, body`: the loop is rotated, its test at the
//! bottom. A copied header that loses all predecessors is dropped from the layout.
//!
//! Nothing may be written after a block's first branch (liveness and the checker assume all
//! successors leave at the block's end), so a block that already branches conditionally only
//! takes copies of pure branch blocks. Duplicated instructions write the same virtual registers as the original; liveness and the
//! allocator handle registers with several definitions (block parameters already are).
//! Cost: O(instructions).

use super::minst::*;
use crate::ir::IdVec;

const MAX_DUP: u32 = 4;

/// Duplicates small branch blocks into the blocks that jump to them; a few rounds, so a
/// chain (preheader -> small block -> loop test) is followed.
pub fn run(mf: &mut MFunc) {
    // The code a pass rebuilds goes to a second buffer; the two take turns.
    let mut spare = Vec::new();
    for _ in 0..3 {
        if !pass(mf, &mut spare) {
            break;
        }
    }
}

fn pass(mf: &mut MFunc, spare: &mut Vec<MInst>) -> bool {
    let nb = mf.blocks.len();
    // Jump threading: a branch to a block that is only `j X` goes to X directly.
    let lone_jump = |b: MBlock| {
        let blk = &mf.blocks[b];
        (blk.end == blk.start + 1 && mf.insts[blk.start as usize].op == MOp::J)
            .then(|| MBlock::target_of(&mf.insts[blk.start as usize]))
    };
    let forward: IdVec<MBlock, MBlock> = mf
        .blocks
        .keys()
        .map(|b| {
            let mut t = b;
            for _ in 0..8 {
                match lone_jump(t) {
                    Some(x) if x != t => t = x,
                    _ => break,
                }
            }
            t
        })
        .collect();
    let mut threaded = false;
    for &b in &mf.order {
        let blk = &mf.blocks[b];
        for mi in &mut mf.insts[blk.start as usize..blk.end as usize] {
            if mi.op.is_branch() || mi.op == MOp::J {
                let to = forward[MBlock::target_of(mi)];
                if to != MBlock::target_of(mi) {
                    mi.imm = to.label();
                    threaded = true;
                }
            }
        }
    }
    let dupable: IdVec<MBlock, bool> = mf
        .blocks
        .values()
        .map(|b| {
            let body = &mf.insts[b.start as usize..b.end as usize];
            b.end - b.start <= MAX_DUP
                && body.last().is_some_and(|mi| mi.op == MOp::J)
                && body
                    .iter()
                    .all(|mi| !matches!(mi.op, MOp::Call | MOp::Ret | MOp::TailCall))
        })
        .collect();
    // Liveness and the checker treat every successor as leaving at the block's end, which is
    // exact only if nothing is written after the block's first branch: so a block that already
    // has a conditional branch only takes copies that write nothing (pure branch blocks).
    // Asked of blocks that may be copied only.
    let writes = |h: MBlock| {
        let b = &mf.blocks[h];
        mf.insts[b.start as usize..b.end as usize]
            .iter()
            .any(|mi| mi.rd.is_some())
    };
    // The block each block's jump duplicates, if any, in layout order: `j H` with `H` small
    // and not the block itself.
    let dup: Vec<Option<MBlock>> = mf
        .order
        .iter()
        .map(|&b| {
            let blk = &mf.blocks[b];
            let body = &mf.insts[blk.start as usize..blk.end as usize];
            let last = body.last()?;
            let h = MBlock::target_of(last);
            (last.op == MOp::J
                && h != b
                && dupable[h]
                && (!writes(h) || !body.iter().any(|mi| mi.op.is_branch())))
            .then_some(h)
        })
        .collect();
    // Instructions the copies add (each replaces a `j`).
    let added: usize = dup
        .iter()
        .flatten()
        .map(|&h| (mf.blocks[h].end - mf.blocks[h].start) as usize - 1)
        .sum();
    let changed = dup.iter().any(Option::is_some);
    if !changed && !threaded {
        return false;
    }
    // Whether the blocks in layout order tile the code: then, without copies, the new code is
    // the old one.
    let mut at = 0u32;
    let tiled = mf.order.iter().all(|&b| {
        let blk = &mf.blocks[b];
        let ok = blk.start == at;
        at = blk.end;
        ok
    }) && at as usize == mf.insts.len();
    if changed || !tiled {
        // New code, and per block its new range in it (the old ranges stay readable meanwhile),
        // in the spare buffer; the old code becomes the spare.
        let mut insts = std::mem::take(spare);
        insts.clear();
        insts.reserve(mf.insts.len() + added);
        let mut range: IdVec<MBlock, (u32, u32)> = IdVec::filled(nb, (0, 0));
        for (&b, &h) in mf.order.iter().zip(&dup) {
            let blk = &mf.blocks[b];
            let start = insts.len() as u32;
            let body = &mf.insts[blk.start as usize..blk.end as usize];
            if let Some(h) = h {
                let h = &mf.blocks[h];
                insts.extend_from_slice(&body[..body.len() - 1]);
                insts.extend_from_slice(&mf.insts[h.start as usize..h.end as usize]);
            } else {
                insts.extend_from_slice(body);
            }
            range[b] = (start, insts.len() as u32);
        }
        for &b in &mf.order {
            let (start, end) = range[b];
            let blk = &mut mf.blocks[b];
            blk.start = start;
            blk.end = end;
        }
        *spare = std::mem::replace(&mut mf.insts, insts);
    }
    for &b in &mf.order {
        let blk = &mut mf.blocks[b];
        blk.succs.clear();
        blk.succs.extend(
            mf.insts[blk.start as usize..blk.end as usize]
                .iter()
                .filter(|mi| mi.op.is_branch() || mi.op == MOp::J)
                .map(MBlock::target_of),
        );
    }
    // Drop blocks that became unreachable.
    let mut reach = IdVec::filled(nb, false);
    let mut stack = vec![mf.order[0]];
    reach[mf.order[0]] = true;
    while let Some(b) = stack.pop() {
        for &s in &mf.blocks[b].succs {
            if !reach[s] {
                reach[s] = true;
                stack.push(s);
            }
        }
    }
    if mf.order.iter().all(|&b| reach[b]) {
        // Every block stays where the code has it.
        return true;
    }
    // Compacts in place: the blocks are in increasing order, so each moves down, if at all.
    let mut w = 0usize;
    let mut order = Vec::with_capacity(mf.order.len());
    for &b in &mf.order {
        let blk = &mut mf.blocks[b];
        if !reach[b] {
            blk.start = 0;
            blk.end = 0;
            blk.succs.clear();
            continue;
        }
        let (s, e) = (blk.start as usize, blk.end as usize);
        mf.insts.copy_within(s..e, w);
        blk.start = w as u32;
        w += e - s;
        blk.end = w as u32;
        order.push(b);
    }
    mf.insts.truncate(w);
    mf.order = order;
    true
}

/// Where each label of allocated code stands: its position in `code`.
fn label_positions(code: &[MInst]) -> rustc_hash::FxHashMap<i64, usize> {
    code.iter()
        .enumerate()
        .filter(|(_, mi)| mi.op == MOp::Label)
        .map(|(k, mi)| (mi.imm, k))
        .collect()
}

/// On allocated code (labels present): a `j L` whose target block is short straight-line code
/// ending in a jump or return (conditional branches inside it allowed, at most `MAX_DUP`
/// instructions, no calls) becomes a copy of that block, so the path pays no taken jump. A loop
/// block ending `bcc X; j L` with `L: addi i; blt i, n, H; j E` (the latch, laid out elsewhere)
/// then closes the loop with one taken branch instead of two. A block that ends in a
/// conditional branch and falls through into the next label `F` is copied with its fall-through
/// made explicit (`j F`): the path that takes the branch saves the jump, the one that falls
/// through trades `j L` for `j F`. Registers are allocated, so a copy is the same
/// instructions. Returns whether anything changed. Cost: O(instructions).
pub fn copy_jump_targets(code: &mut Vec<MInst>) -> bool {
    let label_at = label_positions(code);
    // The copyable block after the label at `t`: its instructions `t + 1..=end`, and the label
    // it falls through into after a conditional branch at `end`, if it does.
    let block = |t: usize| -> Option<(usize, Option<i64>)> {
        let mut end = t + 1;
        let falls_into = loop {
            let mi = code.get(end)?;
            if mi.op == MOp::Label {
                let last = code[end - 1];
                if end == t + 1 || !last.op.is_branch() {
                    return None;
                }
                end -= 1;
                break Some(mi.imm);
            }
            if mi.op == MOp::Call || mi.op == MOp::TailCall {
                return None;
            }
            if mi.op.is_terminator() {
                break None;
            }
            end += 1;
        };
        let len = end - t + usize::from(falls_into.is_some());
        (len <= MAX_DUP as usize).then_some((end, falls_into))
    };
    let mut out: Vec<MInst> = Vec::with_capacity(code.len());
    let mut changed = false;
    for (k, &mi) in code.iter().enumerate() {
        if mi.op == MOp::J {
            if let Some(&t) = label_at.get(&mi.imm) {
                if t != k + 1 {
                    if let Some((end, falls_into)) = block(t) {
                        out.extend_from_slice(&code[t + 1..=end]);
                        if let Some(f) = falls_into {
                            out.push(MInst::new(MOp::J, Reg::NONE, Reg::NONE, Reg::NONE, f));
                        }
                        changed = true;
                        continue;
                    }
                }
            }
        }
        out.push(mi);
    }
    if changed {
        *code = out;
    }
    changed
}

/// On allocated code (labels present): a latch that leaves through several branches, the first
/// of them to the back-edge block laid out right after it (`bcc X; bcc2 Y; j Z; X: copies; j H`
/// with `H` earlier), takes two taken branches per iteration (`bcc X`, `j H`). The first branch
/// is inverted to an out-of-line block holding the rest (`b!cc N; X: ...` and, after the last
/// block, `N: bcc2 Y; j Z`), so staying in the loop falls through to the back-edge block and the
/// loop's exits pay the extra branch instead. Returns whether anything changed.
pub fn latch_fallthrough(code: &mut Vec<MInst>) -> bool {
    if !code.last().is_some_and(|mi| mi.op.is_terminator()) {
        return false;
    }
    let label_at = label_positions(code);
    let mut next_label = label_at.keys().map(|&l| l + 1).max().unwrap_or(0);
    let mut moved: Vec<MInst> = Vec::new();
    let mut drop = vec![false; code.len()];
    for k in 0..code.len().saturating_sub(4) {
        let (b1, b2, j, x) = (code[k], code[k + 1], code[k + 2], code[k + 3]);
        if !(b1.op.is_branch()
            && b2.op.is_branch()
            && j.op == MOp::J
            && x.op == MOp::Label
            && x.imm == b1.imm
            && (k == 0 || !drop[k - 1]))
        {
            continue;
        }
        // The block after: straight-line code ending in a jump back to an earlier label.
        let back_edge = code[k + 4..]
            .iter()
            .find(|mi| mi.op.is_branch() || mi.op.is_terminator() || mi.op == MOp::Label)
            .is_some_and(|mi| mi.op == MOp::J && label_at.get(&mi.imm).is_some_and(|&h| h < k));
        if !back_edge {
            continue;
        }
        let n = next_label;
        next_label += 1;
        code[k].op = invert(b1.op);
        code[k].imm = n;
        drop[k + 1] = true;
        drop[k + 2] = true;
        moved.push(MInst::new(MOp::Label, Reg::NONE, Reg::NONE, Reg::NONE, n));
        moved.push(b2);
        moved.push(j);
    }
    if moved.is_empty() {
        return false;
    }
    let mut it = drop.iter();
    code.retain(|_| !*it.next().unwrap());
    code.extend(moved);
    true
}

/// On allocated code: a block inside a loop whose branch stays in the loop while its fall-through
/// leaves it (`bcc x, y, Y; X: ...; j T; Y: ...`, `X` straight-line code ending in a jump or
/// return, `T` outside the loop, `Y` in it) takes a branch on every iteration. The branch is
/// inverted to `X` and `X` moves out of line, so staying in the loop falls through to `Y` and
/// only the exit, taken once per run of the loop, pays the taken branch. `X` goes right before
/// `T` when nothing falls through into `T` (its jump then goes too), else after the last block.
/// `depth` gives the loop depth of a label's block (`None` for labels it does not know: such
/// blocks are left alone). Returns whether anything changed. Cost: O(instructions).
pub fn exits_out_of_line(code: &mut Vec<MInst>, depth: impl Fn(i64) -> Option<u32>) -> bool {
    if !code.last().is_some_and(|mi| mi.op.is_terminator()) {
        return false;
    }
    let label_at = label_positions(code);
    // The exits to move: (position of the branch, end of X's terminator, where X goes: the
    // position of T's label, or `None` for the end of the code).
    let mut moves: Vec<(usize, usize, Option<usize>)> = Vec::new();
    // Labels that already take an exit placed before them.
    let mut taken: rustc_hash::FxHashSet<usize> = Default::default();
    let mut here: Option<u32> = Some(0);
    for k in 0..code.len() {
        let b = code[k];
        if b.op == MOp::Label {
            here = depth(b.imm);
            continue;
        }
        let Some(dp) = here.filter(|&d| d > 0) else {
            continue;
        };
        if !b.op.is_branch() || code.get(k + 1).is_none_or(|mi| mi.op != MOp::Label) {
            continue;
        }
        let mut m = k + 2;
        while m < code.len()
            && !(code[m].op == MOp::Label || code[m].op.is_branch() || code[m].op.is_terminator())
        {
            m += 1;
        }
        let stays = code
            .get(m + 1)
            .is_some_and(|mi| mi.op == MOp::Label && mi.imm == b.imm)
            && depth(b.imm).is_some_and(|d| d >= dp);
        let leaves = match code.get(m).map(|mi| mi.op) {
            Some(MOp::J) => depth(code[m].imm).is_some_and(|d| d < dp),
            Some(MOp::Ret | MOp::TailCall) => true,
            _ => false,
        };
        if !(stays && leaves) {
            continue;
        }
        // Right before T when the code before T's label does not fall through into it.
        let before = (code[m].op == MOp::J)
            .then(|| label_at[&code[m].imm])
            .filter(|&t| t > m + 1 && code[t - 1].op.is_terminator() && !taken.contains(&t));
        if let Some(t) = before {
            taken.insert(t);
        }
        moves.push((k, m, before));
    }
    if moves.is_empty() {
        return false;
    }
    let mut moved = vec![false; code.len()];
    let mut placed_before: rustc_hash::FxHashMap<usize, std::ops::Range<usize>> =
        Default::default();
    let mut tail: Vec<MInst> = Vec::new();
    for &(k, m, before) in &moves {
        let b = code[k];
        code[k] = MInst::branch(b.op.inverted(), b.rs1, b.rs2, code[k + 1].imm);
        moved[k + 1..=m].fill(true);
        match before {
            // Without its jump: X falls through into T.
            Some(t) => {
                placed_before.insert(t, k + 1..m);
            }
            None => tail.extend_from_slice(&code[k + 1..=m]),
        }
    }
    let mut out: Vec<MInst> = Vec::with_capacity(code.len() + tail.len());
    for (k, mi) in code.iter().enumerate() {
        if let Some(x) = placed_before.get(&k) {
            out.extend_from_slice(&code[x.clone()]);
        }
        if !moved[k] {
            out.push(*mi);
        }
    }
    out.extend(tail);
    *code = out;
    true
}

/// On allocated code: a latch that leaves the loop by a branch and falls into its back-edge
/// copies (`bcc x, y, EXIT; C: mv d, s; ...; j H`, `H` an earlier label, nothing else reaching
/// `C`) runs the copies
/// before the branch when no copied-into register is live at `EXIT`: `mv d, s; ...;
/// b!cc x, y, H`, then `EXIT` falls through (or `j EXIT` when it is not next). Staying in the
/// loop is one taken branch instead of an untaken branch and a jump; leaving runs copies into
/// dead registers. The branch's operands must not be among the copies' destinations.
/// Returns whether anything changed. Cost: O(instructions + blocks * iterations) for the
/// register liveness at labels.
pub fn copies_before_exit(code: &mut Vec<MInst>) -> bool {
    let is_copy = |mi: &MInst| {
        (mi.op.is_move() || matches!(mi.op, MOp::Li | MOp::Lla))
            && mi.rd.is_some()
            && mi.fref == FrameRef::None
    };
    // Candidates first: most functions have none, and then no liveness is needed.
    let mut refs: rustc_hash::FxHashMap<i64, u32> = Default::default();
    let mut label_at: rustc_hash::FxHashMap<i64, usize> = Default::default();
    for (k, mi) in code.iter().enumerate() {
        if mi.op.is_branch() || mi.op == MOp::J {
            *refs.entry(mi.imm).or_default() += 1;
        } else if mi.op == MOp::Label {
            label_at.insert(mi.imm, k);
        }
    }
    let mut cands: Vec<(usize, usize)> = Vec::new();
    for k in 0..code.len().saturating_sub(3) {
        let (b, c) = (code[k], code[k + 1]);
        if !(b.op.is_branch() && c.op == MOp::Label && !refs.contains_key(&c.imm)) {
            continue;
        }
        let mut m = k + 2;
        while m < code.len() && is_copy(&code[m]) {
            m += 1;
        }
        // A back edge: the jump goes to an earlier label (a loop's header).
        let back = m < code.len()
            && code[m].op == MOp::J
            && label_at.get(&code[m].imm).is_some_and(|&h| h < k);
        if m == k + 2 || !back {
            continue;
        }
        let writes_operand = code[k + 2..m]
            .iter()
            .any(|mi| mi.rd == b.rs1 || mi.rd == b.rs2);
        if !writes_operand {
            cands.push((k, m));
        }
    }
    if cands.is_empty() {
        return false;
    }
    let live = live_at_labels(code);
    let mut out: Vec<MInst> = Vec::with_capacity(code.len());
    let mut next = 0;
    let mut changed = false;
    for (k, m) in cands {
        let b = code[k];
        let written = code[k + 2..m].iter().fold(0u64, |acc, mi| acc | bit(mi.rd));
        // Live at the exit: unknown labels count as everything live.
        if live.get(&b.imm).copied().unwrap_or(u64::MAX) & written != 0 {
            continue;
        }
        out.extend_from_slice(&code[next..k]);
        out.extend_from_slice(&code[k + 2..m]);
        out.push(MInst::branch(b.op.inverted(), b.rs1, b.rs2, code[m].imm));
        let exit_next = code
            .get(m + 1)
            .is_some_and(|mi| mi.op == MOp::Label && mi.imm == b.imm);
        if !exit_next {
            out.push(MInst::jump(b.imm));
        }
        next = m + 1;
        changed = true;
    }
    if changed {
        out.extend_from_slice(&code[next..]);
        *code = out;
    }
    changed
}

/// The blocks of allocated code: runs from one label to the next (code before the first label,
/// if any, is a block too).
pub(super) struct LabelBlocks {
    /// Where each block starts in the code.
    pub starts: Vec<usize>,
    /// The block each label starts, by label number (`u32::MAX`: no such label); labels are
    /// block numbers and the out-of-line blocks numbered after them, so the table is dense.
    block_of: Vec<u32>,
    /// The length of the code.
    pub len: usize,
}

impl LabelBlocks {
    pub fn of(code: &[MInst]) -> LabelBlocks {
        let mut starts: Vec<usize> = (0..code.len())
            .filter(|&k| code[k].op == MOp::Label)
            .collect();
        if starts.first() != Some(&0) {
            starts.insert(0, 0);
        }
        let mut block_of: Vec<u32> = Vec::new();
        for (b, &s) in starts.iter().enumerate() {
            let Some(mi) = code.get(s).filter(|mi| mi.op == MOp::Label) else {
                continue;
            };
            let l = usize::try_from(mi.imm).expect("labels are not negative");
            if l >= block_of.len() {
                block_of.resize(l + 1, u32::MAX);
            }
            block_of[l] = b as u32;
        }
        LabelBlocks {
            starts,
            block_of,
            len: code.len(),
        }
    }

    /// The block label `l` starts, if any.
    #[inline]
    pub fn block(&self, l: i64) -> Option<usize> {
        usize::try_from(l)
            .ok()
            .and_then(|l| self.block_of.get(l))
            .filter(|&&b| b != u32::MAX)
            .map(|&b| b as usize)
    }

    /// The labels and the block each starts, by increasing label.
    pub fn labels(&self) -> impl Iterator<Item = (i64, usize)> + '_ {
        self.block_of
            .iter()
            .enumerate()
            .filter(|&(_, &b)| b != u32::MAX)
            .map(|(l, &b)| (l as i64, b as usize))
    }

    /// Where block `b` ends (the next block's start, or the end of the code).
    pub fn end(&self, b: usize) -> usize {
        self.starts.get(b + 1).copied().unwrap_or(self.len)
    }
}

/// The bit of physical register `r` in a register mask (none for `zero` or no register).
fn bit(r: Reg) -> u64 {
    if r.is_some() && r.0 != 0 && r.0 < 64 {
        1 << r.0
    } else {
        0
    }
}

/// Physical registers live at each label of allocated code: the least solution of the usual
/// backward equations over the blocks the labels start. A call reads the argument registers and
/// `sp` and writes every caller-saved register; a return (or tail call) reads the result and
/// argument registers, `ra`, `sp`, `gp`, `tp` and every callee-saved register.
fn live_at_labels(code: &[MInst]) -> rustc_hash::FxHashMap<i64, u64> {
    let args: u64 = (0..8).fold(0, |m, n| m | bit(Reg::a(n)) | bit(Reg::fa(n)));
    let callee: u64 = (1..64u32)
        .map(Reg)
        .filter(|r| r.is_callee_saved())
        .fold(0, |m, r| m | bit(r));
    let fixed = bit(Reg::SP) | bit(Reg(3)) | bit(Reg(4));
    let clobbered = !(callee | fixed | 1);
    let at_return = args | callee | fixed | bit(Reg::RA);
    let blocks = LabelBlocks::of(code);
    let starts = &blocks.starts;
    let nb = starts.len();
    // Per block: whether it ends in a terminator; where its first jump, branch or return is
    // (the block's end if none); and what the instructions before it do to the live
    // registers, composed into one step `live = (live & keep) | gen`, so each round of the
    // solution walks only the transfers at the blocks' ends.
    let summary: Vec<(bool, usize, u64, u64)> = (0..nb)
        .map(|b| {
            let (s, e) = (starts[b], blocks.end(b));
            let ends = code[s..e]
                .iter()
                .rev()
                .find(|mi| mi.op != MOp::Label)
                .is_some_and(|mi| mi.op.is_terminator());
            let transfer =
                |op: MOp| matches!(op, MOp::J | MOp::Ret | MOp::TailCall) || op.is_branch();
            let q = code[s..e]
                .iter()
                .position(|mi| transfer(mi.op))
                .map_or(e, |i| s + i);
            let (mut keep, mut gen) = (!0u64, 0u64);
            for mi in code[s..q].iter().rev() {
                let (kill, read) = match mi.op {
                    MOp::Label => continue,
                    MOp::Call => (clobbered, args | bit(Reg::SP)),
                    _ => (bit(mi.rd), bit(mi.rs1) | bit(mi.rs2)),
                };
                keep &= !kill;
                gen = (gen & !kill) | read;
            }
            (ends, q, keep, gen)
        })
        .collect();
    let mut live_in = vec![0u64; nb];
    let mut changed = true;
    while changed {
        changed = false;
        for b in (0..nb).rev() {
            let (ends, q, keep, gen) = summary[b];
            let mut live = if !ends && b + 1 < nb {
                live_in[b + 1]
            } else {
                0
            };
            for mi in code[q..blocks.end(b)].iter().rev() {
                let target = |l: i64| blocks.block(l).map_or(u64::MAX, |t| live_in[t]);
                match mi.op {
                    MOp::Label => {}
                    MOp::J => live = target(mi.imm),
                    MOp::Ret | MOp::TailCall => live = at_return,
                    MOp::Call => live = (live & !clobbered) | args | bit(Reg::SP),
                    op if op.is_branch() => {
                        live |= target(mi.imm) | bit(mi.rs1) | bit(mi.rs2);
                    }
                    _ => {
                        live &= !bit(mi.rd);
                        live |= bit(mi.rs1) | bit(mi.rs2);
                    }
                }
            }
            live = (live & keep) | gen;
            if live != live_in[b] {
                live_in[b] = live;
                changed = true;
            }
        }
    }
    blocks.labels().map(|(l, b)| (l, live_in[b])).collect()
}

fn invert(op: MOp) -> MOp {
    match op {
        MOp::Beq => MOp::Bne,
        MOp::Bne => MOp::Beq,
        MOp::Blt => MOp::Bge,
        _ => MOp::Blt,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn label(b: i64) -> MInst {
        MInst::new(MOp::Label, Reg::NONE, Reg::NONE, Reg::NONE, b)
    }

    #[test]
    fn back_edge_copies_run_before_the_exit_branch() {
        let (a0, a1, a2, a3) = (Reg::a(0), Reg::a(1), Reg::a(2), Reg::a(3));
        let ret = MInst::new(MOp::Ret, Reg::NONE, a0, Reg::NONE, 0);
        // The loop: a2 counts, a3 carries `a0 + a2` round the back edge into a0; the exit
        // returns a0, so a3 is dead there.
        let body = |at_exit: MInst| {
            vec![
                label(0),
                MInst::r(MOp::Add, a3, a0, a2),
                MInst::i(MOp::Addi, a2, a2, 1),
                MInst::branch(MOp::Bge, a2, a1, 2),
                label(1),
                MInst::unary(MOp::Mv, a0, a3),
                MInst::jump(0),
                label(2),
                at_exit,
                ret,
            ]
        };
        // a0 is written by the copy and read at the exit: unchanged.
        let mut code = body(MInst::r(MOp::Add, a1, a0, a2));
        let before = code.clone();
        assert!(!copies_before_exit(&mut code));
        assert_eq!(code, before);
        // Written at the exit before anything reads it: dead there, so the copy moves up.
        let mut code = body(MInst::r(MOp::Add, a0, a2, a2));
        assert!(copies_before_exit(&mut code));
        let want = vec![
            label(0),
            MInst::r(MOp::Add, a3, a0, a2),
            MInst::i(MOp::Addi, a2, a2, 1),
            MInst::unary(MOp::Mv, a0, a3),
            MInst::branch(MOp::Blt, a2, a1, 0),
            label(2),
            MInst::r(MOp::Add, a0, a2, a2),
            ret,
        ];
        assert_eq!(code, want);
        // A copy into the branch's operand stays behind the branch.
        let mut code = body(MInst::r(MOp::Add, a0, a2, a2));
        code[5] = MInst::unary(MOp::Mv, a1, a3);
        assert!(!copies_before_exit(&mut code));
    }

    #[test]
    fn short_jump_targets_are_copied() {
        let (a0, a1, a2) = (Reg::a(0), Reg::a(1), Reg::a(2));
        let ret = MInst::new(MOp::Ret, Reg::NONE, a0, Reg::NONE, 0);
        // Block 2 (the latch: count, loop back to 1, else return) is laid out before the loop
        // body 1, which reaches it by `j 2`.
        let latch = [
            MInst::i(MOp::Addi, a2, a2, 1),
            MInst::branch(MOp::Blt, a2, a1, 1),
            ret,
        ];
        let mut code = vec![label(0), MInst::jump(1), label(2)];
        code.extend(latch);
        code.extend([
            label(1),
            MInst::r(MOp::Add, a0, a0, a2),
            MInst::branch(MOp::Beq, a0, a1, 3),
            MInst::jump(2),
            label(3),
            MInst::i(MOp::Addi, a0, a0, 1),
            label(4),
            MInst::jump(2),
        ]);
        let mut want = code.clone();
        // Block 4's `j 2` and the loop body's become copies of the latch, the entry's `j 1` a
        // copy of the body as it was (its `j 2` stays).
        want.splice(13..14, latch);
        want.splice(9..10, latch);
        want.splice(1..2, code[7..10].to_vec());
        assert!(copy_jump_targets(&mut code));
        assert_eq!(code, want);
    }

    #[test]
    fn jump_targets_falling_through_are_copied_with_a_jump() {
        let (a0, a1, a2) = (Reg::a(0), Reg::a(1), Reg::a(2));
        let ret = MInst::new(MOp::Ret, Reg::NONE, a0, Reg::NONE, 0);
        // Block 2 (count, back to 1, else fall into the exit 3) is reached by `j 2` from the
        // body 1 and by a branch from block 4.
        let latch = [
            MInst::i(MOp::Addi, a2, a2, 1),
            MInst::branch(MOp::Blt, a2, a1, 1),
        ];
        let mut code = vec![label(2)];
        code.extend(latch);
        code.extend([
            label(3),
            ret,
            label(1),
            MInst::r(MOp::Add, a0, a0, a2),
            MInst::jump(2),
            label(4),
            MInst::branch(MOp::Beq, a0, a1, 2),
            MInst::jump(3),
        ]);
        let mut want = code.clone();
        // The body's `j 2` becomes the latch and a jump to its fall-through; block 4's `j 3`
        // becomes the return.
        want[10] = ret;
        want.splice(7..8, [latch[0], latch[1], MInst::jump(3)]);
        assert!(copy_jump_targets(&mut code));
        assert_eq!(code, want);
    }

    #[test]
    fn loop_exits_move_out_of_line() {
        let (a0, a1, a2) = (Reg::a(0), Reg::a(1), Reg::a(2));
        let ret = MInst::new(MOp::Ret, Reg::NONE, Reg::NONE, Reg::NONE, 0);
        // Blocks 1..=4 form a loop (depth 1); 5 and 6 follow it. Block 2 leaves for 5 with a
        // copy, block 4 returns from inside the loop.
        let depth = |l: i64| match l {
            1..=4 => Some(1),
            0 | 5 | 6 => Some(0),
            _ => None,
        };
        let code = vec![
            label(0),
            MInst::jump(1),
            label(1),
            MInst::i(MOp::Addi, a0, a0, 1),
            MInst::branch(MOp::Blt, a0, a1, 3),
            label(2),
            MInst::unary(MOp::Mv, a2, a0),
            MInst::jump(5),
            label(3),
            MInst::branch(MOp::Bne, a2, Reg::ZERO, 1),
            label(4),
            ret,
            label(6),
            ret,
            label(5),
            MInst::unary(MOp::Mv, a0, a2),
            ret,
        ];
        let mut got = code.clone();
        assert!(exits_out_of_line(&mut got, depth));
        let want = vec![
            label(0),
            MInst::jump(1),
            label(1),
            MInst::i(MOp::Addi, a0, a0, 1),
            MInst::branch(MOp::Bge, a0, a1, 2),
            label(3),
            MInst::branch(MOp::Bne, a2, Reg::ZERO, 1),
            label(4),
            ret,
            label(6),
            ret,
            // Nothing fell through into 5: the exit goes before it, without its jump.
            label(2),
            MInst::unary(MOp::Mv, a2, a0),
            label(5),
            MInst::unary(MOp::Mv, a0, a2),
            ret,
        ];
        assert_eq!(got, want);
        // The return inside the loop (block 4) is the fall-through of a branch that stays (to
        // 1): it moves to the end.
        let mut code = vec![
            label(1),
            MInst::branch(MOp::Beq, a0, a1, 2),
            label(4),
            MInst::unary(MOp::Mv, a0, a2),
            ret,
            label(2),
            MInst::jump(1),
        ];
        assert!(exits_out_of_line(&mut code, depth));
        let want = vec![
            label(1),
            MInst::branch(MOp::Bne, a0, a1, 4),
            label(2),
            MInst::jump(1),
            label(4),
            MInst::unary(MOp::Mv, a0, a2),
            ret,
        ];
        assert_eq!(code, want);
        // Outside loops, or when the fall-through stays in the loop: unchanged.
        let outside = |l: i64| (l >= 0).then_some(0);
        let mut got = code.clone();
        assert!(!exits_out_of_line(&mut got, outside));
        let stays = |_: i64| Some(1);
        let mut got = code.clone();
        assert!(!exits_out_of_line(&mut got, stays));
        assert_eq!(got, code);
    }

    #[test]
    fn staying_in_the_loop_falls_through() {
        let (a0, a1, a2) = (Reg::a(0), Reg::a(1), Reg::a(2));
        let ret = MInst::new(MOp::Ret, Reg::NONE, Reg::NONE, Reg::NONE, 0);
        let mut code = vec![
            label(0),
            MInst::i(MOp::Addi, a0, a0, 1),
            MInst::branch(MOp::Blt, a0, a1, 3),
            MInst::branch(MOp::Bne, a2, Reg::ZERO, 2),
            MInst::jump(1),
            label(3),
            MInst::unary(MOp::Mv, a2, a0),
            MInst::jump(0),
            label(1),
            ret,
            label(2),
            ret,
        ];
        assert!(latch_fallthrough(&mut code));
        let want = vec![
            label(0),
            MInst::i(MOp::Addi, a0, a0, 1),
            MInst::branch(MOp::Bge, a0, a1, 4),
            label(3),
            MInst::unary(MOp::Mv, a2, a0),
            MInst::jump(0),
            label(1),
            ret,
            label(2),
            ret,
            label(4),
            MInst::branch(MOp::Bne, a2, Reg::ZERO, 2),
            MInst::jump(1),
        ];
        assert_eq!(code, want);
        // A forward jump after the branch target is no back edge: unchanged.
        let mut code = vec![
            label(0),
            MInst::branch(MOp::Blt, a0, a1, 3),
            MInst::branch(MOp::Bne, a2, Reg::ZERO, 2),
            MInst::jump(1),
            label(3),
            MInst::jump(1),
            label(1),
            ret,
            label(2),
            ret,
        ];
        let before = code.clone();
        assert!(!latch_fallthrough(&mut code));
        assert_eq!(code, before);
    }
}
