//! Diagnostics: source spans, error records and their rendering.
//!
//! A `Span` is a half-open byte range into the source. Line and column (both 1-based, column in
//! bytes) are computed only when rendering, so the lexer and parser never track them. Rendering
//! follows the gcc/clang shape the driver prints on stderr:
//!
//! ```text
//! prog.sy:3:9: error: undefined name `x`
//!     int y = x + 1;
//!             ^
//! ```
//!
//! `Diags` collects errors and stops accepting more after `MAX_ERRORS`, so a broken input cannot
//! produce unbounded output. Works on arbitrary bytes (non-UTF-8 is shown lossily).

use std::fmt::Write;

/// At most this many errors are kept; later ones are dropped (and counted in the summary).
pub const MAX_ERRORS: usize = 20;

/// A half-open byte range `[lo, hi)` in the source.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Span {
    pub lo: u32,
    pub hi: u32,
}

impl Span {
    pub fn new(lo: usize, hi: usize) -> Span {
        Span {
            lo: lo as u32,
            hi: hi as u32,
        }
    }
    /// The smallest span covering both.
    pub fn to(self, other: Span) -> Span {
        Span {
            lo: self.lo.min(other.lo),
            hi: self.hi.max(other.hi),
        }
    }
}

/// One error with optional notes pointing elsewhere (e.g. at a previous definition).
#[derive(Clone, Debug)]
pub struct Diagnostic {
    pub span: Span,
    pub message: String,
    pub notes: Vec<(Option<Span>, String)>,
}

impl Diagnostic {
    pub fn new(span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            span,
            message: message.into(),
            notes: Vec::new(),
        }
    }
    pub fn with_note(mut self, span: Option<Span>, note: impl Into<String>) -> Diagnostic {
        self.notes.push((span, note.into()));
        self
    }
}

/// An error sink with a cap.
#[derive(Default, Debug)]
pub struct Diags {
    pub list: Vec<Diagnostic>,
    /// Errors seen beyond `MAX_ERRORS`.
    pub dropped: usize,
}

impl Diags {
    pub fn push(&mut self, d: Diagnostic) {
        if self.list.len() < MAX_ERRORS {
            self.list.push(d);
        } else {
            self.dropped += 1;
        }
    }
    pub fn error(&mut self, span: Span, message: impl Into<String>) {
        self.push(Diagnostic::new(span, message));
    }
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }
    pub fn is_full(&self) -> bool {
        self.list.len() >= MAX_ERRORS
    }
    pub fn render(&self, source: &[u8], file_name: &str) -> String {
        let mut out = String::new();
        let lines = LineIndex::new(source);
        for d in &self.list {
            render_one(
                &mut out, &lines, source, file_name, "error", d.span, &d.message,
            );
            for (span, note) in &d.notes {
                match span {
                    Some(s) => render_one(&mut out, &lines, source, file_name, "note", *s, note),
                    None => {
                        let _ = writeln!(out, "note: {note}");
                    }
                }
            }
        }
        if self.dropped > 0 {
            let _ = writeln!(
                out,
                "{}: too many errors ({} more not shown)",
                file_name, self.dropped
            );
        }
        out
    }
}

/// Start offsets of all lines, for offset -> (line, column).
pub struct LineIndex {
    starts: Vec<u32>,
}

impl LineIndex {
    pub fn new(source: &[u8]) -> LineIndex {
        let mut starts = vec![0u32];
        for (i, &b) in source.iter().enumerate() {
            if b == b'\n' {
                starts.push(i as u32 + 1);
            }
        }
        LineIndex { starts }
    }
    /// 1-based line and byte column of `offset`.
    pub fn line_col(&self, offset: u32) -> (usize, usize) {
        let line = match self.starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i - 1,
        };
        (line + 1, (offset - self.starts[line]) as usize + 1)
    }
    /// Byte range of line `line` (1-based), without the newline.
    pub fn line_range(&self, source: &[u8], line: usize) -> (usize, usize) {
        let lo = self.starts[line - 1] as usize;
        let mut hi = self
            .starts
            .get(line)
            .map_or(source.len(), |&s| s as usize - 1);
        if hi > lo && source.get(hi - 1) == Some(&b'\r') {
            hi -= 1;
        }
        (lo, hi.max(lo))
    }
}

/// 1-based line of `offset` in `source` (used for `starttime()` line numbers).
pub fn line_of(source: &[u8], offset: u32) -> usize {
    1 + source[..(offset as usize).min(source.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
}

fn render_one(
    out: &mut String,
    lines: &LineIndex,
    source: &[u8],
    file_name: &str,
    level: &str,
    span: Span,
    message: &str,
) {
    let lo = span.lo.min(source.len() as u32);
    let (line, col) = lines.line_col(lo);
    let _ = writeln!(out, "{file_name}:{line}:{col}: {level}: {message}");
    let (ls, le) = lines.line_range(source, line);
    // Long lines (a 10^5-character identifier) are shown cut around the caret.
    const WINDOW: usize = 160;
    let caret = lo as usize;
    let start = if caret - ls > WINDOW {
        caret - WINDOW / 2
    } else {
        ls
    };
    let end = le.min(start + 2 * WINDOW);
    let text = &source[start..end];
    let shown: String = String::from_utf8_lossy(text)
        .chars()
        .map(|c| if c.is_control() && c != '\t' { ' ' } else { c })
        .collect();
    let _ = writeln!(out, "    {}", shown);
    let mut marker = String::from("    ");
    for &b in &source[start..caret.min(end)] {
        // Keep tabs so the caret lines up; UTF-8 continuation bytes take no column.
        if b == b'\t' {
            marker.push('\t');
        } else if b & 0xC0 != 0x80 {
            marker.push(' ');
        }
    }
    marker.push('^');
    let hi = (span.hi as usize).min(end);
    if hi > caret + 1 {
        for _ in 0..(hi - caret - 1).min(WINDOW) {
            marker.push('~');
        }
    }
    let _ = writeln!(out, "{}", marker);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_line_col_and_caret() {
        let src = b"int main() {\n  return x;\n}\n";
        let mut d = Diags::default();
        d.error(Span::new(22, 23), "undefined name `x`");
        let r = d.render(src, "a.sy");
        assert_eq!(
            r,
            "a.sy:2:10: error: undefined name `x`\n      return x;\n             ^\n"
        );
    }
}
