//! The comparison rule of the suites (shared/suites/README.md): the expected text is the
//! program's stdout, plus `\n` if it is non-empty and does not end in one, plus the exit code and
//! `\n`; both sides are compared after turning CRLF into LF and stripping trailing whitespace
//! from every line and from the end. On a mismatch, `diff` renders the differing region with a
//! little context, truncated so a runaway output stays readable.

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

/// A unified-style rendering of where normalized `expected` and `actual` differ: the region
/// between the common prefix and the common suffix of lines, with `context` lines around it and
/// at most `max_lines` lines per side. Long lines are cut at 160 characters.
pub fn diff(expected: &[u8], actual: &[u8], context: usize, max_lines: usize) -> String {
    let (e, a) = (normalize(expected), normalize(actual));
    let el: Vec<&[u8]> = e.split(|&b| b == b'\n').collect();
    let al: Vec<&[u8]> = a.split(|&b| b == b'\n').collect();
    let prefix = el.iter().zip(&al).take_while(|(x, y)| x == y).count();
    let max_suffix = el.len().min(al.len()) - prefix;
    let suffix = el
        .iter()
        .rev()
        .zip(al.iter().rev())
        .take(max_suffix)
        .take_while(|(x, y)| x == y)
        .count();
    let (e_end, a_end) = (el.len() - suffix, al.len() - suffix);
    let from = prefix.saturating_sub(context);
    let mut s = format!(
        "@@ -{},{} +{},{} @@ (expected {} lines, got {})\n",
        prefix + 1,
        e_end - prefix,
        prefix + 1,
        a_end - prefix,
        el.len(),
        al.len()
    );
    // Long lines are shown from a little before the first differing column.
    let col = match (el.get(prefix), al.get(prefix)) {
        (Some(x), Some(y)) => x.iter().zip(y.iter()).take_while(|(p, q)| p == q).count(),
        _ => 0,
    };
    let skip = col.saturating_sub(60);
    let show = |s: &mut String, sign: char, line: &[u8]| {
        let text = String::from_utf8_lossy(line.get(skip..).unwrap_or(&[]));
        let cut: String = text.chars().take(160).collect();
        let more = if cut.len() < text.len() { " [...]" } else { "" };
        let less = if skip > 0 && line.len() > skip {
            "[...] "
        } else {
            ""
        };
        s.push_str(&format!("{sign}{less}{cut}{more}\n"));
    };
    if skip > 0 {
        s.push_str(&format!("(lines shown from column {})\n", skip + 1));
    }
    for line in &el[from..prefix] {
        show(&mut s, ' ', line);
    }
    for (sign, lines) in [('-', &el[prefix..e_end]), ('+', &al[prefix..a_end])] {
        for line in lines.iter().take(max_lines) {
            show(&mut s, sign, line);
        }
        if lines.len() > max_lines {
            s.push_str(&format!(
                "{sign}... {} more lines\n",
                lines.len() - max_lines
            ));
        }
    }
    for line in el[e_end..].iter().take(context) {
        show(&mut s, ' ', line);
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
    fn diff_shows_the_differing_region() {
        let d = diff(b"1\n2\n3\n4\n0\n", b"1\n2\nX\n4\n0\n", 1, 10);
        assert!(d.contains("-3\n+X\n"), "{d}");
        assert!(d.starts_with("@@ -3,1 +3,1 @@"), "{d}");
        let long = format!("{}1\n0\n", "x ".repeat(200));
        let long2 = format!("{}2\n0\n", "x ".repeat(200));
        let d = diff(long.as_bytes(), long2.as_bytes(), 1, 10);
        assert!(d.contains("x 1\n") && d.contains("x 2\n"), "{d}");
        let d = diff(b"0\n", b"", 1, 10);
        assert!(d.contains("-0"), "{d}");
    }
}
