//! Stable, readable text for modules and functions.
//!
//! ```text
//! global @a: 400 x i32 = zero
//! func @main(i32) -> i32 {
//! bb0(v0: i32):
//!     v1 = iconst.i32 1
//!     v2 = add.i32 v0, v1
//!     brif v3, bb1(v2), bb2
//! }
//! ```
//! Values print by id, so the text of a function is a pure function of its tables.

use super::func::{brif_targets, Function};
use super::inst::{Opcode, Type};
use super::module::{GlobalInit, Module, ModuleCx};
use super::{Block, Inst};
use std::fmt::Write;

/// The whole module as text.
pub fn module(m: &Module) -> String {
    let mut s = String::new();
    for (_, g) in m.cx.globals_sorted() {
        let _ = write!(
            s,
            "global @{}: {} x {}",
            g.name,
            g.size / g.elem.bytes().max(1),
            g.elem
        );
        if g.is_const {
            s.push_str(" const");
        }
        match &g.init {
            GlobalInit::Zero => s.push_str(" = zero\n"),
            GlobalInit::Words(w) => {
                s.push_str(" = [");
                for (k, x) in w.iter().enumerate() {
                    if k > 0 {
                        s.push_str(", ");
                    }
                    if g.elem == Type::F32 {
                        let _ = write!(s, "{:?}", f32::from_bits(*x));
                    } else {
                        let _ = write!(s, "{}", *x as i32);
                    }
                }
                s.push_str("]\n");
            }
            GlobalInit::Bytes(b) => {
                let _ = writeln!(s, " = {:?}", String::from_utf8_lossy(b));
            }
        }
    }
    for (id, d) in m.cx.decls.iter() {
        if !d.defined {
            let _ = write!(s, "declare @{}(", d.name);
            for (k, t) in d.sig.params.iter().enumerate() {
                if k > 0 {
                    s.push_str(", ");
                }
                s.push_str(t.name());
            }
            if d.sig.variadic {
                s.push_str(", ...");
            }
            let _ = writeln!(s, ") -> {}", d.sig.ret);
        } else {
            s.push('\n');
            s.push_str(&function(&m.funcs[id], &m.cx));
        }
    }
    s
}

/// One function as text.
pub fn function(f: &Function, cx: &ModuleCx) -> String {
    let mut s = String::new();
    let sig = &cx.decls[f.id].sig;
    let _ = write!(s, "func @{}(", f.name);
    for (k, t) in sig.params.iter().enumerate() {
        if k > 0 {
            s.push_str(", ");
        }
        s.push_str(t.name());
    }
    let _ = writeln!(s, ") -> {} {{", sig.ret);
    for b in f.layout().blocks() {
        block_header(&mut s, f, b);
        for i in f.layout().block_insts(b) {
            s.push_str("    ");
            inst(&mut s, f, cx, i);
            s.push('\n');
        }
    }
    s.push_str("}\n");
    s
}

fn block_header(s: &mut String, f: &Function, b: Block) {
    let _ = write!(s, "{b}");
    let params = &f.blocks.params[b];
    if !params.is_empty() {
        s.push('(');
        for (k, &p) in params.iter().enumerate() {
            if k > 0 {
                s.push_str(", ");
            }
            let _ = write!(s, "{p}: {}", f.ty(p));
        }
        s.push(')');
    }
    s.push_str(":\n");
}

fn list(s: &mut String, vals: &[super::Value]) {
    for (k, v) in vals.iter().enumerate() {
        if k > 0 {
            s.push_str(", ");
        }
        let _ = write!(s, "{v}");
    }
}

fn block_call(s: &mut String, b: Block, args: &[super::Value]) {
    let _ = write!(s, "{b}");
    if !args.is_empty() {
        s.push('(');
        list(s, args);
        s.push(')');
    }
}

/// One instruction, without indentation or newline.
pub fn inst(s: &mut String, f: &Function, cx: &ModuleCx, i: Inst) {
    let d = *f.data(i);
    let args = f.args(i);
    if let Some(r) = f.result(i) {
        let _ = write!(s, "{r} = ");
    }
    s.push_str(d.op.name());
    match d.op {
        Opcode::Icmp | Opcode::Fcmp => {
            let _ = write!(s, ".{} ", d.cond().name());
            list(s, args);
        }
        Opcode::Iconst => {
            let _ = write!(s, ".{} {}", d.ty, d.imm);
        }
        Opcode::Fconst => {
            if d.ty == Type::F32 {
                let _ = write!(s, ".f32 {:?}", d.f32());
            } else {
                let _ = write!(s, ".f64 {:?}", d.f64());
            }
        }
        Opcode::Alloca => {
            let _ = write!(s, " {}, align {}", d.imm, d.aux);
        }
        Opcode::Gaddr => {
            let g = f.global(i);
            match cx.globals.get(g) {
                Some(gd) => {
                    let _ = write!(s, " @{}", gd.name);
                }
                None => s.push_str(" @<dead global>"),
            }
        }
        Opcode::Gep | Opcode::Offset => {
            s.push(' ');
            list(s, args);
            let _ = write!(s, ", {}", d.imm);
        }
        Opcode::Call => {
            let callee = f.callee(i);
            let _ = write!(s, ".{} @{}(", d.ty, cx.decls[callee].name);
            list(s, args);
            s.push(')');
        }
        Opcode::Jump => {
            s.push(' ');
            block_call(s, super::Block::new(d.imm as usize), args);
        }
        Opcode::Brif => {
            let (t, e) = brif_targets(&d);
            let n = d.aux as usize;
            let _ = write!(s, " {}, ", args[0]);
            block_call(s, t, &args[1..1 + n]);
            s.push_str(", ");
            block_call(s, e, &args[1 + n..]);
        }
        _ => {
            if d.ty != Type::Void {
                let _ = write!(s, ".{}", d.ty);
            }
            if !args.is_empty() {
                s.push(' ');
                list(s, args);
            }
        }
    }
}
