//! Code generation: RISC-V64 assembly (`riscv`) and textual LLVM IR (`llvm`).

pub mod llvm;
pub mod riscv;
