//! The program generator.
//!
//! Safety rules (each keeps C and SysY meaning the same; see the module comment of `fuzzgen`):
//! - Divisors are nonzero constants other than -1, or `(e % K + K + 1)`, which lies in `2..=2K`.
//! - Indices are literals, counters of enclosing loops whose bound fits the dimension, or
//!   `((e) % D + D) % D`.
//! - Loops count a reserved counter to a constant bound; the counter is never assigned by random
//!   statements, and a `continue` is preceded by the increment when that sits at the end.
//! - Recursion passes a depth parameter that starts at a small literal and falls by one.
//! - Every float that is stored (variable, array element, parameter, return value) has
//!   magnitude at most 1000: an expression whose estimated bound is larger is passed through
//!   `fc`, which divides by 1024 until it fits. Multiplication is only generated while the bound
//!   stays far below `f32::MAX`, so no inf or NaN appears and float -> int never overflows.
//! - Evaluation order: functions are *pure* (no output, no writes to globals or array parameters,
//!   no reads of mutable globals, only pure calls) or *effectful*. An expression region (a whole
//!   statement's expressions, or one operand of `&&`/`||`, which are sequence points) contains at
//!   most one effectful call, and if it does, the rest of the region reads only local scalars,
//!   constants and pure calls on those, so no unsequenced access can observe the call's effects.
//!   Array initialiser lists never contain effectful calls.
//! - Every variable is initialised at its declaration; an initialiser never mentions the name
//!   being declared (in C the new name is already in scope there).
//! - A cost estimate (statements times enclosing trip counts, plus callee costs at calls) keeps
//!   each program to a few hundred thousand operations.

use super::Rng;
use std::fmt::Write;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ty {
    Int,
    Float,
}

impl Ty {
    fn kw(self) -> &'static str {
        match self {
            Ty::Int => "int",
            Ty::Float => "float",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Var,
    Const,
    /// Loop counter or recursion depth: read-only for random statements.
    Counter,
}

#[derive(Clone, Debug)]
struct Var {
    name: String,
    ty: Ty,
    /// Dimensions; empty for a scalar. For an array parameter the first is the number of rows
    /// every caller guarantees.
    dims: Vec<usize>,
    kind: Kind,
    global: bool,
    param: bool,
}

#[derive(Clone, Debug)]
struct Func {
    name: String,
    ret: Option<Ty>,
    params: Vec<Var>,
    pure_: bool,
    cost: u64,
    /// The first parameter is a recursion depth, at most this.
    max_depth: Option<i64>,
}

struct Expr {
    text: String,
    ty: Ty,
    /// Upper bound of the magnitude (floats; ints use 2.2e9).
    bound: f64,
}

const INT_BOUND: f64 = 2.2e9;
const STORE_BOUND: f64 = 1000.0;

/// One region of evaluation (see the module comment).
#[derive(Clone, Copy, Debug)]
struct Region {
    /// An effectful call may still be placed here.
    eff_left: bool,
    /// Only local scalars, constants and pure calls on them may be read.
    restricted: bool,
}

const FREE: Region = Region {
    eff_left: false,
    restricted: false,
};

struct LoopCx {
    counter: String,
    bound: usize,
    inc_at_end: bool,
}

struct FnCx {
    pure_: bool,
    ret: Option<Ty>,
    is_main: bool,
    mult: u64,
    cost: u64,
    budget: u64,
    loops: Vec<LoopCx>,
}

struct Gen {
    rng: Rng,
    out: String,
    indent: usize,
    globals: Vec<Var>,
    funcs: Vec<Func>,
    scopes: Vec<Vec<Var>>,
    cx: FnCx,
    next_id: u32,
    /// A name being declared: invisible in its own initialiser.
    hide: Option<String>,
    /// How many index expressions and call arguments enclose the expression being built.
    nest: u32,
}

/// The standard input of the program of `seed`: 12 integers in -1000..=1000, read by `main` with
/// up to 8 `getint()` and then up to 4 `getfloat()` calls.
pub fn input(seed: u64) -> String {
    let mut rng = Rng::new(seed.wrapping_mul(0x2545_f491_4f6c_dd1d) ^ 0x1f);
    let nums: Vec<String> = (0..12)
        .map(|_| match rng.below(4) {
            0 => rng.range(-1000, 1000),
            1 => rng.range(-3, 3),
            _ => rng.range(0, 100),
        })
        .map(|v| v.to_string())
        .collect();
    nums.join(" ") + "\n"
}

/// A SysY program determined by `seed`.
pub fn generate(seed: u64) -> String {
    let mut g = Gen {
        rng: Rng::new(seed),
        out: String::new(),
        indent: 0,
        globals: Vec::new(),
        funcs: Vec::new(),
        scopes: Vec::new(),
        cx: FnCx {
            pure_: false,
            ret: None,
            is_main: false,
            mult: 1,
            cost: 0,
            budget: 0,
            loops: Vec::new(),
        },
        next_id: 0,
        hide: None,
        nest: 0,
    };
    g.program(seed);
    g.out
}

impl Gen {
    fn id(&mut self) -> u32 {
        self.next_id += 1;
        self.next_id
    }

    fn line(&mut self, s: &str) {
        for _ in 0..self.indent {
            self.out.push_str("  ");
        }
        self.out.push_str(s);
        self.out.push('\n');
    }

    // ---- program, globals, functions ----

    fn program(&mut self, seed: u64) {
        let _ = writeln!(self.out, "// generated by sysyc fuzzgen, seed {seed}");
        self.line("float fc(float x) {");
        self.line("  int n = 0;");
        self.line("  while (x > 1000.0 && n < 40) { x = x / 1024.0; n = n + 1; }");
        self.line("  while (x < -1000.0 && n < 40) { x = x / 1024.0; n = n + 1; }");
        self.line("  return x;");
        self.line("}");
        self.funcs.push(Func {
            name: "fc".into(),
            ret: Some(Ty::Float),
            params: vec![scalar("x", Ty::Float, false, true)],
            pure_: true,
            cost: 5,
            max_depth: None,
        });
        let n_globals = self.rng.range(2, 8);
        for _ in 0..n_globals {
            self.global_decl();
        }
        let n_funcs = self.rng.range(2, 7);
        for _ in 0..n_funcs {
            if self.rng.chance(1, 4) {
                self.rec_function();
            } else {
                self.function();
            }
            if self.rng.chance(1, 3) {
                self.global_decl();
            }
        }
        self.main_function();
    }

    fn global_decl(&mut self) {
        let id = self.id();
        let ty = if self.rng.chance(2, 3) {
            Ty::Int
        } else {
            Ty::Float
        };
        let is_const = self.rng.chance(1, 3);
        let is_array = self.rng.chance(1, 2);
        let prefix = match (is_const, is_array) {
            (true, true) => "ct",
            (true, false) => "c",
            (false, true) => "ga",
            (false, false) => "g",
        };
        let name = format!("{prefix}{id}");
        let dims = if is_array {
            self.dims(3, 300)
        } else {
            Vec::new()
        };
        let mut text = format!("{}{} {name}", if is_const { "const " } else { "" }, ty.kw());
        for d in &dims {
            let _ = write!(text, "[{d}]");
        }
        if is_array {
            if is_const || self.rng.chance(2, 3) {
                let init = self.init_list(ty, &dims, true, is_const);
                let _ = write!(text, " = {init}");
            }
        } else if is_const || self.rng.chance(2, 3) {
            let _ = write!(text, " = {}", self.literal(ty));
        }
        text.push(';');
        self.line(&text);
        let kind = if is_const { Kind::Const } else { Kind::Var };
        self.globals.push(Var {
            name,
            ty,
            dims,
            kind,
            global: true,
            param: false,
        });
    }

    /// 1 to `max_rank` dimensions with at most `max_elems` elements in all.
    fn dims(&mut self, max_rank: u64, max_elems: usize) -> Vec<usize> {
        let rank = 1 + self.rng.below(max_rank) as usize;
        let mut dims = Vec::new();
        let mut total = 1;
        for _ in 0..rank {
            let d = self.rng.range(1, 8) as usize;
            if total * d > max_elems {
                break;
            }
            total *= d;
            dims.push(d);
        }
        if dims.is_empty() {
            dims.push(1);
        }
        dims
    }

    fn params(&mut self, max: i64) -> Vec<Var> {
        let n = if self.rng.chance(1, 4) {
            self.rng.range(8, max.max(9))
        } else {
            self.rng.range(0, 5)
        };
        let mut ps = Vec::new();
        for _ in 0..n {
            let id = self.id();
            let ty = if self.rng.chance(3, 5) {
                Ty::Int
            } else {
                Ty::Float
            };
            let mut p = scalar(&format!("p{id}"), ty, false, true);
            if self.rng.chance(1, 5) {
                // Array parameter: guaranteed rows, then the fixed dimensions.
                let rank = self.rng.range(1, 2);
                p.dims.push(self.rng.range(1, 4) as usize);
                if rank == 2 {
                    p.dims.push(self.rng.range(1, 6) as usize);
                }
                p.name = format!("pa{id}");
            }
            ps.push(p);
        }
        ps
    }

    fn signature(&self, name: &str, ret: Option<Ty>, params: &[Var]) -> String {
        let mut s = format!("{} {name}(", ret.map_or("void", Ty::kw));
        for (i, p) in params.iter().enumerate() {
            if i > 0 {
                s.push_str(", ");
            }
            let _ = write!(s, "{} {}", p.ty.kw(), p.name);
            if !p.dims.is_empty() {
                s.push_str("[]");
                for d in &p.dims[1..] {
                    let _ = write!(s, "[{d}]");
                }
            }
        }
        s.push_str(") {");
        s
    }

    fn begin_function(&mut self, pure_: bool, ret: Option<Ty>, budget: u64, params: &[Var]) {
        self.cx = FnCx {
            pure_,
            ret,
            is_main: false,
            mult: 1,
            cost: 0,
            budget,
            loops: Vec::new(),
        };
        self.scopes = vec![params.to_vec()];
    }

    fn function(&mut self) {
        let id = self.id();
        let name = format!("f{id}");
        let pure_ = self.rng.chance(1, 2);
        let ret = match self.rng.below(5) {
            0 if !pure_ => None,
            1 => Some(Ty::Float),
            _ => Some(Ty::Int),
        };
        let params = self.params(14);
        let sig = self.signature(&name, ret, &params);
        self.line(&sig);
        self.indent += 1;
        self.begin_function(pure_, ret, 3000, &params);
        self.decls(1, 8);
        let n = self.rng.range(2, 10);
        for _ in 0..n {
            self.stmt(0);
        }
        if let Some(t) = ret {
            let e = self.store_expr(t, 3, &mut FREE.clone());
            self.line(&format!("return {e};"));
        }
        self.indent -= 1;
        self.line("}");
        let cost = self.cx.cost + 1;
        self.funcs.push(Func {
            name,
            ret,
            params,
            pure_,
            cost,
            max_depth: None,
        });
    }

    /// A recursive function: `name(d, ...)` calls itself once or twice with `d - 1` until `d <= 0`.
    fn rec_function(&mut self) {
        let id = self.id();
        let name = format!("r{id}");
        let pure_ = self.rng.chance(1, 2);
        let ret = if self.rng.chance(1, 4) {
            Ty::Float
        } else {
            Ty::Int
        };
        let twice = self.rng.chance(1, 3);
        let max_depth = if twice { 6 } else { 12 };
        let mut params = vec![Var {
            name: "d".into(),
            ty: Ty::Int,
            dims: Vec::new(),
            kind: Kind::Counter,
            global: false,
            param: true,
        }];
        params.extend(self.params(10));
        let sig = self.signature(&name, Some(ret), &params);
        self.line(&sig);
        self.indent += 1;
        self.begin_function(pure_, Some(ret), 300, &params);
        self.decls(0, 3);
        for _ in 0..self.rng.range(0, 2) {
            self.stmt(2);
        }
        let base = self.store_expr(ret, 2, &mut FREE.clone());
        self.line(&format!("if (d <= 0) return {base};"));
        for _ in 0..self.rng.range(0, 3) {
            self.stmt(2);
        }
        // The self calls, as declarations (so their order is fixed).
        let calls = if twice { 2 } else { 1 };
        for _ in 0..calls {
            let mut args = vec!["d - 1".to_string()];
            for p in &params[1..] {
                args.push(self.arg_for(p, &mut FREE.clone()));
            }
            let rid = self.id();
            let v = format!("v{rid}");
            self.line(&format!("{} {v} = {name}({});", ret.kw(), args.join(", ")));
            self.scopes[0].push(scalar(&v, ret, false, false));
        }
        for _ in 0..self.rng.range(0, 2) {
            self.stmt(2);
        }
        let e = self.store_expr(ret, 3, &mut FREE.clone());
        self.line(&format!("return {e};"));
        self.indent -= 1;
        self.line("}");
        let per_level = self.cx.cost + 2;
        let levels: u64 = if twice {
            1 << (max_depth + 1)
        } else {
            max_depth as u64 + 1
        };
        self.funcs.push(Func {
            name,
            ret: Some(ret),
            params,
            pure_,
            cost: per_level * levels,
            max_depth: Some(max_depth),
        });
    }

    fn main_function(&mut self) {
        self.line("int main() {");
        self.indent += 1;
        self.begin_function(false, Some(Ty::Int), 300_000, &[]);
        self.cx.is_main = true;
        // Values from stdin (see `input`): opaque to the optimizer, unlike everything else.
        let (ints, floats) = (self.rng.range(0, 8), self.rng.range(0, 4));
        for k in 0..ints + floats {
            let id = self.id();
            let (ty, f) = if k < ints {
                (Ty::Int, "getint")
            } else {
                (Ty::Float, "getfloat")
            };
            let name = format!("v{id}");
            self.line(&format!("{} {name} = {f}();", ty.kw()));
            self.scopes[0].push(scalar(&name, ty, false, false));
        }
        self.decls(6, 16);
        let n = self.rng.range(8, 24);
        for _ in 0..n {
            self.stmt(0);
        }
        if self.rng.chance(1, 3) {
            self.pressure();
        }
        // Checksums: every scalar of main's outer scope and every global.
        let vars: Vec<Var> = self.scopes[0]
            .iter()
            .chain(&self.globals)
            .cloned()
            .collect();
        for v in &vars {
            self.print_var(v);
        }
        let e = self.expr(Ty::Int, 3, &mut FREE.clone());
        self.line(&format!("return {};", e.text));
        self.indent -= 1;
        self.line("}");
    }

    fn print_var(&mut self, v: &Var) {
        if v.dims.is_empty() {
            let f = if v.ty == Ty::Int {
                "putint"
            } else {
                "putfloat"
            };
            self.line(&format!("{f}({}); putch(10);", v.name));
        } else {
            // Print every row of the last dimension.
            let rows: usize = v.dims[..v.dims.len() - 1].iter().product();
            let last = *v.dims.last().unwrap();
            let f = if v.ty == Ty::Int {
                "putarray"
            } else {
                "putfarray"
            };
            if v.kind == Kind::Const {
                return; // Const arrays cannot be passed as `int a[]`.
            }
            for r in 0..rows.min(6) {
                let mut idx = String::new();
                let mut rem = r;
                for d in v.dims[..v.dims.len() - 1].iter().rev() {
                    idx = format!("[{}]{idx}", rem % d);
                    rem /= d;
                }
                self.line(&format!("{f}({last}, {}{idx});", v.name));
            }
        }
    }

    /// Many values live at once: more scalars than registers, all updated in a loop and summed.
    fn pressure(&mut self) {
        self.line("{");
        self.indent += 1;
        self.scopes.push(Vec::new());
        let n = self.rng.range(33, 44);
        let mut names = Vec::new();
        for k in 0..n {
            let id = self.id();
            let ty = if k % 3 == 2 { Ty::Float } else { Ty::Int };
            let name = format!("v{id}");
            let e = self.store_expr(ty, 1, &mut FREE.clone());
            self.line(&format!("{} {name} = {e};", ty.kw()));
            self.scopes
                .last_mut()
                .unwrap()
                .push(scalar(&name, ty, false, false));
            names.push((name, ty));
        }
        let cid = self.id();
        let c = format!("i{cid}");
        let trips = self.rng.range(1, 6);
        self.line(&format!("int {c} = 0;"));
        self.line(&format!("while ({c} < {trips}) {{"));
        self.indent += 1;
        let ints: Vec<String> = names
            .iter()
            .filter(|(_, t)| *t == Ty::Int)
            .map(|(n, _)| n.clone())
            .collect();
        for (name, ty) in names.clone() {
            let (a, _) = names[self.rng.below(names.len() as u64) as usize].clone();
            let text = match ty {
                Ty::Int => {
                    let x = self.rng.pick(&ints).clone();
                    let y = self.rng.pick(&ints).clone();
                    format!("{name} = {x} + {y} * {} - {c};", self.rng.range(-9, 9))
                }
                Ty::Float => format!("{name} = fc({a} + {name} * 0.5);"),
            };
            self.line(&text);
        }
        self.line(&format!("{c} = {c} + 1;"));
        self.indent -= 1;
        self.line("}");
        let sum: Vec<String> = names
            .iter()
            .filter(|(_, t)| *t == Ty::Int)
            .map(|(n, _)| n.clone())
            .collect();
        self.line(&format!("putint({}); putch(10);", sum.join(" + ")));
        let fsum: Vec<String> = names
            .iter()
            .filter(|(_, t)| *t == Ty::Float)
            .map(|(n, _)| n.clone())
            .collect();
        if !fsum.is_empty() {
            self.line(&format!("putfloat({}); putch(10);", fsum.join(" + ")));
        }
        self.scopes.pop();
        self.indent -= 1;
        self.line("}");
    }

    // ---- declarations ----

    fn decls(&mut self, lo: i64, hi: i64) {
        let n = self.rng.range(lo, hi);
        for _ in 0..n {
            self.decl();
        }
    }

    /// A fresh local name, or (sometimes, not in a function's outer scope) the name of a visible
    /// variable to shadow.
    fn local_name(&mut self, prefix: &str) -> String {
        if self.scopes.len() > 1 && self.rng.chance(1, 4) {
            let cur: Vec<String> = self
                .scopes
                .last()
                .unwrap()
                .iter()
                .map(|v| v.name.clone())
                .collect();
            let cands: Vec<String> = self
                .visible()
                .into_iter()
                .filter(|v| v.kind != Kind::Counter && !cur.contains(&v.name) && v.name != "d")
                .map(|v| v.name)
                .collect();
            if !cands.is_empty() {
                return self.rng.pick(&cands).clone();
            }
        }
        let id = self.id();
        format!("{prefix}{id}")
    }

    fn decl(&mut self) {
        let ty = if self.rng.chance(2, 3) {
            Ty::Int
        } else {
            Ty::Float
        };
        let is_const = self.rng.chance(1, 6);
        let is_array = self.rng.chance(1, 4);
        let name = self.local_name(if is_array { "a" } else { "v" });
        self.hide = Some(name.clone());
        let mut text = format!("{}{} {name}", if is_const { "const " } else { "" }, ty.kw());
        let dims = if is_array {
            if self.rng.chance(1, 12) && self.cx.mult <= 20 {
                // A frame bigger than a 12-bit offset reaches.
                vec![self.rng.range(520, 1100) as usize]
            } else {
                self.dims(3, 64)
            }
        } else {
            Vec::new()
        };
        for d in &dims {
            let _ = write!(text, "[{d}]");
        }
        if is_array {
            let init = self.init_list(ty, &dims, is_const, is_const);
            let _ = write!(text, " = {init};");
            self.cx.cost += self.cx.mult * (dims.iter().product::<usize>() as u64 / 4 + 1);
        } else if is_const {
            let _ = write!(text, " = {};", self.literal(ty));
        } else {
            let e = self.store_expr(ty, 3, &mut FREE.clone());
            let _ = write!(text, " = {e};");
        }
        self.hide = None;
        self.line(&text);
        let kind = if is_const { Kind::Const } else { Kind::Var };
        self.scopes.last_mut().unwrap().push(Var {
            name,
            ty,
            dims,
            kind,
            global: false,
            param: false,
        });
        self.cx.cost += self.cx.mult;
    }

    /// A brace initialiser for an array of `dims`, with C's brace elision: a nested list may only
    /// start where a sub-array starts, and covers the largest sub-array starting there.
    fn init_list(&mut self, ty: Ty, dims: &[usize], constant: bool, full: bool) -> String {
        let total: usize = dims.iter().product();
        if !full && self.rng.chance(1, 8) {
            return "{}".into();
        }
        let want = if full || self.rng.chance(1, 2) {
            total
        } else {
            self.rng.range(1, total as i64) as usize
        };
        let want = want.min(48);
        let mut items = Vec::new();
        let mut pos = 0;
        while pos < want {
            // Sizes of the sub-arrays (below this level) that start at `pos`.
            let sub = (1..dims.len())
                .map(|k| (k, dims[k..].iter().product::<usize>()))
                .find(|&(_, s)| pos % s == 0 && s > 1);
            match sub {
                Some((k, s)) if self.rng.chance(1, 2) => {
                    items.push(self.init_list(ty, &dims[k..], constant, full));
                    pos += s;
                }
                _ => {
                    items.push(self.init_elem(ty, constant));
                    pos += 1;
                }
            }
        }
        format!("{{{}}}", items.join(", "))
    }

    fn init_elem(&mut self, ty: Ty, constant: bool) -> String {
        if constant || self.rng.chance(3, 4) {
            if ty == Ty::Float && self.rng.chance(1, 4) {
                return self.int_literal_small();
            }
            return self.literal(ty);
        }
        self.store_expr(ty, 1, &mut FREE.clone())
    }

    // ---- literals ----

    fn literal(&mut self, ty: Ty) -> String {
        match ty {
            Ty::Int => self.int_literal(),
            Ty::Float => self.float_literal().0,
        }
    }

    fn int_literal_small(&mut self) -> String {
        self.rng.range(0, 20).to_string()
    }

    fn int_literal(&mut self) -> String {
        match self.rng.weighted(&[30, 10, 4, 3, 2, 3]) {
            0 => self.rng.range(0, 10).to_string(),
            1 => self.rng.range(0, 1000).to_string(),
            2 => self.rng.range(0, i32::MAX as i64).to_string(),
            3 => format!("0x{:X}", self.rng.range(0, 0xffff)),
            4 => format!("0{:o}", self.rng.range(1, 4095)),
            _ => (*self
                .rng
                .pick(&[2147483647i64, 65536, 1 << 30, 46341, 1 << 16, 255]))
            .to_string(),
        }
    }

    /// A float literal exact in f32 (multiples of 1/4 in a small range), in various spellings.
    fn float_literal(&mut self) -> (String, f64) {
        let q = self.rng.range(0, 64);
        let v = q as f64 / 4.0;
        let text = match self.rng.below(6) {
            0 if q % 4 == 0 => format!("{}.", q / 4),
            1 if q < 4 => format!(
                ".{}",
                match q {
                    0 => "0",
                    1 => "25",
                    2 => "5",
                    _ => "75",
                }
            ),
            2 if q % 2 == 0 && q > 0 => format!("{}e-1", v * 10.0),
            3 => format!("{:e}", v),
            4 if q > 0 => hexfloat(v),
            _ => format!("{v:?}"),
        };
        (text, v)
    }

    // ---- scopes ----

    fn visible(&self) -> Vec<Var> {
        let mut seen: Vec<&str> = Vec::new();
        let mut out = Vec::new();
        for scope in self.scopes.iter().rev() {
            for v in scope.iter().rev() {
                if !seen.contains(&v.name.as_str()) {
                    seen.push(&v.name);
                    out.push(v.clone());
                }
            }
        }
        for v in self.globals.iter().rev() {
            if !seen.contains(&v.name.as_str()) {
                seen.push(&v.name);
                out.push(v.clone());
            }
        }
        if let Some(h) = &self.hide {
            out.retain(|v| &v.name != h);
        }
        out
    }

    fn readable(&self, v: &Var, r: &Region) -> bool {
        if v.global && v.kind != Kind::Const && self.cx.pure_ {
            return false;
        }
        if r.restricted {
            return v.kind == Kind::Const || (!v.global && v.dims.is_empty());
        }
        true
    }

    fn writable(&self, v: &Var) -> bool {
        if v.kind != Kind::Var {
            return false;
        }
        if self.cx.pure_ {
            return !v.global && (!v.param || v.dims.is_empty());
        }
        true
    }

    // ---- expressions ----

    /// An expression of type `ty` that may be stored: floats are clamped to the store bound.
    fn store_expr(&mut self, ty: Ty, depth: u32, r: &mut Region) -> String {
        let e = self.expr(ty, depth, r);
        if e.ty == Ty::Float && e.bound > STORE_BOUND {
            format!("fc({})", e.text)
        } else {
            e.text
        }
    }

    fn expr(&mut self, ty: Ty, depth: u32, r: &mut Region) -> Expr {
        if depth == 0 || self.rng.chance(1, 4) {
            return self.leaf(ty, r);
        }
        match ty {
            Ty::Int => self.int_op(depth, r),
            Ty::Float => self.float_op(depth, r),
        }
    }

    fn int_op(&mut self, depth: u32, r: &mut Region) -> Expr {
        let d = depth - 1;
        let text = match self.rng.weighted(&[10, 8, 6, 4, 3, 3, 2, 3]) {
            0 => {
                let (a, b) = (self.expr(Ty::Int, d, r), self.expr(Ty::Int, d, r));
                format!("({} + {})", a.text, b.text)
            }
            1 => {
                let (a, b) = (self.expr(Ty::Int, d, r), self.expr(Ty::Int, d, r));
                format!("({} - {})", a.text, b.text)
            }
            2 => {
                let (a, b) = (self.expr(Ty::Int, d, r), self.expr(Ty::Int, d, r));
                format!("({} * {})", a.text, b.text)
            }
            3 | 4 => {
                let op = if self.rng.chance(1, 2) { "/" } else { "%" };
                let a = self.expr(Ty::Int, d, r);
                let k = *self.rng.pick(&[
                    1i64, 2, 3, 4, 5, 7, 8, 10, 16, 32, 64, 100, 1024, 65536, -2, -3, -7, -8, -16,
                    1000000007,
                ]);
                format!(
                    "({} {op} {})",
                    a.text,
                    if k < 0 {
                        format!("({k})")
                    } else {
                        k.to_string()
                    }
                )
            }
            5 => {
                let op = if self.rng.chance(1, 2) { "/" } else { "%" };
                let a = self.expr(Ty::Int, d, r);
                let div = self.divisor(d, r);
                format!("({} {op} {div})", a.text)
            }
            6 => {
                let a = self.expr(Ty::Int, d, r);
                format!("(-{})", a.text)
            }
            _ => {
                return self
                    .call_expr(Ty::Int, d, r)
                    .unwrap_or_else(|| self.leaf(Ty::Int, r))
            }
        };
        Expr {
            text,
            ty: Ty::Int,
            bound: INT_BOUND,
        }
    }

    /// An int expression in `2..=2K`.
    fn divisor(&mut self, depth: u32, r: &mut Region) -> String {
        let k = self.rng.range(2, 20);
        let e = self.expr(Ty::Int, depth, r);
        format!("({} % {k} + {})", e.text, k + 1)
    }

    fn float_op(&mut self, depth: u32, r: &mut Region) -> Expr {
        let d = depth - 1;
        match self.rng.weighted(&[10, 8, 8, 4, 3, 2, 3]) {
            0 | 1 => {
                let (a, b) = (self.expr(Ty::Float, d, r), self.expr(Ty::Float, d, r));
                let op = if self.rng.chance(1, 2) { "+" } else { "-" };
                Expr {
                    text: format!("({} {op} {})", a.text, b.text),
                    ty: Ty::Float,
                    bound: a.bound + b.bound,
                }
            }
            2 => {
                let a = self.expr(Ty::Float, d, r);
                let b = if self.rng.chance(1, 2) {
                    self.expr(Ty::Float, d, r)
                } else {
                    self.leaf(Ty::Int, r)
                };
                let b = Expr {
                    bound: b.bound.max(1.0),
                    ..b
                };
                if a.bound * b.bound < 1e30 {
                    Expr {
                        text: format!("({} * {})", a.text, b.text),
                        ty: Ty::Float,
                        bound: a.bound * b.bound,
                    }
                } else {
                    Expr {
                        text: format!("({} + {})", a.text, b.text),
                        ty: Ty::Float,
                        bound: a.bound + b.bound,
                    }
                }
            }
            3 => {
                let a = self.expr(Ty::Float, d, r);
                let (lit, v) = self.float_literal();
                if v == 0.0 {
                    Expr {
                        text: format!("({} * {lit})", a.text),
                        ty: Ty::Float,
                        bound: a.bound,
                    }
                } else {
                    Expr {
                        text: format!("({} / {lit})", a.text),
                        ty: Ty::Float,
                        bound: a.bound / v,
                    }
                }
            }
            4 => {
                let a = self.expr(Ty::Float, d, r);
                let div = self.divisor(d, r);
                Expr {
                    text: format!("({} / {div})", a.text),
                    ty: Ty::Float,
                    bound: a.bound,
                }
            }
            5 => {
                let a = self.expr(Ty::Float, d, r);
                Expr {
                    text: format!("(-{})", a.text),
                    ..a
                }
            }
            _ => self
                .call_expr(Ty::Float, d, r)
                .unwrap_or_else(|| self.leaf(Ty::Float, r)),
        }
    }

    fn leaf(&mut self, ty: Ty, r: &mut Region) -> Expr {
        let vars: Vec<Var> = self
            .visible()
            .into_iter()
            .filter(|v| self.readable(v, r))
            .collect();
        let scalars: Vec<Var> = vars.iter().filter(|v| v.dims.is_empty()).cloned().collect();
        let arrays: Vec<Var> = vars
            .iter()
            .filter(|v| !v.dims.is_empty())
            .cloned()
            .collect();
        let arr_w = if arrays.is_empty() {
            0
        } else if self.nest >= 2 {
            1
        } else {
            4
        };
        let call_w = if self.nest >= 2 { 0 } else { 1 };
        let pick = self.rng.weighted(&[3, 8, arr_w, call_w]);
        match pick {
            1 if !scalars.is_empty() => {
                // Prefer the wanted type; an int in a float context converts exactly enough.
                let same: Vec<Var> = scalars.iter().filter(|v| v.ty == ty).cloned().collect();
                let v: Var = if !same.is_empty() && (ty == Ty::Int || self.rng.chance(3, 4)) {
                    self.rng.pick(&same).clone()
                } else if ty == Ty::Float {
                    self.rng.pick(&scalars).clone()
                } else {
                    return self.literal_expr(ty);
                };
                Expr {
                    text: v.name.clone(),
                    ty,
                    bound: if v.ty == Ty::Int {
                        INT_BOUND
                    } else {
                        STORE_BOUND
                    },
                }
            }
            2 => {
                let same: Vec<Var> = arrays
                    .iter()
                    .filter(|v| v.ty == ty || ty == Ty::Float)
                    .cloned()
                    .collect();
                if same.is_empty() {
                    return self.literal_expr(ty);
                }
                let v = self.rng.pick(&same).clone();
                let mut text = v.name.clone();
                for &d in &v.dims {
                    let i = self.index(d, r);
                    let _ = write!(text, "[{i}]");
                }
                Expr {
                    text,
                    ty,
                    bound: if v.ty == Ty::Int {
                        INT_BOUND
                    } else {
                        STORE_BOUND
                    },
                }
            }
            3 => self
                .call_expr(ty, 0, r)
                .unwrap_or_else(|| self.literal_expr(ty)),
            _ => self.literal_expr(ty),
        }
    }

    fn literal_expr(&mut self, ty: Ty) -> Expr {
        match ty {
            Ty::Int => Expr {
                text: self.int_literal(),
                ty,
                bound: INT_BOUND,
            },
            Ty::Float => {
                let (text, v) = self.float_literal();
                Expr {
                    text,
                    ty,
                    bound: v.max(0.25),
                }
            }
        }
    }

    /// An index in `0..d`.
    fn index(&mut self, d: usize, r: &mut Region) -> String {
        let counters: Vec<(String, usize)> = self
            .cx
            .loops
            .iter()
            .filter(|l| {
                l.bound <= d
                    && self
                        .visible()
                        .iter()
                        .any(|v| v.name == l.counter && v.kind == Kind::Counter)
            })
            .map(|l| (l.counter.clone(), l.bound))
            .collect();
        match self.rng.below(6) {
            0 | 1 if !counters.is_empty() => {
                let (c, _) = self.rng.pick(&counters).clone();
                if self.rng.chance(1, 3) {
                    format!("{} - {c}", d - 1)
                } else {
                    c
                }
            }
            _ if self.nest >= 2 || self.rng.chance(1, 3) => self.rng.below(d as u64).to_string(),
            _ => {
                self.nest += 1;
                let e = self.expr(Ty::Int, 1, r);
                self.nest -= 1;
                if d == 1 {
                    return "0".into();
                }
                format!("(({}) % {d} + {d}) % {d}", e.text)
            }
        }
    }

    /// A call returning `ty` (int functions also serve float contexts), if one fits here.
    fn call_expr(&mut self, ty: Ty, depth: u32, r: &mut Region) -> Option<Expr> {
        let allow_eff = r.eff_left && !self.cx.pure_;
        let cands: Vec<usize> = (0..self.funcs.len())
            .filter(|&i| {
                let f = &self.funcs[i];
                let ok_ty = f.ret == Some(ty) || (ty == Ty::Float && f.ret == Some(Ty::Int));
                let ok_eff = f.pure_ || allow_eff;
                let ok_args =
                    !r.restricted || !f.pure_ || f.params.iter().all(|p| p.dims.is_empty());
                let cost = f.cost * self.cx.mult;
                let ar = Region {
                    eff_left: false,
                    restricted: r.restricted && f.pure_,
                };
                ok_ty
                    && ok_eff
                    && ok_args
                    && self.cx.cost + cost <= self.cx.budget
                    && self.can_supply(f, &ar)
            })
            .collect();
        if cands.is_empty() {
            return None;
        }
        let fi = *self.rng.pick(&cands);
        let f = self.funcs[fi].clone();
        self.cx.cost += f.cost * self.cx.mult;
        // Arguments of an effectful call are evaluated before it runs: free, but pure.
        let mut ar = if f.pure_ {
            Region {
                eff_left: false,
                ..*r
            }
        } else {
            FREE
        };
        if !f.pure_ {
            r.eff_left = false;
        }
        let _ = depth;
        let mut args = Vec::new();
        for (k, p) in f.params.iter().enumerate() {
            match f.max_depth {
                Some(d) if k == 0 => args.push(self.rng.range(0, d).to_string()),
                _ => args.push(self.arg_for(p, &mut ar)),
            }
        }
        let bound = match f.ret {
            Some(Ty::Int) => INT_BOUND,
            _ => STORE_BOUND,
        };
        Some(Expr {
            text: format!("{}({})", f.name, args.join(", ")),
            ty,
            bound,
        })
    }

    /// An argument for parameter `p`. Array arguments are always possible: a caller falls back to
    /// a fresh local array (declared by `ensure_array`)... here we only pick visible ones, and
    /// the caller filtered functions whose arrays cannot be supplied.
    fn arg_for(&mut self, p: &Var, r: &mut Region) -> String {
        self.nest += 1;
        let a = self.arg_for_inner(p, r);
        self.nest -= 1;
        a
    }

    fn arg_for_inner(&mut self, p: &Var, r: &mut Region) -> String {
        if p.dims.is_empty() {
            if p.ty == Ty::Int && self.rng.chance(1, 10) {
                // A stored float converts to int without overflow.
                let vars: Vec<Var> = self
                    .visible()
                    .into_iter()
                    .filter(|v| v.ty == Ty::Float && v.dims.is_empty() && self.readable(v, r))
                    .collect();
                if !vars.is_empty() {
                    return self.rng.pick(&vars).name.clone();
                }
            }
            let depth = if self.nest >= 2 { 0 } else { 2 };
            return self.store_expr(p.ty, depth, r);
        }
        self.array_arg(p, r)
            .unwrap_or_else(|| "/*no array*/".into())
    }

    /// A visible array (or slice of one) that fits parameter `p`: same element type, at least
    /// `p.dims[0]` rows, same fixed dimensions.
    fn array_arg(&mut self, p: &Var, r: &Region) -> Option<String> {
        let cands = self.array_cands(p, r);
        if cands.is_empty() {
            return None;
        }
        let v = self.rng.pick(&cands).clone();
        let lead = v.dims.len() - p.dims.len();
        let mut text = v.name.clone();
        for k in 0..lead {
            let i = self.index(v.dims[k], &mut FREE.clone());
            let _ = write!(text, "[{i}]");
        }
        Some(text)
    }

    fn array_cands(&self, p: &Var, r: &Region) -> Vec<Var> {
        if r.restricted {
            return Vec::new();
        }
        self.visible()
            .into_iter()
            .filter(|v| {
                v.kind == Kind::Var
                    && v.ty == p.ty
                    && v.dims.len() >= p.dims.len()
                    && self.readable(v, r)
                    && {
                        let lead = v.dims.len() - p.dims.len();
                        v.dims[lead] >= p.dims[0] && v.dims[lead + 1..] == p.dims[1..]
                    }
            })
            .collect()
    }

    fn can_supply(&self, f: &Func, r: &Region) -> bool {
        f.params
            .iter()
            .all(|p| p.dims.is_empty() || !self.array_cands(p, r).is_empty())
    }

    // ---- conditions ----

    fn cond(&mut self, depth: u32) -> String {
        let n_or = if depth > 0 && self.rng.chance(1, 3) {
            2
        } else {
            1
        };
        let mut ors = Vec::new();
        for _ in 0..n_or {
            let n_and = if depth > 0 && self.rng.chance(1, 3) {
                self.rng.range(2, 3)
            } else {
                1
            };
            let mut ands = Vec::new();
            for _ in 0..n_and {
                ands.push(self.atom());
            }
            ors.push(ands.join(" && "));
        }
        ors.join(" || ")
    }

    fn atom(&mut self) -> String {
        let mut r = self.region();
        match self.rng.weighted(&[10, 2, 2, 1]) {
            0 => {
                let ty = if self.rng.chance(3, 4) {
                    Ty::Int
                } else {
                    Ty::Float
                };
                let a = self.expr(ty, 2, &mut r);
                let bt = if self.rng.chance(4, 5) { ty } else { Ty::Int };
                let b = self.expr(bt, 2, &mut r);
                let op = *self.rng.pick(&["<", ">", "<=", ">=", "==", "!="]);
                format!("{} {op} {}", a.text, b.text)
            }
            1 => self.expr(Ty::Int, 2, &mut r).text,
            2 => format!("!{}", self.leaf(Ty::Int, &mut r).text),
            _ => {
                let a = self.expr(Ty::Int, 1, &mut r);
                let b = self.expr(Ty::Int, 1, &mut r);
                let c = self.expr(Ty::Int, 1, &mut r);
                format!("{} < {} == {}", a.text, b.text, c.text)
            }
        }
    }

    /// A region for one statement or condition operand: sometimes one effectful call.
    fn region(&mut self) -> Region {
        if !self.cx.pure_ && self.rng.chance(1, 5) {
            Region {
                eff_left: true,
                restricted: true,
            }
        } else {
            FREE
        }
    }

    // ---- statements ----

    fn stmt(&mut self, depth: u32) {
        if self.cx.cost >= self.cx.budget {
            return;
        }
        self.cx.cost += self.cx.mult;
        let in_loop = !self.cx.loops.is_empty();
        let eff = !self.cx.pure_;
        let w = [
            30,                             // assign scalar
            15,                             // assign element
            if depth < 4 { 12 } else { 0 }, // if
            if depth < 3 && self.cx.mult < 400 {
                10
            } else {
                0
            }, // while
            if depth < 4 { 4 } else { 0 },  // block
            if eff { 8 } else { 0 },        // call
            if eff && self.cx.mult <= 40 { 6 } else { 0 }, // print
            if in_loop { 6 } else { 0 },    // break / continue
            if !self.cx.is_main { 2 } else { 0 }, // return
        ];
        match self.rng.weighted(&w) {
            0 => self.assign_scalar(),
            1 => self.assign_elem(),
            2 => self.if_stmt(depth),
            3 => self.while_stmt(depth),
            4 => self.block_stmt(depth),
            5 => self.call_stmt(),
            6 => self.print_stmt(),
            7 => self.jump_stmt(),
            _ => self.return_stmt(),
        }
    }

    fn assign_scalar(&mut self) {
        let vars: Vec<Var> = self
            .visible()
            .into_iter()
            .filter(|v| v.dims.is_empty() && self.writable(v))
            .collect();
        if vars.is_empty() {
            return self.assign_elem();
        }
        let v = self.rng.pick(&vars).clone();
        let mut r = self.region();
        let e = self.assign_rhs(v.ty, &mut r);
        self.line(&format!("{} = {e};", v.name));
    }

    fn assign_rhs(&mut self, ty: Ty, r: &mut Region) -> String {
        if ty == Ty::Int && self.rng.chance(1, 8) {
            // float -> int: the clamp keeps it in range.
            let e = self.expr(Ty::Float, 2, r);
            return if e.bound > 1e9 {
                format!("fc({})", e.text)
            } else {
                e.text
            };
        }
        self.store_expr(ty, 3, r)
    }

    fn assign_elem(&mut self) {
        let vars: Vec<Var> = self
            .visible()
            .into_iter()
            .filter(|v| !v.dims.is_empty() && self.writable(v))
            .collect();
        if vars.is_empty() {
            return;
        }
        let v = self.rng.pick(&vars).clone();
        let mut r = self.region();
        let mut text = v.name.clone();
        for &d in &v.dims {
            let i = self.index(d, &mut r);
            let _ = write!(text, "[{i}]");
        }
        let e = self.assign_rhs(v.ty, &mut r);
        self.line(&format!("{text} = {e};"));
    }

    fn body(&mut self, depth: u32, n: i64) {
        self.scopes.push(Vec::new());
        if self.rng.chance(1, 3) {
            self.decls(1, 3);
        }
        for _ in 0..n {
            self.stmt(depth + 1);
        }
        self.scopes.pop();
    }

    fn if_stmt(&mut self, depth: u32) {
        let c = self.cond(2);
        self.line(&format!("if ({c}) {{"));
        self.indent += 1;
        let n = self.rng.range(1, 4);
        self.body(depth, n);
        self.indent -= 1;
        if self.rng.chance(1, 2) {
            if self.rng.chance(1, 3) && depth < 3 {
                // else-if chain
                self.line("} else");
                self.if_stmt(depth + 1);
                return;
            }
            self.line("} else {");
            self.indent += 1;
            let n = self.rng.range(1, 3);
            self.body(depth, n);
            self.indent -= 1;
        }
        self.line("}");
    }

    fn while_stmt(&mut self, depth: u32) {
        let id = self.id();
        let c = format!("i{id}");
        let arrays_dim: Vec<usize> = self
            .visible()
            .iter()
            .flat_map(|v| v.dims.clone())
            .filter(|&d| d > 1)
            .collect();
        let bound = if !arrays_dim.is_empty() && self.rng.chance(1, 2) {
            *self.rng.pick(&arrays_dim)
        } else {
            self.rng.range(0, 12) as usize
        };
        let bound = bound
            .min(((self.cx.budget / 4) / self.cx.mult.max(1)).max(1) as usize)
            .min(1100);
        let inc_at_end = self.rng.chance(2, 3);
        if inc_at_end {
            self.line(&format!("int {c} = 0;"));
            // Only `&&` may follow the bound test: `i < N && a || b` would not be bounded.
            let extra = if self.rng.chance(1, 4) {
                format!(" && {}", self.atom())
            } else {
                String::new()
            };
            self.line(&format!("while ({c} < {bound}{extra}) {{"));
        } else {
            self.line(&format!("int {c} = {bound};"));
            self.line(&format!("while ({c} > 0) {{"));
        }
        self.scopes.last_mut().unwrap().push(Var {
            name: c.clone(),
            ty: Ty::Int,
            dims: Vec::new(),
            kind: Kind::Counter,
            global: false,
            param: false,
        });
        self.indent += 1;
        if !inc_at_end {
            self.line(&format!("{c} = {c} - 1;"));
        }
        self.cx.loops.push(LoopCx {
            counter: c.clone(),
            bound,
            inc_at_end,
        });
        let saved = self.cx.mult;
        self.cx.mult = self.cx.mult.saturating_mul(bound.max(1) as u64);
        let n = self.rng.range(1, 6);
        self.body(depth, n);
        self.cx.mult = saved;
        self.cx.loops.pop();
        if inc_at_end {
            self.line(&format!("{c} = {c} + 1;"));
        }
        self.indent -= 1;
        self.line("}");
    }

    fn block_stmt(&mut self, depth: u32) {
        self.line("{");
        self.indent += 1;
        self.scopes.push(Vec::new());
        self.decls(1, 4);
        for _ in 0..self.rng.range(1, 4) {
            self.stmt(depth + 1);
        }
        self.scopes.pop();
        self.indent -= 1;
        self.line("}");
    }

    fn call_stmt(&mut self) {
        let cands: Vec<usize> = (0..self.funcs.len())
            .filter(|&i| {
                let f = &self.funcs[i];
                !f.pure_
                    && self.cx.cost + f.cost * self.cx.mult <= self.cx.budget
                    && self.can_supply(f, &FREE)
            })
            .collect();
        if cands.is_empty() {
            return self.assign_scalar();
        }
        let f = self.funcs[*self.rng.pick(&cands)].clone();
        self.cx.cost += f.cost * self.cx.mult;
        let mut args = Vec::new();
        for (k, p) in f.params.iter().enumerate() {
            match f.max_depth {
                Some(d) if k == 0 => args.push(self.rng.range(0, d).to_string()),
                _ => args.push(self.arg_for(p, &mut FREE.clone())),
            }
        }
        self.line(&format!("{}({});", f.name, args.join(", ")));
    }

    fn print_stmt(&mut self) {
        let mut r = self.region();
        match self.rng.below(5) {
            0 | 1 => {
                let e = self.expr(Ty::Int, 3, &mut r);
                self.line(&format!("putint({}); putch(32);", e.text));
            }
            2 => {
                let e = self.store_expr(Ty::Float, 3, &mut r);
                self.line(&format!("putfloat({e}); putch(10);"));
            }
            _ => {
                let ty = if self.rng.chance(3, 4) {
                    Ty::Int
                } else {
                    Ty::Float
                };
                let p = Var {
                    name: String::new(),
                    ty,
                    dims: vec![1],
                    kind: Kind::Var,
                    global: false,
                    param: true,
                };
                let cands = self.array_cands(&p, &FREE);
                if cands.is_empty() {
                    return self.line("putch(10);");
                }
                let v = self.rng.pick(&cands).clone();
                let n = self.rng.range(0, *v.dims.last().unwrap() as i64);
                let a = self.array_arg(
                    &Var {
                        dims: vec![n.max(1) as usize],
                        ..p
                    },
                    &FREE,
                );
                if let Some(a) = a {
                    let f = if ty == Ty::Int {
                        "putarray"
                    } else {
                        "putfarray"
                    };
                    self.line(&format!("{f}({n}, {a});"));
                }
            }
        }
    }

    fn jump_stmt(&mut self) {
        let l = self.cx.loops.last().unwrap();
        let (c, inc) = (l.counter.clone(), l.inc_at_end);
        let cond = self.cond(1);
        if self.rng.chance(1, 2) {
            self.line(&format!("if ({cond}) break;"));
        } else if inc {
            self.line(&format!("if ({cond}) {{ {c} = {c} + 1; continue; }}"));
        } else {
            self.line(&format!("if ({cond}) continue;"));
        }
    }

    fn return_stmt(&mut self) {
        let cond = self.cond(1);
        match self.cx.ret {
            None => self.line(&format!("if ({cond}) return;")),
            Some(t) => {
                let e = self.store_expr(t, 2, &mut FREE.clone());
                self.line(&format!("if ({cond}) return {e};"));
            }
        }
    }
}

fn scalar(name: &str, ty: Ty, global: bool, param: bool) -> Var {
    Var {
        name: name.into(),
        ty,
        dims: Vec::new(),
        kind: Kind::Var,
        global,
        param,
    }
}

/// C99 hex spelling of a positive multiple of 1/4 (e.g. `0x1.8p+1`).
fn hexfloat(v: f64) -> String {
    let bits = v.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i64 - 1023;
    let mant = bits & ((1u64 << 52) - 1);
    let mut hex = format!("{mant:013x}");
    while hex.ends_with('0') {
        hex.pop();
    }
    if hex.is_empty() {
        format!("0x1p{exp:+}")
    } else {
        format!("0x1.{hex}p{exp:+}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic() {
        assert_eq!(generate(7), generate(7));
        assert_ne!(generate(7), generate(8));
    }

    #[test]
    fn hexfloats() {
        assert_eq!(hexfloat(3.0), "0x1.8p+1");
        assert_eq!(hexfloat(1.0), "0x1p+0");
        assert_eq!(hexfloat(0.25), "0x1p-2");
    }

    #[test]
    fn programs_pass_the_frontend() {
        for seed in 0..200 {
            let p = generate(seed);
            if let Err(e) = crate::frontend::with_big_stack(move || {
                crate::frontend::check(p.as_bytes(), "gen.sy").map(|_| ())
            }) {
                panic!("seed {seed}:\n{e}\n{}", generate(seed));
            }
        }
    }
}
