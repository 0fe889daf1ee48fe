//! `sysyc merge`: joins the result files of shards (`sysyc test --json`, `sysyc bench --save`)
//! into one, as if the suite had run in one process: cases sorted by name, totals recomputed,
//! the shard mark dropped. The merged file works wherever an unsharded one does
//! (`bench --baseline`, `--reference-from`, `--history`), and merge itself writes JUnit XML and,
//! for benchmarks, the HTML report and the baseline comparison.
//!
//! Refused: files of different tools or settings (compiler, optimization level, reference), a
//! case present in two files (overlapping shards), and shards of a split that are missing
//! (`2/3` without `1/3`), unless `--partial`.

use super::bench::{self, Outputs};
use super::junit;
use super::results::{self, BenchReport, Report, TestReport, SCHEMA_VERSION};
use super::stats::geomean;
use argh::FromArgs;
use std::path::PathBuf;

/// Join the JSON results of shards into one (JUnit XML and the HTML report too).
#[derive(FromArgs, Debug)]
#[argh(subcommand, name = "merge")]
pub struct MergeArgs {
    /// result files written by `sysyc test --json` or `sysyc bench --save`
    #[argh(positional)]
    pub inputs: Vec<PathBuf>,
    /// the merged JSON file
    #[argh(option, short = 'o')]
    pub out: Option<PathBuf>,
    /// also write the merged results as JUnit XML
    #[argh(option)]
    pub junit: Option<PathBuf>,
    /// benchmarks: also write the HTML report
    #[argh(option)]
    pub html: Option<PathBuf>,
    /// benchmarks: compare with this baseline (regressions make the exit code 1)
    #[argh(option)]
    pub baseline: Option<PathBuf>,
    /// benchmarks: percent growth that counts as a regression (default 2)
    #[argh(option, default = "2.0")]
    pub threshold: f64,
    /// benchmarks: a directory of saved runs for the report's trend view
    #[argh(option)]
    pub history: Option<PathBuf>,
    /// accept an incomplete set of shards
    #[argh(switch)]
    pub partial: bool,
}

/// `sysyc merge`: returns the exit code (0 ok, 1 failing cases or regressions in the merged
/// results, 2 on bad input).
pub fn run_merge(args: &MergeArgs) -> i32 {
    match merge_files(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("sysyc merge: {e}");
            2
        }
    }
}

fn merge_files(args: &MergeArgs) -> Result<i32, String> {
    if args.inputs.is_empty() {
        return Err("no input files".into());
    }
    if args.out.is_none() && args.junit.is_none() && args.html.is_none() {
        return Err("nothing to write: give -o FILE (and/or --junit, --html)".into());
    }
    let reports = args
        .inputs
        .iter()
        .map(|p| results::read(p))
        .collect::<Result<Vec<Report>, String>>()?;
    let shards: Vec<Option<super::shard::Shard>> = reports
        .iter()
        .map(|r| match r {
            Report::Test(t) => t.shard,
            Report::Bench(b) => b.shard,
        })
        .collect();
    check_shards(&shards, &args.inputs, args.partial)?;
    if reports.iter().all(|r| matches!(r, Report::Test(_))) {
        let tests: Vec<TestReport> = reports
            .into_iter()
            .filter_map(|r| match r {
                Report::Test(t) => Some(t),
                Report::Bench(_) => None,
            })
            .collect();
        let merged = merge_tests(tests, &args.inputs)?;
        println!(
            "{}: {} passed, {} failed ({} cases from {} files)",
            merged.compiler,
            merged.passed,
            merged.failed,
            merged.cases.len(),
            args.inputs.len()
        );
        if let Some(p) = &args.out {
            results::write(p, &merged)?;
        }
        if let Some(p) = &args.junit {
            std::fs::write(p, junit::test_xml(&merged))
                .map_err(|e| format!("writing {}: {e}", p.display()))?;
        }
        if args.html.is_some() {
            return Err("--html is for benchmark results".into());
        }
        return Ok(i32::from(merged.failed > 0));
    }
    let benches: Vec<BenchReport> = reports
        .into_iter()
        .map(|r| match r {
            Report::Bench(b) => Ok(b),
            Report::Test(_) => Err("cannot merge test results with benchmark results".to_string()),
        })
        .collect::<Result<_, _>>()?;
    let merged = merge_benches(benches, &args.inputs)?;
    let baseline = args
        .baseline
        .as_deref()
        .map(results::read_bench)
        .transpose()?;
    let history = match &args.history {
        Some(dir) => bench::load_history(dir)?,
        None => Vec::new(),
    };
    Ok(bench::conclude(
        &merged,
        &Outputs {
            save: args.out.clone(),
            html: args.html.clone(),
            junit: args.junit.clone(),
            baseline,
            threshold: args.threshold,
            history,
        },
    ))
}

/// Every shard of each split present once, unless `partial`.
fn check_shards(
    shards: &[Option<super::shard::Shard>],
    inputs: &[PathBuf],
    partial: bool,
) -> Result<(), String> {
    let totals: Vec<usize> = shards.iter().flatten().map(|s| s.total).collect();
    if let Some(&n) = totals.first() {
        if totals.iter().any(|&t| t != n) {
            return Err("the files come from splits into different numbers of shards".into());
        }
        for (i, s) in shards.iter().enumerate() {
            if let Some(s) = s {
                if let Some(j) = shards[..i].iter().position(|o| *o == Some(*s)) {
                    return Err(format!(
                        "shard {s} twice: {} and {}",
                        inputs[j].display(),
                        inputs[i].display()
                    ));
                }
            }
        }
        let missing: Vec<String> = (0..n)
            .filter(|k| !shards.iter().flatten().any(|s| s.index == *k))
            .map(|k| format!("{}/{n}", k + 1))
            .collect();
        if !missing.is_empty() && !partial {
            return Err(format!(
                "missing shard(s) {} (pass --partial to merge what is there)",
                missing.join(", ")
            ));
        }
    }
    Ok(())
}

/// The one value all files agree on, or an error naming the field.
fn same<T: PartialEq + std::fmt::Debug + Clone>(
    values: impl Iterator<Item = T>,
    what: &str,
) -> Result<T, String> {
    let all: Vec<T> = values.collect();
    let first = all.first().cloned().ok_or("no input files")?;
    match all.iter().find(|v| **v != first) {
        Some(other) => Err(format!(
            "the files differ in {what} ({first:?} and {other:?}): not parts of one run"
        )),
        None => Ok(first),
    }
}

/// Sorts `cases` by name and refuses a name seen twice.
fn sorted_disjoint<T>(
    mut cases: Vec<(usize, T)>,
    name: impl Fn(&T) -> &str,
    inputs: &[PathBuf],
) -> Result<Vec<T>, String> {
    cases.sort_by(|a, b| name(&a.1).cmp(name(&b.1)));
    for w in cases.windows(2) {
        if name(&w[0].1) == name(&w[1].1) {
            return Err(format!(
                "case {} is in both {} and {}: overlapping shards",
                name(&w[0].1),
                inputs[w[0].0].display(),
                inputs[w[1].0].display()
            ));
        }
    }
    Ok(cases.into_iter().map(|c| c.1).collect())
}

/// Joins test results.
pub fn merge_tests(reports: Vec<TestReport>, inputs: &[PathBuf]) -> Result<TestReport, String> {
    let compiler = same(reports.iter().map(|r| r.compiler.clone()), "compiler")?;
    let cases = reports
        .into_iter()
        .enumerate()
        .flat_map(|(i, r)| r.cases.into_iter().map(move |c| (i, c)))
        .collect();
    let cases = sorted_disjoint(cases, |c| &c.name, inputs)?;
    let failed = cases.iter().filter(|c| !c.is_pass()).count();
    Ok(TestReport {
        schema_version: SCHEMA_VERSION,
        tool: "sysyc test".into(),
        compiler,
        shard: None,
        passed: cases.len() - failed,
        failed,
        cases,
    })
}

/// Joins benchmark results.
pub fn merge_benches(reports: Vec<BenchReport>, inputs: &[PathBuf]) -> Result<BenchReport, String> {
    let opt_level = same(reports.iter().map(|r| r.opt_level), "optimization level")?;
    let reference = same(
        reports.iter().map(|r| r.reference.clone()),
        "reference compiler",
    )?;
    let regalloc = same(
        reports.iter().map(|r| r.regalloc.clone()),
        "register allocator",
    )?;
    let runs = same(reports.iter().map(|r| r.runs), "timed runs per case")?;
    // Shards of one run may have measured a few seconds apart; the commit must agree.
    let commit = same(reports.iter().map(|r| r.commit.clone()), "commit")?;
    let unix_time = reports.iter().map(|r| r.unix_time).max().unwrap_or(0);
    let cases = reports
        .into_iter()
        .enumerate()
        .flat_map(|(i, r)| r.cases.into_iter().map(move |c| (i, c)))
        .collect();
    let cases = sorted_disjoint(cases, |c: &results::BenchRow| &c.name, inputs)?;
    Ok(BenchReport {
        schema_version: SCHEMA_VERSION,
        tool: "sysyc bench".into(),
        unix_time,
        commit,
        opt_level,
        runs,
        regalloc,
        reference,
        geomean_ratio: geomean(cases.iter().filter_map(|c| c.ratio())),
        shard: None,
        cases,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::results::TestRecord;
    use crate::suite::shard::Shard;

    fn part(names: &[&str], shard: Option<Shard>) -> TestReport {
        TestReport {
            schema_version: SCHEMA_VERSION,
            tool: "sysyc test".into(),
            compiler: "sysyc -O2".into(),
            shard,
            passed: names.len(),
            failed: 0,
            cases: names
                .iter()
                .map(|n| TestRecord {
                    name: n.to_string(),
                    outcome: if n.contains("bad") { "crash" } else { "pass" }.into(),
                    compile_ms: 1.0,
                    run_ms: None,
                    timer_us: None,
                    detail: String::new(),
                })
                .collect(),
        }
    }

    #[test]
    fn merges_sorted_and_refuses_overlap() {
        let files = [PathBuf::from("a.json"), PathBuf::from("b.json")];
        let m = merge_tests(
            vec![part(&["s/c", "s/a"], None), part(&["s/bad"], None)],
            &files,
        )
        .unwrap();
        let names: Vec<&str> = m.cases.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["s/a", "s/bad", "s/c"]);
        assert_eq!((m.passed, m.failed, m.shard), (2, 1, None));
        let e = merge_tests(vec![part(&["s/a"], None), part(&["s/a"], None)], &files).unwrap_err();
        assert!(e.contains("s/a is in both a.json and b.json"), "{e}");
        let mut other = part(&["s/x"], None);
        other.compiler = "gcc -O2".into();
        assert!(merge_tests(vec![part(&["s/a"], None), other], &files).is_err());
    }

    #[test]
    fn missing_or_repeated_shards_are_refused() {
        let s = |index| Some(Shard { index, total: 3 });
        let files: Vec<PathBuf> = (0..3).map(|i| PathBuf::from(format!("{i}.json"))).collect();
        assert!(check_shards(&[s(0), s(1), s(2)], &files, false).is_ok());
        let e = check_shards(&[s(0), s(2)], &files, false).unwrap_err();
        assert!(e.contains("missing shard(s) 2/3"), "{e}");
        assert!(check_shards(&[s(0), s(2)], &files, true).is_ok());
        assert!(check_shards(&[s(0), s(0), s(2)], &files, true)
            .unwrap_err()
            .contains("twice"));
        assert!(check_shards(&[None, None], &files, false).is_ok());
    }
}
