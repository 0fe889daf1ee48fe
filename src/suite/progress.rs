//! Progress reporting for the suite tools. On a terminal, one bar redrawn in place on stderr,
//! with failures printed above it as they happen; otherwise (CI logs, pipes) one plain line per
//! finished item. Safe to call from many threads.

use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::time::Instant;

/// A progress display for `total` items.
pub struct Progress {
    total: usize,
    tty: bool,
    quiet: bool,
    start: Instant,
    state: Mutex<(usize, usize)>, // (done, failed)
}

impl Progress {
    /// A bar if stderr is a terminal, plain lines otherwise; nothing at all when `quiet`
    /// (failures are still reported at the end by the caller).
    pub fn new(total: usize, quiet: bool) -> Progress {
        Progress {
            total,
            tty: std::io::stderr().is_terminal(),
            quiet,
            start: Instant::now(),
            state: Mutex::new((0, 0)),
        }
    }

    /// Records one finished item: `ok` or not, with a short note (`wrong output`, `0.12s`).
    pub fn tick(&self, name: &str, ok: bool, note: &str) {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.0 += 1;
        st.1 += usize::from(!ok);
        if self.quiet {
            return;
        }
        let mut err = std::io::stderr().lock();
        if self.tty {
            if !ok {
                let _ = writeln!(err, "\r\x1b[2K\x1b[31mFAIL\x1b[0m {name} ({note})");
            }
            let width = 30;
            let filled = (st.0 * width).checked_div(self.total).unwrap_or(width);
            let _ = write!(
                err,
                "\r\x1b[2K[{}{}] {}/{} failed {} {:.1}s {}",
                "#".repeat(filled),
                ".".repeat(width - filled),
                st.0,
                self.total,
                st.1,
                self.start.elapsed().as_secs_f64(),
                name.chars().take(40).collect::<String>()
            );
        } else {
            let tag = if ok { "ok  " } else { "FAIL" };
            let w = self.total.to_string().len();
            let _ = writeln!(err, "[{:>w$}/{}] {tag} {name} ({note})", st.0, self.total);
        }
        let _ = err.flush();
    }

    /// Ends the bar (a newline on a terminal).
    pub fn finish(&self) {
        if self.tty && !self.quiet {
            let _ = writeln!(std::io::stderr(), "\r\x1b[2K");
        }
    }

    /// Seconds since the display was made.
    pub fn elapsed_secs(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }
}
