//! IR rewrites that several passes share: loop-simplified form (`loops`), promotion of allocas
//! to SSA values (`ssa`), block-level edits (`blocks`), constants (`consts`), dead code (`dead`), dead writes into local arrays (`locals`).
//!
//! A rewrite reads `ir` and `analysis` and edits one function; it keeps the analysis cache it is
//! given true (invalidating what it changed). Passes call rewrites; rewrites call no pass.

pub mod blocks;
pub mod consts;
pub mod dead;
pub mod locals;
pub mod loops;
pub mod ssa;
