//! The syntax tree, as written: no types, no name resolution.
//!
//! Nodes live in flat arenas indexed by typed ids (`ExprId`, `StmtId`, `InitId`), so a deeply
//! nested program is a few `Vec`s (no recursive `Box` drops, no pointer chasing). The parser
//! guarantees every tree is at most `MAX_DEPTH` deep, which bounds the recursion of every later
//! walk (sema, lowering). Ids come from the IR's `entity!`; tables are its `IdVec`.

use super::diag::Span;
use super::lexer::Sym;

/// Maximum nesting of expressions, statements and initialiser lists. Deeper input gets a
/// "nesting too deep" diagnostic instead of a stack overflow. Every recursive walk of the tree
/// recurses at most about this many times (times a small constant).
pub const MAX_DEPTH: u32 = 100_000;

use crate::entity;
pub use crate::ir::entity::IdVec as Arena;

entity!(/// A syntactic expression.
    ExprId, "e");
entity!(/// A syntactic statement.
    StmtId, "s");
entity!(/// One level of a (possibly nested) initialiser.
    InitId, "init");

/// `int` or `float`, as written in declarations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BaseType {
    Int,
    Float,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    Plus,
    Neg,
    Not,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Lt,
    Gt,
    Le,
    Ge,
    Eq,
    Ne,
    And,
    Or,
}

impl BinOp {
    pub fn text(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::Lt => "<",
            BinOp::Gt => ">",
            BinOp::Le => "<=",
            BinOp::Ge => ">=",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::And => "&&",
            BinOp::Or => "||",
        }
    }
    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinOp::Lt | BinOp::Gt | BinOp::Le | BinOp::Ge | BinOp::Eq | BinOp::Ne
        )
    }
}

/// The indices of an lvalue or the arguments of a call: a range of `Ast::lists`, read with
/// `Ast::list`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExprList {
    start: u32,
    len: u32,
}

/// An expression. Every variant holds ids and small values only (16 bytes): lists live in
/// `Ast::lists`, string bytes in the interner. The name of an `LVal` or `Call` starts its
/// span (its own span is `Expr::name_span`).
#[derive(Clone, Copy, Debug)]
pub enum ExprKind {
    Int(i32),
    Float(f32),
    /// Only legal as the format argument of `putf`: the literal's index in the interner's
    /// strings (`Interner::string`).
    Str(u32),
    /// `name` or `name[i][j]...`
    LVal {
        name: Sym,
        indices: ExprList,
    },
    Call {
        name: Sym,
        args: ExprList,
    },
    Unary(UnOp, ExprId),
    Binary(BinOp, ExprId, ExprId),
}

#[derive(Clone, Copy, Debug)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

impl Expr {
    /// The span of the name of an `LVal` or `Call` (`name`, whose text is `name_len` bytes).
    pub fn name_span(&self, name_len: usize) -> Span {
        Span {
            lo: self.span.lo,
            hi: self.span.lo + name_len as u32,
        }
    }
}

#[derive(Clone, Debug)]
pub enum InitKind {
    Expr(ExprId),
    List(Vec<InitId>),
}

#[derive(Clone, Debug)]
pub struct Init {
    pub kind: InitKind,
    pub span: Span,
}

/// One declarator: `name[d0][d1] = init`.
#[derive(Clone, Debug)]
pub struct VarDef {
    pub name: Sym,
    pub span: Span,
    pub dims: Vec<ExprId>,
    pub init: Option<InitId>,
}

/// `const? int|float def, def, ...;`
#[derive(Clone, Debug)]
pub struct Decl {
    pub is_const: bool,
    pub ty: BaseType,
    pub defs: Vec<VarDef>,
    pub span: Span,
}

/// The statements of a block: a range of `Ast::blocks`, read with `Ast::block`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StmtList {
    start: u32,
    len: u32,
}

#[derive(Clone, Debug)]
pub enum StmtKind {
    Decl(Decl),
    /// `lval = value;` (`target` is an `ExprKind::LVal`).
    Assign {
        target: ExprId,
        value: ExprId,
    },
    /// `expr;` or the empty statement `;`.
    Expr(Option<ExprId>),
    Block(StmtList),
    If {
        cond: ExprId,
        then: StmtId,
        els: Option<StmtId>,
    },
    While {
        cond: ExprId,
        body: StmtId,
    },
    Break,
    Continue,
    Return(Option<ExprId>),
}

#[derive(Clone, Debug)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

/// A function parameter; `dims` is `Some` for arrays (the omitted first dimension excluded).
#[derive(Clone, Debug)]
pub struct Param {
    pub ty: BaseType,
    pub name: Sym,
    pub span: Span,
    pub dims: Option<Vec<ExprId>>,
}

#[derive(Clone, Debug)]
pub struct FuncDef {
    /// `None` for `void`.
    pub ret: Option<BaseType>,
    pub name: Sym,
    pub name_span: Span,
    pub params: Vec<Param>,
    /// Always a `StmtKind::Block`.
    pub body: StmtId,
    pub span: Span,
    /// The deepest nesting in the body (statement or parser recursion depth, expression
    /// height): a bound on the recursion of any walk over it.
    pub nesting: u32,
}

#[derive(Clone, Debug)]
pub enum Item {
    Decl(Decl),
    Func(FuncDef),
}

/// The nodes of one top-level item (the parser hands the items over one at a time).
#[derive(Default, Debug)]
pub struct Ast {
    pub exprs: Arena<ExprId, Expr>,
    /// The operand lists of expressions (`ExprList`), one after another.
    pub lists: Vec<ExprId>,
    pub stmts: Arena<StmtId, Stmt>,
    /// The statements of blocks (`StmtList`), one after another.
    pub blocks: Vec<StmtId>,
    pub inits: Arena<InitId, Init>,
}

impl Ast {
    /// Drops every node, keeping the tables' capacity for the next item.
    pub fn clear(&mut self) {
        self.exprs.clear();
        self.lists.clear();
        self.stmts.clear();
        self.blocks.clear();
        self.inits.clear();
    }

    /// Takes every node, leaving empty tables as large as the taken ones' rows (the next
    /// item's fill them without growing unless it is larger).
    pub fn take(&mut self) -> Ast {
        let empty = Ast {
            exprs: Arena::with_capacity(self.exprs.len()),
            lists: Vec::with_capacity(self.lists.len()),
            stmts: Arena::with_capacity(self.stmts.len()),
            blocks: Vec::with_capacity(self.blocks.len()),
            inits: Arena::with_capacity(self.inits.len()),
        };
        std::mem::replace(self, empty)
    }

    /// The expressions of `l`.
    pub fn list(&self, l: ExprList) -> &[ExprId] {
        &self.lists[l.start as usize..(l.start + l.len) as usize]
    }

    /// Moves `items[start..]` (the end of a parser's scratch stack) into a new list.
    pub fn push_list(&mut self, items: &mut Vec<ExprId>, start: usize) -> ExprList {
        let list = ExprList {
            start: self.lists.len() as u32,
            len: (items.len() - start) as u32,
        };
        self.lists.extend_from_slice(&items[start..]);
        items.truncate(start);
        list
    }

    /// The statements of `l`.
    pub fn block(&self, l: StmtList) -> &[StmtId] {
        &self.blocks[l.start as usize..(l.start + l.len) as usize]
    }

    /// Moves `items[start..]` (the end of a parser's scratch stack) into a new block.
    pub fn push_block(&mut self, items: &mut Vec<StmtId>, start: usize) -> StmtList {
        let list = StmtList {
            start: self.blocks.len() as u32,
            len: (items.len() - start) as u32,
        };
        self.blocks.extend_from_slice(&items[start..]);
        items.truncate(start);
        list
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expression_rows_stay_small() {
        assert_eq!(std::mem::size_of::<ExprKind>(), 16);
        assert_eq!(std::mem::size_of::<Expr>(), 24);
    }
}
