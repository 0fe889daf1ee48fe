//! Arbitrary bytes into the lexer, parser and semantic checker: `Ok` or diagnostics, never a
//! panic, a hang or unbounded memory; the rendered diagnostics carry no raw control character.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let src = data.to_vec();
    // Deeply nested input recurses; the frontend expects a big stack (frontend::STACK_SIZE).
    let result = sysyc::frontend::with_big_stack(move || sysyc::frontend::check(&src, "fuzz.sy").map(|_| ()));
    if let Err(diags) = result {
        assert!(!diags.is_empty(), "an error without a diagnostic");
        // What reaches the terminal is escaped (frontend::diag): no raw control character.
        let raw = diags.chars().find(|&c| c.is_control() && c != '\n' && c != '\t');
        assert!(raw.is_none(), "raw {raw:?} in a diagnostic:\n{diags}");
    }
});
