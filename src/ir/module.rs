//! A module: function declarations, globals, and function bodies.
//!
//! `ModuleCx` is the read-only context that function passes and the backend share across threads
//! (signatures, globals, per-function summaries). Bodies live in an id-arena indexed by `FuncId`;
//! every declared function has a slot, external ones an empty body. Globals live in a slotmap so
//! that global DCE can delete them and stale ids are caught.

use super::entity::IdVec;
use super::func::Function;
use super::inst::Type;
use rayon::prelude::*;

crate::entity!(
    /// A function of the module (defined or external).
    FuncId,
    "fn"
);

impl id_arena::ArenaBehavior for FuncId {
    type Id = FuncId;
    fn new_id(_arena: u32, i: usize) -> FuncId {
        FuncId::new(i)
    }
    fn index(id: FuncId) -> usize {
        id.index()
    }
    fn arena_id(_: FuncId) -> u32 {
        0
    }
    fn new_arena_id() -> u32 {
        0
    }
}

slotmap::new_key_type! {
    /// A global variable of the module.
    pub struct GlobalId;
}

impl GlobalId {
    /// The id packed in 64 bits (for an instruction's `imm`).
    pub fn to_bits(self) -> u64 {
        use slotmap::Key;
        self.data().as_ffi()
    }
    pub fn from_bits(bits: u64) -> GlobalId {
        slotmap::KeyData::from_ffi(bits).into()
    }
}

/// A function type.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Signature {
    pub params: Vec<Type>,
    pub ret: Type,
    /// C-style variadic (`putf`): extra arguments follow `params`.
    pub variadic: bool,
}

/// What passes know about a function's effects.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Effects {
    /// No memory access (but reads of constant globals), no I/O, only pure callees: result
    /// depends on arguments only.
    pub pure: bool,
    /// Reads memory (globals or through pointer arguments).
    pub reads_memory: bool,
    /// Writes memory or performs I/O.
    pub writes_memory: bool,
}

impl Effects {
    /// Whether a call whose result nobody uses may be deleted: the callee is pure or known to
    /// only read memory (the default summary, before the analysis ran, is neither).
    pub fn removable_if_unused(&self) -> bool {
        self.pure || (self.reads_memory && !self.writes_memory)
    }
}

/// The memory a call of a function may read, or write, beyond the callee's own stack frame.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Touches {
    /// Any memory (the summary before the `effects` analysis ran).
    #[default]
    Anything,
    /// Only these globals (sorted, without repeats) and, with `through_params`, whatever the
    /// call's pointer arguments point into.
    Known {
        globals: Vec<GlobalId>,
        through_params: bool,
    },
}

/// A function declaration.
#[derive(Clone, Debug)]
pub struct FuncDecl {
    /// The source name (symbol mangling is the backend's business).
    pub name: String,
    pub sig: Signature,
    /// Has a body in this module (otherwise provided by the runtime or libc).
    pub defined: bool,
    /// Effect summary; conservative (impure) until an analysis fills it in.
    pub effects: Effects,
    /// The memory a call may read and write; `Touches::Anything` until the `effects`
    /// analysis ran.
    pub reads: Touches,
    pub writes: Touches,
    /// Every integer value the function returns lies in `[lo, hi]` (signed), once the
    /// `retrange` analysis found bounds; `None`: unknown (any value of the result type).
    pub returns: Option<(i64, i64)>,
}

/// Initial contents of a global.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GlobalInit {
    /// All zero.
    Zero,
    /// 32-bit words (i32 or f32 bits) from offset 0; the rest of the global is zero.
    Words(Vec<u32>),
    /// Bytes from offset 0 (string literals); the rest is zero.
    Bytes(Vec<u8>),
}

/// A global variable or constant.
#[derive(Clone, Debug)]
pub struct GlobalData {
    pub name: String,
    /// Size in bytes.
    pub size: u64,
    /// Element type of the data (I32 or F32; I1 for byte strings).
    pub elem: Type,
    pub init: GlobalInit,
    /// Never written (SysY `const` or a string literal).
    pub is_const: bool,
}

impl GlobalData {
    /// The word at byte offset `off` of a constant global (never written, so its initial
    /// contents are what every read sees), if the global is constant and the word lies aligned
    /// inside it.
    pub fn const_word(&self, off: i64) -> Option<u32> {
        (self.is_const && off >= 0 && off % 4 == 0 && off as u64 + 4 <= self.size)
            .then(|| self.word_at(off as u64))
    }

    /// The 32-bit word at byte offset `off` of the initial contents.
    pub fn word_at(&self, off: u64) -> u32 {
        match &self.init {
            GlobalInit::Words(w) => w.get((off / 4) as usize).copied().unwrap_or(0),
            _ => 0,
        }
    }
}

/// Read-only context shared by function passes and codegen.
#[derive(Clone, Debug, Default)]
pub struct ModuleCx {
    pub decls: IdVec<FuncId, FuncDecl>,
    pub globals: slotmap::SlotMap<GlobalId, GlobalData>,
    /// Globals whose address is only ever used directly, as the address of loads and stores
    /// (never passed to a call, stored or returned), so no pointer parameter points into them.
    /// Filled by the `effects` module analysis; a global missing here may be addressed.
    pub direct_only: slotmap::SecondaryMap<GlobalId, ()>,
}

impl ModuleCx {
    pub fn decl(&self, f: FuncId) -> &FuncDecl {
        &self.decls[f]
    }
    pub fn sig(&self, f: FuncId) -> &Signature {
        &self.decls[f].sig
    }
    /// Finds a function by source name.
    pub fn func_by_name(&self, name: &str) -> Option<FuncId> {
        self.decls
            .iter()
            .find(|(_, d)| d.name == name)
            .map(|(id, _)| id)
    }
    /// Whether global `g` is only accessed directly (see `direct_only`).
    pub fn is_direct_only(&self, g: GlobalId) -> bool {
        self.direct_only.contains_key(g)
    }
    /// Globals in a stable order (creation order, by slot).
    pub fn globals_sorted(&self) -> Vec<(GlobalId, &GlobalData)> {
        self.globals.iter().collect()
    }
}

/// A whole program.
#[derive(Debug, Default)]
pub struct Module {
    pub cx: ModuleCx,
    pub funcs: id_arena::Arena<Function, FuncId>,
}

impl Module {
    pub fn new() -> Self {
        Module::default()
    }

    /// Declares a function; defined ones get their body filled in through `funcs[id]`.
    pub fn declare_func(&mut self, name: &str, sig: Signature, defined: bool) -> FuncId {
        let id = self.cx.decls.push(FuncDecl {
            name: name.to_string(),
            sig,
            defined,
            effects: Effects::default(),
            reads: Touches::Anything,
            writes: Touches::Anything,
            returns: None,
        });
        let fid = self.funcs.alloc_with_id(|fid| Function::new(fid, name));
        assert_eq!(id, fid);
        id
    }

    pub fn add_global(&mut self, g: GlobalData) -> GlobalId {
        self.cx.globals.insert(g)
    }

    /// Ids of the functions with bodies, in id order.
    pub fn defined_funcs(&self) -> Vec<FuncId> {
        self.cx
            .decls
            .iter()
            .filter(|(_, d)| d.defined)
            .map(|(id, _)| id)
            .collect()
    }

    /// Runs `pass` on every defined function in parallel, against the read-only context.
    /// Returns whether any function changed.
    pub fn par_for_each_func<F>(&mut self, pass: F) -> bool
    where
        F: Fn(&mut Function, &ModuleCx) -> bool + Sync,
    {
        let Module { cx, funcs } = self;
        let cx = &*cx;
        funcs
            .par_iter_mut()
            .filter(|(id, _)| cx.decls[*id].defined)
            .map(|(_, f)| pass(f, cx))
            .reduce(|| false, |a, b| a | b)
    }
}

/// The assembly/LLVM symbol of a function. Program functions other than `main` get the prefix
/// `sy.`: no C library or runtime symbol contains a dot, so a SysY function named `printf`,
/// `rand` or `memset` can never clash with the runtime it links against. External (runtime)
/// functions keep their names.
pub fn func_symbol(decl: &FuncDecl) -> String {
    if decl.defined && decl.name != "main" {
        format!("sy.{}", decl.name)
    } else {
        decl.name.clone()
    }
}

/// The symbol of a global: always prefixed like program functions.
pub fn global_symbol(g: &GlobalData) -> String {
    format!("sy.{}", g.name)
}
