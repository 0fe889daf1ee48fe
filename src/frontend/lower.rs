//! Lowering: `hir::Program` -> `ir::Module`.
//!
//! Module level (`lower_program`): every used runtime function and every program function is
//! declared first (runtime functions keep their source names; `starttime`/`stoptime` are
//! `_sysy_starttime/_sysy_stoptime(i32 line)`), then globals are created: program globals (const
//! scalars are folded away and get none), one read-only global per global or local `const` array
//! that is indexed with a non-constant somewhere (the constant-indexed reads were folded), one
//! byte string per `putf` format, and `memset` is declared if some local array needs
//! zero-filling. Then each body is built: in parallel, or one at a time, each checked body freed
//! once its function is built (`Schedule`).
//!
//! Function level (`FnLower`): scalars (locals and parameters) live only in SSA values, built by
//! `ssa::SsaBuilder` (Braun et al.); arrays are memory: local arrays are `alloca`s at the top of
//! the entry block, globals are `gaddr`, array parameters are pointers. Element addresses are
//! `gep`/`offset` chains (constant indices fold into `offset`). Conditions lower to branches
//! (`cond_branch`: `&&`, `||`, `!` become control flow); in value context a condition becomes an
//! i32 0/1 through a join block parameter. Code after `return`/`break`/`continue` is not lowered
//! (`cur` is `None` until the next reachable join), and blocks without predecessors are never
//! placed, so every placed block is reachable and ends in a terminator; falling off the end
//! returns 0 (or nothing).
//!
//! Recursion follows the HIR (depth bounded by `ast::MAX_DEPTH`).

use super::diag::Span;
use super::hir::{
    self, ArithOp, Bodies, Body, CmpOp, Const, ExprKind, ExprTy, Program, Scalar, StmtKind, Ty,
    VarInit, VarKind,
};
use super::ssa::{Edge, SsaBuilder};
use crate::ir::{
    mk, Block, Builder, CmpCond, FuncId, Function, GlobalData, GlobalId, GlobalInit, Module,
    Opcode, Signature, Type, Value,
};
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use std::sync::Mutex;

/// Local arrays up to this many elements are zero-filled by stores, larger ones by `memset`.
const MAX_STORE_FILL: u64 = 16;

fn scalar_type(s: Scalar) -> Type {
    match s {
        Scalar::Int => Type::I32,
        Scalar::Float => Type::F32,
    }
}

fn ty_type(t: &Ty) -> Type {
    match t {
        Ty::Int => Type::I32,
        Ty::Float => Type::F32,
        Ty::Ptr { .. } => Type::Ptr,
        Ty::Void | Ty::Error => Type::Void,
    }
}

fn expr_type(t: ExprTy) -> Type {
    match t {
        ExprTy::Int => Type::I32,
        ExprTy::Float => Type::F32,
        ExprTy::Ptr(_) => Type::Ptr,
        ExprTy::Void | ExprTy::Error => Type::Void,
    }
}

fn cmp_cond(op: CmpOp) -> CmpCond {
    match op {
        CmpOp::Lt => CmpCond::Lt,
        CmpOp::Gt => CmpCond::Gt,
        CmpOp::Le => CmpCond::Le,
        CmpOp::Ge => CmpCond::Ge,
        CmpOp::Eq => CmpCond::Eq,
        CmpOp::Ne => CmpCond::Ne,
    }
}

/// Module-wide facts the function lowering reads.
struct ModInfo {
    funcs: FxHashMap<hir::FuncId, FuncId>,
    globals: FxHashMap<hir::VarId, GlobalId>,
    /// The global of each string literal (`StrId` index).
    strings: Vec<Option<GlobalId>>,
    memset: Option<FuncId>,
}

/// Lowers a checked program to an IR module, taking the function bodies out of `p` (they are
/// freed by the time it returns). `falls_off` receives the functions whose end is reachable in
/// the CFG (they return 0 or nothing there) with the span of their closing `}`.
pub fn lower_program(
    p: &mut Program,
    schedule: Schedule,
    falls_off: &mut Vec<(hir::FuncId, Span)>,
) -> Module {
    let bodies = std::mem::take(&mut p.bodies);
    let p: &Program = p;
    let (mut m, info, source_of) = declare(p, &bodies);
    let Bodies::Separate(mut separate) = bodies else {
        panic!("lowering needs a set of tables per body")
    };
    let info = &info;
    let source_of = &source_of[..];
    let lower_one = |fid: FuncId, f: &mut Function, body: &Body| {
        let source = source_of[fid.index()].expect("a defined function");
        let falls_off = build(p, info, source, f, body);
        // The body waits for the other functions and the passes without the rows of the block
        // parameters SSA construction found trivial, and with its tables no larger than their
        // contents.
        f.compact();
        f.shrink_to_fit();
        falls_off
    };
    // Per function of the module, its checked body, freed as soon as the function is built.
    let mut owned: Vec<Option<Body>> = (0..m.funcs.len())
        .map(|i| {
            let (id, _) = source_of[i]?;
            Some(
                separate[id.index()]
                    .take()
                    .expect("a defined function has a body"),
            )
        })
        .collect();
    drop(separate);
    // Per function, where its end is reachable: the parallel schedule builds all but the deep
    // bodies on the workers, then the calling thread builds what is left in order.
    let mut falls: Vec<Option<(hir::FuncId, Span)>> = match schedule {
        Schedule::Parallel => {
            // Deeply nested bodies recurse deeper than a worker's stack allows: they stay for
            // the calling thread (whose stack is sized for the deepest program the parser
            // accepts).
            let deep = |fid: FuncId| {
                source_of[fid.index()].is_some_and(|(id, _)| p.funcs[id].nesting > PARALLEL_NESTING)
            };
            m.funcs
                .par_iter_mut()
                .zip(owned.par_iter_mut())
                .map(|((fid, f), own)| {
                    let body = own.take_if(|_| !deep(fid))?;
                    lower_one(fid, f, &body)
                })
                .collect()
        }
        Schedule::Sequential => vec![None; m.funcs.len()],
    };
    for ((fid, f), own) in m.funcs.iter_mut().zip(&mut owned) {
        if let Some(body) = own.take() {
            falls[fid.index()] = lower_one(fid, f, &body);
        }
    }
    falls_off.extend(falls.into_iter().flatten());
    m
}

/// The checked bodies of a module lowered on demand (`lower_lazily`), one function at a time
/// wherever the caller builds it; each checked body is freed once its function is built. A
/// function built here goes to code generation at once: its tables are not compacted.
pub struct Pending {
    p: Program,
    info: ModInfo,
    source_of: Vec<Option<(hir::FuncId, hir::StmtId)>>,
    /// Per `hir::FuncId` index: the checked body, until its function is built.
    bodies: Vec<Mutex<Option<Body>>>,
    /// The functions built so far whose end is reachable, with the span of their closing `}`.
    falls_off: Mutex<Vec<(FuncId, hir::FuncId, Span)>>,
}

impl Pending {
    /// Builds the body of `f` (a function of the module `lower_lazily` returned) unless it is
    /// built already (or not defined), freeing its checked body.
    pub fn build(&self, f: &mut Function) {
        let Some(source) = self.source_of[f.id.index()] else {
            return;
        };
        let slot = &self.bodies[source.0.index()];
        let Some(body) = slot.lock().unwrap_or_else(|e| e.into_inner()).take() else {
            return;
        };
        let id = f.id;
        if let Some((func, end)) = build(&self.p, &self.info, source, f, &body) {
            self.falls_off
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push((id, func, end));
        }
    }

    /// The checked program (without bodies) and the functions whose end is reachable with the
    /// span of their closing `}`, in `FuncId` order, once every function is built.
    pub fn finish(self) -> (Program, Vec<(hir::FuncId, Span)>) {
        let mut falls = self
            .falls_off
            .into_inner()
            .unwrap_or_else(|e| e.into_inner());
        falls.sort_by_key(|&(fid, _, _)| fid.index());
        let falls = falls.into_iter().map(|(_, f, end)| (f, end)).collect();
        (self.p, falls)
    }
}

/// Lowers the module level of a checked program whose bodies have tables of their own
/// (`Bodies::Separate`): the module comes back with the functions nested deeper than
/// `PARALLEL_NESTING` built (on the calling thread) and the others empty, to be built by
/// `Pending::build` (on any thread) before anything reads them.
pub fn lower_lazily(mut p: Program) -> (Module, Pending) {
    let bodies = std::mem::take(&mut p.bodies);
    let (mut m, info, source_of) = declare(&p, &bodies);
    let Bodies::Separate(separate) = bodies else {
        panic!("lazy lowering needs a set of tables per body")
    };
    let pending = Pending {
        p,
        info,
        source_of,
        bodies: separate.into_iter().map(Mutex::new).collect(),
        falls_off: Mutex::new(Vec::new()),
    };
    for (fid, f) in m.funcs.iter_mut() {
        let deep = pending.source_of[fid.index()]
            .is_some_and(|(id, _)| pending.p.funcs[id].nesting > PARALLEL_NESTING);
        if deep {
            pending.build(f);
        }
    }
    (m, pending)
}

/// The module without bodies: every used runtime function and program function declared, the
/// globals created; with the lowering's module-wide facts and, per `FuncId` index, the checked
/// function and root statement of each defined function.
fn declare(
    p: &Program,
    bodies: &Bodies,
) -> (Module, ModInfo, Vec<Option<(hir::FuncId, hir::StmtId)>>) {
    let mut m = Module::new();
    let mut info = ModInfo {
        funcs: FxHashMap::default(),
        globals: FxHashMap::default(),
        strings: vec![None; p.strings.len()],
        memset: None,
    };
    for (id, func) in p.funcs.iter() {
        if func.is_external() && !func.used {
            continue;
        }
        // `putf`'s format (a string literal) is its one fixed parameter.
        let params = if func.variadic {
            vec![Type::Ptr]
        } else {
            func.param_tys.iter().map(ty_type).collect()
        };
        let ret = func.ret.map_or(Type::Void, scalar_type);
        let sig = Signature {
            params,
            ret,
            variadic: func.variadic,
        };
        let fid = m.declare_func(&func.name, sig, !func.is_external());
        info.funcs.insert(id, fid);
    }
    // Const arrays need memory only where some index was not constant (sema folded the rest).
    // String literals, in the order of the source (the bodies' order).
    let mut const_array_used = vec![false; p.vars.len()];
    let mut literals = Vec::new();
    for e in bodies.iter().flat_map(|b| b.exprs.values()) {
        match e.kind {
            ExprKind::Elem { var, .. } | ExprKind::Addr { var, .. } => {
                const_array_used[var.index()] = true;
            }
            ExprKind::Str(s) => literals.push(s),
            _ => {}
        }
    }
    // Globals: program globals and the used local const arrays, in definition order.
    for (v, var) in p.vars.iter() {
        let needs_global = match var.kind {
            _ if var.is_const => var.is_array() && const_array_used[v.index()],
            VarKind::Global => true,
            VarKind::Local | VarKind::Param(_) => false,
        };
        if !needs_global {
            continue;
        }
        let name = match var.kind {
            VarKind::Global => var.name.to_string(),
            _ => format!("{}.{}", var.name, v.index()),
        };
        let init = match &var.init {
            VarInit::Const(vals) if !vals.is_empty() => {
                let len = vals.last().map_or(0, |&(i, _)| i as usize + 1);
                let mut words = vec![0u32; len];
                for &(i, c) in vals {
                    words[i as usize] = match c {
                        Const::Int(x) => x as u32,
                        Const::Float(x) => x.to_bits(),
                    };
                }
                GlobalInit::Words(words)
            }
            _ => GlobalInit::Zero,
        };
        let g = m.add_global(GlobalData {
            name,
            size: var.num_elems().max(1) * 4,
            elem: scalar_type(var.elem),
            init,
            is_const: var.is_const,
        });
        info.globals.insert(v, g);
    }
    for (nstr, s) in literals.into_iter().enumerate() {
        let bytes = &p.strings[s.0 as usize];
        let g = m.add_global(GlobalData {
            name: format!("str.{nstr}"),
            size: bytes.len() as u64 + 1,
            elem: Type::I1,
            init: GlobalInit::Bytes(bytes.clone()),
            is_const: true,
        });
        info.strings[s.0 as usize] = Some(g);
    }
    let needs_memset = p.vars.values().any(|v| {
        v.kind == VarKind::Local
            && !v.is_const
            && v.num_elems() > MAX_STORE_FILL
            && matches!(&v.init, VarInit::Elems(e) if (e.len() as u64) < v.num_elems())
    });
    if needs_memset {
        let sig = Signature {
            params: vec![Type::Ptr, Type::I32, Type::I64],
            ret: Type::Ptr,
            variadic: false,
        };
        info.memset = Some(m.declare_func("memset", sig, false));
    }
    let mut source_of: Vec<Option<(hir::FuncId, hir::StmtId)>> = vec![None; m.funcs.len()];
    for (id, func) in p.funcs.iter() {
        if let Some(body) = func.body {
            source_of[info.funcs[&id].index()] = Some((id, body));
        }
    }
    (m, info, source_of)
}

/// Builds the body of `f` from the checked body `body` of `source` (function, root statement);
/// the function and the span of its closing `}` if control can reach its end. The tables keep
/// the rows of the block parameters SSA construction found trivial (`Function::compact` drops
/// them).
fn build(
    p: &Program,
    info: &ModInfo,
    source: (hir::FuncId, hir::StmtId),
    f: &mut Function,
    body: &Body,
) -> Option<(hir::FuncId, Span)> {
    let (id, root) = source;
    // The tables start as large as the last body this thread built: functions built one
    // after another are mostly of similar sizes, and the tables then grow without copying.
    let (insts, values, uses) = LAST_SIZES.get();
    f.reserve(
        insts.min(MAX_RESERVE),
        values.min(MAX_RESERVE),
        uses.min(MAX_RESERVE),
    );
    let falls_off = FnLower::run(p, body, info, f, &p.funcs[id], root);
    LAST_SIZES.set((f.num_insts(), f.num_values(), f.uses().value.len()));
    falls_off.then(|| (id, body.stmts[root].span.last()))
}

/// The most rows of each table reserved ahead of building a body (after a huge function, the
/// next ones take no more than this).
const MAX_RESERVE: usize = 1 << 16;

thread_local! {
    /// The numbers of instructions, values and operand slots of the last body this thread
    /// built, before compaction.
    static LAST_SIZES: std::cell::Cell<(usize, usize, usize)> = const { std::cell::Cell::new((0, 0, 0)) };
}

/// How `lower_program` schedules the functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Schedule {
    /// In parallel on the thread pool (the deepest bodies on the calling thread): for a module
    /// the passes rework on the pool's threads. The allocator gives each thread an arena of its
    /// own and reuses memory freed by the thread that allocated it, so IR built where the passes
    /// run is rebuilt in place, while IR built elsewhere would stay beside its copies.
    Parallel,
    /// One function at a time on the calling thread, freeing each checked body once its function
    /// is built, so its memory is reused for the next functions' IR: the checked bodies and the
    /// whole module are never alive together. For a module that goes to code generation as
    /// lowered.
    Sequential,
}

/// Functions nested deeper than this are lowered on the calling thread (whose stack is sized
/// for the deepest program the parser accepts), the others on the thread pool's workers.
const PARALLEL_NESTING: u32 = 200;

struct FnLower<'a> {
    p: &'a Program,
    /// The statements and expressions of the function being built.
    body: &'a Body,
    info: &'a ModInfo,
    f: &'a mut Function,
    ssa: SsaBuilder,
    entry: Block,
    /// Where code goes; `None` in unreachable code.
    cur: Option<Block>,
    /// Array variables' base addresses (allocas and array parameters).
    bases: FxHashMap<hir::VarId, Value>,
    /// (continue target, break target) of the enclosing loops.
    loops: Vec<(Block, Block)>,
    /// Per `while` statement: the positions of its body's assignments among those the
    /// function's scalar assignments (see `collect_writes`).
    loop_writes: FxHashMap<hir::StmtId, (u32, u32)>,
}

/// Appends to `writes` the variables statement `s` assigns (declarations included), each with
/// its position (its index in `writes`), and records per `while` statement the range of
/// positions of its body in `loops`.
fn collect_writes(
    bd: &Body,
    s: hir::StmtId,
    writes: &mut Vec<(u32, u32)>,
    loops: &mut FxHashMap<hir::StmtId, (u32, u32)>,
) {
    match &bd.stmts[s].kind {
        StmtKind::Decl(v) => writes.push((FnLower::var_key(*v), writes.len() as u32)),
        StmtKind::Assign { var, indices, .. } => {
            if indices.is_empty() {
                writes.push((FnLower::var_key(*var), writes.len() as u32));
            }
        }
        StmtKind::Block(list) => {
            for &s in bd.block(*list) {
                collect_writes(bd, s, writes, loops);
            }
        }
        StmtKind::If { then, els, .. } => {
            collect_writes(bd, *then, writes, loops);
            if let Some(e) = els {
                collect_writes(bd, *e, writes, loops);
            }
        }
        StmtKind::While { body, .. } => {
            let lo = writes.len() as u32;
            collect_writes(bd, *body, writes, loops);
            loops.insert(s, (lo, writes.len() as u32));
        }
        StmtKind::Expr(_) | StmtKind::Break | StmtKind::Continue | StmtKind::Return(_) => {}
    }
}

impl<'a> FnLower<'a> {
    /// Builds `f`; true if control can reach the end of the body.
    fn run(
        p: &'a Program,
        body: &'a Body,
        info: &'a ModInfo,
        f: &'a mut Function,
        func: &hir::Func,
        root: hir::StmtId,
    ) -> bool {
        let entry = f.make_block();
        f.append_block(entry);
        let mut ssa = SsaBuilder::new(entry);
        let mut loop_writes = FxHashMap::default();
        let mut writes = Vec::new();
        collect_writes(body, root, &mut writes, &mut loop_writes);
        ssa.set_shortcut(true);
        ssa.set_writes(writes);
        let ret = func.ret.map_or(Type::Void, scalar_type);
        let mut l = FnLower {
            p,
            body,
            info,
            f,
            ssa,
            entry,
            cur: Some(entry),
            bases: FxHashMap::default(),
            loops: Vec::new(),
            loop_writes,
        };
        for (&v, ty) in func.params.iter().zip(&func.param_tys) {
            let val = l.f.append_block_param(entry, ty_type(ty));
            if matches!(ty, Ty::Ptr { .. }) {
                l.bases.insert(v, val);
            } else {
                l.ssa.declare(v.index() as u32, ty_type(ty));
                l.ssa.write(v.index() as u32, entry, val);
            }
        }
        l.stmt(root);
        let falls_off = l.cur.is_some();
        if falls_off {
            let v = match ret {
                Type::Void => None,
                t => Some(l.ssa.zero(l.f, t)),
            };
            l.builder().ret(v);
        }
        l.ssa.finish(l.f);
        falls_off
    }

    fn builder(&mut self) -> Builder<'_> {
        let b = self.cur.expect("lowering in unreachable code");
        Builder::at_end(self.f, b)
    }

    fn new_block(&mut self) -> Block {
        self.f.make_block()
    }

    /// Continues in `b` if it is reachable (has predecessors); seals it.
    fn enter(&mut self, b: Block) {
        self.ssa.seal(self.f, b);
        if self.ssa.preds(b).is_empty() {
            self.cur = None;
        } else {
            self.f.append_block(b);
            self.cur = Some(b);
        }
    }

    fn jump(&mut self, to: Block, args: &[Value]) {
        let from = self.cur.expect("reachable");
        let inst = self.builder().jump(to, args);
        self.ssa.add_edge(
            to,
            Edge {
                from,
                inst,
                which: 0,
            },
        );
        self.cur = None;
    }

    fn brif(&mut self, c: Value, t: Block, e: Block) {
        let from = self.cur.expect("reachable");
        let inst = self.builder().brif(c, t, &[], e, &[]);
        self.ssa.add_edge(
            t,
            Edge {
                from,
                inst,
                which: 0,
            },
        );
        self.ssa.add_edge(
            e,
            Edge {
                from,
                inst,
                which: 1,
            },
        );
        self.cur = None;
    }

    fn var_key(v: hir::VarId) -> u32 {
        v.index() as u32
    }

    // ------------------------------------------------------------------ statements

    fn stmt(&mut self, s: hir::StmtId) {
        if self.cur.is_none() {
            return;
        }
        let p = self.p;
        let bd = self.body;
        match &bd.stmts[s].kind {
            StmtKind::Decl(v) => self.decl(*v),
            StmtKind::Assign {
                var,
                indices,
                value,
            } => {
                let val = self.expr(*value);
                let info = &p.vars[*var];
                if info.is_array() {
                    let addr = self.address(*var, bd.list(*indices));
                    self.builder().store(val, addr);
                } else if info.kind == VarKind::Global {
                    let g = self.info.globals[var];
                    let mut b = self.builder();
                    let a = b.gaddr(g);
                    b.store(val, a);
                } else {
                    let b = self.cur.expect("reachable");
                    self.ssa.write(Self::var_key(*var), b, val);
                }
            }
            StmtKind::Expr(e) => match &bd.exprs[*e].kind {
                ExprKind::Call { func, args } => {
                    self.call(*func, bd.list(*args), bd.exprs[*e].ty);
                }
                _ => {
                    self.expr(*e);
                }
            },
            StmtKind::Block(list) => {
                for &s in bd.block(*list) {
                    if self.cur.is_none() {
                        break;
                    }
                    self.stmt(s);
                }
            }
            StmtKind::If { cond, then, els } => {
                let tb = self.new_block();
                let join = self.new_block();
                let eb = if els.is_some() {
                    self.new_block()
                } else {
                    join
                };
                self.cond_branch(*cond, tb, eb);
                self.enter(tb);
                self.stmt(*then);
                if self.cur.is_some() {
                    self.jump(join, &[]);
                }
                if let Some(e) = els {
                    self.enter(eb);
                    self.stmt(*e);
                    if self.cur.is_some() {
                        self.jump(join, &[]);
                    }
                }
                self.enter(join);
            }
            StmtKind::While { cond, body } => {
                // Rotated form: a guard tests the condition once before the loop, and the latch
                // tests it again at the bottom, so each iteration runs one conditional branch
                // and the body dominates the loop's exits (loop-invariant code in the body can
                // then be hoisted into the guarded preheader).
                //
                //   guard: brif cond, body, exit
                //   body:  ...; jump latch          (`continue` jumps to latch too)
                //   latch: brif cond, body, exit
                let bb = self.new_block();
                let latch = self.new_block();
                let exit = self.new_block();
                self.cond_branch(*cond, bb, exit);
                if self.ssa.preds(bb).is_empty() {
                    // The condition is false on entry: the body never runs.
                    self.ssa.seal(self.f, bb);
                    self.ssa.seal(self.f, latch);
                    self.enter(exit);
                    return;
                }
                // The body stays unsealed until the latch's back edge exists.
                if let Some(&(lo, hi)) = self.loop_writes.get(&s) {
                    self.ssa.loop_header(bb, lo, hi);
                }
                self.f.append_block(bb);
                self.cur = Some(bb);
                self.loops.push((latch, exit));
                self.stmt(*body);
                self.loops.pop();
                if self.cur.is_some() {
                    self.jump(latch, &[]);
                }
                self.enter(latch);
                self.cond_branch(*cond, bb, exit);
                self.ssa.seal(self.f, bb);
                self.enter(exit);
            }
            StmtKind::Break => {
                let (_, exit) = *self.loops.last().expect("sema checked");
                self.jump(exit, &[]);
            }
            StmtKind::Continue => {
                let (latch, _) = *self.loops.last().expect("sema checked");
                self.jump(latch, &[]);
            }
            StmtKind::Return(v) => {
                let val = v.map(|e| self.expr(e));
                self.builder().ret(val);
                self.cur = None;
            }
        }
    }

    fn decl(&mut self, v: hir::VarId) {
        let var = &self.p.vars[v];
        if var.is_const {
            // Scalars are folded into their uses; arrays live in a read-only global.
            return;
        }
        let key = Self::var_key(v);
        let ty = scalar_type(var.elem);
        if !var.is_array() {
            self.ssa.declare(key, ty);
            let val = match &var.init {
                VarInit::Expr(e) => self.expr(*e),
                // Reading an uninitialised local is undefined; 0 is as good as anything.
                _ => self.ssa.zero(self.f, ty),
            };
            let b = self.cur.expect("reachable");
            self.ssa.write(key, b, val);
            return;
        }
        let base = match self.bases.get(&v) {
            Some(&b) => b,
            None => {
                let size = var.num_elems() * 4;
                let align = if size >= 16 { 16 } else { 4 };
                let i = match self.f.layout().first_inst(self.entry) {
                    Some(first) => self
                        .f
                        .insert_new_before(first, mk::alloca(size, align), &[]),
                    None => self.f.append_new(self.entry, mk::alloca(size, align), &[]),
                };
                let a = self.f.res(i);
                self.bases.insert(v, a);
                a
            }
        };
        let VarInit::Elems(elems) = &var.init else {
            return;
        };
        let n = var.num_elems();
        let dense = elems.len() as u64 == n;
        if !dense && n > MAX_STORE_FILL {
            let memset = self.info.memset.expect("memset declared");
            let mut b = self.builder();
            let zero = b.iconst(0);
            let len = b.iconst_ty(Type::I64, (n * 4) as i64);
            b.call(memset, Type::Ptr, &[base, zero, len]);
        }
        let zero_val = match var.elem {
            Scalar::Int => Const::Int(0),
            Scalar::Float => Const::Float(0.0),
        };
        let mut next = 0u64;
        for &(idx, e) in elems {
            if !dense && n <= MAX_STORE_FILL {
                while next < idx as u64 {
                    let z = self.konst(zero_val);
                    self.store_at(base, next, z);
                    next += 1;
                }
            }
            // Literal zeros are already there after `memset`.
            let is_zero = matches!(&self.body.exprs[e].kind, ExprKind::Int(0))
                || matches!(&self.body.exprs[e].kind, ExprKind::Float(x) if x.to_bits() == 0);
            if dense || n <= MAX_STORE_FILL || !is_zero {
                let val = self.expr(e);
                self.store_at(base, idx as u64, val);
            }
            next = idx as u64 + 1;
        }
        if !dense && n <= MAX_STORE_FILL {
            while next < n {
                let z = self.konst(zero_val);
                self.store_at(base, next, z);
                next += 1;
            }
        }
    }

    fn store_at(&mut self, base: Value, elem: u64, val: Value) {
        let mut b = self.builder();
        let addr = if elem == 0 {
            base
        } else {
            b.offset(base, (elem * 4) as i64)
        };
        b.store(val, addr);
    }

    fn konst(&mut self, c: Const) -> Value {
        let mut b = self.builder();
        match c {
            Const::Int(x) => b.iconst(x),
            Const::Float(x) => b.fconst(x),
        }
    }

    // ------------------------------------------------------------------ addresses

    /// The base address of array variable `v`.
    fn base(&mut self, v: hir::VarId) -> Value {
        if let Some(&b) = self.bases.get(&v) {
            return b;
        }
        let g = self.info.globals[&v];
        self.builder().gaddr(g)
    }

    /// Address of `v[indices...]` (an element or a sub-array).
    fn address(&mut self, v: hir::VarId, indices: &[hir::ExprId]) -> Value {
        let dims = &self.p.vars[v].dims;
        let mut ptr = self.base(v);
        let mut pending: i64 = 0;
        for (k, &e) in indices.iter().enumerate() {
            let stride: i64 = dims[k + 1..].iter().map(|&d| d as i64).product::<i64>() * 4;
            match self.body.exprs[e].kind {
                ExprKind::Int(c) => pending += c as i64 * stride,
                _ => {
                    let i = self.expr(e);
                    let mut b = self.builder();
                    if pending != 0 {
                        ptr = b.offset(ptr, pending);
                        pending = 0;
                    }
                    ptr = b.gep(ptr, i, stride);
                }
            }
        }
        if pending != 0 {
            ptr = self.builder().offset(ptr, pending);
        }
        ptr
    }

    // ------------------------------------------------------------------ expressions

    /// Lowers an expression in value context.
    fn expr(&mut self, e: hir::ExprId) -> Value {
        let p = self.p;
        let bd = self.body;
        let x = &bd.exprs[e];
        match &x.kind {
            ExprKind::Int(v) => self.builder().iconst(*v),
            ExprKind::Float(v) => self.builder().fconst(*v),
            ExprKind::Str(s) => {
                let g = self.info.strings[s.0 as usize].expect("string literal has a global");
                self.builder().gaddr(g)
            }
            ExprKind::Var(v) => {
                let var = &p.vars[*v];
                if var.kind == VarKind::Global {
                    let g = self.info.globals[v];
                    let ty = scalar_type(var.elem);
                    let mut b = self.builder();
                    let a = b.gaddr(g);
                    b.load(ty, a)
                } else {
                    let b = self.cur.expect("reachable");
                    self.ssa.read(self.f, Self::var_key(*v), b)
                }
            }
            ExprKind::Elem { var, indices } => {
                let a = self.address(*var, bd.list(*indices));
                let ty = scalar_type(p.vars[*var].elem);
                self.builder().load(ty, a)
            }
            ExprKind::Addr { var, indices } => self.address(*var, bd.list(*indices)),
            ExprKind::Neg(a) => {
                let v = self.expr(*a);
                let mut b = self.builder();
                if x.ty == ExprTy::Float {
                    b.unary(Opcode::Fneg, Type::F32, v)
                } else {
                    let z = b.iconst(0);
                    b.binary(Opcode::Sub, z, v)
                }
            }
            ExprKind::Not(a) => {
                let v = self.expr(*a);
                let mut b = self.builder();
                let z = b.iconst(0);
                let c = b.icmp(CmpCond::Eq, v, z);
                b.unary(Opcode::Zext, Type::I32, c)
            }
            ExprKind::Arith { op, lhs, rhs } => {
                let l = self.expr(*lhs);
                let r = self.expr(*rhs);
                let float = x.ty == ExprTy::Float;
                let opc = match (op, float) {
                    (ArithOp::Add, false) => Opcode::Add,
                    (ArithOp::Sub, false) => Opcode::Sub,
                    (ArithOp::Mul, false) => Opcode::Mul,
                    (ArithOp::Div, false) => Opcode::Sdiv,
                    (ArithOp::Rem, _) => Opcode::Srem,
                    (ArithOp::Add, true) => Opcode::Fadd,
                    (ArithOp::Sub, true) => Opcode::Fsub,
                    (ArithOp::Mul, true) => Opcode::Fmul,
                    (ArithOp::Div, true) => Opcode::Fdiv,
                };
                self.builder().binary(opc, l, r)
            }
            ExprKind::Cmp { .. } => {
                let c = self.cmp_value(e);
                self.builder().unary(Opcode::Zext, Type::I32, c)
            }
            ExprKind::And(..) | ExprKind::Or(..) => {
                // Short-circuit in value context: branches into a join with an i32 parameter.
                let t = self.new_block();
                let fl = self.new_block();
                let join = self.new_block();
                let res = self.f.append_block_param(join, Type::I32);
                self.cond_branch(e, t, fl);
                self.enter(t);
                if self.cur.is_some() {
                    let one = self.builder().iconst(1);
                    self.jump(join, &[one]);
                }
                self.enter(fl);
                if self.cur.is_some() {
                    let zero = self.builder().iconst(0);
                    self.jump(join, &[zero]);
                }
                self.enter(join);
                res
            }
            ExprKind::Call { func, args } => {
                // A void call's "value" is never used (sema forbids it); give a dummy.
                self.call(*func, bd.list(*args), x.ty)
                    .unwrap_or_else(|| self.ssa.zero(self.f, Type::I32))
            }
            ExprKind::IntToFloat(a) => {
                let v = self.expr(*a);
                self.builder().unary(Opcode::Sitofp, Type::F32, v)
            }
            ExprKind::FloatToInt(a) => {
                let v = self.expr(*a);
                self.builder().unary(Opcode::Fptosi, Type::I32, v)
            }
        }
    }

    fn call(&mut self, func: hir::FuncId, args: &[hir::ExprId], ret: ExprTy) -> Option<Value> {
        let fid = self.info.funcs[&func];
        let variadic = self.p.funcs[func].variadic;
        let mut vals = Vec::with_capacity(args.len());
        for (k, &a) in args.iter().enumerate() {
            let v = self.expr(a);
            // C default argument promotion: variadic floats are passed as double.
            if variadic && k > 0 && self.f.ty(v) == Type::F32 {
                let w = self.builder().unary(Opcode::Fpext, Type::F64, v);
                vals.push(w);
            } else {
                vals.push(v);
            }
        }
        let rty = expr_type(ret);
        self.builder().call(fid, rty, &vals)
    }

    /// An i1 for a comparison node.
    fn cmp_value(&mut self, e: hir::ExprId) -> Value {
        let ExprKind::Cmp {
            op,
            operand,
            lhs,
            rhs,
        } = &self.body.exprs[e].kind
        else {
            unreachable!()
        };
        let l = self.expr(*lhs);
        let r = self.expr(*rhs);
        let mut b = self.builder();
        match operand {
            Scalar::Int => b.icmp(cmp_cond(*op), l, r),
            Scalar::Float => b.fcmp(cmp_cond(*op), l, r),
        }
    }

    /// Branches to `t` if the int condition `e` is non-zero, else to `f`.
    fn cond_branch(&mut self, e: hir::ExprId, t: Block, f: Block) {
        if self.cur.is_none() {
            return;
        }
        let bd = self.body;
        match &bd.exprs[e].kind {
            ExprKind::Int(v) => self.jump(if *v != 0 { t } else { f }, &[]),
            ExprKind::And(a, b) => {
                let mid = self.new_block();
                self.cond_branch(*a, mid, f);
                self.enter(mid);
                self.cond_branch(*b, t, f);
            }
            ExprKind::Or(a, b) => {
                let mid = self.new_block();
                self.cond_branch(*a, t, mid);
                self.enter(mid);
                self.cond_branch(*b, t, f);
            }
            ExprKind::Not(a) => self.cond_branch(*a, f, t),
            ExprKind::Cmp { .. } => {
                let c = self.cmp_value(e);
                self.brif(c, t, f);
            }
            _ => {
                let v = self.expr(e);
                if self.cur.is_none() {
                    return;
                }
                let mut b = self.builder();
                let z = b.iconst(0);
                let c = b.icmp(CmpCond::Ne, v, z);
                self.brif(c, t, f);
            }
        }
    }
}
