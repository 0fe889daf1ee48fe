//! `sysyc gen`: writes generated programs (`NAME.sy`, `NAME.in`) to a directory, and with
//! `--expect` their expected output (`NAME.out`, from the differential oracle: the host gcc and
//! clang at -O1 reading the program as C, which must agree), so the directory is a test or bench
//! suite for `sysyc test` and `sysyc bench`. A program whose `.sy` is already there unchanged,
//! with its `.out`, keeps that `.out`.

use super::{diff, generate_profile, Profile};
use crate::suite::runner::WorkDir;
use argh::FromArgs;
use std::path::PathBuf;

/// Write generated SysY programs (deterministic per seed) as a suite directory.
#[derive(FromArgs, Debug)]
#[argh(subcommand, name = "gen")]
pub struct GenArgs {
    /// output directory (created)
    #[argh(option, short = 'o')]
    pub out: PathBuf,
    /// generator: `programs` (shaped like ordinary programs, default) or `fuzz` (stress shapes)
    #[argh(option, default = "Profile::Programs")]
    pub profile: Profile,
    /// first seed (default 1)
    #[argh(option, default = "1")]
    pub first: u64,
    /// number of seeds (default 300)
    #[argh(option, default = "300")]
    pub count: u64,
    /// also write NAME.out, the expected output from the host C compilers (needs gcc and clang)
    #[argh(switch)]
    pub expect: bool,
    /// file names are PREFIX + seed (default `gen`)
    #[argh(option, default = "String::from(\"gen\")")]
    pub prefix: String,
    /// parallel jobs for --expect (default: one per core)
    #[argh(option, short = 'j', default = "0")]
    pub jobs: usize,
}

/// Runs `sysyc gen`; the exit code is 1 when the oracle failed on a program (a generator bug).
pub fn run_gen(args: &GenArgs) -> i32 {
    if let Err(e) = std::fs::create_dir_all(&args.out) {
        eprintln!("sysyc gen: {}: {e}", args.out.display());
        return 2;
    }
    if args.expect {
        if let Err(e) = diff::require_tools(&[]) {
            eprintln!("sysyc gen: {e}");
            return 2;
        }
    }
    let seeds: Vec<u64> = (args.first..args.first.saturating_add(args.count)).collect();
    let work = |seed: &u64| -> Result<(), String> {
        let seed = *seed;
        let name = format!("{}{seed:05}", args.prefix);
        let (source, input) = generate_profile(args.profile, seed);
        let path = |ext: &str| args.out.join(format!("{name}.{ext}"));
        let write = |ext: &str, text: &[u8]| {
            std::fs::write(path(ext), text).map_err(|e| format!("{name}.{ext}: {e}"))
        };
        // An unchanged program keeps its expected output.
        let unchanged = std::fs::read(path("sy")).is_ok_and(|old| old == source.as_bytes())
            && path("out").exists();
        if args.expect && !unchanged {
            let dir = WorkDir::new(&name)?;
            let inp = dir.path.join("prog.in");
            std::fs::write(&inp, &input).map_err(|e| e.to_string())?;
            match diff::oracle(source.as_bytes(), Some(&inp), &dir.path) {
                Ok(out) => write("out", &out)?,
                Err(f) if f.kind == diff::DISAGREEMENT => {
                    eprintln!("sysyc gen: seed {seed} skipped, the C compilers disagree");
                    return Ok(());
                }
                Err(f) => return Err(format!("seed {seed}: {f}")),
            }
        }
        write("sy", source.as_bytes())?;
        if !input.is_empty() {
            write("in", input.as_bytes())?;
        }
        Ok(())
    };
    let run = || {
        use rayon::prelude::*;
        seeds.par_iter().map(work).collect::<Vec<_>>()
    };
    let results = match rayon::ThreadPoolBuilder::new()
        .num_threads(args.jobs)
        .build()
    {
        Ok(pool) => pool.install(run),
        Err(_) => run(),
    };
    let mut code = 0;
    for e in results.iter().filter_map(|r| r.as_ref().err()) {
        eprintln!("sysyc gen: {e}");
        code = 1;
    }
    eprintln!(
        "sysyc gen: {} programs ({:?}, seeds {}..{}) in {}",
        results.iter().filter(|r| r.is_ok()).count(),
        args.profile,
        args.first,
        args.first + args.count,
        args.out.display()
    );
    code
}
