//! JUnit XML, the format CI systems (GitLab, Jenkins, GitHub test reporters) read: one
//! `testsuite` per suite (the first component of the case name), one `testcase` per case with
//! its time, and for a failing case a `failure` (or `error`, when the harness itself failed)
//! whose message is the outcome kind and whose text is the detail (the diff, diagnostics).
//!
//! Program output can hold bytes XML 1.0 forbids (control characters); they are written as
//! `\xNN` so the file always parses.

use super::results::{BenchReport, Metric, TestReport};
use std::fmt::Write;

/// One case as JUnit sees it.
struct Case<'a> {
    name: &'a str,
    secs: f64,
    /// `(kind, detail, is_error)` for a failing case.
    failure: Option<(String, String, bool)>,
    /// Extra text for `system-out` (measurements).
    out: String,
}

/// JUnit XML for a test run.
pub fn test_xml(report: &TestReport) -> String {
    let cases: Vec<Case> = report
        .cases
        .iter()
        .map(|c| Case {
            name: &c.name,
            secs: (c.compile_ms + c.run_ms.unwrap_or(0.0)) / 1e3,
            failure: (!c.is_pass()).then(|| {
                (
                    c.outcome.clone(),
                    c.detail.clone(),
                    c.outcome == "harness error",
                )
            }),
            out: String::new(),
        })
        .collect();
    render(&format!("sysyc test ({})", report.compiler), &cases)
}

/// JUnit XML for a benchmark run: a case fails when sysyc's build, run or output failed, or
/// when `regressions` (case name, why) names it.
pub fn bench_xml(report: &BenchReport, regressions: &[(String, String)]) -> String {
    let cases: Vec<Case> = report
        .cases
        .iter()
        .map(|r| {
            let mut out = String::new();
            for m in Metric::ALL {
                if let Some(v) = m.value(&r.sysyc) {
                    let _ = write!(out, "{}: {}", m.key(), m.show(v));
                    if let Some(x) = r.ratio_of(m) {
                        let _ = write!(out, " ({x:.3}x reference)");
                    }
                    out.push('\n');
                }
            }
            let failure = if !r.sysyc.ok() {
                Some((r.sysyc.status.clone(), r.sysyc.detail.clone(), false))
            } else {
                regressions
                    .iter()
                    .find(|(n, _)| *n == r.name)
                    .map(|(_, why)| ("regression".to_string(), why.clone(), false))
            };
            Case {
                name: &r.name,
                secs: r.sysyc.wall_ms.unwrap_or(0.0) / 1e3,
                failure,
                out,
            }
        })
        .collect();
    render(&format!("sysyc bench -O{}", report.opt_level), &cases)
}

fn render(title: &str, cases: &[Case]) -> String {
    // Suites in order of first appearance (cases come sorted by name).
    let mut suites: Vec<(&str, Vec<&Case>)> = Vec::new();
    for c in cases {
        let suite = c.name.split('/').next().unwrap_or("");
        match suites.iter_mut().find(|(s, _)| *s == suite) {
            Some((_, v)) => v.push(c),
            None => suites.push((suite, vec![c])),
        }
    }
    let count = |cs: &[&Case], error: bool| {
        cs.iter()
            .filter(|c| c.failure.as_ref().is_some_and(|f| f.2 == error))
            .count()
    };
    let all: Vec<&Case> = cases.iter().collect();
    let total: f64 = cases.iter().map(|c| c.secs).sum();
    let mut x = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        x,
        "<testsuites name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" time=\"{total:.3}\">",
        attr(title),
        cases.len(),
        count(&all, false),
        count(&all, true)
    );
    for (suite, cs) in &suites {
        let time: f64 = cs.iter().map(|c| c.secs).sum();
        let _ = writeln!(
            x,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"0\" time=\"{time:.3}\">",
            attr(suite),
            cs.len(),
            count(cs, false),
            count(cs, true)
        );
        for c in cs {
            // classname: the directories; name: the file stem.
            let (class, name) = c.name.rsplit_once('/').unwrap_or(("", c.name));
            let _ = write!(
                x,
                "    <testcase classname=\"{}\" name=\"{}\" time=\"{:.3}\"",
                attr(&class.replace('/', ".")),
                attr(name),
                c.secs
            );
            if c.failure.is_none() && c.out.is_empty() {
                x.push_str("/>\n");
                continue;
            }
            x.push_str(">\n");
            if let Some((kind, detail, error)) = &c.failure {
                let tag = if *error { "error" } else { "failure" };
                let _ = writeln!(
                    x,
                    "      <{tag} message=\"{}\" type=\"{}\">{}</{tag}>",
                    attr(kind),
                    attr(kind),
                    text(detail)
                );
            }
            if !c.out.is_empty() {
                let _ = writeln!(x, "      <system-out>{}</system-out>", text(&c.out));
            }
            x.push_str("    </testcase>\n");
        }
        x.push_str("  </testsuite>\n");
    }
    x.push_str("</testsuites>\n");
    x
}

/// Escapes element text.
fn text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\t' | '\n' => out.push(c),
            '\r' => out.push_str("&#13;"),
            c if allowed(c) => out.push(c),
            c => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
        }
    }
    out
}

/// Escapes an attribute value (quotes and line breaks too).
fn attr(s: &str) -> String {
    text(s)
        .replace('"', "&quot;")
        .replace('\n', "&#10;")
        .replace('\t', "&#9;")
}

/// Characters XML 1.0 allows in a document.
fn allowed(c: char) -> bool {
    matches!(c, '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..='\u{10FFFF}')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::results::TestRecord;

    #[test]
    fn hostile_output_is_escaped() {
        let rec = |name: &str, outcome: &str, detail: &str| TestRecord {
            name: name.into(),
            outcome: outcome.into(),
            compile_ms: 1.5,
            run_ms: Some(2.0),
            timer_us: None,
            detail: detail.into(),
        };
        let report = TestReport {
            schema_version: 1,
            tool: "sysyc test".into(),
            compiler: "sysyc -O2".into(),
            shard: None,
            passed: 1,
            failed: 2,
            cases: vec![
                rec("s/a", "pass", ""),
                rec("s/sub/b\"<", "wrong output", "-1\n+\u{1}\u{7f}<&>]]>\r\n"),
                rec("t/c", "harness error", "missing tool"),
            ],
        };
        let x = test_xml(&report);
        assert!(x.contains("failures=\"1\" errors=\"1\""), "{x}");
        assert!(
            x.contains("classname=\"s.sub\" name=\"b&quot;&lt;\""),
            "{x}"
        );
        assert!(x.contains("+\\x01\u{7f}&lt;&amp;&gt;]]&gt;&#13;"), "{x}");
        assert!(x.contains("<error message=\"harness error\""), "{x}");
        assert!(x.contains("time=\"0.004\""), "{x}");
    }
}
