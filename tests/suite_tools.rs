//! The suite tools as users and CI run them: the `sysyc` binary in separate processes.
//!
//! - a suite split into 3 shards (3 processes at once) covers every case exactly once, and
//!   `sysyc merge` of the shards gives the same cases and outcomes as one unsharded run, in
//!   JSON and in JUnit XML (parsed, one `testcase` per case, failures with their diff);
//! - `sysyc bench` counts the same instructions whatever the caller's environment, working
//!   directory and `TMPDIR`, and `--runs N` records the spread of the timer;
//! - result files of a newer schema are refused by name.
//!
//! Needs qemu and the cross gcc: missing tools fail in CI and skip loudly elsewhere.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use sysyc::suite::{require, toolchain, Compiler};

const SYSYC: &str = env!("CARGO_BIN_EXE_sysyc");

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A scratch directory for one test, emptied first.
fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("sysyc-tools-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn have_tools() -> bool {
    match toolchain::require_tools(&Compiler::Gcc.tools()) {
        Ok(()) => true,
        Err(e) => {
            require::missing("tools for the suite-tool tests", &e);
            false
        }
    }
}

/// `sysyc ARGS` with no scheduler variables (so no shard is picked up from the environment).
fn sysyc(args: &[&str]) -> Command {
    let mut c = Command::new(SYSYC);
    c.args(args).current_dir(repo());
    for v in [
        "SYSY_SHARD",
        "CI_NODE_INDEX",
        "CI_NODE_TOTAL",
        "JOB_COMPLETION_INDEX",
        "SYSY_SHARD_TOTAL",
        "SLURM_ARRAY_TASK_ID",
        "SLURM_ARRAY_TASK_COUNT",
        "SLURM_ARRAY_TASK_MIN",
    ] {
        c.env_remove(v);
    }
    c
}

fn show(o: &Output) -> String {
    format!(
        "status {}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn json(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// Case name -> outcome of a `sysyc test --json` file.
fn outcomes(path: &Path) -> BTreeMap<String, String> {
    json(path)["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap().to_string(),
                c["outcome"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// Case name -> failure text (None for a pass) of a JUnit file, checked to parse.
fn junit_cases(path: &Path) -> BTreeMap<String, Option<String>> {
    let text = std::fs::read_to_string(path).unwrap();
    let doc = roxmltree::Document::parse(&text)
        .unwrap_or_else(|e| panic!("{} is not XML: {e}\n{text}", path.display()));
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "testsuites");
    let mut cases = BTreeMap::new();
    for tc in root.descendants().filter(|n| n.has_tag_name("testcase")) {
        let class = tc.attribute("classname").unwrap();
        let name = format!(
            "{}/{}",
            class.replace('.', "/"),
            tc.attribute("name").unwrap()
        );
        assert!(tc.attribute("time").unwrap().parse::<f64>().is_ok());
        let failure = tc
            .children()
            .find(|n| n.has_tag_name("failure") || n.has_tag_name("error"))
            .map(|f| {
                format!(
                    "{}\n{}",
                    f.attribute("message").unwrap_or(""),
                    f.text().unwrap_or("")
                )
            });
        assert!(
            cases.insert(name.clone(), failure).is_none(),
            "{name} twice"
        );
    }
    let tests: usize = root.attribute("tests").unwrap().parse().unwrap();
    assert_eq!(
        tests,
        cases.len(),
        "the tests attribute counts the testcases"
    );
    cases
}

#[test]
fn three_shards_merge_into_the_same_result_as_one_run() {
    if !have_tools() {
        return;
    }
    let dir = scratch("shards");
    // Our fixtures plus one case whose expected output is wrong, so statuses and diffs are
    // compared too.
    let broken = dir.join("broken");
    std::fs::create_dir_all(&broken).unwrap();
    std::fs::write(
        broken.join("squares.sy"),
        "int main() { int i = 0; while (i < 8) { putint(i * i); putch(10); i = i + 1; } return 0; }\n",
    )
    .unwrap();
    std::fs::write(
        broken.join("squares.out"),
        "0\n1\n4\n9\n15\n25\n36\n49\n0\n",
    )
    .unwrap();
    let suites = [
        repo().join("fixtures/sysy").display().to_string(),
        broken.display().to_string(),
    ];
    let run = |extra: &[&str], tag: &str| {
        let (j, x) = (
            dir.join(format!("{tag}.json")),
            dir.join(format!("{tag}.xml")),
        );
        let mut args: Vec<&str> = vec!["test", "-q", "-j", "1"];
        args.extend(suites.iter().map(String::as_str));
        args.extend(extra);
        let (js, xs) = (j.display().to_string(), x.display().to_string());
        args.extend(["--json", &js, "--junit", &xs]);
        // The JSON and JUnit files say everything; the logs would only crowd the test output.
        sysyc(&args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    };
    // Three shards at once, as separate processes, then one whole run.
    let shards: Vec<_> = (1..=3)
        .map(|k| run(&["--shard", &format!("{k}/3")], &format!("shard{k}")))
        .collect();
    let codes: Vec<i32> = shards
        .into_iter()
        .map(|c| c.wait_with_output().unwrap().status.code().unwrap())
        .collect();
    let whole = run(&[], "whole").wait_with_output().unwrap();
    assert_eq!(
        whole.status.code(),
        Some(1),
        "the broken case fails the run"
    );

    let parts: Vec<BTreeMap<String, String>> = (1..=3)
        .map(|k| outcomes(&dir.join(format!("shard{k}.json"))))
        .collect();
    let all = outcomes(&dir.join("whole.json"));
    assert!(all.len() > 30, "{} cases", all.len());
    let mut union = BTreeMap::new();
    for (k, p) in parts.iter().enumerate() {
        assert!(!p.is_empty(), "shard {} is empty", k + 1);
        for (name, outcome) in p {
            assert!(
                union.insert(name.clone(), outcome.clone()).is_none(),
                "{name} in two shards"
            );
        }
        // Exit codes follow the shard's own outcomes.
        let failed = p.values().any(|o| o != "pass");
        assert_eq!(codes[k], i32::from(failed), "shard {}", k + 1);
    }
    assert_eq!(union, all, "the shards together are the whole run");
    assert_eq!(all["broken/squares"], "wrong output");

    let merged = dir.join("merged.json");
    let merged_xml = dir.join("merged.xml");
    let mut args: Vec<String> = vec!["merge".into()];
    args.extend((1..=3).map(|k| dir.join(format!("shard{k}.json")).display().to_string()));
    args.extend([
        "-o".into(),
        merged.display().to_string(),
        "--junit".into(),
        merged_xml.display().to_string(),
    ]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = sysyc(&args).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "merged results have a failure\n{}",
        show(&out)
    );
    assert_eq!(outcomes(&merged), all);
    let m = json(&merged);
    assert!(m.get("shard").is_none(), "a merged file is a whole run");
    assert_eq!(m["failed"], 1);
    assert_eq!(m["schema_version"], 1);

    // JUnit: one testcase per case, the same in the merged and the whole file, and the
    // failure carries the unified diff (- expected, + got).
    let junit_whole = junit_cases(&dir.join("whole.xml"));
    let junit_merged = junit_cases(&merged_xml);
    assert_eq!(junit_merged.len(), all.len());
    assert_eq!(
        junit_merged.keys().collect::<Vec<_>>(),
        all.keys().collect::<Vec<_>>()
    );
    assert_eq!(
        junit_merged
            .values()
            .map(Option::is_some)
            .collect::<Vec<_>>(),
        junit_whole
            .values()
            .map(Option::is_some)
            .collect::<Vec<_>>()
    );
    let failure = junit_merged["broken/squares"].as_ref().unwrap();
    assert!(
        failure.starts_with("wrong output") && failure.contains("\n 9\n-15\n+16\n 25\n"),
        "{failure}"
    );
    // A shard missing from the merge is refused.
    let partial = sysyc(&[
        "merge",
        &dir.join("shard1.json").display().to_string(),
        "-o",
        &dir.join("partial.json").display().to_string(),
    ])
    .output()
    .unwrap();
    assert_eq!(partial.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&partial.stderr).contains("missing shard(s) 2/3, 3/3"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn instruction_counts_do_not_depend_on_the_callers_environment() {
    if !have_tools() {
        return;
    }
    let dir = scratch("env");
    let cases = repo().join("fixtures/sysy/control").display().to_string();
    let filter = "deep_expr,exhausted,counted_walks";
    let bench = |tag: &str, runs: &str, cmd: &mut dyn FnMut(&mut Command)| {
        let save = dir.join(format!("{tag}.json"));
        let junit = dir.join(format!("{tag}.xml"));
        let mut c = sysyc(&[
            "bench",
            &cases,
            "--filter",
            filter,
            "--runs",
            runs,
            "--save",
            &save.display().to_string(),
            "--junit",
            &junit.display().to_string(),
        ]);
        cmd(&mut c);
        let out = c.output().unwrap();
        assert!(out.status.success(), "{}", show(&out));
        (json(&save), junit)
    };
    let (a, a_xml) = bench("plain", "5", &mut |_| {});
    // A different environment (much larger, other TMPDIR), working directory and argv[0] path.
    let other_tmp = dir.join("a-much-longer-temporary-directory-name-than-usual");
    std::fs::create_dir_all(&other_tmp).unwrap();
    let (b, _) = bench("other", "1", &mut |c| {
        c.env("SYSYC_TEST_PADDING", "x".repeat(20_000))
            .env("TMPDIR", &other_tmp)
            .current_dir(&dir);
    });
    let counts = |doc: &serde_json::Value| -> Vec<(String, u64)> {
        doc["cases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["name"].as_str().unwrap().to_string(),
                    c["sysyc"]["insns"].as_u64().expect("an instruction count"),
                )
            })
            .collect()
    };
    assert_eq!(counts(&a).len(), 3);
    assert_eq!(counts(&a), counts(&b));
    // --runs 5 keeps the spread of the timer.
    for c in a["cases"].as_array().unwrap() {
        let t = &c["sysyc"]["timer"];
        assert_eq!(t["n"], 5, "{c}");
        let (min, med, max) = (
            t["min"].as_f64().unwrap(),
            t["median"].as_f64().unwrap(),
            t["max"].as_f64().unwrap(),
        );
        assert!(min <= med && med <= max, "{t}");
        assert!(t["ci95"].is_array(), "{t}");
    }
    assert_eq!(junit_cases(&a_xml).len(), 3);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn result_files_of_a_newer_schema_are_refused() {
    let dir = scratch("schema");
    let f = dir.join("future.json");
    std::fs::write(
        &f,
        r#"{"schema_version": 999, "tool": "sysyc test", "compiler": "sysyc -O2",
            "passed": 0, "failed": 0, "cases": []}"#,
    )
    .unwrap();
    let out = sysyc(&[
        "merge",
        &f.display().to_string(),
        "-o",
        &dir.join("x.json").display().to_string(),
    ])
    .output()
    .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("future.json: written by a newer sysyc (schema version 999"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
