//! The `sysyc` command line.
//!
//! Contest form: `sysyc -S -o out.s in.sy [-O0|-O1|-O2]`, plus `--emit-llvm`, `--emit-ir` and the
//! pass-manager switches; the spellings gcc users type by habit are accepted too (`-O3`, `-Os`,
//! `-Og`, `-fsyntax-only`, `-w`, `-Werror`, `-Wno-NAME`, `-ferror-limit=N`, `-march=`, `-o -`,
//! `-` for stdin; `normalize_args` rewrites them for argh). Subcommands `build`, `test` and
//! `bench` work on whole suites (`sysyc::suite`), `merge` joins sharded results, `cost` estimates U74
//! cycles of assembly regions or of a profiled run; `sysyc help SUB` is `sysyc SUB --help`.
//!
//! Exit codes, the same for the compiler and every subcommand (see `EXIT_CODES`): 0 success,
//! 1 problems in the user's input (diagnostics, unreadable files, failing cases), 2 command-line
//! usage errors, 101 internal compiler error (a caught panic, reported as such with a
//! bug-report hint). On failure no output file is left: an existing one is removed (as gcc
//! does), and a successful output is written to a temporary file and renamed into place. A
//! reader that closes stdout early ends the process quietly.

use argh::FromArgs;
use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use sysyc::backend::riscv::isa::Isa;
use sysyc::driver::{self, CompileOptions, Emit};
use sysyc::frontend::diag::{DiagOptions, Lint};
use sysyc::timing::Timings;

/// Success.
const EXIT_OK: i32 = 0;
/// Problems in the user's input: diagnostics, unreadable or unwritable files.
const EXIT_INPUT: i32 = 1;
/// The command line is wrong.
const EXIT_USAGE: i32 = 2;
/// A bug in sysyc (a caught panic), as rustc.
const EXIT_ICE: i32 = 101;
/// A reader closed the pipe while a suite tool was still printing its report: the status of a C
/// tool killed by SIGPIPE, as the shell shows it.
const EXIT_BROKEN_PIPE: i32 = 141;

const EXIT_CODES: &str = "\
Exit codes (the compiler and every subcommand):
  0    success
  1    problems in the input: errors in the source (warnings with -Werror), unreadable or
       unwritable files, failing test cases
  2    command-line usage errors
  101  internal compiler error (a bug in sysyc; please report it)";

#[derive(FromArgs)]
/// sysyc: an optimizing SysY compiler for RISC-V64 (GNU assembly) and LLVM IR.
struct Cli {
    /// emit assembly (the default; accepted for compatibility)
    #[argh(switch, short = 'S')]
    asm: bool,
    /// output file (default, or "-": stdout); removed if the compilation fails
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
    /// LLVM IR target: riscv64 (default; triple, data layout, lp64d ABI) or host (none of
    /// them: the reading tool's native target)
    #[argh(option, default = "Default::default()")]
    target: sysyc::backend::llvm::Target,
    /// only check the source and report diagnostics; write nothing (-fsyntax-only)
    #[argh(switch)]
    syntax_only: bool,
    /// no warnings at all (-w)
    #[argh(switch, short = 'w')]
    no_warnings: bool,
    /// turn off warning NAME (-Wno-NAME); repeatable
    #[argh(option)]
    no_warn: Vec<String>,
    /// turn warning NAME back on (-WNAME; all are on by default); repeatable
    #[argh(option)]
    warn: Vec<String>,
    /// treat warnings as errors (-Werror)
    #[argh(switch)]
    werror: bool,
    /// stop after N errors; 0: no limit (-ferror-limit=N, default 20)
    #[argh(option, default = "sysyc::frontend::diag::MAX_ERRORS")]
    error_limit: usize,
    /// colour diagnostics: auto (a terminal, unless NO_COLOR is set), always or never
    /// (-fdiagnostics-color=WHEN)
    #[argh(option, default = "String::from(\"auto\")")]
    color: String,
    /// target ISA (-march=): rv64gc or a superset; _zba and _zbb let the code use them
    #[argh(option)]
    march: Option<String>,
    /// print the version and the commit it was built from
    #[argh(switch)]
    version: bool,
    /// verify the IR after every pass (on by default in debug builds)
    #[argh(switch)]
    verify_each: bool,
    /// print the IR after the named pass to stderr ("all" for every pass); repeatable
    #[argh(option)]
    print_after: Vec<String>,
    /// report on stderr the wall time of every stage (input to output), the time and IR size
    /// of every pass and backend phase, and the peak memory
    #[argh(switch)]
    time_passes: bool,
    /// run only the first N pass applications (find the pass that breaks a program)
    #[argh(option)]
    opt_bisect: Option<u64>,
    /// register allocator: linear-scan (default) or simple (every value in a stack slot)
    #[argh(option, default = "Default::default()")]
    regalloc: sysyc::backend::riscv::regalloc::Allocator,
    /// worker threads (default: all cores)
    #[argh(option, short = 'j')]
    jobs: Option<usize>,
    /// the SysY source file ("-" for stdin)
    #[argh(positional)]
    input: Option<String>,
}

/// How a `-` (read stdin) input reaches the argument parser.
const STDIN_ARG: &str = "<stdin>";

/// The suite subcommands: name and one-line description (from their argh docs).
fn subcommands() -> Vec<(&'static str, &'static str)> {
    use argh::SubCommands;
    sysyc::suite::SuiteCommand::COMMANDS
        .iter()
        .map(|c| (c.name, c.description))
        .collect()
}

/// Rewrites gcc-style flags (which argh cannot parse) to the long options of `Cli`. `Err` is a
/// usage error.
fn normalize_args(args: &[String]) -> Result<Vec<String>, String> {
    let mut out = Vec::with_capacity(args.len() + 2);
    let mut positional_only = false;
    for (k, a) in args.iter().enumerate() {
        let is_option_value = k > 0
            && matches!(
                args[k - 1].as_str(),
                "-o" | "--output"
                    | "--opt-level"
                    | "--print-after"
                    | "--opt-bisect"
                    | "--regalloc"
                    | "-j"
                    | "--jobs"
                    | "--target"
                    | "--no-warn"
                    | "--warn"
                    | "--error-limit"
                    | "--color"
                    | "--march"
            );
        if is_option_value {
            out.push(a.clone());
            continue;
        }
        if positional_only {
            out.push(if a == "-" {
                STDIN_ARG.to_string()
            } else {
                a.clone()
            });
            continue;
        }
        let mut push = |s: &str| out.push(s.to_string());
        match a.as_str() {
            "--" => {
                positional_only = true;
                push(a);
            }
            // argh takes a lone `-` for an unknown option: pass stdin under a name it accepts.
            "-" => push(STDIN_ARG),
            "-h" => push("--help"),
            "-fsyntax-only" => push("--syntax-only"),
            "-Werror" => push("--werror"),
            // Every warning is on by default.
            "-Wall" | "-Wextra" => {}
            "-fno-diagnostics-color" => {
                push("--color");
                push("never");
            }
            // `-O1` is the contest's flag for its performance run: like every contest compiler
            // we read it as "optimize", so -O1, -O2, -O3, -Os, -Ofast and a bare -O all give our
            // best code. The light pipeline (cheap scalar cleanups) is `-Og`.
            _ if a.starts_with("-O") => {
                let level = match &a[2..] {
                    "0" => "0",
                    "g" => "1",
                    "" | "s" | "z" | "fast" => "2",
                    n if n.bytes().all(|c| c.is_ascii_digit()) => "2",
                    _ => return Err(format!("unknown optimization level `{a}`")),
                };
                push("--opt-level");
                push(level);
            }
            _ if a.starts_with("-Wno-") => {
                push("--no-warn");
                push(&a[5..]);
            }
            _ if a.starts_with("-W") && !a.contains('=') => {
                push("--warn");
                push(&a[2..]);
            }
            _ => {
                let (name, value) = a.split_once('=').unwrap_or((a, ""));
                let long = match name {
                    "-ferror-limit" | "-fmax-errors" => Some("--error-limit"),
                    "-fdiagnostics-color" => Some("--color"),
                    "-march" => Some("--march"),
                    // argh wants `--name value`; accept `--name=value` too.
                    _ if name.starts_with("--") && a.contains('=') => Some(name),
                    _ => None,
                };
                match long {
                    Some(l) => {
                        push(l);
                        push(value);
                    }
                    None => push(a),
                }
            }
        }
    }
    Ok(out)
}

/// The first panic's message and location, for the internal-compiler-error report.
static PANIC: Mutex<Option<String>> = Mutex::new(None);

/// Panics are internal compiler errors: the hook records the first one (message and location)
/// for the report `ice` prints after the compile thread is joined, and reports a panic of the
/// main thread (nothing else would) at once. A panic from printing into a closed stdout (a
/// suite tool's report piped into `head`) ends the process quietly instead.
fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let payload = info.payload();
        let msg = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or("a panic without a message");
        if msg.starts_with("failed printing to stdout") {
            std::process::exit(EXIT_BROKEN_PIPE);
        }
        let text = match info.location() {
            Some(loc) => format!("{msg}\nnote: raised at {loc}"),
            None => msg.to_string(),
        };
        if std::thread::current().name() == Some("main") {
            eprintln!("sysyc: error: internal compiler error: {text}");
            eprintln!("{}", bug_report_hint());
            return;
        }
        let mut first = PANIC.lock().unwrap_or_else(|e| e.into_inner());
        first.get_or_insert(text);
    }));
}

fn bug_report_hint() -> String {
    let args: Vec<String> = std::env::args().collect();
    format!(
        "note: this is a bug in sysyc {}; please report it with the source file and the \
         command line:\nnote:     {}",
        version_line(),
        args.join(" ")
    )
}

/// Reports a caught panic of the compile thread; returns the exit code.
fn ice(message: &str) -> i32 {
    let recorded = PANIC.lock().unwrap_or_else(|e| e.into_inner()).take();
    eprintln!(
        "sysyc: error: internal compiler error: {}",
        recorded.as_deref().unwrap_or(message)
    );
    eprintln!("{}", bug_report_hint());
    EXIT_ICE
}

fn version_line() -> String {
    format!(
        "{} ({} {})",
        env!("CARGO_PKG_VERSION"),
        option_env!("SYSYC_COMMIT").unwrap_or("unknown commit"),
        option_env!("SYSYC_COMMIT_DATE").unwrap_or("")
    )
    .replace(" )", ")")
}

/// Writes `text` to stdout; a reader that went away is not an error.
fn print_stdout(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|_| out.flush());
}

/// `sysyc --help`: argh's option list, then the subcommands, the gcc spellings, the warnings
/// and the exit codes.
fn help_text(cmd: &str) -> String {
    let options = match Cli::from_args(&[cmd], &["--help"]) {
        Err(e) => e.output,
        Ok(_) => String::new(),
    };
    let mut s = options.trim_end().to_string();
    s.push_str("\n\nSubcommands (`");
    s.push_str(cmd);
    s.push_str(" help SUB` or `");
    s.push_str(cmd);
    s.push_str(" SUB --help` for their options):\n");
    for (name, desc) in subcommands() {
        s.push_str(&format!("  {name:<8} {desc}\n"));
    }
    s.push_str(&format!("  {:<8} show the help of a subcommand\n", "help"));
    s.push_str(
        "\ngcc-compatible spellings:
  -O1 -O2 -O3 -Os -Ofast -O  full optimization (all the same code; -O1 is the contest's flag)
  -Og                        light optimization (cheap scalar cleanups), for debugging
  -O0                        none (the default)
  -fsyntax-only -w -Werror -Wno-NAME -WNAME -Wall -ferror-limit=N -fdiagnostics-color=WHEN
  -march=ISA -o - (stdout) - (read stdin) -h
\nWarnings (all on by default; -Wno-NAME turns one off):\n",
    );
    for l in Lint::ALL {
        s.push_str(&format!("  {:<18} {}\n", l.name(), l.description()));
    }
    s.push('\n');
    s.push_str(EXIT_CODES);
    s.push('\n');
    s
}

fn usage_error(cmd: &str, msg: &str) -> i32 {
    eprintln!("{cmd}: error: {msg}");
    eprintln!("usage: {cmd} -S -o out.s in.sy [-O0|-O1|-O2] [--emit-llvm|--emit-ir]  (try `{cmd} --help`)");
    EXIT_USAGE
}

fn main() {
    install_panic_hook();
    let argv: Vec<String> = std::env::args().collect();
    let cmd = Path::new(argv.first().map_or("sysyc", String::as_str))
        .file_name()
        .and_then(|s| s.to_str())
        .unwrap_or("sysyc")
        .to_string();
    std::process::exit(dispatch(&cmd, &argv[1.min(argv.len())..]));
}

fn dispatch(cmd: &str, args: &[String]) -> i32 {
    let is_sub = |s: &str| subcommands().iter().any(|(n, _)| *n == s);
    match args.first().map(String::as_str) {
        Some("help") => {
            return match args.get(1).map(String::as_str) {
                None => {
                    print_stdout(&help_text(cmd));
                    EXIT_OK
                }
                Some(sub) if is_sub(sub) && args.len() == 2 => {
                    let help = [sub.to_string(), "--help".to_string()];
                    sysyc::suite::dispatch(cmd, &help).unwrap_or(EXIT_USAGE)
                }
                Some(sub) => usage_error(
                    cmd,
                    &format!(
                        "no subcommand `{sub}`; the subcommands are: {}",
                        subcommands()
                            .iter()
                            .map(|c| c.0)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ),
            };
        }
        Some(sub) if is_sub(sub) => {
            // `-O2` (and the rest of the -O spellings) as for the compiler.
            return match normalize_args(args) {
                Ok(rest) => sysyc::suite::dispatch(cmd, &rest).unwrap_or(EXIT_USAGE),
                Err(e) => usage_error(cmd, &e),
            };
        }
        _ => {}
    }
    let rest = match normalize_args(args) {
        Ok(r) => r,
        Err(e) => return usage_error(cmd, &e),
    };
    if rest.iter().any(|a| a == "--help") {
        print_stdout(&help_text(cmd));
        return EXIT_OK;
    }
    let strs: Vec<&str> = rest.iter().map(String::as_str).collect();
    let cli = match Cli::from_args(&[cmd], &strs) {
        Ok(c) => c,
        Err(e) => {
            if e.status.is_ok() {
                print_stdout(&format!("{}\n", e.output));
                return EXIT_OK;
            }
            return usage_error(cmd, e.output.trim_end());
        }
    };
    if cli.version {
        print_stdout(&format!("sysyc {}\n", version_line()));
        return EXIT_OK;
    }
    match options(&cli) {
        Ok((input, opts)) => run(&cli, &input, opts),
        Err(e) => usage_error(cmd, &e),
    }
}

/// The input and compile options `cli` asks for, or a usage error.
fn options(cli: &Cli) -> Result<(String, CompileOptions), String> {
    let Some(input) = cli.input.clone() else {
        return Err("no input file".into());
    };
    if cli.emit_llvm && cli.emit_ir {
        return Err("--emit-llvm and --emit-ir exclude each other".into());
    }
    let isa = match &cli.march {
        Some(march) => parse_march(march)?,
        None => Isa::default(),
    };
    let lint = |name: &String| {
        Lint::from_name(name).ok_or_else(|| {
            let names: Vec<&str> = Lint::ALL.iter().map(|l| l.name()).collect();
            format!(
                "unknown warning `{name}` (the warnings are: {})",
                names.join(", ")
            )
        })
    };
    let enabled = cli.warn.iter().map(lint).collect::<Result<Vec<_>, _>>()?;
    let mut disabled = cli
        .no_warn
        .iter()
        .map(lint)
        .collect::<Result<Vec<_>, _>>()?;
    disabled.retain(|l| !enabled.contains(l));
    let color = match cli.color.as_str() {
        "always" => true,
        "never" => false,
        "auto" => {
            std::io::stderr().is_terminal()
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        }
        other => {
            return Err(format!(
                "--color takes auto, always or never, not `{other}`"
            ))
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
        diagnostics: DiagOptions {
            error_limit: cli.error_limit,
            no_warnings: cli.no_warnings,
            disabled,
            werror: cli.werror,
            color,
        },
        llvm_target: cli.target,
        isa,
    };
    Ok((input, opts))
}

/// `-march=`: the base must be rv64gc (or spelled rv64imafdc...); of the extensions, `zba` and
/// `zbb` let the backend use their instructions and any other is accepted and unused (rv64gc
/// code runs on every superset). Anything else is refused.
fn parse_march(march: &str) -> Result<Isa, String> {
    check_march(march)?;
    let mut isa = Isa::default();
    for ext in march.to_ascii_lowercase().split('_').skip(1) {
        match ext {
            "zba" => isa.zba = true,
            "zbb" => isa.zbb = true,
            _ => {}
        }
    }
    Ok(isa)
}

/// The base of `-march=`: rv64gc or a superset of it.
fn check_march(march: &str) -> Result<(), String> {
    let base = march.split('_').next().unwrap_or("");
    let ext = base.strip_prefix("rv64").unwrap_or("");
    let gc = ext.starts_with('g') || ext.starts_with("imafd");
    if base.starts_with("rv64") && gc && ext.contains('c') {
        Ok(())
    } else {
        Err(format!(
            "unsupported -march=`{march}`: sysyc emits rv64gc code (try -march=rv64gc)"
        ))
    }
}

/// Caps glibc's malloc arenas at one per compile thread. By default each thread that
/// allocates gets an arena of its own, and memory freed into one arena serves only the threads
/// using it: the checked program, built on the calling thread and freed body by body as the
/// worker threads lower it, would stay resident beside the IR it becomes. With the cap, a worker
/// shares the calling thread's arena and fills what the bodies leave.
fn limit_malloc_arenas(threads: usize) {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        const M_ARENA_MAX: std::ffi::c_int = -8;
        extern "C" {
            fn mallopt(param: std::ffi::c_int, value: std::ffi::c_int) -> std::ffi::c_int;
        }
        let arenas = std::ffi::c_int::try_from(threads.max(1)).unwrap_or(std::ffi::c_int::MAX);
        // SAFETY: `mallopt` only sets a tuning parameter of the allocator; a refused value
        // leaves the default in place.
        unsafe {
            mallopt(M_ARENA_MAX, arenas);
        }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    let _ = threads;
}

fn run(cli: &Cli, input: &str, opts: CompileOptions) -> i32 {
    let _ = cli.asm; // assembly is the default output
    let timings = std::sync::Arc::new(Timings::new(opts.time_passes));
    // Before any worker thread exists: a thread's arena is chosen at its first allocation.
    limit_malloc_arenas(
        cli.jobs
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
    );
    let _ = rayon::ThreadPoolBuilder::new()
        .num_threads(cli.jobs.unwrap_or(0).max(usize::from(cli.jobs.is_some())))
        .stack_size(64 << 20)
        .build_global();
    let output = cli.output.as_ref().filter(|p| p.as_os_str() != "-");
    let from_stdin = input == "-" || input == STDIN_ARG;
    if let (Some(out), false) = (output, from_stdin) {
        if same_file(Path::new(input), out) {
            eprintln!(
                "sysyc: error: the output file '{}' is the input file; refusing to overwrite the source",
                out.display()
            );
            return EXIT_USAGE;
        }
    }
    // From here on, a failure leaves no output file behind.
    let fail = |code: i32| {
        if let (Some(out), false) = (output, cli.syntax_only) {
            remove_stale_output(out);
        }
        code
    };
    let read = timings.stage("read input", || {
        if from_stdin {
            let mut buf = Vec::new();
            std::io::stdin()
                .read_to_end(&mut buf)
                .map(|_| (buf, "<stdin>".to_string()))
                .map_err(|e| format!("cannot read stdin: {e}"))
        } else {
            std::fs::read(input)
                .map(|b| (b, input.to_string()))
                .map_err(|e| format!("cannot read '{input}': {e}"))
        }
    });
    let (source, name) = match read {
        Ok(r) => r,
        Err(e) => {
            eprintln!("sysyc: error: {e}");
            return fail(EXIT_INPUT);
        }
    };
    let syntax_only = cli.syntax_only;
    let sink = Output::new(output.cloned());
    // A way to see the internal-compiler-error report without a compiler bug.
    let debug_panic = std::env::var_os("SYSYC_DEBUG_PANIC").is_some_and(|v| v == "1");
    let t = timings.clone();
    let result = driver::with_big_stack(move || {
        if debug_panic {
            panic!("SYSYC_DEBUG_PANIC=1 asked for a panic in the compiler");
        }
        let mut sink = sink;
        let source = std::borrow::Cow::Owned(source);
        let report = driver::compile_to(source, &name, &opts, syntax_only, &t, &mut sink);
        (report, sink)
    });
    let (report, sink) = match result {
        Ok(r) => r,
        Err(panic) => return fail(ice(&panic)),
    };
    if !report.diagnostics.is_empty() {
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(report.diagnostics.as_bytes());
    }
    if report.failed {
        return fail(EXIT_INPUT);
    }
    if syntax_only {
        return EXIT_OK;
    }
    let committed = match report.write_error {
        Some(e) => Err(e),
        None => timings.stage("output writing", || sink.commit()),
    };
    if let Err(e) = committed {
        let shown = output.map_or("stdout".into(), |p| p.display().to_string());
        eprintln!("sysyc: error: cannot write '{shown}': {e}");
        return fail(EXIT_INPUT);
    }
    if timings.is_on() {
        eprint!("{}", timings.report());
    }
    EXIT_OK
}

/// Where the output goes, written as the compiler produces it: stdout (a reader that stops
/// early, as `| head` does, is its business: the rest is discarded), or the `-o` file. A file
/// is written to a temporary file beside it, created on the first write, and renamed into place
/// by `commit`, so a failure never leaves a partial output file: dropped without `commit` (an
/// error, a panic), the temporary file is removed. Something that exists and is not a regular
/// file (`/dev/null`, a pipe, a terminal) is written in place: renaming over it would replace a
/// device by a file.
struct Output {
    path: Option<PathBuf>,
    file: Option<std::io::BufWriter<std::fs::File>>,
    /// The temporary file being written, until it is renamed into place.
    tmp: Option<PathBuf>,
    stdout_closed: bool,
}

impl Output {
    fn new(path: Option<PathBuf>) -> Output {
        Output {
            path,
            file: None,
            tmp: None,
            stdout_closed: false,
        }
    }

    fn open(&mut self) -> std::io::Result<&mut std::io::BufWriter<std::fs::File>> {
        if self.file.is_none() {
            let path = self.path.as_ref().expect("a file output");
            let f = if std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
                std::fs::OpenOptions::new().write(true).open(path)?
            } else {
                let tmp = temp_path(path)?;
                let f = std::fs::File::create(&tmp)?;
                self.tmp = Some(tmp);
                f
            };
            self.file = Some(std::io::BufWriter::with_capacity(1 << 20, f));
        }
        Ok(self.file.as_mut().expect("opened"))
    }

    /// Finishes the output: flushes it and renames a temporary file into place.
    fn commit(mut self) -> std::io::Result<()> {
        if self.path.is_none() {
            return self.flush();
        }
        self.open()?.flush()?;
        drop(self.file.take());
        if let Some(tmp) = &self.tmp {
            std::fs::rename(tmp, self.path.as_ref().expect("a file output"))?;
            self.tmp = None;
        }
        Ok(())
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.write_all(buf)?;
        Ok(buf.len())
    }

    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        if self.path.is_some() {
            return self.open()?.write_all(buf);
        }
        if !self.stdout_closed && std::io::stdout().lock().write_all(buf).is_err() {
            self.stdout_closed = true;
        }
        Ok(())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match &mut self.file {
            Some(f) => f.flush(),
            None => {
                if !self.stdout_closed {
                    let _ = std::io::stdout().lock().flush();
                }
                Ok(())
            }
        }
    }
}

impl Drop for Output {
    fn drop(&mut self) {
        if let Some(tmp) = self.tmp.take() {
            drop(self.file.take());
            let _ = std::fs::remove_file(tmp);
        }
    }
}

/// The temporary file `commit` renames to `path`: hidden, beside it, named after it.
fn temp_path(path: &Path) -> std::io::Result<PathBuf> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let file = path
        .file_name()
        .ok_or_else(|| std::io::Error::other("not a file name"))?;
    Ok(dir.join(format!(
        ".{}.tmp{}",
        file.to_string_lossy(),
        std::process::id()
    )))
}

/// Whether `a` and `b` name the same existing file (through links and `..` too).
fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => false,
    }
}

/// Removes an output file a failed compile would otherwise leave stale, as gcc does; only a
/// regular file (never `/dev/null` or a directory).
fn remove_stale_output(path: &Path) {
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file()) {
        let _ = std::fs::remove_file(path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(args: &[&str]) -> Vec<String> {
        let v: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        normalize_args(&v).unwrap()
    }

    #[test]
    fn gcc_spellings() {
        for o in ["-O1", "-O2", "-O3", "-Os", "-O", "-Ofast"] {
            assert_eq!(norm(&[o]), ["--opt-level", "2"], "{o}");
        }
        assert_eq!(norm(&["-Og"]), ["--opt-level", "1"]);
        assert_eq!(norm(&["-O0"]), ["--opt-level", "0"]);
        assert_eq!(
            norm(&["-Wno-unused-variable"]),
            ["--no-warn", "unused-variable"]
        );
        assert_eq!(norm(&["-ferror-limit=3"]), ["--error-limit", "3"]);
        assert_eq!(norm(&["-fsyntax-only", "-"]), ["--syntax-only", STDIN_ARG]);
        assert_eq!(norm(&["-o", "-O2"]), ["-o", "-O2"]);
        assert_eq!(norm(&["-o", "-", "-"]), ["-o", "-", STDIN_ARG]);
        assert_eq!(norm(&["-march=rv64gc"]), ["--march", "rv64gc"]);
        assert!(normalize_args(&["-Ox".to_string()]).is_err());
    }

    #[test]
    fn march_accepts_rv64gc_and_supersets() {
        for ok in ["rv64gc", "rv64imafdc", "rv64gc_zba_zbb", "rv64gcv"] {
            assert!(check_march(ok).is_ok(), "{ok}");
        }
        for bad in ["rv32gc", "rv64imac", "x86-64", "rv64g"] {
            assert!(check_march(bad).is_err(), "{bad}");
        }
        let isa = parse_march("rv64gc_zba_zbb").unwrap();
        assert!(isa.zba && isa.zbb);
        assert_eq!(parse_march("rv64gcv_zicsr").unwrap(), Isa::default());
    }
}
