//! The suite tools: running SysY test cases end to end (compile, link with our runtime, run under
//! qemu-riscv64 or natively, compare with the expected output) and the `build`, `test` and
//! `bench` subcommands built on that. Shared by `tests/suites.rs` and the `sysyc` binary.
//!
//! - `toolchain`: tool names, the runtime library and the qemu plugin, built on first use;
//! - `cases`: finding `NAME.sy` / `.in` / `.out` triples;
//! - `exec`: child processes with stdin, captured output and a timeout;
//! - `compare`: the whitespace-normalised comparison rule and unified diffs;
//! - `runner`: one case end to end, many in parallel;
//! - `shard`: splitting a suite over processes and machines;
//! - `results` (JSON files, schema-checked), `junit`, `report` (HTML), `stats`, `progress`:
//!   recording and reporting;
//! - `require`: the rule for missing suites and tools (fail in CI, skip loudly elsewhere);
//! - `profile`, `cycles`: the per-block profile of a run and its U74 cycle estimate (`cost`
//!   costs assembly regions the same way);
//! - `cli` (`build`, `test`), `bench`, `merge` and `cost`: the subcommands.

use std::io::Write;

pub mod bench;
pub mod cases;
pub mod cli;
pub mod compare;
pub mod cycles;
pub mod exec;
pub mod junit;
pub mod merge;
pub mod profile;
pub mod progress;
pub mod report;
pub mod require;
pub mod results;
pub mod runner;
pub mod shard;
pub mod stats;
pub mod toolchain;

pub use bench::{run_bench, BenchArgs};
pub use cases::{discover, Case};
pub use cli::{run_build, run_test, BuildArgs, TestArgs};
pub use merge::{run_merge, MergeArgs};
pub use runner::{run_case, run_cases, CaseResult, Compiler, Outcome, RunConfig};

use argh::FromArgs;

/// The suite subcommands of the command line.
#[derive(FromArgs, Debug)]
#[argh(subcommand)]
pub enum SuiteCommand {
    Build(BuildArgs),
    Test(TestArgs),
    Bench(BenchArgs),
    Merge(MergeArgs),
    Cost(cycles::CostArgs),
    Gen(crate::fuzzgen::cli::GenArgs),
}

/// Runs `sysyc build|test|bench|merge|cost|gen ARGS...` when `args` starts with one of those words and
/// returns the exit code; `None` for anything else. `cmd` is the program name for usage text.
/// `-O2` is `--opt-level 2`.
pub fn dispatch(cmd: &str, args: &[String]) -> Option<i32> {
    if !matches!(
        args.first().map(String::as_str),
        Some("build" | "test" | "bench" | "merge" | "cost" | "gen")
    ) {
        return None;
    }
    /// sysyc suite tools.
    #[derive(FromArgs, Debug)]
    struct Top {
        #[argh(subcommand)]
        sub: SuiteCommand,
    }
    let strs: Vec<&str> = args.iter().map(String::as_str).collect();
    Some(match Top::from_args(&[cmd], &strs) {
        Ok(top) => match &top.sub {
            SuiteCommand::Build(a) => run_build(a),
            SuiteCommand::Test(a) => run_test(a),
            SuiteCommand::Bench(a) => run_bench(a),
            SuiteCommand::Merge(a) => run_merge(a),
            SuiteCommand::Cost(a) => cycles::run_cost(a),
            SuiteCommand::Gen(a) => crate::fuzzgen::cli::run_gen(a),
        },
        Err(argh::EarlyExit { output, status }) => {
            if status.is_ok() {
                // Help into a pipe whose reader left is not a failure.
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "{output}").and_then(|_| out.flush());
                0
            } else {
                eprintln!("{output}");
                2
            }
        }
    })
}
