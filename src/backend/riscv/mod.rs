//! RISC-V64 (rv64gc, lp64d) backend: instruction selection, register allocation, frames, emission.

/// Backend options.
#[derive(Clone, Debug, Default)]
pub struct RiscvOptions {
    pub opt_level: u8,
    pub check_regalloc: bool,
}

/// Compiles a module to assembly text.
pub fn compile_module(_m: &crate::ir::Module, _opts: &RiscvOptions) -> String {
    unimplemented!("riscv backend not merged yet")
}
