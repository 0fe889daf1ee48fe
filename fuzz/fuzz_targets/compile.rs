//! Arbitrary bytes through the whole pipeline at -O2 (RISC-V assembly, or LLVM IR when the
//! first byte is odd), with the IR verifier on after every pass: output or diagnostics, never a
//! panic, a hang or unbounded memory.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sysyc::driver::{self, CompileOptions, Emit};

fuzz_target!(|data: &[u8]| {
    let emit = if data.first().is_some_and(|b| b & 1 == 1) { Emit::Llvm } else { Emit::Asm };
    let opts = CompileOptions { opt_level: 2, emit, verify_each: true, ..CompileOptions::default() };
    let src = data.to_vec();
    let result = sysyc::frontend::with_big_stack(move || driver::compile(&src, "fuzz.sy", &opts));
    match result {
        Ok(text) => assert!(!text.is_empty(), "empty output"),
        Err(diags) => assert!(!diags.is_empty(), "an error without a diagnostic"),
    }
});
