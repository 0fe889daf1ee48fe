//! If-conversion: branches whose two ways meet again become `select`s.
//!
//! A block `h` ending in `brif c, X, Y` where both ways reach one join block `j`, each either
//! directly or through one *arm* (a block whose only predecessor is `h`, holding only cheap
//! instructions that may run speculatively, ending in `jump j`):
//!
//! ```text
//!   both direct:  brif c, j(a), j(b)
//!   triangle:     brif c, t, j(b)        t: ...; jump j(a)
//!   diamond:      brif c, t, e           t: ...; jump j(a)     e: ...; jump j(b)
//! ```
//!
//! becomes `...arms...; p = select c, a, b (per differing argument); jump j(p)`, and the arms
//! go. `j` may have other predecessors: only the edges from `h` merge. Blocks are visited in
//! post-order, so an inner diamond becomes straight-line code before the branch around it is
//! judged, and chains of `&&` / `||` (a branch per operand) collapse into one expression. What
//! the selects then mean is `instcombine`'s business (`select c, 1, 0` is `c` widened; with
//! 0/1 arms a select is an `and`/`or` of booleans).
//!
//! Cost (the U74 machine model of the backend, in ALU operations; the core issues two per
//! cycle): a conditional branch costs an instruction, one of the two ways a taken-branch
//! bubble, and a misprediction 3 cycles, so a diamond costs roughly 2 to 5 cycles. Speculated instructions, the selects (4 operations
//! `b ^ ((a ^ b) & -c)` in general, 2 with a zero arm, at most 1 with a 0/1 constant and a
//! boolean arm, 3 with two booleans; `|x|` on the sign of `x` 3 with its negation, see
//! `ir::pattern`) and the compare that no longer fuses into the branch (none when every select
//! takes its mask from the sign of `x`) must stay under `LIMIT`; inside loops, where
//! a predictable branch is nearly free and a select lengthens loop-carried chains, under
//! `LOOP_LIMIT`. Loads, stores, calls and divisions never move.
//!
//! Needs: CFG and loop forest, from the analysis manager (the predecessor lists are kept up to
//! date here as edges merge); keeps nothing when it converts.
//! A join left with the converted block as its only predecessor is merged into it at once.
//! Cost: O(blocks + instructions).

use crate::analysis::{Cfg, FuncAnalyses, LoopForest, Preserved};
use crate::backend::riscv::model::{ISSUE_WIDTH, MISPREDICT_PENALTY, TAKEN_BRANCH_BUBBLE};
use crate::ir::pattern::{abs_select, sign_test};
use crate::ir::{mk, Block, CmpCond, Function, Inst, ModuleCx, Opcode, Type, Value};

/// Largest cost (ALU operations, `ISSUE_WIDTH` per cycle) traded for a branch outside loops:
/// the branch itself, the taken-branch bubble on one of the two ways, and a misprediction
/// every other time (a boolean computed from data is as good as random).
const LIMIT: u32 = 1 + ISSUE_WIDTH * TAKEN_BRANCH_BUBBLE + ISSUE_WIDTH * MISPREDICT_PENALTY / 2;
/// Largest cost traded for a branch inside a loop, where the predictor learns most branches:
/// the branch and its bubble only.
const LOOP_LIMIT: u32 = 1 + ISSUE_WIDTH * TAKEN_BRANCH_BUBBLE;
/// Most instructions an arm may hold.
const MAX_ARM: usize = 6;

pub fn run(f: &mut Function, _cx: &ModuleCx, am: &mut FuncAnalyses) -> Preserved {
    let (cfg, _, loops) = am.all(f);
    Preserved::unless(convert(f, cfg, loops))
}

/// If-converts every qualifying branch of `f`, given its CFG and loops (both describe `f` on
/// entry; the loops stay valid afterwards for every block that remains).
pub fn convert(f: &mut Function, cfg: &Cfg, loops: &LoopForest) -> bool {
    let mut preds = cfg.preds.to_vecs();
    let mut changed = false;
    for &h in cfg.rpo.iter().rev() {
        if !f.layout().is_block_inserted(h) {
            continue;
        }
        let limit = if loops.depth(h) > 0 {
            LOOP_LIMIT
        } else {
            LIMIT
        };
        // After a conversion `h` may end in the join's branch (merged below): try again.
        while convert_at(f, preds.as_mut_slice(), h, limit) {
            changed = true;
        }
    }
    changed
}

/// One way out of the branch: the join it reaches, the arm it passes (if any) and the values it
/// passes to the join's parameters.
struct Way {
    join: Block,
    arm: Option<Block>,
    /// An empty block the edge passes through (it stays if it has other predecessors).
    via: Option<Block>,
    args: Vec<Value>,
}

/// `b`'s target and arguments if it holds only a `jump` and has no parameters.
fn forwarded(f: &Function, b: Block) -> Option<(Block, Vec<Value>)> {
    let t = f.layout().first_inst(b)?;
    if f.op(t) != Opcode::Jump || !f.blocks.params[b].is_empty() {
        return None;
    }
    Some((Block::new(f.data(t).imm as usize), f.args(t).to_vec()))
}

fn convert_at(f: &mut Function, preds: &mut [Vec<Block>], h: Block, limit: u32) -> bool {
    let Some(t) = f.terminator(h) else {
        return false;
    };
    if f.op(t) != Opcode::Brif {
        return false;
    }
    let c = f.arg(t, 0);
    if f.as_iconst(c).is_some() {
        return false; // simplify_cfg folds it
    }
    let targets: Vec<(Block, Vec<Value>)> = f
        .branch_targets(t)
        .iter()
        .map(|tc| (tc.block, tc.args.to_vec()))
        .collect();
    // A direct edge, or one through an empty block that only jumps on (a preheader or a
    // split edge other passes left).
    let direct = |k: usize| {
        let (to, args) = (targets[k].0, &targets[k].1);
        match forwarded(f, to) {
            Some((join, fwd)) if to != h && join != to => Way {
                join,
                arm: None,
                via: Some(to),
                args: fwd,
            },
            _ => Way {
                join: to,
                arm: None,
                via: None,
                args: args.clone(),
            },
        }
    };
    let arm = |f: &Function, k: usize| arm_way(f, preds, h, targets[k].0);
    let (d0, d1) = (direct(0), direct(1));
    let (a, b) = if d0.join == d1.join {
        (d0, d1)
    } else {
        match (arm(f, 0), arm(f, 1)) {
            (Some(x), _) if x.join == d1.join => (x, d1),
            (_, Some(y)) if y.join == d0.join => (d0, y),
            (Some(x), Some(y)) if x.join == y.join => (x, y),
            _ => return false,
        }
    };
    let j = a.join;
    if j == h || a.arm == Some(j) || b.arm == Some(j) {
        return false;
    }
    // Cost of the straight-line version. A select on the sign of `x` takes its mask from `x`
    // (the compare goes unless something else reads it), and `|x|` is three operations, the
    // negation in its arm one of them.
    let mut cost = 0;
    for arm in [a.arm, b.arm].into_iter().flatten() {
        for i in f.layout().block_insts(arm) {
            if i != f.terminator(arm).unwrap() {
                cost += inst_cost(f, i);
            }
        }
    }
    let params = f.blocks.params[j].to_vec();
    let sign = sign_test(f, c, true).is_some();
    let mut reads_cond = false;
    for (k, &p) in params.iter().enumerate() {
        let (x, y) = (a.args[k], b.args[k]);
        if x == y {
            continue;
        }
        let ty = f.ty(p);
        if abs_select(f, ty, c, x, y).is_some() {
            cost += 2;
            continue;
        }
        let s = select_cost(f, ty, x, y);
        reads_cond |= !sign || s < 2;
        cost += s;
    }
    if reads_cond {
        cost += cond_cost(f, c, t);
    }
    if cost > limit {
        return false;
    }
    // Move the arms' instructions above the branch, their parameters replaced by the
    // arguments `h` passes them.
    for (way, k) in [(&a, 0), (&b, 1)] {
        let Some(arm) = way.arm else { continue };
        let aparams = f.blocks.params[arm].to_vec();
        for (&p, &v) in aparams.iter().zip(&targets[k].1) {
            f.replace_all_uses(p, v);
        }
        let insts: Vec<Inst> = f.layout().block_insts(arm).collect();
        for i in insts {
            if f.op(i).is_terminator() {
                f.remove_inst(i);
            } else {
                f.move_inst_before(i, t);
            }
        }
    }
    // The arms' jump arguments were read above, before the jumps went; parameters of the arms
    // may appear among them.
    let subst = |v: Value, way: &Way, k: usize, f: &Function| -> Value {
        let Some(arm) = way.arm else { return v };
        match f.blocks.params[arm].iter().position(|&p| p == v) {
            Some(n) => targets[k].1[n],
            None => v,
        }
    };
    let mut args = Vec::with_capacity(params.len());
    for (k, &p) in params.iter().enumerate() {
        let (x, y) = (subst(a.args[k], &a, 0, f), subst(b.args[k], &b, 1, f));
        if x == y {
            args.push(x);
        } else {
            let s = f.insert_new_before(t, mk::unary(Opcode::Select, f.ty(p)), &[c, x, y]);
            args.push(f.res(s));
        }
    }
    f.replace_inst(t, mk::jump(j), &args);
    for arm in [a.arm, b.arm].into_iter().flatten() {
        f.remove_block(arm);
    }
    // The join's predecessors: the arms and the direct edges from `h` become one edge from `h`.
    preds[j.index()].retain(|&p| p != h && Some(p) != a.arm && Some(p) != b.arm);
    for via in [a.via, b.via].into_iter().flatten() {
        preds[via.index()].retain(|&p| p != h);
        if preds[via.index()].is_empty() && f.layout().is_block_inserted(via) {
            f.remove_block(via);
            preds[j.index()].retain(|&p| p != via);
        }
    }
    preds[j.index()].push(h);
    if preds[j.index()][..] == [h] && j != f.entry() {
        merge_join(f, preds, h, j);
    }
    true
}

/// Merges `j`, whose only predecessor `h` now jumps to it, into `h`, so that `h` may be an arm
/// or a branch of the next conversion.
fn merge_join(f: &mut Function, preds: &mut [Vec<Block>], h: Block, j: Block) {
    let t = f.terminator(h).unwrap();
    let args = f.args(t).to_vec();
    let params = f.blocks.params[j].to_vec();
    for (&p, &a) in params.iter().zip(&args) {
        f.replace_all_uses(p, a);
    }
    f.remove_inst(t);
    for n in (0..params.len()).rev() {
        f.remove_block_param(j, n);
    }
    if let Some(first) = f.layout().first_inst(j) {
        f.split_tail(first, h);
    }
    f.remove_block(j);
    let succs: Vec<Block> = f.succs(h).collect();
    for s in succs {
        for p in preds[s.index()].iter_mut() {
            if *p == j {
                *p = h;
            }
        }
    }
}

/// `target` as an arm of the branch at the end of `h`: its only predecessor is `h`, it holds
/// only cheap speculatable instructions and ends in a `jump` elsewhere.
fn arm_way(f: &Function, preds: &[Vec<Block>], h: Block, target: Block) -> Option<Way> {
    if target == h || preds[target.index()][..] != [h] {
        return None;
    }
    let t = f.terminator(target)?;
    if f.op(t) != Opcode::Jump {
        return None;
    }
    let mut n = 0;
    for i in f.layout().block_insts(target) {
        if i == t {
            break;
        }
        n += 1;
        if n > MAX_ARM || !speculatable(f, i) {
            return None;
        }
    }
    let join = Block::new(f.data(t).imm as usize);
    if join == target {
        return None;
    }
    Some(Way {
        join,
        arm: Some(target),
        via: None,
        args: f.args(t).to_vec(),
    })
}

/// Whether `i` may run on a path where it did not before: pure and cheap (no memory, calls or
/// division, whose latency a branch would have skipped).
fn speculatable(f: &Function, i: Inst) -> bool {
    use Opcode::*;
    let op = f.op(i);
    op.is_pure() && !matches!(op, Sdiv | Srem | Fdiv | Alloca)
}

/// ALU operations `i` costs on the U74 (multiplies and floating point count double: they
/// issue on the one pipe that also takes branches and have 3-5 cycles of latency).
fn inst_cost(f: &Function, i: Inst) -> u32 {
    use Opcode::*;
    match f.op(i) {
        Iconst | Fconst | Gaddr => 0,
        Zext if f.ty(f.arg(i, 0)) == Type::I1 => 0,
        Icmp => match f.data(i).cond() {
            CmpCond::Lt | CmpCond::Gt => 1,
            CmpCond::Eq | CmpCond::Ne if f.as_iconst(f.arg(i, 1)) == Some(0) => 1,
            _ => 2,
        },
        Select => select_cost(f, f.ty(f.res(i)), f.arg(i, 1), f.arg(i, 2)),
        Mul | Mulhs | Mulhu | Fadd | Fsub | Fmul | Fcmp | Sitofp | Fptosi | Fpext | Gep => 2,
        _ => 1,
    }
}

/// The cost of having the condition in a register: nothing if something else already needs it
/// there, else the compare that fused into the branch.
fn cond_cost(f: &Function, c: Value, branch: Inst) -> u32 {
    let Some(ci) = f.def_inst(c) else { return 0 };
    if f.op(ci) != Opcode::Icmp || f.uses_of(c).any(|u| f.uses().user[u] != branch) {
        return 0;
    }
    inst_cost(f, ci)
}

/// ALU operations of `select c, a, b` once lowered (see `instcombine` and the RISC-V isel):
/// 0/1 arms are the condition itself or one boolean operation, a zero arm is a mask.
fn select_cost(f: &Function, ty: Type, a: Value, b: Value) -> u32 {
    if ty.is_float() {
        return 6;
    }
    if is_boolean(f, a, 2) && is_boolean(f, b, 2) {
        let konst = |v: Value| f.as_iconst(v).is_some();
        return if konst(a) || konst(b) { 1 } else { 3 };
    }
    if f.as_iconst(a) == Some(0) || f.as_iconst(b) == Some(0) {
        return 2;
    }
    4
}

/// Whether `v` is 0 or 1 in a way `instcombine` sees: a constant, an `i1`, a widened `i1`, or
/// a select of such values (which becomes one).
fn is_boolean(f: &Function, v: Value, depth: u32) -> bool {
    if matches!(f.as_iconst(v), Some(0 | 1)) || f.ty(v) == Type::I1 {
        return true;
    }
    let Some(i) = f.def_inst(v) else { return false };
    match f.op(i) {
        Opcode::Zext => f.ty(f.arg(i, 0)) == Type::I1,
        Opcode::Select if depth > 0 => {
            is_boolean(f, f.arg(i, 1), depth - 1) && is_boolean(f, f.arg(i, 2), depth - 1)
        }
        _ => false,
    }
}
