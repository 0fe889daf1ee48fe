//! Tail recursion to loops.
//!
//! `return f(args)` inside `f` (a self-call whose result, if any, is returned at once) starts
//! `f` over with new arguments: it becomes a jump to a loop header that takes the parameters.
//! The entry keeps the parameters and jumps to that header; the old body moves into it. The
//! loop then meets the loop passes (invariant loads hoisted, induction variables) and costs no
//! call, frame or return per level. Functions with allocas are left alone: a callee could be
//! handed a pointer into the caller's frame, which the loop would reuse.
//! Cost: O(instructions).

use crate::analysis::{FuncAnalyses, Preserved};
use crate::ir::{mk, Block, Function, Inst, ModuleCx, Opcode, Value};

/// Self-calls in tail position: (call, ret).
fn tail_calls(f: &Function) -> Vec<(Inst, Inst)> {
    let mut out = Vec::new();
    for b in f.layout().blocks() {
        let Some(ret) = f.terminator(b) else { continue };
        if f.op(ret) != Opcode::Ret {
            continue;
        }
        let Some(call) = f.layout().prev_inst(ret) else {
            continue;
        };
        if f.op(call) != Opcode::Call || f.callee(call) != f.id {
            continue;
        }
        let returns_it = match (f.result(call), f.args(ret)) {
            (Some(r), [v]) => *v == r,
            (None, []) => true,
            _ => false,
        };
        if returns_it {
            out.push((call, ret));
        }
    }
    out
}

pub fn run(f: &mut Function, _cx: &ModuleCx, _am: &mut FuncAnalyses) -> Preserved {
    let sites = tail_calls(f);
    if sites.is_empty() {
        return Preserved::all();
    }
    let has_alloca = f
        .layout()
        .blocks()
        .any(|b| f.layout().block_insts(b).any(|i| f.op(i) == Opcode::Alloca));
    if has_alloca {
        return Preserved::all();
    }
    let entry = f.entry();
    let params: Vec<Value> = f.params().to_vec();
    // The loop header takes the parameters; the entry's code moves into it.
    let header: Block = f.make_block();
    f.insert_block_after(header, entry);
    let hp: Vec<Value> = params
        .iter()
        .map(|&p| f.append_block_param(header, f.ty(p)))
        .collect();
    if let Some(first) = f.layout().first_inst(entry) {
        f.split_tail(first, header);
    }
    for (&p, &q) in params.iter().zip(&hp) {
        f.replace_all_uses(p, q);
    }
    f.append_new(entry, mk::jump(header), &params);
    for (call, ret) in sites {
        let args = f.args(call).to_vec();
        f.insert_new_before(call, mk::jump(header), &args);
        f.remove_inst(ret);
        f.remove_inst(call);
    }
    Preserved::none()
}
