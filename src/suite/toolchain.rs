//! External tools and the artefacts we build from our own C sources: the SysY runtime library
//! (for RISC-V and for the host) and the qemu instruction-counting plugin.
//!
//! The C sources are embedded in this crate (`include_str!`), so the `sysyc` binary needs no
//! checkout to build them, and cargo rebuilds us when they change. Each artefact is built on
//! first use into `<target>/sysy-runtime/<arch>/` or `<target>/qemu-plugin/` and rebuilt when a
//! stamp (hash of the sources and the command) differs. A build happens in a private temporary
//! directory and its results are renamed into place, so concurrent test processes never see a
//! half-written file; within a process the first caller builds and the others wait.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The runtime library source, `runtime/sylib.c`.
pub const SYLIB_C: &str = include_str!("../../runtime/sylib.c");
/// The runtime library header, `runtime/sylib.h`.
pub const SYLIB_H: &str = include_str!("../../runtime/sylib.h");
/// The qemu plugin source, `perf/qemu-plugin/insn_count.c`.
pub const PLUGIN_C: &str = include_str!("../../perf/qemu-plugin/insn_count.c");

/// Which machine a runtime library is built for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arch {
    /// rv64gc, lp64d, Linux, static glibc: runs under `qemu-riscv64`.
    Riscv64,
    /// The machine we run on: for `--emit-llvm` output compiled by clang.
    Host,
}

/// The cross compiler used to assemble and link RISC-V code (`$SYSY_RV_CC` overrides).
pub fn rv_cc() -> String {
    std::env::var("SYSY_RV_CC").unwrap_or_else(|_| "riscv64-linux-gnu-gcc".into())
}

/// The user-mode emulator (`$SYSY_QEMU` overrides).
pub fn qemu() -> String {
    std::env::var("SYSY_QEMU").unwrap_or_else(|_| "qemu-riscv64".into())
}

/// qemu's `-cpu` arguments for code using `isa`'s extensions (none for plain rv64gc).
pub fn qemu_cpu(isa: crate::backend::riscv::isa::Isa) -> Vec<String> {
    if isa == Default::default() {
        return Vec::new();
    }
    let cpu = format!("rv64,zba={},zbb={}", isa.zba, isa.zbb);
    vec!["-cpu".into(), cpu]
}

/// clang for LLVM IR and the clang reference (`$SYSY_CLANG` overrides; else `clang-14`, else `clang`).
pub fn clang() -> String {
    if let Ok(c) = std::env::var("SYSY_CLANG") {
        return c;
    }
    if find_in_path("clang-14").is_some() || find_in_path("clang").is_none() {
        "clang-14".into()
    } else {
        "clang".into()
    }
}

/// The host C compiler for the host runtime and the plugin (`$CC`, else `gcc`, else `cc`, else clang).
pub fn host_cc() -> String {
    if let Ok(c) = std::env::var("CC") {
        return c;
    }
    for c in ["gcc", "cc"] {
        if find_in_path(c).is_some() {
            return c.into();
        }
    }
    clang()
}

/// The full path of `tool` found in `$PATH` (or `tool` itself if it contains a slash and exists).
pub fn find_in_path(tool: &str) -> Option<PathBuf> {
    if tool.contains('/') {
        return Path::new(tool).is_file().then(|| PathBuf::from(tool));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(tool))
        .find(|p| p.is_file())
}

/// `Ok` if every tool is in `$PATH`, else an error naming the missing ones and the fix.
pub fn require_tools(tools: &[String]) -> Result<(), String> {
    let missing: Vec<&str> = tools
        .iter()
        .filter(|t| find_in_path(t).is_none())
        .map(|t| t.as_str())
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "missing tool(s): {} -- run scripts/setup.sh to install the toolchain",
            missing.join(", ")
        ))
    }
}

/// The repository root: `$SYSYC_ROOT`, else the directory this crate was built from.
pub fn repo_root() -> PathBuf {
    match std::env::var_os("SYSYC_ROOT") {
        Some(r) => PathBuf::from(r),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")),
    }
}

/// Where built artefacts go: `$CARGO_TARGET_DIR`, else `<repo>/target`.
pub fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(t) => {
            let t = PathBuf::from(t);
            if t.is_absolute() {
                t
            } else {
                repo_root().join(t)
            }
        }
        None => repo_root().join("target"),
    }
}

/// A built runtime library and the header beside it.
#[derive(Clone, Debug)]
pub struct Runtime {
    /// `libsysy.a`.
    pub lib: PathBuf,
    /// `sylib.h` (for compiling a .sy file as C).
    pub header: PathBuf,
}

/// The runtime library for `arch`, built on first use (see the module comment).
pub fn runtime(arch: Arch) -> Result<Runtime, String> {
    static RV: OnceLock<Result<Runtime, String>> = OnceLock::new();
    static HOST: OnceLock<Result<Runtime, String>> = OnceLock::new();
    let cell = match arch {
        Arch::Riscv64 => &RV,
        Arch::Host => &HOST,
    };
    cell.get_or_init(|| build_runtime(arch)).clone()
}

fn build_runtime(arch: Arch) -> Result<Runtime, String> {
    let (cc, sub) = match arch {
        Arch::Riscv64 => (rv_cc(), "riscv64"),
        Arch::Host => (host_cc(), "host"),
    };
    require_tools(std::slice::from_ref(&cc))?;
    let dir = target_dir().join("sysy-runtime").join(sub);
    let rt = Runtime {
        lib: dir.join("libsysy.a"),
        header: dir.join("sylib.h"),
    };
    let cflags = ["-O2", "-Wall", "-fno-strict-aliasing"];
    let stamp = format!("{:016x}", hash(&[SYLIB_C, SYLIB_H, &cc, &cflags.join(" ")]));
    if is_fresh(&dir, &stamp, &[&rt.lib, &rt.header]) {
        return Ok(rt);
    }
    let tmp = private_dir(&dir)?;
    let result = (|| {
        write(&tmp.join("sylib.c"), SYLIB_C)?;
        write(&tmp.join("sylib.h"), SYLIB_H)?;
        let mut cmd = Command::new(&cc);
        cmd.args(cflags)
            .arg("-c")
            .arg("sylib.c")
            .arg("-o")
            .arg("sylib.o")
            .current_dir(&tmp);
        run_tool(&mut cmd)?;
        // `ar` of the cross binutils would do as well; the format is the same.
        let ar = match arch {
            Arch::Riscv64 if find_in_path("riscv64-linux-gnu-ar").is_some() => {
                "riscv64-linux-gnu-ar"
            }
            _ => "ar",
        };
        run_tool(
            Command::new(ar)
                .args(["rcs", "libsysy.a", "sylib.o"])
                .current_dir(&tmp),
        )?;
        rename(&tmp.join("libsysy.a"), &rt.lib)?;
        rename(&tmp.join("sylib.h"), &rt.header)?;
        write(&tmp.join("stamp"), &stamp)?;
        rename(&tmp.join("stamp"), &dir.join("stamp"))
    })();
    let _ = std::fs::remove_dir_all(&tmp);
    result
        .map(|()| rt)
        .map_err(|e| format!("building the {sub} runtime library: {e}"))
}

/// The qemu instruction-count plugin (`perf/qemu-plugin/insn_count.c`), built on first use.
pub fn insn_count_plugin() -> Result<PathBuf, String> {
    static PLUGIN: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    PLUGIN.get_or_init(build_plugin).clone()
}

fn build_plugin() -> Result<PathBuf, String> {
    let cc = host_cc();
    require_tools(std::slice::from_ref(&cc))?;
    let dir = target_dir().join("qemu-plugin");
    let so = dir.join("insn_count.so");
    let cflags = ["-O2", "-Wall", "-shared", "-fPIC"];
    let stamp = format!("{:016x}", hash(&[PLUGIN_C, &cc, &cflags.join(" ")]));
    if is_fresh(&dir, &stamp, &[&so]) {
        return Ok(so);
    }
    let tmp = private_dir(&dir)?;
    let result = (|| {
        write(&tmp.join("insn_count.c"), PLUGIN_C)?;
        let mut cmd = Command::new(&cc);
        cmd.args(cflags)
            .args(["insn_count.c", "-o", "insn_count.so"])
            .current_dir(&tmp);
        run_tool(&mut cmd)?;
        rename(&tmp.join("insn_count.so"), &so)?;
        write(&tmp.join("stamp"), &stamp)?;
        rename(&tmp.join("stamp"), &dir.join("stamp"))
    })();
    let _ = std::fs::remove_dir_all(&tmp);
    result
        .map(|()| so)
        .map_err(|e| format!("building the qemu plugin: {e}"))
}

fn is_fresh(dir: &Path, stamp: &str, outputs: &[&Path]) -> bool {
    std::fs::read_to_string(dir.join("stamp")).is_ok_and(|s| s == stamp)
        && outputs.iter().all(|p| p.is_file())
}

/// A fresh directory inside `parent` that no other process or thread uses.
fn private_dir(parent: &Path) -> Result<PathBuf, String> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let dir = parent.join(format!(".build-{}-{}", std::process::id(), n));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    Ok(dir)
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("writing {}: {e}", path.display()))
}

fn rename(from: &Path, to: &Path) -> Result<(), String> {
    std::fs::rename(from, to).map_err(|e| format!("renaming to {}: {e}", to.display()))
}

/// Runs a build tool, turning a failure into an error with its output.
pub fn run_tool(cmd: &mut Command) -> Result<(), String> {
    let out = cmd
        .output()
        .map_err(|e| format!("running {:?}: {e}", cmd.get_program()))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{:?} failed ({}):\n{}{}",
            cmd,
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// FNV-1a over the parts (with separators), for stamps: stable across runs and platforms.
pub fn hash(parts: &[&str]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for &b in p.as_bytes().iter().chain(&[0xff]) {
            h ^= b as u64;
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}
