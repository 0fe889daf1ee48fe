//! The LLVM IR as a first-class output: every case of `functional` and `hidden_functional`
//! compiled with `--emit-llvm -O2` (default target: riscv64, lp64d), then `llc-14 -O2
//! -filetype=obj` with no target flags, linked with the riscv64 cross gcc and our runtime, run
//! under qemu-riscv64 and compared with the expected output. Also: `opt-14 -verify` accepts the
//! IR as it is.
//!
//! LLVM 14's llc takes the float ABI for code generation from the `target-abi` module flag and
//! the extensions from the function attributes, so the code is right for lp64d; but it writes
//! the ELF header's float-ABI bits from its command line only (soft-float without
//! `-target-abi`), so GNU ld is told `--no-warn-mismatch` to link the object with the lp64d
//! runtime and libc. `header_flags_are_llc14s` pins that behaviour down: when a newer llc writes
//! the right header, it fails and the linker flag can go.
//!
//! Skipped, loudly, when the suites or the tools are missing (as the suite tests are).

use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
use sysyc::driver::{self, CompileOptions, Emit};
use sysyc::suite::exec::{self, Status};
use sysyc::suite::{compare, discover, toolchain, Case};

fn suites_root() -> PathBuf {
    match std::env::var_os("SYSY_SUITES") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/suites"),
    }
}

fn tools_present() -> bool {
    let tools = ["llc-14", "opt-14"].map(String::from);
    let mut all = tools.to_vec();
    all.extend([toolchain::rv_cc(), toolchain::qemu()]);
    match toolchain::require_tools(&all) {
        Ok(()) => true,
        Err(e) => {
            eprintln!("\n!!! SKIPPED: {e}\n");
            false
        }
    }
}

fn options() -> CompileOptions {
    CompileOptions {
        opt_level: 2,
        emit: Emit::Llvm,
        ..CompileOptions::default()
    }
}

/// Compiles, runs and checks one case in `dir`; `Err` says what went wrong.
fn run_case(case: &Case, dir: &Path, runtime: &Path) -> Result<(), String> {
    let src = std::fs::read(&case.sy).map_err(|e| e.to_string())?;
    let ir = driver::compile(&src, &case.sy.to_string_lossy(), &options())?;
    let ll = dir.join("out.ll");
    let obj = dir.join("out.o");
    let exe = dir.join("exe");
    std::fs::write(&ll, ir).map_err(|e| e.to_string())?;
    let limit = Some(Duration::from_secs(120));
    let step = |cmd: &mut Command, what: &str| -> Result<(), String> {
        let out = exec::run(cmd, None, limit)?;
        match out.status {
            Status::Exited(0) => Ok(()),
            s => Err(format!(
                "{what}: {s}\n{}",
                String::from_utf8_lossy(&out.stderr)
            )),
        }
    };
    step(
        Command::new("llc-14")
            .args(["-O2", "-filetype=obj"])
            .arg(&ll)
            .arg("-o")
            .arg(&obj),
        "llc-14",
    )?;
    step(
        Command::new(toolchain::rv_cc())
            .args(["-static", "-Wl,--no-warn-mismatch"])
            .arg(&obj)
            .arg(runtime)
            .arg("-o")
            .arg(&exe),
        "link",
    )?;
    let mut run = Command::new(toolchain::qemu());
    run.arg(&exe);
    let out = exec::run(
        &mut run,
        case.input.as_deref(),
        Some(Duration::from_secs(60)),
    )?;
    let code = match out.status {
        Status::Exited(c) => c,
        s => return Err(format!("run: {s}")),
    };
    let actual = compare::actual_text(&out.stdout, code);
    let expected = match &case.expected {
        Some(p) => std::fs::read(p).map_err(|e| e.to_string())?,
        None => return Ok(()),
    };
    if compare::matches(&expected, &actual) {
        Ok(())
    } else {
        Err(compare::diff(&expected, &actual, 2, 30))
    }
}

#[test]
fn functional_suites_through_llc_without_target_flags() {
    let root = suites_root();
    let dirs: Vec<PathBuf> = ["functional", "hidden_functional"]
        .iter()
        .map(|d| root.join(d))
        .filter(|d| d.is_dir())
        .collect();
    if dirs.is_empty() {
        eprintln!("\n!!! SKIPPED: no suites under {}\n", root.display());
        return;
    }
    if !tools_present() {
        return;
    }
    let runtime = toolchain::runtime(toolchain::Arch::Riscv64).expect("runtime library");
    let filter = std::env::var("SYSY_FILTER").ok();
    let cases = discover(&dirs, filter.as_deref()).expect("listing cases");
    assert!(!cases.is_empty());
    let work = std::env::temp_dir().join(format!("sysyc-llc-{}", std::process::id()));
    let failures: Vec<String> = cases
        .par_iter()
        .enumerate()
        .filter_map(|(k, case)| {
            let dir = work.join(k.to_string());
            std::fs::create_dir_all(&dir).ok()?;
            let r = run_case(case, &dir, &runtime.lib);
            let _ = std::fs::remove_dir_all(&dir);
            r.err().map(|e| format!("---- {} ----\n{e}", case.name))
        })
        .collect();
    let _ = std::fs::remove_dir_all(&work);
    assert!(
        failures.is_empty(),
        "{} of {} cases failed through llc-14:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
    eprintln!("{} cases passed through llc-14", cases.len());
}

/// The IR passes `opt-14 -verify` and llc-14 keeps the lp64d calling convention from the module
/// flag (a float argument goes in `fa0`), writing a soft-float ELF header (see the module
/// comment).
#[test]
fn header_flags_are_llc14s() {
    if !tools_present() {
        return;
    }
    let src = b"float half(float x) { return x / 2; }\nint main() { putfloat(half(getfloat())); return 0; }\n";
    let ir = driver::compile(src, "f.sy", &options()).unwrap();
    assert!(ir.contains("target triple = \"riscv64-unknown-linux-gnu\""));
    assert!(ir.contains("!\"target-abi\", !\"lp64d\""));
    let dir = std::env::temp_dir().join(format!("sysyc-llc-flags-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ll = dir.join("f.ll");
    std::fs::write(&ll, &ir).unwrap();
    let verify = Command::new("opt-14")
        .args(["-verify", "-disable-output"])
        .arg(&ll)
        .output()
        .unwrap();
    assert!(
        verify.status.success(),
        "{}",
        String::from_utf8_lossy(&verify.stderr)
    );
    let asm = Command::new("llc-14")
        .args(["-O2", "-o", "-"])
        .arg(&ll)
        .output()
        .unwrap();
    assert!(asm.status.success());
    let asm = String::from_utf8_lossy(&asm.stdout);
    assert!(asm.contains("fmv.s\tfa0") || asm.contains("fa0"), "{asm}");
    let obj = dir.join("f.o");
    let st = Command::new("llc-14")
        .args(["-O2", "-filetype=obj", "-o"])
        .arg(&obj)
        .arg(&ll)
        .status()
        .unwrap();
    assert!(st.success());
    let bytes = std::fs::read(&obj).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    // ELF64 e_flags sit at offset 0x30; bits 1-2 are the float ABI (0 soft, 2 single, 4 double).
    let flags = u32::from_le_bytes(bytes[0x30..0x34].try_into().unwrap());
    assert_eq!(
        flags & 0x6,
        0,
        "llc now writes the float ABI into the ELF header (e_flags {flags:#x}): drop \
         --no-warn-mismatch from the link above"
    );
}
