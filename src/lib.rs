//! sysyc: an optimizing compiler from SysY 2022 to RISC-V64 assembly and LLVM IR.
//!
//! The crate is laid out by compiler stage, one room per stage:
//! `frontend` (source -> AST -> IR), `ir` (the data-oriented SSA IR and its verifier), `analysis`
//! (CFG, dominator tree, loops, alias and dependence facts, and the per-function analysis cache),
//! `rewrite` (IR edits several passes share), `passes` (optimizations and the pass manager), `backend` (RISC-V64 and LLVM IR text),
//! `driver` (the compile pipeline) and `suite` (the `test`, `build` and `bench` subcommands over
//! whole suites, built on the driver).

pub mod analysis;
pub mod backend;
pub mod driver;
pub mod frontend;
pub mod fuzzgen;
pub mod ir;
pub mod passes;
pub mod rewrite;
pub mod suite;
pub mod timing;
