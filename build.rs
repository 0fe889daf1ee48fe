//! Records the git commit (and its date) the binary is built from, for `sysyc --version`.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
        .filter(|s| !s.is_empty())
}

fn main() {
    if let Some(commit) = git(&["rev-parse", "--short=12", "HEAD"]) {
        let dirty = git(&["status", "--porcelain", "--untracked-files=no"]).is_some();
        let suffix = if dirty { "-modified" } else { "" };
        println!("cargo:rustc-env=SYSYC_COMMIT={commit}{suffix}");
    }
    if let Some(date) = git(&["log", "-1", "--format=%cs"]) {
        println!("cargo:rustc-env=SYSYC_COMMIT_DATE={date}");
    }
    // Rebuild when HEAD moves (a commit, a checkout) or the index changes.
    if let Some(dir) = git(&["rev-parse", "--absolute-git-dir"]) {
        println!("cargo:rerun-if-changed={dir}/HEAD");
        println!("cargo:rerun-if-changed={dir}/logs/HEAD");
        println!("cargo:rerun-if-changed={dir}/index");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
