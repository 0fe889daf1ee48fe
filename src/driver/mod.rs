//! The compilation pipeline: source -> IR -> passes -> backend, and the suite tools.

pub mod suite;

/// What `compile` produces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Emit {
    /// RISC-V64 assembly (GNU as syntax).
    Asm,
    /// Textual LLVM IR for LLVM 14.
    Llvm,
    /// Our own IR text.
    Ir,
}

/// Options of one compilation.
#[derive(Clone, Debug)]
pub struct CompileOptions {
    /// 0, 1 or 2.
    pub opt_level: u8,
    pub emit: Emit,
    /// Run the IR verifier after every pass (always on in tests and debug builds).
    pub verify_each: bool,
}

impl Default for CompileOptions {
    fn default() -> Self {
        CompileOptions { opt_level: 0, emit: Emit::Asm, verify_each: cfg!(debug_assertions) }
    }
}

/// Compiles one SysY source to text. `Err` holds rendered diagnostics
/// (`file:line:col: error: ...`, the source line and a caret), ready for stderr.
pub fn compile(_source: &[u8], _file_name: &str, _opts: &CompileOptions) -> Result<String, String> {
    Err("sysyc: the compiler pipeline is not wired yet".to_string())
}
