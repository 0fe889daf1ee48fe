//! The syntax tree, as written: no types, no name resolution.
//!
//! Nodes live in flat arenas indexed by typed ids (`ExprId`, `StmtId`, `InitId`), so a deeply
//! nested program is a few `Vec`s (no recursive `Box` drops, no pointer chasing). The parser
//! guarantees every tree is at most `MAX_DEPTH` deep, which bounds the recursion of every later
//! walk (sema, lowering). This file also defines the small `entity!` id macro and `Arena` table
//! the frontend uses until/besides the IR's own.

use super::diag::Span;
use super::lexer::Sym;
use std::marker::PhantomData;

/// Maximum nesting of expressions, statements and initialiser lists. Deeper input gets a
/// "nesting too deep" diagnostic instead of a stack overflow. Every recursive walk of the tree
/// recurses at most about this many times (times a small constant).
pub const MAX_DEPTH: u32 = 100_000;

/// Declares a typed index: `struct Name(NonZeroU32)` holding index + 1, printing as `prefixN`.
#[macro_export]
macro_rules! frontend_entity {
    ($(#[$m:meta])* $name:ident, $prefix:expr) => {
        $(#[$m])*
        #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(std::num::NonZeroU32);
        impl $name {
            pub fn new(index: usize) -> Self {
                $name(std::num::NonZeroU32::new(index as u32 + 1).expect("id overflow"))
            }
            pub fn index(self) -> usize {
                self.0.get() as usize - 1
            }
        }
        impl std::fmt::Debug for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{}{}", $prefix, self.index())
            }
        }
        impl $crate::frontend::ast::EntityId for $name {
            fn new(index: usize) -> Self {
                $name::new(index)
            }
            fn index(self) -> usize {
                $name::index(self)
            }
        }
    };
}
pub use frontend_entity as entity;

/// Implemented by `entity!` ids, so `Arena` can convert.
pub trait EntityId: Copy {
    fn new(index: usize) -> Self;
    fn index(self) -> usize;
}

/// A `Vec` indexed only by `K`; `push` returns the new id.
#[derive(Clone, Debug)]
pub struct Arena<K, V> {
    items: Vec<V>,
    _k: PhantomData<K>,
}

impl<K, V> Default for Arena<K, V> {
    fn default() -> Self {
        Arena { items: Vec::new(), _k: PhantomData }
    }
}

impl<K: EntityId, V> Arena<K, V> {
    pub fn push(&mut self, v: V) -> K {
        let k = K::new(self.items.len());
        self.items.push(v);
        k
    }
    pub fn len(&self) -> usize {
        self.items.len()
    }
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
    pub fn iter(&self) -> impl Iterator<Item = (K, &V)> {
        self.items.iter().enumerate().map(|(i, v)| (K::new(i), v))
    }
    pub fn keys(&self) -> impl Iterator<Item = K> {
        (0..self.items.len()).map(K::new)
    }
}

impl<K: EntityId, V> std::ops::Index<K> for Arena<K, V> {
    type Output = V;
    fn index(&self, k: K) -> &V {
        &self.items[k.index()]
    }
}
impl<K: EntityId, V> std::ops::IndexMut<K> for Arena<K, V> {
    fn index_mut(&mut self, k: K) -> &mut V {
        &mut self.items[k.index()]
    }
}

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
        matches!(self, BinOp::Lt | BinOp::Gt | BinOp::Le | BinOp::Ge | BinOp::Eq | BinOp::Ne)
    }
}

#[derive(Clone, Debug)]
pub enum ExprKind {
    Int(i32),
    Float(f32),
    /// Only legal as the format argument of `putf`.
    Str(Vec<u8>),
    /// `name` or `name[i][j]...`
    LVal { name: Sym, name_span: Span, indices: Vec<ExprId> },
    Call { name: Sym, name_span: Span, args: Vec<ExprId> },
    Unary(UnOp, ExprId),
    Binary(BinOp, ExprId, ExprId),
}

#[derive(Clone, Debug)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
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

#[derive(Clone, Debug)]
pub enum StmtKind {
    Decl(Decl),
    /// `lval = value;` (`target` is an `ExprKind::LVal`).
    Assign { target: ExprId, value: ExprId },
    /// `expr;` or the empty statement `;`.
    Expr(Option<ExprId>),
    Block(Vec<StmtId>),
    If { cond: ExprId, then: StmtId, els: Option<StmtId> },
    While { cond: ExprId, body: StmtId },
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
}

#[derive(Clone, Debug)]
pub enum Item {
    Decl(Decl),
    Func(FuncDef),
}

/// A parsed compilation unit.
#[derive(Default, Debug)]
pub struct Ast {
    pub exprs: Arena<ExprId, Expr>,
    pub stmts: Arena<StmtId, Stmt>,
    pub inits: Arena<InitId, Init>,
    pub items: Vec<Item>,
}
