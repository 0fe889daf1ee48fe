//! Warnings computed on the checked program: unused local variables and variables read before
//! any assignment on every path (`-Wunused-variable`, `-Wuninitialized`). The warnings sema
//! gives while folding (division by zero, overflow, bounds, float conversion) and the one
//! lowering gives (control reaching the end of a non-void function, read off the CFG) live
//! there.
//!
//! Uninitialised reads, per function, in one walk over the statements in source order:
//! `assigned[v]` says "some path from the entry may have assigned `v`" (a may-analysis, so a
//! warning means *no* path assigns it: no false alarms). Only scalar non-const locals declared
//! without an initialiser are tracked.
//! - `if`: the branches start from the same state; the state after is the union. The walk logs
//!   every variable it marks (`log`), rolls the then-branch's marks back before the else branch
//!   and replays them after.
//! - `while`: a read in the condition or body is also reached along the back edge, by every
//!   assignment anywhere in the body. A read of an unassigned variable inside a loop is only a
//!   candidate until the loop ends; it is dropped if the body assigned the variable (the log
//!   since the loop began), else handed to the enclosing loop, and at the top of the function
//!   it becomes a warning (the first read of each variable).
//! - `break`, `continue` and `return` are ignored: they only remove paths, and dropping them
//!   can only mark more variables, never warn more.
//!
//! Cost: linear in the program, plus one replay per enclosing `if` of each first assignment.
//! Recursion follows the tree (depth bounded by `ast::MAX_DEPTH`).

use super::diag::{Diagnostic, Diags, Lint, Span};
use super::hir::{Body, ExprId, ExprKind, Program, StmtId, StmtKind, VarId, VarInit, VarKind};

/// Adds the unused-variable and uninitialised-read warnings of `p` to `diags`.
pub fn check(p: &Program, diags: &mut Diags) {
    if diags.wants(Lint::UnusedVariable) {
        unused(p, diags);
    }
    if diags.wants(Lint::Uninitialized) {
        let no_body = Body::default();
        let mut w = Walk {
            p,
            b: &no_body,
            assigned: vec![false; p.vars.len()],
            tracked: vec![false; p.vars.len()],
            log: Vec::new(),
            pending: Vec::new(),
        };
        for (id, f) in p.funcs.iter() {
            let (Some(body), Some(b)) = (f.body, p.body(id)) else {
                continue;
            };
            w.b = b;
            w.pending = vec![Vec::new()];
            w.stmt(body);
            let mut found = std::mem::take(&mut w.pending[0]);
            found.sort_by_key(|&(v, span)| (v, span.lo));
            found.dedup_by_key(|&mut (v, _)| v);
            found.sort_by_key(|&(_, span)| span.lo);
            for (v, span) in found {
                let var = &p.vars[v];
                let d = Diagnostic::warning(
                    Lint::Uninitialized,
                    span,
                    format!(
                        "variable `{}` is read before it is assigned a value",
                        var.name
                    ),
                )
                .with_note(
                    Some(var.span),
                    format!("`{}` is declared here without a value", var.name),
                );
                diags.push(d);
            }
        }
    }
}

/// Locals never read: declared and forgotten, or only written.
fn unused(p: &Program, diags: &mut Diags) {
    let mut written = vec![false; p.vars.len()];
    for s in p.bodies.iter().flat_map(|b| b.stmts.values()) {
        if let StmtKind::Assign { var, .. } = s.kind {
            written[var.index()] = true;
        }
    }
    for (v, var) in p.vars.iter() {
        if var.kind != VarKind::Local || var.read {
            continue;
        }
        let msg = if written[v.index()] {
            format!("variable `{}` is assigned but never read", var.name)
        } else {
            format!("unused variable `{}`", var.name)
        };
        diags.warn(Lint::UnusedVariable, var.span, msg);
    }
}

struct Walk<'a> {
    p: &'a Program,
    /// The body being walked.
    b: &'a Body,
    /// Per variable: some path may have assigned it.
    assigned: Vec<bool>,
    /// Per variable: a scalar local declared without a value (the only ones checked).
    tracked: Vec<bool>,
    /// Variables marked in `assigned`, in order (for rolling back a branch).
    log: Vec<VarId>,
    /// Per enclosing loop (and the function at index 0): reads of unassigned variables.
    pending: Vec<Vec<(VarId, Span)>>,
}

impl Walk<'_> {
    fn mark(&mut self, v: VarId) {
        if !self.assigned[v.index()] {
            self.assigned[v.index()] = true;
            self.log.push(v);
        }
    }

    fn stmt(&mut self, s: StmtId) {
        let p = self.p;
        match &self.b.stmts[s].kind {
            StmtKind::Decl(v) => {
                let var = &p.vars[*v];
                match &var.init {
                    VarInit::None
                        if var.kind == VarKind::Local && !var.is_array() && !var.is_const =>
                    {
                        self.tracked[v.index()] = true;
                    }
                    VarInit::Expr(e) => {
                        self.expr(*e);
                        self.mark(*v);
                    }
                    VarInit::Elems(es) => {
                        for &(_, e) in es {
                            self.expr(e);
                        }
                    }
                    _ => {}
                }
            }
            StmtKind::Assign {
                var,
                indices,
                value,
            } => {
                for &i in self.b.list(*indices) {
                    self.expr(i);
                }
                self.expr(*value);
                self.mark(*var);
            }
            StmtKind::Expr(e) => self.expr(*e),
            StmtKind::Block(items) => {
                for &s in self.b.block(*items) {
                    self.stmt(s);
                }
            }
            StmtKind::If { cond, then, els } => {
                self.expr(*cond);
                let mark = self.log.len();
                self.stmt(*then);
                let then_marks = self.log.split_off(mark);
                for &v in &then_marks {
                    self.assigned[v.index()] = false;
                }
                if let Some(e) = els {
                    self.stmt(*e);
                }
                for v in then_marks {
                    self.mark(v);
                }
            }
            StmtKind::While { cond, body } => {
                let mark = self.log.len();
                self.pending.push(Vec::new());
                self.expr(*cond);
                self.stmt(*body);
                let reads = self.pending.pop().unwrap_or_default();
                let outer = self.pending.last_mut().expect("function level");
                for (v, span) in reads {
                    if !self.log[mark..].contains(&v) {
                        outer.push((v, span));
                    }
                }
            }
            StmtKind::Break | StmtKind::Continue => {}
            StmtKind::Return(v) => {
                if let Some(e) = v {
                    self.expr(*e);
                }
            }
        }
    }

    fn expr(&mut self, e: ExprId) {
        let b = self.b;
        match &b.exprs[e].kind {
            ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Str(_) => {}
            ExprKind::Var(v) => {
                if self.tracked[v.index()] && !self.assigned[v.index()] {
                    let span = b.exprs[e].span;
                    self.pending
                        .last_mut()
                        .expect("function level")
                        .push((*v, span));
                }
            }
            ExprKind::Elem { indices, .. } | ExprKind::Addr { indices, .. } => {
                for &i in b.list(*indices) {
                    self.expr(i);
                }
            }
            ExprKind::Neg(x)
            | ExprKind::Not(x)
            | ExprKind::IntToFloat(x)
            | ExprKind::FloatToInt(x) => self.expr(*x),
            ExprKind::Arith { lhs, rhs, .. }
            | ExprKind::Cmp { lhs, rhs, .. }
            | ExprKind::And(lhs, rhs)
            | ExprKind::Or(lhs, rhs) => {
                self.expr(*lhs);
                self.expr(*rhs);
            }
            ExprKind::Call { args, .. } => {
                for &a in b.list(*args) {
                    self.expr(a);
                }
            }
        }
    }
}
