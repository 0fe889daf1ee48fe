//! `sysyc bench` (work in progress).
use argh::FromArgs;
use std::path::PathBuf;

/// Measure executed instructions and timer totals of benchmark cases.
#[derive(FromArgs, Debug)]
#[argh(subcommand, name = "bench")]
pub struct BenchArgs {
    /// directories (searched recursively) or .sy files
    #[argh(positional)]
    pub dirs: Vec<PathBuf>,
}

/// `sysyc bench`.
pub fn run_bench(_args: &BenchArgs) -> i32 {
    2
}
