//! The `sysyc` command line.
//!
//! Contest form: `sysyc -S -o out.s in.sy [-O0|-O1|-O2]`, plus `--emit-llvm`, `--emit-ir` and the
//! pass-manager switches. Subcommands `build`, `test` and `bench` work on whole suites; `cost` estimates U74 cycles of assembly regions or of a profiled run.
//! Exit codes: 0 success, 1 diagnostics or I/O error, 2 internal compiler error. No output file
//! is left behind on failure: the output is written to a temporary file and renamed.

use argh::FromArgs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use sysyc::backend::riscv::isa::Isa;
use sysyc::driver::{self, CompileOptions, Emit};

#[derive(FromArgs)]
/// sysyc: an optimizing SysY compiler for RISC-V64.
struct Cli {
    /// emit assembly (the default; accepted for compatibility)
    #[argh(switch, short = 'S')]
    asm: bool,
    /// output file (default, or "-": stdout)
    #[argh(option, short = 'o')]
    output: Option<PathBuf>,
    /// optimization level: 0 none, 1 light cleanups (-Og), 2 full; -O1, -O2, -O3, -Os and -O
    /// all mean 2, the contest's `-O1` included
    #[argh(option, default = "0")]
    opt_level: u8,
    /// write textual LLVM IR instead of assembly
    #[argh(switch)]
    emit_llvm: bool,
    /// write sysyc IR instead of assembly
    #[argh(switch)]
    emit_ir: bool,
    /// verify the IR after every pass (on by default in debug builds)
    #[argh(switch)]
    verify_each: bool,
    /// print the IR after the named pass to stderr ("all" for every pass); repeatable
    #[argh(option)]
    print_after: Vec<String>,
    /// report the time and IR size of every pass on stderr
    #[argh(switch)]
    time_passes: bool,
    /// run only the first N pass applications (find the pass that breaks a program)
    #[argh(option)]
    opt_bisect: Option<u64>,
    /// register allocator: linear-scan (default) or simple (every value in a stack slot)
    #[argh(option, default = "Default::default()")]
    regalloc: sysyc::backend::riscv::regalloc::Allocator,
    /// target ISA: rv64gc (default) or rv64imafdc, optionally with _zba and _zbb (also
    /// spelled -march=STR)
    #[argh(option)]
    march: Option<String>,
    /// worker threads (default: all cores)
    #[argh(option, short = 'j')]
    jobs: Option<usize>,
    /// the SysY source file ("-" for stdin)
    #[argh(positional)]
    input: String,
}

/// Rewrites `-O2`-style flags (which argh cannot parse) to `--opt-level 2`.
fn normalize_args(args: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(args.len() + 2);
    for (k, a) in args.iter().enumerate() {
        let is_option_value = k > 0 && matches!(args[k - 1].as_str(), "-o" | "--output");
        match a.strip_prefix("-O").filter(|_| !is_option_value) {
            // `-O1` is the contest's flag for its performance run: like every contest compiler
            // we read it as "optimize", so -O1, -O2, -O3, -Os and a bare -O all give our best
            // code. The light pipeline (cheap scalar cleanups) is `-Og`.
            Some(n) if n.is_empty() || n == "s" || n.chars().all(|c| c.is_ascii_digit()) => {
                let level = if n == "0" { 0 } else { 2 };
                out.push("--opt-level".to_string());
                out.push(level.to_string());
            }
            Some("g") => {
                out.push("--opt-level".to_string());
                out.push("1".to_string());
            }
            // GCC's spelling `-march=STR`.
            None if a.starts_with("-march=") && !is_option_value => {
                out.push("--march".to_string());
                out.push(a["-march=".len()..].to_string());
            }
            // argh takes a lone `-` for an unknown option: pass stdin under a name it accepts.
            None if a == "-" && !is_option_value => out.push(STDIN_ARG.to_string()),
            // argh wants `--name value`; accept `--name=value` too.
            None if a.starts_with("--") && a.contains('=') && !is_option_value => {
                let (name, value) = a.split_once('=').unwrap();
                out.push(name.to_string());
                out.push(value.to_string());
            }
            _ => out.push(a.clone()),
        }
    }
    out
}

/// How a `-` (read stdin) input reaches the argument parser.
const STDIN_ARG: &str = "<stdin>";

fn main() {
    let argv: Vec<String> = std::env::args().collect();
    let cmd = Path::new(&argv[0])
        .file_name()
        .and_then(|s| s.to_str())
        .unwrap_or("sysyc")
        .to_string();
    let rest = normalize_args(&argv[1..]);
    if let Some(code) = sysyc::suite::dispatch(&cmd, &rest) {
        std::process::exit(code);
    }
    let strs: Vec<&str> = rest.iter().map(String::as_str).collect();
    let cli = match Cli::from_args(&[&cmd], &strs) {
        Ok(c) => c,
        Err(e) => {
            if e.status.is_ok() {
                println!("{}", e.output);
                std::process::exit(0);
            }
            eprintln!("{}", e.output);
            eprintln!("usage: {cmd} -S -o out.s in.sy [-O0|-O1|-O2] [--emit-llvm|--emit-ir]");
            std::process::exit(1);
        }
    };
    std::process::exit(run(cli));
}

fn run(cli: Cli) -> i32 {
    let _ = cli.asm;
    if let Some(j) = cli.jobs {
        let _ = rayon::ThreadPoolBuilder::new()
            .num_threads(j.max(1))
            .stack_size(64 << 20)
            .build_global();
    } else {
        let _ = rayon::ThreadPoolBuilder::new()
            .stack_size(64 << 20)
            .build_global();
    }
    let (source, name) = if cli.input == "-" || cli.input == STDIN_ARG {
        let mut buf = Vec::new();
        if let Err(e) = std::io::stdin().read_to_end(&mut buf) {
            eprintln!("sysyc: error: cannot read stdin: {e}");
            return 1;
        }
        (buf, "<stdin>".to_string())
    } else {
        match std::fs::read(&cli.input) {
            Ok(b) => (b, cli.input.clone()),
            Err(e) => {
                eprintln!("sysyc: error: cannot read '{}': {e}", cli.input);
                return 1;
            }
        }
    };
    let isa = match cli.march.as_deref().map(Isa::parse).transpose() {
        Ok(isa) => isa.unwrap_or_default(),
        Err(e) => {
            eprintln!("sysyc: error: {e}");
            return 1;
        }
    };
    let opts = CompileOptions {
        opt_level: cli.opt_level.min(2),
        emit: if cli.emit_llvm {
            Emit::Llvm
        } else if cli.emit_ir {
            Emit::Ir
        } else {
            Emit::Asm
        },
        verify_each: cli.verify_each || cfg!(debug_assertions),
        print_after: cli.print_after.clone(),
        time_passes: cli.time_passes,
        opt_bisect: cli.opt_bisect,
        regalloc: cli.regalloc,
        isa,
    };
    let result = driver::with_big_stack(move || driver::compile(&source, &name, &opts));
    let text = match result {
        Ok(Ok(text)) => text,
        Ok(Err(diags)) => {
            eprint!("{diags}");
            if !diags.ends_with('\n') {
                eprintln!();
            }
            return 1;
        }
        Err(panic) => {
            eprintln!("sysyc: internal compiler error: {panic}");
            return 2;
        }
    };
    match cli.output.as_ref().filter(|p| p.as_os_str() != "-") {
        None => {
            let mut out = std::io::stdout().lock();
            if out
                .write_all(text.as_bytes())
                .and_then(|_| out.flush())
                .is_err()
            {
                return 1;
            }
            0
        }
        Some(path) => match write_atomically(path, text.as_bytes()) {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("sysyc: error: cannot write '{}': {e}", path.display());
                1
            }
        },
    }
}

/// Writes `bytes` to a temporary file beside `path` and renames it into place, so a failure never
/// leaves a partial output file.
fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let file = path
        .file_name()
        .ok_or_else(|| std::io::Error::other("not a file name"))?;
    let tmp = dir.join(format!(
        ".{}.tmp{}",
        file.to_string_lossy(),
        std::process::id()
    ));
    let res = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.flush()?;
        drop(f);
        std::fs::rename(&tmp, path)
    })();
    if res.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    res
}
