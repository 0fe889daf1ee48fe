//! Promotion of scalar allocas to SSA values (Cytron et al. with block parameters).
//!
//! An alloca is promotable when every use is a `load` from it or a `store` to it (not of it),
//! all of one type. For each: parameters go on the iterated dominance frontier of the storing
//! blocks; a walk down the dominator tree keeps the current value, replaces loads by it, drops
//! the stores and passes the value along every edge into a block that got a parameter. A read
//! before any write sees zero. Lowering already builds SSA for source scalars; this pass serves
//! allocas made later (globals promoted into `main`, values kept in registers across a loop).
//! Needs: CFG, dominator tree and frontiers. Keeps the CFG (only block parameters and branch
//! arguments are added). Cost: O(instructions + edges) per promoted alloca.

use crate::analysis::cfg::BlockLists;
use crate::analysis::{DomTree, FuncAnalyses};
use crate::ir::{mk, Block, Function, IdSet, IdVec, Inst, Opcode, Type, Value};

/// The type an alloca is accessed with, if it is promotable.
fn promotable(f: &Function, a: Inst) -> Option<Type> {
    let p = f.res(a);
    let mut ty: Option<Type> = None;
    for u in f.uses_of(p) {
        let user = f.uses().user[u];
        let t = match f.op(user) {
            Opcode::Load => f.data(user).ty,
            Opcode::Store if f.arg(user, 1) == p && f.arg(user, 0) != p => f.ty(f.arg(user, 0)),
            _ => return None,
        };
        if ty.is_some_and(|x| x != t) {
            return None;
        }
        ty = Some(t);
    }
    Some(ty.unwrap_or(Type::I32))
}

/// Promotes every promotable alloca of the entry block; returns whether there was one.
pub fn promote_allocas(f: &mut Function, am: &mut FuncAnalyses) -> bool {
    let entry = f.entry();
    let allocas: Vec<(Inst, Type)> = f
        .layout()
        .block_insts(entry)
        .filter(|&i| f.op(i) == Opcode::Alloca && f.data(i).imm <= 8)
        .filter_map(|i| promotable(f, i).map(|t| (i, t)))
        .collect();
    promote_list(f, am, allocas)
}

/// Promotes the given allocas of the entry block (those still promotable); returns whether there
/// was one. For rewrites that route a value through a fresh stack slot (a store at each new
/// definition, a load at each use) and let this place the block parameters.
pub fn promote_slots(f: &mut Function, am: &mut FuncAnalyses, slots: &[Inst]) -> bool {
    let allocas: Vec<(Inst, Type)> = slots
        .iter()
        .filter_map(|&i| promotable(f, i).map(|t| (i, t)))
        .collect();
    promote_list(f, am, allocas)
}

fn promote_list(f: &mut Function, am: &mut FuncAnalyses, allocas: Vec<(Inst, Type)>) -> bool {
    if allocas.is_empty() {
        return false;
    }
    let (cfg, dt) = am.cfg_domtree(f);
    let df = dt.frontiers(cfg);
    for (a, ty) in allocas {
        promote(f, dt, &df, a, ty);
    }
    true
}

fn promote(f: &mut Function, dt: &DomTree, df: &BlockLists, a: Inst, ty: Type) {
    let p = f.res(a);
    let users: Vec<Inst> = f.uses_of(p).map(|u| f.uses().user[u]).collect();
    // Iterated dominance frontier of the storing blocks.
    let mut phi: IdSet<Block> = IdSet::with_capacity(f.num_blocks());
    let mut work: Vec<Block> = users
        .iter()
        .filter(|&&i| f.op(i) == Opcode::Store)
        .filter_map(|&i| f.layout().inst_block(i))
        .collect();
    while let Some(b) = work.pop() {
        for &d in &df[b] {
            if phi.insert(d) {
                work.push(d);
            }
        }
    }
    let mut param: IdVec<Block, Option<Value>> = IdVec::filled(f.num_blocks(), None);
    for b in phi.iter() {
        param[b] = Some(f.append_block_param(b, ty));
    }
    // Zero for reads before any write, materialised at the top of the entry block. A pointer
    // has no constant: the slot's own address stands for "never written" (it reaches only
    // parameters nothing reads, or edges from unreachable blocks, when every read follows a
    // write), and the alloca stays for dce to drop with them.
    let entry = f.entry();
    let zero = if ty == Type::Ptr {
        p
    } else {
        let zero_row = if ty.is_float() {
            mk::fconst(0.0)
        } else {
            mk::iconst(ty, 0)
        };
        let first = f.layout().first_inst(entry).unwrap();
        let zero = f.insert_new_before(first, zero_row, &[]);
        f.res(zero)
    };

    // The blocks holding a load or store of the slot: the walk reads only their instructions.
    let mut accessed: IdSet<Block> = IdSet::with_capacity(f.num_blocks());
    for &i in &users {
        if let Some(b) = f.layout().inst_block(i) {
            accessed.insert(b);
        }
    }
    // Walk the dominator tree: (block, value at entry).
    let mut stack: Vec<(Block, Value)> = vec![(entry, zero)];
    let mut visited: IdSet<Block> = IdSet::with_capacity(f.num_blocks());
    while let Some((b, incoming)) = stack.pop() {
        visited.insert(b);
        let mut cur = param[b].unwrap_or(incoming);
        // Walked through the layout (the next instruction read before `i` may go).
        let mut at = if accessed.contains(b) {
            f.layout().first_inst(b)
        } else {
            None
        };
        while let Some(i) = at {
            at = f.layout().next_inst(i);
            match f.op(i) {
                Opcode::Load if f.arg(i, 0) == p => {
                    let r = f.res(i);
                    f.replace_all_uses(r, cur);
                    f.remove_inst(i);
                }
                Opcode::Store if f.arg(i, 1) == p => {
                    cur = f.arg(i, 0);
                    f.remove_inst(i);
                }
                _ => {}
            }
        }
        if let Some(t) = f.terminator(b) {
            pass_along(f, t, &param, cur);
        }
        for &c in dt.children[b].iter().rev() {
            stack.push((c, cur));
        }
    }
    // Edges from unreachable blocks still need an argument.
    let blocks: Vec<Block> = f.layout().blocks().collect();
    for b in blocks {
        if visited.contains(b) {
            continue;
        }
        if let Some(t) = f.terminator(b) {
            pass_along(f, t, &param, zero);
        }
    }
    if !f.has_uses(p) {
        f.remove_inst(a);
    }
}

/// Appends `v` to the arguments of every edge of `t` into a block with a new parameter.
fn pass_along(f: &mut Function, t: Inst, param: &IdVec<Block, Option<Value>>, v: Value) {
    f.push_branch_arg(t, v, |tb| param.get(tb).copied().flatten().is_some());
}
