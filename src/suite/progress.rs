//! Progress reporting for the suite tools. On a terminal, an `indicatif` bar on stderr with the
//! count, failures so far and an estimate of the time left, failures printed above it as they
//! happen; otherwise (CI logs, pipes) one plain line per finished item, with the same estimate.
//! Safe to call from many threads.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::time::Instant;

/// A progress display for `total` items.
pub struct Progress {
    total: usize,
    bar: Option<ProgressBar>,
    quiet: bool,
    start: Instant,
    state: Mutex<(usize, usize)>, // (done, failed)
}

impl Progress {
    /// A bar if stderr is a terminal, plain lines otherwise; nothing at all when `quiet`
    /// (failures are still reported at the end by the caller).
    pub fn new(total: usize, quiet: bool) -> Progress {
        let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
            let bar = ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr());
            let style = ProgressStyle::with_template(
                "[{bar:30.cyan/blue}] {pos}/{len} {prefix} {elapsed} elapsed, ~{eta} left  {wide_msg}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("#>.");
            bar.set_style(style);
            bar.set_prefix("failed 0");
            bar
        });
        Progress {
            total,
            bar,
            quiet,
            start: Instant::now(),
            state: Mutex::new((0, 0)),
        }
    }

    /// Records one finished item: `ok` or not, with a short note (`wrong output`, `0.12s`).
    pub fn tick(&self, name: &str, ok: bool, note: &str) {
        let (done, failed) = {
            let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
            st.0 += 1;
            st.1 += usize::from(!ok);
            *st
        };
        if self.quiet {
            return;
        }
        if let Some(bar) = &self.bar {
            if !ok {
                bar.println(format!("\x1b[31mFAIL\x1b[0m {name} ({note})"));
            }
            bar.set_prefix(format!("failed {failed}"));
            bar.set_message(name.chars().take(60).collect::<String>());
            bar.inc(1);
            return;
        }
        let tag = if ok { "ok  " } else { "FAIL" };
        let w = self.total.to_string().len();
        let left = self.estimate_left(done);
        let mut err = std::io::stderr().lock();
        let _ = writeln!(
            err,
            "[{done:>w$}/{}] {tag} {name} ({note}){left}",
            self.total
        );
        let _ = err.flush();
    }

    /// `, ~12s left` from the average pace so far; empty at the end.
    fn estimate_left(&self, done: usize) -> String {
        if done == 0 || done >= self.total {
            return String::new();
        }
        let secs = self.elapsed_secs() / done as f64 * (self.total - done) as f64;
        match secs {
            s if s < 90.0 => format!(", ~{s:.0}s left"),
            s if s < 5400.0 => format!(", ~{:.0}m left", s / 60.0),
            s => format!(", ~{:.1}h left", s / 3600.0),
        }
    }

    /// Ends the bar.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }

    /// Seconds since the display was made.
    pub fn elapsed_secs(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }
}
