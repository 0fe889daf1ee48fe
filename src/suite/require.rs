//! The rule for what a test needs from outside the repository (the shared suites, qemu, the
//! cross compiler, LLVM): in CI a missing piece fails the run with a message naming it, so CI is
//! never green while testing nothing; elsewhere (a fresh clone, a laptop without qemu) the test
//! skips loudly.
//!
//! Strict when `SYSY_REQUIRE_SUITES` is `1` (`.ci/run` sets it), or when `CI` is `true` or `1`
//! (GitHub Actions, GitLab, most CI systems) and `SYSY_REQUIRE_SUITES` is not `0`.

/// Whether missing suites and tools must fail rather than skip.
pub fn strict() -> bool {
    strict_in(&|v| std::env::var(v).ok())
}

fn strict_in(env: &dyn Fn(&str) -> Option<String>) -> bool {
    let yes = |v: &str| matches!(v.trim().to_ascii_lowercase().as_str(), "1" | "true" | "yes");
    match env("SYSY_REQUIRE_SUITES") {
        Some(v) if !v.trim().is_empty() => yes(&v),
        _ => env("CI").is_some_and(|v| yes(&v)),
    }
}

/// Reports that `what` is missing (`why` says what to do about it): panics when [`strict`],
/// else prints a loud notice on stderr. Call it and return from the test.
pub fn missing(what: &str, why: &str) {
    let bar = "!".repeat(78);
    if strict() {
        panic!(
            "\n{bar}\nMISSING {what}\n{why}\n(required: SYSY_REQUIRE_SUITES=1 or CI=true; set \
             SYSY_REQUIRE_SUITES=0 to skip instead)\n{bar}\n"
        );
    }
    eprintln!("\n{bar}\n!!! SKIPPED: {what} missing.\n!!! {why}\n{bar}\n");
}

#[cfg(test)]
mod tests {
    use super::strict_in;

    #[test]
    fn ci_is_strict_unless_told_otherwise() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| pairs.iter().find(|p| p.0 == k).map(|p| p.1.to_string())
        };
        assert!(!strict_in(&env(&[])));
        assert!(strict_in(&env(&[("CI", "true")])));
        assert!(strict_in(&env(&[("SYSY_REQUIRE_SUITES", "1")])));
        assert!(!strict_in(&env(&[
            ("CI", "true"),
            ("SYSY_REQUIRE_SUITES", "0")
        ])));
        assert!(!strict_in(&env(&[("CI", "false")])));
    }
}
