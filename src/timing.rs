//! Wall time per compile phase, for `--time-passes`.
//!
//! Two kinds of rows. A *stage* row is wall time measured on the thread driving the compile
//! (read input, lex, parse, sema, lower, the passes, code generation, output writing, drops):
//! stages follow one another, so their rows partition the timeline and add up to (nearly) the
//! wall time of the process, measured from `Timings::new`. A *phase* row is one named step
//! inside a parallel stage (a pass, register allocation, ...) summed over functions and
//! threads, so with several threads the phase rows of a stage can add up to more than its wall
//! time. Rows of either kind sum by name, in order of first appearance. `report` prints the
//! stages with the peak resident memory at the end of each (where the peak rises tells which
//! stage reached it), their total against the wall time, the phases, and the peak resident
//! memory. A disabled `Timings` costs one branch per phase.

use std::sync::Mutex;
use std::time::{Duration, Instant};

pub struct Timings {
    on: bool,
    start: Instant,
    stages: Mutex<Vec<Row>>,
    rows: Mutex<Vec<Row>>,
}

impl Default for Timings {
    fn default() -> Self {
        Timings::new(false)
    }
}

struct Row {
    name: &'static str,
    time: Duration,
    /// Instructions left after a pass (summed over functions), when it means something.
    size: Option<usize>,
    /// Stages: the peak resident memory (KiB) at the end of the stage's last run.
    peak_kb: Option<u64>,
}

fn add_row(
    rows: &Mutex<Vec<Row>>,
    name: &'static str,
    d: Duration,
    size: Option<usize>,
    peak_kb: Option<u64>,
) {
    let mut rows = rows.lock().unwrap_or_else(|e| e.into_inner());
    match rows.iter_mut().find(|r| r.name == name) {
        Some(r) => {
            r.time += d;
            if let Some(s) = size {
                *r.size.get_or_insert(0) += s;
            }
            r.peak_kb = peak_kb.or(r.peak_kb);
        }
        None => rows.push(Row {
            name,
            time: d,
            size,
            peak_kb,
        }),
    }
}

impl Timings {
    /// A `Timings` whose wall clock starts now.
    pub fn new(on: bool) -> Timings {
        Timings {
            on,
            start: Instant::now(),
            stages: Mutex::new(Vec::new()),
            rows: Mutex::new(Vec::new()),
        }
    }

    /// A `Timings` that records nothing.
    pub fn off() -> Timings {
        Timings::new(false)
    }

    pub fn is_on(&self) -> bool {
        self.on
    }

    /// Wall time since `new`.
    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    /// Adds `d` to phase row `name`.
    pub fn add(&self, name: &'static str, d: Duration, size: Option<usize>) {
        if self.on {
            add_row(&self.rows, name, d, size, None);
        }
    }

    /// Adds `d` to stage row `name`.
    pub fn add_stage(&self, name: &'static str, d: Duration) {
        if self.on {
            add_row(&self.stages, name, d, None, peak_rss_kb());
        }
    }

    /// Runs `f`, adding its wall time to phase row `name`.
    pub fn time<T>(&self, name: &'static str, f: impl FnOnce() -> T) -> T {
        if !self.on {
            return f();
        }
        let t = Instant::now();
        let r = f();
        self.add(name, t.elapsed(), None);
        r
    }

    /// Runs `f` (on the thread driving the compile), adding its wall time to stage row `name`.
    pub fn stage<T>(&self, name: &'static str, f: impl FnOnce() -> T) -> T {
        if !self.on {
            return f();
        }
        let t = Instant::now();
        let r = f();
        self.add_stage(name, t.elapsed());
        r
    }

    /// The table: every stage row with its share of the wall time (since `new`), their total,
    /// every phase row, the wall time and the peak resident memory.
    pub fn report(&self) -> String {
        let wall = self.elapsed();
        let stages = self.stages.lock().unwrap_or_else(|e| e.into_inner());
        let rows = self.rows.lock().unwrap_or_else(|e| e.into_inner());
        let pct = |d: Duration| 100.0 * d.as_secs_f64() / wall.as_secs_f64().max(1e-12);
        let mut out = format!(
            "{:<28} {:>12} {:>8} {:>12}\n",
            "stage (wall)", "time (ms)", "% wall", "peak MB"
        );
        let line = |out: &mut String, name: &str, d: Duration, last: String| {
            out.push_str(&format!(
                "{:<28} {:>12.3} {:>7.1}% {:>12}\n",
                name,
                d.as_secs_f64() * 1e3,
                pct(d),
                last
            ));
        };
        let mut covered = Duration::ZERO;
        for r in stages.iter() {
            let peak = r
                .peak_kb
                .map_or(String::new(), |kb| format!("{:.1}", kb as f64 / 1024.0));
            line(&mut out, r.name, r.time, peak);
            covered += r.time;
        }
        line(&mut out, "(stages above, of wall)", covered, String::new());
        out.push_str(&format!(
            "{:<50} {:>12}\n",
            "-- phases, summed over functions and threads --", "insts after"
        ));
        for r in rows.iter() {
            let size = r.size.map_or(String::new(), |s| s.to_string());
            line(&mut out, &format!("  {}", r.name), r.time, size);
        }
        line(&mut out, "wall", wall, String::new());
        if let Some(kb) = peak_rss_kb() {
            out.push_str(&format!("peak memory: {:.1} MB\n", kb as f64 / 1024.0));
        }
        out
    }
}

/// Times consecutive phases of one piece of work: `done(name)` adds the time since the previous
/// `done` (or since `start`) to row `name`.
pub struct Lap<'a> {
    timings: &'a Timings,
    last: Option<Instant>,
}

impl<'a> Lap<'a> {
    pub fn start(timings: &'a Timings) -> Lap<'a> {
        Lap {
            timings,
            last: timings.on.then(Instant::now),
        }
    }

    pub fn done(&mut self, name: &'static str) {
        if let Some(last) = self.last {
            let now = Instant::now();
            self.timings.add(name, now - last, None);
            self.last = Some(now);
        }
    }
}

/// Peak resident set size of this process in KiB (`VmHWM`, the figure `getrusage` reports as
/// `ru_maxrss`), where `/proc` has it.
pub fn peak_rss_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_sum_by_name_in_first_seen_order() {
        let t = Timings::new(true);
        t.add("b", Duration::from_millis(2), Some(5));
        t.add("a", Duration::from_millis(1), None);
        t.add("b", Duration::from_millis(3), Some(7));
        t.add_stage("all", Duration::from_millis(6));
        t.add_stage("all", Duration::from_millis(1));
        let r = t.report();
        assert!(r.contains("\nall ") && r.contains("7.000"), "{r}");
        let b = r.find("  b ").unwrap();
        let a = r.find("  a ").unwrap();
        assert!(b < a, "{r}");
        assert!(
            r[b..].lines().next().unwrap().trim_end().ends_with("12"),
            "{r}"
        );
        assert!(r.contains("5.000"), "{r}");
        let off = Timings::off();
        assert_eq!(off.time("x", || 4), 4);
        assert_eq!(off.stage("y", || 5), 5);
        let r = off.report();
        assert!(!r.contains("  x") && !r.contains("\ny "), "{r}");
    }
}
