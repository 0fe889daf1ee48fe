//! Frontend: lexer, parser, semantic analysis and lowering of SysY to IR.
//!
//! Pipeline: `lexer::lex` (bytes -> tokens) -> `parser::parse` (tokens -> `ast::Ast`) ->
//! `sema::check` (-> `hir::Program`: resolved, typed, folded) -> lowering to `crate::ir`.
//! Each stage reports into one `diag::Diags`; the first stage with errors stops the pipeline and
//! the rendered diagnostics are returned as `Err`.
//!
//! Stack: walks recurse along the tree, whose depth the parser caps at `ast::MAX_DEPTH`. Callers
//! must run the frontend on a thread with a large stack (see `STACK_SIZE`) to accept the deepest
//! programs; shallower limits give a diagnostic, never an overflow, only if the stack suffices.

pub mod ast;
pub mod diag;
pub mod hir;
pub mod lexer;
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

/// Lexes, parses and checks `source`. `Err` holds the rendered diagnostics
/// (`file:line:col: error: ...` with source line and caret), ready for stderr.
pub fn check(source: &[u8], file_name: &str) -> Result<hir::Program, String> {
    check_timed(source, file_name, &Timings::off())
}

/// `check`, timing lexing, parsing and semantic analysis into `t`.
pub fn check_timed(source: &[u8], file_name: &str, t: &Timings) -> Result<hir::Program, String> {
    let mut diags = diag::Diags::default();
    let mut interner = lexer::Interner::default();
    let toks = t.time("lex", || lexer::lex(source, &mut interner, &mut diags));
    if !diags.is_empty() {
        return Err(diags.render(source, file_name));
    }
    let Some(ast) = t.time("parse", || parser::parse(&toks, &interner, &mut diags)) else {
        return Err(diags.render(source, file_name));
    };
    drop(toks);
    let program = t.time("sema", || {
        sema::check(&ast, &mut interner, source, &mut diags)
    });
    t.time("drop syntax tree", || drop(ast));
    if !diags.is_empty() {
        return Err(diags.render(source, file_name));
    }
    Ok(program)
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

/// Parses, checks and lowers one SysY source file. `Err` holds rendered diagnostics.
pub fn compile_to_ir(source: &[u8], file_name: &str) -> Result<crate::ir::Module, String> {
    compile_to_ir_timed(source, file_name, &Timings::off())
}

/// `compile_to_ir`, timing each stage into `t`.
pub fn compile_to_ir_timed(
    source: &[u8],
    file_name: &str,
    t: &Timings,
) -> Result<crate::ir::Module, String> {
    let program = check_timed(source, file_name, t)?;
    let m = t.time("lower", || lower::lower_program(&program));
    t.time("drop checked program", || drop(program));
    Ok(m)
}
