//! Wall time per compile phase, for `--time-passes`.
//!
//! A row is one named phase (lex, parse, a pass, register allocation, ...) summed over functions
//! and threads, in order of first appearance; with several threads the rows can add up to more
//! than the wall time. `report` prints them after the wall-clock rows of the driver's stages
//! and the peak resident memory. A disabled `Timings` costs one branch per phase.

use std::sync::Mutex;
use std::time::{Duration, Instant};

#[derive(Default)]
pub struct Timings {
    on: bool,
    rows: Mutex<Vec<Row>>,
}

struct Row {
    name: &'static str,
    time: Duration,
    /// Instructions left after a pass (summed over functions), when it means something.
    size: Option<usize>,
}

impl Timings {
    pub fn new(on: bool) -> Timings {
        Timings {
            on,
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

    /// Adds `d` to row `name`.
    pub fn add(&self, name: &'static str, d: Duration, size: Option<usize>) {
        if !self.on {
            return;
        }
        let mut rows = self.rows.lock().unwrap_or_else(|e| e.into_inner());
        match rows.iter_mut().find(|r| r.name == name) {
            Some(r) => {
                r.time += d;
                if let Some(s) = size {
                    *r.size.get_or_insert(0) += s;
                }
            }
            None => rows.push(Row {
                name,
                time: d,
                size,
            }),
        }
    }

    /// Runs `f`, adding its wall time to row `name`.
    pub fn time<T>(&self, name: &'static str, f: impl FnOnce() -> T) -> T {
        if !self.on {
            return f();
        }
        let t = Instant::now();
        let r = f();
        self.add(name, t.elapsed(), None);
        r
    }

    /// The table: `stages` (wall-clock rows measured on the calling thread, which should cover
    /// the whole compile), then every phase row, then the peak resident memory.
    pub fn report(&self, stages: &[(&str, Duration)], wall: Duration) -> String {
        let rows = self.rows.lock().unwrap_or_else(|e| e.into_inner());
        let pct = |d: Duration| 100.0 * d.as_secs_f64() / wall.as_secs_f64().max(1e-12);
        let mut out = format!(
            "{:<28} {:>12} {:>8} {:>12}\n",
            "phase", "time (ms)", "% wall", "insts after"
        );
        let line = |out: &mut String, name: &str, d: Duration, size: Option<usize>| {
            let size = size.map_or(String::new(), |s| s.to_string());
            out.push_str(&format!(
                "{:<28} {:>12.3} {:>7.1}% {:>12}\n",
                name,
                d.as_secs_f64() * 1e3,
                pct(d),
                size
            ));
        };
        let mut covered = Duration::ZERO;
        for &(name, d) in stages {
            line(&mut out, name, d, None);
            covered += d;
        }
        line(&mut out, "(stages above, of wall)", covered, None);
        out.push_str("-- phases, summed over functions and threads --\n");
        for r in rows.iter() {
            line(&mut out, &format!("  {}", r.name), r.time, r.size);
        }
        line(&mut out, "wall", wall, None);
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
        let r = t.report(
            &[("all", Duration::from_millis(6))],
            Duration::from_millis(6),
        );
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
        assert!(!off.report(&[], Duration::from_millis(1)).contains("  x"));
    }
}
