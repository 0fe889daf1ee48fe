//! Semantic analysis: `Ast` -> `hir::Program`.
//!
//! One walk over the tree, in source order (SysY has no prototypes: a name is visible from its
//! definition on). For each expression it resolves names through a stack of scopes, computes
//! the type, inserts int<->float conversions, normalises conditions to int, and folds constants
//! (`fold_*`; int arithmetic wraps, float arithmetic is f32, int division by zero is left
//! unfolded and reported only where a constant is required). Declarations get their dimensions
//! evaluated and initialisers flattened (`flatten_init`, C's brace-elision rules).
//!
//! Errors are collected in `Diags` (capped); an expression that failed gets `Ty::Error`, which is
//! accepted everywhere, so one mistake gives one message. Recursion follows the tree, whose depth
//! the parser bounded by `MAX_DEPTH`.

use super::ast::{self, BaseType, BinOp, InitKind, Item, StmtKind as AStmt, UnOp};
use super::diag::{Diagnostic, Diags, LineCursor, Lint, Span};
use super::hir::*;
use super::lexer::{Interner, Sym};
use rustc_hash::FxHashMap;

#[derive(Clone, Copy, Debug)]
enum Binding {
    Var(VarId),
    Func(FuncId),
}

/// Semantic analysis between top-level items: everything that outlives one item (the program
/// so far, the scopes). The parser hands over one item at a time (`item`) and drops its syntax
/// tree after, so the tree of at most one item is alive at once; `finish` checks `main` and
/// returns the program.
pub struct Checker {
    /// Lines of `starttime()`/`stoptime()` calls, met in source order.
    lines: LineCursor,
    p: Program,
    /// Per name (indexed by `Sym`), its innermost visible binding: an index into `shadow`, or
    /// `NONE`. Lookup is O(1) however deep the nesting.
    names: Vec<u32>,
    /// The visible bindings, in order of declaration (so those of the innermost scope last,
    /// popped when it closes).
    shadow: Vec<Shadow>,
    /// The depth of the innermost open scope (0: the global scope).
    depth: u32,
    /// Runtime functions, visible behind the global scope.
    prelude: FxHashMap<Sym, Binding>,
    starttime: Option<(Sym, FuncId)>,
    stoptime: Option<(Sym, FuncId)>,
    putf: FuncId,
    /// Current function: return type.
    cur_ret: Option<Scalar>,
    cur_func_name: String,
    loop_depth: u32,
    /// Span of the first `x / 0` met while folding (explains a non-constant expression).
    div_zero: Option<Span>,
    /// Inside an expression that must be constant (where `x / 0` is an error, not a warning).
    in_const: u32,
    /// The checked statements of the blocks being checked, innermost block's last (each
    /// block's move to `Program::blocks` when it closes).
    stmt_stack: Vec<StmtId>,
    /// The checked indices and arguments of the lvalues and calls being checked, innermost
    /// last (each moved to `Program::lists` when complete).
    operands: Vec<ExprId>,
}

/// The `Checker` at work on one item, with what it borrows for that item: the item's syntax
/// tree, the interner, the source and the diagnostics. Derefs to the `Checker`.
struct Sema<'a> {
    ast: &'a ast::Ast,
    interner: &'a Interner,
    source: &'a [u8],
    diags: &'a mut Diags,
    st: &'a mut Checker,
}

impl std::ops::Deref for Sema<'_> {
    type Target = Checker;
    fn deref(&self) -> &Checker {
        self.st
    }
}

impl std::ops::DerefMut for Sema<'_> {
    fn deref_mut(&mut self) -> &mut Checker {
        self.st
    }
}

impl Checker {
    /// A checker with the runtime functions declared (their names interned into `interner`),
    /// the bodies' rows to go in one set of tables or (`separate_bodies`) in a set per
    /// function.
    pub fn new(interner: &mut Interner, separate_bodies: bool) -> Checker {
        let mut c = Checker {
            lines: LineCursor::default(),
            p: Program {
                bodies: if separate_bodies {
                    Bodies::Separate(Vec::new())
                } else {
                    Bodies::default()
                },
                ..Program::default()
            },
            names: Vec::new(),
            shadow: Vec::new(),
            depth: 0,
            prelude: FxHashMap::default(),
            starttime: None,
            stoptime: None,
            putf: FuncId::new(0),
            cur_ret: None,
            cur_func_name: String::new(),
            loop_depth: 0,
            div_zero: None,
            in_const: 0,
            stmt_stack: Vec::new(),
            operands: Vec::new(),
        };
        let runtime = runtime_functions();
        let syms: Vec<Sym> = runtime.iter().map(|f| interner.intern(&f.0)).collect();
        let start_sym = interner.intern("starttime");
        let stop_sym = interner.intern("stoptime");
        for ((name, ret, params, variadic), sym) in runtime.into_iter().zip(syms) {
            let id = c.p.funcs.push(Func {
                name: name.clone(),
                span: Span::default(),
                ret,
                param_tys: params,
                params: Vec::new(),
                body: None,
                variadic,
                used: false,
                nesting: 0,
            });
            match name.as_str() {
                "_sysy_starttime" => c.starttime = Some((start_sym, id)),
                "_sysy_stoptime" => c.stoptime = Some((stop_sym, id)),
                "putf" => {
                    c.putf = id;
                    c.prelude.insert(sym, Binding::Func(id));
                }
                _ => {
                    c.prelude.insert(sym, Binding::Func(id));
                }
            }
        }
        c
    }

    /// Checks the top-level item `item`, whose nodes are in `ast`. Errors go to `diags`; the
    /// caller stops handing items over once `diags.is_full()`.
    pub fn item(
        &mut self,
        item: &Item,
        ast: &ast::Ast,
        interner: &Interner,
        source: &[u8],
        diags: &mut Diags,
    ) {
        let mut s = Sema {
            ast,
            interner,
            source,
            diags,
            st: self,
        };
        match item {
            Item::Decl(d) => s.decl(d, true),
            Item::Func(f) => s.func(f),
        }
    }

    /// Checks that `main` is defined as it must be, and returns the program (meaningful only if
    /// `diags` has no error).
    pub fn finish(mut self, interner: &Interner, source: &[u8], diags: &mut Diags) -> Program {
        let ast = ast::Ast::default();
        let mut s = Sema {
            ast: &ast,
            interner,
            source,
            diags,
            st: &mut self,
        };
        let main_sym = s.interner_lookup("main");
        match main_sym
            .and_then(|m| s.innermost(m))
            .map(|k| s.shadow[k])
            .filter(|b| b.depth == 0)
            .map(|b| b.binding)
        {
            Some(Binding::Func(f)) => {
                let func = &s.p.funcs[f];
                if func.ret != Some(Scalar::Int) || !func.param_tys.is_empty() {
                    let span = func.span;
                    s.diags
                        .error(span, "`main` must be declared as `int main()`");
                }
                s.p.main = Some(f);
            }
            Some(Binding::Var(v)) => {
                let span = s.p.vars[v].span;
                s.diags
                    .error(span, "`main` must be a function, declared as `int main()`");
            }
            None => s.diags.error(Span::new(0, 0), "no `main` function defined"),
        }
        let p = &mut self.p;
        match &mut p.bodies {
            Bodies::Shared(b) => {
                b.exprs = std::mem::take(&mut p.exprs);
                b.stmts = std::mem::take(&mut p.stmts);
                b.lists = std::mem::take(&mut p.lists);
                b.blocks = std::mem::take(&mut p.blocks);
            }
            Bodies::Separate(v) => v.resize_with(p.funcs.len(), || None),
        }
        self.p
    }
}

type RuntimeFn = (String, Option<Scalar>, Vec<Ty>, bool);

/// The SysY runtime library (`sylib.h`), pre-declared.
fn runtime_functions() -> Vec<RuntimeFn> {
    let int_arr = Ty::Ptr {
        elem: Scalar::Int,
        dims: vec![],
    };
    let float_arr = Ty::Ptr {
        elem: Scalar::Float,
        dims: vec![],
    };
    let i = Some(Scalar::Int);
    let f = Some(Scalar::Float);
    vec![
        ("getint".into(), i, vec![], false),
        ("getch".into(), i, vec![], false),
        ("getfloat".into(), f, vec![], false),
        ("getarray".into(), i, vec![int_arr.clone()], false),
        ("getfarray".into(), i, vec![float_arr.clone()], false),
        ("putint".into(), None, vec![Ty::Int], false),
        ("putch".into(), None, vec![Ty::Int], false),
        ("putarray".into(), None, vec![Ty::Int, int_arr], false),
        ("putfloat".into(), None, vec![Ty::Float], false),
        ("putfarray".into(), None, vec![Ty::Int, float_arr], false),
        // The format is checked specially (a string literal); parameter list left empty.
        ("putf".into(), None, vec![], true),
        ("_sysy_starttime".into(), None, vec![Ty::Int], false),
        ("_sysy_stoptime".into(), None, vec![Ty::Int], false),
    ]
}

fn scalar_of(t: BaseType) -> Scalar {
    match t {
        BaseType::Int => Scalar::Int,
        BaseType::Float => Scalar::Float,
    }
}

/// No binding (in `Sema::names`).
const NONE: u32 = u32::MAX;

/// A visible binding of `sym` (`Checker::shadow`).
#[derive(Clone, Copy, Debug)]
struct Shadow {
    /// The depth of the scope that declared it.
    depth: u32,
    sym: Sym,
    binding: Binding,
    /// The binding of the same name it shadows (an index into `shadow`), or `NONE`.
    prev: u32,
}

impl<'a> Sema<'a> {
    fn interner_lookup(&self, name: &str) -> Option<Sym> {
        // The interner has no reverse lookup without `&mut`; scan the global scope instead.
        self.shadow
            .iter()
            .take_while(|b| b.depth == 0)
            .map(|b| b.sym)
            .find(|&k| self.interner.get(k) == name)
    }
    /// The span of the name `name` of an lvalue or call `e`.
    fn name_span(&self, e: &ast::Expr, name: Sym) -> Span {
        e.name_span(self.interner.get(name).len())
    }
    fn name(&self, s: Sym) -> String {
        let n = self.interner.get(s);
        if n.len() > 60 {
            format!("{}...", &n[..60])
        } else {
            n.to_string()
        }
    }
    fn error(&mut self, span: Span, msg: impl Into<String>) {
        self.diags.error(span, msg);
    }
    fn warn(&mut self, lint: Lint, span: Span, msg: impl Into<String>) {
        self.diags.warn(lint, span, msg);
    }

    /// The visible name closest to `s` (edit distance at most a third of its length, at least
    /// 1) among variables (`want_func` false) or functions: "did you mean" material.
    fn similar_name(&self, s: Sym, want_func: bool) -> Option<String> {
        let target = self.interner.get(s);
        if target.len() > 64 {
            return None;
        }
        let limit = (target.len() / 3).max(1);
        let mut best: Option<(usize, &str)> = None;
        let scoped = self.shadow.iter().map(|b| b.sym);
        let runtime = self.prelude.keys().copied();
        let timers = [self.starttime, self.stoptime]
            .into_iter()
            .flatten()
            .map(|t| t.0);
        for cand in scoped.chain(runtime).chain(timers) {
            let is_func = match self.lookup(cand) {
                Some(Binding::Func(_)) => true,
                Some(Binding::Var(_)) => false,
                None => true, // starttime/stoptime
            };
            if is_func != want_func || cand == s {
                continue;
            }
            let name = self.interner.get(cand);
            if name.len().abs_diff(target.len()) > limit {
                continue;
            }
            let d = edit_distance(target.as_bytes(), name.as_bytes());
            if d <= limit && best.is_none_or(|(bd, bn)| (d, name) < (bd, bn)) {
                best = Some((d, name));
            }
        }
        best.map(|(_, n)| n.to_string())
    }

    /// An "undefined name" error with a suggestion.
    fn undefined(&mut self, name: Sym, span: Span, what: &str, want_func: bool) {
        let mut d = Diagnostic::new(span, format!("undefined {what} `{}`", self.name(name)));
        if let Some(sugg) = self.similar_name(name, want_func) {
            d = d.with_help(format!("did you mean `{sugg}`?"));
        }
        self.diags.push(d);
    }

    /// Folds an int operation, warning when it overflows.
    fn fold_int(&mut self, r: (i32, bool), span: Span) -> i32 {
        if r.1 {
            self.warn(
                Lint::Overflow,
                span,
                format!(
                    "integer overflow in constant expression; the result wraps to {}",
                    r.0
                ),
            );
        }
        r.0
    }

    /// The innermost visible binding of `s`: its index in `shadow`.
    fn innermost(&self, s: Sym) -> Option<usize> {
        self.names
            .get(s.0 as usize)
            .copied()
            .filter(|&k| k != NONE)
            .map(|k| k as usize)
    }

    fn lookup(&self, s: Sym) -> Option<Binding> {
        match self.innermost(s) {
            Some(k) => Some(self.shadow[k].binding),
            None => self.prelude.get(&s).copied(),
        }
    }

    fn push_scope(&mut self) {
        self.depth += 1;
    }

    fn pop_scope(&mut self) {
        while let Some(&b) = self.shadow.last().filter(|b| b.depth == self.depth) {
            self.names[b.sym.0 as usize] = b.prev;
            self.shadow.pop();
        }
        self.depth -= 1;
    }

    fn binding_span(&self, b: Binding) -> Span {
        match b {
            Binding::Var(v) => self.p.vars[v].span,
            Binding::Func(f) => self.p.funcs[f].span,
        }
    }

    /// Declares `s` in the innermost scope; reports a redefinition.
    fn declare(&mut self, s: Sym, b: Binding, span: Span) {
        let depth = self.depth;
        if let Some(old) = self.innermost(s).map(|k| self.shadow[k]) {
            if old.depth == depth {
                let old_span = self.binding_span(old.binding);
                let d = Diagnostic::new(span, format!("redefinition of `{}`", self.name(s)))
                    .with_note(Some(old_span), "previous definition is here");
                self.diags.push(d);
                return;
            }
        }
        if self.names.len() <= s.0 as usize {
            self.names.resize(s.0 as usize + 1, NONE);
        }
        let prev = self.names[s.0 as usize];
        self.names[s.0 as usize] = self.shadow.len() as u32;
        self.shadow.push(Shadow {
            depth,
            sym: s,
            binding: b,
            prev,
        });
    }

    // ---------------------------------------------------------------- expressions

    fn mk(&mut self, kind: ExprKind, ty: ExprTy, span: Span) -> ExprId {
        self.p.exprs.push(Expr { kind, ty, span })
    }
    fn error_expr(&mut self, span: Span) -> ExprId {
        self.mk(ExprKind::Int(0), ExprTy::Error, span)
    }
    #[inline(always)]
    fn const_of(&self, e: ExprId) -> Option<Const> {
        match self.p.exprs[e].kind {
            ExprKind::Int(v) if self.p.exprs[e].ty == ExprTy::Int => Some(Const::Int(v)),
            ExprKind::Float(v) => Some(Const::Float(v)),
            _ => None,
        }
    }
    fn convert_const_zero(&mut self, elem: Scalar, span: Span) -> ExprId {
        match elem {
            Scalar::Int => self.mk_const(Const::Int(0), span),
            Scalar::Float => self.mk_const(Const::Float(0.0), span),
        }
    }
    fn mk_const(&mut self, c: Const, span: Span) -> ExprId {
        match c {
            Const::Int(v) => self.mk(ExprKind::Int(v), ExprTy::Int, span),
            Const::Float(v) => self.mk(ExprKind::Float(v), ExprTy::Float, span),
        }
    }

    /// Converts a scalar expression to `to` (no-op if it already has that type).
    #[inline(always)]
    fn convert(&mut self, e: ExprId, to: Scalar) -> ExprId {
        match (self.p.exprs[e].ty, to) {
            (ExprTy::Int, Scalar::Float) | (ExprTy::Float, Scalar::Int) => self.convert_to(e, to),
            _ => e,
        }
    }

    /// `convert` of an expression not of type `to`.
    fn convert_to(&mut self, e: ExprId, to: Scalar) -> ExprId {
        let span = self.p.exprs[e].span;
        match (self.p.exprs[e].ty, to) {
            (ExprTy::Int, Scalar::Float) => match self.const_of(e) {
                Some(Const::Int(v)) => self.mk_const(Const::Float(v as f32), span),
                _ => self.mk(ExprKind::IntToFloat(e), ExprTy::Float, span),
            },
            (ExprTy::Float, Scalar::Int) => match self.const_of(e) {
                Some(Const::Float(v)) => {
                    let i = v as i32;
                    if i as f32 != v {
                        self.warn(
                            Lint::FloatConversion,
                            span,
                            format!("conversion from `float` to `int` changes the value from {v:?} to {i}"),
                        );
                    }
                    self.mk_const(Const::Int(i), span)
                }
                _ => self.mk(ExprKind::FloatToInt(e), ExprTy::Int, span),
            },
            _ => e,
        }
    }

    /// Checks that `e` is a scalar value (not void, not an array).
    #[inline(always)]
    fn require_scalar(&mut self, e: ExprId) -> Option<Scalar> {
        match self.p.exprs[e].ty {
            ExprTy::Int => Some(Scalar::Int),
            ExprTy::Float => Some(Scalar::Float),
            _ => self.not_scalar(e),
        }
    }

    /// `require_scalar` of an expression that is not `int` or `float`: `None`, after an
    /// error unless it had one.
    #[cold]
    fn not_scalar(&mut self, e: ExprId) -> Option<Scalar> {
        let span = self.p.exprs[e].span;
        match self.p.exprs[e].ty {
            ExprTy::Int | ExprTy::Float => unreachable!("scalar"),
            ExprTy::Error => None,
            ExprTy::Void => {
                self.error(span, "void value used in an expression");
                None
            }
            ExprTy::Ptr(_) => {
                let msg = match self.p.exprs[e].kind {
                    ExprKind::Str(_) => {
                        "string literal is only allowed as the format argument of `putf`"
                            .to_string()
                    }
                    _ => format!(
                        "array (of type `{}`) used where a scalar value is expected",
                        self.p.expr_ty(e).describe()
                    ),
                };
                self.error(span, msg);
                None
            }
        }
    }

    /// A scalar expression converted to `to`; error expression if not scalar.
    fn scalar_expr(&mut self, e: &ast::ExprId, to: Scalar) -> ExprId {
        let x = self.expr(*e);
        match self.require_scalar(x) {
            Some(_) => self.convert(x, to),
            None => self.error_expr(self.p.exprs[x].span),
        }
    }

    /// A condition: int, where a float `x` becomes `x != 0.0`.
    fn cond(&mut self, e: ast::ExprId) -> ExprId {
        let x = self.expr(e);
        self.truth(x)
    }
    fn truth(&mut self, x: ExprId) -> ExprId {
        let span = self.p.exprs[x].span;
        match self.require_scalar(x) {
            Some(Scalar::Int) => x,
            Some(Scalar::Float) => {
                let zero = self.mk_const(Const::Float(0.0), span);
                self.cmp(CmpOp::Ne, Scalar::Float, x, zero, span)
            }
            None => self.error_expr(span),
        }
    }

    fn cmp(&mut self, op: CmpOp, operand: Scalar, lhs: ExprId, rhs: ExprId, span: Span) -> ExprId {
        if let (Some(a), Some(b)) = (self.const_of(lhs), self.const_of(rhs)) {
            let r = match (a, b) {
                (Const::Int(a), Const::Int(b)) => cmp_fold(op, a, b),
                (Const::Float(a), Const::Float(b)) => cmp_fold(op, a, b),
                _ => unreachable!("operands converted"),
            };
            return self.mk_const(Const::Int(r as i32), span);
        }
        self.mk(
            ExprKind::Cmp {
                op,
                operand,
                lhs,
                rhs,
            },
            ExprTy::Int,
            span,
        )
    }

    /// Checks an expression. The result may have any type; callers needing a scalar check it.
    fn expr(&mut self, id: ast::ExprId) -> ExprId {
        let e = &self.ast.exprs[id];
        let span = e.span;
        match &e.kind {
            ast::ExprKind::Int(v) => self.mk_const(Const::Int(*v), span),
            ast::ExprKind::Float(v) => self.mk_const(Const::Float(*v), span),
            ast::ExprKind::Str(s) => {
                // Typed as a char array so misuse is caught by the scalar/argument checks.
                let id = StrId(self.p.strings.len() as u32);
                self.st.p.strings.push(self.interner.string(*s).to_vec());
                self.mk(ExprKind::Str(id), ExprTy::Ptr(Scalar::Int), span)
            }
            ast::ExprKind::LVal { name, indices } => {
                self.lval_read(*name, e, self.ast.list(*indices), span)
            }
            ast::ExprKind::Call { name, args } => self.call(*name, e, self.ast.list(*args), span),
            ast::ExprKind::Unary(op, inner) => {
                let x = self.expr(*inner);
                let Some(ty) = self.require_scalar(x) else {
                    return self.error_expr(span);
                };
                match op {
                    UnOp::Plus => x,
                    UnOp::Neg => match self.const_of(x) {
                        // `-2147483648` is the literal 2^31 negated: no overflow.
                        Some(Const::Int(i32::MIN))
                            if matches!(self.ast.exprs[*inner].kind, ast::ExprKind::Int(_)) =>
                        {
                            self.mk_const(Const::Int(i32::MIN), span)
                        }
                        Some(Const::Int(v)) => {
                            let r = self.fold_int(v.overflowing_neg(), span);
                            self.mk_const(Const::Int(r), span)
                        }
                        Some(Const::Float(v)) => self.mk_const(Const::Float(-v), span),
                        None => self.mk(ExprKind::Neg(x), ExprTy::scalar(ty), span),
                    },
                    UnOp::Not => match ty {
                        Scalar::Float => {
                            let zero = self.mk_const(Const::Float(0.0), span);
                            self.cmp(CmpOp::Eq, Scalar::Float, x, zero, span)
                        }
                        Scalar::Int => match self.const_of(x) {
                            Some(Const::Int(v)) => self.mk_const(Const::Int((v == 0) as i32), span),
                            _ => self.mk(ExprKind::Not(x), ExprTy::Int, span),
                        },
                    },
                }
            }
            ast::ExprKind::Binary(op, l, r) => self.binary(*op, *l, *r, span),
        }
    }

    fn binary(&mut self, op: BinOp, l: ast::ExprId, r: ast::ExprId, span: Span) -> ExprId {
        if matches!(op, BinOp::And | BinOp::Or) {
            let lhs = self.cond(l);
            let rhs = self.cond(r);
            let (lc, rc) = (self.const_of(lhs), self.const_of(rhs));
            let is_and = op == BinOp::And;
            // A constant left side decides alone when it short-circuits.
            match lc {
                Some(c) if c.is_zero() == is_and => {
                    return self.mk_const(Const::Int((!is_and) as i32), span)
                }
                Some(_) => {
                    if let Some(rc) = rc {
                        return self.mk_const(Const::Int((!rc.is_zero()) as i32), span);
                    }
                }
                None => {}
            }
            let kind = if is_and {
                ExprKind::And(lhs, rhs)
            } else {
                ExprKind::Or(lhs, rhs)
            };
            return self.mk(kind, ExprTy::Int, span);
        }
        let lhs = self.expr(l);
        let rhs = self.expr(r);
        let (Some(lt), Some(rt)) = (self.require_scalar(lhs), self.require_scalar(rhs)) else {
            return self.error_expr(span);
        };
        let ty = if lt == Scalar::Float || rt == Scalar::Float {
            Scalar::Float
        } else {
            Scalar::Int
        };
        if op == BinOp::Rem && ty == Scalar::Float {
            self.error(
                span,
                "invalid operands to `%`: both must be `int`, found `float`",
            );
            return self.error_expr(span);
        }
        let lhs = self.convert(lhs, ty);
        let rhs = self.convert(rhs, ty);
        let cmp = match op {
            BinOp::Lt => Some(CmpOp::Lt),
            BinOp::Gt => Some(CmpOp::Gt),
            BinOp::Le => Some(CmpOp::Le),
            BinOp::Ge => Some(CmpOp::Ge),
            BinOp::Eq => Some(CmpOp::Eq),
            BinOp::Ne => Some(CmpOp::Ne),
            _ => None,
        };
        if let Some(c) = cmp {
            return self.cmp(c, ty, lhs, rhs, span);
        }
        let aop = match op {
            BinOp::Add => ArithOp::Add,
            BinOp::Sub => ArithOp::Sub,
            BinOp::Mul => ArithOp::Mul,
            BinOp::Div => ArithOp::Div,
            _ => ArithOp::Rem,
        };
        if matches!(aop, ArithOp::Div | ArithOp::Rem)
            && self.in_const == 0
            && self.const_of(rhs) == Some(Const::Int(0))
        {
            let rspan = self.p.exprs[rhs].span;
            let what = if aop == ArithOp::Div {
                "division"
            } else {
                "remainder"
            };
            self.warn(
                Lint::DivByZero,
                rspan,
                format!("{what} by zero (the program's behaviour is undefined)"),
            );
        }
        if let (Some(a), Some(b)) = (self.const_of(lhs), self.const_of(rhs)) {
            let folded = match (a, b) {
                (Const::Int(a), Const::Int(b)) => match aop {
                    ArithOp::Add => Some(self.fold_int(a.overflowing_add(b), span)),
                    ArithOp::Sub => Some(self.fold_int(a.overflowing_sub(b), span)),
                    ArithOp::Mul => Some(self.fold_int(a.overflowing_mul(b), span)),
                    ArithOp::Div if b != 0 => Some(self.fold_int(a.overflowing_div(b), span)),
                    ArithOp::Rem if b != 0 => Some(a.wrapping_rem(b)),
                    _ => {
                        let rspan = self.p.exprs[rhs].span;
                        self.div_zero.get_or_insert(rspan);
                        None
                    }
                }
                .map(Const::Int),
                (Const::Float(a), Const::Float(b)) => Some(Const::Float(match aop {
                    ArithOp::Add => a + b,
                    ArithOp::Sub => a - b,
                    ArithOp::Mul => a * b,
                    _ => a / b,
                })),
                _ => unreachable!("operands converted"),
            };
            if let Some(c) = folded {
                return self.mk_const(c, span);
            }
        }
        self.mk(
            ExprKind::Arith { op: aop, lhs, rhs },
            ExprTy::scalar(ty),
            span,
        )
    }

    /// Resolves `name` to a variable, reporting functions and undefined names.
    /// `at` is the lvalue naming it (for the span of the name in messages).
    fn var_of(&mut self, name: Sym, at: &ast::Expr) -> Option<VarId> {
        match self.lookup(name) {
            Some(Binding::Var(v)) => Some(v),
            Some(Binding::Func(f)) => {
                let name_span = self.name_span(at, name);
                let mut d = Diagnostic::new(
                    name_span,
                    format!("`{}` is a function, not a variable", self.name(name)),
                );
                if !self.p.funcs[f].is_external() {
                    d = d.with_note(Some(self.p.funcs[f].span), "the function is defined here");
                }
                self.diags.push(d);
                None
            }
            None => {
                let name_span = self.name_span(at, name);
                if self.starttime.is_some_and(|(s, _)| s == name)
                    || self.stoptime.is_some_and(|(s, _)| s == name)
                {
                    self.error(
                        name_span,
                        format!("`{}` is a function, not a variable", self.name(name)),
                    );
                } else {
                    self.undefined(name, name_span, "name", false);
                }
                None
            }
        }
    }

    /// Checks the indices of `var[indices]`: `Some(start)` if they are valid, pushed (as int
    /// expressions) on `operands` from `start` on.
    fn indices(
        &mut self,
        v: VarId,
        name: Sym,
        indices: &[ast::ExprId],
        span: Span,
    ) -> Option<usize> {
        let ndims = self.p.vars[v].dims.len();
        let start = self.operands.len();
        let mut ok = true;
        for &ix in indices {
            let x = self.expr(ix);
            match self.require_scalar(x) {
                Some(Scalar::Int) => self.st.operands.push(x),
                Some(Scalar::Float) => {
                    let sp = self.p.exprs[x].span;
                    self.error(sp, "array index must be an `int`, found `float`");
                    ok = false;
                }
                None => ok = false,
            }
        }
        if indices.len() <= ndims && self.diags.wants(Lint::ArrayBounds) {
            for k in 0..self.operands.len() - start {
                let x = self.operands[start + k];
                let dim = self.p.vars[v].dims[k];
                // An array parameter's first dimension is not known.
                let (Some(Const::Int(c)), true) = (self.const_of(x), dim > 0) else {
                    continue;
                };
                if c >= 0 && (c as u32) < dim {
                    continue;
                }
                let msg = if c < 0 {
                    format!("array index {c} is before the beginning of the array")
                } else {
                    format!(
                        "array index {c} is past the end of the array (which has {dim} element{})",
                        if dim == 1 { "" } else { "s" }
                    )
                };
                let d = Diagnostic::warning(Lint::ArrayBounds, self.p.exprs[x].span, msg)
                    .with_note(
                        Some(self.p.vars[v].span),
                        format!("array `{}` is declared here", self.name(name)),
                    );
                self.diags.push(d);
            }
        }
        if indices.len() > ndims {
            if ndims == 0 {
                self.error(
                    span,
                    format!("subscripted value `{}` is not an array", self.name(name)),
                );
            } else {
                self.error(
                    span,
                    format!(
                        "too many indices for array `{}` ({} given, it has {} dimensions)",
                        self.name(name),
                        indices.len(),
                        ndims
                    ),
                );
            }
            ok = false;
        }
        if !ok {
            self.st.operands.truncate(start);
            return None;
        }
        Some(start)
    }

    /// The operands on `operands` from `start` on, moved into a new list.
    fn list_since(&mut self, start: usize) -> ExprList {
        let st = &mut *self.st;
        let list = st.p.push_list(&st.operands[start..]);
        st.operands.truncate(start);
        list
    }

    /// A variable or array element (or sub-array) used as a value (`at`, for the span of the
    /// name in messages).
    fn lval_read(
        &mut self,
        name: Sym,
        at: &ast::Expr,
        indices: &[ast::ExprId],
        span: Span,
    ) -> ExprId {
        let Some(v) = self.var_of(name, at) else {
            // Still check the indices for their own errors.
            for &ix in indices {
                self.expr(ix);
            }
            return self.error_expr(span);
        };
        self.p.vars[v].read = true;
        let Some(start) = self.indices(v, name, indices, span) else {
            return self.error_expr(span);
        };
        let idx = &self.operands[start..];
        let var = &self.p.vars[v];
        let elem = var.elem;
        if idx.len() == var.dims.len() {
            // Constant folding of `const` scalars and constant-indexed `const` arrays.
            if var.is_const {
                let mut flat: i64 = 0;
                let mut in_range = true;
                let mut constant = true;
                for (&x, &d) in idx.iter().zip(&var.dims) {
                    let Some(Const::Int(c)) = self.const_of(x) else {
                        constant = false;
                        break;
                    };
                    in_range &= c >= 0 && (c as u32) < d;
                    flat = flat * d as i64 + c as i64;
                }
                if constant && in_range {
                    if let Some(c) = var.const_elem(flat as u32) {
                        self.st.operands.truncate(start);
                        return self.mk_const(c, span);
                    }
                }
            }
            if idx.is_empty() {
                self.mk(ExprKind::Var(v), ExprTy::scalar(elem), span)
            } else {
                let indices = self.list_since(start);
                self.mk(
                    ExprKind::Elem { var: v, indices },
                    ExprTy::scalar(elem),
                    span,
                )
            }
        } else {
            let indices = self.list_since(start);
            self.mk(ExprKind::Addr { var: v, indices }, ExprTy::Ptr(elem), span)
        }
    }

    /// A call of `name` (`at`, for the span of the name in messages).
    fn call(&mut self, name: Sym, at: &ast::Expr, args: &[ast::ExprId], span: Span) -> ExprId {
        // `starttime()` / `stoptime()` become `_sysy_*time(__LINE__)`.
        for timer in [self.starttime, self.stoptime].into_iter().flatten() {
            if timer.0 == name && self.lookup(name).is_none() {
                if !args.is_empty() {
                    self.error(
                        span,
                        format!(
                            "function `{}` expects 0 arguments, but {} were given",
                            self.name(name),
                            args.len()
                        ),
                    );
                    return self.error_expr(span);
                }
                let line = self.st.lines.line_of(self.source, span.lo) as i32;
                let arg = self.mk_const(Const::Int(line), span);
                self.p.funcs[timer.1].used = true;
                let args = self.p.push_list(&[arg]);
                return self.mk(
                    ExprKind::Call {
                        func: timer.1,
                        args,
                    },
                    ExprTy::Void,
                    span,
                );
            }
        }
        let f = match self.lookup(name) {
            Some(Binding::Func(f)) => f,
            Some(Binding::Var(v)) => {
                let d = Diagnostic::new(
                    self.name_span(at, name),
                    format!("called object `{}` is not a function", self.name(name)),
                )
                .with_note(
                    Some(self.p.vars[v].span),
                    format!("`{}` is declared here", self.name(name)),
                );
                self.diags.push(d);
                for &a in args {
                    self.expr(a);
                }
                return self.error_expr(span);
            }
            None => {
                self.undefined(name, self.name_span(at, name), "function", true);
                for &a in args {
                    self.expr(a);
                }
                return self.error_expr(span);
            }
        };
        self.p.funcs[f].used = true;
        let ret = match self.p.funcs[f].ret {
            Some(s) => ExprTy::scalar(s),
            None => ExprTy::Void,
        };
        if f == self.putf {
            return self.putf_call(f, args, span);
        }
        let is_runtime = self.p.funcs[f].is_external();
        let n = self.p.funcs[f].param_tys.len();
        if args.len() != n {
            let fname = self.name(name);
            let mut d = Diagnostic::new(
                span,
                format!(
                    "function `{}` expects {} argument{}, but {} {} given",
                    fname,
                    n,
                    if n == 1 { "" } else { "s" },
                    args.len(),
                    if args.len() == 1 { "was" } else { "were" }
                ),
            );
            if !is_runtime {
                d = d.with_note(
                    Some(self.p.funcs[f].span),
                    format!(
                        "`{fname}` is defined here with {n} parameter{}",
                        if n == 1 { "" } else { "s" }
                    ),
                );
            }
            self.diags.push(d);
            for &a in args {
                self.expr(a);
            }
            return self.error_expr(span);
        }
        let start = self.operands.len();
        let mut ok = true;
        for (i, &a) in args.iter().enumerate() {
            let x = self.expr(a);
            let is_str = matches!(self.p.exprs[x].kind, ExprKind::Str(_));
            let pty = &self.p.funcs[f].param_tys[i];
            let to = match (pty, self.p.exprs[x].ty) {
                (_, ExprTy::Error) => {
                    ok = false;
                    continue;
                }
                (Ty::Int | Ty::Float, ExprTy::Int | ExprTy::Float) => pty.as_scalar(),
                (Ty::Ptr { elem: pe, dims }, ExprTy::Ptr(ae))
                    if !is_str && *pe == ae && (is_runtime || dims[..] == *self.p.ptr_dims(x)) =>
                {
                    // Runtime functions take `int*`/`float*`: like C, any array of the element
                    // type is accepted there (`getarray(m)` for `int m[N][N]`).
                    None
                }
                _ => {
                    let (pty, aty) = (pty.clone(), self.p.expr_ty(x));
                    let aspan = self.p.exprs[x].span;
                    let fname = self.name(name);
                    if is_str {
                        self.error(
                            aspan,
                            "string literal is only allowed as the format argument of `putf`",
                        );
                    } else if aty == Ty::Void {
                        self.error(aspan, "void value used in an expression");
                    } else {
                        let mut d = Diagnostic::new(
                            aspan,
                            format!(
                                "argument {} of `{}` has type `{}`, but the parameter has type `{}`",
                                i + 1,
                                fname,
                                aty.describe(),
                                pty.describe()
                            ),
                        );
                        if let Some(&pv) = self.p.funcs[f].params.get(i) {
                            d = d.with_note(
                                Some(self.p.vars[pv].span),
                                "the parameter is declared here",
                            );
                        }
                        self.diags.push(d);
                    }
                    ok = false;
                    continue;
                }
            };
            let x = match to {
                Some(to) => self.convert(x, to),
                None => x,
            };
            self.st.operands.push(x);
        }
        if !ok {
            self.st.operands.truncate(start);
            return self.error_expr(span);
        }
        let args = self.list_since(start);
        self.mk(ExprKind::Call { func: f, args }, ret, span)
    }

    fn putf_call(&mut self, f: FuncId, args: &[ast::ExprId], span: Span) -> ExprId {
        let mut out = Vec::new();
        let Some((&fmt, rest)) = args.split_first() else {
            self.error(
                span,
                "`putf` needs a format string literal as its first argument",
            );
            return self.error_expr(span);
        };
        let x = self.expr(fmt);
        let mut ok = true;
        if !matches!(self.p.exprs[x].kind, ExprKind::Str(_)) {
            let sp = self.p.exprs[x].span;
            if self.p.exprs[x].ty != ExprTy::Error {
                self.error(sp, "the first argument of `putf` must be a string literal");
            }
            ok = false;
        }
        out.push(x);
        for &a in rest {
            let x = self.expr(a);
            if self.require_scalar(x).is_none() {
                ok = false;
            }
            out.push(x);
        }
        if !ok {
            return self.error_expr(span);
        }
        let args = self.p.push_list(&out);
        self.mk(ExprKind::Call { func: f, args }, ExprTy::Void, span)
    }

    /// An expression that must be a compile-time constant (`what` names the context).
    fn const_expr(&mut self, e: ast::ExprId, to: Scalar, what: &str) -> Option<Const> {
        let saved = self.div_zero.take();
        self.in_const += 1;
        let x = self.expr(e);
        self.in_const -= 1;
        let r = self.const_value(x, to, what);
        self.div_zero = saved;
        r
    }

    /// The constant value of the checked `x`, converted to `to`, or an error.
    fn const_value(&mut self, x: ExprId, to: Scalar, what: &str) -> Option<Const> {
        self.require_scalar(x)?;
        let x = self.convert(x, to);
        match self.const_of(x) {
            Some(c) => Some(c),
            None => {
                if let Some(sp) = self.div_zero {
                    self.error(sp, "division by zero in constant expression");
                } else {
                    let sp = self.p.exprs[x].span;
                    self.error(sp, format!("{what} is not a constant expression"));
                }
                None
            }
        }
    }

    // ---------------------------------------------------------------- declarations

    /// Evaluates array dimensions.
    fn dims(&mut self, dims: &[ast::ExprId]) -> Option<Vec<u32>> {
        let mut out = Vec::with_capacity(dims.len());
        let mut total: u64 = 1;
        for &d in dims {
            let span = self.ast.exprs[d].span;
            let saved = self.div_zero.take();
            self.in_const += 1;
            let x = self.expr(d);
            self.in_const -= 1;
            let c = if self.p.exprs[x].ty == ExprTy::Float {
                self.error(span, "array size must be an `int`, found `float`");
                None
            } else {
                self.const_value(x, Scalar::Int, "array size")
            };
            self.div_zero = saved;
            let Some(Const::Int(n)) = c else { return None };
            if n < 0 {
                self.error(span, format!("negative array size ({n})"));
                return None;
            }
            if n == 0 {
                self.error(span, "array size must be greater than zero");
                return None;
            }
            total = total.saturating_mul(n as u64);
            if total > (1 << 31) / 4 {
                self.error(span, "array is too large");
                return None;
            }
            out.push(n as u32);
        }
        Some(out)
    }

    /// Checks a declaration; a local one's checked statements go on `stmt_stack`.
    fn decl(&mut self, d: &ast::Decl, global: bool) {
        let elem = scalar_of(d.ty);
        for def in &d.defs {
            if self.diags.is_full() {
                return;
            }
            let Some(dims) = self.dims(&def.dims) else {
                continue;
            };
            let kind = if global {
                VarKind::Global
            } else {
                VarKind::Local
            };
            let const_needed = global || d.is_const;
            let init = match def.init {
                None => VarInit::None,
                Some(init) => match self.init(init, elem, &dims, const_needed, def) {
                    Some(i) => i,
                    None => VarInit::None,
                },
            };
            // A constant without a valid initialiser still gets declared (as zero) to avoid
            // follow-on "undefined" errors.
            let init = match (d.is_const, init) {
                (true, VarInit::None) => VarInit::Const(Box::default()),
                (_, i) => i,
            };
            let v = self.st.p.vars.push(Var {
                name: self.interner.shared(def.name),
                span: def.span,
                elem,
                dims: dims.into(),
                kind,
                is_const: d.is_const,
                init,
                read: false,
            });
            // Declared after the initialiser: `int x = x;` refers to an outer `x`.
            self.declare(def.name, Binding::Var(v), def.span);
            if global {
                self.p.globals.push(v);
            } else {
                let span = def.span;
                let st = self.p.stmts.push(Stmt {
                    kind: StmtKind::Decl(v),
                    span,
                });
                self.st.stmt_stack.push(st);
            }
        }
    }

    /// Checks an initialiser against `dims`; constant (`VarInit::Const`) if `const_needed`.
    fn init(
        &mut self,
        init: ast::InitId,
        elem: Scalar,
        dims: &[u32],
        const_needed: bool,
        def: &ast::VarDef,
    ) -> Option<VarInit> {
        let node = &self.ast.inits[init];
        if dims.is_empty() {
            if let InitKind::Expr(e) = node.kind {
                return if const_needed {
                    let what = "initializer";
                    self.const_expr(e, elem, what).map(|c| {
                        VarInit::Const(if c.is_zero() {
                            Box::default()
                        } else {
                            Box::new([(0, c)])
                        })
                    })
                } else {
                    Some(VarInit::Expr(self.scalar_expr(&e, elem)))
                };
            }
        } else if let InitKind::Expr(_) = node.kind {
            self.error(
                node.span,
                format!(
                    "array `{}` must be initialized with a brace-enclosed list",
                    self.name(def.name)
                ),
            );
            return None;
        }
        let mut flat = Vec::new();
        let total: u64 = dims.iter().map(|&d| d as u64).product();
        let mut sizes = vec![1u64; dims.len() + 1];
        for k in (0..dims.len()).rev() {
            sizes[k] = sizes[k + 1] * dims[k] as u64;
        }
        if !self.flatten_init(init, 0, 0, &sizes, &mut flat, def) {
            return None;
        }
        debug_assert!(flat.iter().all(|&(i, _)| (i as u64) < total));
        if const_needed {
            let mut vals = Vec::with_capacity(flat.len());
            let mut ok = true;
            for (i, e) in flat {
                match self.const_expr(e, elem, "initializer element") {
                    Some(c) if !c.is_zero() => vals.push((i, c)),
                    Some(_) => {}
                    None => ok = false,
                }
            }
            ok.then_some(VarInit::Const(vals.into()))
        } else {
            let vals: Vec<(u32, ExprId)> = flat
                .into_iter()
                .map(|(i, e)| (i, self.scalar_expr(&e, elem)))
                .collect();
            if dims.is_empty() {
                // `int x = {1};` or `int x = {};`
                let span = self.ast.inits[init].span;
                let e = match vals.first() {
                    Some(&(_, e)) => e,
                    None => self.convert_const_zero(elem, span),
                };
                return Some(VarInit::Expr(e));
            }
            Some(VarInit::Elems(vals.into()))
        }
    }

    /// Flattens the brace list `init` filling the sub-aggregate of level `level` (element count
    /// `sizes[level]`) that starts at flat index `base`. A scalar takes the next element; a
    /// nested list takes the largest sub-aggregate the current position is aligned to (C's
    /// rule). Returns false after reporting an error.
    fn flatten_init(
        &mut self,
        init: ast::InitId,
        level: usize,
        base: u64,
        sizes: &[u64],
        out: &mut Vec<(u32, ast::ExprId)>,
        def: &ast::VarDef,
    ) -> bool {
        let ast = self.ast;
        let InitKind::List(items) = &ast.inits[init].kind else {
            unreachable!("list")
        };
        let n = sizes.len() - 1;
        let end = base + sizes[level];
        let mut pos = base;
        for &item in items {
            let node = &ast.inits[item];
            if pos >= end {
                self.error(
                    node.span,
                    format!("too many initializers for `{}`", self.name(def.name)),
                );
                return false;
            }
            match &node.kind {
                InitKind::Expr(e) => {
                    out.push((pos as u32, *e));
                    pos += 1;
                }
                InitKind::List(_) => {
                    // The largest sub-aggregate (below `level`) aligned at `pos`; at the scalar
                    // level, braces around a scalar.
                    let sub = (level + 1..=n)
                        .find(|&j| (pos - base).is_multiple_of(sizes[j]))
                        .unwrap_or(n);
                    if !self.flatten_init(item, sub, pos, sizes, out, def) {
                        return false;
                    }
                    pos += sizes[sub];
                }
            }
        }
        true
    }

    // ---------------------------------------------------------------- functions and statements

    fn func(&mut self, f: &ast::FuncDef) {
        let ret = f.ret.map(scalar_of);
        let mut param_tys = Vec::with_capacity(f.params.len());
        let mut param_dims = Vec::with_capacity(f.params.len());
        for p in &f.params {
            let elem = scalar_of(p.ty);
            match &p.dims {
                None => {
                    param_tys.push(Ty::scalar(elem));
                    param_dims.push(Vec::new());
                }
                Some(ds) => {
                    let dims = self.dims(ds).unwrap_or_default();
                    param_tys.push(Ty::Ptr {
                        elem,
                        dims: dims.clone(),
                    });
                    let mut all = vec![0];
                    all.extend(dims);
                    param_dims.push(all);
                }
            }
        }
        let fid = self.st.p.funcs.push(Func {
            name: self.interner.get(f.name).to_string(),
            span: f.name_span,
            ret,
            param_tys,
            params: Vec::new(),
            body: None,
            variadic: false,
            used: true,
            nesting: f.nesting,
        });
        self.declare(f.name, Binding::Func(fid), f.name_span);
        // Parameters and the body's outermost declarations share one scope, as in C.
        self.push_scope();
        let mut params = Vec::with_capacity(f.params.len());
        for (i, (p, dims)) in f.params.iter().zip(param_dims).enumerate() {
            let v = self.st.p.vars.push(Var {
                name: self.interner.shared(p.name),
                span: p.span,
                elem: scalar_of(p.ty),
                dims: dims.into(),
                kind: VarKind::Param(i as u32),
                is_const: false,
                init: VarInit::None,
                read: false,
            });
            self.declare(p.name, Binding::Var(v), p.span);
            params.push(v);
        }
        self.p.funcs[fid].params = params;
        self.cur_ret = ret;
        self.cur_func_name = self.name(f.name);
        self.loop_depth = 0;
        let AStmt::Block(items) = self.ast.stmts[f.body].kind else {
            unreachable!("body is a block")
        };
        let items = self.ast.block(items);
        // With separate bodies, the body gets tables of its own (the global initialisers' stay
        // behind).
        let separate = matches!(self.p.bodies, Bodies::Separate(_));
        let outer = separate.then(|| Body {
            exprs: std::mem::take(&mut self.p.exprs),
            stmts: std::mem::take(&mut self.p.stmts),
            lists: std::mem::take(&mut self.p.lists),
            blocks: std::mem::take(&mut self.p.blocks),
        });
        let start = self.stmt_stack.len();
        for &s in items {
            self.stmt(s);
        }
        self.pop_scope();
        let span = self.ast.stmts[f.body].span;
        let kind = StmtKind::Block(self.block_since(start));
        let b = self.p.stmts.push(Stmt { kind, span });
        self.p.funcs[fid].body = Some(b);
        if let Some(outer) = outer {
            let mut checked = Body {
                exprs: std::mem::replace(&mut self.p.exprs, outer.exprs),
                stmts: std::mem::replace(&mut self.p.stmts, outer.stmts),
                lists: std::mem::replace(&mut self.p.lists, outer.lists),
                blocks: std::mem::replace(&mut self.p.blocks, outer.blocks),
            };
            checked.exprs.shrink_to_fit();
            checked.stmts.shrink_to_fit();
            checked.lists.shrink_to_fit();
            checked.blocks.shrink_to_fit();
            if let Bodies::Separate(v) = &mut self.p.bodies {
                if v.len() <= fid.index() {
                    v.resize_with(fid.index() + 1, || None);
                }
                v[fid.index()] = Some(checked);
            }
        }
    }

    /// The statements on `stmt_stack` from `start` on, moved into a new block.
    fn block_since(&mut self, start: usize) -> StmtList {
        let st = &mut *self.st;
        let list = st.p.push_block(&st.stmt_stack[start..]);
        st.stmt_stack.truncate(start);
        list
    }

    /// Checks one statement, pushing its checked form(s) on `stmt_stack`.
    fn stmt(&mut self, id: ast::StmtId) {
        if self.diags.is_full() {
            return;
        }
        let s = &self.ast.stmts[id];
        let span = s.span;
        let kind = match &s.kind {
            AStmt::Decl(d) => {
                self.decl(d, false);
                return;
            }
            AStmt::Assign { target, value } => {
                let target = &self.ast.exprs[*target];
                let ast::ExprKind::LVal { name, indices } = &target.kind else {
                    unreachable!("parser checked")
                };
                let indices = self.ast.list(*indices);
                let tspan = target.span;
                let Some(v) = self.var_of(*name, target) else {
                    self.expr(*value);
                    return;
                };
                let Some(start) = self.indices(v, *name, indices, tspan) else {
                    self.expr(*value);
                    return;
                };
                let var = &self.p.vars[v];
                if var.is_const {
                    let d =
                        Diagnostic::new(tspan, format!("cannot assign to constant `{}`", var.name))
                            .with_note(
                                Some(var.span),
                                format!("`{}` is declared `const` here", var.name),
                            );
                    self.diags.push(d);
                    self.st.operands.truncate(start);
                    return;
                }
                if self.operands.len() - start < var.dims.len() {
                    let msg = format!("cannot assign to array `{}`", var.name);
                    self.error(tspan, msg);
                    self.st.operands.truncate(start);
                    return;
                }
                let elem = var.elem;
                let value = self.scalar_expr(value, elem);
                StmtKind::Assign {
                    var: v,
                    indices: self.list_since(start),
                    value,
                }
            }
            AStmt::Expr(None) => return,
            AStmt::Expr(Some(e)) => {
                let x = self.expr(*e);
                if let ExprKind::Str(_) = self.p.exprs[x].kind {
                    self.error(
                        span,
                        "string literal is only allowed as the format argument of `putf`",
                    );
                }
                StmtKind::Expr(x)
            }
            AStmt::Block(items) => {
                let items = self.ast.block(*items);
                self.push_scope();
                let start = self.stmt_stack.len();
                for &s in items {
                    self.stmt(s);
                }
                self.pop_scope();
                StmtKind::Block(self.block_since(start))
            }
            AStmt::If { cond, then, els } => {
                let c = self.cond(*cond);
                let t = self.sub_stmt(*then);
                let e = els.map(|e| self.sub_stmt(e));
                StmtKind::If {
                    cond: c,
                    then: t,
                    els: e,
                }
            }
            AStmt::While { cond, body } => {
                let c = self.cond(*cond);
                self.loop_depth += 1;
                let b = self.sub_stmt(*body);
                self.loop_depth -= 1;
                StmtKind::While { cond: c, body: b }
            }
            AStmt::Break | AStmt::Continue => {
                if self.loop_depth == 0 {
                    let what = if matches!(s.kind, AStmt::Break) {
                        "break"
                    } else {
                        "continue"
                    };
                    self.error(span, format!("`{what}` statement not within a loop"));
                    return;
                }
                if matches!(s.kind, AStmt::Break) {
                    StmtKind::Break
                } else {
                    StmtKind::Continue
                }
            }
            AStmt::Return(v) => match (v, self.cur_ret) {
                (None, None) => StmtKind::Return(None),
                (Some(e), Some(t)) => StmtKind::Return(Some(self.scalar_expr(e, t))),
                (Some(e), None) => {
                    let x = self.expr(*e);
                    if self.p.exprs[x].ty != ExprTy::Error {
                        let msg = format!(
                            "void function `{}` should not return a value",
                            self.cur_func_name
                        );
                        self.error(span, msg);
                    }
                    return;
                }
                (None, Some(_)) => {
                    let msg = format!(
                        "non-void function `{}` should return a value",
                        self.cur_func_name
                    );
                    self.error(span, msg);
                    return;
                }
            },
        };
        let st = self.p.stmts.push(Stmt { kind, span });
        self.st.stmt_stack.push(st);
    }

    /// The body of an `if`/`while`: its own scope (a declaration there is local to it).
    fn sub_stmt(&mut self, id: ast::StmtId) -> StmtId {
        let span = self.ast.stmts[id].span;
        let start = self.stmt_stack.len();
        self.push_scope();
        self.stmt(id);
        self.pop_scope();
        if self.stmt_stack.len() == start + 1 {
            self.st.stmt_stack.pop().expect("one statement")
        } else {
            let kind = StmtKind::Block(self.block_since(start));
            self.p.stmts.push(Stmt { kind, span })
        }
    }
}

fn cmp_fold<T: PartialOrd>(op: CmpOp, a: T, b: T) -> bool {
    match op {
        CmpOp::Lt => a < b,
        CmpOp::Gt => a > b,
        CmpOp::Le => a <= b,
        CmpOp::Ge => a >= b,
        CmpOp::Eq => a == b,
        CmpOp::Ne => a != b,
    }
}

/// Levenshtein distance between two byte strings (small: names up to 64 bytes).
fn edit_distance(a: &[u8], b: &[u8]) -> usize {
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, &ca) in a.iter().enumerate() {
        cur[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(!ca.eq_ignore_ascii_case(&cb));
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}
