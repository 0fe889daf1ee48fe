//! Lexer: bytes -> tokens with spans, one token per `Lexer::next_token` call (the parser
//! pulls them as it goes, so no token table is ever built; `lex` collects them all, for tests).
//!
//! Hand-written over `&[u8]`, so any input (including non-UTF-8) is accepted without panics;
//! bytes that start no token are reported as "invalid character". Identifiers are interned into
//! `Interner` (an id per distinct name). Literals are decoded here:
//!
//! * integers: decimal, octal (`017`), hex (`0x1F`). Decimal literals up to 2^31 (so that
//!   `-2147483648` works) and octal/hex literals up to 0xFFFF_FFFF are accepted and wrapped to
//!   32 bits, as C compilers do for `int`; anything larger is "integer literal out of range".
//! * floats: decimal (`1.`, `.5`, `1e-6`) through Rust's correctly rounded `str::parse::<f32>`,
//!   and C99 hex floats (`0x1.921fb6p+1`, `0x.AP-3`) through `parse_hex_float`, also correctly
//!   rounded (round-half-even, subnormals included).
//! * strings: `"..."` with C escapes, kept as raw bytes (only `putf` accepts them).
//!
//! Comments (`//`, `/* */`) and whitespace are skipped; an unterminated block comment is an
//! error at its opening. Lexing continues after an error, so several can be reported.

use super::diag::{Diags, Span};
use std::sync::Arc;

/// An interned identifier.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Sym(pub u32);

/// Maps identifier text to `Sym` and back.
#[derive(Default, Debug)]
pub struct Interner {
    /// An open-addressing hash table over `names`: each slot holds the high 32 bits of a name's
    /// hash above its `Sym` number plus one, or 0 when empty. Its size is a power of two (or 0),
    /// at least twice the number of names.
    table: Vec<u64>,
    /// One allocation per distinct name, shared by the list and the checked program's
    /// variables (`shared`).
    names: Vec<Arc<str>>,
    /// String literals' bytes, indexed by `Tok::Str` (keeps tokens small: 16 bytes each).
    strings: Vec<Box<[u8]>>,
}

/// The names and string literals an interner added since some earlier point
/// (`Interner::copy_since`), for a copy of it on another thread (`Interner::extend`).
pub type InternedSince = (Vec<Arc<str>>, Vec<Box<[u8]>>);

/// The hash of a name in `Interner::table`: FxHash over 8-byte words, with the length mixed
/// in. Its high bits are the best mixed.
fn name_hash(bytes: &[u8]) -> u64 {
    const K: u64 = 0xf135_7aea_2e62_a9c5;
    let mut h = bytes.len() as u64;
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let w = u64::from_le_bytes(c.try_into().unwrap_or_default());
        h = (h.rotate_left(26) ^ w).wrapping_mul(K);
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut w = 0u64;
        for (k, &b) in rest.iter().enumerate() {
            w |= (b as u64) << (8 * k);
        }
        h = (h.rotate_left(26) ^ w).wrapping_mul(K);
    }
    h.wrapping_mul(K)
}

/// Byte-string equality for short strings, without a call to `memcmp`.
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

/// The slot where `Interner::table` (of `size` slots) starts looking for `hash`.
fn home_slot(hash: u64, size: usize) -> usize {
    (hash >> (64 - size.trailing_zeros())) as usize
}

impl Interner {
    pub fn intern(&mut self, s: &str) -> Sym {
        self.intern_bytes(s.as_bytes())
    }

    /// `intern` of a name given as bytes, which must be UTF-8 (identifiers are ASCII).
    fn intern_bytes(&mut self, bytes: &[u8]) -> Sym {
        if self.table.len() < 2 * (self.names.len() + 1) {
            self.grow_table();
        }
        let hash = name_hash(bytes);
        let tag = hash & !0xFFFF_FFFF;
        let mask = self.table.len() - 1;
        let mut slot = home_slot(hash, self.table.len());
        loop {
            let entry = self.table[slot];
            if entry == 0 {
                break;
            }
            let k = entry as u32 as usize - 1;
            if entry & !0xFFFF_FFFF == tag && same_bytes(self.names[k].as_bytes(), bytes) {
                return Sym(k as u32);
            }
            slot = (slot + 1) & mask;
        }
        let sym = Sym(self.names.len() as u32);
        self.names.push(String::from_utf8_lossy(bytes).into());
        self.table[slot] = tag | (sym.0 as u64 + 1);
        sym
    }

    /// Doubles `table` (to at least 64 slots) and places every name in it again.
    fn grow_table(&mut self) {
        let size = (2 * self.table.len())
            .max(4 * self.names.len())
            .next_power_of_two()
            .max(64);
        self.table = vec![0; size];
        for (k, name) in self.names.iter().enumerate() {
            let hash = name_hash(name.as_bytes());
            let mut slot = home_slot(hash, size);
            while self.table[slot] != 0 {
                slot = (slot + 1) & (size - 1);
            }
            self.table[slot] = (hash & !0xFFFF_FFFF) | (k as u64 + 1);
        }
    }
    pub fn get(&self, sym: Sym) -> &str {
        &self.names[sym.0 as usize]
    }
    /// The text of `sym`, shared (no copy).
    pub fn shared(&self, sym: Sym) -> Arc<str> {
        self.names[sym.0 as usize].clone()
    }
    /// The bytes of string literal `n` (`Tok::Str(n)`).
    pub fn string(&self, n: u32) -> &[u8] {
        &self.strings[n as usize]
    }
    /// The numbers of names and of string literals interned so far (`copy_since` takes the
    /// ones after).
    pub fn counts(&self) -> (usize, usize) {
        (self.names.len(), self.strings.len())
    }
    /// A copy of the names and string literals interned after `counts` gave `since`, for
    /// `extend` to give a copy kept on another thread. The names are shared, not copied.
    pub fn copy_since(&self, since: (usize, usize)) -> InternedSince {
        (
            self.names[since.0..].to_vec(),
            self.strings[since.1..].to_vec(),
        )
    }
    /// A copy of this interner's names and string literals, for `get`, `shared` and `string`
    /// only (it interns nothing new).
    pub fn read_only_copy(&self) -> Interner {
        let (names, strings) = self.copy_since((0, 0));
        Interner {
            table: Vec::new(),
            names,
            strings,
        }
    }
    /// Appends what `copy_since` gave to a `read_only_copy`.
    pub fn extend(&mut self, (names, strings): InternedSince) {
        self.names.extend(names);
        self.strings.extend(strings);
    }
    fn add_string(&mut self, bytes: Vec<u8>) -> u32 {
        self.strings.push(bytes.into_boxed_slice());
        (self.strings.len() - 1) as u32
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Tok {
    Ident(Sym),
    /// An integer literal, already wrapped to 32 bits.
    Int(i32),
    Float(f32),
    /// A string literal: an index into the interner's strings.
    Str(u32),
    // keywords
    KwInt,
    KwFloat,
    KwVoid,
    KwConst,
    KwIf,
    KwElse,
    KwWhile,
    KwBreak,
    KwContinue,
    KwReturn,
    // punctuation
    LParen,
    RParen,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
    Comma,
    Semi,
    Assign,
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    Not,
    Lt,
    Gt,
    Le,
    Ge,
    EqEq,
    Ne,
    AndAnd,
    OrOr,
    Eof,
}

impl Tok {
    /// How the token is named in "expected X, found Y" messages.
    pub fn describe(&self, interner: &Interner) -> String {
        match self {
            Tok::Ident(s) => {
                let name = interner.get(*s);
                if name.len() > 40 {
                    format!("identifier `{}...`", &name[..40])
                } else {
                    format!("identifier `{name}`")
                }
            }
            Tok::Int(_) => "integer literal".into(),
            Tok::Float(_) => "float literal".into(),
            Tok::Str(_) => "string literal".into(),
            Tok::Eof => "end of file".into(),
            t => format!("`{}`", t.text()),
        }
    }
    /// Source text of keywords and punctuation.
    pub fn text(&self) -> &'static str {
        match self {
            Tok::KwInt => "int",
            Tok::KwFloat => "float",
            Tok::KwVoid => "void",
            Tok::KwConst => "const",
            Tok::KwIf => "if",
            Tok::KwElse => "else",
            Tok::KwWhile => "while",
            Tok::KwBreak => "break",
            Tok::KwContinue => "continue",
            Tok::KwReturn => "return",
            Tok::LParen => "(",
            Tok::RParen => ")",
            Tok::LBracket => "[",
            Tok::RBracket => "]",
            Tok::LBrace => "{",
            Tok::RBrace => "}",
            Tok::Comma => ",",
            Tok::Semi => ";",
            Tok::Assign => "=",
            Tok::Plus => "+",
            Tok::Minus => "-",
            Tok::Star => "*",
            Tok::Slash => "/",
            Tok::Percent => "%",
            Tok::Not => "!",
            Tok::Lt => "<",
            Tok::Gt => ">",
            Tok::Le => "<=",
            Tok::Ge => ">=",
            Tok::EqEq => "==",
            Tok::Ne => "!=",
            Tok::AndAnd => "&&",
            Tok::OrOr => "||",
            _ => "?",
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub struct Token {
    pub tok: Tok,
    pub span: Span,
}

/// `CLASS` bit: whitespace (space, `\t`, `\n`, `\r`, `\v`, `\f`).
const SPACE: u8 = 1;
/// `CLASS` bit: a letter, digit or `_`.
const IDENT: u8 = 2;

/// The class bits of each byte: one load per byte in the lexer's inner loops.
static CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        if matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c) {
            t[b] |= SPACE;
        }
        if c.is_ascii_alphanumeric() || c == b'_' {
            t[b] |= IDENT;
        }
        b += 1;
    }
    t
};

fn is_ident_char(b: u8) -> bool {
    CLASS[b as usize] & IDENT != 0
}

/// Tokenizes all of `src`; the last token is always `Eof`.
pub fn lex(src: &[u8], interner: &mut Interner, diags: &mut Diags) -> Vec<Token> {
    let mut lexer = Lexer::new(src, interner, diags);
    let mut toks = Vec::new();
    loop {
        let t = lexer.next_token();
        let eof = t.tok == Tok::Eof;
        toks.push(t);
        if eof {
            return toks;
        }
    }
}

/// A pull lexer: `next_token` lexes one more token, so a consumer (the parser) holds only the
/// few it looks at, never the whole token table. Errors go to `diags` as they are met.
pub struct Lexer<'a> {
    src: &'a [u8],
    /// The next byte to look at.
    pos: usize,
    pub interner: &'a mut Interner,
    diags: &'a mut Diags,
}

impl<'a> Lexer<'a> {
    pub fn new(src: &'a [u8], interner: &'a mut Interner, diags: &'a mut Diags) -> Lexer<'a> {
        Lexer {
            src,
            pos: 0,
            interner,
            diags,
        }
    }

    /// Whether a lexical error has been reported.
    pub fn has_errors(&self) -> bool {
        self.diags.has_errors()
    }

    /// Lexes the rest of the input (reporting its errors), discarding the tokens.
    pub fn finish(&mut self) {
        while self.next_token().tok != Tok::Eof {}
    }

    /// The next token; `Eof` (spanning the end of the input) once the input is exhausted, and
    /// again on every later call.
    pub fn next_token(&mut self) -> Token {
        let src = self.src;
        let n = src.len();
        let mut i = self.pos;
        while i < n {
            let b = src[i];
            let start = i;
            let next = if i + 1 < n { src[i + 1] } else { 0 };
            let (tok, end) = match b {
                b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c => {
                    i += 1;
                    while i < n && CLASS[src[i] as usize] & SPACE != 0 {
                        i += 1;
                    }
                    continue;
                }
                b'a'..=b'z' | b'A'..=b'Z' | b'_' => {
                    i += 1;
                    while i < n && is_ident_char(src[i]) {
                        i += 1;
                    }
                    let text = &src[start..i];
                    let tok = match keyword(text) {
                        Some(k) => k,
                        None => Tok::Ident(self.interner.intern_bytes(text)),
                    };
                    (tok, i)
                }
                b'0'..=b'9' => lex_number(src, start, self.diags),
                b'.' if next.is_ascii_digit() => lex_number(src, start, self.diags),
                b'"' => {
                    let (bytes, end) = lex_string(src, start, self.diags);
                    (Tok::Str(self.interner.add_string(bytes)), end)
                }
                b'/' if next == b'/' => {
                    i = src[i..]
                        .iter()
                        .position(|&c| c == b'\n')
                        .map_or(n, |k| i + k);
                    continue;
                }
                b'/' if next == b'*' => {
                    match src[i + 2..].windows(2).position(|w| w == b"*/") {
                        Some(k) => i += 2 + k + 2,
                        None => {
                            self.diags
                                .error(Span::new(start, start + 2), "unterminated comment");
                            i = n;
                        }
                    }
                    continue;
                }
                b'<' if next == b'=' => (Tok::Le, i + 2),
                b'>' if next == b'=' => (Tok::Ge, i + 2),
                b'=' if next == b'=' => (Tok::EqEq, i + 2),
                b'!' if next == b'=' => (Tok::Ne, i + 2),
                b'&' if next == b'&' => (Tok::AndAnd, i + 2),
                b'|' if next == b'|' => (Tok::OrOr, i + 2),
                b'(' => (Tok::LParen, i + 1),
                b')' => (Tok::RParen, i + 1),
                b'[' => (Tok::LBracket, i + 1),
                b']' => (Tok::RBracket, i + 1),
                b'{' => (Tok::LBrace, i + 1),
                b'}' => (Tok::RBrace, i + 1),
                b',' => (Tok::Comma, i + 1),
                b';' => (Tok::Semi, i + 1),
                b'=' => (Tok::Assign, i + 1),
                b'+' => (Tok::Plus, i + 1),
                b'-' => (Tok::Minus, i + 1),
                b'*' => (Tok::Star, i + 1),
                b'/' => (Tok::Slash, i + 1),
                b'%' => (Tok::Percent, i + 1),
                b'!' => (Tok::Not, i + 1),
                b'<' => (Tok::Lt, i + 1),
                b'>' => (Tok::Gt, i + 1),
                _ => {
                    i = self.invalid_char(i);
                    continue;
                }
            };
            self.pos = end;
            return Token {
                tok,
                span: Span::new(start, end),
            };
        }
        self.pos = n;
        Token {
            tok: Tok::Eof,
            span: Span::new(n, n),
        }
    }

    /// Reports the byte at `i`, which starts no token; returns where lexing resumes.
    #[cold]
    fn invalid_char(&mut self, i: usize) -> usize {
        let (src, n, b) = (self.src, self.src.len(), self.src[i]);
        // Skip a whole UTF-8 sequence so one bad character gives one error.
        let mut end = i + 1;
        if b >= 0xC0 {
            while end < n && src[end] & 0xC0 == 0x80 && end < i + 4 {
                end += 1;
            }
        }
        let shown = if b.is_ascii_graphic() {
            format!("`{}`", b as char)
        } else {
            match std::str::from_utf8(&src[i..end]) {
                Ok(s) if !s.chars().any(|c| c.is_control()) => format!("`{s}`"),
                _ => format!("byte 0x{b:02x}"),
            }
        };
        self.diags
            .error(Span::new(i, end), format!("invalid character {shown}"));
        end
    }
}

/// The keyword spelled `text` (a whole identifier), if any: told apart by length and first
/// byte, then compared once.
fn keyword(text: &[u8]) -> Option<Tok> {
    let tok = match (text.len(), text[0]) {
        (2, b'i') => Tok::KwIf,
        (3, b'i') => Tok::KwInt,
        (4, b'e') => Tok::KwElse,
        (4, b'v') => Tok::KwVoid,
        (5, b'b') => Tok::KwBreak,
        (5, b'c') => Tok::KwConst,
        (5, b'f') => Tok::KwFloat,
        (5, b'w') => Tok::KwWhile,
        (6, b'r') => Tok::KwReturn,
        (8, b'c') => Tok::KwContinue,
        _ => return None,
    };
    same_bytes(text, tok.text().as_bytes()).then_some(tok)
}

/// Lexes a number starting at `start`; returns the token and the end offset.
fn lex_number(src: &[u8], start: usize, diags: &mut Diags) -> (Tok, usize) {
    let n = src.len();
    // The common case first: a short decimal integer (not octal) ending the token.
    let mut i = start;
    let mut v: u64 = 0;
    while i < n && i - start < 10 && src[i].is_ascii_digit() {
        v = v * 10 + (src[i] - b'0') as u64;
        i += 1;
    }
    if (src[start] != b'0' || i - start == 1)
        && v <= 1 << 31
        && (i == n || (!is_ident_char(src[i]) && src[i] != b'.'))
    {
        return (Tok::Int(v as u32 as i32), i);
    }
    let at = |i: usize| if i < n { src[i] } else { 0 };
    let mut i = start;
    let tok;
    if at(i) == b'0' && (at(i + 1) == b'x' || at(i + 1) == b'X') {
        i += 2;
        let digits_start = i;
        while at(i).is_ascii_hexdigit() {
            i += 1;
        }
        let int_end = i;
        let mut is_float = false;
        if at(i) == b'.' {
            is_float = true;
            i += 1;
            while at(i).is_ascii_hexdigit() {
                i += 1;
            }
        }
        let mant_end = i;
        let mut exp_ok = true;
        if at(i) == b'p' || at(i) == b'P' {
            is_float = true;
            let mut j = i + 1;
            if at(j) == b'+' || at(j) == b'-' {
                j += 1;
            }
            if at(j).is_ascii_digit() {
                while at(j).is_ascii_digit() {
                    j += 1;
                }
            } else {
                exp_ok = false;
            }
            i = j;
        } else if is_float {
            exp_ok = false;
        }
        let end = skip_suffix(src, i);
        if end != i {
            diags.error(Span::new(start, end), "invalid suffix on number literal");
            return (Tok::Int(0), end);
        }
        if is_float {
            let text = &src[digits_start..mant_end];
            if !exp_ok || text == b"." || text.is_empty() {
                diags.error(
                    Span::new(start, i),
                    "invalid hexadecimal float literal (needs digits and a `p` exponent)",
                );
                return (Tok::Float(0.0), i);
            }
            let exp_text = std::str::from_utf8(&src[mant_end + 1..i]).unwrap_or("0");
            tok = Tok::Float(parse_hex_float(text, exp_text));
        } else {
            if digits_start == int_end {
                diags.error(
                    Span::new(start, i),
                    "invalid hexadecimal literal (no digits)",
                );
                return (Tok::Int(0), i);
            }
            tok = int_token(
                &src[digits_start..int_end],
                16,
                0xFFFF_FFFF,
                Span::new(start, i),
                diags,
            );
        }
        return (tok, i);
    }
    while at(i).is_ascii_digit() {
        i += 1;
    }
    let int_end = i;
    let mut is_float = false;
    if at(i) == b'.' {
        is_float = true;
        i += 1;
        while at(i).is_ascii_digit() {
            i += 1;
        }
    }
    if at(i) == b'e' || at(i) == b'E' {
        let mut j = i + 1;
        if at(j) == b'+' || at(j) == b'-' {
            j += 1;
        }
        if at(j).is_ascii_digit() {
            while at(j).is_ascii_digit() {
                j += 1;
            }
            is_float = true;
            i = j;
        } else {
            let end = skip_suffix(src, j);
            diags.error(
                Span::new(start, end),
                "invalid float literal (exponent has no digits)",
            );
            return (Tok::Float(0.0), end);
        }
    }
    if is_float && at(i) == b'.' {
        // `1.2.3`, `1..2`: one literal with a second point, not a literal and a member access.
        let mut end = i;
        while end < n && (is_ident_char(src[end]) || src[end] == b'.') {
            end += 1;
        }
        let mut text: String = String::from_utf8_lossy(&src[start..end])
            .chars()
            .take(40)
            .collect();
        if end - start > 40 {
            text.push_str("...");
        }
        diags.error(
            Span::new(start, end),
            format!("invalid number literal `{text}`: a number has at most one decimal point"),
        );
        return (Tok::Float(0.0), end);
    }
    let end = skip_suffix(src, i);
    if end != i {
        diags.error(Span::new(start, end), "invalid suffix on number literal");
        return (Tok::Int(0), end);
    }
    let span = Span::new(start, i);
    if is_float {
        let text = std::str::from_utf8(&src[start..i]).unwrap_or("0");
        match text.parse::<f32>() {
            Ok(v) if v.is_finite() => (Tok::Float(v), i),
            _ => {
                diags.error(span, "float literal out of range");
                (Tok::Float(0.0), i)
            }
        }
    } else if src[start] == b'0' && int_end - start > 1 {
        let digits = &src[start + 1..int_end];
        if let Some(p) = digits.iter().position(|&d| d >= b'8') {
            let at = start + 1 + p;
            diags.error(
                Span::new(at, at + 1),
                format!("invalid digit `{}` in octal literal", digits[p] as char),
            );
            return (Tok::Int(0), i);
        }
        (int_token(digits, 8, 0xFFFF_FFFF, span, diags), i)
    } else {
        (int_token(&src[start..int_end], 10, 1 << 31, span, diags), i)
    }
}

/// Letters/digits glued to a number (`12ab`) form an invalid suffix.
fn skip_suffix(src: &[u8], mut i: usize) -> usize {
    while i < src.len() && is_ident_char(src[i]) {
        i += 1;
    }
    i
}

fn int_token(digits: &[u8], radix: u64, max: u64, span: Span, diags: &mut Diags) -> Tok {
    let mut v: u64 = 0;
    for &d in digits {
        let dv = (d as char).to_digit(radix as u32).unwrap_or(0) as u64;
        v = v.saturating_mul(radix).saturating_add(dv);
    }
    if v > max {
        diags.error(span, "integer literal out of range");
        return Tok::Int(0);
    }
    Tok::Int(v as u32 as i32)
}

/// Parses a C99 hex float: `mant` is the hex digits with an optional `.`, `exp` the decimal
/// binary exponent with optional sign. Correctly rounded to f32 (half-even, with subnormals).
pub fn parse_hex_float(mant: &[u8], exp: &str) -> f32 {
    // value = m * 2^e, m kept to 60 significant bits plus a sticky bit.
    let mut m: u64 = 0;
    let mut e: i64 = 0;
    let mut sticky = false;
    let mut after_point = false;
    for &c in mant {
        if c == b'.' {
            after_point = true;
            continue;
        }
        let d = (c as char).to_digit(16).unwrap_or(0) as u64;
        if m >> 56 == 0 {
            m = m * 16 + d;
            if after_point {
                e -= 4;
            }
        } else {
            // Digit does not fit: drop it but remember it was non-zero.
            sticky |= d != 0;
            if !after_point {
                e += 4;
            }
        }
    }
    let exp_val: i64 = exp.parse::<i64>().unwrap_or_else(|_| {
        if exp.starts_with('-') {
            -100_000
        } else {
            100_000
        }
    });
    e += exp_val.clamp(-100_000, 100_000);
    if m == 0 {
        return 0.0;
    }
    let mut m = m as u128;
    if sticky {
        m = (m << 1) | 1;
        e -= 1;
    }
    let nbits = 128 - m.leading_zeros() as i64;
    let top = nbits - 1 + e; // exponent of the leading bit
    if top > 127 {
        return f32::INFINITY;
    }
    // Precision available at this magnitude: 24 bits for normals, fewer for subnormals.
    let p = if top >= -126 { 24 } else { 24 - (-126 - top) };
    if p < 0 {
        return 0.0;
    }
    let shift = nbits - p;
    let (mut mant, mut e2) = (m, e);
    if shift > 0 {
        let shift = shift as u32;
        mant = m >> shift;
        let rem = m & ((1u128 << shift) - 1);
        let half = 1u128 << (shift - 1);
        if rem > half || (rem == half && mant & 1 == 1) {
            mant += 1;
        }
        e2 = e + shift as i64;
    }
    // mant <= 2^24 and the result is representable (or overflows to inf), so this is exact.
    let v = (mant as f64) * 2f64.powi(e2 as i32);
    v as f32
}

/// Lexes a string literal starting at the `"` at `start`; C escapes are decoded.
#[cold]
fn lex_string(src: &[u8], start: usize, diags: &mut Diags) -> (Vec<u8>, usize) {
    let mut out = Vec::new();
    let mut i = start + 1;
    while i < src.len() {
        match src[i] {
            b'"' => return (out, i + 1),
            b'\n' => break,
            b'\\' if i + 1 < src.len() => {
                let c = src[i + 1];
                i += 2;
                let v = match c {
                    b'n' => b'\n',
                    b't' => b'\t',
                    b'r' => b'\r',
                    b'a' => 7,
                    b'b' => 8,
                    b'f' => 12,
                    b'v' => 11,
                    b'0'..=b'7' => {
                        let mut v = (c - b'0') as u32;
                        let mut k = 0;
                        while k < 2 && i < src.len() && (b'0'..=b'7').contains(&src[i]) {
                            v = v * 8 + (src[i] - b'0') as u32;
                            i += 1;
                            k += 1;
                        }
                        v as u8
                    }
                    b'x' => {
                        let mut v = 0u32;
                        while i < src.len() && src[i].is_ascii_hexdigit() {
                            v = (v * 16 + (src[i] as char).to_digit(16).unwrap_or(0)) & 0xFF;
                            i += 1;
                        }
                        v as u8
                    }
                    other => other,
                };
                out.push(v);
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    diags.error(Span::new(start, start + 1), "unterminated string literal");
    (out, i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> (Vec<Tok>, Diags) {
        let mut i = Interner::default();
        let mut d = Diags::default();
        let t = lex(s.as_bytes(), &mut i, &mut d);
        (t.into_iter().map(|t| t.tok).collect(), d)
    }

    #[test]
    fn numbers() {
        let (t, d) =
            toks("0x1F 017 2147483648 0xFFFFFFFF 1. .5 1e-6 0x1.921fb6p+1 0x.AP-3 -.33E+5");
        assert!(d.is_empty());
        assert_eq!(t[0], Tok::Int(31));
        assert_eq!(t[1], Tok::Int(15));
        assert_eq!(t[2], Tok::Int(i32::MIN));
        assert_eq!(t[3], Tok::Int(-1));
        assert_eq!(t[4], Tok::Float(1.0));
        assert_eq!(t[5], Tok::Float(0.5));
        assert_eq!(t[6], Tok::Float(1e-6));
        assert_eq!(t[7], Tok::Float(f32::from_bits(0x4049_0fdb)));
        assert_eq!(t[8], Tok::Float(0.078125));
        assert_eq!(t[10], Tok::Float(33000.0));
    }

    #[test]
    fn hex_float_rounding() {
        assert_eq!(parse_hex_float(b"1.000001", "0"), 1.0);
        assert_eq!(parse_hex_float(b"1.000003", "0"), 1.0 + 2.0 * f32::EPSILON);
        assert_eq!(parse_hex_float(b"1.000002", "0"), 1.0 + f32::EPSILON);
        assert_eq!(parse_hex_float(b"1", "-149"), f32::from_bits(1));
        assert_eq!(parse_hex_float(b"1", "-150"), 0.0);
        assert_eq!(parse_hex_float(b"1.8", "-150"), f32::from_bits(1));
        assert_eq!(
            parse_hex_float(b"1.fffffffffffffffffff", "127"),
            f32::INFINITY
        );
        assert_eq!(parse_hex_float(b"1.fffffe", "127"), f32::MAX);
        assert_eq!(
            parse_hex_float(b"0.000000000000000000000000001", "100"),
            2f32.powi(-8)
        );
    }

    #[test]
    fn errors() {
        assert!(!toks("2147483649").1.is_empty());
        assert!(!toks("0x100000000").1.is_empty());
        assert!(!toks("09").1.is_empty());
        assert!(!toks("1e").1.is_empty());
        assert!(!toks("/* x").1.is_empty());
        assert!(!toks("@").1.is_empty());
        assert!(!toks("12abc").1.is_empty());
    }
}
