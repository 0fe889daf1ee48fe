//! The checked program: what semantic analysis hands to lowering.
//!
//! Compared with the `Ast`, everything here is resolved and explicit:
//! * every name use is a `VarId` or `FuncId` (shadowing is gone);
//! * every expression has a `Ty`; operands of an arithmetic node or comparison already have the
//!   operation's type (implicit int<->float conversions are `Cast` nodes);
//! * conditions (`if`, `while`, operands of `&&`, `||`, `!`) are `int`: a float `x` used as a
//!   condition became `x != 0.0`;
//! * constant expressions are folded to `Int`/`Float` literals (int arithmetic wraps, float
//!   arithmetic is f32), including reads of `const` arrays with constant indices;
//! * array dimensions are numbers; initialisers are flattened to row-major `(index, value)`
//!   lists, values already converted to the element type;
//! * `starttime()`/`stoptime()` are calls of `_sysy_starttime(line)`/`_sysy_stoptime(line)`.
//!
//! Trees are as deep as the source (at most `ast::MAX_DEPTH`), so walks may recurse.

use super::ast::Arena;
use super::diag::Span;
use crate::entity;
use std::sync::Arc;

entity!(/// A variable: global, local or parameter.
    VarId, "var");
entity!(/// A function: defined in the program or an external runtime function.
    FuncId, "fn");
entity!(/// A checked expression.
    ExprId, "x");
entity!(/// A checked statement.
    StmtId, "st");

/// Element type of scalars and arrays.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scalar {
    Int,
    Float,
}

impl Scalar {
    pub fn name(self) -> &'static str {
        match self {
            Scalar::Int => "int",
            Scalar::Float => "float",
        }
    }
}

/// Type of an expression or parameter.
#[derive(Clone, Debug, PartialEq)]
pub enum Ty {
    Void,
    Int,
    Float,
    /// The address of the first element of an array whose elements have shape `dims` (empty:
    /// scalars). `int a[4][5]` used as an argument is `Ptr { Int, [5] }`, `a[i]` is `Ptr { Int, [] }`,
    /// and so is the parameter `int b[]`.
    Ptr {
        elem: Scalar,
        dims: Vec<u32>,
    },
    /// The type of an expression that already produced a diagnostic; accepted everywhere.
    Error,
}

impl Ty {
    pub fn scalar(s: Scalar) -> Ty {
        match s {
            Scalar::Int => Ty::Int,
            Scalar::Float => Ty::Float,
        }
    }
    pub fn as_scalar(&self) -> Option<Scalar> {
        match self {
            Ty::Int => Some(Scalar::Int),
            Ty::Float => Some(Scalar::Float),
            _ => None,
        }
    }
    /// C-like spelling for messages: `int`, `float[]`, `int[][5]`.
    pub fn describe(&self) -> String {
        match self {
            Ty::Void => "void".into(),
            Ty::Int => "int".into(),
            Ty::Float => "float".into(),
            Ty::Error => "<error>".into(),
            Ty::Ptr { elem, dims } => {
                let mut s = format!("{}[]", elem.name());
                for d in dims {
                    s += &format!("[{d}]");
                }
                s
            }
        }
    }
}

/// A compile-time constant.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Const {
    Int(i32),
    Float(f32),
}

impl Const {
    pub fn is_zero(self) -> bool {
        match self {
            Const::Int(v) => v == 0,
            // `-0.0` is zero too, and its bits are not all zero: keep it explicit.
            Const::Float(v) => v.to_bits() == 0,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VarKind {
    Global,
    Local,
    /// The n-th parameter of its function.
    Param(u32),
}

/// Initial value of a variable.
#[derive(Clone, Debug, Default)]
pub enum VarInit {
    /// No initialiser: globals are zero, locals undefined (lowering reads them as 0).
    #[default]
    None,
    /// Scalar local with a (possibly non-constant) initialiser.
    Expr(ExprId),
    /// Local array: flattened row-major `(element index, value)`, increasing indices; all other
    /// elements are zero.
    Elems(Box<[(u32, ExprId)]>),
    /// Constant value (globals, `const` variables): sparse `(element index, value)` pairs in
    /// increasing index order, other elements zero. A scalar has at most the pair at index 0.
    Const(Box<[(u32, Const)]>),
}

/// A variable. A program may have a million (one per local declared), so the row is kept
/// small: the name is the interner's (shared, not copied), the lists are boxed slices.
#[derive(Clone, Debug)]
pub struct Var {
    pub name: Arc<str>,
    pub span: Span,
    pub elem: Scalar,
    /// Array dimensions (empty for scalars). For an array parameter, `dims[0]` is 0 (omitted).
    pub dims: Box<[u32]>,
    pub kind: VarKind,
    pub is_const: bool,
    pub init: VarInit,
    /// Read somewhere (as a value, an element or an array argument), before constant folding.
    pub read: bool,
}

impl Var {
    pub fn is_array(&self) -> bool {
        !self.dims.is_empty()
    }
    /// An array parameter: the variable holds a pointer.
    pub fn is_array_param(&self) -> bool {
        self.is_array() && matches!(self.kind, VarKind::Param(_))
    }
    /// Number of scalar elements (not meaningful for array parameters).
    pub fn num_elems(&self) -> u64 {
        self.dims.iter().map(|&d| d as u64).product()
    }
    /// Constant value of element `index` of a constant variable.
    pub fn const_elem(&self, index: u32) -> Option<Const> {
        let VarInit::Const(vals) = &self.init else {
            return None;
        };
        match vals.binary_search_by_key(&index, |&(i, _)| i) {
            Ok(k) => Some(vals[k].1),
            Err(_) => Some(match self.elem {
                Scalar::Int => Const::Int(0),
                Scalar::Float => Const::Float(0.0),
            }),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArithOp {
    Add,
    Sub,
    Mul,
    Div,
    /// Integers only.
    Rem,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpOp {
    Lt,
    Gt,
    Le,
    Ge,
    Eq,
    Ne,
}

/// The type of an expression: a `Ty` without the dimensions of a pointer, which the
/// expression itself implies (`Program::expr_ty`), so an expression row stays small.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExprTy {
    Void,
    Int,
    Float,
    /// The address of an array (`Addr`) or a string (`Str`).
    Ptr(Scalar),
    Error,
}

impl ExprTy {
    pub fn scalar(s: Scalar) -> ExprTy {
        match s {
            Scalar::Int => ExprTy::Int,
            Scalar::Float => ExprTy::Float,
        }
    }
}

impl From<&Ty> for ExprTy {
    fn from(ty: &Ty) -> ExprTy {
        match ty {
            Ty::Void => ExprTy::Void,
            Ty::Int => ExprTy::Int,
            Ty::Float => ExprTy::Float,
            Ty::Ptr { elem, .. } => ExprTy::Ptr(*elem),
            Ty::Error => ExprTy::Error,
        }
    }
}

/// The operands of an `Elem`, `Addr` or `Call`: a range of `Program::lists`, read with
/// `Program::list`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExprList {
    start: u32,
    len: u32,
}

impl ExprList {
    pub fn len(self) -> usize {
        self.len as usize
    }
    pub fn is_empty(self) -> bool {
        self.len == 0
    }
}

/// Index of a string literal in `Program::strings` (one per literal written).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StrId(pub u32);

/// An expression. Every variant holds ids and small values only (16 bytes): lists and strings
/// live in tables of the `Program`.
#[derive(Clone, Copy, Debug)]
pub enum ExprKind {
    Int(i32),
    Float(f32),
    /// The format of `putf` (its first argument only).
    Str(StrId),
    /// Read of a scalar variable.
    Var(VarId),
    /// Read of an array element; `indices.len() == dims.len()`, all `int`.
    Elem {
        var: VarId,
        indices: ExprList,
    },
    /// Address of a sub-array (fewer indices than dims, possibly none); type `Ptr`.
    /// Only appears as a call argument.
    Addr {
        var: VarId,
        indices: ExprList,
    },
    /// `-x`; type int or float.
    Neg(ExprId),
    /// `!x` for an int `x`: 1 if x == 0 else 0.
    Not(ExprId),
    /// Both operands have the node's type (int or float).
    Arith {
        op: ArithOp,
        lhs: ExprId,
        rhs: ExprId,
    },
    /// Both operands have type `operand`; the result is int 0/1.
    Cmp {
        op: CmpOp,
        operand: Scalar,
        lhs: ExprId,
        rhs: ExprId,
    },
    /// Short-circuit; int operands (truth = non-zero), int 0/1 result.
    And(ExprId, ExprId),
    Or(ExprId, ExprId),
    /// Arguments already converted to the parameter types (array arguments are `Addr`).
    /// Variadic `putf` arguments after the format keep their own type (int or float).
    Call {
        func: FuncId,
        args: ExprList,
    },
    IntToFloat(ExprId),
    /// Truncates toward zero.
    FloatToInt(ExprId),
}

#[derive(Clone, Copy, Debug)]
pub struct Expr {
    pub kind: ExprKind,
    pub ty: ExprTy,
    pub span: Span,
}

/// The statements of a block: a range of `Body::blocks`, read with `Body::block`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StmtList {
    start: u32,
    len: u32,
}

/// A statement. Every variant holds ids and small values only (20 bytes): the statements of a
/// block and the indices of an assignment live in tables of the `Body`.
#[derive(Clone, Copy, Debug)]
pub enum StmtKind {
    /// A local variable comes into existence; lowering evaluates `vars[v].init` here.
    Decl(VarId),
    /// `var[indices] = value`; `indices` (in `lists`) is empty for scalars, else one per
    /// dimension. `value` has the element type.
    Assign {
        var: VarId,
        indices: ExprList,
        value: ExprId,
    },
    Expr(ExprId),
    Block(StmtList),
    /// `cond` is int.
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
    /// The value has the function's return type.
    Return(Option<ExprId>),
}

#[derive(Clone, Copy, Debug)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct Func {
    pub name: String,
    pub span: Span,
    /// `None` is `void`.
    pub ret: Option<Scalar>,
    pub param_tys: Vec<Ty>,
    /// Parameter variables (empty for external functions).
    pub params: Vec<VarId>,
    /// The body's block (in `Program::body(id)`); `None` for external (runtime) functions.
    pub body: Option<StmtId>,
    /// Takes extra int/float arguments after `param_tys` (`putf`).
    pub variadic: bool,
    /// Called (or defined) somewhere; unused externals need no declaration.
    pub used: bool,
    /// The deepest nesting in the body (see `ast::FuncDef::nesting`); 0 for externals.
    pub nesting: u32,
}

impl Func {
    pub fn is_external(&self) -> bool {
        self.body.is_none()
    }
}

/// Statements, expressions and operand lists: those of one function body, or of all (see
/// `Bodies`).
#[derive(Debug, Default)]
pub struct Body {
    pub exprs: Arena<ExprId, Expr>,
    pub stmts: Arena<StmtId, Stmt>,
    /// The operand lists of expressions and the indices of assignments (`ExprList`), one
    /// after another.
    pub lists: Vec<ExprId>,
    /// The statements of blocks (`StmtList`), one after another.
    pub blocks: Vec<StmtId>,
}

impl Body {
    /// The expressions of `l`.
    pub fn list(&self, l: ExprList) -> &[ExprId] {
        &self.lists[l.start as usize..(l.start + l.len) as usize]
    }
    /// The statements of `l`.
    pub fn block(&self, l: StmtList) -> &[StmtId] {
        &self.blocks[l.start as usize..(l.start + l.len) as usize]
    }
}

/// Where the function bodies' rows live.
#[derive(Debug)]
pub enum Bodies {
    /// All bodies in one set of tables: a few large allocations.
    Shared(Body),
    /// A set of tables per function, `FuncId` index (`None` for external functions). Ids are
    /// local to a body, so each can be freed on its own (lowering drops each once its function
    /// is built).
    Separate(Vec<Option<Body>>),
}

impl Default for Bodies {
    fn default() -> Self {
        Bodies::Shared(Body::default())
    }
}

impl Bodies {
    /// Every set of tables, in the order of the functions.
    pub fn iter(&self) -> impl Iterator<Item = &Body> {
        let (shared, separate) = match self {
            Bodies::Shared(b) => (Some(b), &[][..]),
            Bodies::Separate(v) => (None, &v[..]),
        };
        shared.into_iter().chain(separate.iter().flatten())
    }
}

/// The output of semantic analysis.
#[derive(Debug, Default)]
pub struct Program {
    pub funcs: Arena<FuncId, Func>,
    pub vars: Arena<VarId, Var>,
    /// The function bodies' statements and expressions.
    pub bodies: Bodies,
    /// Expressions and statements being checked (sema moves them to `bodies`): with
    /// `Bodies::Separate`, a function's while sema checks its body, else those of global
    /// initialisers (folded; nothing reads them after sema).
    pub exprs: Arena<ExprId, Expr>,
    pub stmts: Arena<StmtId, Stmt>,
    /// Global variables in definition order (constants included).
    pub globals: Vec<VarId>,
    /// The `main` function (always set when sema succeeds).
    pub main: Option<FuncId>,
    /// The operand lists of `exprs` and indices of `stmts` (`ExprList`), one after another.
    pub lists: Vec<ExprId>,
    /// The statements of the blocks of `stmts` (`StmtList`), one after another.
    pub blocks: Vec<StmtId>,
    /// The bytes of each string literal (`StrId`).
    pub strings: Vec<Vec<u8>>,
}

impl Program {
    /// The body of function `f` (`None` for external functions).
    pub fn body(&self, f: FuncId) -> Option<&Body> {
        self.funcs[f].body?;
        match &self.bodies {
            Bodies::Shared(b) => Some(b),
            Bodies::Separate(v) => v.get(f.index())?.as_ref(),
        }
    }

    /// The expressions of `l` (in `exprs`).
    pub fn list(&self, l: ExprList) -> &[ExprId] {
        &self.lists[l.start as usize..(l.start + l.len) as usize]
    }

    /// Stores `items` as a new list.
    pub fn push_list(&mut self, items: &[ExprId]) -> ExprList {
        let start = self.lists.len() as u32;
        self.lists.extend_from_slice(items);
        ExprList {
            start,
            len: items.len() as u32,
        }
    }

    /// Stores `stmts` as the statements of a new block.
    pub fn push_block(&mut self, stmts: &[StmtId]) -> StmtList {
        let start = self.blocks.len() as u32;
        self.blocks.extend_from_slice(stmts);
        StmtList {
            start,
            len: stmts.len() as u32,
        }
    }

    /// The dimensions of the elements `x` points to, if it is a pointer (`expr_ty`): those
    /// of the array it addresses after the indexed ones.
    pub fn ptr_dims(&self, x: ExprId) -> &[u32] {
        match self.exprs[x].kind {
            ExprKind::Addr { var, indices } => &self.vars[var].dims[indices.len() + 1..],
            _ => &[],
        }
    }

    /// The full type of expression `x`: a pointer's dimensions come from the array it
    /// addresses.
    pub fn expr_ty(&self, x: ExprId) -> Ty {
        let e = &self.exprs[x];
        match e.ty {
            ExprTy::Void => Ty::Void,
            ExprTy::Int => Ty::Int,
            ExprTy::Float => Ty::Float,
            ExprTy::Error => Ty::Error,
            ExprTy::Ptr(elem) => Ty::Ptr {
                elem,
                dims: self.ptr_dims(x).to_vec(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expression_rows_stay_small() {
        assert_eq!(std::mem::size_of::<ExprKind>(), 16);
        assert_eq!(std::mem::size_of::<Expr>(), 28);
        assert_eq!(std::mem::size_of::<Stmt>(), 28);
        assert_eq!(std::mem::size_of::<Var>(), 80);
    }
}
