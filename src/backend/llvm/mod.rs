//! Textual LLVM IR output (LLVM 14 dialect, typed pointers).
