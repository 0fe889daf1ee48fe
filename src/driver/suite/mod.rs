//! The suite tools: running SysY test cases end to end (compile, link with our runtime, run under
//! qemu-riscv64 or natively, compare with the expected output) and the `build`, `test` and
//! `bench` subcommands built on that. Shared by `tests/suites.rs` and the `sysyc` binary.
//!
//! - `toolchain`: tool names, the runtime library and the qemu plugin, built on first use;
//! - `cases`: finding `NAME.sy` / `.in` / `.out` triples;
//! - `exec`: child processes with stdin, captured output and a timeout;
//! - `compare`: the whitespace-normalised comparison rule and diffs;
//! - `runner`: one case end to end, many in parallel;
//! - `progress`, `json`: reporting;
//! - `cli` (`build`, `test`) and `bench`: the subcommands.

pub mod bench;
pub mod cases;
pub mod cli;
pub mod compare;
pub mod exec;
pub mod json;
pub mod progress;
pub mod runner;
pub mod toolchain;

pub use bench::{run_bench, BenchArgs};
pub use cases::{discover, Case};
pub use cli::{run_build, run_test, BuildArgs, TestArgs};
pub use runner::{run_case, run_cases, CaseResult, Compiler, Outcome, RunConfig};
