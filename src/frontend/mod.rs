//! Frontend: lexer, parser, semantic analysis and lowering of SysY to IR.
//!
//! Pipeline: `lexer::Lexer` (bytes -> tokens) -> `parser::Parser` (tokens -> `ast::Ast`, one
//! top-level item at a time) -> `sema::Checker` (-> `hir::Program`: resolved, typed, folded) ->
//! lowering to `crate::ir`. The first three run interleaved, item by item (`analyze`); the
//! diagnostics are those of the first stage with errors, which stops the pipeline.
//! Warnings come from sema (while folding), `lint` (on the checked program) and lowering (on the
//! CFG); `run` renders them all, in source order, with any errors.
//!
//! Stack: walks recurse along the tree, whose depth the parser caps at `ast::MAX_DEPTH`. Callers
//! must run the frontend on a thread with a large stack (see `STACK_SIZE`) to accept the deepest
//! programs; shallower limits give a diagnostic, never an overflow, only if the stack suffices.

pub mod ast;
pub mod diag;
pub mod hir;
pub mod lexer;
pub mod lint;
pub mod lower;
pub mod parser;
pub mod sema;
pub mod ssa;

use crate::timing::Timings;

#[cfg(test)]
mod tests;

/// Stack size the frontend needs for programs nested up to `ast::MAX_DEPTH` levels. Measured
/// (dev profile, `tests::stack_probe`): at most ~1.3 KB per level (nested calls `f(f(...))`,
/// 128 MB for 10^5 levels), ~640 B for parentheses/blocks/loops; twice that as a margin.
pub const STACK_SIZE: usize = 512 << 20;

/// The frontend's result on one file.
pub struct Frontend {
    /// The lowered module; `None` if there were errors (warnings do not count).
    pub module: Option<crate::ir::Module>,
    /// Every diagnostic, rendered in source order with the closing count (`2 warnings
    /// generated.`); empty when there is nothing to say.
    pub diagnostics: String,
}

/// Lexes, parses, checks, lints and lowers `source` under `opts` (`-w`, `-Wno-NAME`,
/// `-Werror`, the error limit, colour). Warnings that need the CFG (control reaching the end of
/// a non-void function) are read off the lowered functions.
pub fn run(source: &[u8], file_name: &str, opts: &diag::DiagOptions) -> Frontend {
    run_timed(
        source,
        file_name,
        opts,
        lower::Schedule::Parallel,
        &Timings::off(),
    )
}

/// `run`, lowering the functions as `schedule` says and timing each stage (lex, parse, sema,
/// lint, lower, drops, rendering) into `t`.
pub fn run_timed(
    source: &[u8],
    file_name: &str,
    opts: &diag::DiagOptions,
    schedule: lower::Schedule,
    t: &Timings,
) -> Frontend {
    let mut diags = diag::Diags::new(opts.clone());
    let module = (|| {
        // Lowering frees each function's checked body once the function is built: each gets
        // tables of its own.
        let mut program = analyze(source, true, &mut diags, t)?;
        let mut falls_off = Vec::new();
        let module = t.stage("lower", || {
            lower::lower_program(&mut program, schedule, &mut falls_off)
        });
        warn_falls_off(&program, falls_off, &mut diags);
        t.stage("drop checked program", || drop(program));
        diags.is_empty().then_some(module)
    })();
    let diagnostics = t.stage("diagnostics", || render(&diags, source, file_name));
    Frontend {
        module,
        diagnostics,
    }
}

/// Warns of the non-void functions other than `main` whose end control reaches (`falls_off`:
/// each with the span of its closing `}`).
fn warn_falls_off(
    program: &hir::Program,
    falls_off: Vec<(hir::FuncId, diag::Span)>,
    diags: &mut diag::Diags,
) {
    for (f, end) in falls_off {
        let func = &program.funcs[f];
        if func.ret.is_none() || Some(f) == program.main {
            continue;
        }
        diags.push(
            diag::Diagnostic::warning(
                diag::Lint::ReturnType,
                end,
                format!(
                    "control reaches the end of non-void function `{}`",
                    func.name
                ),
            )
            .with_note(Some(func.span), "the function is defined here"),
        );
    }
}

/// `run_timed` with the function bodies left to build: the module's declarations and globals
/// (and the deepest functions, built on the calling thread), and the checked bodies, which
/// `Lazy::build` lowers one function at a time, freeing each. `Err` holds the rendered
/// diagnostics when there are errors. The warnings read off the CFG come once every function is
/// built (`Lazy::finish`), after the others, as `run` gives them; they cannot become errors
/// (`-Werror` needs `run`), so the module is sure to be accepted.
pub fn run_lazy(
    source: &[u8],
    file_name: &str,
    opts: &diag::DiagOptions,
    t: &Timings,
) -> Result<(crate::ir::Module, Lazy), String> {
    assert!(!opts.werror, "lazy lowering keeps warnings warnings");
    let mut diags = diag::Diags::new(opts.clone());
    let Some(program) = analyze(source, true, &mut diags, t) else {
        return Err(t.stage("diagnostics", || render(&diags, source, file_name)));
    };
    let (module, pending) = t.stage("lower", || lower::lower_lazily(program));
    Ok((module, Lazy { pending, diags }))
}

/// The bodies `run_lazy` left to build, and the diagnostics so far.
pub struct Lazy {
    pending: lower::Pending,
    diags: diag::Diags,
}

impl Lazy {
    /// Builds the body of `f` (a function of the module `run_lazy` returned) unless it is built
    /// already.
    pub fn build(&self, f: &mut crate::ir::Function) {
        self.pending.build(f);
    }

    /// Every diagnostic, rendered as `run` renders them, once every function is built.
    pub fn finish(self, source: &[u8], file_name: &str, t: &Timings) -> String {
        let Lazy { pending, mut diags } = self;
        let (program, falls_off) = pending.finish();
        warn_falls_off(&program, falls_off, &mut diags);
        t.stage("drop checked program", || drop(program));
        t.stage("diagnostics", || render(&diags, source, file_name))
    }
}

fn render(diags: &diag::Diags, source: &[u8], file_name: &str) -> String {
    let mut text = diags.render(source, file_name);
    text.push_str(&diags.summary().unwrap_or_default());
    text
}

/// Lexing, parsing, semantic checks and the warnings on the checked program; `None` after
/// errors (in `diags`) before the warnings.
///
/// The stages run interleaved, one top-level item at a time: the parser pulls tokens from the
/// lexer and hands each item to sema, then drops its syntax tree, so neither the token stream
/// nor the whole tree is ever held (the peak is the checked program). With more than one
/// worker thread the parser runs on a thread of its own, a bounded queue of items ahead of
/// sema (`check_overlapped`); the `sema` row then holds the time sema adds to parsing. Each stage keeps its own
/// diagnostics, and the reported ones are those of the first stage with errors, as if each ran
/// over the whole file before the next: lexical errors (the lexer finishes the file even when
/// parsing stops), else syntax errors (sema stops at the first), else sema's.
fn analyze(
    source: &[u8],
    separate_bodies: bool,
    diags: &mut diag::Diags,
    t: &Timings,
) -> Option<hir::Program> {
    use std::time::Instant;
    let mut interner = lexer::Interner::default();
    let mut checker = sema::Checker::new(&mut interner, separate_bodies);
    let mut lex_diags = diag::Diags::new(diags.opts.clone());
    let mut parse_diags = diag::Diags::new(diags.opts.clone());
    let start = Instant::now();
    let check = if rayon::current_num_threads() > 1 {
        check_overlapped
    } else {
        check_in_turn
    };
    let parsing = check(Stages {
        source,
        interner: &mut interner,
        checker: &mut checker,
        lex_diags: &mut lex_diags,
        parse_diags: &mut parse_diags,
        diags,
    });
    t.add_stage("lex and parse", parsing);
    let sema_time = start.elapsed().saturating_sub(parsing);
    if lex_diags.has_errors() {
        *diags = lex_diags;
        return None;
    }
    if parse_diags.has_errors() {
        *diags = parse_diags;
        return None;
    }
    let checking = Instant::now();
    let program = checker.finish(&interner, source, diags);
    t.add_stage("sema", sema_time + checking.elapsed());
    if !diags.is_empty() {
        return None;
    }
    // Lint warnings (errors under -Werror) do not stop lowering, whose CFG gives one more.
    t.stage("lint", || lint::check(&program, diags));
    Some(program)
}

/// Syntax-tree nodes the parser gathers, in whole items, before it hands them over to the
/// checker (`check_overlapped`): a handover costs a thread wake-up, many times the work of a
/// small item.
const BATCH_NODES: usize = 1 << 12;

/// Batches of items the parser may hand over before the checker takes them.
const QUEUE: usize = 4;

/// What the item loop of `analyze` works on: the source, the interner, sema's checker and
/// each stage's diagnostics.
struct Stages<'a> {
    source: &'a [u8],
    interner: &'a mut lexer::Interner,
    checker: &'a mut sema::Checker,
    lex_diags: &'a mut diag::Diags,
    parse_diags: &'a mut diag::Diags,
    diags: &'a mut diag::Diags,
}

/// The item loop of `analyze` on one thread: each item is checked once parsed, unless there
/// were lexical or syntax errors (then the parser goes on alone, to report all of them) or the
/// checker's error limit is reached. Returns the time spent lexing and parsing.
fn check_in_turn(s: Stages) -> std::time::Duration {
    let start = std::time::Instant::now();
    let mut checking = std::time::Duration::ZERO;
    let mut parser = parser::Parser::new(s.source, s.interner, s.lex_diags, s.parse_diags);
    while let Some(item) = parser.next_item() {
        if parser.has_errors() || s.diags.is_full() {
            continue;
        }
        let at = std::time::Instant::now();
        s.checker
            .item(&item, &parser.ast, parser.interner(), s.source, s.diags);
        checking += at.elapsed();
    }
    parser.finish();
    start.elapsed().saturating_sub(checking)
}

/// `check_in_turn` with the lexer and parser on a thread of their own: they hand the items
/// over in batches of about `BATCH_NODES` nodes through a bounded queue, each item with the
/// names interned since the last one, and the checker (on this thread, with its own copy of
/// the names) takes the items in order as they come, so the diagnostics are those of
/// `check_in_turn` (which also runs alone when no thread can be started). Returns the time
/// the parsing thread spent lexing and parsing (not waiting for room in the queue).
fn check_overlapped(s: Stages) -> std::time::Duration {
    use std::time::{Duration, Instant};
    type Parsed = (ast::Item, ast::Ast, lexer::InternedSince);
    let mut names = s.interner.read_only_copy();
    let mut since = s.interner.counts();
    let (batches, parsed) = std::sync::mpsc::sync_channel::<Vec<Parsed>>(QUEUE);
    let overlapped = std::thread::scope(|scope| {
        // Borrowed for the parsing thread only: back with `s` if it cannot start.
        let (source, interner) = (s.source, &mut *s.interner);
        let (lex_diags, parse_diags) = (&mut *s.lex_diags, &mut *s.parse_diags);
        // The parser recurses along the tree as deep as `check_in_turn`'s caller's would.
        let thread = std::thread::Builder::new()
            .name("sysyc-parse".into())
            .stack_size(STACK_SIZE);
        let parsing = thread.spawn_scoped(scope, move || {
            let mut busy = Duration::ZERO;
            let mut resumed = Instant::now();
            let mut parser = parser::Parser::new(source, interner, lex_diags, parse_diags);
            let mut batch: Vec<Parsed> = Vec::new();
            let mut nodes = 0;
            let mut item = parser.next_item();
            while let Some(it) = item {
                if !parser.has_errors() {
                    let ast = parser.ast.take();
                    nodes += ast.exprs.len() + ast.stmts.len() + ast.inits.len() + 1;
                    let copied = parser.interner().copy_since(since);
                    since = parser.interner().counts();
                    batch.push((it, ast, copied));
                }
                item = parser.next_item();
                if nodes >= BATCH_NODES || (item.is_none() && !batch.is_empty()) {
                    nodes = 0;
                    busy += resumed.elapsed();
                    if batches.send(std::mem::take(&mut batch)).is_err() {
                        // The checker stopped (it panicked): nothing more to hand over.
                        break;
                    }
                    resumed = Instant::now();
                }
            }
            parser.finish();
            busy + resumed.elapsed()
        });
        let Ok(parsing) = parsing else {
            return None;
        };
        for (item, ast, copied) in parsed.into_iter().flatten() {
            names.extend(copied);
            if !s.diags.is_full() {
                s.checker.item(&item, &ast, &names, s.source, s.diags);
            }
        }
        Some(
            parsing
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
        )
    });
    // No thread to spare (the system's limit): one item after the other, as with one worker.
    overlapped.unwrap_or_else(|| check_in_turn(s))
}

/// Lexes, parses and checks `source` with the default options. `Err` holds the rendered
/// diagnostics (`file:line:col: error: ...` with source line and caret), ready for stderr;
/// warnings alone are not reported.
pub fn check(source: &[u8], file_name: &str) -> Result<hir::Program, String> {
    let mut diags = diag::Diags::default();
    match analyze(source, false, &mut diags, &Timings::off()) {
        Some(p) if diags.is_empty() => Ok(p),
        _ => Err(render(&diags, source, file_name)),
    }
}

/// Runs `f` on a fresh thread with `STACK_SIZE` bytes of stack (for deeply nested programs).
pub fn with_big_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(STACK_SIZE)
        .spawn(f)
        .expect("spawn frontend thread")
        .join()
        .unwrap_or_else(|e| std::panic::resume_unwind(e))
}

/// Parses, checks and lowers one SysY source file with the default options. `Err` holds
/// rendered diagnostics; warnings alone are dropped.
pub fn compile_to_ir(source: &[u8], file_name: &str) -> Result<crate::ir::Module, String> {
    let out = run(source, file_name, &diag::DiagOptions::default());
    out.module.ok_or(out.diagnostics)
}
