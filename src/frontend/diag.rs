//! Diagnostics: source spans, errors and warnings, and their rendering.
//!
//! A `Span` is a half-open byte range into the source. Line and column (both 1-based, column in
//! bytes) are computed only when rendering, so the lexer and parser never track them. Rendering
//! follows the gcc/clang shape the driver prints on stderr, a named warning carrying its flag:
//!
//! ```text
//! prog.sy:3:9: error: undefined name `x`
//!     int y = x + 1;
//!             ^
//! prog.sy:5:7: warning: unused variable `t` [-Wunused-variable]
//! ```
//!
//! `Diags` collects diagnostics under `DiagOptions`: warnings that are turned off (`-w`,
//! `-Wno-NAME`) are dropped as they arrive, `-Werror` makes the rest errors, and after
//! `error_limit` errors it accepts no more (`is_full`; the stages stop) and the rendering ends
//! with a "too many errors" line, so a broken input cannot produce unbounded output. Works on
//! arbitrary bytes: the echoed line shows bytes that are not UTF-8 as `<FF>` and control,
//! bidirectional and other invisible format characters as `<U+001B>` (as clang does), so a
//! hostile file cannot garble the terminal, and the caret line counts display columns (escapes,
//! wide characters, tabs), so it still points at the byte.

use std::fmt::Write;

/// Default for `-ferror-limit`: at most this many errors are reported.
pub const MAX_ERRORS: usize = 20;

/// At most this many warnings are shown; the rest are counted in the summary.
pub const MAX_WARNINGS: usize = 200;

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
    /// The last byte of the span (a closing `}`).
    pub fn last(self) -> Span {
        Span {
            lo: self.hi.saturating_sub(1).max(self.lo),
            hi: self.hi,
        }
    }
}

/// How serious a diagnostic (or one of its notes) is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    Error,
    Warning,
    Note,
    Help,
}

impl Level {
    fn text(self) -> &'static str {
        match self {
            Level::Error => "error",
            Level::Warning => "warning",
            Level::Note => "note",
            Level::Help => "help",
        }
    }
    /// ANSI colour of the level's word (bold): red, magenta, cyan, green, as clang.
    fn color(self) -> &'static str {
        match self {
            Level::Error => "\x1b[1;31m",
            Level::Warning => "\x1b[1;35m",
            Level::Note => "\x1b[1;36m",
            Level::Help => "\x1b[1;32m",
        }
    }
}

/// A named warning: `-Wno-NAME` turns it off.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lint {
    /// Control can reach the end of a function that returns a value.
    ReturnType,
    /// A local variable that is never read.
    UnusedVariable,
    /// `x / 0` or `x % 0` with a constant zero.
    DivByZero,
    /// A constant array index outside the array.
    ArrayBounds,
    /// Integer overflow while folding a constant expression.
    Overflow,
    /// A float constant converted to `int` loses its fraction.
    FloatConversion,
    /// A variable read before any assignment, on every path.
    Uninitialized,
}

impl Lint {
    pub const ALL: [Lint; 7] = [
        Lint::ReturnType,
        Lint::UnusedVariable,
        Lint::DivByZero,
        Lint::ArrayBounds,
        Lint::Overflow,
        Lint::FloatConversion,
        Lint::Uninitialized,
    ];
    /// The name in `-Wno-NAME` (gcc's names).
    pub fn name(self) -> &'static str {
        match self {
            Lint::ReturnType => "return-type",
            Lint::UnusedVariable => "unused-variable",
            Lint::DivByZero => "div-by-zero",
            Lint::ArrayBounds => "array-bounds",
            Lint::Overflow => "overflow",
            Lint::FloatConversion => "float-conversion",
            Lint::Uninitialized => "uninitialized",
        }
    }
    pub fn from_name(name: &str) -> Option<Lint> {
        Lint::ALL.into_iter().find(|l| l.name() == name)
    }
    /// One line for `--help` and the README.
    pub fn description(self) -> &'static str {
        match self {
            Lint::ReturnType => "control reaches the end of a non-void function",
            Lint::UnusedVariable => "a local variable is never read",
            Lint::DivByZero => "division or remainder by a constant zero",
            Lint::ArrayBounds => "a constant array index outside the array",
            Lint::Overflow => "integer overflow in a constant expression",
            Lint::FloatConversion => "a float constant converted to int loses its fraction",
            Lint::Uninitialized => "a variable is read before any assignment on every path",
        }
    }
}

/// What the user asked of diagnostics on the command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiagOptions {
    /// Stop after this many errors (`-ferror-limit=N`; 0: no limit).
    pub error_limit: usize,
    /// `-w`: no warnings at all.
    pub no_warnings: bool,
    /// `-Wno-NAME`.
    pub disabled: Vec<Lint>,
    /// `-Werror`: warnings are errors.
    pub werror: bool,
    /// ANSI colours (a terminal without `NO_COLOR`).
    pub color: bool,
}

impl Default for DiagOptions {
    fn default() -> Self {
        DiagOptions {
            error_limit: MAX_ERRORS,
            no_warnings: false,
            disabled: Vec::new(),
            werror: false,
            color: false,
        }
    }
}

/// A note or help line under a diagnostic, optionally pointing at another place (the
/// declaration a message is about).
#[derive(Clone, Debug)]
pub struct Note {
    pub level: Level,
    pub span: Option<Span>,
    pub message: String,
}

/// One error or warning with its notes.
#[derive(Clone, Debug)]
pub struct Diagnostic {
    pub level: Level,
    /// The warning's name; kept when `-Werror` makes it an error.
    pub lint: Option<Lint>,
    pub span: Span,
    pub message: String,
    pub notes: Vec<Note>,
}

impl Diagnostic {
    /// An error.
    pub fn new(span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            level: Level::Error,
            lint: None,
            span,
            message: message.into(),
            notes: Vec::new(),
        }
    }
    /// A warning named `lint`.
    pub fn warning(lint: Lint, span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            level: Level::Warning,
            lint: Some(lint),
            ..Diagnostic::new(span, message)
        }
    }
    pub fn with_note(mut self, span: Option<Span>, note: impl Into<String>) -> Diagnostic {
        self.notes.push(Note {
            level: Level::Note,
            span,
            message: note.into(),
        });
        self
    }
    pub fn with_help(mut self, help: impl Into<String>) -> Diagnostic {
        self.notes.push(Note {
            level: Level::Help,
            span: None,
            message: help.into(),
        });
        self
    }
}

/// A diagnostic sink with a cap.
#[derive(Default, Debug)]
pub struct Diags {
    pub list: Vec<Diagnostic>,
    pub opts: DiagOptions,
    errors: usize,
    warnings: usize,
    /// Errors refused after the limit (the stages stop soon after the first one).
    dropped_errors: usize,
    /// Warnings beyond `MAX_WARNINGS`.
    dropped_warnings: usize,
}

impl Diags {
    pub fn new(opts: DiagOptions) -> Diags {
        Diags {
            opts,
            ..Diags::default()
        }
    }
    pub fn push(&mut self, mut d: Diagnostic) {
        if d.level == Level::Warning {
            let lint = d.lint.expect("a warning has a name");
            if self.opts.no_warnings || self.opts.disabled.contains(&lint) {
                return;
            }
            if self.opts.werror {
                d.level = Level::Error;
            }
        }
        if d.level == Level::Error {
            if self.is_full() {
                self.dropped_errors += 1;
                return;
            }
            self.errors += 1;
        } else {
            if self.warnings >= MAX_WARNINGS {
                self.dropped_warnings += 1;
                return;
            }
            self.warnings += 1;
        }
        self.list.push(d);
    }
    pub fn error(&mut self, span: Span, message: impl Into<String>) {
        self.push(Diagnostic::new(span, message));
    }
    pub fn warn(&mut self, lint: Lint, span: Span, message: impl Into<String>) {
        self.push(Diagnostic::warning(lint, span, message));
    }
    /// Whether warning `lint` would be kept (so callers can skip costly checks).
    pub fn wants(&self, lint: Lint) -> bool {
        !self.opts.no_warnings && !self.opts.disabled.contains(&lint)
    }
    /// True if no error has been reported (warnings do not count).
    pub fn is_empty(&self) -> bool {
        self.errors == 0
    }
    pub fn has_errors(&self) -> bool {
        self.errors > 0
    }
    pub fn num_errors(&self) -> usize {
        self.errors
    }
    pub fn num_warnings(&self) -> usize {
        self.warnings + self.dropped_warnings
    }
    /// The error limit is reached: stages stop.
    pub fn is_full(&self) -> bool {
        self.opts.error_limit != 0 && self.errors >= self.opts.error_limit
    }
    /// Every diagnostic in source order (stable: a stage's own order among equal positions),
    /// the "too many errors" line if the limit was hit, and a summary line.
    pub fn render(&self, source: &[u8], file_name: &str) -> String {
        let mut out = String::new();
        if self.list.is_empty() {
            return out;
        }
        let lines = LineIndex::new(source);
        let paint = Paint(self.opts.color);
        let view = SourceView {
            lines: &lines,
            source,
            file_name,
            paint,
        };
        let mut order: Vec<&Diagnostic> = self.list.iter().collect();
        order.sort_by_key(|d| d.span.lo);
        for d in order {
            let message = match d.lint {
                Some(l) if d.level == Level::Error => {
                    format!("{} [-Werror,-W{}]", d.message, l.name())
                }
                Some(l) => format!("{} [-W{}]", d.message, l.name()),
                None => d.message.clone(),
            };
            render_one(&mut out, view, d.level, d.span, &message);
            for note in &d.notes {
                match note.span {
                    Some(s) => render_one(&mut out, view, note.level, s, &note.message),
                    None => {
                        let _ = writeln!(
                            out,
                            "{}: {}",
                            paint.level(note.level),
                            escape_str(&note.message)
                        );
                    }
                }
            }
        }
        // The stages stop at the limit, so reaching it is reported even if no error was refused.
        if self.dropped_errors > 0 || self.is_full() {
            let _ = writeln!(
                out,
                "{}: {}: too many errors emitted, stopping now [-ferror-limit={}]",
                paint.bold(&escape_str(file_name)),
                paint.level(Level::Error),
                self.opts.error_limit
            );
        }
        if self.dropped_warnings > 0 {
            let _ = writeln!(
                out,
                "{}: {}: {} more warnings not shown",
                paint.bold(&escape_str(file_name)),
                paint.level(Level::Note),
                self.dropped_warnings
            );
        }
        out
    }

    /// The closing count, `2 warnings and 1 error generated.` (clang's words), if anything was
    /// reported.
    pub fn summary(&self) -> Option<String> {
        let plural = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
        match (self.num_warnings(), self.errors) {
            (0, 0) => None,
            (w, 0) => Some(plural(w, "warning")),
            (0, e) => Some(plural(e, "error")),
            (w, e) => Some(format!(
                "{} and {}",
                plural(w, "warning"),
                plural(e, "error")
            )),
        }
        .map(|s| format!("{s} generated.\n"))
    }
}

/// Optional ANSI colouring of the rendering.
#[derive(Clone, Copy)]
struct Paint(bool);

impl Paint {
    fn bold(self, s: &str) -> String {
        if self.0 {
            format!("\x1b[1m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }
    fn level(self, l: Level) -> String {
        if self.0 {
            format!("{}{}\x1b[0m", l.color(), l.text())
        } else {
            l.text().to_string()
        }
    }
    fn caret(self, s: &str) -> String {
        if self.0 {
            format!("\x1b[1;32m{s}\x1b[0m")
        } else {
            s.to_string()
        }
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

/// The line of an offset (`starttime()` line numbers), found by counting newlines from the offset asked before, so a walk
/// in source order counts each byte once.
#[derive(Clone, Copy, Debug)]
pub struct LineCursor {
    offset: usize,
    line: usize,
}

impl Default for LineCursor {
    fn default() -> Self {
        LineCursor { offset: 0, line: 1 }
    }
}

impl LineCursor {
    /// 1-based line of `offset` in `source`.
    pub fn line_of(&mut self, source: &[u8], offset: u32) -> usize {
        let offset = (offset as usize).min(source.len());
        let newlines = |bytes: &[u8]| bytes.iter().filter(|&&b| b == b'\n').count();
        if offset >= self.offset {
            self.line += newlines(&source[self.offset..offset]);
        } else {
            self.line -= newlines(&source[offset..self.offset]);
        }
        self.offset = offset;
        self.line
    }
}

/// What every rendered diagnostic of one file shares.
#[derive(Clone, Copy)]
struct SourceView<'a> {
    lines: &'a LineIndex,
    source: &'a [u8],
    file_name: &'a str,
    paint: Paint,
}

fn render_one(out: &mut String, view: SourceView, level: Level, span: Span, message: &str) {
    let SourceView {
        lines,
        source,
        file_name,
        paint,
    } = view;
    let lo = span.lo.min(source.len() as u32);
    let (line, col) = lines.line_col(lo);
    let _ = writeln!(
        out,
        "{} {}: {}",
        paint.bold(&format!("{}:{line}:{col}:", escape_str(file_name))),
        paint.level(level),
        paint.bold(&escape_str(message))
    );
    let (ls, le) = lines.line_range(source, line);
    // Long lines (a 10^5-character identifier) are shown cut around the caret, at character
    // boundaries.
    const WINDOW: usize = 160;
    let caret = lo as usize;
    let mut start = if caret - ls > WINDOW {
        caret - WINDOW / 2
    } else {
        ls
    };
    while start < caret && source[start] & 0xC0 == 0x80 {
        start += 1;
    }
    let mut end = le.min(start + 2 * WINDOW);
    while end > caret + 1 && end < le && source[end] & 0xC0 == 0x80 {
        end -= 1;
    }
    let hi = (span.hi as usize).clamp(caret + 1, end.max(caret + 1));
    let mut shown = String::from("    ");
    let mut marker = String::from("    ");
    let mut span_width = 0;
    for (at, unit) in display_units(&source[start..end]) {
        let at = start + at;
        match unit {
            Unit::Tab => shown.push('\t'),
            Unit::Text(c, _) => shown.push(c),
            Unit::Escaped(ref e) => shown.push_str(e),
        }
        if at < caret {
            // The caret line repeats tabs so it lines up however wide the terminal's tabs are.
            match unit {
                Unit::Tab => marker.push('\t'),
                _ => marker.extend(std::iter::repeat_n(' ', unit.width())),
            }
        } else if at < hi {
            span_width += if matches!(unit, Unit::Tab) {
                1
            } else {
                unit.width()
            };
        }
    }
    let _ = writeln!(out, "{shown}");
    let indent = marker.len();
    marker.push('^');
    marker.extend(std::iter::repeat_n(
        '~',
        span_width.saturating_sub(1).min(WINDOW),
    ));
    let (pad, mark) = marker.split_at(indent);
    let _ = writeln!(out, "{pad}{}", paint.caret(mark));
}

/// One displayed piece of a source line.
enum Unit {
    Tab,
    /// A printable character and its width in terminal columns (0 for combining marks, 2 for
    /// East Asian wide characters).
    Text(char, usize),
    /// A byte that is not UTF-8 (`<FF>`) or a character that would upset the terminal or hide
    /// what the line says (`<U+001B>`: control characters, bidirectional overrides, zero-width
    /// and other format characters, line separators).
    Escaped(String),
}

impl Unit {
    fn width(&self) -> usize {
        match self {
            Unit::Tab => 1,
            Unit::Text(_, w) => *w,
            Unit::Escaped(e) => e.len(),
        }
    }
}

/// The display units of `bytes` with their byte offsets. Every invalid byte is its own unit, so
/// a caret at any byte of a broken sequence lines up.
fn display_units(bytes: &[u8]) -> Vec<(usize, Unit)> {
    let mut units = Vec::new();
    let mut at = 0;
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            let unit = if c == '\t' {
                Unit::Tab
            } else if needs_escape(c) {
                Unit::Escaped(format!("<U+{:04X}>", c as u32))
            } else {
                Unit::Text(c, char_width(c))
            };
            units.push((at, unit));
            at += c.len_utf8();
        }
        for &b in chunk.invalid() {
            units.push((at, Unit::Escaped(format!("<{b:02X}>"))));
            at += 1;
        }
    }
    units
}

/// `s` with the characters `needs_escape` names (and tabs) written as `<U+XXXX>`.
fn escape_str(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.chars().any(|c| c == '\t' || needs_escape(c)) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if c == '\t' || needs_escape(c) {
            let _ = write!(out, "<U+{:04X}>", c as u32);
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Control characters (C0, DEL, C1), and the invisible format characters that reorder or hide
/// text on a terminal (bidirectional embeddings, overrides and isolates, zero-width spaces and
/// joiners, the BOM, line and paragraph separators, tag characters).
fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(c as u32,
            0x00AD | 0x061C | 0x180E | 0x200B..=0x200F | 0x2028..=0x202E | 0x2060..=0x206F
            | 0xFEFF | 0xFFF9..=0xFFFB | 0xE0000..=0xE007F)
}

/// Terminal columns of a printable character: a small table of combining marks (0) and East
/// Asian wide and emoji ranges (2), else 1. Good enough to keep the caret under the right
/// character in diagnostics.
fn char_width(c: char) -> usize {
    match c as u32 {
        0x0300..=0x036F
        | 0x0483..=0x0489
        | 0x0591..=0x05BD
        | 0x0610..=0x061A
        | 0x064B..=0x065F
        | 0x1AB0..=0x1AFF
        | 0x1DC0..=0x1DFF
        | 0x20D0..=0x20FF
        | 0xFE00..=0xFE0F
        | 0xFE20..=0xFE2F => 0,
        0x1100..=0x115F
        | 0x2E80..=0x303E
        | 0x3041..=0x33FF
        | 0x3400..=0x4DBF
        | 0x4E00..=0x9FFF
        | 0xA000..=0xA4CF
        | 0xAC00..=0xD7A3
        | 0xF900..=0xFAFF
        | 0xFE30..=0xFE4F
        | 0xFF00..=0xFF60
        | 0xFFE0..=0xFFE6
        | 0x1F300..=0x1F64F
        | 0x1F900..=0x1F9FF
        | 0x20000..=0x3FFFD => 2,
        _ => 1,
    }
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

    fn render1(src: &[u8], lo: usize, hi: usize, msg: &str) -> String {
        let mut d = Diags::default();
        d.error(Span::new(lo, hi), msg);
        d.render(src, "a.sy")
    }

    #[test]
    fn escapes_bytes_that_are_not_utf8_and_lines_up_the_caret() {
        // A lone continuation byte, a truncated sequence (one unit per byte), then the error.
        let r = render1(b"int \x80x \xe4\xb8 = q;\n", 12, 13, "undefined name `q`");
        let expect = format!(
            "a.sy:1:13: error: undefined name `q`\n    int <80>x <E4><B8> = q;\n{}^\n",
            " ".repeat(4 + 21)
        );
        assert_eq!(r, expect);
        // The caret on an invalid byte underlines its escape.
        let r = render1(b"a \xff b\n", 2, 3, "invalid character byte 0xff");
        assert_eq!(
            r,
            "a.sy:1:3: error: invalid character byte 0xff\n    a <FF> b\n      ^~~~\n"
        );
    }

    #[test]
    fn escapes_control_and_bidi_characters() {
        // NUL, ESC (a colour sequence), DEL, a C1 control and a right-to-left override: none
        // reaches the terminal raw, in the line or in the message.
        let src = "x\0\x1b[31m\x7f\u{85}\u{202e}y = z;\n".as_bytes();
        let z = src.iter().position(|&b| b == b'z').unwrap();
        let r = render1(src, z, z + 1, "undefined name `z` \u{202e}\x1b");
        let expect = format!(
            "a.sy:1:18: error: undefined name `z` <U+202E><U+001B>\n    \
             x<U+0000><U+001B>[31m<U+007F><U+0085><U+202E>y = z;\n    {}^\n",
            " ".repeat(1 + 8 + 8 + 4 + 8 + 8 + 8 + 4)
        );
        assert_eq!(r, expect);
        assert!(r.bytes().all(|b| b >= 0x20 || b == b'\n'));
    }

    #[test]
    fn counts_columns_of_tabs_wide_and_combining_characters() {
        // A tab is repeated; a CJK character takes two columns, a combining accent none.
        let src = "\t\u{4e2d}e\u{301} q\n".as_bytes();
        let q = src.iter().position(|&b| b == b'q').unwrap();
        let r = render1(src, q, q + 1, "m");
        assert_eq!(
            r,
            "a.sy:1:9: error: m\n    \t\u{4e2d}e\u{301} q\n    \t    ^\n"
        );
        // A span over a wide character is underlined across both columns.
        let r = render1("a \u{4e2d}\n".as_bytes(), 2, 5, "m");
        assert!(r.ends_with("    a \u{4e2d}\n      ^~\n"), "{r}");
    }

    #[test]
    fn long_lines_are_cut_at_character_boundaries() {
        // The window would start inside a 3-byte character: it starts after it instead.
        let mut src = "\u{4e2d}".repeat(100).into_bytes();
        let at = src.len();
        src.extend_from_slice(b" q\n");
        let r = render1(&src, at + 1, at + 2, "m");
        let shown = r.lines().nth(1).unwrap();
        assert!(!shown.contains('<'), "{r}");
        let caret = r.lines().nth(2).unwrap();
        let wide = shown.chars().filter(|&c| c == '\u{4e2d}').count();
        assert!(wide > 10, "{r}");
        assert_eq!(caret, format!("{}^", " ".repeat(4 + 2 * wide + 1)), "{r}");
    }
}
