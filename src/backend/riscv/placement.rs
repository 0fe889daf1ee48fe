//! Static block placement on allocated code (labels present, after `peephole` and
//! `sched::after_alloc`): the blocks are reordered so that the likely successor of each block
//! falls through.
//!
//! Placing the allocated code sees what is left of each block after coalescing: edge blocks
//! whose copies vanished are gone, and the allocation (which depends on the order of the
//! instructions) is not disturbed.
//!
//! A block runs from one label to the next. Its transfers are its branches, its final `j`,
//! `ret` or tail call, or else the fall-through into the next block, which is made an explicit
//! `j` before the blocks move. A block can fall through to the target of its final `j`, or,
//! when it has exactly one conditional branch and that branch is followed only by the `j`, to
//! that branch's target (the branch is inverted). Every other transfer that runs is a taken
//! branch or jump.
//!
//! 1. Loops: natural loops of the label CFG (back edge `t -> h` with `h` dominating `t`;
//!    loops sharing a header merge), nested by discovery from the innermost header outwards.
//! 2. Edge probabilities, per block over its distinct successors: edges that leave the block's
//!    innermost loop share `EXIT_PROB` when some edge stays; a two-way `beq` on two registers
//!    is taken with `EQ_PROB`, a `bne` on two registers with `1 - EQ_PROB`; otherwise even.
//! 3. Block frequencies: the flow equations `f(b) = [b = entry] + sum f(p) prob(p -> b)`,
//!    solved by sweeps in reverse postorder; a loop header divides its inflow from outside by
//!    one minus the share of its frequency that came back round the loop in the sweep before
//!    (exact for a single loop after two sweeps; nested loops take a few more). At most
//!    `MAX_SWEEPS` sweeps.
//! 4. Chains (Pettis-Hansen): the possible fall-through edges, heaviest first (weight
//!    `f(u) prob(u -> v)`, ties in layout order), join the chain ending at `u` to the chain
//!    starting at `v` when they differ and `v` is not the entry. A loop thus falls through along
//!    its hot path and leaves its lightest edge (usually the back edge) taken; cold exits end
//!    up in chains of their own.
//! 5. The chains are laid out in the order of their earliest block in the old layout (the
//!    entry's chain first). Then a `j` to the next label goes and `bcc L1; j L2; L1:` becomes
//!    `b!cc L2; L1:`.
//!
//! Blocks keep their code; only their order and their final jumps change. Deterministic: no
//! hash iteration, ties broken by layout position. Cost: O(edges * sweeps) for the
//! frequencies, O(edges log edges) for the chains, O(instructions) to rebuild.

use super::layout::LabelBlocks;
use super::loops::{dominators, rpo_and_preds, Preds};
use super::minst::*;

/// Probability shared by the edges leaving a loop from a block that also stays in it.
const EXIT_PROB: f64 = 0.125;
/// Probability that an equality branch (`beq`) on two registers is taken.
const EQ_PROB: f64 = 0.375;
/// Most frequency sweeps.
const MAX_SWEEPS: usize = 24;
/// The largest share of a header's frequency that may come back round its loop.
const MAX_CYCLIC: f64 = 0.99;

const NONE: u32 = u32::MAX;

/// One block of allocated code for placement: where it lies, its distinct successors (block
/// indices) in the order its transfers name them, and those it may fall through to.
struct Block {
    range: std::ops::Range<usize>,
    succs: Vec<u32>,
    falls: Vec<u32>,
    /// Falls through into the next block of the old layout (no final transfer).
    open: bool,
}

/// Reorders the blocks of allocated code `code` (see the module comment). Returns whether
/// anything changed. Code it cannot read as blocks (no label first, a target without a label,
/// a last block that falls off the end) is left alone.
pub fn run(code: &mut Vec<MInst>) -> bool {
    if code.first().is_none_or(|mi| mi.op != MOp::Label) {
        return false;
    }
    let lb = LabelBlocks::of(code);
    let n = lb.starts.len();
    if n < 3 {
        return false;
    }
    let mut blocks: Vec<Block> = Vec::with_capacity(n);
    for k in 0..n {
        let range = lb.starts[k]..lb.end(k);
        let body = &code[range.start + 1..range.end];
        let mut succs: Vec<u32> = Vec::with_capacity(2);
        let mut branches = 0;
        for mi in body {
            if mi.op.is_branch() || mi.op == MOp::J {
                branches += mi.op.is_branch() as usize;
                let Some(t) = lb.block(mi.imm) else {
                    return false;
                };
                if !succs.contains(&(t as u32)) {
                    succs.push(t as u32);
                }
            }
        }
        let open = !body.last().is_some_and(|mi| mi.op.is_terminator());
        let mut falls = Vec::with_capacity(2);
        let last_branch_at = if open {
            if k + 1 == n {
                return false;
            }
            if !succs.contains(&(k as u32 + 1)) {
                succs.push(k as u32 + 1);
            }
            falls.push(k as u32 + 1);
            body.len().checked_sub(1)
        } else if body.last().is_some_and(|mi| mi.op == MOp::J) {
            falls.push(lb.block(body[body.len() - 1].imm).unwrap() as u32);
            body.len().checked_sub(2)
        } else {
            None
        };
        if let Some(at) = last_branch_at.filter(|_| branches == 1) {
            if body[at].op.is_branch() {
                let t = lb.block(body[at].imm).unwrap() as u32;
                if !falls.contains(&t) {
                    falls.push(t);
                }
            }
        }
        blocks.push(Block {
            range,
            succs,
            falls,
            open,
        });
    }
    let order = choose(code, &blocks);
    if order.iter().enumerate().all(|(k, &b)| k == b as usize) {
        return false;
    }
    let mut out: Vec<MInst> = Vec::with_capacity(code.len() + n);
    for &b in &order {
        let blk = &blocks[b as usize];
        out.extend_from_slice(&code[blk.range.clone()]);
        if blk.open {
            let next = code[blocks[b as usize + 1].range.start].imm;
            out.push(MInst::new(MOp::J, Reg::NONE, Reg::NONE, Reg::NONE, next));
        }
    }
    drop_jumps_to_next(&mut out);
    *code = out;
    true
}

/// A `j` to the label right after it goes; `bcc L1; j L2; L1:` becomes `b!cc L2; L1:`.
fn drop_jumps_to_next(code: &mut Vec<MInst>) {
    let mut w = 0;
    for k in 0..code.len() {
        let mi = code[k];
        if mi.op == MOp::J {
            if let Some(next) = code.get(k + 1).filter(|x| x.op == MOp::Label) {
                if next.imm == mi.imm {
                    continue;
                }
                if w > 0 && code[w - 1].op.is_branch() && code[w - 1].imm == next.imm {
                    code[w - 1].op = code[w - 1].op.inverted();
                    code[w - 1].imm = mi.imm;
                    continue;
                }
            }
        }
        code[w] = mi;
        w += 1;
    }
    code.truncate(w);
}

/// Per block, the innermost natural loop holding it (an index into the loops, or `NONE`); per
/// loop its parent loop (`NONE` for an outermost loop) and its header (by block number).
fn loop_nest(cfg: &MFunc, rpo: &[MBlock], preds: &Preds) -> (Vec<u32>, Vec<u32>, Vec<u32>) {
    let nb = cfg.blocks.len();
    let entry = rpo[0];
    let (idom, rpo_num) = dominators(rpo, preds, entry, nb);
    let dominates = |h: MBlock, mut b: MBlock| loop {
        if b == h {
            return true;
        }
        match idom[b] {
            Some(d) if d != b => b = d,
            _ => return false,
        }
    };
    let mut loop_of = vec![NONE; nb];
    let mut parent: Vec<u32> = Vec::new();
    let mut header: Vec<MBlock> = Vec::new();
    let mut work: Vec<MBlock> = Vec::new();
    // Inner headers come later in reverse postorder: discovered first.
    for &h in rpo.iter().rev() {
        work.clear();
        work.extend(preds[h].iter().copied().filter(|&p| dominates(h, p)));
        if work.is_empty() {
            continue;
        }
        let l = parent.len() as u32;
        parent.push(NONE);
        header.push(h);
        if loop_of[h.index()] == NONE {
            loop_of[h.index()] = l;
        }
        while let Some(x) = work.pop() {
            if rpo_num[x].is_none() {
                continue;
            }
            let mut top = loop_of[x.index()];
            if top == NONE {
                loop_of[x.index()] = l;
                work.extend(preds[x].iter().copied());
                continue;
            }
            while parent[top as usize] != NONE {
                top = parent[top as usize];
            }
            if top != l {
                parent[top as usize] = l;
                work.extend(preds[header[top as usize]].iter().copied());
            }
        }
    }
    let header = header.iter().map(|h| h.index() as u32).collect();
    (loop_of, parent, header)
}

/// The new block order (indices into `blocks`, the old layout): see the module comment.
fn choose(code: &[MInst], blocks: &[Block]) -> Vec<u32> {
    let nb = blocks.len();
    // The CFG as machine blocks, for the loop analyses.
    let cfg = MFunc {
        blocks: blocks
            .iter()
            .map(|b| MBlockData {
                succs: b.succs.iter().map(|&s| MBlock::new(s as usize)).collect(),
                ..Default::default()
            })
            .collect(),
        order: (0..nb).map(MBlock::new).collect(),
        ..Default::default()
    };
    let (rpo, preds) = rpo_and_preds(&cfg, MBlock::new(0));
    let (loop_of, parent, header) = loop_nest(&cfg, &rpo, &preds);
    // From here on blocks go by their numbers in `blocks`.
    let rpo: Vec<u32> = rpo.iter().map(|b| b.index() as u32).collect();
    let within = |s: u32, l: u32| {
        let mut x = loop_of[s as usize];
        while x != NONE {
            if x == l {
                return true;
            }
            x = parent[x as usize];
        }
        false
    };
    // Edge probabilities, per block over its distinct successors.
    let mut succ: Vec<Vec<(u32, f64)>> = vec![Vec::new(); nb];
    for &b in &rpo {
        let blk = &blocks[b as usize];
        let ss = &blk.succs;
        let n = ss.len();
        if n == 0 {
            continue;
        }
        let mut p = vec![1.0 / n as f64; n];
        if n == 2 {
            let body = &code[blk.range.clone()];
            if let Some(br) = body.iter().find(|mi| mi.op.is_branch()) {
                let two_regs = br.rs1 != Reg::ZERO && br.rs2 != Reg::ZERO;
                let t = match br.op {
                    MOp::Beq if two_regs => Some(EQ_PROB),
                    MOp::Bne if two_regs => Some(1.0 - EQ_PROB),
                    _ => None,
                };
                let target = ss
                    .iter()
                    .position(|&s| code[blocks[s as usize].range.start].imm == br.imm);
                if let (Some(t), Some(k)) = (t, target) {
                    p[k] = t;
                    p[1 - k] = 1.0 - t;
                }
            }
        }
        let l = loop_of[b as usize];
        if l != NONE {
            let exits: Vec<bool> = ss.iter().map(|&s| !within(s, l)).collect();
            let ne = exits.iter().filter(|&&e| e).count();
            if ne > 0 && ne < n {
                let stay: f64 = (0..n).filter(|&k| !exits[k]).map(|k| p[k]).sum();
                for k in 0..n {
                    p[k] = if exits[k] {
                        EXIT_PROB / ne as f64
                    } else {
                        (1.0 - EXIT_PROB) * p[k] / stay
                    };
                }
            }
        }
        succ[b as usize] = ss.iter().copied().zip(p).collect();
    }
    let mut is_header = vec![false; nb];
    header.iter().for_each(|&h| is_header[h as usize] = true);
    let freq = frequencies(&rpo, &succ, &is_header);
    chains(&succ, blocks, &freq)
}

/// Pettis-Hansen chains over the possible fall-through edges, laid out by their earliest
/// block (block 0, the entry, first).
fn chains(succ: &[Vec<(u32, f64)>], blocks: &[Block], freq: &[f64]) -> Vec<u32> {
    let nb = blocks.len();
    // Candidate fall-through edges, heaviest first, ties in layout order.
    let mut cands: Vec<(f64, u32, u32)> = Vec::new();
    for (b, blk) in blocks.iter().enumerate() {
        for &v in &blk.falls {
            if v == 0 || v as usize == b {
                continue;
            }
            let p = succ[b].iter().find(|e| e.0 == v).map_or(0.0, |e| e.1);
            cands.push((freq[b] * p, b as u32, v));
        }
    }
    cands.sort_by(|x, y| y.0.total_cmp(&x.0).then(x.1.cmp(&y.1)).then(x.2.cmp(&y.2)));
    // Chains as linked lists; `head` and `tail` are kept up to date for the ends of chains.
    let mut next = vec![NONE; nb];
    let mut prev = vec![NONE; nb];
    let mut head: Vec<u32> = (0..nb as u32).collect();
    let mut tail: Vec<u32> = (0..nb as u32).collect();
    for &(_, u, v) in &cands {
        // `u` ends its chain, `v` starts its own, and they are different chains.
        if next[u as usize] != NONE || prev[v as usize] != NONE {
            continue;
        }
        let (hu, tv) = (head[u as usize], tail[v as usize]);
        if hu == v {
            continue;
        }
        next[u as usize] = v;
        prev[v as usize] = u;
        head[tv as usize] = hu;
        tail[hu as usize] = tv;
    }
    // Walking the old layout, each block not yet placed places its whole chain.
    let mut placed = vec![false; nb];
    let mut order = Vec::with_capacity(nb);
    for b in 0..nb as u32 {
        if placed[b as usize] {
            continue;
        }
        let mut x = b;
        while prev[x as usize] != NONE {
            x = prev[x as usize];
        }
        while x != NONE {
            placed[x as usize] = true;
            order.push(x);
            x = next[x as usize];
        }
    }
    order
}

/// Block frequencies from edge probabilities (see the module comment), entry 1; blocks not
/// in `rpo` (unreachable) get 0.
fn frequencies(rpo: &[u32], succ: &[Vec<(u32, f64)>], is_header: &[bool]) -> Vec<f64> {
    let nb = succ.len();
    let mut rpo_num = vec![u32::MAX; nb];
    for (i, &b) in rpo.iter().enumerate() {
        rpo_num[b as usize] = i as u32;
    }
    // In-edges per block: (source, probability), forward ones and retreating ones.
    let mut fwd: Vec<Vec<(u32, f64)>> = vec![Vec::new(); nb];
    let mut back: Vec<Vec<(u32, f64)>> = vec![Vec::new(); nb];
    for &b in rpo {
        for &(s, p) in &succ[b as usize] {
            if rpo_num[s as usize] > rpo_num[b as usize] {
                fwd[s as usize].push((b, p));
            } else {
                back[s as usize].push((b, p));
            }
        }
    }
    let flow = |edges: &[(u32, f64)], freq: &[f64]| -> f64 {
        edges.iter().map(|&(p, q)| freq[p as usize] * q).sum()
    };
    let mut freq = vec![0.0f64; nb];
    for sweep in 0..MAX_SWEEPS {
        let mut change = 0.0f64;
        for (i, &b) in rpo.iter().enumerate() {
            let b = b as usize;
            let inflow = (i == 0) as u8 as f64 + flow(&fwd[b], &freq);
            let old = freq[b];
            let cyc = flow(&back[b], &freq);
            let new = if !is_header[b] {
                inflow + cyc
            } else if old > 0.0 {
                inflow / (1.0 - (cyc / old).min(MAX_CYCLIC))
            } else {
                inflow
            };
            if old > 0.0 {
                change = change.max((new - old).abs() / old);
            } else if new > 0.0 {
                change = 1.0;
            }
            freq[b] = new;
        }
        if sweep > 1 && change < 1e-3 {
            break;
        }
    }
    freq
}

#[cfg(test)]
mod tests {
    use super::*;

    fn label(l: i64) -> MInst {
        MInst::new(MOp::Label, Reg::NONE, Reg::NONE, Reg::NONE, l)
    }

    fn ret() -> MInst {
        MInst::new(MOp::Ret, Reg::NONE, Reg::NONE, Reg::NONE, 0)
    }

    /// Taken branches and jumps along `path` (labels in the order the run visits them): each
    /// step goes by the first transfer after the label that names the next label, or by
    /// falling into it.
    fn taken(code: &[MInst], path: &[i64]) -> usize {
        let at = |l: i64| {
            code.iter()
                .position(|mi| mi.op == MOp::Label && mi.imm == l)
        };
        let mut n = 0;
        for w in path.windows(2) {
            let from = at(w[0]).expect("label in the code");
            let step = code[from + 1..]
                .iter()
                .find(|mi| {
                    mi.op == MOp::Label
                        || mi.op.is_terminator()
                        || (mi.op.is_branch() && mi.imm == w[1])
                })
                .expect("a transfer");
            match step.op {
                MOp::Label => assert_eq!(step.imm, w[1], "falls into another label"),
                MOp::J => {
                    assert_eq!(step.imm, w[1], "jumps elsewhere");
                    n += 1;
                }
                op if op.is_branch() => n += 1,
                _ => panic!("leaves the path"),
            }
        }
        n
    }

    /// A loop `while (x != 1 && s < 300) { if (x % 2) odd else even }`: label 1 tests
    /// `x != 1`, 2 tests `s < 300`, 6 tests the parity, 3 is the even arm, 4 the odd one, 5
    /// returns.
    fn parity_loop() -> Vec<MInst> {
        let (a0, a2, a3, a4, a5) = (Reg::a(0), Reg::a(2), Reg::a(3), Reg::a(4), Reg::a(5));
        vec![
            label(0),
            MInst::li(a4, 1),
            MInst::li(a5, 300),
            label(1),
            MInst::branch(MOp::Beq, a0, a4, 5),
            label(2),
            MInst::branch(MOp::Bge, a2, a5, 5),
            label(6),
            MInst::i(MOp::Andi, a3, a0, 1),
            MInst::branch(MOp::Bne, a3, Reg::ZERO, 4),
            label(3),
            MInst::i(MOp::Srai, a0, a0, 1),
            MInst::i(MOp::Addi, a2, a2, 1),
            MInst::jump(1),
            label(4),
            MInst::r(MOp::Mul, a0, a0, a5),
            MInst::i(MOp::Addi, a2, a2, 1),
            MInst::jump(1),
            label(5),
            ret(),
        ]
    }

    #[test]
    fn each_arm_of_a_loop_takes_one_branch() {
        let mut code = parity_loop();
        let even = [1, 2, 6, 3, 1];
        let odd = [1, 2, 6, 4, 1];
        assert_eq!((taken(&code, &even), taken(&code, &odd)), (1, 2));
        assert!(run(&mut code));
        assert_eq!((taken(&code, &even), taken(&code, &odd)), (1, 1));
        // The entry stays first; the odd arm falls into the loop test, which runs on to the
        // even arm; the exit stays last.
        let labels: Vec<i64> = code
            .iter()
            .filter(|mi| mi.op == MOp::Label)
            .map(|mi| mi.imm)
            .collect();
        assert_eq!(labels, vec![0, 4, 1, 2, 6, 3, 5]);
        // The entry, which fell into the loop test, now jumps to it; the odd arm's jump to it
        // went.
        assert_eq!(code[3], MInst::jump(1));
        assert_eq!(code.len(), parity_loop().len());
        // Placed code stays as it is.
        assert!(!run(&mut code));
    }

    #[test]
    fn a_branch_over_a_jump_is_inverted_and_exits_go_last() {
        let (a0, a1) = (Reg::a(0), Reg::a(1));
        // The loop body 1 leaves for 3 (laid out next) or goes on to the latch 2.
        let mut code = vec![
            label(0),
            MInst::jump(1),
            label(1),
            MInst::i(MOp::Addi, a0, a0, 1),
            MInst::branch(MOp::Blt, a0, a1, 2),
            label(3),
            ret(),
            label(2),
            MInst::i(MOp::Addi, a1, a1, -1),
            MInst::jump(1),
        ];
        assert!(run(&mut code));
        let want = vec![
            label(0),
            label(1),
            MInst::i(MOp::Addi, a0, a0, 1),
            MInst::branch(MOp::Bge, a0, a1, 3),
            label(2),
            MInst::i(MOp::Addi, a1, a1, -1),
            MInst::jump(1),
            label(3),
            ret(),
        ];
        assert_eq!(code, want);
    }

    #[test]
    fn nested_loops_and_frequencies() {
        // 0 -> 1 (outer header: exit 4 or inner 2); 2 (inner header: back to 2 or 3);
        // 3: outer latch -> 1; 4 returns.
        let succs: [&[u32]; 5] = [&[1], &[4, 2], &[2, 3], &[1], &[]];
        let cfg = MFunc {
            blocks: succs
                .iter()
                .map(|s| MBlockData {
                    succs: s.iter().map(|&b| MBlock::new(b as usize)).collect(),
                    ..Default::default()
                })
                .collect(),
            order: (0..5).map(MBlock::new).collect(),
            ..Default::default()
        };
        let (rpo, preds) = rpo_and_preds(&cfg, MBlock::new(0));
        let (loop_of, parent, header) = loop_nest(&cfg, &rpo, &preds);
        let rpo: Vec<u32> = rpo.iter().map(|b| b.index() as u32).collect();
        // Inner loop {2} inside outer loop {1, 2, 3}.
        let inner = loop_of[2];
        assert_ne!(inner, NONE);
        assert_eq!(header[inner as usize], 2);
        assert_eq!(parent[inner as usize], loop_of[1]);
        assert_eq!(header[loop_of[1] as usize], 1);
        assert_eq!(loop_of[3], loop_of[1]);
        assert_eq!((loop_of[0], loop_of[4]), (NONE, NONE));
        let succ: Vec<Vec<(u32, f64)>> = vec![
            vec![(1, 1.0)],
            vec![(4, 0.125), (2, 0.875)],
            vec![(2, 0.875), (3, 0.125)],
            vec![(1, 1.0)],
            vec![],
        ];
        let is_header = [false, true, true, false, false];
        let f = frequencies(&rpo, &succ, &is_header);
        // Outer header 1 / 0.125 = 8 times, inner block 8 * 7/8 / (1/8) = 56 times.
        assert!((f[1] - 8.0).abs() < 0.05, "{f:?}");
        assert!((f[2] - 56.0).abs() < 0.5, "{f:?}");
        assert!((f[4] - 1.0).abs() < 0.01, "{f:?}");
    }
}
