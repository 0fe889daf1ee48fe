//! The comparison rule of the suites (shared/suites/README.md): the expected text is the
//! program's stdout, plus `\n` if it is non-empty and does not end in one, plus the exit code and
//! `\n`; both sides are compared after turning CRLF into LF and stripping trailing whitespace
//! from every line and from the end. On a mismatch, `diff` renders a unified diff with context,
//! truncated so a runaway output stays readable.

/// The `.out` text a run corresponds to.
pub fn actual_text(stdout: &[u8], exit_code: i32) -> Vec<u8> {
    let mut t = stdout.to_vec();
    if !t.is_empty() && !t.ends_with(b"\n") {
        t.push(b'\n');
    }
    t.extend_from_slice(format!("{}\n", exit_code & 0xff).as_bytes());
    t
}

/// Normalizes per the rule: CRLF -> LF, trailing whitespace stripped per line and at the end.
pub fn normalize(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    for line in text.split(|&b| b == b'\n') {
        let end = line
            .iter()
            .rposition(|b| !b.is_ascii_whitespace())
            .map_or(0, |i| i + 1);
        out.extend_from_slice(&line[..end]);
        out.push(b'\n');
    }
    let end = out
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(0, |i| i + 1);
    out.truncate(end);
    out
}

/// Whether `actual` matches `expected` under the rule.
pub fn matches(expected: &[u8], actual: &[u8]) -> bool {
    normalize(expected) == normalize(actual)
}

/// A unified diff (`similar`) from normalized `expected` to `actual`: `-` lines expected, `+`
/// lines got, `context` unchanged lines around each change, at most `max_lines` changed lines in
/// all (a runaway output stays readable). Long lines are cut to a window of 160 characters that
/// starts a little before the first column where the first changed pair of a hunk differs.
pub fn diff(expected: &[u8], actual: &[u8], context: usize, max_lines: usize) -> String {
    use similar::ChangeTag;
    let (mut e, mut a) = (normalize(expected), normalize(actual));
    // Both end in a newline, so a last line is never reported as "no newline at end of file".
    e.push(b'\n');
    a.push(b'\n');
    let (e, a) = (String::from_utf8_lossy(&e), String::from_utf8_lossy(&a));
    let d = similar::TextDiff::configure()
        .timeout(std::time::Duration::from_secs(2))
        .diff_lines(e.as_ref(), a.as_ref());
    let mut s = format!(
        "--- expected ({} lines)\n+++ got ({} lines)\n",
        e.lines().count(),
        a.lines().count()
    );
    let mut shown = 0;
    let mut hidden = 0;
    for hunk in d.unified_diff().context_radius(context).iter_hunks() {
        if shown >= max_lines {
            hidden += hunk
                .iter_changes()
                .filter(|c| c.tag() != ChangeTag::Equal)
                .count();
            continue;
        }
        s.push_str(&format!("{}\n", hunk.header()));
        let changes: Vec<_> = hunk.iter_changes().collect();
        let first = |tag| changes.iter().find(|c| c.tag() == tag).map(|c| c.value());
        let skip = match (first(ChangeTag::Delete), first(ChangeTag::Insert)) {
            (Some(x), Some(y)) => {
                let col = x.chars().zip(y.chars()).take_while(|(p, q)| p == q).count();
                col.saturating_sub(60)
            }
            _ => 0,
        };
        for c in changes {
            let sign = match c.tag() {
                ChangeTag::Equal => ' ',
                ChangeTag::Delete => '-',
                ChangeTag::Insert => '+',
            };
            if sign != ' ' {
                if shown >= max_lines {
                    hidden += 1;
                    continue;
                }
                shown += 1;
            }
            let line = c.value().trim_end_matches('\n');
            let count = line.chars().count();
            let from = if sign == ' ' { 0 } else { skip.min(count) };
            let cut: String = line.chars().skip(from).take(160).collect();
            let less = if from > 0 { "[...] " } else { "" };
            let more = if from + 160 < count { " [...]" } else { "" };
            s.push_str(&format!("{sign}{less}{cut}{more}\n"));
        }
    }
    if hidden > 0 {
        s.push_str(&format!("... {hidden} more changed lines\n"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expected_text_follows_the_convention() {
        assert_eq!(actual_text(b"", 3), b"3\n");
        assert_eq!(actual_text(b"13", 0), b"13\n0\n");
        assert_eq!(actual_text(b"1\n", 255), b"1\n255\n");
        assert_eq!(actual_text(b"", 300), b"44\n");
    }

    #[test]
    fn whitespace_rule() {
        assert!(matches(b"1 \r\n2\r\n0", b"1\n2\n0\n"));
        assert!(matches(b"a\n0\n\n\n", b"a  \n0"));
        assert!(!matches(b"a\n0\n", b"a\n\n0\n"));
        assert!(!matches(b" a\n0", b"a\n0"));
    }

    #[test]
    fn diff_is_unified_from_expected_to_got() {
        let d = diff(b"1\n2\n3\n4\n0\n", b"1\n2\nX\n4\n0\n", 1, 10);
        assert_eq!(
            d,
            "--- expected (5 lines)\n+++ got (5 lines)\n@@ -2,3 +2,3 @@\n 2\n-3\n+X\n 4\n"
        );
        // Two separate changes make two hunks; the cap counts changed lines only.
        let many: String = (0..100).map(|i| format!("{i}\n")).collect();
        let other = many.replace("10\n", "ten\n").replace("90\n", "ninety\n");
        let d = diff(many.as_bytes(), other.as_bytes(), 2, 10);
        assert_eq!(d.matches("@@ ").count(), 2, "{d}");
        assert!(d.contains(" 8\n 9\n-10\n+ten\n 11\n 12\n"), "{d}");
        let d = diff(many.as_bytes(), other.as_bytes(), 2, 2);
        assert!(
            d.contains("+ten\n") && d.ends_with("... 2 more changed lines\n"),
            "{d}"
        );
        let long = format!("{}1\n0\n", "x ".repeat(200));
        let long2 = format!("{}2\n0\n", "x ".repeat(200));
        let d = diff(long.as_bytes(), long2.as_bytes(), 1, 10);
        assert!(d.contains("x 1\n") && d.contains("x 2\n"), "{d}");
        let d = diff(b"0\n", b"", 1, 10);
        assert!(d.contains("-0"), "{d}");
    }
}
