//! Finding test cases: every `NAME.sy` under the given directories (recursively), with its
//! optional `NAME.in` (stdin) and `NAME.out` (expected stdout + exit code). A case is named by
//! its path relative to the parent of the directory it was found under, without `.sy`
//! (`functional/NAME`), and cases come back sorted by name, so runs are reproducible.
//! A `.sy` with a `NAME.err` beside it is a diagnostics test (the frontend's tests check those),
//! not a program to run, and is skipped.

use std::path::{Path, PathBuf};

/// One program with its input and expectation.
#[derive(Clone, Debug)]
pub struct Case {
    /// `suite/sub/NAME`, relative to the parent of the searched directory.
    pub name: String,
    pub sy: PathBuf,
    /// Fed to stdin; empty stdin when absent.
    pub input: Option<PathBuf>,
    /// Expected output; a case without one is only compiled.
    pub expected: Option<PathBuf>,
}

/// All cases under `roots` (directories, or single `.sy` files) whose name contains one of the
/// comma-separated patterns of `filter` (all of them when `None` or empty).
pub fn discover(roots: &[PathBuf], filter: Option<&str>) -> Result<Vec<Case>, String> {
    let mut cases = Vec::new();
    for root in roots {
        let meta = std::fs::metadata(root).map_err(|e| format!("{}: {e}", root.display()))?;
        if meta.is_file() {
            let stem = root
                .file_stem()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            let suite = root
                .parent()
                .and_then(|p| p.file_name())
                .map(|s| s.to_string_lossy().into_owned() + "/")
                .unwrap_or_default();
            cases.push(make_case(format!("{suite}{stem}"), root));
        } else {
            let base = root.canonicalize().unwrap_or_else(|_| root.clone());
            let prefix = base.file_name().map(|s| s.to_string_lossy().into_owned());
            walk(root, &mut |sy| {
                let rel = sy.strip_prefix(root).unwrap_or(sy).with_extension("");
                let rel = rel.to_string_lossy().replace('\\', "/");
                let name = match &prefix {
                    Some(p) => format!("{p}/{rel}"),
                    None => rel,
                };
                cases.push(make_case(name, sy));
            })
            .map_err(|e| format!("{}: {e}", root.display()))?;
        }
    }
    let pats: Vec<&str> = filter
        .unwrap_or("")
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect();
    cases.retain(|c| pats.is_empty() || pats.iter().any(|p| c.name.contains(p)));
    cases.sort_by(|a, b| a.name.cmp(&b.name));
    cases.dedup_by(|a, b| a.sy == b.sy);
    Ok(cases)
}

fn make_case(name: String, sy: &Path) -> Case {
    let input = sy.with_extension("in");
    let expected = sy.with_extension("out");
    Case {
        name,
        sy: sy.to_path_buf(),
        input: input.is_file().then_some(input),
        expected: expected.is_file().then_some(expected),
    }
}

fn walk(dir: &Path, found: &mut dyn FnMut(&Path)) -> std::io::Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let path = e.path();
        if e.file_type()?.is_dir() {
            walk(&path, found)?;
        } else if path.extension().is_some_and(|x| x == "sy")
            && !path.with_extension("err").exists()
        {
            found(&path);
        }
    }
    Ok(())
}

/// Counts source lines (for throughput figures).
pub fn count_lines(text: &[u8]) -> usize {
    text.iter().filter(|&&b| b == b'\n').count()
        + usize::from(!text.is_empty() && !text.ends_with(b"\n"))
}
