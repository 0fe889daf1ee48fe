//! The `programs` profile: generated programs shaped like ordinary ones, for benchmarking the
//! optimizer against gcc as well as for differential testing.
//!
//! Where the default profile (`gen.rs`) aims at what breaks optimizers, this one writes what
//! programs usually are: arrays filled from a seed read on stdin, sweeps over 1-D and 2-D arrays
//! (zeroing and copying loops, prefix sums, stencils, histograms, small matrix products, bubble
//! sorts), loop nests with `break` and `continue` (also `while (1)` loops that leave by a `break` at
//! their top), boolean logic in conditions and 0/1 flags, small recursive helpers (fib-like,
//! gcd-like, fast power, divide and conquer over an array), helpers taking arrays, accumulators
//! reduced modulo a constant, int and float arithmetic, and putint/putch/putarray output, all
//! repeated over a few rounds.
//!
//! Every program is well defined in C without `-fwrapv`: each int subexpression carries an
//! interval, and no interval leaves the 32-bit range. Variables and array elements have declared
//! ranges that every store respects (a value that might not fit is reduced with `%` first, and a
//! float is scaled by a power of two). Divisors are nonzero constants other than -1, or
//! expressions whose interval excludes 0 and -1. Indices are expressions whose interval lies
//! inside the dimension. Float magnitudes stay far below overflow, and a float converted to int
//! fits. Functions that return a value write nothing but their own locals, so C's unspecified
//! evaluation order cannot change a result. Loops have bounded trip counts and a cost estimate
//! (statements times enclosing trip counts, plus callee costs) keeps each program to roughly
//! 10^5..10^6.5 executed statements.

use super::Rng;
use std::fmt::Write;

/// The magnitude no int subexpression may exceed.
const INT_LIMIT: f64 = 2_147_483_000.0;
/// The magnitude float subexpressions stay below (so no inf, and products stay exact enough).
const FLOAT_LIMIT: f64 = 1.0e7;
/// The most rounds `main` repeats its kernels.
const MAX_ROUNDS: f64 = 200.0;

/// An interval of values (ints are integral values of f64; all of i32 is exact).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Rg {
    lo: f64,
    hi: f64,
}

impl Rg {
    fn new(lo: f64, hi: f64) -> Rg {
        Rg { lo, hi }
    }
    fn c(v: f64) -> Rg {
        Rg { lo: v, hi: v }
    }
    fn within(self, o: Rg) -> bool {
        self.lo >= o.lo && self.hi <= o.hi
    }
    fn mag(self) -> f64 {
        self.lo.abs().max(self.hi.abs())
    }
    fn add(self, o: Rg) -> Rg {
        Rg::new(self.lo + o.lo, self.hi + o.hi)
    }
    fn sub(self, o: Rg) -> Rg {
        Rg::new(self.lo - o.hi, self.hi - o.lo)
    }
    fn mul(self, o: Rg) -> Rg {
        let c = [
            self.lo * o.lo,
            self.lo * o.hi,
            self.hi * o.lo,
            self.hi * o.hi,
        ];
        Rg::new(
            c.iter().cloned().fold(f64::INFINITY, f64::min),
            c.iter().cloned().fold(f64::NEG_INFINITY, f64::max),
        )
    }
    fn neg(self) -> Rg {
        Rg::new(-self.hi, -self.lo)
    }
    /// C's truncating int division by a divisor range that excludes 0.
    fn idiv(self, d: Rg) -> Rg {
        let c = [
            (self.lo / d.lo).trunc(),
            (self.lo / d.hi).trunc(),
            (self.hi / d.lo).trunc(),
            (self.hi / d.hi).trunc(),
        ];
        let mut r = Rg::new(
            c.iter().cloned().fold(f64::INFINITY, f64::min),
            c.iter().cloned().fold(f64::NEG_INFINITY, f64::max),
        );
        // A divisor range wholly positive or negative: zero lies between the corners when the
        // dividend straddles it, which the corners already cover.
        if self.lo <= 0.0 && self.hi >= 0.0 {
            r.lo = r.lo.min(0.0);
            r.hi = r.hi.max(0.0);
        }
        r
    }
    /// C's int remainder (sign of the dividend, magnitude below the divisor's).
    fn irem(self, d: Rg) -> Rg {
        let m = d.mag() - 1.0;
        Rg::new(
            if self.lo >= 0.0 { 0.0 } else { self.lo.max(-m) },
            if self.hi <= 0.0 { 0.0 } else { self.hi.min(m) },
        )
    }
    /// Widened a little: float rounding may step just outside the exact interval.
    fn loose(self) -> Rg {
        let w = 1e-3 * self.mag() + 1e-6;
        Rg::new(self.lo - w, self.hi + w)
    }
}

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
    /// A loop counter or a parameter the body must not change.
    Counter,
    /// A scalar that may grow by `v = v + e` while its budget lasts (see `Acc`).
    Accum,
}

#[derive(Clone, Debug)]
struct Var {
    name: String,
    ty: Ty,
    /// The range of the value (of every element, for an array).
    rg: Rg,
    /// Dimensions; empty for a scalar. For an array parameter the first is the number of rows
    /// every caller guarantees.
    dims: Vec<usize>,
    kind: Kind,
    global: bool,
}

/// The growth left to an accumulator: its value starts at `init` and stays inside its range as
/// long as the sum of (possible executions x increment bound) fits.
#[derive(Clone, Debug)]
struct Acc {
    name: String,
    up_left: f64,
    down_left: f64,
    /// `mult` where it was declared: an update runs at most `mult / decl_mult` times.
    decl_mult: f64,
}

#[derive(Clone, Debug)]
struct Param {
    name: String,
    ty: Ty,
    rg: Rg,
    dims: Vec<usize>,
}

#[derive(Clone, Debug)]
struct Func {
    name: String,
    ret: Option<Ty>,
    ret_rg: Rg,
    params: Vec<Param>,
    /// Executed statements per call (an estimate, upper bound).
    cost: f64,
}

struct LoopCx {
    /// The statement that advances the counter (`i = i + 1;`), repeated before a `continue`
    /// when the advance sits at the end of the body.
    advance: Option<String>,
}

struct E {
    text: String,
    ty: Ty,
    rg: Rg,
}

/// Element ranges of int arrays: every array of a class may be passed where the class is wanted.
const INT_CLASSES: [(f64, f64); 3] = [(0.0, 9999.0), (-9999.0, 9999.0), (0.0, 1_000_006.0)];
const FLOAT_CLASS: (f64, f64) = (-1000.0, 1000.0);

struct Gen {
    rng: Rng,
    out: String,
    indent: usize,
    globals: Vec<Var>,
    funcs: Vec<Func>,
    scopes: Vec<Vec<Var>>,
    accs: Vec<Acc>,
    loops: Vec<LoopCx>,
    /// Product of the trip bounds of the enclosing loops.
    mult: f64,
    cost: f64,
    budget: f64,
    /// In a function that returns a value: it may write only its own locals.
    pure_: bool,
    /// How often the code being written may run beyond `mult` (output is kept small).
    print_scale: f64,
    next_id: u32,
    input: Vec<String>,
}

/// The program of `seed` and its standard input.
pub fn generate(seed: u64) -> (String, String) {
    let mut g = Gen {
        rng: Rng::new(seed ^ 0x7072_6f67_7261_6d73),
        out: String::new(),
        indent: 0,
        globals: Vec::new(),
        funcs: Vec::new(),
        scopes: Vec::new(),
        accs: Vec::new(),
        loops: Vec::new(),
        mult: 1.0,
        cost: 0.0,
        budget: 0.0,
        pure_: false,
        print_scale: f64::INFINITY,
        next_id: 0,
        input: Vec::new(),
    };
    g.program(seed);
    let input = if g.input.is_empty() {
        String::new()
    } else {
        g.input.join(" ") + "\n"
    };
    (g.out, input)
}

fn lit(v: f64) -> String {
    if v < 0.0 {
        format!("({})", v as i64)
    } else {
        format!("{}", v as i64)
    }
}

/// A float literal: `v` must be exact in f32 (small multiples of powers of two).
fn flit(v: f64) -> String {
    let s = if v == v.trunc() && v.abs() < 1e6 {
        format!("{}.0", v.abs() as i64)
    } else {
        format!("{}", v.abs())
    };
    if v < 0.0 {
        format!("(-{s})")
    } else {
        s
    }
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

    fn open(&mut self, s: &str) {
        self.line(s);
        self.indent += 1;
        self.scopes.push(Vec::new());
    }

    fn close(&mut self) {
        self.scopes.pop();
        self.indent -= 1;
        self.line("}");
    }

    fn declare(&mut self, v: Var) {
        self.scopes.last_mut().expect("a scope").push(v);
    }

    fn visible(&self) -> impl Iterator<Item = &Var> {
        self.scopes
            .iter()
            .rev()
            .flat_map(|s| s.iter().rev())
            .chain(self.globals.iter())
    }

    fn readable(&self, v: &Var) -> bool {
        !(self.pure_ && v.global && v.kind != Kind::Const)
    }

    fn writable(&self, v: &Var) -> bool {
        matches!(v.kind, Kind::Var | Kind::Accum)
            && !(self.pure_ && (v.global || self.is_param_array(v)))
    }

    fn is_param_array(&self, v: &Var) -> bool {
        !v.dims.is_empty()
            && self
                .scopes
                .first()
                .is_some_and(|s| s.iter().any(|p| p.name == v.name))
    }

    fn left(&self) -> f64 {
        (self.budget - self.cost).max(0.0)
    }

    /// The largest trip count that keeps a body of about `body` statements within the budget.
    fn trips(&self, want: usize, body: f64) -> usize {
        let cap = self.left() / (self.mult * body.max(1.0));
        (want as f64).min(cap).max(1.0) as usize
    }

    fn stmt_cost(&mut self) {
        self.cost += self.mult;
    }

    // ---- the program ----

    fn program(&mut self, seed: u64) {
        let _ = writeln!(
            self.out,
            "// generated by sysyc fuzzgen (programs), seed {seed}"
        );
        for _ in 0..self.rng.range(2, 5) {
            self.global_array();
        }
        for _ in 0..self.rng.range(0, 2) {
            self.global_scalar();
        }
        if self.rng.chance(1, 2) {
            self.const_table();
        }
        let n = self.rng.range(3, 7);
        for _ in 0..n {
            self.helper();
        }
        self.main_function();
    }

    fn int_class(&mut self) -> Rg {
        let (lo, hi) = *self.rng.pick(&INT_CLASSES);
        Rg::new(lo, hi)
    }

    fn array_dims(&mut self, two_d: bool, local: bool) -> Vec<usize> {
        if two_d {
            let r = *self.rng.pick(&[8usize, 10, 16, 20, 24, 32, 40, 50, 64]);
            let r = if local { r.min(40) } else { r };
            let c = if self.rng.chance(2, 3) {
                r
            } else {
                *self.rng.pick(&[8usize, 12, 16, 30, 32])
            };
            vec![r, c]
        } else {
            let n = *self.rng.pick(&[
                16usize, 32, 50, 64, 100, 128, 200, 256, 500, 512, 1000, 1024, 2000,
            ]);
            vec![if local { n.min(1000) } else { n }]
        }
    }

    fn array_decl_text(v: &Var, prefix: &str) -> String {
        let mut t = format!("{prefix}{} {}", v.ty.kw(), v.name);
        for d in &v.dims {
            let _ = write!(t, "[{d}]");
        }
        t
    }

    fn global_array(&mut self) {
        let id = self.id();
        let ty = if self.rng.chance(3, 4) {
            Ty::Int
        } else {
            Ty::Float
        };
        let two_d = self.rng.chance(1, 3);
        let dims = self.array_dims(two_d, false);
        let rg = match ty {
            Ty::Int => self.int_class(),
            Ty::Float => Rg::new(FLOAT_CLASS.0, FLOAT_CLASS.1),
        };
        let name = format!(
            "{}{id}",
            match (ty, two_d) {
                (Ty::Int, false) => "a",
                (Ty::Int, true) => "m",
                (Ty::Float, false) => "f",
                (Ty::Float, true) => "fm",
            }
        );
        let v = Var {
            name,
            ty,
            rg,
            dims,
            kind: Kind::Var,
            global: true,
        };
        let mut text = Self::array_decl_text(&v, "");
        if self.rng.chance(1, 4) && !two_d {
            // A partial initialiser: the rest is zero.
            let k = self.rng.range(1, 8) as usize;
            let items: Vec<String> = (0..k.min(v.dims[0]))
                .map(|_| match ty {
                    Ty::Int => lit(self.rng.range(rg.lo.max(0.0) as i64, 99) as f64),
                    Ty::Float => flit(self.rng.range(0, 40) as f64 * 0.25),
                })
                .collect();
            let _ = write!(text, " = {{{}}}", items.join(", "));
        }
        text.push(';');
        self.line(&text);
        self.globals.push(v);
    }

    fn global_scalar(&mut self) {
        let id = self.id();
        let name = format!("g{id}");
        let m = *self.rng.pick(&[100.0, 10007.0, 65536.0]);
        let init = self.rng.range(0, m as i64 - 1) as f64;
        self.line(&format!("int {name} = {};", lit(init)));
        self.globals.push(Var {
            name,
            ty: Ty::Int,
            rg: Rg::new(-(m - 1.0), m - 1.0),
            dims: Vec::new(),
            kind: Kind::Var,
            global: true,
        });
    }

    fn const_table(&mut self) {
        let id = self.id();
        let name = format!("tab{id}");
        let n = *self.rng.pick(&[4usize, 8, 10, 16]);
        let vals: Vec<i64> = (0..n).map(|_| self.rng.range(-50, 100)).collect();
        let lo = *vals.iter().min().unwrap_or(&0) as f64;
        let hi = *vals.iter().max().unwrap_or(&0) as f64;
        let items: Vec<String> = vals.iter().map(|&v| v.to_string()).collect();
        self.line(&format!(
            "const int {name}[{n}] = {{{}}};",
            items.join(", ")
        ));
        self.globals.push(Var {
            name,
            ty: Ty::Int,
            rg: Rg::new(lo, hi),
            dims: vec![n],
            kind: Kind::Const,
            global: true,
        });
    }

    // ---- helpers ----

    fn begin_function(&mut self, params: &[Param], pure_: bool, budget: f64) {
        self.scopes = vec![params
            .iter()
            .map(|p| Var {
                name: p.name.clone(),
                ty: p.ty,
                rg: p.rg,
                dims: p.dims.clone(),
                kind: if p.dims.is_empty() {
                    Kind::Counter
                } else {
                    Kind::Var
                },
                global: false,
            })
            .collect()];
        self.accs.clear();
        self.loops.clear();
        self.mult = 1.0;
        self.cost = 0.0;
        self.budget = budget;
        self.pure_ = pure_;
        // Helpers may run any number of times: they print nothing.
        self.print_scale = f64::INFINITY;
        self.indent = 1;
    }

    fn signature(name: &str, ret: Option<Ty>, params: &[Param]) -> String {
        let ps: Vec<String> = params
            .iter()
            .map(|p| {
                let mut s = format!("{} {}", p.ty.kw(), p.name);
                if !p.dims.is_empty() {
                    s.push_str("[]");
                    for d in &p.dims[1..] {
                        let _ = write!(s, "[{d}]");
                    }
                }
                s
            })
            .collect();
        format!(
            "{} {name}({}) {{",
            ret.map_or("void", Ty::kw),
            ps.join(", ")
        )
    }

    fn helper(&mut self) {
        match self.rng.weighted(&[3, 2, 2, 2, 2, 5, 3, 2, 2]) {
            0 => self.fib_like(),
            1 => self.gcd_like(),
            2 => self.pow_mod(),
            3 => self.prime_test(),
            4 => self.divide_and_conquer(),
            5 => self.array_function(),
            6 => self.scalar_function(),
            7 => self.float_function(),
            _ => self.matrix_function(),
        }
    }

    fn push_func(
        &mut self,
        name: String,
        ret: Option<Ty>,
        ret_rg: Rg,
        params: Vec<Param>,
        cost: f64,
    ) {
        self.funcs.push(Func {
            name,
            ret,
            ret_rg,
            params,
            cost,
        });
    }

    fn p(name: &str, ty: Ty, rg: Rg) -> Param {
        Param {
            name: name.into(),
            ty,
            rg,
            dims: Vec::new(),
        }
    }

    /// `fib(n)`: two self calls, the results combined modulo a constant.
    fn fib_like(&mut self) {
        let id = self.id();
        let name = format!("fib{id}");
        let nmax = self.rng.range(8, 17) as f64;
        let m = *self.rng.pick(&[1000.0, 10007.0, 65536.0, 1_000_007.0]);
        let k = self.rng.range(1, 3);
        let base = self.rng.range(1, 2);
        self.line(&format!("int {name}(int n) {{"));
        self.line(&format!(
            "  if (n < {}) return {};",
            base + 1,
            if base == 1 { "n" } else { "1" }
        ));
        if k == 1 {
            self.line(&format!(
                "  return ({name}(n - 1) + {name}(n - 2)) % {};",
                lit(m)
            ));
        } else {
            self.line(&format!(
                "  return ({name}(n - 1) + {k} * {name}(n - 2)) % {};",
                lit(m)
            ));
        }
        self.line("}");
        let cost = 3.0 * 1.7f64.powf(nmax);
        self.push_func(
            name,
            Some(Ty::Int),
            Rg::new(0.0, m - 1.0),
            vec![Self::p("n", Ty::Int, Rg::new(0.0, nmax))],
            cost,
        );
    }

    /// Euclid's algorithm, recursive or with a loop.
    fn gcd_like(&mut self) {
        let id = self.id();
        let name = format!("gcd{id}");
        let r = Rg::new(0.0, 1_000_006.0);
        self.line(&format!("int {name}(int a, int b) {{"));
        if self.rng.chance(1, 2) {
            self.line("  if (b == 0) return a;");
            self.line(&format!("  return {name}(b, a % b);"));
        } else {
            self.line("  while (b != 0) {");
            self.line("    int t = a % b;");
            self.line("    a = b;");
            self.line("    b = t;");
            self.line("  }");
            self.line("  return a;");
        }
        self.line("}");
        self.push_func(
            name,
            Some(Ty::Int),
            r,
            vec![Self::p("a", Ty::Int, r), Self::p("b", Ty::Int, r)],
            4.0 * 31.0,
        );
    }

    /// `b^e mod m` by halving `e`, recursive or iterative.
    fn pow_mod(&mut self) {
        let id = self.id();
        let name = format!("pw{id}");
        let m = *self.rng.pick(&[1009.0, 10007.0, 40009.0, 46337.0]);
        self.line(&format!("int {name}(int b, int e) {{"));
        if self.rng.chance(1, 2) {
            self.line("  if (e == 0) return 1;");
            self.line(&format!("  int h = {name}(b, e / 2);"));
            self.line(&format!("  h = h * h % {};", lit(m)));
            self.line(&format!("  if (e % 2 == 1) h = h * b % {};", lit(m)));
            self.line("  return h;");
        } else {
            self.line("  int r = 1;");
            self.line("  while (e > 0) {");
            self.line(&format!("    if (e % 2 == 1) r = r * b % {};", lit(m)));
            self.line(&format!("    b = b * b % {};", lit(m)));
            self.line("    e = e / 2;");
            self.line("  }");
            self.line("  return r;");
        }
        self.line("}");
        self.push_func(
            name,
            Some(Ty::Int),
            Rg::new(0.0, m - 1.0),
            vec![
                Self::p("b", Ty::Int, Rg::new(0.0, m - 1.0)),
                Self::p("e", Ty::Int, Rg::new(0.0, 1_000_006.0)),
            ],
            5.0 * 21.0,
        );
    }

    /// Trial division with an early `break` (or `return`): 0 or 1.
    fn prime_test(&mut self) {
        let id = self.id();
        let name = format!("isprime{id}");
        self.line(&format!("int {name}(int n) {{"));
        self.line("  if (n < 2) return 0;");
        self.line("  int i = 2;");
        if self.rng.chance(1, 2) {
            self.line("  while (i * i <= n) {");
            self.line("    if (n % i == 0) return 0;");
            self.line("    i = i + 1;");
            self.line("  }");
            self.line("  return 1;");
        } else {
            self.line("  int ok = 1;");
            self.line("  while (i <= n / i) {");
            self.line("    if (n % i == 0) {");
            self.line("      ok = 0;");
            self.line("      break;");
            self.line("    }");
            self.line("    i = i + 1;");
            self.line("  }");
            self.line("  return ok;");
        }
        self.line("}");
        self.push_func(
            name,
            Some(Ty::Int),
            Rg::new(0.0, 1.0),
            vec![Self::p("n", Ty::Int, Rg::new(0.0, 99_999.0))],
            3.0 * 317.0,
        );
    }

    /// Sum or maximum of `a[lo..hi)` by halving, over an array of one class.
    fn divide_and_conquer(&mut self) {
        let id = self.id();
        let name = format!("dc{id}");
        let class = self.int_class();
        let cap = *self.rng.pick(&[64usize, 100, 128, 256, 500]);
        let max = self.rng.chance(1, 2);
        self.line(&format!("int {name}(int a[], int lo, int hi) {{"));
        self.line("  if (hi - lo == 1) return a[lo];");
        self.line("  int mid = (lo + hi) / 2;");
        self.line(&format!("  int x = {name}(a, lo, mid);"));
        self.line(&format!("  int y = {name}(a, mid, hi);"));
        let ret_rg = if max {
            self.line("  if (x > y) return x;");
            self.line("  return y;");
            class
        } else {
            // The sum of at most `cap` elements fits, reduced on the way up.
            self.line("  return (x + y) % 1000007;");
            Rg::new(if class.lo < 0.0 { -1_000_006.0 } else { 0.0 }, 1_000_006.0)
        };
        // Careful: with a sum the leaves are class values, the inner nodes reduced sums; both fit.
        let ret_rg = Rg::new(ret_rg.lo.min(class.lo), ret_rg.hi.max(class.hi));
        self.line("}");
        let mut a = Self::p("a", Ty::Int, class);
        a.dims = vec![cap];
        let params = vec![
            a,
            Self::p("lo", Ty::Int, Rg::new(0.0, 0.0)),
            Self::p("hi", Ty::Int, Rg::new(1.0, cap as f64)),
        ];
        self.push_func(name, Some(Ty::Int), ret_rg, params, 8.0 * cap as f64);
    }

    /// A helper over arrays: `void` ones may write their array parameters; ones returning a value
    /// reduce. The body is a sweep with random statements.
    fn array_function(&mut self) {
        let id = self.id();
        let ty = if self.rng.chance(3, 4) {
            Ty::Int
        } else {
            Ty::Float
        };
        let returns = self.rng.chance(1, 2);
        let name = format!("{}{id}", if returns { "reduce" } else { "sweep" });
        let cap = *self
            .rng
            .pick(&[16usize, 32, 50, 64, 100, 128, 256, 500, 1000]);
        let class = match ty {
            Ty::Int => self.int_class(),
            Ty::Float => Rg::new(FLOAT_CLASS.0, FLOAT_CLASS.1),
        };
        let n_arrays = self.rng.range(1, 3);
        let mut params = Vec::new();
        for k in 0..n_arrays {
            let mut p = Self::p(["a", "b", "c"][k as usize], ty, class);
            p.dims = vec![cap];
            params.push(p);
        }
        params.push(Self::p("n", Ty::Int, Rg::new(1.0, cap as f64)));
        if self.rng.chance(1, 2) {
            params.push(Self::p("k", Ty::Int, Rg::new(-100.0, 100.0)));
        }
        let (ret, ret_rg) = if returns {
            match ty {
                Ty::Int => (Some(Ty::Int), Rg::new(-1_000_006.0, 1_000_006.0)),
                Ty::Float => (Some(Ty::Float), Rg::new(-1e4, 1e4)),
            }
        } else {
            (None, Rg::c(0.0))
        };
        let sig = Self::signature(&name, ret, &params);
        self.line(&sig);
        self.begin_function(&params, returns, 40_000.0);
        let acc = if returns {
            Some(self.accumulator(ty))
        } else {
            None
        };
        let i = format!("i{}", self.id());
        let stencil = self.rng.chance(1, 3);
        let start = if stencil { 1 } else { 0 };
        self.line(&format!("int {i} = {start};"));
        let upper = if stencil { "n - 1" } else { "n" };
        self.open(&format!("while ({i} < {upper}) {{"));
        let hi = if stencil {
            cap as f64 - 2.0
        } else {
            cap as f64 - 1.0
        };
        self.counter(&i, Rg::new(start as f64, hi));
        self.loops.push(LoopCx {
            advance: Some(format!("{i} = {i} + 1;")),
        });
        let saved = self.mult;
        self.mult *= cap as f64;
        for _ in 0..self.rng.range(2, 5) {
            self.stmt(1);
        }
        self.mult = saved;
        self.loops.pop();
        self.line(&format!("{i} = {i} + 1;"));
        self.close();
        if let Some(a) = acc {
            let v = self.visible().find(|v| v.name == a).cloned();
            if let Some(v) = v {
                let e = E {
                    text: a,
                    ty: v.ty,
                    rg: v.rg,
                };
                let t = self.fit(e, ret_rg);
                self.line(&format!("return {t};"));
            }
        }
        self.indent = 0;
        self.line("}");
        let cost = self.cost + 2.0;
        self.scopes.clear();
        self.push_func(name, ret, ret_rg, params, cost);
    }

    /// Scalar arithmetic and boolean logic: if/else chains, flags, early returns.
    fn scalar_function(&mut self) {
        let id = self.id();
        let name = format!("mix{id}");
        let n = self.rng.range(1, 4);
        let mut params = Vec::new();
        for k in 0..n {
            let rg = match self.rng.below(3) {
                0 => Rg::new(0.0, 9999.0),
                1 => Rg::new(-9999.0, 9999.0),
                _ => Rg::new(0.0, 1_000_006.0),
            };
            params.push(Self::p(["x", "y", "z", "w"][k as usize], Ty::Int, rg));
        }
        let ret_rg = Rg::new(-1_000_006.0, 1_000_006.0);
        let sig = Self::signature(&name, Some(Ty::Int), &params);
        self.line(&sig);
        self.begin_function(&params, true, 200.0);
        for _ in 0..self.rng.range(1, 2) {
            self.local_decl(Ty::Int);
        }
        for _ in 0..self.rng.range(2, 5) {
            self.stmt(2);
        }
        let e = self.iexpr(3);
        let e = self.fit(e, ret_rg);
        self.line(&format!("return {e};"));
        self.indent = 0;
        self.line("}");
        let cost = self.cost + 2.0;
        self.scopes.clear();
        self.push_func(name, Some(Ty::Int), ret_rg, params, cost);
    }

    /// Float helpers: absolute value, clamping, a polynomial, Newton's square root.
    fn float_function(&mut self) {
        let id = self.id();
        match self.rng.below(3) {
            0 => {
                let name = format!("fabs{id}");
                self.line(&format!("float {name}(float x) {{"));
                self.line("  if (x < 0.0) return -x;");
                self.line("  return x;");
                self.line("}");
                self.push_func(
                    name,
                    Some(Ty::Float),
                    Rg::new(0.0, 1e4),
                    vec![Self::p("x", Ty::Float, Rg::new(-1e4, 1e4))],
                    2.0,
                );
            }
            1 => {
                let name = format!("poly{id}");
                let cs: Vec<f64> = (0..self.rng.range(2, 5))
                    .map(|_| self.rng.range(-8, 8) as f64 * 0.125)
                    .collect();
                self.line(&format!("float {name}(float x) {{"));
                let mut e = flit(cs[0]);
                for c in &cs[1..] {
                    e = format!("({e}) * x + {}", flit(*c));
                }
                self.line(&format!("  return {e};"));
                self.line("}");
                // |x| <= 2: each step at most doubles and adds 1.
                let mut b = 1.0f64;
                for _ in 1..cs.len() {
                    b = b * 2.0 + 1.0;
                }
                self.push_func(
                    name,
                    Some(Ty::Float),
                    Rg::new(-b, b),
                    vec![Self::p("x", Ty::Float, Rg::new(-2.0, 2.0))],
                    3.0,
                );
            }
            _ => {
                let name = format!("sqrt{id}");
                let iters = self.rng.range(6, 12);
                self.line(&format!("float {name}(float x) {{"));
                self.line("  float r = x / 2.0 + 0.5;");
                self.line("  int i = 0;");
                self.line(&format!("  while (i < {iters}) {{"));
                self.line("    r = (r + x / r) / 2.0;");
                self.line("    i = i + 1;");
                self.line("  }");
                self.line("  return r;");
                self.line("}");
                self.push_func(
                    name,
                    Some(Ty::Float),
                    Rg::new(0.0, 1001.0),
                    vec![Self::p("x", Ty::Float, Rg::new(1.0, 1000.0))],
                    3.0 * iters as f64,
                );
            }
        }
    }

    /// A product or transpose-and-add of small square matrices passed as `int m[][C]`.
    fn matrix_function(&mut self) {
        let id = self.id();
        let name = format!("mat{id}");
        let c = *self.rng.pick(&[8usize, 10, 16, 20, 24, 32]);
        let class = Rg::new(-9999.0, 9999.0);
        let mut ps = Vec::new();
        for n in ["x", "y", "z"] {
            let mut p = Self::p(n, Ty::Int, class);
            p.dims = vec![c, c];
            ps.push(p);
        }
        let sig = Self::signature(&name, None, &ps);
        self.line(&sig);
        let product = self.rng.chance(2, 3);
        self.line("  int i = 0;");
        self.line(&format!("  while (i < {c}) {{"));
        self.line("    int j = 0;");
        self.line(&format!("    while (j < {c}) {{"));
        if product {
            self.line("      int s = 0;");
            self.line("      int k = 0;");
            self.line(&format!("      while (k < {c}) {{"));
            self.line("        s = s + x[i][k] * y[k][j] % 100;");
            self.line("        k = k + 1;");
            self.line("      }");
            self.line("      z[i][j] = s % 10000;");
        } else {
            self.line("      z[i][j] = (x[i][j] + y[j][i]) / 2;");
        }
        self.line("      j = j + 1;");
        self.line("    }");
        self.line("    i = i + 1;");
        self.line("  }");
        self.line("}");
        let cost = if product {
            (c * c * c) as f64
        } else {
            (c * c) as f64
        } + 2.0;
        self.push_func(name, None, Rg::c(0.0), ps, cost);
    }

    // ---- main ----

    fn main_function(&mut self) {
        self.line("int main() {");
        // Executed statements in all (a statement is a few instructions): 10^5.8..10^6.8.
        let total = 10f64.powf(5.8 + self.rng.below(1000) as f64 / 1000.0);
        self.begin_function(&[], false, total);
        // Sizes and seeds from stdin: opaque to both compilers.
        let n_inputs = self.rng.range(1, 3);
        for k in 0..n_inputs {
            let id = self.id();
            let name = format!("n{id}");
            let v = if k == 0 {
                self.rng.range(1, 65535)
            } else {
                self.rng.range(1, 1000)
            };
            self.input.push(v.to_string());
            self.line(&format!("int {name} = getint();"));
            self.declare(Var {
                name,
                ty: Ty::Int,
                rg: Rg::c(v as f64),
                dims: Vec::new(),
                kind: Kind::Counter,
                global: false,
            });
        }
        for _ in 0..self.rng.range(0, 2) {
            self.local_array();
        }
        // Fill every writable array from a pseudo-random sequence seeded from stdin.
        let seed_var = self
            .visible()
            .find(|v| v.kind == Kind::Counter && v.dims.is_empty())
            .map(|v| v.name.clone())
            .unwrap_or_else(|| "1".into());
        let s = format!("seed{}", self.id());
        self.line(&format!("int {s} = {seed_var} % 65536;"));
        let arrays: Vec<Var> = self
            .visible()
            .filter(|v| !v.dims.is_empty() && v.kind == Kind::Var)
            .cloned()
            .collect();
        for a in &arrays {
            if self.rng.chance(4, 5) {
                self.fill(a, &s);
            }
        }
        self.declare(Var {
            name: s,
            ty: Ty::Int,
            rg: Rg::new(0.0, 65535.0),
            dims: Vec::new(),
            kind: Kind::Var,
            global: false,
        });
        let mut accs = Vec::new();
        for _ in 0..self.rng.range(2, 4) {
            let ty = if self.rng.chance(3, 4) {
                Ty::Int
            } else {
                Ty::Float
            };
            accs.push(self.accumulator_wrapping(ty));
        }
        // The rounds: the body is written first, with the costs of one round, then repeated as
        // often as the program's size asks.
        let r = format!("round{}", self.id());
        self.line(&format!("int {r} = 0;"));
        self.scopes.push(Vec::new());
        self.counter(&r, Rg::new(0.0, MAX_ROUNDS - 1.0));
        self.loops.push(LoopCx {
            advance: Some(format!("{r} = {r} + 1;")),
        });
        let outer = std::mem::take(&mut self.out);
        self.indent += 1;
        self.cost = 0.0;
        self.budget = 10f64.powf(4.0 + self.rng.below(2000) as f64 / 1000.0);
        self.print_scale = MAX_ROUNDS;
        let kernels = self.rng.range(3, 7);
        for k in 0..kernels {
            let share = self.left() / (kernels - k) as f64;
            let saved = self.budget;
            self.budget = self.cost + share;
            self.kernel();
            self.budget = saved;
        }
        let body = std::mem::replace(&mut self.out, outer);
        self.indent -= 1;
        let rounds = (total / self.cost.max(1.0)).clamp(1.0, MAX_ROUNDS) as u64;
        self.line(&format!("while ({r} < {rounds}) {{"));
        self.out.push_str(&body);
        self.loops.pop();
        self.line(&format!("  {r} = {r} + 1;"));
        self.line("}");
        self.scopes.pop();
        self.checksums(&accs);
        self.line("return 0;");
        self.indent = 0;
        self.line("}");
    }

    fn local_array(&mut self) {
        let id = self.id();
        let ty = if self.rng.chance(3, 4) {
            Ty::Int
        } else {
            Ty::Float
        };
        let two_d = self.rng.chance(1, 3);
        let dims = self.array_dims(two_d, true);
        let rg = match ty {
            Ty::Int => self.int_class(),
            Ty::Float => Rg::new(FLOAT_CLASS.0, FLOAT_CLASS.1),
        };
        let v = Var {
            name: format!("{}{id}", if ty == Ty::Int { "la" } else { "lf" }),
            ty,
            rg,
            dims,
            kind: Kind::Var,
            global: false,
        };
        // A local array is zero-initialised with `= {}` or filled below.
        let text = Self::array_decl_text(&v, "") + " = {};";
        self.line(&text);
        self.declare(v);
    }

    /// A loop storing a pseudo-random sequence (a linear congruential generator) into `a`.
    fn fill(&mut self, a: &Var, seed: &str) {
        let total: usize = a.dims.iter().product();
        self.cost += total as f64 * 2.0;
        let idx: Vec<String> = (0..a.dims.len())
            .map(|_| format!("i{}", self.id()))
            .collect();
        let mul = *self.rng.pick(&[1103, 75, 137, 521]);
        let add = *self.rng.pick(&[12345, 74, 7, 1013]);
        for (k, i) in idx.iter().enumerate() {
            self.line(&format!("int {i} = 0;"));
            self.line(&format!("while ({i} < {}) {{", a.dims[k]));
            self.indent += 1;
        }
        self.line(&format!("{seed} = ({seed} * {mul} + {add}) % 65536;"));
        let elem: String = idx.iter().map(|i| format!("[{i}]")).collect();
        let value = match a.ty {
            Ty::Int => {
                let m = a.rg.hi - a.rg.lo + 1.0;
                if m > 65536.0 {
                    format!("{seed} * 15 + {}", lit(a.rg.lo.max(0.0)))
                } else if a.rg.lo < 0.0 {
                    format!("{seed} % {} - {}", lit(m), lit(-a.rg.lo))
                } else {
                    format!("{seed} % {}", lit(m))
                }
            }
            Ty::Float => format!(
                "({seed} % 2000 - 1000) / {}",
                flit(*self.rng.pick(&[1.0, 4.0, 8.0, 16.0]))
            ),
        };
        self.line(&format!("{}{elem} = {value};", a.name));
        for i in idx.iter().rev() {
            self.line(&format!("{i} = {i} + 1;"));
            self.indent -= 1;
            self.line("}");
        }
    }

    /// Checksums of the accumulators and of every writable int array, and a few elements.
    fn checksums(&mut self, accs: &[String]) {
        for a in accs {
            let v = self.visible().find(|v| &v.name == a).cloned();
            if let Some(v) = v {
                match v.ty {
                    Ty::Int => self.line(&format!("putint({a});")),
                    Ty::Float => self.line(&format!("putfloat({a});")),
                }
                self.line("putch(10);");
            }
        }
        let arrays: Vec<Var> = self
            .visible()
            .filter(|v| !v.dims.is_empty() && v.kind == Kind::Var)
            .cloned()
            .collect();
        let cs = format!("cs{}", self.id());
        self.line(&format!("int {cs} = 0;"));
        for a in &arrays {
            let idx: Vec<String> = (0..a.dims.len())
                .map(|_| format!("i{}", self.id()))
                .collect();
            for (k, i) in idx.iter().enumerate() {
                self.line(&format!("int {i} = 0;"));
                self.line(&format!("while ({i} < {}) {{", a.dims[k]));
                self.indent += 1;
            }
            let elem: String = idx.iter().map(|i| format!("[{i}]")).collect();
            match a.ty {
                Ty::Int => self.line(&format!(
                    "{cs} = ({cs} * 31 + {}{elem} % 1000) % 1000007;",
                    a.name
                )),
                Ty::Float => {
                    let t = format!("q{}", self.id());
                    self.line(&format!("int {t} = {}{elem} * 4.0;", a.name));
                    self.line(&format!("{cs} = ({cs} * 31 + {t}) % 1000007;"));
                }
            }
            for i in idx.iter().rev() {
                self.line(&format!("{i} = {i} + 1;"));
                self.indent -= 1;
                self.line("}");
            }
            if a.dims.len() == 1 {
                let n = a.dims[0].min(10);
                let f = if a.ty == Ty::Int {
                    "putarray"
                } else {
                    "putfarray"
                };
                self.line(&format!("{f}({n}, {});", a.name));
            }
        }
        self.line(&format!("putint({cs});"));
        self.line("putch(10);");
    }

    // ---- variables ----

    fn counter(&mut self, name: &str, rg: Rg) {
        self.declare(Var {
            name: name.into(),
            ty: Ty::Int,
            rg,
            dims: Vec::new(),
            kind: Kind::Counter,
            global: false,
        });
    }

    /// An accumulator with a growth budget (`s = s + e` without reduction while it lasts).
    fn accumulator(&mut self, ty: Ty) -> String {
        let id = self.id();
        let name = format!("{}{id}", if ty == Ty::Int { "s" } else { "fs" });
        let (bound, lo) = match ty {
            Ty::Int => (*self.rng.pick(&[1_000_006.0, 1e8, 2e9]), -1.0),
            Ty::Float => (1e4, -1.0),
        };
        let rg = Rg::new(lo * bound, bound);
        match ty {
            Ty::Int => self.line(&format!("int {name} = 0;")),
            Ty::Float => self.line(&format!("float {name} = 0.0;")),
        }
        let budget = bound / 2.0;
        self.accs.push(Acc {
            name: name.clone(),
            up_left: budget,
            down_left: budget,
            decl_mult: self.mult,
        });
        self.declare(Var {
            name: name.clone(),
            ty,
            rg,
            dims: Vec::new(),
            kind: Kind::Accum,
            global: false,
        });
        name
    }

    /// An accumulator in main's outer scope, kept in range by reduction.
    fn accumulator_wrapping(&mut self, ty: Ty) -> String {
        let id = self.id();
        let name = format!("{}{id}", if ty == Ty::Int { "sum" } else { "fsum" });
        let rg = match ty {
            Ty::Int => Rg::new(-1_000_006.0, 1_000_006.0),
            Ty::Float => Rg::new(-1e4, 1e4),
        };
        match ty {
            Ty::Int => self.line(&format!("int {name} = 0;")),
            Ty::Float => self.line(&format!("float {name} = 0.0;")),
        }
        self.declare(Var {
            name: name.clone(),
            ty,
            rg,
            dims: Vec::new(),
            kind: Kind::Var,
            global: false,
        });
        name
    }

    fn local_decl(&mut self, ty: Ty) {
        let id = self.id();
        let (name, e) = match ty {
            Ty::Int => (format!("t{id}"), self.iexpr(2)),
            Ty::Float => (format!("x{id}"), self.fexpr(2)),
        };
        // Sometimes an int from a float: truncated on the way in, so it must fit.
        let converted = if ty == Ty::Int && self.rng.chance(1, 6) {
            let f = self.fexpr(2);
            (f.rg.mag() < 1e9).then_some(f)
        } else {
            None
        };
        let (text, rg) = if let Some(f) = converted {
            let rg = Rg::new(f.rg.lo.floor() - 1.0, f.rg.hi.ceil() + 1.0);
            (f.text, rg)
        } else if ty == Ty::Int && e.rg.mag() > 1e9 {
            let r = Rg::new(-1_000_006.0, 1_000_006.0);
            (self.fit(e, r), r)
        } else if ty == Ty::Float && e.rg.mag() > 1e4 {
            let r = Rg::new(-1e4, 1e4);
            (self.fit(e, r), r)
        } else {
            (e.text, e.rg)
        };
        self.line(&format!("{} {name} = {text};", ty.kw()));
        self.stmt_cost();
        let rg = normal_range(ty, rg);
        self.declare(Var {
            name,
            ty,
            rg,
            dims: Vec::new(),
            kind: Kind::Var,
            global: false,
        });
    }

    /// `e` as a value in `to` (an int range containing 0, or a float range symmetric around 0):
    /// reduced with `%` or scaled by a power of two when it might not fit.
    fn fit(&mut self, e: E, to: Rg) -> String {
        if e.rg.within(to) {
            return e.text;
        }
        if !(to.lo <= 0.0 && to.hi >= 1.0 && (to.lo >= 0.0 || -to.lo >= 1.0)) {
            // Not a range of the shapes above (every declared range is one): a value inside.
            return match e.ty {
                Ty::Int => lit(to.lo.max(0.0).min(to.hi).ceil()),
                Ty::Float => flit(to.lo.max(0.0).min(to.hi).ceil()),
            };
        }
        match e.ty {
            Ty::Int => {
                if to.lo >= 0.0 {
                    let m = to.hi + 1.0;
                    if e.rg.lo >= 0.0 {
                        format!("({}) % {}", e.text, lit(m))
                    } else {
                        let (a, b) = (lit(m), lit(m));
                        format!("(({}) % {a} + {b}) % {a}", e.text)
                    }
                } else {
                    let m = to.hi.min(-to.lo) + 1.0;
                    format!("({}) % {}", e.text, lit(m))
                }
            }
            Ty::Float => {
                let bound = to.hi.min(-to.lo);
                let mut k = 2.0;
                while e.rg.mag() / k > bound {
                    k *= 2.0;
                }
                format!("({}) / {}", e.text, flit(k))
            }
        }
    }

    // ---- expressions ----

    fn leaf_vars(&self, ty: Ty) -> Vec<Var> {
        let mut seen: Vec<&str> = Vec::new();
        let mut out = Vec::new();
        for v in self.visible() {
            if seen.contains(&v.name.as_str()) {
                continue;
            }
            seen.push(&v.name);
            if v.ty == ty && self.readable(v) {
                out.push(v.clone());
            }
        }
        out
    }

    fn ilit(&mut self) -> E {
        let v = match self.rng.below(10) {
            0..=5 => self.rng.range(0, 10),
            6 | 7 => self.rng.range(10, 100),
            8 => self.rng.range(100, 1000),
            _ => *self.rng.pick(&[256, 1000, 1024, 4096, 10000, 65536]),
        };
        let text = if v >= 16 && self.rng.chance(1, 12) {
            format!("0x{v:x}")
        } else {
            v.to_string()
        };
        E {
            text,
            ty: Ty::Int,
            rg: Rg::c(v as f64),
        }
    }

    fn fleaf_lit(&mut self) -> E {
        let v = self.rng.range(1, 32) as f64 * 0.125;
        E {
            text: flit(v),
            ty: Ty::Float,
            rg: Rg::c(v),
        }
    }

    /// A variable, array element or literal of `ty`.
    fn leaf(&mut self, ty: Ty) -> E {
        let vars = self.leaf_vars(ty);
        let scalars: Vec<&Var> = vars.iter().filter(|v| v.dims.is_empty()).collect();
        let arrays: Vec<&Var> = vars.iter().filter(|v| !v.dims.is_empty()).collect();
        let w = [
            2,
            if scalars.is_empty() { 0 } else { 6 },
            if arrays.is_empty() { 0 } else { 5 },
        ];
        match self.rng.weighted(&w) {
            1 => {
                // Recent declarations first: a temporary is usually read soon after.
                let v = if self.rng.chance(1, 2) {
                    (*self.rng.pick(&scalars[..scalars.len().min(3)])).clone()
                } else {
                    (*self.rng.pick(&scalars)).clone()
                };
                E {
                    text: v.name,
                    ty,
                    rg: v.rg,
                }
            }
            2 => {
                let v = (*self.rng.pick(&arrays)).clone();
                let text = self.element(&v);
                E { text, ty, rg: v.rg }
            }
            _ => match ty {
                Ty::Int => self.ilit(),
                Ty::Float => self.fleaf_lit(),
            },
        }
    }

    /// `v[i][j]...` with in-bounds indices.
    fn element(&mut self, v: &Var) -> String {
        let mut text = v.name.clone();
        for &d in &v.dims {
            let i = self.index(d);
            let _ = write!(text, "[{i}]");
        }
        text
    }

    /// An index expression in `0..d`: a counter (perhaps shifted, mirrored or strided), a
    /// reduced expression, or a literal.
    fn index(&mut self, d: usize) -> String {
        let full = Rg::new(0.0, d as f64 - 1.0);
        let ints: Vec<Var> = self
            .leaf_vars(Ty::Int)
            .into_iter()
            .filter(|v| v.dims.is_empty() && v.rg.lo >= -2.0 && v.rg.hi <= d as f64 + 1.0)
            .collect();
        let counters: Vec<Var> = ints
            .iter()
            .filter(|v| v.kind == Kind::Counter)
            .cloned()
            .collect();
        let pool = if !counters.is_empty() && self.rng.chance(4, 5) {
            counters
        } else {
            ints
        };
        if !pool.is_empty() && self.rng.chance(7, 8) {
            // Innermost counters first: they are the ones a sweep uses.
            let v = if self.rng.chance(2, 3) {
                pool[0].clone()
            } else {
                self.rng.pick(&pool).clone()
            };
            let mut forms = vec![(v.name.clone(), v.rg)];
            for k in 1..=2 {
                let kf = k as f64;
                forms.push((format!("{} + {k}", v.name), v.rg.add(Rg::c(kf))));
                forms.push((format!("{} - {k}", v.name), v.rg.sub(Rg::c(kf))));
            }
            forms.push((
                format!("{} - {}", d - 1, v.name),
                Rg::c(d as f64 - 1.0).sub(v.rg),
            ));
            forms.push((format!("{} * 2", v.name), v.rg.mul(Rg::c(2.0))));
            forms.push((
                format!("{} / 2", v.name),
                Rg::new((v.rg.lo / 2.0).trunc(), (v.rg.hi / 2.0).trunc()),
            ));
            let ok: Vec<(String, Rg)> = forms.into_iter().filter(|f| f.1.within(full)).collect();
            if !ok.is_empty() {
                // The plain counter most often.
                if self.rng.chance(3, 5) && ok[0].0 == v.name {
                    return ok[0].0.clone();
                }
                return self.rng.pick(&ok).0.clone();
            }
        }
        if d > 1 && self.rng.chance(1, 2) {
            let e = self.iexpr(1);
            if e.rg.lo >= 0.0 {
                if e.rg.within(full) {
                    return e.text;
                }
                return format!("({}) % {d}", e.text);
            }
        }
        self.rng.below(d as u64).to_string()
    }

    fn int_ok(rg: Rg) -> bool {
        rg.mag() <= INT_LIMIT
    }

    /// `e` reduced to magnitude below `m` when it may be larger.
    fn reduce(e: E, m: f64) -> E {
        if e.rg.mag() < m {
            return e;
        }
        E {
            text: format!("{} % {}", paren(&e.text), lit(m)),
            ty: Ty::Int,
            rg: e.rg.irem(Rg::c(m)),
        }
    }

    fn iexpr(&mut self, depth: u32) -> E {
        if depth == 0 || self.rng.chance(1, 4) {
            if self.rng.chance(1, 10) {
                if let Some(e) = self.call_expr(Ty::Int) {
                    return e;
                }
            }
            return self.leaf(Ty::Int);
        }
        let d = depth - 1;
        match self.rng.weighted(&[10, 7, 6, 4, 4, 2, 2]) {
            0 | 1 => {
                let a = self.iexpr(d);
                let b = self.iexpr(d);
                let plus = self.rng.chance(3, 5);
                let mut a = a;
                let mut b = b;
                loop {
                    let rg = if plus { a.rg.add(b.rg) } else { a.rg.sub(b.rg) };
                    if Self::int_ok(rg) {
                        let op = if plus { "+" } else { "-" };
                        return E {
                            text: format!("{} {op} {}", a.text, paren_add(&b.text, plus)),
                            ty: Ty::Int,
                            rg,
                        };
                    }
                    if a.rg.mag() >= b.rg.mag() {
                        a = Self::reduce(a, 1_000_007.0);
                    } else {
                        b = Self::reduce(b, 1_000_007.0);
                    }
                }
            }
            2 => {
                let mut a = self.iexpr(d);
                let mut b = if self.rng.chance(1, 2) {
                    self.ilit()
                } else {
                    self.iexpr(d)
                };
                loop {
                    let rg = a.rg.mul(b.rg);
                    if Self::int_ok(rg) {
                        return E {
                            text: format!("{} * {}", paren(&a.text), paren(&b.text)),
                            ty: Ty::Int,
                            rg,
                        };
                    }
                    if a.rg.mag() >= b.rg.mag() {
                        a = Self::reduce(
                            a,
                            (INT_LIMIT / b.rg.mag().max(1.0))
                                .clamp(2.0, 46340.0)
                                .floor(),
                        );
                    } else {
                        b = Self::reduce(
                            b,
                            (INT_LIMIT / a.rg.mag().max(1.0))
                                .clamp(2.0, 46340.0)
                                .floor(),
                        );
                    }
                }
            }
            3 => {
                // By a constant.
                let a = self.iexpr(d);
                let k = *self.rng.pick(&[
                    2.0, 2.0, 3.0, 4.0, 5.0, 7.0, 8.0, 10.0, 16.0, 100.0, 1000.0, 1024.0, -2.0,
                    -3.0,
                ]);
                let rem = self.rng.chance(1, 2);
                let (op, rg) = if rem {
                    ("%", a.rg.irem(Rg::c(k)))
                } else {
                    ("/", a.rg.idiv(Rg::c(k)))
                };
                E {
                    text: format!("{} {op} {}", paren(&a.text), lit(k)),
                    ty: Ty::Int,
                    rg,
                }
            }
            4 => {
                // By a value that cannot be 0 or -1.
                let a = self.iexpr(d);
                let b = self.divisor();
                let rem = self.rng.chance(1, 2);
                let (op, rg) = if rem {
                    ("%", a.rg.irem(b.rg))
                } else {
                    ("/", a.rg.idiv(b.rg))
                };
                E {
                    text: format!("{} {op} {}", paren(&a.text), paren(&b.text)),
                    ty: Ty::Int,
                    rg,
                }
            }
            5 => {
                let a = self.iexpr(d);
                E {
                    text: format!("-{}", paren(&a.text)),
                    ty: Ty::Int,
                    rg: a.rg.neg(),
                }
            }
            _ => self
                .call_expr(Ty::Int)
                .unwrap_or_else(|| self.leaf(Ty::Int)),
        }
    }

    /// A divisor: a positive constant, a counter plus a positive constant, or a value whose range
    /// excludes 0 and -1.
    fn divisor(&mut self) -> E {
        let ints: Vec<Var> = self
            .leaf_vars(Ty::Int)
            .into_iter()
            .filter(|v| v.dims.is_empty() && v.rg.lo >= 0.0 && v.rg.hi < 1e9)
            .collect();
        if !ints.is_empty() && self.rng.chance(2, 3) {
            let v = self.rng.pick(&ints).clone();
            if v.rg.lo >= 1.0 && self.rng.chance(1, 2) {
                return E {
                    text: v.name,
                    ty: Ty::Int,
                    rg: v.rg,
                };
            }
            let k = self.rng.range(1, 3) as f64;
            return E {
                text: format!("{} + {}", v.name, lit(k)),
                ty: Ty::Int,
                rg: v.rg.add(Rg::c(k)),
            };
        }
        let e = self.iexpr(1);
        let k = self.rng.range(2, 20) as f64;
        let e = Self::reduce(e, 1e9);
        // (e % k + k + 1) lies in 2..=2k.
        E {
            text: format!("{} % {} + {}", paren(&e.text), lit(k), lit(k + 1.0)),
            ty: Ty::Int,
            rg: Rg::new(2.0, 2.0 * k),
        }
    }

    fn fexpr(&mut self, depth: u32) -> E {
        if depth == 0 || self.rng.chance(1, 4) {
            if self.rng.chance(1, 10) {
                if let Some(e) = self.call_expr(Ty::Float) {
                    return e;
                }
            }
            // Ints convert implicitly in float arithmetic.
            if self.rng.chance(1, 6) {
                let e = self.leaf(Ty::Int);
                return E { ty: Ty::Float, ..e };
            }
            return self.leaf(Ty::Float);
        }
        let d = depth - 1;
        let e = match self.rng.weighted(&[10, 6, 4, 3, 1, 2]) {
            0 => {
                let a = self.fexpr(d);
                let b = self.fexpr(d);
                let plus = self.rng.chance(3, 5);
                let rg = if plus { a.rg.add(b.rg) } else { a.rg.sub(b.rg) };
                E {
                    text: format!(
                        "{} {} {}",
                        a.text,
                        if plus { "+" } else { "-" },
                        paren_add(&b.text, plus)
                    ),
                    ty: Ty::Float,
                    rg: rg.loose(),
                }
            }
            1 => {
                let a = self.fexpr(d);
                let b = if self.rng.chance(1, 2) {
                    self.fleaf_lit()
                } else {
                    self.fexpr(d)
                };
                let rg = a.rg.mul(b.rg);
                if rg.mag() > FLOAT_LIMIT {
                    let b = self.fleaf_lit();
                    let a = if a.rg.mag() * 4.0 > FLOAT_LIMIT {
                        self.fleaf_lit()
                    } else {
                        a
                    };
                    E {
                        rg: a.rg.mul(b.rg).loose(),
                        text: format!("{} * {}", paren(&a.text), paren(&b.text)),
                        ty: Ty::Float,
                    }
                } else {
                    E {
                        text: format!("{} * {}", paren(&a.text), paren(&b.text)),
                        ty: Ty::Float,
                        rg: rg.loose(),
                    }
                }
            }
            2 => {
                let a = self.fexpr(d);
                let k = *self.rng.pick(&[2.0, 3.0, 4.0, 10.0, 0.5, 1.5]);
                E {
                    text: format!("{} / {}", paren(&a.text), flit(k)),
                    ty: Ty::Float,
                    rg: Rg::new(a.rg.lo / k, a.rg.hi / k).loose(),
                }
            }
            3 => {
                // By a positive int value (at least 1), converted.
                let a = self.fexpr(d);
                let b = self.divisor();
                let rg = if b.rg.lo >= 1.0 {
                    Rg::new(a.rg.lo.min(0.0), a.rg.hi.max(0.0)).loose()
                } else {
                    a.rg.loose()
                };
                E {
                    text: format!("{} / {}", paren(&a.text), paren(&b.text)),
                    ty: Ty::Float,
                    rg,
                }
            }
            4 => {
                let a = self.fexpr(d);
                E {
                    text: format!("-{}", paren(&a.text)),
                    ty: Ty::Float,
                    rg: a.rg.neg(),
                }
            }
            _ => self
                .call_expr(Ty::Float)
                .unwrap_or_else(|| self.leaf(Ty::Float)),
        };
        if e.rg.mag() > FLOAT_LIMIT {
            return self.leaf(Ty::Float);
        }
        e
    }

    /// A call of a helper returning `ty`, if one fits the budget and its arguments can be found.
    fn call_expr(&mut self, ty: Ty) -> Option<E> {
        let cands: Vec<usize> = (0..self.funcs.len())
            .filter(|&i| {
                let f = &self.funcs[i];
                f.ret == Some(ty) && f.cost * self.mult <= self.left() && self.can_supply(f)
            })
            .collect();
        if cands.is_empty() {
            return None;
        }
        let f = self.funcs[*self.rng.pick(&cands)].clone();
        self.cost += f.cost * self.mult;
        let args = self.args(&f)?;
        Some(E {
            text: format!("{}({})", f.name, args.join(", ")),
            ty,
            rg: f.ret_rg,
        })
    }

    fn array_cands(&self, p: &Param) -> Vec<(Var, bool)> {
        // (array, pass a row of it)
        let mut out = Vec::new();
        let mut seen: Vec<&str> = Vec::new();
        for v in self.visible() {
            if seen.contains(&v.name.as_str()) {
                continue;
            }
            seen.push(&v.name);
            if v.kind != Kind::Var || v.ty != p.ty || v.rg != p.rg || !self.readable(v) {
                continue;
            }
            // A value-returning helper only reads; a pure caller may not hand its globals on.
            if v.dims.len() == p.dims.len() && v.dims[0] >= p.dims[0] && v.dims[1..] == p.dims[1..]
            {
                out.push((v.clone(), false));
            } else if v.dims.len() == 2 && p.dims.len() == 1 && v.dims[1] >= p.dims[0] {
                out.push((v.clone(), true));
            }
        }
        out
    }

    fn can_supply(&self, f: &Func) -> bool {
        f.params.iter().all(|p| {
            if p.dims.is_empty() {
                return true;
            }
            // A void helper writes its arrays: the caller must be allowed to as well.
            self.array_cands(p)
                .iter()
                .any(|(v, _)| f.ret.is_some() || self.writable(v))
        })
    }

    fn args(&mut self, f: &Func) -> Option<Vec<String>> {
        let mut args = Vec::new();
        let mut len_cap = f64::INFINITY;
        for p in &f.params {
            if !p.dims.is_empty() {
                let cands: Vec<(Var, bool)> = self
                    .array_cands(p)
                    .into_iter()
                    .filter(|(v, _)| f.ret.is_some() || self.writable(v))
                    .collect();
                if cands.is_empty() {
                    return None;
                }
                let (v, row) = self.rng.pick(&cands).clone();
                if row {
                    let i = self.index(v.dims[0]);
                    args.push(format!("{}[{i}]", v.name));
                    len_cap = len_cap.min(v.dims[1] as f64);
                } else {
                    args.push(v.name.clone());
                    len_cap = len_cap.min(v.dims[0] as f64);
                }
                continue;
            }
            args.push(self.scalar_arg(p));
        }
        let _ = len_cap;
        Some(args)
    }

    /// An argument for scalar parameter `p`: a literal or variable inside its range, or an
    /// expression reduced into it.
    fn scalar_arg(&mut self, p: &Param) -> String {
        if p.rg.lo == p.rg.hi {
            return lit(p.rg.lo);
        }
        if p.ty == Ty::Float {
            let e = self.fexpr(1);
            if e.rg.within(p.rg) {
                return e.text;
            }
            // Scaled into a band around the middle of the range.
            let mid = (p.rg.lo + p.rg.hi) / 2.0;
            let half = (p.rg.hi - p.rg.lo) / 2.0 * 0.99;
            let t = self.fit(e, Rg::new(-half, half));
            return if mid == 0.0 {
                t
            } else {
                format!("{t} + {}", flit(mid))
            };
        }
        let fitting: Vec<Var> = self
            .leaf_vars(Ty::Int)
            .into_iter()
            .filter(|v| v.dims.is_empty() && v.rg.within(p.rg))
            .collect();
        match self.rng.below(3) {
            0 if !fitting.is_empty() => self.rng.pick(&fitting).name.clone(),
            1 => {
                // The top of a length range most often: `sum(a, 100)`.
                if p.rg.hi <= 1e6 && self.rng.chance(1, 2) {
                    lit(p.rg.hi)
                } else {
                    lit(self.rng.range(p.rg.lo as i64, p.rg.hi.min(1000.0) as i64) as f64)
                }
            }
            _ => {
                let e = self.iexpr(2);
                if e.rg.within(p.rg) {
                    return e.text;
                }
                if p.rg.lo >= 0.0 {
                    let shifted = p.rg.lo;
                    let inner = self.fit(e, Rg::new(0.0, p.rg.hi - shifted));
                    if shifted > 0.0 {
                        format!("{inner} + {}", lit(shifted))
                    } else {
                        inner
                    }
                } else {
                    let m = p.rg.hi.min(-p.rg.lo);
                    self.fit(e, Rg::new(-m, m))
                }
            }
        }
    }

    // ---- conditions ----

    fn cond(&mut self, depth: u32) -> String {
        if depth > 0 && self.rng.chance(1, 3) {
            let a = self.cond(depth - 1);
            let b = self.cond(depth - 1);
            let op = if self.rng.chance(1, 2) { "&&" } else { "||" };
            let wrap = |s: String| {
                if s.contains("||") || s.contains("&&") {
                    format!("({s})")
                } else {
                    s
                }
            };
            return format!("{} {op} {}", wrap(a), wrap(b));
        }
        self.atom()
    }

    fn atom(&mut self) -> String {
        let flags: Vec<String> = self
            .leaf_vars(Ty::Int)
            .into_iter()
            .filter(|v| v.dims.is_empty() && v.rg == Rg::new(0.0, 1.0))
            .map(|v| v.name)
            .collect();
        match self
            .rng
            .weighted(&[10, 3, if flags.is_empty() { 0 } else { 3 }, 2, 1])
        {
            0 => {
                let ty = if self.rng.chance(4, 5) {
                    Ty::Int
                } else {
                    Ty::Float
                };
                let a = match ty {
                    Ty::Int => self.iexpr(2),
                    Ty::Float => self.fexpr(1),
                };
                let b = if self.rng.chance(1, 2) {
                    match ty {
                        Ty::Int => self.ilit(),
                        Ty::Float => self.fleaf_lit(),
                    }
                } else {
                    self.leaf(ty)
                };
                let op = *self.rng.pick(&["<", ">", "<=", ">=", "==", "!="]);
                format!("{} {op} {}", a.text, b.text)
            }
            1 => {
                // Parity and divisibility tests.
                let a = self.leaf(Ty::Int);
                let k = *self.rng.pick(&[2, 2, 3, 4, 5, 7, 10]);
                let op = if self.rng.chance(2, 3) { "==" } else { "!=" };
                format!("{} % {k} {op} 0", paren(&a.text))
            }
            2 => {
                let f = self.rng.pick(&flags).clone();
                if self.rng.chance(1, 2) {
                    format!("!{f}")
                } else {
                    f
                }
            }
            3 => {
                let a = self.iexpr(1);
                let b = self.leaf(Ty::Int);
                let op = *self.rng.pick(&["<", ">", "=="]);
                format!("!({} {op} {})", a.text, b.text)
            }
            _ => {
                // A value as a truth value.
                self.leaf(Ty::Int).text
            }
        }
    }

    // ---- statements ----

    fn stmt(&mut self, depth: u32) {
        if self.cost >= self.budget {
            return;
        }
        let in_loop = !self.loops.is_empty();
        let w = [
            14,                                               // assignment to a scalar
            12,                                               // store to an array element
            if depth < 4 { 8 } else { 0 },                    // if / else
            if depth < 3 && self.mult < 1e5 { 5 } else { 0 }, // inner loop
            if in_loop { 4 } else { 0 },                      // break / continue
            if self.pure_ { 0 } else { 3 },                   // call of a void helper
            3,                                                // declaration
            2,                                                // flag
            if self.mult * self.print_scale < 1000.0 {
                1
            } else {
                0
            }, // output
            if in_loop { 2 } else { 0 },                      // swap
        ];
        match self.rng.weighted(&w) {
            0 => self.assign_scalar(),
            1 => self.assign_elem(),
            2 => self.if_stmt(depth),
            3 => self.inner_loop(depth),
            4 => self.jump(),
            5 => self.call_stmt(),
            6 => {
                let ty = if self.rng.chance(3, 4) {
                    Ty::Int
                } else {
                    Ty::Float
                };
                self.local_decl(ty)
            }
            7 => self.flag_stmt(),
            8 => self.print_stmt(),
            _ => self.swap(),
        }
    }

    /// The range a plain assignment to `v` must land in: for an accumulator, half its range (the
    /// other half is its growth budget, spent by `v = v + e`), so it stays inside.
    fn target(&self, v: &Var) -> Rg {
        if v.kind == Kind::Accum {
            Rg::new(v.rg.lo / 2.0, v.rg.hi / 2.0)
        } else {
            v.rg
        }
    }

    fn scalars_writable(&self) -> Vec<Var> {
        let mut seen: Vec<&str> = Vec::new();
        let mut out = Vec::new();
        for v in self.visible() {
            if seen.contains(&v.name.as_str()) {
                continue;
            }
            seen.push(&v.name);
            if v.dims.is_empty() && self.writable(v) && v.rg != Rg::new(0.0, 1.0) {
                out.push(v.clone());
            }
        }
        out
    }

    fn arrays_writable(&self) -> Vec<Var> {
        let mut seen: Vec<&str> = Vec::new();
        let mut out = Vec::new();
        for v in self.visible() {
            if seen.contains(&v.name.as_str()) {
                continue;
            }
            seen.push(&v.name);
            if !v.dims.is_empty() && self.writable(v) {
                out.push(v.clone());
            }
        }
        out
    }

    fn value(&mut self, ty: Ty, depth: u32) -> E {
        match ty {
            Ty::Int => self.iexpr(depth),
            Ty::Float => self.fexpr(depth),
        }
    }

    fn assign_scalar(&mut self) {
        let vars = self.scalars_writable();
        if vars.is_empty() {
            return self.assign_elem();
        }
        let v = self.rng.pick(&vars).clone();
        self.stmt_cost();
        let target = self.target(&v);
        // An accumulator grows while its budget lasts.
        if v.kind == Kind::Accum && self.rng.chance(2, 3) {
            let e = self.value(v.ty, 2);
            let times = self.mult
                / self
                    .accs
                    .iter()
                    .find(|a| a.name == v.name)
                    .map_or(1.0, |a| a.decl_mult);
            let up = times * e.rg.hi.max(0.0);
            let down = times * (-e.rg.lo).max(0.0);
            if let Some(a) = self.accs.iter_mut().find(|a| a.name == v.name) {
                if up <= a.up_left && down <= a.down_left && e.rg.mag() < 1e9 {
                    a.up_left -= up;
                    a.down_left -= down;
                    let t = paren_add(&e.text, true);
                    return self.line(&format!("{} = {} + {t};", v.name, v.name));
                }
            }
            let sum = match v.ty {
                Ty::Int => {
                    let e = Self::reduce(e, 1e8);
                    E {
                        text: format!("{} + {}", v.name, paren_add(&e.text, true)),
                        ty: Ty::Int,
                        rg: v.rg.add(e.rg),
                    }
                }
                Ty::Float => E {
                    text: format!("{} + {}", v.name, paren_add(&e.text, true)),
                    ty: Ty::Float,
                    rg: v.rg.add(e.rg).loose(),
                },
            };
            let text = self.fit(sum, target);
            return self.line(&format!("{} = {text};", v.name));
        }
        let e = match (v.ty, self.rng.below(4)) {
            // Hash-like and decaying updates of the variable itself.
            (Ty::Int, 0) => {
                let k = self.rng.range(2, 37) as f64;
                let x = Self::reduce(self.iexpr(1), 1e6);
                let me = Self::reduce(
                    E {
                        text: v.name.clone(),
                        ty: Ty::Int,
                        rg: v.rg,
                    },
                    1e7,
                );
                E {
                    text: format!(
                        "{} * {} + {}",
                        paren(&me.text),
                        lit(k),
                        paren_add(&x.text, true)
                    ),
                    ty: Ty::Int,
                    rg: me.rg.mul(Rg::c(k)).add(x.rg),
                }
            }
            (Ty::Float, 0) => {
                let c = *self.rng.pick(&[0.5, 0.25, 0.75, 0.125]);
                let x = self.fexpr(1);
                let x = if x.rg.mag() > v.rg.mag() * (1.0 - c) {
                    let t = self.fit(
                        x,
                        Rg::new(-v.rg.mag() * (1.0 - c) * 0.5, v.rg.mag() * (1.0 - c) * 0.5),
                    );
                    E {
                        text: t,
                        ty: Ty::Float,
                        rg: Rg::new(-v.rg.mag() * (1.0 - c), v.rg.mag() * (1.0 - c)),
                    }
                } else {
                    x
                };
                E {
                    text: format!("{} * {} + {}", v.name, flit(c), paren_add(&x.text, true)),
                    ty: Ty::Float,
                    rg: v.rg.mul(Rg::c(c)).add(x.rg).loose(),
                }
            }
            // Most updates read the old value (a plain overwrite leaves the previous store dead,
            // which ordinary programs seldom do).
            (_, 1 | 2) => {
                let x = self.value(v.ty, 2);
                let me = E {
                    text: v.name.clone(),
                    ty: v.ty,
                    rg: v.rg,
                };
                let x = match v.ty {
                    Ty::Int => Self::reduce(x, 1e8),
                    Ty::Float => x,
                };
                let plus = self.rng.chance(2, 3);
                let rg = if plus {
                    me.rg.add(x.rg)
                } else {
                    me.rg.sub(x.rg)
                };
                E {
                    text: format!(
                        "{} {} {}",
                        me.text,
                        if plus { "+" } else { "-" },
                        paren_add(&x.text, plus)
                    ),
                    ty: v.ty,
                    rg: if v.ty == Ty::Float { rg.loose() } else { rg },
                }
            }
            _ => self.value(v.ty, 3),
        };
        let text = self.fit(e, target);
        self.line(&format!("{} = {text};", v.name));
    }

    fn assign_elem(&mut self) {
        let arrays = self.arrays_writable();
        if arrays.is_empty() {
            return;
        }
        let a = self.rng.pick(&arrays).clone();
        self.stmt_cost();
        let target = self.element(&a);
        let e = match self.rng.below(3) {
            // A stencil or running update of the same array.
            0 => {
                let x = self.element(&a);
                let y = self.value(a.ty, 1);
                match a.ty {
                    Ty::Int => {
                        let y = Self::reduce(y, 1e8);
                        E {
                            text: format!("{x} + {}", paren_add(&y.text, true)),
                            ty: Ty::Int,
                            rg: a.rg.add(y.rg),
                        }
                    }
                    Ty::Float => E {
                        text: format!("({x} + {}) / 2.0", paren_add(&y.text, true)),
                        ty: Ty::Float,
                        rg: Rg::new((a.rg.lo + y.rg.lo) / 2.0, (a.rg.hi + y.rg.hi) / 2.0).loose(),
                    },
                }
            }
            _ => self.value(a.ty, 2),
        };
        let text = self.fit(e, a.rg);
        self.line(&format!("{target} = {text};"));
    }

    fn if_stmt(&mut self, depth: u32) {
        self.stmt_cost();
        let c = self.cond(2);
        self.open(&format!("if ({c}) {{"));
        for _ in 0..self.rng.range(1, 3) {
            self.stmt(depth + 1);
        }
        self.scopes.pop();
        self.indent -= 1;
        if self.rng.chance(1, 2) {
            if self.rng.chance(1, 3) && depth < 3 {
                self.line("} else");
                return self.if_stmt(depth + 1);
            }
            self.line("} else {");
            self.indent += 1;
            self.scopes.push(Vec::new());
            for _ in 0..self.rng.range(1, 2) {
                self.stmt(depth + 1);
            }
            self.scopes.pop();
            self.indent -= 1;
        }
        self.line("}");
    }

    fn flag_stmt(&mut self) {
        let id = self.id();
        let f = format!("flag{id}");
        self.stmt_cost();
        let c = self.cond(2);
        if self.rng.chance(1, 2) {
            self.line(&format!("int {f} = 0;"));
            self.line(&format!("if ({c}) {f} = 1;"));
        } else {
            self.line(&format!("int {f} = 1;"));
            self.line(&format!("if ({c}) {f} = 0;"));
        }
        self.declare(Var {
            name: f,
            ty: Ty::Int,
            rg: Rg::new(0.0, 1.0),
            dims: Vec::new(),
            kind: Kind::Var,
            global: false,
        });
    }

    /// A loop inside a body: counted up or down, or a `while (1)` left by a `break` at its top.
    fn inner_loop(&mut self, depth: u32) {
        let dims: Vec<usize> = self
            .visible()
            .flat_map(|v| v.dims.iter().cloned())
            .filter(|&d| d > 1)
            .collect();
        let want = if !dims.is_empty() && self.rng.chance(3, 4) {
            *self.rng.pick(&dims)
        } else {
            self.rng.range(2, 20) as usize
        };
        let n = self.trips(want, 4.0);
        if n < 2 {
            return self.assign_scalar();
        }
        self.stmt_cost();
        let i = format!("j{}", self.id());
        let shape = self.rng.below(4);
        // A triangular bound: an enclosing counter smaller than n.
        let tri: Vec<Var> = self
            .visible()
            .filter(|v| {
                v.kind == Kind::Counter
                    && v.dims.is_empty()
                    && v.rg.lo >= 0.0
                    && v.rg.hi < n as f64
                    && v.rg.hi >= 1.0
            })
            .cloned()
            .collect();
        let (rg, advance_at_end) = match shape {
            0 => {
                self.line(&format!("int {i} = {};", n - 1));
                self.open(&format!("while ({i} >= 0) {{"));
                (Rg::new(0.0, n as f64 - 1.0), false)
            }
            1 => {
                self.line(&format!("int {i} = 0;"));
                self.open("while (1) {");
                self.line(&format!("if ({i} >= {n}) break;"));
                (Rg::new(0.0, n as f64 - 1.0), true)
            }
            2 if !tri.is_empty() => {
                let t = self.rng.pick(&tri).clone();
                self.line(&format!("int {i} = 0;"));
                self.open(&format!("while ({i} <= {}) {{", t.name));
                (Rg::new(0.0, t.rg.hi), true)
            }
            _ => {
                self.line(&format!("int {i} = 0;"));
                let extra = if self.rng.chance(1, 5) {
                    format!(" && {}", self.atom())
                } else {
                    String::new()
                };
                self.open(&format!("while ({i} < {n}{extra}) {{"));
                (Rg::new(0.0, n as f64 - 1.0), true)
            }
        };
        let advance = if advance_at_end {
            format!("{i} = {i} + 1;")
        } else {
            format!("{i} = {i} - 1;")
        };
        self.counter(&i, rg);
        self.loops.push(LoopCx {
            advance: Some(advance.clone()),
        });
        let saved = self.mult;
        self.mult *= n as f64;
        for _ in 0..self.rng.range(1, 4) {
            self.stmt(depth + 1);
        }
        self.mult = saved;
        self.loops.pop();
        self.line(&advance);
        self.close();
    }

    fn jump(&mut self) {
        let advance = self.loops.last().and_then(|l| l.advance.clone());
        self.stmt_cost();
        let c = self.cond(1);
        if self.rng.chance(1, 2) {
            self.line(&format!("if ({c}) break;"));
        } else if let Some(a) = advance {
            self.line(&format!("if ({c}) {{"));
            self.line(&format!("  {a}"));
            self.line("  continue;");
            self.line("}");
        } else {
            self.line(&format!("if ({c}) continue;"));
        }
    }

    fn call_stmt(&mut self) {
        let cands: Vec<usize> = (0..self.funcs.len())
            .filter(|&i| {
                let f = &self.funcs[i];
                f.ret.is_none() && f.cost * self.mult <= self.left() && self.can_supply(f)
            })
            .collect();
        if cands.is_empty() {
            return self.assign_scalar();
        }
        let f = self.funcs[*self.rng.pick(&cands)].clone();
        self.cost += f.cost * self.mult;
        if let Some(args) = self.args(&f) {
            self.line(&format!("{}({});", f.name, args.join(", ")));
        }
    }

    fn print_stmt(&mut self) {
        self.stmt_cost();
        if self.rng.chance(2, 3) {
            let e = self.iexpr(2);
            self.line(&format!("putint({});", e.text));
            let c = if self.rng.chance(1, 2) { 32 } else { 10 };
            self.line(&format!("putch({c});"));
        } else {
            let e = self.fexpr(1);
            self.line(&format!("putfloat({});", e.text));
            self.line("putch(10);");
        }
    }

    fn swap(&mut self) {
        let arrays: Vec<Var> = self
            .arrays_writable()
            .into_iter()
            .filter(|a| a.dims.len() == 1)
            .collect();
        if arrays.is_empty() {
            return self.assign_scalar();
        }
        let a = self.rng.pick(&arrays).clone();
        self.stmt_cost();
        let x = self.element(&a);
        let y = self.element(&a);
        let t = format!("tmp{}", self.id());
        let c = self.cond(0);
        self.line(&format!("if ({c}) {{"));
        self.line(&format!("  {} {t} = {x};", a.ty.kw()));
        self.line(&format!("  {x} = {y};"));
        self.line(&format!("  {y} = {t};"));
        self.line("}");
    }

    // ---- kernels: loop nests of main's rounds ----

    fn kernel(&mut self) {
        match self.rng.weighted(&[10, 7, 3, 3, 3, 3, 2, 2, 3, 2, 4, 3]) {
            0 => self.sweep1(),
            1 => self.sweep2(),
            2 => self.zero_copy(),
            3 => self.prefix(),
            4 => self.stencil(),
            5 => self.top_break(),
            6 => self.digits(),
            7 => self.bubble(),
            8 => self.histogram(),
            9 => self.matmul(),
            10 => self.call_loop(),
            _ => self.search(),
        }
    }

    fn pick_array(&mut self, rank: usize, ty: Option<Ty>, writable: bool) -> Option<Var> {
        let mut seen: Vec<&str> = Vec::new();
        let mut c = Vec::new();
        for v in self.visible() {
            if seen.contains(&v.name.as_str()) {
                continue;
            }
            seen.push(&v.name);
            if v.dims.len() == rank
                && ty.is_none_or(|t| v.ty == t)
                && (!writable || self.writable(v))
                && self.readable(v)
            {
                c.push(v.clone());
            }
        }
        if c.is_empty() {
            None
        } else {
            Some(self.rng.pick(&c).clone())
        }
    }

    /// `int i = lo; while (i < hi) { ... }` with `i`'s range declared; returns the counter.
    fn open_counted(&mut self, lo: usize, hi: usize, step: usize) -> String {
        let i = format!("i{}", self.id());
        self.line(&format!("int {i} = {lo};"));
        self.open(&format!("while ({i} < {hi}) {{"));
        self.counter(&i, Rg::new(lo as f64, hi as f64 - 1.0));
        self.loops.push(LoopCx {
            advance: Some(format!("{i} = {i} + {step};")),
        });
        self.mult *= ((hi - lo) / step).max(1) as f64;
        i
    }

    fn close_counted(&mut self, i: &str, trips: usize, step: usize) {
        self.line(&format!("{i} = {i} + {step};"));
        self.loops.pop();
        self.mult /= trips.max(1) as f64;
        self.close();
    }

    fn body(&mut self, lo: i64, hi: i64) {
        for _ in 0..self.rng.range(lo, hi) {
            self.stmt(1);
        }
    }

    /// A sweep over a 1-D array with a random body.
    fn sweep1(&mut self) {
        let Some(a) = self.pick_array(1, None, false) else {
            return self.top_break();
        };
        let d = a.dims[0];
        let n = self.trips(d, 5.0);
        let step = if self.rng.chance(1, 6) { 2 } else { 1 };
        let lo = if self.rng.chance(1, 4) && n > 2 { 1 } else { 0 };
        let hi = n.max(lo + 1);
        self.line("{");
        self.indent += 1;
        self.scopes.push(Vec::new());
        if self.rng.chance(1, 2) {
            self.accumulator(a.ty);
        }
        let i = self.open_counted(lo, hi, step);
        let trips = ((hi - lo) / step).max(1);
        self.body(2, 5);
        self.close_counted(&i, trips, step);
        self.fold_locals();
        self.close();
    }

    /// Adds the block's accumulators into main's outer accumulators, so they are live.
    fn fold_locals(&mut self) {
        let locals: Vec<Var> = self
            .scopes
            .last()
            .map(|s| {
                s.iter()
                    .filter(|v| v.kind == Kind::Accum)
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        let outer: Vec<Var> = self
            .scopes
            .iter()
            .flatten()
            .filter(|v| v.name.starts_with("sum") || v.name.starts_with("fsum"))
            .cloned()
            .collect();
        for l in locals {
            if let Some(o) = outer.iter().find(|o| o.ty == l.ty) {
                let e = E {
                    text: format!("{} + {}", o.name, l.name),
                    ty: l.ty,
                    rg: o.rg.add(l.rg),
                };
                let t = self.fit(e, o.rg);
                self.line(&format!("{} = {t};", o.name));
            }
        }
    }

    /// A row-major (or column-major) sweep over a 2-D array, sometimes triangular.
    fn sweep2(&mut self) {
        let Some(a) = self.pick_array(2, None, false) else {
            return self.sweep1();
        };
        let (r, c) = (a.dims[0], a.dims[1]);
        let rows = self.trips(r, 5.0 * c as f64);
        self.line("{");
        self.indent += 1;
        self.scopes.push(Vec::new());
        if self.rng.chance(1, 2) {
            self.accumulator(a.ty);
        }
        let i = self.open_counted(0, rows, 1);
        let tri = r == c && self.rng.chance(1, 3);
        let j = format!("j{}", self.id());
        self.line(&format!("int {j} = 0;"));
        if tri {
            self.open(&format!("while ({j} <= {i}) {{"));
            self.counter(&j, Rg::new(0.0, rows as f64 - 1.0));
        } else {
            self.open(&format!("while ({j} < {c}) {{"));
            self.counter(&j, Rg::new(0.0, c as f64 - 1.0));
        }
        self.loops.push(LoopCx {
            advance: Some(format!("{j} = {j} + 1;")),
        });
        self.mult *= c as f64;
        self.body(2, 5);
        self.mult /= c as f64;
        self.loops.pop();
        self.line(&format!("{j} = {j} + 1;"));
        self.close();
        if self.rng.chance(1, 3) {
            self.stmt(1);
        }
        self.close_counted(&i, rows, 1);
        self.fold_locals();
        self.close();
    }

    /// Zeroing or copying loops, 1-D or 2-D.
    fn zero_copy(&mut self) {
        let rank = if self.rng.chance(1, 3) { 2 } else { 1 };
        let Some(dst) = self.pick_array(rank, None, true) else {
            return self.sweep1();
        };
        let total: usize = dst.dims.iter().product();
        if total as f64 * self.mult > self.left() {
            return;
        }
        self.cost += total as f64 * self.mult;
        // A source of the same shape and class, if there is one.
        let src = {
            let mut seen: Vec<&str> = Vec::new();
            let mut c = Vec::new();
            for v in self.visible() {
                if seen.contains(&v.name.as_str()) {
                    continue;
                }
                seen.push(&v.name);
                if v.name != dst.name
                    && v.ty == dst.ty
                    && v.dims.len() == dst.dims.len()
                    && v.rg == dst.rg
                    && v.dims.iter().zip(&dst.dims).all(|(a, b)| a >= b)
                    && self.readable(v)
                {
                    c.push(v.clone());
                }
            }
            if c.is_empty() || self.rng.chance(1, 3) {
                None
            } else {
                Some(self.rng.pick(&c).clone())
            }
        };
        let idx: Vec<String> = (0..rank).map(|_| format!("i{}", self.id())).collect();
        for (k, i) in idx.iter().enumerate() {
            self.line(&format!("int {i} = 0;"));
            self.line(&format!("while ({i} < {}) {{", dst.dims[k]));
            self.indent += 1;
        }
        let elem: String = idx.iter().map(|i| format!("[{i}]")).collect();
        let value = match (&src, dst.ty) {
            (Some(s), _) => format!("{}{elem}", s.name),
            (None, Ty::Int) => "0".into(),
            (None, Ty::Float) => "0.0".into(),
        };
        self.line(&format!("{}{elem} = {value};", dst.name));
        for i in idx.iter().rev() {
            self.line(&format!("{i} = {i} + 1;"));
            self.indent -= 1;
            self.line("}");
        }
    }

    /// Prefix sums (reduced) of a 1-D int array in place or into another.
    fn prefix(&mut self) {
        let Some(a) = self.pick_array(1, Some(Ty::Int), true) else {
            return self.sweep1();
        };
        let n = self.trips(a.dims[0], 2.0);
        if n < 2 {
            return;
        }
        self.cost += n as f64 * self.mult * 2.0;
        let i = format!("i{}", self.id());
        let m = a.rg.hi + 1.0;
        self.line(&format!("int {i} = 1;"));
        self.line(&format!("while ({i} < {n}) {{"));
        let sum = format!("{}[{i} - 1] + {}[{i}]", a.name, a.name);
        let e = E {
            text: sum,
            ty: Ty::Int,
            rg: a.rg.add(a.rg),
        };
        let _ = m;
        self.indent += 1;
        let t = self.fit(e, a.rg);
        self.line(&format!("{}[{i}] = {t};", a.name));
        self.line(&format!("{i} = {i} + 1;"));
        self.indent -= 1;
        self.line("}");
    }

    /// A 3-point (1-D) or 5-point (2-D) stencil from one array into another of the same shape.
    fn stencil(&mut self) {
        let rank = if self.rng.chance(1, 2) { 2 } else { 1 };
        let Some(dst) = self.pick_array(rank, None, true) else {
            return self.sweep1();
        };
        let src = self
            .pick_array(rank, Some(dst.ty), false)
            .filter(|s| s.rg == dst.rg && s.dims.iter().zip(&dst.dims).all(|(a, b)| a >= b));
        let Some(src) = src else {
            return self.sweep1();
        };
        let total: usize = dst.dims.iter().product();
        if total as f64 * self.mult * 2.0 > self.left() {
            return;
        }
        self.cost += total as f64 * self.mult * 2.0;
        let idx: Vec<String> = (0..rank).map(|_| format!("i{}", self.id())).collect();
        for (k, i) in idx.iter().enumerate() {
            self.line(&format!("int {i} = 1;"));
            self.line(&format!("while ({i} < {}) {{", dst.dims[k] - 1));
            self.indent += 1;
        }
        let at = |shift: &[i32]| -> String {
            let mut s = src.name.clone();
            for (k, i) in idx.iter().enumerate() {
                match shift[k] {
                    0 => s += &format!("[{i}]"),
                    1 => s += &format!("[{i} + 1]"),
                    _ => s += &format!("[{i} - 1]"),
                }
            }
            s
        };
        let (terms, count) = if rank == 1 {
            (vec![at(&[-1]), at(&[0]), at(&[1])], 3.0)
        } else {
            (
                vec![
                    at(&[0, 0]),
                    at(&[-1, 0]),
                    at(&[1, 0]),
                    at(&[0, -1]),
                    at(&[0, 1]),
                ],
                5.0,
            )
        };
        let elem: String = idx.iter().map(|i| format!("[{i}]")).collect();
        let (text, rg) = match dst.ty {
            Ty::Int => {
                let div = *self.rng.pick(&[count, count, 4.0, 8.0]);
                let rg = Rg::new(
                    (src.rg.lo * count / div).trunc().min(0.0),
                    (src.rg.hi * count / div).trunc().max(0.0),
                );
                (format!("({}) / {}", terms.join(" + "), lit(div)), rg)
            }
            Ty::Float => {
                let w = *self.rng.pick(&[0.25, 0.2, 0.5]);
                let rg = Rg::new(src.rg.lo * count * w, src.rg.hi * count * w).loose();
                (format!("({}) * {}", terms.join(" + "), flit(w)), rg)
            }
        };
        let t = self.fit(
            E {
                text,
                ty: dst.ty,
                rg,
            },
            dst.rg,
        );
        self.line(&format!("{}{elem} = {t};", dst.name));
        for i in idx.iter().rev() {
            self.line(&format!("{i} = {i} + 1;"));
            self.indent -= 1;
            self.line("}");
        }
    }

    /// `while (1)` whose exit is a `break` at its top, with a random body.
    fn top_break(&mut self) {
        let want = self.rng.range(50, 2000) as usize;
        let n = self.trips(want, 5.0);
        let k = format!("k{}", self.id());
        self.line("{");
        self.indent += 1;
        self.scopes.push(Vec::new());
        self.accumulator(Ty::Int);
        self.line(&format!("int {k} = 0;"));
        self.open("while (1) {");
        self.line(&format!("if ({k} >= {n}) break;"));
        self.counter(&k, Rg::new(0.0, n as f64 - 1.0));
        self.loops.push(LoopCx {
            advance: Some(format!("{k} = {k} + 1;")),
        });
        self.mult *= n as f64;
        self.body(2, 4);
        self.mult /= n as f64;
        self.loops.pop();
        self.line(&format!("{k} = {k} + 1;"));
        self.close();
        self.fold_locals();
        self.close();
    }

    /// Digit sums or a bounded Collatz walk of each value in a range.
    fn digits(&mut self) {
        let want = self.rng.range(100, 3000) as usize;
        let n = self.trips(want, 40.0);
        self.cost += n as f64 * self.mult * 40.0;
        let i = format!("i{}", self.id());
        let x = format!("x{}", self.id());
        let acc = self.outer_int_acc();
        self.line(&format!("int {i} = 1;"));
        self.line(&format!("while ({i} <= {n}) {{"));
        self.indent += 1;
        self.line(&format!("int {x} = {i};"));
        if self.rng.chance(1, 2) {
            let base = *self.rng.pick(&[10, 10, 2, 7, 16]);
            let s = format!("d{}", self.id());
            self.line(&format!("int {s} = 0;"));
            self.line(&format!("while ({x} > 0) {{"));
            self.line(&format!("  {s} = {s} + {x} % {base};"));
            self.line(&format!("  {x} = {x} / {base};"));
            self.line("}");
            if let Some(a) = &acc {
                self.line(&format!(
                    "if ({s} % 2 == 0 || {i} % 7 == 3) {a} = ({a} + {s}) % 1000007;"
                ));
                self.line(&format!("else {a} = ({a} - 1) % 1000007;"));
            }
        } else {
            let s = format!("steps{}", self.id());
            self.line(&format!("int {s} = 0;"));
            // Every start below 10^4 peaks below 3 * 10^7 (fits) and settles within 262 steps.
            self.line(&format!("while ({x} != 1 && {s} < 300) {{"));
            self.line(&format!("  if ({x} % 2 == 0) {x} = {x} / 2;"));
            self.line(&format!("  else {x} = 3 * {x} + 1;"));
            self.line(&format!("  {s} = {s} + 1;"));
            self.line("}");
            if let Some(a) = &acc {
                self.line(&format!("{a} = ({a} + {s}) % 1000007;"));
            }
        }
        self.line(&format!("{i} = {i} + 1;"));
        self.indent -= 1;
        self.line("}");
    }

    fn outer_int_acc(&self) -> Option<String> {
        self.scopes
            .iter()
            .flatten()
            .find(|v| v.name.starts_with("sum"))
            .map(|v| v.name.clone())
    }

    /// Bubble sort of a prefix of a 1-D array, with an early exit when no swap happened.
    fn bubble(&mut self) {
        let Some(a) = self.pick_array(1, None, true) else {
            return self.sweep1();
        };
        let want = a.dims[0].min(200);
        let mut n = want;
        while n > 2 && (n * n) as f64 * self.mult * 2.0 > self.left() {
            n /= 2;
        }
        if n < 2 {
            return;
        }
        self.cost += (n * n) as f64 * self.mult * 2.0;
        let (i, j, t, sw) = (
            format!("i{}", self.id()),
            format!("j{}", self.id()),
            format!("t{}", self.id()),
            format!("swapped{}", self.id()),
        );
        let cmp = if self.rng.chance(1, 2) { ">" } else { "<" };
        self.line(&format!("int {i} = 0;"));
        self.line(&format!("while ({i} < {}) {{", n - 1));
        self.indent += 1;
        self.line(&format!("int {sw} = 0;"));
        self.line(&format!("int {j} = 0;"));
        self.line(&format!("while ({j} < {} - {i}) {{", n - 1));
        self.indent += 1;
        self.line(&format!(
            "if ({}[{j}] {cmp} {}[{j} + 1]) {{",
            a.name, a.name
        ));
        self.line(&format!("  {} {t} = {}[{j}];", a.ty.kw(), a.name));
        self.line(&format!("  {}[{j}] = {}[{j} + 1];", a.name, a.name));
        self.line(&format!("  {}[{j} + 1] = {t};", a.name));
        self.line(&format!("  {sw} = 1;"));
        self.line("}");
        self.line(&format!("{j} = {j} + 1;"));
        self.indent -= 1;
        self.line("}");
        self.line(&format!("if (!{sw}) break;"));
        self.line(&format!("{i} = {i} + 1;"));
        self.indent -= 1;
        self.line("}");
    }

    /// Counts of values by a key in `0..K`, then a pass over the counts.
    fn histogram(&mut self) {
        let Some(a) = self.pick_array(1, Some(Ty::Int), false) else {
            return self.sweep1();
        };
        let n = self.trips(a.dims[0], 3.0);
        let k = *self.rng.pick(&[8usize, 10, 16, 32, 100]);
        self.cost += (n + k) as f64 * self.mult * 3.0;
        let h = format!("h{}", self.id());
        let i = format!("i{}", self.id());
        self.line("{");
        self.indent += 1;
        self.line(&format!("int {h}[{k}] = {{}};"));
        self.line(&format!("int {i} = 0;"));
        self.line(&format!("while ({i} < {n}) {{"));
        let key = if a.rg.lo >= 0.0 {
            format!("{}[{i}] % {k}", a.name)
        } else {
            format!("({}[{i}] % {k} + {k}) % {k}", a.name)
        };
        if self.rng.chance(1, 2) {
            self.line(&format!("  int key = {key};"));
            self.line(&format!("  {h}[key] = {h}[key] + 1;"));
        } else {
            self.line(&format!("  {h}[{key}] = {h}[{key}] + 1;"));
        }
        self.line(&format!("  {i} = {i} + 1;"));
        self.line("}");
        if let Some(acc) = self.outer_int_acc() {
            self.line(&format!("{i} = 0;"));
            self.line(&format!("while ({i} < {k}) {{"));
            self.line(&format!(
                "  if ({h}[{i}] > {acc} % 7) {acc} = ({acc} * 3 + {h}[{i}] * {i}) % 1000007;"
            ));
            self.line(&format!("  {i} = {i} + 1;"));
            self.line("}");
        }
        self.indent -= 1;
        self.line("}");
    }

    /// A small matrix product into a local matrix, reduced.
    fn matmul(&mut self) {
        let Some(a) = self.pick_array(2, Some(Ty::Int), false) else {
            return self.sweep2();
        };
        let mut n = a.dims[0].min(a.dims[1]);
        while n > 2 && (n * n * n) as f64 * self.mult * 1.5 > self.left() {
            n /= 2;
        }
        if n < 2 {
            return;
        }
        self.cost += (n * n * n) as f64 * self.mult * 1.5;
        let (i, j, k, s, c) = (
            format!("i{}", self.id()),
            format!("j{}", self.id()),
            format!("k{}", self.id()),
            format!("s{}", self.id()),
            format!("c{}", self.id()),
        );
        // |a| < 10^6 reduced to below 1000 per factor: a sum of n <= 64 products fits.
        let f = |x: &str| {
            if a.rg.mag() >= 1000.0 {
                format!("{x} % 1000")
            } else {
                x.to_string()
            }
        };
        self.line("{");
        self.indent += 1;
        self.line(&format!("int {c}[{n}][{n}] = {{}};"));
        self.line(&format!("int {i} = 0;"));
        self.line(&format!("while ({i} < {n}) {{"));
        self.line(&format!("  int {j} = 0;"));
        self.line(&format!("  while ({j} < {n}) {{"));
        self.line(&format!("    int {s} = 0;"));
        self.line(&format!("    int {k} = 0;"));
        self.line(&format!("    while ({k} < {n}) {{"));
        self.line(&format!(
            "      {s} = {s} + {} * {};",
            f(&format!("{}[{i}][{k}]", a.name)),
            f(&format!("{}[{k}][{j}]", a.name))
        ));
        self.line(&format!("      {k} = {k} + 1;"));
        self.line("    }");
        self.line(&format!("    {c}[{i}][{j}] = {s} % 10007;"));
        self.line(&format!("    {j} = {j} + 1;"));
        self.line("  }");
        self.line(&format!("  {i} = {i} + 1;"));
        self.line("}");
        // Every element of the product is read (a result read at a few elements only would let
        // a compiler skip most of the product).
        if let Some(acc) = self.outer_int_acc() {
            self.line(&format!("{i} = 0;"));
            self.line(&format!("while ({i} < {n}) {{"));
            self.line(&format!("  int {j} = 0;"));
            self.line(&format!("  while ({j} < {n}) {{"));
            self.line(&format!(
                "    {acc} = ({acc} * 7 + {c}[{i}][{j}]) % 1000007;"
            ));
            self.line(&format!("    {j} = {j} + 1;"));
            self.line("  }");
            self.line(&format!("  {i} = {i} + 1;"));
            self.line("}");
        }
        self.indent -= 1;
        self.line("}");
    }

    /// A loop calling helpers: recursive ones on the counter, array ones on arrays and rows.
    fn call_loop(&mut self) {
        let want = self.rng.range(10, 300) as usize;
        let n = self.trips(want, 50.0);
        self.line("{");
        self.indent += 1;
        self.scopes.push(Vec::new());
        let acc = self.accumulator(Ty::Int);
        let i = self.open_counted(0, n, 1);
        for _ in 0..self.rng.range(1, 3) {
            if self.rng.chance(1, 3) {
                self.call_stmt();
                continue;
            }
            let ty = if self.rng.chance(4, 5) {
                Ty::Int
            } else {
                Ty::Float
            };
            match self.call_expr(ty) {
                Some(e) if ty == Ty::Int => {
                    self.stmt_cost();
                    let v = self.visible().find(|v| v.name == acc).cloned();
                    let Some(v) = v else { continue };
                    let sum = E {
                        text: format!("{acc} + {}", e.text),
                        ty: Ty::Int,
                        rg: v.rg.add(e.rg),
                    };
                    let target = self.target(&v);
                    let t = self.fit(sum, target);
                    self.line(&format!("{acc} = {t};"));
                }
                Some(e) => {
                    self.stmt_cost();
                    let v = format!("x{}", self.id());
                    self.line(&format!("float {v} = {};", e.text));
                    self.line(&format!(
                        "if ({v} > 0.5) {acc} = ({acc} % 1000007 + {i}) % 1000007;"
                    ));
                }
                None => self.stmt(1),
            }
        }
        self.close_counted(&i, n, 1);
        self.fold_locals();
        self.close();
    }

    /// A linear search with a compound condition, then a use of where it stopped.
    fn search(&mut self) {
        let Some(a) = self.pick_array(1, Some(Ty::Int), false) else {
            return self.sweep1();
        };
        let want = self.rng.range(4, 64) as usize;
        let outer = self.trips(want, a.dims[0] as f64 / 2.0 + 3.0);
        self.cost += outer as f64 * self.mult * (a.dims[0] as f64 + 3.0);
        let (q, p, key) = (
            format!("q{}", self.id()),
            format!("p{}", self.id()),
            format!("key{}", self.id()),
        );
        self.line(&format!("int {q} = 0;"));
        self.line(&format!("while ({q} < {outer}) {{"));
        self.indent += 1;
        let kv = self
            .rng
            .range(a.rg.lo.max(-100.0) as i64, a.rg.hi.min(300.0) as i64);
        self.line(&format!("int {key} = {} + {q} * 7;", lit(kv as f64)));
        self.line(&format!("int {p} = 0;"));
        self.line(&format!(
            "while ({p} < {} && {}[{p}] != {key}) {p} = {p} + 1;",
            a.dims[0], a.name
        ));
        if let Some(acc) = self.outer_int_acc() {
            self.line(&format!(
                "if ({p} < {}) {acc} = ({acc} + {p}) % 1000007;",
                a.dims[0]
            ));
            self.line(&format!("else {acc} = ({acc} + 1) % 1000007;"));
        }
        self.line(&format!("{q} = {q} + 1;"));
        self.indent -= 1;
        self.line("}");
    }
}

/// The declared range of a variable first holding values in `rg`: `[0, M]` or `[-M, M]` (what
/// `fit` reduces into), at least 9 wide for ints and 1 for floats.
fn normal_range(ty: Ty, rg: Rg) -> Rg {
    match ty {
        Ty::Int if rg.lo >= 0.0 => Rg::new(0.0, rg.hi.max(9.0)),
        Ty::Int => Rg::new(-rg.mag().max(9.0), rg.mag().max(9.0)),
        Ty::Float => Rg::new(-rg.mag().max(1.0), rg.mag().max(1.0)),
    }
}

/// `s` in parentheses unless it is a plain name, number or call.
fn paren(s: &str) -> String {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let simple = s
        .chars()
        .all(|c| word(c) || c == '[' || c == ']' || c == '.')
        || (s.ends_with(')') && s.starts_with('(') && balanced_outer(s))
        || s.find('(').is_some_and(|k| {
            k > 0 && s[..k].chars().all(word) && s.ends_with(')') && balanced_outer(&s[k..])
        });
    if simple {
        s.to_string()
    } else {
        format!("({s})")
    }
}

/// `b` as the right operand of `+` (`plus`) or `-`: a sum or difference needs parentheses after
/// `-`; after `+` only a leading minus would read oddly.
fn paren_add(b: &str, plus: bool) -> String {
    if plus && !b.starts_with('-') {
        b.to_string()
    } else {
        paren(b)
    }
}

/// Whether the first `(` of `s` closes at its last character.
fn balanced_outer(s: &str) -> bool {
    let mut depth = 0;
    for (k, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 && k + 1 != s.len() {
                    return false;
                }
            }
            _ => {}
        }
    }
    depth == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic() {
        assert_eq!(generate(7), generate(7));
        assert_ne!(generate(7).0, generate(8).0);
    }

    #[test]
    fn ranges() {
        let a = Rg::new(-7.0, 9.0);
        assert_eq!(a.irem(Rg::c(4.0)), Rg::new(-3.0, 3.0));
        assert_eq!(Rg::new(0.0, 9.0).irem(Rg::c(-4.0)), Rg::new(0.0, 3.0));
        assert_eq!(a.idiv(Rg::new(2.0, 3.0)), Rg::new(-3.0, 4.0));
        assert_eq!(a.mul(Rg::new(-2.0, 1.0)), Rg::new(-18.0, 14.0));
    }

    #[test]
    fn parentheses() {
        assert_eq!(paren("a[i]"), "a[i]");
        assert_eq!(paren("f(x)"), "f(x)");
        assert_eq!(paren("f(x) + g(y)"), "(f(x) + g(y))");
        assert_eq!(paren("(a) + (b)"), "((a) + (b))");
        assert_eq!(paren("a + b"), "(a + b)");
    }

    #[test]
    fn programs_pass_the_frontend() {
        for seed in 0..200 {
            let (p, _) = generate(seed);
            let q = p.clone();
            if let Err(e) = crate::frontend::with_big_stack(move || {
                crate::frontend::check(q.as_bytes(), "gen.sy").map(|_| ())
            }) {
                panic!("seed {seed}:\n{e}\n{p}");
            }
        }
    }
}
