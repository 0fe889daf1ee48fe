//! The text form back into a `Module`: parses exactly what `print` prints.
//!
//! ```text
//! global @a: 4 x i32 const = [1, 2, 0, -3]
//! declare @putint(i32) -> void
//! func @main() -> i32 {
//! bb0:
//!     v0 = iconst.i32 7
//!     ret v0
//! }
//! ```
//! `;` starts a comment (outside strings); blank lines are ignored.
//!
//! Phases, all linear in the text:
//! 1. Module scan: globals, `declare`s and `func` headers get their ids in text order (the order
//!    `print` uses), so calls and `gaddr` may name anything defined later.
//! 2. Per function: lines become rows holding value and block *numbers*.
//! 3. Blocks are created in order of their numbers, then every value definition (parameter or
//!    result) in order of its number; an unused number becomes a block outside the layout or the
//!    result of an instruction outside it (as after a removal), so numbers are kept and
//!    `print(parse(print(m))) == print(m)`. Only very sparse numbering (largest number above
//!    64 x count + 100000) is compacted instead, keeping the order. Operands are set last, in layout
//!    order, so values may be used before the line defining them.
//!
//! Errors carry the 1-based line number.

use super::func::{mk, pack_targets, Function};
use super::inst::{CmpCond, InstData, Opcode, Type};
use super::module::{FuncId, GlobalData, GlobalId, GlobalInit, Module, Signature};
use super::{Block, Value};
use std::collections::HashMap;
use std::fmt;

/// A parse error at a line (1-based).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    pub line: usize,
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for ParseError {}

type Result<T> = std::result::Result<T, ParseError>;

fn err<T>(line: usize, message: impl Into<String>) -> Result<T> {
    Err(ParseError {
        line,
        message: message.into(),
    })
}

// ---- tokens ------------------------------------------------------------------------------

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    /// Identifier or keyword, possibly with dots: `iconst.i32`, `bb3`, `v7`, `inf`.
    Word(String),
    /// A number-like word starting with a digit or sign: `-3`, `1.5e-7`, `-inf`.
    Num(String),
    Str(Vec<u8>),
    /// `@name`
    Sym(String),
    Punct(char),
    Arrow,
    Ellipsis,
}

impl fmt::Display for Tok {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tok::Word(w) | Tok::Num(w) => write!(f, "`{w}`"),
            Tok::Str(_) => f.write_str("a string"),
            Tok::Sym(s) => write!(f, "`@{s}`"),
            Tok::Punct(c) => write!(f, "`{c}`"),
            Tok::Arrow => f.write_str("`->`"),
            Tok::Ellipsis => f.write_str("`...`"),
        }
    }
}

fn is_word_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'$')
}

/// Splits one line into tokens; stops at a `;` comment.
fn lex(line: usize, s: &str) -> Result<Vec<Tok>> {
    let b = s.as_bytes();
    let mut toks = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c == b';' {
            break;
        } else if c == b'-' && b.get(i + 1) == Some(&b'>') {
            toks.push(Tok::Arrow);
            i += 2;
        } else if s[i..].starts_with("...") {
            toks.push(Tok::Ellipsis);
            i += 3;
        } else if c.is_ascii_digit() || c == b'-' || c == b'+' {
            let start = i;
            i += 1;
            while i < b.len() {
                let d = b[i];
                let exp_sign = matches!(d, b'+' | b'-') && matches!(b[i - 1], b'e' | b'E');
                if is_word_char(d) || exp_sign {
                    i += 1;
                } else {
                    break;
                }
            }
            toks.push(Tok::Num(s[start..i].to_string()));
        } else if c == b'@' {
            let start = i + 1;
            i += 1;
            while i < b.len() && is_word_char(b[i]) {
                i += 1;
            }
            if i == start {
                return err(line, "expected a name after `@`");
            }
            toks.push(Tok::Sym(s[start..i].to_string()));
        } else if is_word_char(c) {
            let start = i;
            while i < b.len() && is_word_char(b[i]) {
                i += 1;
            }
            toks.push(Tok::Word(s[start..i].to_string()));
        } else if c == b'"' {
            let (bytes, end) = lex_string(line, s, i)?;
            toks.push(Tok::Str(bytes));
            i = end;
        } else if b"(){}[],:=".contains(&c) {
            toks.push(Tok::Punct(c as char));
            i += 1;
        } else {
            return err(
                line,
                format!("unexpected character `{}`", &s[i..].chars().next().unwrap()),
            );
        }
    }
    Ok(toks)
}

/// A Rust-`Debug`-style string starting at `s[at] == '"'`; returns its bytes and the index after it.
fn lex_string(line: usize, s: &str, at: usize) -> Result<(Vec<u8>, usize)> {
    let mut out = Vec::new();
    let mut chars = s[at + 1..].char_indices();
    while let Some((k, c)) = chars.next() {
        match c {
            '"' => return Ok((out, at + 1 + k + 1)),
            '\\' => {
                let Some((_, e)) = chars.next() else { break };
                match e {
                    'n' => out.push(b'\n'),
                    'r' => out.push(b'\r'),
                    't' => out.push(b'\t'),
                    '0' => out.push(0),
                    '\\' | '"' | '\'' => out.push(e as u8),
                    'u' => {
                        let mut hex = String::new();
                        if chars.next().map(|x| x.1) != Some('{') {
                            return err(line, "bad \\u escape");
                        }
                        for (_, h) in chars.by_ref() {
                            if h == '}' {
                                break;
                            }
                            hex.push(h);
                        }
                        let ch = u32::from_str_radix(&hex, 16)
                            .ok()
                            .and_then(char::from_u32)
                            .ok_or_else(|| ParseError {
                                line,
                                message: "bad \\u escape".into(),
                            })?;
                        let mut buf = [0u8; 4];
                        out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                    }
                    _ => return err(line, format!("unknown escape `\\{e}`")),
                }
            }
            _ => {
                let mut buf = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            }
        }
    }
    err(line, "unterminated string")
}

/// A cursor over one line's tokens.
struct Line {
    no: usize,
    toks: Vec<Tok>,
    pos: usize,
}

impl Line {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }
    fn next(&mut self, what: &str) -> Result<Tok> {
        match self.toks.get(self.pos) {
            Some(t) => {
                self.pos += 1;
                Ok(t.clone())
            }
            None => err(self.no, format!("expected {what}, found end of line")),
        }
    }
    fn at_end(&self) -> bool {
        self.pos >= self.toks.len()
    }
    fn end(&self) -> Result<()> {
        match self.peek() {
            None => Ok(()),
            Some(t) => err(self.no, format!("unexpected {t} at end of line")),
        }
    }
    fn is(&self, t: &Tok) -> bool {
        self.peek() == Some(t)
    }
    fn eat(&mut self, t: &Tok) -> bool {
        if self.is(t) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    fn punct(&mut self, c: char) -> Result<()> {
        match self.next(&format!("`{c}`"))? {
            Tok::Punct(p) if p == c => Ok(()),
            t => err(self.no, format!("expected `{c}`, found {t}")),
        }
    }
    fn word(&mut self, what: &str) -> Result<String> {
        match self.next(what)? {
            Tok::Word(w) => Ok(w),
            t => err(self.no, format!("expected {what}, found {t}")),
        }
    }
    fn keyword(&mut self, kw: &str) -> Result<()> {
        match self.next(&format!("`{kw}`"))? {
            Tok::Word(w) if w == kw => Ok(()),
            t => err(self.no, format!("expected `{kw}`, found {t}")),
        }
    }
    fn sym(&mut self) -> Result<String> {
        match self.next("`@name`")? {
            Tok::Sym(s) => Ok(s),
            t => err(self.no, format!("expected `@name`, found {t}")),
        }
    }
    fn int(&mut self) -> Result<i64> {
        match self.next("an integer")? {
            Tok::Num(n) => parse_int(&n).ok_or_else(|| ParseError {
                line: self.no,
                message: format!("bad integer `{n}`"),
            }),
            t => err(self.no, format!("expected an integer, found {t}")),
        }
    }
    fn float_text(&mut self) -> Result<String> {
        match self.next("a float")? {
            Tok::Num(n) | Tok::Word(n) => Ok(n),
            t => err(self.no, format!("expected a float, found {t}")),
        }
    }
    fn ty(&mut self) -> Result<Type> {
        let w = self.word("a type")?;
        Type::from_name(&w).ok_or_else(|| ParseError {
            line: self.no,
            message: format!("unknown type `{w}`"),
        })
    }
    /// `vN`
    fn value(&mut self) -> Result<u32> {
        let w = self.word("a value")?;
        number(&w, "v").ok_or_else(|| ParseError {
            line: self.no,
            message: format!("expected a value, found `{w}`"),
        })
    }
    /// `bbN`
    fn block(&mut self) -> Result<u32> {
        let w = self.word("a block")?;
        number(&w, "bb").ok_or_else(|| ParseError {
            line: self.no,
            message: format!("expected a block, found `{w}`"),
        })
    }
    /// `a, b, c` up to the end of the line or a closing `)`.
    fn values(&mut self) -> Result<Vec<u32>> {
        let mut out = Vec::new();
        if self.at_end() || self.is(&Tok::Punct(')')) {
            return Ok(out);
        }
        loop {
            out.push(self.value()?);
            if !self.eat(&Tok::Punct(',')) {
                return Ok(out);
            }
        }
    }
    /// `bbN` or `bbN(args)`.
    fn block_call(&mut self) -> Result<(u32, Vec<u32>)> {
        let b = self.block()?;
        let mut args = Vec::new();
        if self.eat(&Tok::Punct('(')) {
            args = self.values()?;
            self.punct(')')?;
        }
        Ok((b, args))
    }
}

fn number(w: &str, prefix: &str) -> Option<u32> {
    let d = w.strip_prefix(prefix)?;
    if d.is_empty() || !d.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    d.parse().ok()
}

fn parse_int(s: &str) -> Option<i64> {
    s.parse::<i64>()
        .ok()
        .or_else(|| s.parse::<u64>().ok().map(|x| x as i64))
}

fn parse_float(s: &str) -> Option<f64> {
    match s {
        "NaN" | "nan" => Some(f64::NAN),
        "inf" | "+inf" => Some(f64::INFINITY),
        "-inf" => Some(f64::NEG_INFINITY),
        _ => s.parse::<f64>().ok(),
    }
}

fn parse_f32(s: &str) -> Option<f32> {
    match s {
        "NaN" | "nan" => Some(f32::NAN),
        "inf" | "+inf" => Some(f32::INFINITY),
        "-inf" => Some(f32::NEG_INFINITY),
        _ => s.parse::<f32>().ok(),
    }
}

// ---- module ------------------------------------------------------------------------------

/// Parses a whole module.
pub fn module(text: &str) -> Result<Module> {
    let mut lines = Vec::new();
    for (k, s) in text.lines().enumerate() {
        let toks = lex(k + 1, s)?;
        if !toks.is_empty() {
            lines.push(Line {
                no: k + 1,
                toks,
                pos: 0,
            });
        }
    }
    let mut m = Module::new();
    let mut globals: HashMap<String, GlobalId> = HashMap::new();
    let mut funcs: HashMap<String, FuncId> = HashMap::new();
    // (function, index of its header line, index of its closing line)
    let mut bodies: Vec<(FuncId, usize, usize)> = Vec::new();

    // Phase 1: ids for everything named at module level.
    let mut k = 0;
    while k < lines.len() {
        let l = &mut lines[k];
        let kw = l.word("`global`, `declare` or `func`")?;
        match kw.as_str() {
            "global" => {
                let g = global(l)?;
                if globals.contains_key(&g.name) {
                    return err(l.no, format!("global @{} defined twice", g.name));
                }
                let name = g.name.clone();
                globals.insert(name, m.add_global(g));
                k += 1;
            }
            "declare" | "func" => {
                let name = l.sym()?;
                let sig = signature(l, kw == "declare")?;
                if funcs.contains_key(&name) {
                    return err(l.no, format!("function @{name} declared twice"));
                }
                let id = m.declare_func(&name, sig, kw == "func");
                funcs.insert(name.clone(), id);
                if kw == "func" {
                    l.punct('{')?;
                    l.end()?;
                    let start = k;
                    k += 1;
                    while k < lines.len() && !lines[k].is(&Tok::Punct('}')) {
                        k += 1;
                    }
                    if k == lines.len() {
                        return err(
                            lines[start].no,
                            format!("function @{name} has no closing `}}`"),
                        );
                    }
                    lines[k].pos = 1;
                    lines[k].end()?;
                    bodies.push((id, start, k));
                }
                k += 1;
            }
            _ => {
                return err(
                    l.no,
                    format!("expected `global`, `declare` or `func`, found `{kw}`"),
                )
            }
        }
    }

    // Phase 2-3: bodies.
    let names = Names {
        globals: &globals,
        funcs: &funcs,
    };
    for (id, start, end) in bodies {
        let name = m.funcs[id].name.clone();
        let f = function(&mut lines[start + 1..end], id, &name, &names)?;
        m.funcs[id] = f;
    }
    Ok(m)
}

/// `@name: N x ty [const] = init`, after `global`.
fn global(l: &mut Line) -> Result<GlobalData> {
    let name = l.sym()?;
    l.punct(':')?;
    let count = l.int()?;
    l.keyword("x")?;
    let elem = l.ty()?;
    let is_const = l.eat(&Tok::Word("const".into()));
    l.punct('=')?;
    let init = match l.next("an initializer")? {
        Tok::Word(w) if w == "zero" => GlobalInit::Zero,
        Tok::Str(b) => GlobalInit::Bytes(b),
        Tok::Punct('[') => {
            let mut words = Vec::new();
            if !l.eat(&Tok::Punct(']')) {
                loop {
                    let t = l.next("a number")?;
                    let s = match &t {
                        Tok::Num(s) | Tok::Word(s) => s.clone(),
                        _ => return err(l.no, format!("expected a number, found {t}")),
                    };
                    let w = if elem == Type::F32 {
                        parse_f32(&s).map(f32::to_bits)
                    } else {
                        parse_int(&s).map(|x| x as u32)
                    };
                    words.push(w.ok_or_else(|| ParseError {
                        line: l.no,
                        message: format!("bad number `{s}`"),
                    })?);
                    if l.eat(&Tok::Punct(']')) {
                        break;
                    }
                    l.punct(',')?;
                }
            }
            GlobalInit::Words(words)
        }
        t => return err(l.no, format!("expected an initializer, found {t}")),
    };
    l.end()?;
    if count < 0 {
        return err(l.no, "negative element count");
    }
    Ok(GlobalData {
        name,
        size: count as u64 * elem.bytes().max(1),
        elem,
        init,
        is_const,
    })
}

/// `(ty, ty, ...) -> ty`; `...` only when `allow_variadic`.
fn signature(l: &mut Line, allow_variadic: bool) -> Result<Signature> {
    l.punct('(')?;
    let mut params = Vec::new();
    let mut variadic = false;
    if !l.eat(&Tok::Punct(')')) {
        loop {
            if allow_variadic && l.eat(&Tok::Ellipsis) {
                variadic = true;
                l.punct(')')?;
                break;
            }
            params.push(l.ty()?);
            if l.eat(&Tok::Punct(')')) {
                break;
            }
            l.punct(',')?;
        }
    }
    match l.next("`->`")? {
        Tok::Arrow => {}
        t => return err(l.no, format!("expected `->`, found {t}")),
    }
    let ret = l.ty()?;
    Ok(Signature {
        params,
        ret,
        variadic,
    })
}

struct Names<'a> {
    globals: &'a HashMap<String, GlobalId>,
    funcs: &'a HashMap<String, FuncId>,
}

/// One instruction line before ids exist.
struct Row {
    line: usize,
    /// Index into the function's block list (text order).
    block: usize,
    result: Option<u32>,
    data: InstData,
    /// Operand value numbers.
    args: Vec<u32>,
    /// Target block numbers of a branch (patched into `data.imm` once blocks exist).
    targets: Vec<u32>,
}

/// A block header before ids exist.
struct BlockRow {
    line: usize,
    num: u32,
    params: Vec<(u32, Type)>,
}

/// Parses the lines between `func ... {` and `}`.
fn function(lines: &mut [Line], id: FuncId, name: &str, names: &Names) -> Result<Function> {
    let mut blocks: Vec<BlockRow> = Vec::new();
    let mut rows: Vec<Row> = Vec::new();
    for l in lines.iter_mut() {
        let is_header = matches!(l.toks.first(), Some(Tok::Word(w)) if number(w, "bb").is_some())
            && !matches!(l.toks.get(1), Some(Tok::Punct('=')));
        if is_header {
            let num = l.block()?;
            let mut params = Vec::new();
            if l.eat(&Tok::Punct('(')) {
                loop {
                    let v = l.value()?;
                    l.punct(':')?;
                    params.push((v, l.ty()?));
                    if l.eat(&Tok::Punct(')')) {
                        break;
                    }
                    l.punct(',')?;
                }
            }
            l.punct(':')?;
            l.end()?;
            blocks.push(BlockRow {
                line: l.no,
                num,
                params,
            });
            continue;
        }
        if blocks.is_empty() {
            return err(l.no, "instruction before the first block");
        }
        let mut row = inst(l, names)?;
        row.block = blocks.len() - 1;
        rows.push(row);
    }

    let mut f = Function::new(id, name);
    // Blocks, in order of their numbers.
    let mut block_of: HashMap<u32, Block> = HashMap::new();
    {
        let mut order: Vec<usize> = (0..blocks.len()).collect();
        order.sort_by_key(|&k| blocks[k].num);
        let max = order.last().map_or(0, |&k| blocks[k].num as usize);
        let keep = max < 64 * blocks.len() + 100_000;
        for k in order {
            // Unused numbers below become blocks outside the layout, so numbers are kept.
            while keep && f.num_blocks() < blocks[k].num as usize {
                f.make_block();
            }
            if block_of.insert(blocks[k].num, f.make_block()).is_some() {
                return err(blocks[k].line, format!("bb{} defined twice", blocks[k].num));
            }
        }
    }
    let blk = |num: u32, line: usize| -> Result<Block> {
        block_of.get(&num).copied().ok_or_else(|| ParseError {
            line,
            message: format!("undefined block bb{num}"),
        })
    };
    for r in rows.iter_mut() {
        match r.data.op {
            Opcode::Jump => r.data.imm = blk(r.targets[0], r.line)?.index() as i64,
            Opcode::Brif => {
                r.data.imm = pack_targets(blk(r.targets[0], r.line)?, blk(r.targets[1], r.line)?)
            }
            _ => {}
        }
    }

    // Value definitions, in order of their numbers.
    enum Def {
        Param(usize, Type),
        Row(usize),
    }
    let mut defs: Vec<(u32, usize, Def)> = Vec::new();
    for (k, b) in blocks.iter().enumerate() {
        for &(v, ty) in &b.params {
            defs.push((v, b.line, Def::Param(k, ty)));
        }
    }
    for (k, r) in rows.iter().enumerate() {
        if let Some(v) = r.result {
            defs.push((v, r.line, Def::Row(k)));
        }
    }
    defs.sort_by_key(|d| d.0);
    let max = defs.last().map_or(0, |d| d.0 as usize);
    let keep = max < 64 * defs.len() + 100_000;
    let mut value_of: HashMap<u32, Value> = HashMap::new();
    let mut inst_of = vec![None; rows.len()];
    for (num, line, def) in defs {
        // Unused numbers below become results of instructions outside the layout (as removed
        // instructions are), so numbers are kept.
        while keep && f.num_values() < num as usize {
            f.make_inst(mk::iconst(Type::I32, 0), &[]);
        }
        let v = match def {
            Def::Param(k, ty) => f.append_block_param(block_of[&blocks[k].num], ty),
            Def::Row(k) => {
                let i = f.make_inst(rows[k].data, &[]);
                inst_of[k] = Some(i);
                f.res(i)
            }
        };
        if value_of.insert(num, v).is_some() {
            return err(line, format!("v{num} defined twice"));
        }
    }
    for (k, r) in rows.iter().enumerate() {
        if inst_of[k].is_none() {
            inst_of[k] = Some(f.make_inst(r.data, &[]));
        }
    }

    // Layout, parameter order, operands.
    for b in &blocks {
        let bb = block_of[&b.num];
        f.append_block(bb);
        let params: Vec<Value> = b.params.iter().map(|(v, _)| value_of[v]).collect();
        for (k, &p) in params.iter().enumerate() {
            f.values.def[p] = super::ValueDef::Param(bb, k as u32).into();
        }
        f.blocks.params.set(bb, &params);
    }
    for (k, r) in rows.iter().enumerate() {
        let i = inst_of[k].unwrap();
        f.append_inst(i, block_of[&blocks[r.block].num]);
        let mut args = Vec::with_capacity(r.args.len());
        for &a in &r.args {
            match value_of.get(&a) {
                Some(&v) => args.push(v),
                None => return err(r.line, format!("undefined value v{a}")),
            }
        }
        f.set_args(i, &args);
    }
    Ok(f)
}

/// One instruction line.
fn inst(l: &mut Line, names: &Names) -> Result<Row> {
    let mut result = None;
    if matches!(l.toks.get(1), Some(Tok::Punct('='))) {
        result = Some(l.value()?);
        l.punct('=')?;
    }
    let word = l.word("an opcode")?;
    let (opname, suffix) = match word.split_once('.') {
        Some((a, b)) => (a, Some(b)),
        None => (word.as_str(), None),
    };
    let op = Opcode::from_name(opname).ok_or_else(|| ParseError {
        line: l.no,
        message: format!("unknown opcode `{opname}`"),
    })?;
    let no = l.no;
    let suffix_ty = |what: &str| -> Result<Type> {
        match suffix {
            Some(s) => Type::from_name(s).ok_or_else(|| ParseError {
                line: no,
                message: format!("unknown type `{s}`"),
            }),
            None => err(no, format!("{what} needs a type suffix")),
        }
    };
    let mut args = Vec::new();
    let mut targets = Vec::new();
    let data = match op {
        Opcode::Iconst => mk::iconst(suffix_ty("iconst")?, l.int()?),
        Opcode::Fconst => {
            let ty = suffix_ty("fconst")?;
            let s = l.float_text()?;
            let bits = if ty == Type::F32 {
                parse_f32(&s).map(|x| x.to_bits() as i64)
            } else {
                parse_float(&s).map(|x| x.to_bits() as i64)
            };
            let bits = bits.ok_or_else(|| ParseError {
                line: no,
                message: format!("bad float `{s}`"),
            })?;
            InstData::with_imm(Opcode::Fconst, ty, bits)
        }
        Opcode::Icmp | Opcode::Fcmp => {
            let c = suffix
                .and_then(|s| CmpCond::ALL.into_iter().find(|c| c.name() == s))
                .ok_or_else(|| ParseError {
                    line: no,
                    message: format!("{} needs a condition suffix", op.name()),
                })?;
            args = l.values()?;
            if op == Opcode::Icmp {
                mk::icmp(c)
            } else {
                mk::fcmp(c)
            }
        }
        Opcode::Alloca => {
            let size = l.int()?;
            l.punct(',')?;
            l.keyword("align")?;
            let align = l.int()?;
            mk::alloca(size as u64, align as u32)
        }
        Opcode::Gaddr => {
            let g = l.sym()?;
            let id = names.globals.get(&g).ok_or_else(|| ParseError {
                line: no,
                message: format!("undefined global @{g}"),
            })?;
            mk::gaddr(*id)
        }
        Opcode::Gep | Opcode::Offset => {
            let n = if op == Opcode::Gep { 2 } else { 1 };
            for _ in 0..n {
                args.push(l.value()?);
                l.punct(',')?;
            }
            let imm = l.int()?;
            InstData::with_imm(op, Type::Ptr, imm)
        }
        Opcode::Call => {
            let ty = suffix_ty("call")?;
            let callee = l.sym()?;
            let id = names.funcs.get(&callee).ok_or_else(|| ParseError {
                line: no,
                message: format!("undefined function @{callee}"),
            })?;
            l.punct('(')?;
            args = l.values()?;
            l.punct(')')?;
            mk::call(*id, ty)
        }
        Opcode::Jump => {
            let (b, a) = l.block_call()?;
            targets.push(b);
            args = a;
            InstData::new(Opcode::Jump, Type::Void)
        }
        Opcode::Brif => {
            let c = l.value()?;
            l.punct(',')?;
            let (t, ta) = l.block_call()?;
            l.punct(',')?;
            let (e, ea) = l.block_call()?;
            targets = vec![t, e];
            args.push(c);
            args.extend_from_slice(&ta);
            args.extend_from_slice(&ea);
            InstData {
                op,
                ty: Type::Void,
                aux: ta.len() as u32,
                imm: 0,
            }
        }
        _ => {
            let ty = match suffix {
                Some(_) => suffix_ty("")?,
                None => Type::Void,
            };
            args = l.values()?;
            InstData::new(op, ty)
        }
    };
    l.end()?;
    if result.is_some() != (data.ty != Type::Void) {
        return if result.is_some() {
            err(no, format!("{} has no result to name", op.name()))
        } else {
            err(
                no,
                format!("{} has a result; name it (`vN = ...`)", op.name()),
            )
        };
    }
    Ok(Row {
        line: no,
        block: 0,
        result,
        data,
        args,
        targets,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{print, verify, Builder};

    fn round_trip(m: &Module) {
        let text = print::module(m);
        let m2 = module(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        verify::module(&m2).unwrap();
        assert_eq!(print::module(&m2), text);
    }

    #[test]
    fn round_trips_a_hand_built_module() {
        let mut m = Module::new();
        let g = m.add_global(GlobalData {
            name: "a".into(),
            size: 16,
            elem: Type::I32,
            init: GlobalInit::Words(vec![1, (-2i32) as u32, 3]),
            is_const: true,
        });
        let fg = m.add_global(GlobalData {
            name: "f".into(),
            size: 8,
            elem: Type::F32,
            init: GlobalInit::Words(vec![1.5f32.to_bits(), 1e-7f32.to_bits()]),
            is_const: false,
        });
        m.add_global(GlobalData {
            name: "s".into(),
            size: 8,
            elem: Type::I1,
            init: GlobalInit::Bytes(b"a;\"\\\n\0".to_vec()),
            is_const: true,
        });
        m.add_global(GlobalData {
            name: "z".into(),
            size: 400,
            elem: Type::I32,
            init: GlobalInit::Zero,
            is_const: false,
        });
        let sig = |params: Vec<Type>, ret| Signature {
            params,
            ret,
            variadic: false,
        };
        let putint = m.declare_func("putint", sig(vec![Type::I32], Type::Void), false);
        m.declare_func(
            "putf",
            Signature {
                params: vec![Type::Ptr],
                ret: Type::Void,
                variadic: true,
            },
            false,
        );
        let main = m.declare_func("main", sig(vec![], Type::I32), true);
        let sum = m.declare_func("sum", sig(vec![Type::I32, Type::Ptr], Type::I32), true);
        {
            let f = &mut m.funcs[main];
            let b0 = f.make_block();
            f.append_block(b0);
            let mut b = Builder::at_end(f, b0);
            let p = b.gaddr(g);
            let n = b.iconst(3);
            let s = b.call(sum, Type::I32, &[n, p]).unwrap();
            b.call(putint, Type::Void, &[s]);
            let q = b.gaddr(fg);
            let q4 = b.offset(q, 4);
            let x = b.load(Type::F32, q4);
            let y = b.fconst(-0.1);
            let z = b.binary(Opcode::Fmul, x, y);
            let c = b.fcmp(CmpCond::Ne, z, y);
            let w = b.unary(Opcode::Zext, Type::I32, c);
            let sl = b.alloca(8, 4);
            b.store(w, sl);
            let w2 = b.load(Type::I32, sl);
            b.ret(Some(w2));
        }
        {
            let f = &mut m.funcs[sum];
            let (b0, b1, b2, b3) = (
                f.make_block(),
                f.make_block(),
                f.make_block(),
                f.make_block(),
            );
            f.append_block(b0);
            f.append_block(b3);
            f.append_block(b1);
            f.append_block(b2);
            let n = f.append_block_param(b0, Type::I32);
            let a = f.append_block_param(b0, Type::Ptr);
            let i = f.append_block_param(b1, Type::I32);
            let acc = f.append_block_param(b1, Type::I32);
            let r = f.append_block_param(b2, Type::I32);
            let mut b = Builder::at_end(f, b0);
            let zero = b.iconst(0);
            let big = b.iconst_ty(Type::I64, -1 << 40);
            let _ = big;
            b.jump(b1, &[zero, zero]);
            b.switch_to(b1);
            let c = b.icmp(CmpCond::Lt, i, n);
            b.brif(c, b3, &[], b2, &[acc]);
            b.switch_to(b3);
            let p = b.gep(a, i, 4);
            let x = b.load(Type::I32, p);
            let acc2 = b.binary(Opcode::Add, acc, x);
            let one = b.iconst(1);
            let i2 = b.binary(Opcode::Add, i, one);
            b.jump(b1, &[i2, acc2]);
            b.switch_to(b2);
            b.ret(Some(r));
        }
        verify::module(&m).unwrap();
        round_trip(&m);
    }

    #[test]
    fn keeps_numbers_compacts_very_sparse_ones_and_allows_forward_uses() {
        let text = "func @f(i32) -> i32 {\n\
                    bb5(v10: i32):\n\
                    \x20   jump bb2(v10)\n\
                    bb7:\n\
                    \x20   ret v30\n\
                    bb2(v20: i32):\n\
                    \x20   v30 = add.i32 v20, v20\n\
                    \x20   jump bb7\n\
                    }\n";
        let m = module(text).unwrap();
        verify::module(&m).unwrap();
        let out = print::module(&m);
        assert_eq!(out, format!("\n{text}"));
        let sparse = text.replace("v30", "v300000").replace("bb7", "bb700000");
        let m = module(&sparse).unwrap();
        verify::module(&m).unwrap();
        let out = print::module(&m);
        assert!(out.contains("bb1(v0: i32):\n    jump bb0(v0)\nbb2:\n    ret v2\nbb0(v1: i32):\n    v2 = add.i32 v1, v1"), "{out}");
    }

    #[test]
    fn reports_line_numbers() {
        let e =
            module("func @f() -> i32 {\nbb0:\n    v0 = iconst.i32 1\n    ret v9\n}\n").unwrap_err();
        assert_eq!(e.to_string(), "line 4: undefined value v9");
        let e = module("\n\nfunc @f() -> i32 {\nbb0:\n    v0 = frob.i32 1\n}\n").unwrap_err();
        assert_eq!(e.line, 5);
        let e = module("func @f() -> i32 {\nbb0:\n    v0 = call.i32 @g()\n}\n").unwrap_err();
        assert_eq!(e.to_string(), "line 3: undefined function @g");
        let e = module("func @f() -> i32 {\nbb0:\n    ret\n").unwrap_err();
        assert_eq!(e.line, 1);
    }
}
