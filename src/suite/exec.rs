//! Running a child process with a file (or nothing) on stdin, stdout and stderr captured, and a
//! timeout. Output is drained by two threads so a chatty child never blocks on a full pipe; the
//! parent polls for exit with a backoff capped at 10 ms and kills the child when time runs out.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How a child process ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Normal exit with this code (0..=255).
    Exited(i32),
    /// Killed by this signal (a crash: SIGSEGV = 11, SIGILL = 4, ...).
    Signaled(i32),
    /// Still running when the timeout struck; we killed it.
    TimedOut,
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Status::Exited(c) => write!(f, "exit code {c}"),
            Status::Signaled(s) => write!(f, "killed by signal {s}{}", signal_name(*s)),
            Status::TimedOut => write!(f, "timed out"),
        }
    }
}

fn signal_name(s: i32) -> &'static str {
    match s {
        4 => " (SIGILL)",
        6 => " (SIGABRT)",
        7 => " (SIGBUS)",
        8 => " (SIGFPE)",
        9 => " (SIGKILL)",
        11 => " (SIGSEGV)",
        _ => "",
    }
}

/// What a finished child left behind.
#[derive(Debug)]
pub struct Output {
    pub status: Status,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// Wall time from spawn to exit.
    pub elapsed: Duration,
}

/// Runs `cmd` with stdin from `stdin` (empty when `None`), killing it after `timeout`.
pub fn run(
    cmd: &mut Command,
    stdin: Option<&Path>,
    timeout: Option<Duration>,
) -> Result<Output, String> {
    let input = match stdin {
        Some(p) => Stdio::from(
            std::fs::File::open(p).map_err(|e| format!("opening {}: {e}", p.display()))?,
        ),
        None => Stdio::null(),
    };
    let start = Instant::now();
    let mut child = cmd
        .stdin(input)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {:?}: {e}", cmd.get_program()))?;
    let drain = |r: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut r) = r {
                let _ = r.read_to_end(&mut buf);
            }
            buf
        })
    };
    let out = drain(
        child
            .stdout
            .take()
            .map(|r| Box::new(r) as Box<dyn Read + Send>),
    );
    let err = drain(
        child
            .stderr
            .take()
            .map(|r| Box::new(r) as Box<dyn Read + Send>),
    );
    let mut nap = Duration::from_micros(200);
    let status = loop {
        match child.try_wait() {
            Ok(Some(st)) => {
                use std::os::unix::process::ExitStatusExt;
                break match (st.code(), st.signal()) {
                    (Some(c), _) => Status::Exited(c),
                    (None, Some(s)) => Status::Signaled(s),
                    (None, None) => Status::Signaled(0),
                };
            }
            Ok(None) => {}
            Err(e) => return Err(format!("waiting for {:?}: {e}", cmd.get_program())),
        }
        if timeout.is_some_and(|t| start.elapsed() >= t) {
            let _ = child.kill();
            let _ = child.wait();
            break Status::TimedOut;
        }
        std::thread::sleep(nap);
        nap = (nap * 2).min(Duration::from_millis(10));
    };
    let elapsed = start.elapsed();
    let stdout = out.join().unwrap_or_default();
    let stderr = err.join().unwrap_or_default();
    Ok(Output {
        status,
        stdout,
        stderr,
        elapsed,
    })
}
