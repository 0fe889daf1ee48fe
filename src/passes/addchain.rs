//! Latency-aware reassociation of integer addition chains.
//!
//! A chain is a tree of i32 `add`s, and left shifts by constants, inside one block whose inner
//! nodes have no other use. A shift of a sum shifts each term (`(a + b) << k` is
//! `(a << k) + (b << k)` in wrapping arithmetic), so the chain is a sum of shifted leaves: a
//! number packed from bits, `((b15 * 2 + b14) * 2 + ...) * 2 + b0`, is the sum of `b_i << i`,
//! whose terms need not wait for each other, nor all live until the last one is known. It is
//! rebuilt only when that takes no more instructions (one shift per shifted leaf, one
//! addition less than leaves; shifts of shifts add up). Its
//! leaves arrive at different times: a quotient after the divider's long latency, a loaded word
//! after the load, and in a block that loops to itself, a parameter the block passes itself
//! from this very sum only once the previous iteration computed it. Summing the early leaves
//! first and the late ones last shortens the path from the latest leaf to the sum to one
//! addition: `((a + b) + late) + c` becomes `((a + b) + c) + late`. For a recurrence through
//! the chain (a running sum, a sweep reading the value it wrote one step before) that path is
//! the loop's critical path.
//!
//! Phases, per block: estimate when each value of the block is ready (operands' readiness plus
//! a latency per opcode: division 34, multiplication and loads 3, others 1; loads issue one per
//! cycle and divisions one at a time, in block order; values from elsewhere at 0); find the
//! chains' roots; for each, mark the block's parameters its own back edge feeds from the root
//! as last of all; rebuild the chain by adding the two earliest values first, repeatedly, when
//! that makes it ready strictly earlier. The old nodes are deleted. Exact in wrapping i32
//! arithmetic.
//! Needs: nothing. Keeps the CFG. Cost: O(instructions + leaves * log leaves) per block and
//! chain.

use crate::analysis::{FuncAnalyses, Preserved};
use crate::ir::{mk, Block, Function, IdVec, Inst, ModuleCx, Opcode, Type, Value};
use rustc_hash::{FxHashMap, FxHashSet};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Chains with more leaves stay as they are (bounds the work on huge sums).
const MAX_LEAVES: usize = 32;

/// Readiness of a parameter the block passes itself from the sum being built: after
/// everything computed in the block.
const LATE: u32 = 1 << 20;

/// The cost of an addition when choosing which values to add together: above its one cycle
/// of latency, so that values ready at nearly the same time pair up in a balanced tree (cheaper
/// on cores with longer ALU latency, no dearer here).
const MERGE_LATENCY: u32 = 2;

/// An operand of a rebuilt addition: a leaf and its shift, or `Err(k)`, the plan's k-th sum.
type Operand = Result<(Value, u32), usize>;

/// Cycles from an instruction's issue until its result can be used, roughly.
fn latency(op: Opcode) -> u32 {
    match op {
        Opcode::Sdiv | Opcode::Srem | Opcode::Fdiv => 34,
        Opcode::Mul | Opcode::Mulhs | Opcode::Mulhu | Opcode::Load | Opcode::Fptosi => 3,
        _ => 1,
    }
}

fn is_add(f: &Function, i: Inst) -> bool {
    f.op(i) == Opcode::Add && f.result(i).is_some_and(|r| f.ty(r) == Type::I32)
}

/// A left shift of an i32 by a constant in 1..32.
fn shift_amount(f: &Function, i: Inst) -> Option<u32> {
    if f.op(i) != Opcode::Shl || f.result(i).is_none_or(|r| f.ty(r) != Type::I32) {
        return None;
    }
    f.as_iconst(f.arg(i, 1))
        .filter(|c| (1..32).contains(c))
        .map(|c| c as u32)
}

/// A node a chain may pass through: an i32 add, or a shift by a constant, in block `b`.
fn is_node(f: &Function, b: Block, i: Inst) -> bool {
    (is_add(f, i) || shift_amount(f, i).is_some()) && f.layout().inst_block(i) == Some(b)
}

/// The instruction reading `v` (which has one use).
fn only_user(f: &Function, v: Value) -> Inst {
    f.uses().user[f.uses_of(v).next().unwrap()]
}

/// An inner node of a chain in block `b`: a node of `b` whose only use is another node.
fn is_inner(f: &Function, b: Block, v: Value) -> bool {
    let Some(i) = f.def_inst(v) else { return false };
    if !is_node(f, b, i) || !f.has_one_use(v) {
        return false;
    }
    is_node(f, b, only_user(f, v))
}

pub fn run(f: &mut Function, _cx: &ModuleCx, _am: &mut FuncAnalyses) -> Preserved {
    let blocks: Vec<Block> = f.layout().blocks().collect();
    let mut changed = false;
    let mut ready = Readiness::default();
    for b in blocks {
        changed |= run_block(f, b, &mut ready);
        ready.clear();
    }
    Preserved::cfg_kept(changed)
}

/// When each value of the block being scanned is ready, in a table by value shared by the
/// blocks of a function: values not written since the last `clear` (those of other blocks)
/// read 0.
#[derive(Default)]
struct Readiness {
    time: IdVec<Value, u32>,
    /// The values written since the last `clear`.
    written: Vec<Value>,
}

impl Readiness {
    fn get(&self, v: Value) -> u32 {
        self.time.get(v).copied().unwrap_or(0)
    }

    fn set(&mut self, v: Value, t: u32) {
        self.time.ensure(v, 0);
        self.time[v] = t;
        self.written.push(v);
    }

    /// Forgets the values written: they read 0 again.
    fn clear(&mut self) {
        for v in self.written.drain(..) {
            self.time[v] = 0;
        }
    }
}

/// The arguments `b` passes back to its own parameters, when it branches to itself once.
fn self_loop_args(f: &Function, b: Block) -> Option<Vec<Value>> {
    let t = f.terminator(b)?;
    let back: Vec<Vec<Value>> = f
        .branch_targets(t)
        .iter()
        .filter(|c| c.block == b)
        .map(|c| c.args.to_vec())
        .collect();
    match &back[..] {
        [args] => Some(args.clone()),
        _ => None,
    }
}

/// `ready` holds no value of another block (it reads 0 for all).
fn run_block(f: &mut Function, b: Block, ready: &mut Readiness) -> bool {
    let back = self_loop_args(f, b);
    let insts: Vec<Inst> = f.layout().block_insts(b).collect();
    let mut roots = Vec::new();
    let (mut mem_free, mut div_free) = (0u32, 0u32);
    for &i in &insts {
        if f.op(i) == Opcode::Store {
            mem_free += 1;
        }
        let Some(r) = f.result(i) else { continue };
        let mut t = f.args(i).iter().map(|&a| ready.get(a)).max().unwrap_or(0);
        // One memory access per cycle, one division at a time.
        match f.op(i) {
            Opcode::Load => {
                t = t.max(mem_free);
                mem_free = t + 1;
            }
            Opcode::Sdiv | Opcode::Srem => {
                t = t.max(div_free);
                div_free = t + latency(f.op(i));
            }
            _ => {}
        }
        ready.set(r, t.saturating_add(latency(f.op(i))));
        // A sum shifted by its one user is a root too: if the larger chain through the shift
        // is not rebuilt, this one still is (and one that is sees the rebuilt sum).
        if is_add(f, i) && !(is_inner(f, b, r) && is_add(f, only_user(f, r))) {
            roots.push(i);
        }
    }
    let mut changed = false;
    for root in roots {
        // Leaves in tree order with the shift applied to each (a shift of a sum shifts its
        // terms: `(a + b) << k` is `(a << k) + (b << k)` in wrapping arithmetic), and the
        // tree's nodes in pre-order (the root first).
        let mut leaves: Vec<(Value, u32)> = Vec::new();
        let mut nodes: Vec<Inst> = Vec::new();
        let mut stack = vec![(f.res(root), 0u32)];
        while let Some((v, s)) = stack.pop() {
            if v == f.res(root) || is_inner(f, b, v) {
                let i = f.def_inst(v).unwrap();
                match shift_amount(f, i) {
                    Some(k) if s + k < 32 => {
                        nodes.push(i);
                        stack.push((f.arg(i, 0), s + k));
                    }
                    Some(_) => leaves.push((v, s)),
                    None => {
                        nodes.push(i);
                        stack.push((f.arg(i, 1), s));
                        stack.push((f.arg(i, 0), s));
                    }
                }
            } else {
                leaves.push((v, s));
            }
        }
        if leaves.len() < 3 || leaves.len() > MAX_LEAVES {
            continue;
        }
        // A leaf shifted by exactly one shift of the tree keeps that instruction as its term.
        for leaf in &mut leaves {
            if leaf.1 == 0 {
                continue;
            }
            let same = nodes.iter().position(|&n| {
                shift_amount(f, n) == Some(leaf.1) && f.arg(n, 0) == leaf.0 && n != root
            });
            if let Some(k) = same {
                *leaf = (f.res(nodes.remove(k)), 0);
            }
        }
        // Rebuilt, the chain has one addition less than leaves and one shift per shifted leaf:
        // never more instructions than the tree (a shift of a long sum stays as it is).
        let shifted = leaves.iter().filter(|l| l.1 > 0).count();
        if leaves.len() - 1 + shifted > nodes.len() {
            continue;
        }
        // The block's own parameters that the next iteration receives from this sum (directly
        // or through later instructions of the block): the recurrence, added last.
        let carried = recurrence_params(f, b, &insts, root, back.as_deref());
        let time = |v: Value| {
            if carried.contains(&v) {
                LATE
            } else {
                ready.get(v)
            }
        };
        // The tree's time, children before parents (reversed pre-order).
        let mut at: FxHashMap<Value, u32> = FxHashMap::default();
        for &i in nodes.iter().rev() {
            let t = |v: Value| at.get(&v).copied().unwrap_or_else(|| time(v));
            let x = match shift_amount(f, i) {
                Some(_) => t(f.arg(i, 0)) + 1,
                None => t(f.arg(i, 0)).max(t(f.arg(i, 1))) + 1,
            };
            at.insert(f.res(i), x);
        }
        let old = at[&f.res(root)];
        // Combine the two earliest values first (a Huffman merge: balanced over leaves ready
        // together, a chain over leaves ready one after another), pricing an addition at
        // `MERGE_LATENCY` so that equally early leaves pair up; the recurrence stays last.
        // `plan` lists the additions as operand pairs, `Err(k)` naming the plan's k-th sum.
        let mut heap: BinaryHeap<Reverse<(u32, u32, usize)>> = BinaryHeap::new();
        let mut items: Vec<(Operand, u32)> = Vec::new();
        for &(v, s) in &leaves {
            let t = time(v) + u32::from(s > 0);
            heap.push(Reverse((t, t, items.len())));
            items.push((Ok((v, s)), t));
        }
        let mut plan: Vec<(Operand, Operand)> = Vec::new();
        while heap.len() > 1 {
            let Reverse((ma, ta, a)) = heap.pop().unwrap();
            let Reverse((mb, tb, b)) = heap.pop().unwrap();
            plan.push((items[a].0, items[b].0));
            let t = ta.max(tb) + 1;
            heap.push(Reverse((ma.max(mb) + MERGE_LATENCY, t, items.len())));
            items.push((Err(plan.len() - 1), t));
        }
        let t = items.last().unwrap().1;
        if t >= old {
            continue;
        }
        let mut sums: Vec<Value> = Vec::with_capacity(plan.len());
        for &(a, c) in &plan {
            let args = [term(f, root, &sums, a), term(f, root, &sums, c)];
            let i = f.insert_new_before(root, mk::binary(Opcode::Add, Type::I32), &args);
            sums.push(f.res(i));
        }
        let acc = *sums.last().unwrap();
        f.replace_all_uses(f.res(root), acc);
        ready.set(acc, ready.get(f.res(root)));
        // Remove the old nodes in pre-order, root first: each one's only user goes before it.
        for i in nodes {
            f.remove_inst(i);
        }
        changed = true;
    }
    changed
}

/// The value of a rebuilt addition's operand: a sum already built, or a leaf, shifted by an
/// instruction placed before `root` if it has a shift.
fn term(f: &mut Function, root: Inst, sums: &[Value], x: Operand) -> Value {
    match x {
        Err(k) => sums[k],
        Ok((v, 0)) => v,
        Ok((v, s)) => {
            let sv = f.insert_new_before(root, mk::iconst(Type::I32, s as i64), &[]);
            let sv = f.res(sv);
            let sh = f.insert_new_before(root, mk::binary(Opcode::Shl, Type::I32), &[v, sv]);
            f.res(sh)
        }
    }
}

/// Parameters of `b` whose argument on `b`'s edge back to itself is `root` or computed from it
/// in `b`.
fn recurrence_params(
    f: &Function,
    b: Block,
    insts: &[Inst],
    root: Inst,
    back: Option<&[Value]>,
) -> Vec<Value> {
    let Some(back) = back else { return Vec::new() };
    let mut from_root: FxHashSet<Value> = FxHashSet::default();
    from_root.insert(f.res(root));
    let start = insts.iter().position(|&i| i == root).unwrap_or(insts.len());
    for &i in &insts[start..] {
        if let Some(r) = f.result(i) {
            if f.args(i).iter().any(|a| from_root.contains(a)) {
                from_root.insert(r);
            }
        }
    }
    f.blocks.params[b]
        .iter()
        .zip(back)
        .filter(|(_, a)| from_root.contains(a))
        .map(|(&p, _)| p)
        .collect()
}
