//! Textual LLVM IR output (LLVM 14 dialect, typed pointers).

/// Emits the module as LLVM IR text.
pub fn emit_module(_m: &crate::ir::Module) -> String {
    unimplemented!("llvm emitter not merged yet")
}
