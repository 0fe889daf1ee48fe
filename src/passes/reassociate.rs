//! Reassociation of integer sums: a tree of `add`, `sub`, and multiplications or left shifts by
//! constants is a linear form `sum(c * x) + k` over its leaves (any other value). When writing
//! the form out takes fewer instructions than the tree had (counting only the tree's nodes that
//! die with it), the root is rebuilt from the form: `a - (a + b) + b - (a + b)` is `-(a + b)`,
//! and `x * 8192 + x` is `x * 8193`. Exact in the wrapping i32 arithmetic of the tree: the form
//! is taken modulo 2^32.
//!
//! Roots are the linear instructions with a use outside the linear ops; forms are memoised per
//! value, so the pass is linear in the function's size (forms above `MAX_TERMS` terms are
//! treated as leaves). `instcombine` afterwards turns multiplications by powers of two into
//! shifts. Needs: nothing. Cost: O(instructions * MAX_TERMS).

use crate::analysis::depend::Linear;
use crate::analysis::{FuncAnalyses, Preserved};
use crate::ir::{mk, Function, Inst, ModuleCx, Opcode, Type, Value};
use rustc_hash::{FxHashMap, FxHashSet};

const MAX_TERMS: usize = 8;

/// Whether `i` is a linear op of an i32 tree: add, sub, or mul/shl by a constant.
fn linear_op(f: &Function, i: Inst) -> bool {
    if f.result(i).is_none_or(|r| f.ty(r) != Type::I32) {
        return false;
    }
    match f.op(i) {
        Opcode::Add | Opcode::Sub => true,
        Opcode::Mul => f.as_iconst(f.arg(i, 1)).is_some() || f.as_iconst(f.arg(i, 0)).is_some(),
        Opcode::Shl => f
            .as_iconst(f.arg(i, 1))
            .is_some_and(|c| (0..32).contains(&c)),
        _ => false,
    }
}

struct Forms {
    memo: FxHashMap<Value, Linear>,
}

impl Forms {
    /// The linear form of `v` over its leaves.
    fn of(&mut self, f: &Function, v: Value) -> Linear {
        if let Some(l) = self.memo.get(&v) {
            return l.clone();
        }
        // Iterative post-order over the linear ops below `v`.
        let mut stack = vec![(v, false)];
        while let Some((x, ready)) = stack.pop() {
            if self.memo.contains_key(&x) {
                continue;
            }
            let leaf = |x: Value| match f.as_iconst(x) {
                Some(c) => Linear::constant(c),
                None => Linear::value(x),
            };
            let Some(i) = f.def_inst(x).filter(|&i| linear_op(f, i)) else {
                self.memo.insert(x, leaf(x));
                continue;
            };
            let (a, b) = (f.arg(i, 0), f.arg(i, 1));
            if !ready {
                stack.push((x, true));
                stack.extend([(a, false), (b, false)]);
                continue;
            }
            let (la, lb) = (&self.memo[&a], &self.memo[&b]);
            let form = match f.op(i) {
                Opcode::Add => la.clone().add(lb, 1),
                Opcode::Sub => la.clone().add(lb, -1),
                Opcode::Mul => match (f.as_iconst(b), f.as_iconst(a)) {
                    (Some(c), _) => la.clone().scale(c),
                    (_, Some(c)) => lb.clone().scale(c),
                    _ => None,
                },
                Opcode::Shl => la.clone().scale(1 << f.as_iconst(b).unwrap_or(0)),
                _ => None,
            };
            // Keep coefficients within i32 (the arithmetic is modulo 2^32).
            let form = form
                .map(|mut l| {
                    for t in &mut l.terms {
                        t.1 = t.1 as i32 as i64;
                    }
                    l.terms.retain(|t| t.1 != 0);
                    l.k = l.k as i32 as i64;
                    l
                })
                .filter(|l| l.terms.len() <= MAX_TERMS);
            self.memo.insert(x, form.unwrap_or_else(|| leaf(x)));
        }
        self.memo[&v].clone()
    }
}

/// Instructions needed to write `l` out.
fn cost(l: &Linear) -> usize {
    let mut n = l.terms.iter().filter(|t| t.1.abs() != 1).count();
    n += l.terms.len().saturating_sub(1);
    if !l.terms.is_empty() && l.terms.iter().all(|t| t.1 < 0) {
        n += 1; // 0 - x
    }
    if l.k != 0 && !l.terms.is_empty() {
        n += 1;
    }
    n
}

/// The tree's linear ops that die when the root is replaced: those all of whose users die.
fn dying(f: &Function, root: Inst) -> usize {
    let mut order = Vec::new();
    let mut seen: FxHashSet<Inst> = FxHashSet::default();
    let mut stack = vec![(root, false)];
    while let Some((i, ready)) = stack.pop() {
        if ready {
            order.push(i);
            continue;
        }
        if !seen.insert(i) {
            continue;
        }
        stack.push((i, true));
        for &a in f.args(i) {
            if let Some(d) = f.def_inst(a).filter(|&d| linear_op(f, d)) {
                stack.push((d, false));
            }
        }
    }
    // Parents come after children in `order`: walk it backwards.
    let mut dead: FxHashSet<Inst> = FxHashSet::default();
    dead.insert(root);
    for &i in order.iter().rev() {
        if i == root {
            continue;
        }
        let r = f.res(i);
        if f.uses_of(r).all(|u| dead.contains(&f.uses().user[u])) {
            dead.insert(i);
        }
    }
    dead.len()
}

/// Writes `l` out before `at`.
fn build(f: &mut Function, at: Inst, l: &Linear) -> Value {
    let iconst = |f: &mut Function, c: i64| {
        let k = f.insert_new_before(at, mk::iconst(Type::I32, c as i32 as i64), &[]);
        f.res(k)
    };
    let mut acc: Option<Value> = None;
    let mut terms = l.terms.clone();
    terms.sort_by_key(|t| (t.1 < 0, t.0)); // positive terms first
    for (x, c) in terms {
        let m = c.unsigned_abs() as i64;
        let t = if m == 1 {
            x
        } else {
            let k = iconst(f, m);
            let i = f.insert_new_before(at, mk::binary(Opcode::Mul, Type::I32), &[x, k]);
            f.res(i)
        };
        acc = Some(match (acc, c > 0) {
            (None, true) => t,
            (None, false) => {
                let z = iconst(f, 0);
                let i = f.insert_new_before(at, mk::binary(Opcode::Sub, Type::I32), &[z, t]);
                f.res(i)
            }
            (Some(a), pos) => {
                let op = if pos { Opcode::Add } else { Opcode::Sub };
                let i = f.insert_new_before(at, mk::binary(op, Type::I32), &[a, t]);
                f.res(i)
            }
        });
    }
    match acc {
        None => iconst(f, l.k),
        Some(a) if l.k == 0 => a,
        Some(a) => {
            let k = iconst(f, l.k);
            let i = f.insert_new_before(at, mk::binary(Opcode::Add, Type::I32), &[a, k]);
            f.res(i)
        }
    }
}

pub fn run(f: &mut Function, _cx: &ModuleCx, _am: &mut FuncAnalyses) -> Preserved {
    let mut forms = Forms {
        memo: FxHashMap::default(),
    };
    let mut roots = Vec::new();
    for b in f.layout().blocks() {
        for i in f.layout().block_insts(b) {
            if !linear_op(f, i) {
                continue;
            }
            let r = f.res(i);
            let outside = f.uses_of(r).any(|u| !linear_op(f, f.uses().user[u]));
            if outside {
                roots.push(i);
            }
        }
    }
    let mut changed = false;
    for root in roots {
        let l = forms.of(f, f.res(root));
        // A root that is itself a leaf (its form overflowed or is too wide) stays.
        if l.terms.len() == 1 && l.terms[0] == (f.res(root), 1) {
            continue;
        }
        if cost(&l) >= dying(f, root) {
            continue;
        }
        let v = build(f, root, &l);
        let r = f.res(root);
        f.replace_all_uses(r, v);
        changed = true;
    }
    Preserved::cfg_kept(changed)
}
