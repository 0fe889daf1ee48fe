//! The IR verifier: the invariants every pass keeps. Runs after lowering and after every pass in
//! tests and debug builds.
//!
//! Checked, per function:
//! 1. The layout has an entry block with no predecessors whose parameters match the signature.
//! 2. Every block in the layout ends in exactly one terminator, and has none elsewhere.
//! 3. Every instruction has the operand count and types its opcode requires, and a result iff
//!    its type is not void; calls match the callee's signature; globals exist.
//! 4. Branch targets are blocks in the layout, and each passes exactly as many arguments, of the
//!    same types, as the target has parameters.
//! 5. Every operand is defined by a live instruction or a parameter of a live block, and its
//!    definition dominates the use (branch arguments: the branch) in reachable code.
//! 6. `values.def` agrees with results and parameter lists; use lists hold exactly the live
//!    operand slots (rebuilt from the operand ranges and compared).

use super::func::Function;
use super::inst::{Opcode, Type};
use super::module::{Module, ModuleCx};
use super::{Block, Inst, Value, ValueDef};
use crate::analysis::{Cfg, DomTree};
use std::fmt::Write;

/// One problem, attached to an instruction or a block when it has a place.
#[derive(Clone, Debug)]
pub struct VerifyError {
    pub inst: Option<Inst>,
    pub block: Option<Block>,
    pub message: String,
}

/// All problems found in one function.
#[derive(Clone, Debug, Default)]
pub struct VerifyErrors {
    pub func: String,
    pub errors: Vec<VerifyError>,
}

impl VerifyErrors {
    /// The function's text with `; error:` lines after each offending line.
    pub fn render(&self, f: &Function, cx: &ModuleCx) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "verifier: {} error(s) in @{}",
            self.errors.len(),
            self.func
        );
        for e in self
            .errors
            .iter()
            .filter(|e| e.inst.is_none() && e.block.is_none())
        {
            let _ = writeln!(s, "; error: {}", e.message);
        }
        let text = super::print::function(f, cx);
        // Match lines back to instructions by printing each instruction the same way.
        let mut by_line: Vec<(String, String)> = Vec::new();
        for e in &self.errors {
            if let Some(i) = e.inst {
                if f.layout().inst_block(i).is_some() {
                    let mut line = String::from("    ");
                    super::print::inst(&mut line, f, cx, i);
                    by_line.push((line, e.message.clone()));
                    continue;
                }
                let _ = writeln!(s, "; error at {i} (not in layout): {}", e.message);
            } else if let Some(b) = e.block {
                by_line.push((format!("{b}"), e.message.clone()));
            }
        }
        for line in text.lines() {
            s.push_str(line);
            s.push('\n');
            for (l, m) in &by_line {
                let hit = if l.starts_with("bb") {
                    line.starts_with(l.as_str()) && line[l.len()..].starts_with(['(', ':'])
                } else {
                    line == l
                };
                if hit {
                    let _ = writeln!(s, "; error: {m}");
                }
            }
        }
        s
    }
}

impl std::fmt::Display for VerifyErrors {
    fn fmt(&self, fm: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for e in &self.errors {
            match (e.inst, e.block) {
                (Some(i), _) => writeln!(fm, "@{}: {i}: {}", self.func, e.message)?,
                (None, Some(b)) => writeln!(fm, "@{}: {b}: {}", self.func, e.message)?,
                _ => writeln!(fm, "@{}: {}", self.func, e.message)?,
            }
        }
        Ok(())
    }
}

/// Verifies every defined function of `m`.
pub fn module(m: &Module) -> Result<(), String> {
    for id in m.defined_funcs() {
        let f = &m.funcs[id];
        if let Err(e) = function(f, &m.cx) {
            return Err(e.render(f, &m.cx));
        }
    }
    Ok(())
}

struct Ck<'a> {
    f: &'a Function,
    cx: &'a ModuleCx,
    errs: Vec<VerifyError>,
}

impl Ck<'_> {
    fn at(&mut self, i: Inst, msg: String) {
        self.errs.push(VerifyError {
            inst: Some(i),
            block: None,
            message: msg,
        });
    }
    fn blk(&mut self, b: Block, msg: String) {
        self.errs.push(VerifyError {
            inst: None,
            block: Some(b),
            message: msg,
        });
    }
    fn top(&mut self, msg: String) {
        self.errs.push(VerifyError {
            inst: None,
            block: None,
            message: msg,
        });
    }
}

/// Verifies one function.
pub fn function(f: &Function, cx: &ModuleCx) -> Result<(), VerifyErrors> {
    let mut ck = Ck {
        f,
        cx,
        errs: Vec::new(),
    };
    check(&mut ck);
    if ck.errs.is_empty() {
        Ok(())
    } else {
        Err(VerifyErrors {
            func: f.name.clone(),
            errors: ck.errs,
        })
    }
}

fn check(ck: &mut Ck) {
    let f = ck.f;
    let Some(entry) = f.layout().entry_block() else {
        ck.top("function has no blocks".into());
        return;
    };
    let sig = &ck.cx.decls[f.id].sig;
    let ptys: Vec<Type> = f.blocks.params[entry].iter().map(|&v| f.ty(v)).collect();
    if ptys != sig.params {
        ck.blk(
            entry,
            format!(
                "entry parameters {ptys:?} do not match signature {:?}",
                sig.params
            ),
        );
    }

    // 2. Terminators.
    for b in f.layout().blocks() {
        let Some(last) = f.layout().last_inst(b) else {
            ck.blk(b, "empty block".into());
            continue;
        };
        for i in f.layout().block_insts(b) {
            let term = f.op(i).is_terminator();
            if term && i != last {
                ck.at(i, "terminator in the middle of a block".into());
            }
            if !term && i == last {
                ck.at(i, "block does not end in a terminator".into());
            }
        }
    }
    if !ck.errs.is_empty() {
        return;
    }

    // 3, 4. Instruction shapes.
    for b in f.layout().blocks() {
        for i in f.layout().block_insts(b) {
            check_inst(ck, i);
            if f.op(i).is_branch() {
                for c in f.branch_targets(i) {
                    if !f.layout().is_block_inserted(c.block) {
                        ck.at(
                            i,
                            format!("branch to {} which is not in the layout", c.block),
                        );
                        continue;
                    }
                    if c.block == entry {
                        ck.at(i, "branch to the entry block".into());
                    }
                    let params = &f.blocks.params[c.block];
                    if params.len() != c.args.len() {
                        ck.at(
                            i,
                            format!(
                                "{} takes {} arguments, {} given",
                                c.block,
                                params.len(),
                                c.args.len()
                            ),
                        );
                        continue;
                    }
                    for (k, (&p, &a)) in params.iter().zip(c.args).enumerate() {
                        if f.ty(p) != f.ty(a) {
                            ck.at(
                                i,
                                format!(
                                    "argument {k} to {}: {} is {}, parameter {} is {}",
                                    c.block,
                                    a,
                                    f.ty(a),
                                    p,
                                    f.ty(p)
                                ),
                            );
                        }
                    }
                }
            }
        }
    }

    // 6. Definitions and use lists.
    let before = ck.errs.len();
    for b in f.layout().blocks() {
        for (k, &p) in f.blocks.params[b].iter().enumerate() {
            if f.value_def(p) != ValueDef::Param(b, k as u32) {
                ck.blk(
                    b,
                    format!(
                        "{p}: def says {:?}, is parameter {k} of {b}",
                        f.value_def(p)
                    ),
                );
            }
        }
        for i in f.layout().block_insts(b) {
            if let Some(r) = f.result(i) {
                if f.value_def(r) != ValueDef::Result(i) {
                    ck.at(i, format!("{r}: def says {:?}", f.value_def(r)));
                }
            }
            for u in f.arg_uses(i) {
                let us = f.uses();
                if !us.is_linked(u) || us.user[u] != i {
                    ck.at(
                        i,
                        format!("operand slot {u} is not linked to this instruction"),
                    );
                }
            }
        }
    }
    let mut expected = vec![0u32; f.num_values()];
    for b in f.layout().blocks() {
        for i in f.layout().block_insts(b) {
            for &v in f.args(i) {
                expected[v.index()] += 1;
            }
        }
    }
    for v in (0..f.num_values()).map(Value::new) {
        let mut n = 0u32;
        for u in f.uses_of(v) {
            n += 1;
            let us = f.uses();
            let user = us.user[u];
            if us.value[u] != v {
                ck.at(
                    user,
                    format!("use list of {v} holds a slot reading {}", us.value[u]),
                );
            }
            if f.layout().inst_block(user).is_none() {
                ck.top(format!("use list of {v} holds a slot of removed {user}"));
            }
            if n > expected[v.index()] + 1 {
                break;
            }
        }
        if n != expected[v.index()] {
            ck.top(format!(
                "use list of {v} has {n} entries, operands say {}",
                expected[v.index()]
            ));
        }
    }
    if ck.errs.len() > before {
        return;
    }

    // 5. Dominance.
    let cfg = Cfg::compute(f);
    if !cfg.preds[entry].is_empty() {
        ck.blk(entry, "entry block has predecessors".into());
    }
    let dt = DomTree::compute(f, &cfg);
    // Position of each instruction in its block, for same-block order in O(1).
    let mut pos = crate::ir::IdVec::<Inst, u32>::filled(f.num_insts(), 0);
    for b in f.layout().blocks() {
        for (k, i) in f.layout().block_insts(b).enumerate() {
            pos[i] = k as u32;
        }
    }
    for b in f.layout().blocks() {
        if !cfg.is_reachable(b) {
            continue;
        }
        for i in f.layout().block_insts(b) {
            for &v in f.args(i) {
                let (live, dominates) = match f.value_def(v) {
                    ValueDef::Result(d) => match f.layout().inst_block(d) {
                        None => (false, false),
                        Some(db) if db == b => (true, pos[d] < pos[i]),
                        Some(db) => (true, dt.dominates(db, b)),
                    },
                    ValueDef::Param(pb, _) => {
                        (f.layout().is_block_inserted(pb), dt.dominates(pb, b))
                    }
                };
                if !live {
                    ck.at(i, format!("{v} is used but its definition was removed"));
                } else if !dominates {
                    ck.at(i, format!("{v} does not dominate this use"));
                }
            }
        }
    }
}

fn check_inst(ck: &mut Ck, i: Inst) {
    let f = ck.f;
    let d = *f.data(i);
    let args = f.args(i);
    let tys: Vec<Type> = args.iter().map(|&v| f.ty(v)).collect();
    let has_res = f.result(i).is_some();
    if has_res != (d.ty != Type::Void) {
        ck.at(i, "result presence does not match type".into());
    }
    let arity = |ck: &mut Ck, n: usize| -> bool {
        if tys.len() != n {
            ck.at(
                i,
                format!("{} takes {n} operands, has {}", d.op.name(), tys.len()),
            );
            false
        } else {
            true
        }
    };
    use Opcode::*;
    match d.op {
        Iconst => {
            if arity(ck, 0) && !d.ty.is_int() {
                ck.at(i, "iconst of a non-integer type".into());
            }
        }
        Fconst => {
            if arity(ck, 0) && !d.ty.is_float() {
                ck.at(i, "fconst of a non-float type".into());
            }
        }
        op if op.is_int_binary() => {
            if arity(ck, 2) {
                let ok = tys[0] == d.ty
                    && tys[1] == d.ty
                    && (matches!(d.ty, Type::I32 | Type::I64)
                        || (d.ty == Type::I1 && matches!(op, And | Or | Xor)));
                if !ok {
                    ck.at(i, format!("{} on {:?} -> {}", op.name(), tys, d.ty));
                }
            }
        }
        op if op.is_float_binary() => {
            if arity(ck, 2) && !(tys[0] == d.ty && tys[1] == d.ty && d.ty.is_float()) {
                ck.at(i, format!("{} on {:?} -> {}", op.name(), tys, d.ty));
            }
        }
        Fneg => {
            if arity(ck, 1) && !(tys[0] == d.ty && d.ty.is_float()) {
                ck.at(i, "fneg type mismatch".into());
            }
        }
        Icmp => {
            if arity(ck, 2)
                && !(tys[0] == tys[1]
                    && (tys[0].is_int() || tys[0] == Type::Ptr)
                    && d.ty == Type::I1)
            {
                ck.at(i, format!("icmp on {tys:?}"));
            }
        }
        Fcmp => {
            if arity(ck, 2) && !(tys[0] == tys[1] && tys[0].is_float() && d.ty == Type::I1) {
                ck.at(i, format!("fcmp on {tys:?}"));
            }
        }
        Select => {
            if arity(ck, 3) && !(tys[0] == Type::I1 && tys[1] == d.ty && tys[2] == d.ty) {
                ck.at(i, format!("select on {tys:?} -> {}", d.ty));
            }
        }
        Zext | Sext => {
            if arity(ck, 1) && !(tys[0].is_int() && d.ty.is_int() && tys[0].bytes() < d.ty.bytes())
            {
                ck.at(i, format!("{} {} -> {}", d.op.name(), tys[0], d.ty));
            }
        }
        Trunc => {
            if arity(ck, 1) && !(tys[0].is_int() && d.ty.is_int() && tys[0].bytes() > d.ty.bytes())
            {
                ck.at(i, format!("trunc {} -> {}", tys[0], d.ty));
            }
        }
        Sitofp => {
            if arity(ck, 1) && !(matches!(tys[0], Type::I32 | Type::I64) && d.ty.is_float()) {
                ck.at(i, format!("sitofp {} -> {}", tys[0], d.ty));
            }
        }
        Fptosi => {
            if arity(ck, 1) && !(tys[0].is_float() && matches!(d.ty, Type::I32 | Type::I64)) {
                ck.at(i, format!("fptosi {} -> {}", tys[0], d.ty));
            }
        }
        Bitcast => {
            if arity(ck, 1)
                && !matches!(
                    (tys[0], d.ty),
                    (Type::F32, Type::I32) | (Type::I32, Type::F32)
                )
            {
                ck.at(i, format!("bitcast {} -> {}", tys[0], d.ty));
            }
        }
        Fpext => {
            if arity(ck, 1) && !(tys[0] == Type::F32 && d.ty == Type::F64) {
                ck.at(i, format!("fpext {} -> {}", tys[0], d.ty));
            }
        }
        Alloca => {
            if arity(ck, 0) && (d.ty != Type::Ptr || d.imm <= 0) {
                ck.at(i, "alloca needs a positive size and ptr type".into());
            }
        }
        Gaddr => {
            if arity(ck, 0) && ck.cx.globals.get(f.global(i)).is_none() {
                ck.at(i, "gaddr of a global that does not exist".into());
            }
        }
        Gep => {
            if arity(ck, 2)
                && !(tys[0] == Type::Ptr
                    && matches!(tys[1], Type::I32 | Type::I64)
                    && d.ty == Type::Ptr)
            {
                ck.at(i, format!("gep on {tys:?}"));
            }
        }
        Offset => {
            if arity(ck, 1) && !(tys[0] == Type::Ptr && d.ty == Type::Ptr) {
                ck.at(i, format!("offset on {tys:?}"));
            }
        }
        Load => {
            if arity(ck, 1) && !(tys[0] == Type::Ptr && d.ty != Type::Void && d.ty != Type::I1) {
                ck.at(i, format!("load.{} from {:?}", d.ty, tys));
            }
        }
        Store => {
            if arity(ck, 2) && !(tys[1] == Type::Ptr && tys[0] != Type::I1) {
                ck.at(i, format!("store of {:?}", tys));
            }
        }
        Call => {
            let callee = f.callee(i);
            match ck.cx.decls.get(callee) {
                None => ck.at(i, format!("call to unknown {callee}")),
                Some(decl) => {
                    let sig = &decl.sig;
                    let fixed = sig.params.len();
                    let count_ok = if sig.variadic {
                        tys.len() >= fixed
                    } else {
                        tys.len() == fixed
                    };
                    if !count_ok
                        || tys[..fixed.min(tys.len())] != sig.params[..fixed.min(tys.len())]
                    {
                        ck.at(
                            i,
                            format!(
                                "call @{} with {:?}, signature {:?}",
                                decl.name, tys, sig.params
                            ),
                        );
                    }
                    if d.ty != sig.ret {
                        ck.at(
                            i,
                            format!(
                                "call result {} but @{} returns {}",
                                d.ty, decl.name, sig.ret
                            ),
                        );
                    }
                }
            }
        }
        Jump => {}
        Brif => {
            if tys.is_empty() || tys[0] != Type::I1 {
                ck.at(i, "brif condition must be i1".into());
            } else if 1 + d.aux as usize > tys.len() {
                ck.at(i, "brif argument split out of range".into());
            }
        }
        Ret => {
            let ret = ck.cx.decls[f.id].sig.ret;
            let ok = if ret == Type::Void {
                tys.is_empty()
            } else {
                tys == [ret]
            };
            if !ok {
                ck.at(i, format!("ret {tys:?} in a function returning {ret}"));
            }
        }
        Unreachable => {
            arity(ck, 0);
        }
        _ => ck.at(i, format!("unhandled opcode {}", d.op.name())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Builder, Module, Signature};

    fn sig(params: Vec<Type>, ret: Type) -> Signature {
        Signature {
            params,
            ret,
            variadic: false,
        }
    }

    #[test]
    fn accepts_a_loop_with_block_params() {
        let mut m = Module::new();
        let id = m.declare_func("count", sig(vec![Type::I32], Type::I32), true);
        let f = &mut m.funcs[id];
        let (b0, b1, b2) = (f.make_block(), f.make_block(), f.make_block());
        for b in [b0, b1, b2] {
            f.append_block(b);
        }
        let n = f.append_block_param(b0, Type::I32);
        let i = f.append_block_param(b1, Type::I32);
        let mut bld = Builder::at_end(f, b0);
        let zero = bld.iconst(0);
        bld.jump(b1, &[zero]);
        bld.switch_to(b1);
        let one = bld.iconst(1);
        let next = bld.binary(Opcode::Add, i, one);
        let c = bld.icmp(crate::ir::CmpCond::Lt, next, n);
        bld.brif(c, b1, &[next], b2, &[]);
        bld.switch_to(b2);
        bld.ret(Some(next));
        function(&m.funcs[id], &m.cx).unwrap();
    }

    #[test]
    fn rejects_a_use_not_dominated_and_a_bad_branch() {
        let mut m = Module::new();
        let id = m.declare_func("bad", sig(vec![Type::I1], Type::I32), true);
        let f = &mut m.funcs[id];
        let (b0, b1, b2, b3) = (
            f.make_block(),
            f.make_block(),
            f.make_block(),
            f.make_block(),
        );
        for b in [b0, b1, b2, b3] {
            f.append_block(b);
        }
        let c = f.append_block_param(b0, Type::I1);
        f.append_block_param(b3, Type::I32);
        let mut bld = Builder::at_end(f, b0);
        bld.brif(c, b1, &[], b2, &[]);
        bld.switch_to(b1);
        let x = bld.iconst(7);
        bld.jump(b3, &[]);
        bld.switch_to(b2);
        bld.ret(Some(x));
        bld.switch_to(b3);
        bld.ret(Some(x));
        let errs = function(&m.funcs[id], &m.cx).unwrap_err();
        let text = errs.render(&m.funcs[id], &m.cx);
        assert!(text.contains("bb3 takes 1 arguments, 0 given"), "{text}");
        assert!(text.contains("v2 does not dominate this use"), "{text}");
        assert!(
            text.contains("    ret v2\n; error: v2 does not dominate"),
            "{text}"
        );
    }
}
