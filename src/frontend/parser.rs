//! Parser: tokens -> `Ast`, by recursive descent, one top-level item at a time.
//!
//! The parser pulls tokens from the lexer as it goes and keeps a ring of eight (the
//! current token, two of lookahead, two behind), so the token stream is never stored whole.
//! `next_item` returns each item with its nodes in `ast`, which the next call clears: the
//! syntax tree of one item is alive at a time (its consumer, sema, checks it in between).
//!
//! Binary expressions use precedence climbing (`||` < `&&` < `== !=` < `< > <= >=` < `+ -` <
//! `* / %`, all left-associative); unary `+ - !` bind tighter. Assignment is a statement: an
//! expression statement followed by `=` must be an lvalue.
//!
//! Depth: `depth` counts the active recursion (parenthesis, unary operator, call/index argument,
//! nested statement or initialiser list) and `expr_depth` the height of each built expression
//! (so a 10^5-term `a+a+...` chain, parsed by a loop, is still caught). Either exceeding
//! `MAX_DEPTH` gives "nesting too deep" and stops, so no later tree walk recurses deeper.
//!
//! Error handling: a syntax error is reported with what was expected and what was found, and
//! parsing resumes at the next statement (`recover`: skip to a `;` or past a balanced `{...}`, or
//! stop before the `}` that closes the block), or at the next top-level item, so independent
//! errors are all reported. A missing closing delimiter gets a note at the opening one ("to match
//! this `(`"), a `{` still open at the end of the file is reported at itself, and a function
//! definition met inside a body is taken as a missing `}` (every open block is closed there, so
//! the rest of the file parses normally). Nesting too deep and the error limit stop parsing.

use super::ast::*;
use super::diag::{Diagnostic, Diags, Span};
use super::lexer::{Interner, Lexer, Sym, Tok, Token};

/// Tokens the parser may look past the current one (`peek_at`).
const LOOKAHEAD: usize = 2;
/// Tokens kept before the current one: `prev_span` and the rewind of a function definition
/// found inside a body need two.
const BEHIND: usize = 2;
/// Slots of the token window (`Parser::toks`), a power of two holding the `BEHIND` tokens,
/// the current one and the `LOOKAHEAD` ones.
const WINDOW: usize = 8;
const _: () = assert!(WINDOW.is_power_of_two() && WINDOW > BEHIND + LOOKAHEAD);

pub struct Parser<'a> {
    lexer: Lexer<'a>,
    source: &'a [u8],
    /// A ring over the token stream: token number `k` (counting from 0) is in slot
    /// `k % WINDOW`. Token `pos` is the current one, followed by `LOOKAHEAD` more (fewer at the
    /// end, whose last token is `Eof`) and preceded by up to `BEHIND`.
    toks: [Token; WINDOW],
    /// The number of the current token.
    pos: usize,
    /// The number of tokens lexed so far (`toks` holds those from `end - WINDOW` on).
    end: usize,
    /// The lexer returned `Eof`: it is token `end - 1`.
    at_eof: bool,
    /// The rows of the item being parsed (of the last one returned by `next_item`).
    pub ast: Ast,
    diags: &'a mut Diags,
    depth: u32,
    /// Height of each expression tree, parallel to `ast.exprs`.
    expr_depth: Vec<u32>,
    /// The deepest `depth` or expression height since the current function body began.
    nesting: u32,
    /// Parsing cannot resume (nesting too deep, error limit reached).
    fatal: bool,
    /// No item follows: the end of the file, or parsing cannot resume.
    done: bool,
    /// A function definition was found inside a body: every open block ends here.
    unwind: bool,
    /// The `{` of each open block, outermost first.
    open_braces: Vec<Span>,
    /// The items of the lists being parsed (nested calls' arguments on top of the outer
    /// ones'), each moved into `ast.lists` when complete.
    list_items: Vec<ExprId>,
    /// The statements of the blocks being parsed (nested blocks' on top of the outer ones'),
    /// each moved into `ast.blocks` when complete.
    block_items: Vec<StmtId>,
}

/// A reported syntax error; parsing stops.
pub struct Stop;

type PResult<T> = Result<T, Stop>;

impl<'a> Parser<'a> {
    /// A parser of `source`, lexing as it goes: lexical errors go to `lex_diags`, syntax
    /// errors to `diags` (syntax errors after a lexical one are not meaningful).
    pub fn new(
        source: &'a [u8],
        interner: &'a mut Interner,
        lex_diags: &'a mut Diags,
        diags: &'a mut Diags,
    ) -> Parser<'a> {
        let mut p = Parser {
            lexer: Lexer::new(source, interner, lex_diags),
            source,
            toks: [Token {
                tok: Tok::Eof,
                span: Span::default(),
            }; WINDOW],
            pos: 0,
            end: 0,
            at_eof: false,
            ast: Ast::default(),
            diags,
            depth: 0,
            expr_depth: Vec::new(),
            nesting: 0,
            fatal: false,
            done: false,
            unwind: false,
            open_braces: Vec::new(),
            list_items: Vec::new(),
            block_items: Vec::new(),
        };
        p.fill();
        p
    }

    /// The next top-level item (a declaration or function definition), its nodes in `ast`
    /// (replacing the previous item's); `None` at the end of the file or when parsing cannot
    /// go on. Items with syntax errors are reported and skipped.
    pub fn next_item(&mut self) -> Option<Item> {
        while !self.done && *self.peek() != Tok::Eof {
            self.ast.clear();
            self.expr_depth.clear();
            self.block_items.clear();
            self.unwind = false;
            let depth = self.depth;
            match self.item() {
                Ok(item) => return Some(item),
                Err(Stop) => {
                    self.depth = depth;
                    self.open_braces.clear();
                    if self.recover_top().is_err() {
                        self.done = true;
                    }
                }
            }
        }
        self.done = true;
        None
    }

    /// The interner the lexer fills.
    pub fn interner(&self) -> &Interner {
        self.lexer.interner
    }

    /// Whether a lexical or syntax error has been reported.
    pub fn has_errors(&self) -> bool {
        self.lexer.has_errors() || self.diags.has_errors()
    }

    /// Lexes what is left of the input, so that all its lexical errors are reported.
    pub fn finish(mut self) {
        if !self.at_eof {
            self.lexer.finish();
        }
    }

    /// Lexes until token `pos + LOOKAHEAD` exists (or the input ends).
    fn fill(&mut self) {
        while !self.at_eof && self.end <= self.pos + LOOKAHEAD {
            let t = self.lexer.next_token();
            self.at_eof = t.tok == Tok::Eof;
            self.toks[self.end % WINDOW] = t;
            self.end += 1;
        }
    }

    /// Token number `k`, which must be in the window.
    fn tok(&self, k: usize) -> &Token {
        &self.toks[k % WINDOW]
    }
    fn peek(&self) -> &Tok {
        &self.tok(self.pos).tok
    }
    fn peek_at(&self, k: usize) -> &Tok {
        debug_assert!(k <= LOOKAHEAD);
        &self.tok((self.pos + k).min(self.end - 1)).tok
    }
    fn span(&self) -> Span {
        self.tok(self.pos).span
    }
    fn prev_span(&self) -> Span {
        self.tok(self.pos.saturating_sub(1)).span
    }
    fn bump(&mut self) -> Token {
        let t = *self.tok(self.pos);
        if self.pos + 1 < self.end {
            self.pos += 1;
            self.fill();
        }
        t
    }
    fn eat(&mut self, t: &Tok) -> bool {
        if self.peek() == t {
            self.bump();
            true
        } else {
            false
        }
    }
    fn error<T>(&mut self, expected: &str) -> PResult<T> {
        let found = self.peek().describe(self.interner());
        let span = self.span();
        self.diags
            .error(span, format!("expected {expected}, found {found}"));
        Err(Stop)
    }
    fn expect(&mut self, t: &Tok) -> PResult<Span> {
        if self.peek() == t {
            Ok(self.bump().span)
        } else {
            self.error(&format!("`{}`", t.text()))
        }
    }
    /// The closing `)` or `]` of the delimiter opened at `open`: when missing, the error notes
    /// where it was opened.
    fn expect_close(&mut self, t: &Tok, open: Span) -> PResult<Span> {
        if self.peek() == t {
            return Ok(self.bump().span);
        }
        self.close_error(&format!("`{}`", t.text()), open)
    }
    fn close_error<T>(&mut self, expected: &str, open: Span) -> PResult<T> {
        let found = self.peek().describe(self.interner());
        let opener = match self.source.get(open.lo as usize) {
            Some(b'[') => "[",
            Some(b'{') => "{",
            _ => "(",
        };
        let d = Diagnostic::new(self.span(), format!("expected {expected}, found {found}"))
            .with_note(Some(open), format!("to match this `{opener}`"));
        self.diags.push(d);
        Err(Stop)
    }
    /// After a syntax error in a statement: skips to just after the next `;` or balanced
    /// `{...}` at this level, or to just before the `}` closing the enclosing block, or to the
    /// end of the file. `Err` if parsing cannot go on.
    fn recover(&mut self) -> PResult<()> {
        // No list is open at statement level: drop the items of the one the error cut short.
        self.list_items.clear();
        if self.fatal || self.diags.is_full() {
            self.fatal = true;
            return Err(Stop);
        }
        if self.unwind {
            return Ok(());
        }
        let mut nested = 0u32;
        loop {
            match self.peek() {
                Tok::Eof => return Ok(()),
                Tok::Semi if nested == 0 => {
                    self.bump();
                    return Ok(());
                }
                Tok::LBrace => nested += 1,
                Tok::RBrace if nested == 0 => return Ok(()),
                Tok::RBrace => {
                    nested -= 1;
                    if nested == 0 {
                        self.bump();
                        return Ok(());
                    }
                }
                _ => {}
            }
            self.bump();
        }
    }
    /// After a syntax error at the top level: skips past the next `;` or balanced `{...}` (a
    /// stray `}` included).
    fn recover_top(&mut self) -> PResult<()> {
        self.recover()?;
        if *self.peek() == Tok::RBrace {
            self.bump();
        }
        Ok(())
    }
    fn ident(&mut self) -> PResult<(Sym, Span)> {
        if let Tok::Ident(s) = *self.peek() {
            let sp = self.bump().span;
            Ok((s, sp))
        } else {
            self.error("identifier")
        }
    }
    fn enter(&mut self) -> PResult<()> {
        self.depth += 1;
        self.nesting = self.nesting.max(self.depth);
        if self.depth > MAX_DEPTH {
            self.fatal = true;
            let span = self.span();
            self.diags.error(
                span,
                format!("nesting too deep (more than {MAX_DEPTH} levels)"),
            );
            return Err(Stop);
        }
        Ok(())
    }
    fn leave(&mut self) {
        self.depth -= 1;
    }

    fn make_expr(&mut self, kind: ExprKind, span: Span) -> PResult<ExprId> {
        let d = 1 + match &kind {
            ExprKind::LVal { indices: v, .. } | ExprKind::Call { args: v, .. } => self
                .ast
                .list(*v)
                .iter()
                .map(|e| self.expr_depth[e.index()])
                .max()
                .unwrap_or(0),
            ExprKind::Unary(_, e) => self.expr_depth[e.index()],
            ExprKind::Binary(_, l, r) => self.expr_depth[l.index()].max(self.expr_depth[r.index()]),
            _ => 0,
        };
        if d > MAX_DEPTH {
            self.fatal = true;
            self.diags.error(
                span,
                format!("expression nesting too deep (more than {MAX_DEPTH} levels)"),
            );
            return Err(Stop);
        }
        self.nesting = self.nesting.max(d);
        self.expr_depth.push(d);
        Ok(self.ast.exprs.push(Expr { kind, span }))
    }

    /// A declaration or function definition at the top level.
    fn item(&mut self) -> PResult<Item> {
        {
            let start = self.span();
            let is_const = self.eat(&Tok::KwConst);
            let ty = match self.peek() {
                Tok::KwInt => Some(BaseType::Int),
                Tok::KwFloat => Some(BaseType::Float),
                Tok::KwVoid if !is_const => None,
                _ => {
                    return self.error(if is_const {
                        "`int` or `float`"
                    } else {
                        "declaration or function definition"
                    })
                }
            };
            self.bump();
            if !is_const && matches!(self.peek(), Tok::Ident(_)) && *self.peek_at(1) == Tok::LParen
            {
                Ok(Item::Func(self.func_def(ty, start)?))
            } else {
                let Some(ty) = ty else {
                    // `void x;`
                    let (_, sp) = self.ident()?;
                    self.diags.error(sp, "variable declared `void`");
                    return Err(Stop);
                };
                Ok(Item::Decl(self.decl_rest(is_const, ty, start)?))
            }
        }
    }

    fn func_def(&mut self, ret: Option<BaseType>, start: Span) -> PResult<FuncDef> {
        let (name, name_span) = self.ident()?;
        let open = self.expect(&Tok::LParen)?;
        let mut params = Vec::new();
        if *self.peek() != Tok::RParen {
            loop {
                let pstart = self.span();
                let ty = match self.peek() {
                    Tok::KwInt => BaseType::Int,
                    Tok::KwFloat => BaseType::Float,
                    _ => return self.error("parameter type `int` or `float`"),
                };
                self.bump();
                let (pname, _) = self.ident()?;
                let dims = if *self.peek() == Tok::LBracket {
                    let open = self.bump().span;
                    self.expect_close(&Tok::RBracket, open)?;
                    let mut dims = Vec::new();
                    while *self.peek() == Tok::LBracket {
                        let open = self.bump().span;
                        dims.push(self.expr()?);
                        self.expect_close(&Tok::RBracket, open)?;
                    }
                    Some(dims)
                } else {
                    None
                };
                params.push(Param {
                    ty,
                    name: pname,
                    span: pstart.to(self.prev_span()),
                    dims,
                });
                if !self.eat(&Tok::Comma) {
                    break;
                }
            }
        }
        if *self.peek() != Tok::RParen {
            return self.close_error("`,` or `)`", open);
        }
        self.bump();
        if *self.peek() != Tok::LBrace {
            return self.error("`{` (function body)");
        }
        self.nesting = 0;
        let body = self.block()?;
        Ok(FuncDef {
            ret,
            name,
            name_span,
            params,
            body,
            span: start.to(self.prev_span()),
            nesting: self.nesting,
        })
    }

    /// After `const? type`: `def, def, ...;`
    fn decl_rest(&mut self, is_const: bool, ty: BaseType, start: Span) -> PResult<Decl> {
        let mut defs = Vec::new();
        loop {
            let (name, nspan) = self.ident()?;
            let mut dims = Vec::new();
            while *self.peek() == Tok::LBracket {
                let open = self.bump().span;
                dims.push(self.expr()?);
                self.expect_close(&Tok::RBracket, open)?;
            }
            let init = if self.eat(&Tok::Assign) {
                Some(self.init_val()?)
            } else {
                if is_const {
                    return self.error("`=` (a constant needs an initialiser)");
                }
                None
            };
            defs.push(VarDef {
                name,
                span: nspan,
                dims,
                init,
            });
            if !self.eat(&Tok::Comma) {
                break;
            }
        }
        if *self.peek() != Tok::Semi {
            return self.error("`,` or `;`");
        }
        self.bump();
        Ok(Decl {
            is_const,
            ty,
            defs,
            span: start.to(self.prev_span()),
        })
    }

    fn init_val(&mut self) -> PResult<InitId> {
        if *self.peek() == Tok::LBrace {
            self.enter()?;
            let start = self.bump().span;
            let mut items = Vec::new();
            if *self.peek() != Tok::RBrace {
                loop {
                    items.push(self.init_val()?);
                    if !self.eat(&Tok::Comma) {
                        break;
                    }
                    // Allow a trailing comma as C does.
                    if *self.peek() == Tok::RBrace {
                        break;
                    }
                }
            }
            if *self.peek() != Tok::RBrace {
                return self.close_error("`,` or `}`", start);
            }
            let end = self.bump().span;
            self.leave();
            Ok(self.ast.inits.push(Init {
                kind: InitKind::List(items),
                span: start.to(end),
            }))
        } else {
            let e = self.expr()?;
            let span = self.ast.exprs[e].span;
            Ok(self.ast.inits.push(Init {
                kind: InitKind::Expr(e),
                span,
            }))
        }
    }

    fn block(&mut self) -> PResult<StmtId> {
        self.enter()?;
        let start = self.expect(&Tok::LBrace)?;
        self.open_braces.push(start);
        let first = self.block_items.len();
        while *self.peek() != Tok::RBrace && !self.unwind {
            if *self.peek() == Tok::Eof {
                let d = Diagnostic::new(start, "this `{` is never closed")
                    .with_note(Some(self.span()), "expected `}` before the end of the file");
                self.diags.push(d);
                self.fatal = true;
                return Err(Stop);
            }
            let (depth, items) = (self.depth, self.block_items.len());
            match self.stmt() {
                Ok(s) => self.block_items.push(s),
                Err(Stop) => {
                    // Drop what nested blocks the error cut short left.
                    self.block_items.truncate(items);
                    self.depth = depth;
                    if let Some(k) = self.open_braces.iter().rposition(|&b| b == start) {
                        self.open_braces.truncate(k + 1);
                    }
                    self.recover()?;
                }
            }
        }
        self.open_braces.pop();
        let end = if self.unwind {
            self.prev_span()
        } else {
            self.bump().span
        };
        self.leave();
        let items = self.ast.push_block(&mut self.block_items, first);
        Ok(self.ast.stmts.push(Stmt {
            kind: StmtKind::Block(items),
            span: start.to(end),
        }))
    }

    fn stmt(&mut self) -> PResult<StmtId> {
        let start = self.span();
        let kind = match *self.peek() {
            Tok::LBrace => return self.block(),
            Tok::KwInt | Tok::KwFloat | Tok::KwVoid
                if matches!(self.peek_at(1), Tok::Ident(_)) && *self.peek_at(2) == Tok::LParen =>
            {
                // A function definition inside a body: a `}` is missing before it.
                let (_, name_span) = {
                    self.bump();
                    self.ident()?
                };
                let mut d = Diagnostic::new(
                    name_span,
                    "a function cannot be defined inside another function",
                );
                if let Some(&open) = self.open_braces.first() {
                    d = d.with_note(Some(open), "this `{` is never closed");
                }
                self.diags.push(d);
                self.pos -= 2;
                self.unwind = true;
                return Err(Stop);
            }
            Tok::KwConst | Tok::KwInt | Tok::KwFloat => {
                let is_const = self.eat(&Tok::KwConst);
                let ty = match self.peek() {
                    Tok::KwInt => BaseType::Int,
                    Tok::KwFloat => BaseType::Float,
                    _ => return self.error("`int` or `float`"),
                };
                self.bump();
                StmtKind::Decl(self.decl_rest(is_const, ty, start)?)
            }
            Tok::KwVoid => {
                self.diags.error(start, "variable declared `void`");
                return Err(Stop);
            }
            Tok::KwIf => {
                self.bump();
                let open = self.expect(&Tok::LParen)?;
                let cond = self.expr()?;
                self.expect_close(&Tok::RParen, open)?;
                self.enter()?;
                let then = self.stmt()?;
                let els = if self.eat(&Tok::KwElse) {
                    Some(self.stmt()?)
                } else {
                    None
                };
                self.leave();
                StmtKind::If { cond, then, els }
            }
            Tok::KwWhile => {
                self.bump();
                let open = self.expect(&Tok::LParen)?;
                let cond = self.expr()?;
                self.expect_close(&Tok::RParen, open)?;
                self.enter()?;
                let body = self.stmt()?;
                self.leave();
                StmtKind::While { cond, body }
            }
            Tok::KwBreak => {
                self.bump();
                self.expect(&Tok::Semi)?;
                StmtKind::Break
            }
            Tok::KwContinue => {
                self.bump();
                self.expect(&Tok::Semi)?;
                StmtKind::Continue
            }
            Tok::KwReturn => {
                self.bump();
                let v = if *self.peek() == Tok::Semi {
                    None
                } else {
                    Some(self.expr()?)
                };
                self.expect(&Tok::Semi)?;
                StmtKind::Return(v)
            }
            Tok::Semi => {
                self.bump();
                StmtKind::Expr(None)
            }
            _ => {
                let e = self.expr()?;
                if *self.peek() == Tok::Assign {
                    let eq = self.bump().span;
                    if !matches!(self.ast.exprs[e].kind, ExprKind::LVal { .. }) {
                        self.diags.error(eq, "left side of `=` is not assignable (expected a variable or array element)");
                        return Err(Stop);
                    }
                    let value = self.expr()?;
                    self.expect(&Tok::Semi)?;
                    StmtKind::Assign { target: e, value }
                } else {
                    if *self.peek() != Tok::Semi {
                        return self.error("`;`");
                    }
                    self.bump();
                    StmtKind::Expr(Some(e))
                }
            }
        };
        Ok(self.ast.stmts.push(Stmt {
            kind,
            span: start.to(self.prev_span()),
        }))
    }

    /// Expression (`Exp` and `Cond` in the grammar are the same here; sema checks types).
    pub fn expr(&mut self) -> PResult<ExprId> {
        self.binary(0)
    }

    fn binop(t: &Tok) -> Option<(BinOp, u8)> {
        Some(match t {
            Tok::OrOr => (BinOp::Or, 1),
            Tok::AndAnd => (BinOp::And, 2),
            Tok::EqEq => (BinOp::Eq, 3),
            Tok::Ne => (BinOp::Ne, 3),
            Tok::Lt => (BinOp::Lt, 4),
            Tok::Gt => (BinOp::Gt, 4),
            Tok::Le => (BinOp::Le, 4),
            Tok::Ge => (BinOp::Ge, 4),
            Tok::Plus => (BinOp::Add, 5),
            Tok::Minus => (BinOp::Sub, 5),
            Tok::Star => (BinOp::Mul, 6),
            Tok::Slash => (BinOp::Div, 6),
            Tok::Percent => (BinOp::Rem, 6),
            _ => return None,
        })
    }

    /// Precedence climbing: parses operators binding at least as tight as `min_prec`.
    fn binary(&mut self, min_prec: u8) -> PResult<ExprId> {
        let mut lhs = self.unary()?;
        while let Some((op, prec)) = Self::binop(self.peek()) {
            if prec < min_prec {
                break;
            }
            self.bump();
            let rhs = self.binary(prec + 1)?;
            let span = self.ast.exprs[lhs].span.to(self.ast.exprs[rhs].span);
            lhs = self.make_expr(ExprKind::Binary(op, lhs, rhs), span)?;
        }
        Ok(lhs)
    }

    fn unary(&mut self) -> PResult<ExprId> {
        let op = match self.peek() {
            Tok::Plus => UnOp::Plus,
            Tok::Minus => UnOp::Neg,
            Tok::Not => UnOp::Not,
            _ => return self.primary(),
        };
        self.enter()?;
        let start = self.bump().span;
        let e = self.unary()?;
        self.leave();
        let span = start.to(self.ast.exprs[e].span);
        self.make_expr(ExprKind::Unary(op, e), span)
    }

    fn primary(&mut self) -> PResult<ExprId> {
        self.enter()?;
        let e = self.primary_inner()?;
        self.leave();
        Ok(e)
    }

    fn primary_inner(&mut self) -> PResult<ExprId> {
        let t = *self.peek();
        let start = self.span();
        match t {
            Tok::LParen => {
                let open = self.bump().span;
                let e = self.expr()?;
                self.expect_close(&Tok::RParen, open)?;
                Ok(e)
            }
            Tok::Int(v) => {
                self.bump();
                self.make_expr(ExprKind::Int(v), start)
            }
            Tok::Float(v) => {
                self.bump();
                self.make_expr(ExprKind::Float(v), start)
            }
            Tok::Str(s) => {
                self.bump();
                self.make_expr(ExprKind::Str(s), start)
            }
            Tok::Ident(name) => {
                self.bump();
                if *self.peek() == Tok::LParen {
                    let open = self.bump().span;
                    let first = self.list_items.len();
                    if *self.peek() != Tok::RParen {
                        loop {
                            let arg = self.expr()?;
                            self.list_items.push(arg);
                            if !self.eat(&Tok::Comma) {
                                break;
                            }
                        }
                    }
                    if *self.peek() != Tok::RParen {
                        return self.close_error("`,` or `)`", open);
                    }
                    let end = self.bump().span;
                    let args = self.ast.push_list(&mut self.list_items, first);
                    self.make_expr(ExprKind::Call { name, args }, start.to(end))
                } else {
                    let first = self.list_items.len();
                    while *self.peek() == Tok::LBracket {
                        let open = self.bump().span;
                        let index = self.expr()?;
                        self.list_items.push(index);
                        self.expect_close(&Tok::RBracket, open)?;
                    }
                    let span = start.to(self.prev_span());
                    let indices = self.ast.push_list(&mut self.list_items, first);
                    self.make_expr(ExprKind::LVal { name, indices }, span)
                }
            }
            _ => self.error("expression"),
        }
    }
}
