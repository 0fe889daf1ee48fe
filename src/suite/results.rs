//! The files the suite tools write and read: `sysyc test --json` and `sysyc bench --save`
//! results (serde records), one reader for both that checks the schema version, and the
//! metrics a benchmark records per case.
//!
//! Every file carries `schema_version`. Readers accept any version up to [`SCHEMA_VERSION`]
//! (files from before versioning read as version 0; fields added since are optional) and
//! reject newer files with a message saying so, instead of misreading them. A change that old
//! readers would misread bumps the version; adding an optional field does not.

use super::shard::Shard;
use super::stats::Spread;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The version of the result files this build writes, and the newest it reads.
pub const SCHEMA_VERSION: u32 = 1;

/// `sysyc test --json`: one record per case.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TestReport {
    #[serde(default)]
    pub schema_version: u32,
    #[serde(default = "test_tool")]
    pub tool: String,
    /// `sysyc -O2`, `gcc -O2`, ...
    pub compiler: String,
    /// The shard this file covers; `None` for a whole (or merged) run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
    pub passed: usize,
    pub failed: usize,
    pub cases: Vec<TestRecord>,
}

fn test_tool() -> String {
    "sysyc test".into()
}

/// One case of a test run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TestRecord {
    pub name: String,
    /// `pass`, `built`, or the failure kind (`wrong output`, `crash`, ...).
    pub outcome: String,
    pub compile_ms: f64,
    pub run_ms: Option<f64>,
    /// The program's own timer total (`TOTAL:` on stderr), microseconds.
    pub timer_us: Option<u64>,
    /// Diagnostics or the diff of a failure; empty for a pass.
    #[serde(default)]
    pub detail: String,
}

impl TestRecord {
    pub fn is_pass(&self) -> bool {
        matches!(self.outcome.as_str(), "pass" | "built")
    }
}

/// `sysyc bench --save`: per case, sysyc's measurements and optionally the reference's.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct BenchReport {
    #[serde(default)]
    pub schema_version: u32,
    #[serde(default = "bench_tool")]
    pub tool: String,
    /// Seconds since the epoch when the run ended.
    #[serde(default)]
    pub unix_time: u64,
    /// The commit measured (`git describe`, or the CI's commit variable), for trend views.
    #[serde(default)]
    pub commit: Option<String>,
    pub opt_level: u8,
    pub runs: usize,
    #[serde(default)]
    pub regalloc: Option<String>,
    /// `gcc` when the reference was measured.
    pub reference: Option<String>,
    /// Geometric mean of sysyc / reference executed instructions.
    #[serde(default)]
    pub geomean_ratio: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
    pub cases: Vec<BenchRow>,
}

fn bench_tool() -> String {
    "sysyc bench".into()
}

/// One case of a benchmark run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct BenchRow {
    pub name: String,
    /// Hash of the case's source, input and expected output; `None` when unreadable.
    #[serde(default)]
    pub fingerprint: Option<String>,
    pub sysyc: Measure,
    pub reference: Option<Measure>,
    /// sysyc / reference executed instructions (written for readers of the file; recomputed
    /// from the measurements when read).
    #[serde(default)]
    pub ratio: Option<f64>,
}

impl BenchRow {
    /// sysyc / reference for `metric`, when both measured it.
    pub fn ratio_of(&self, metric: Metric) -> Option<f64> {
        let r = self.reference.as_ref()?;
        if !(self.sysyc.ok() && r.ok()) {
            return None;
        }
        let (a, b) = (metric.value(&self.sysyc)?, metric.value(r)?);
        (b > 0.0).then(|| a / b)
    }

    /// sysyc / reference executed instructions.
    pub fn ratio(&self) -> Option<f64> {
        self.ratio_of(Metric::Insns)
    }
}

/// The measurements of one case with one compiler. Every figure is optional: a failed case
/// has none, and figures added later are absent from older files.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Measure {
    /// `ok`, or the outcome kind that stopped the measurement (`wrong output`, ...).
    pub status: String,
    #[serde(default)]
    pub detail: String,
    /// Executed guest instructions up to the runtime's exit marker.
    #[serde(default)]
    pub insns: Option<u64>,
    /// Estimated cycles on the modelled core (SiFive U74), when measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cycles: Option<u64>,
    /// Estimated cycles by `llvm-mca -mcpu=sifive-u74`, when measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cycles_mca: Option<u64>,
    /// Median of the program's own timer total, microseconds.
    #[serde(default)]
    pub timer_us: Option<u64>,
    /// All timed runs of the timer total, microseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timer: Option<Spread>,
    /// Median wall time of a run (qemu included), milliseconds.
    #[serde(default)]
    pub wall_ms: Option<f64>,
    /// All timed runs of the wall time, milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wall: Option<Spread>,
    /// Instructions in the generated assembly.
    #[serde(default)]
    pub static_insns: Option<u64>,
    /// For the reference: which C compiler built it (`gcc`, or `clang` when gcc rejects the
    /// file).
    #[serde(default)]
    pub built_by: Option<String>,
    /// sysyc only, from the backend's statistics (summed over functions).
    #[serde(default)]
    pub spill_loads: Option<u64>,
    #[serde(default)]
    pub spill_stores: Option<u64>,
    #[serde(default)]
    pub moves: Option<u64>,
    #[serde(default)]
    pub frame_bytes: Option<u64>,
}

impl Measure {
    pub fn ok(&self) -> bool {
        self.status == "ok"
    }
}

/// A figure a benchmark records per case, charted and compared one by one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    Cycles,
    CyclesMca,
    Insns,
    Timer,
}

impl Metric {
    /// Every metric, in the order reports show them.
    pub const ALL: [Metric; 4] = [
        Metric::Cycles,
        Metric::CyclesMca,
        Metric::Insns,
        Metric::Timer,
    ];

    /// The name in files and on the command line.
    pub fn key(self) -> &'static str {
        match self {
            Metric::Cycles => "cycles",
            Metric::CyclesMca => "cycles_mca",
            Metric::Insns => "insns",
            Metric::Timer => "timer",
        }
    }

    /// What it is, for chart titles.
    pub fn title(self) -> &'static str {
        match self {
            Metric::Cycles => "estimated cycles (U74 model)",
            Metric::CyclesMca => "estimated cycles (llvm-mca, sifive-u74)",
            Metric::Insns => "executed instructions",
            Metric::Timer => "timer (program's own starttime/stoptime total)",
        }
    }

    /// The measured value (the median, for timers; microseconds).
    pub fn value(self, m: &Measure) -> Option<f64> {
        match self {
            Metric::Cycles => m.cycles.map(|v| v as f64),
            Metric::CyclesMca => m.cycles_mca.map(|v| v as f64),
            Metric::Insns => m.insns.map(|v| v as f64),
            Metric::Timer => m
                .timer
                .as_ref()
                .map(|s| s.median)
                .or(m.timer_us.map(|v| v as f64)),
        }
    }

    /// The spread over runs, for the noisy metrics; `None` for exact counts.
    pub fn spread(self, m: &Measure) -> Option<&Spread> {
        match self {
            Metric::Timer => m.timer.as_ref(),
            _ => None,
        }
    }

    /// Whether the figure is the same on every run (a count), so any change is real.
    pub fn is_exact(self) -> bool {
        self != Metric::Timer
    }

    /// The value formatted for tables: counts as integers, timers in milliseconds.
    pub fn show(self, v: f64) -> String {
        match self {
            Metric::Timer => format!("{:.1}ms", v / 1e3),
            _ => format!("{v:.0}"),
        }
    }
}

/// A result file of either tool.
#[derive(Clone, Debug)]
pub enum Report {
    Test(TestReport),
    Bench(BenchReport),
}

/// Reads a result file written by `sysyc test --json`, `sysyc bench --save` or `sysyc merge`,
/// rejecting files of a newer schema than this build knows.
pub fn read(path: &Path) -> Result<Report, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    parse(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// [`read`] on text.
pub fn parse(text: &str) -> Result<Report, String> {
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("not a JSON result file: {e}"))?;
    let version = match value.get("schema_version") {
        None => 0,
        Some(v) => v
            .as_u64()
            .ok_or_else(|| format!("schema_version {v} is not a number"))?,
    };
    if version > u64::from(SCHEMA_VERSION) {
        return Err(format!(
            "written by a newer sysyc (schema version {version}; this sysyc reads up to \
             {SCHEMA_VERSION}): update sysyc to read it"
        ));
    }
    let tool = value.get("tool").and_then(|t| t.as_str());
    let report = match tool {
        Some("sysyc bench") => serde_json::from_value(value).map(Report::Bench),
        Some("sysyc test") => serde_json::from_value(value).map(Report::Test),
        // Test results written before the `tool` field existed.
        None if value.get("compiler").is_some() => serde_json::from_value(value).map(Report::Test),
        _ => return Err("neither `sysyc test` nor `sysyc bench` results".into()),
    };
    report.map_err(|e| format!("malformed result file: {e}"))
}

/// Reads a benchmark result file (see [`read`]).
pub fn read_bench(path: &Path) -> Result<BenchReport, String> {
    match read(path)? {
        Report::Bench(b) => Ok(b),
        Report::Test(_) => Err(format!(
            "{}: test results, not benchmark results",
            path.display()
        )),
    }
}

/// Writes `value` as pretty JSON (a trailing newline; parent directories created).
pub fn write<T: Serialize>(path: &Path, value: &T) -> Result<(), String> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let mut text =
        serde_json::to_string_pretty(value).map_err(|e| format!("{}: {e}", path.display()))?;
    text.push('\n');
    std::fs::write(path, text).map_err(|e| format!("writing {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_from_before_versioning_still_read() {
        let old = r#"{"tool": "sysyc bench", "unix_time": 1, "opt_level": 2, "runs": 1,
            "reference": "gcc", "geomean_ratio": 0.5, "cases": [{"name": "p/a",
            "sysyc": {"status": "ok", "insns": 42, "timer_us": 7, "wall_ms": 1.5,
            "static_insns": 7, "built_by": null, "detail": ""},
            "reference": {"status": "ok", "insns": 84, "built_by": "clang"}, "ratio": 0.5}]}"#;
        let Report::Bench(b) = parse(old).unwrap() else {
            panic!("not a bench report")
        };
        assert_eq!(b.schema_version, 0);
        let row = &b.cases[0];
        assert_eq!((row.sysyc.insns, row.sysyc.spill_loads), (Some(42), None));
        assert_eq!(row.ratio(), Some(0.5));
        assert_eq!(Metric::Timer.value(&row.sysyc), Some(7.0));
        let old_test = r#"{"compiler": "sysyc -O2", "passed": 1, "failed": 0, "cases": [
            {"name": "f/a", "outcome": "pass", "compile_ms": 1.0, "run_ms": null,
             "timer_us": null, "detail": ""}]}"#;
        assert!(matches!(parse(old_test), Ok(Report::Test(t)) if t.cases.len() == 1));
    }

    #[test]
    fn newer_schemas_are_rejected_by_name() {
        let newer = format!(
            r#"{{"schema_version": {}, "tool": "sysyc test", "compiler": "x", "passed": 0,
                "failed": 0, "cases": []}}"#,
            SCHEMA_VERSION + 1
        );
        let e = parse(&newer).unwrap_err();
        assert!(
            e.contains("newer sysyc") && e.contains("update sysyc"),
            "{e}"
        );
        assert!(parse("[1, 2]").is_err());
        assert!(parse("{").unwrap_err().contains("not a JSON result file"));
    }

    #[test]
    fn measures_round_trip_with_optional_figures() {
        let m = Measure {
            status: "ok".into(),
            insns: Some(10),
            cycles: Some(12),
            timer: Spread::of(&[1.0, 2.0, 3.0]),
            ..Measure::default()
        };
        let text = serde_json::to_string(&m).unwrap();
        assert!(
            !text.contains("cycles_mca"),
            "absent figures are left out: {text}"
        );
        let back: Measure = serde_json::from_str(&text).unwrap();
        assert_eq!((back.cycles, back.cycles_mca), (Some(12), None));
        assert_eq!(Metric::Timer.value(&back), Some(2.0));
        assert_eq!(back.timer, m.timer);
    }
}
