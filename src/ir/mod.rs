//! The sysyc IR: typed ids, flat tables, SSA with block parameters.
//!
//! - `entity`: `entity!` ids and `IdVec` tables.
//! - `inst`: types, opcodes and the 16-byte instruction row.
//! - `func`: a function body as columns (insts, values, uses, blocks) and its editing API.
//! - `layout`: block and instruction order.
//! - `module`: declarations, globals, bodies in an id-arena; parallel iteration.
//! - `builder`: a cursor that appends instructions, for lowering and passes.
//! - `fold`: constant folding of one instruction (the arithmetic of every opcode).
//! - `bits`: the bits of an integer value known to be zero, read off its definitions.
//! - `pattern`: value shapes passes and the backend both recognise (sign tests, `|x|`).
//! - `verify`: the invariants every pass must keep; `print`/`parse`: the text form.
//!
//! Phis are block parameters: a branch passes arguments to its target's parameters, and the
//! function's arguments are the entry block's parameters.

pub mod bits;
pub mod builder;
pub mod entity;
pub mod fold;
pub mod func;
pub mod inst;
pub mod interp;
pub mod layout;
pub mod module;
pub mod parse;
pub mod pattern;
pub mod print;
pub mod verify;

crate::entity!(
    /// An SSA value: an instruction result or a block parameter.
    Value,
    "v"
);
crate::entity!(
    /// An instruction.
    Inst,
    "inst"
);
crate::entity!(
    /// A basic block.
    Block,
    "bb"
);
crate::entity!(
    /// One operand slot of one instruction.
    Use,
    "use"
);

pub use builder::Builder;
pub use entity::{EntityRef, IdSet, IdVec};
pub use func::{mk, BlockCall, Function, Targets, ValueDef};
pub use inst::{CmpCond, InstData, Opcode, Type};
pub use module::{
    func_symbol, global_symbol, Effects, FuncDecl, FuncId, GlobalData, GlobalId, GlobalInit,
    Module, ModuleCx, Signature, Touches,
};
