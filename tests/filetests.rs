//! IR filetests: every `fixtures/ir/<group>/*.ir`.
//!
//! ```text
//! ; run: sccp dce
//! func @f() -> i32 {
//! bb0:
//!     ...
//! }
//! ; expect:
//! ; func @f() -> i32 {
//! ; ...
//! ```
//! The header names the steps, run in order on every defined function:
//! - a function pass (`sysyc::passes::by_name`) or a module pass of the pipelines (`effects`,
//!   `inline`, `globalopt`);
//!   the verifier runs after each one, naming it;
//! - `verify`: the verifier's findings must equal the file's `; error: <message>` lines, each
//!   written after the line it is about (an error with no place goes after the `func` line);
//! - `print`: `print(parse(print(m))) == print(m)`;
//! - `O1`, `O2`: the whole pipeline of that level, verifying after each pass.
//!
//! When `; expect:` is present, the module printed after the steps must equal the comment lines
//! that follow it. When the module has a `main`, it is also interpreted before and after the
//! steps (input from an optional `; stdin: <text>` line) and the results must agree whenever the
//! first run succeeds: differential testing for free.
//!
//! A `; xfail: <reason>` line marks a test expected to fail (a known bug); it fails once it passes.
//!
//! `BLESS=1 cargo test --test filetests` rewrites the expectations (`; expect:` sections and
//! `; error:` lines) from the actual results; review the diff like code.

use std::fmt::Write;
use std::path::{Path, PathBuf};
use sysyc::ir::{interp, parse, print, verify, Module};
use sysyc::passes::{self, Step};

const STEP_LIMIT: u64 = 10_000_000;

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|e| e == "ir") {
            out.push(p);
        }
    }
}

/// A module pass of the standard pipelines, by name.
fn module_pass(name: &str) -> Option<fn(&mut Module) -> bool> {
    passes::pipeline::O1
        .iter()
        .chain(passes::pipeline::O2)
        .find_map(|s| match s {
            Step::Module(p) if p.name == name => Some(p.run),
            _ => None,
        })
}

/// `(anchor line, message)` for every `; error:` line: the anchor is the closest line above that
/// is not a comment.
fn error_lines(text: &str) -> Vec<(String, String)> {
    let mut anchor = String::new();
    let mut out = Vec::new();
    for line in text.lines() {
        let t = line.trim();
        if let Some(msg) = t.strip_prefix("; error:") {
            out.push((anchor.clone(), msg.trim().to_string()));
        } else if !t.is_empty() && !t.starts_with(';') {
            anchor = t.to_string();
        }
    }
    out.sort();
    out
}

/// The module text with the verifier's errors as `; error:` lines.
fn annotated(m: &Module) -> String {
    let text = print::module(m);
    let mut by_func = std::collections::HashMap::new();
    for id in m.defined_funcs() {
        let f = &m.funcs[id];
        if let Err(e) = verify::function(f, &m.cx) {
            // `render` = a summary line, errors without a place, then the annotated function.
            let r = e.render(f, &m.cx);
            let mut lines = r.lines().skip(1);
            let mut top = Vec::new();
            let mut body = String::new();
            for l in lines.by_ref() {
                if l.starts_with("; error") {
                    top.push(l.to_string());
                } else {
                    body.push_str(l);
                    body.push('\n');
                    for t in &top {
                        body.push_str(t);
                        body.push('\n');
                    }
                    break;
                }
            }
            for l in lines {
                body.push_str(l);
                body.push('\n');
            }
            by_func.insert(print::function(f, &m.cx), body);
        }
    }
    let mut out = text;
    for (plain, ann) in by_func {
        out = out.replacen(&plain, &ann, 1);
    }
    out
}

fn as_comments(text: &str) -> String {
    let mut s = String::new();
    for l in text.trim_start_matches('\n').lines() {
        if l.is_empty() {
            s.push_str(";\n");
        } else {
            let _ = writeln!(s, "; {l}");
        }
    }
    s
}

struct Outcome {
    failures: Vec<String>,
    /// The file as blessing would write it.
    blessed: String,
}

fn run_file(path: &Path, text: &str) -> Outcome {
    let mut failures = Vec::new();
    let name = path.display();
    let steps: Vec<String> = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("; run:"))
        .map(|s| s.split_whitespace().map(String::from).collect())
        .unwrap_or_default();
    let stdin: String = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("; stdin:"))
        .unwrap_or("")
        .trim()
        .to_string();
    let (input, expect) = match text.find("\n; expect:") {
        Some(k) => (&text[..k + 1], Some(&text[k + "\n; expect:".len()..])),
        None => (text, None),
    };
    let bail = |failures: Vec<String>| Outcome {
        failures,
        blessed: text.to_string(),
    };
    let mut m = match parse::module(input) {
        Ok(m) => m,
        Err(e) => {
            return bail(vec![format!(
                "{name}:{}: parse error: {}",
                e.line, e.message
            )])
        }
    };
    let before = if m.cx.func_by_name("main").is_some() && !steps.iter().any(|s| s == "verify") {
        interp::run(&m, stdin.as_bytes(), STEP_LIMIT).ok()
    } else {
        None
    };
    let mut input_out = input.to_string();
    for step in &steps {
        match step.as_str() {
            "verify" => {
                let ann = annotated(&m);
                let (want, got) = (error_lines(input), error_lines(&ann));
                if want != got {
                    failures.push(format!("{name}: verifier errors differ\n--- expected\n{want:#?}\n--- actual\n{ann}"));
                }
                let header: String = input
                    .lines()
                    .take_while(|l| l.starts_with(';'))
                    .map(|l| format!("{l}\n"))
                    .collect();
                input_out = format!("{header}{}", ann.trim_start_matches('\n'));
            }
            "print" => {
                let p1 = print::module(&m);
                match parse::module(&p1) {
                    Ok(m2) => {
                        let p2 = print::module(&m2);
                        if p1 != p2 {
                            failures.push(format!("{name}: print/parse round trip differs\n--- first\n{p1}--- second\n{p2}"));
                        }
                    }
                    Err(e) => {
                        failures.push(format!("{name}: printed text does not parse: {e}\n{p1}"))
                    }
                }
            }
            "O1" | "O2" => {
                let opts = passes::PassOptions {
                    opt_level: step[1..].parse().unwrap(),
                    verify_each: true,
                    ..Default::default()
                };
                passes::optimize(&mut m, &opts);
            }
            p => {
                if let Some(pass) = passes::by_name(p) {
                    let Module { cx, funcs } = &mut m;
                    for id in cx.decls.keys().filter(|&id| cx.decls[id].defined) {
                        pass.apply_alone(&mut funcs[id], cx);
                        if let Err(e) = verify::function(&funcs[id], cx) {
                            failures.push(format!(
                                "{name}: IR broken after `{p}`:\n{}",
                                e.render(&funcs[id], cx)
                            ));
                            return bail(failures);
                        }
                    }
                } else if let Some(run) = module_pass(p) {
                    run(&mut m);
                    if let Err(e) = verify::module(&m) {
                        failures.push(format!("{name}: IR broken after `{p}`:\n{e}"));
                        return bail(failures);
                    }
                } else {
                    return bail(vec![format!("{name}: unknown pass `{p}`")]);
                }
            }
        }
    }
    if let Some(before) = before {
        let after = interp::run(&m, stdin.as_bytes(), STEP_LIMIT);
        if after.as_ref().ok() != Some(&before) {
            failures.push(format!(
                "{name}: interpreter results differ after the passes\n--- before\n{:?}\n--- after\n{:?}",
                (String::from_utf8_lossy(&before.0), before.1),
                after.map(|(o, c)| (String::from_utf8_lossy(&o).into_owned(), c))
            ));
        }
    }
    let actual = as_comments(&print::module(&m));
    let mut blessed = input_out;
    if let Some(expect) = expect {
        let want: Vec<&str> = expect
            .lines()
            .map(str::trim_end)
            .filter(|l| !l.is_empty())
            .collect();
        let got: Vec<&str> = actual.lines().collect();
        if want != got {
            failures.push(format!(
                "{name}: output differs\n--- expected\n{}\n--- actual\n{}",
                want.join("\n"),
                actual
            ));
        }
        if !blessed.ends_with('\n') {
            blessed.push('\n');
        }
        blessed.push_str("; expect:\n");
        blessed.push_str(&actual);
    }
    Outcome { failures, blessed }
}

#[test]
fn filetests() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/ir");
    let mut paths = Vec::new();
    files(&root, &mut paths);
    assert!(!paths.is_empty(), "no filetests under {}", root.display());
    let bless = std::env::var_os("BLESS").is_some();
    let mut failures = Vec::new();
    for p in &paths {
        let text = std::fs::read_to_string(p).unwrap();
        let xfail = text
            .lines()
            .find_map(|l| l.trim().strip_prefix("; xfail:"))
            .map(str::trim);
        let out = match std::panic::catch_unwind(|| run_file(p, &text)) {
            Ok(out) => out,
            Err(e) => {
                let msg = e
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                Outcome {
                    failures: vec![format!("{}: panicked: {msg}", p.display())],
                    blessed: text.clone(),
                }
            }
        };
        if let Some(why) = xfail {
            if out.failures.is_empty() {
                failures.push(format!(
                    "{}: passes now; remove its `; xfail:` line",
                    p.display()
                ));
            } else {
                eprintln!("expected failure {} ({why})", p.display());
            }
            continue;
        }
        if bless && out.blessed != text {
            std::fs::write(p, &out.blessed).unwrap();
            eprintln!("blessed {}", p.display());
            failures.extend(run_file(p, &out.blessed).failures);
        } else {
            failures.extend(out.failures);
        }
    }
    eprintln!("{} filetests, {} failures", paths.len(), failures.len());
    if !failures.is_empty() {
        panic!(
            "{} filetest failure(s):\n\n{}",
            failures.len(),
            failures.join("\n\n")
        );
    }
}

// ---- the functional suites through the interpreter ---------------------------------------

fn suites_root() -> PathBuf {
    match std::env::var_os("SYSY_SUITES") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/suites"),
    }
}

/// Instructions one suite case may execute in the interpreter (about 10 s in a debug build);
/// longer cases are skipped with a note (two hidden cases run ~2e9 steps).
const SUITE_STEP_LIMIT: u64 = 300_000_000;

/// Lowers every case of the functional suites, interprets it at `opt_level` (the pass pipeline
/// first when above 0) and compares with its `.out`. Returns the failures. Environment:
/// `SYSY_INTERP_DIRS` (comma-separated suite folders, default `functional,hidden_functional`),
/// `SYSY_INTERP_STEPS` (step limit per case), `SYSY_FILTER` (case name patterns).
fn interp_suites(opt_level: u8) -> Vec<String> {
    use rayon::prelude::*;
    use sysyc::suite::{self, compare};
    let names =
        std::env::var("SYSY_INTERP_DIRS").unwrap_or_else(|_| "functional,hidden_functional".into());
    let dirs: Vec<PathBuf> = names
        .split(',')
        .map(|d| suites_root().join(d))
        .filter(|d| d.is_dir())
        .collect();
    let limit: u64 = std::env::var("SYSY_INTERP_STEPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(SUITE_STEP_LIMIT);
    if dirs.is_empty() {
        eprintln!(
            "\n!!! SKIPPED interpreter suite run: {} not found (set SYSY_SUITES)\n",
            suites_root().display()
        );
        return Vec::new();
    }
    let filter = std::env::var("SYSY_FILTER").ok();
    let cases = suite::discover(&dirs, filter.as_deref()).expect("listing cases");
    let results: Vec<Option<String>> = cases
        .par_iter()
        .map(|case| {
            let t = std::time::Instant::now();
            let src = std::fs::read(&case.sy).unwrap();
            let input = case
                .input
                .as_ref()
                .map(|p| std::fs::read(p).unwrap())
                .unwrap_or_default();
            let expected = std::fs::read(case.expected.as_ref()?).unwrap();
            let run = std::panic::catch_unwind(|| {
                let mut m = sysyc::frontend::compile_to_ir(&src, &case.name)?;
                verify::module(&m)?;
                if opt_level > 0 {
                    let opts = passes::PassOptions {
                        opt_level,
                        verify_each: true,
                        ..Default::default()
                    };
                    passes::optimize(&mut m, &opts);
                }
                interp::run(&m, &input, limit)
            });
            let secs = t.elapsed().as_secs_f64();
            if secs > 5.0 {
                eprintln!("slow: {} took {secs:.1}s", case.name);
            }
            match run {
                Err(e) => {
                    let msg = e
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_default();
                    Some(format!(
                        "{}: panicked: {}",
                        case.name,
                        msg.lines().next().unwrap_or("")
                    ))
                }
                Ok(Err(e)) if e.starts_with("step limit") => {
                    eprintln!("skipped {}: more than {limit} steps", case.name);
                    None
                }
                Ok(Err(e)) => Some(format!("{}: {}", case.name, e.lines().next().unwrap_or(""))),
                Ok(Ok((out, code))) => {
                    let actual = compare::actual_text(&out, code);
                    (!compare::matches(&expected, &actual)).then(|| {
                        let culprit = if opt_level > 0 {
                            first_bad_step(&src, &input, &expected, opt_level)
                        } else {
                            String::new()
                        };
                        format!(
                            "{}: wrong output{culprit}\n{}",
                            case.name,
                            compare::diff(&expected, &actual, 2, 10)
                        )
                    })
                }
            }
        })
        .collect();
    let failures: Vec<String> = results.into_iter().flatten().collect();
    eprintln!(
        "interpreter at -O{opt_level}: {} cases, {} failures",
        cases.len(),
        failures.len()
    );
    failures
}

/// Replays the pipeline one step at a time, interpreting after each, and names the first step
/// after which the output is wrong (the quickest way to the miscompiling pass).
fn first_bad_step(src: &[u8], input: &[u8], expected: &[u8], opt_level: u8) -> String {
    use sysyc::suite::compare;
    let Ok(mut m) = sysyc::frontend::compile_to_ir(src, "case") else {
        return String::new();
    };
    let steps = if opt_level == 1 {
        passes::pipeline::O1
    } else {
        passes::pipeline::O2
    };
    let opts = passes::PassOptions {
        opt_level,
        verify_each: true,
        ..Default::default()
    };
    for (k, step) in steps.iter().enumerate() {
        passes::pipeline::run_steps(&mut m, std::slice::from_ref(step), &opts);
        let ok = match interp::run(&m, input, SUITE_STEP_LIMIT) {
            Ok((out, code)) => compare::matches(expected, &compare::actual_text(&out, code)),
            Err(_) => false,
        };
        if !ok {
            return format!(" (first wrong after step {k}, `{}`)", step.name());
        }
    }
    " (every single step was fine: the pipeline is not deterministic?)".to_string()
}

#[test]
fn interp_functional_suites_o0() {
    let failures = interp_suites(0);
    assert!(
        failures.is_empty(),
        "{} failure(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The pipeline must not change what programs print: `-O2` then interpret, against the `.out`.
#[test]
fn interp_functional_suites_o2() {
    let failures = interp_suites(2);
    assert!(
        failures.is_empty(),
        "{} failure(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// `print(parse(print(m))) == print(m)` for the IR of every suite program, as lowered and after
/// `-O2` (whose removals leave gaps in the numbering that the parser must keep).
#[test]
fn print_parse_round_trip_on_suites() {
    use rayon::prelude::*;
    use sysyc::suite;
    let dirs: Vec<PathBuf> = [
        "functional",
        "hidden_functional",
        "performance",
        "final_performance",
    ]
    .iter()
    .map(|d| suites_root().join(d))
    .filter(|d| d.is_dir())
    .collect();
    if dirs.is_empty() {
        eprintln!(
            "\n!!! SKIPPED round trip on suites: {} not found (set SYSY_SUITES)\n",
            suites_root().display()
        );
        return;
    }
    let filter = std::env::var("SYSY_FILTER").ok();
    let cases = suite::discover(&dirs, filter.as_deref()).expect("listing cases");
    let failures: Vec<String> = cases
        .par_iter()
        .filter_map(|case| {
            let src = std::fs::read(&case.sy).unwrap();
            let mut m = sysyc::frontend::compile_to_ir(&src, &case.name).ok()?;
            for opt_level in [0u8, 2] {
                if opt_level > 0 {
                    passes::optimize(
                        &mut m,
                        &passes::PassOptions {
                            opt_level,
                            ..Default::default()
                        },
                    );
                }
                let p1 = print::module(&m);
                let p2 = match parse::module(&p1) {
                    Ok(m2) => print::module(&m2),
                    Err(e) => return Some(format!("{} -O{opt_level}: {e}", case.name)),
                };
                if p1 != p2 {
                    let k = p1
                        .lines()
                        .zip(p2.lines())
                        .position(|(a, b)| a != b)
                        .unwrap_or(0);
                    return Some(format!(
                        "{} -O{opt_level}: differs at line {}",
                        case.name,
                        k + 1
                    ));
                }
            }
            None
        })
        .collect();
    eprintln!(
        "round trip: {} cases, {} failures",
        cases.len(),
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
