//! Pure computations moved above a call when fewer values then cross it.
//!
//! A value live across a call needs a callee-saved register (saved and restored once per call
//! of the function) or a stack slot (stored before the call, loaded after it). The code after
//! a call often computes something from values defined before it only (the second argument of
//! `f(x - 1) + f(x - 2)`, built from the pieces of `x`); computed after the call, all of its
//! inputs cross the call, computed before it, only its results do.
//!
//! For each call, the instructions between it and the next call (or the block's end) that are
//! pure (no memory, no call) and read only values available before the call, or results of
//! other such instructions, form a set `S`. Moving `S` above the call changes which values
//! cross it: an input of `S` stops crossing when `S` held all its uses after the call; a result
//! of `S` starts crossing when something outside `S` reads it. `S` moves, in order, when fewer
//! values cross. Constants and global addresses count for nothing (rematerialized, not kept).
//! A use in another block counts as crossing either way. Nothing is executed more or less
//! often, so only registers change.
//! Needs: nothing. Cost: O(instructions + uses of the values read by `S`).

use crate::analysis::{FuncAnalyses, Preserved};
use crate::ir::{Block, Function, Inst, ModuleCx, Opcode, Value};
use rustc_hash::{FxHashMap, FxHashSet};

/// Uses of one value examined at most (beyond, it is taken to cross the call either way).
const MAX_USES: usize = 64;

pub fn run(f: &mut Function, _cx: &ModuleCx, _am: &mut FuncAnalyses) -> Preserved {
    let mut changed = false;
    let blocks: Vec<Block> = f.layout().blocks().collect();
    for b in blocks {
        let calls: Vec<Inst> = f
            .layout()
            .block_insts(b)
            .filter(|&i| f.op(i) == Opcode::Call)
            .collect();
        if calls.is_empty() {
            continue;
        }
        // Positions in the block; an instruction moved above a call keeps its number, which
        // still orders it before the later calls (the only ones compared with it again).
        let pos: FxHashMap<Inst, u32> = f.layout().block_insts(b).zip(0..).collect();
        for call in calls {
            changed |= hoist_above(f, b, call, &pos);
        }
    }
    Preserved::cfg_kept(changed)
}

/// Rematerialized where needed: never holds a register across a call.
fn free(f: &Function, v: Value) -> bool {
    f.def_inst(v)
        .is_some_and(|i| matches!(f.op(i), Opcode::Iconst | Opcode::Fconst | Opcode::Gaddr))
}

/// Moves the set `S` of the module note above `call` if fewer values then cross it.
fn hoist_above(f: &mut Function, b: Block, call: Inst, pos: &FxHashMap<Inst, u32>) -> bool {
    // The segment after the call, up to the next call or the terminator.
    let mut segment: Vec<Inst> = Vec::new();
    let mut cur = f.layout().next_inst(call);
    while let Some(i) = cur {
        if f.op(i) == Opcode::Call || f.op(i).is_terminator() {
            break;
        }
        segment.push(i);
        cur = f.layout().next_inst(i);
    }
    let mut after: FxHashSet<Value> = segment.iter().filter_map(|&i| f.result(i)).collect();
    after.extend(f.result(call));
    let mut set: FxHashSet<Inst> = FxHashSet::default();
    let mut moved: Vec<Inst> = Vec::new();
    let mut results: FxHashSet<Value> = FxHashSet::default();
    for &i in &segment {
        if !f.op(i).is_pure() {
            continue;
        }
        if f.args(i)
            .iter()
            .all(|a| !after.contains(a) || results.contains(a))
        {
            set.insert(i);
            moved.push(i);
            results.extend(f.result(i));
        }
    }
    if moved.is_empty() {
        return false;
    }
    // Whether `v` is read after the call by an instruction `counts` accepts (another block's
    // instruction counts as after it). A value with very many uses counts as read either way.
    let read_after = |v: Value, counts: &dyn Fn(Inst) -> bool| {
        if f.uses_of(v).nth(MAX_USES).is_some() {
            return true;
        }
        f.uses_of(v).any(|u| {
            let user = f.uses().user[u];
            counts(user) && (f.layout().inst_block(user) != Some(b) || pos[&user] > pos[&call])
        })
    };
    let mut inputs: Vec<Value> = moved
        .iter()
        .flat_map(|&i| f.args(i).iter().copied())
        .filter(|a| !results.contains(a) && !free(f, *a))
        .collect();
    inputs.sort();
    inputs.dedup();
    let mut before = 0usize;
    let mut then = 0usize;
    for &x in &inputs {
        before += usize::from(read_after(x, &|_| true));
        then += usize::from(read_after(x, &|u| !set.contains(&u)));
    }
    for &r in &results {
        if !free(f, r) {
            then += usize::from(read_after(r, &|u| !set.contains(&u)));
        }
    }
    if then >= before {
        return false;
    }
    for i in moved {
        f.move_inst_before(i, call);
    }
    true
}
