//! Boolean minimisation: `i1` expressions over at most three atoms rebuilt in their cheapest
//! form.
//!
//! If-converted `&&`/`||` chains and conditionals on 0/1 values leave trees of `and`, `or`,
//! `xor` (a `xor` with true is a negation) over a few conditions, often written the long way
//! (`(a | b) & !(a & b)` for `a ^ b`, `a | (!a & c)` for `a | c`). For each such tree (a *cone*:
//! the logic instructions of one block feeding a root, expanded while its leaves stay at most
//! three *atoms*), the pass computes the root's truth table and looks up the smallest formula
//! with that table: a tree of `and`/`or`/`xor`/negation over the atoms' literals. An integer
//! compare and its inverse are one atom in two polarities (`icmp.eq x, 0` is `!(icmp.ne x, 0)`),
//! so a literal costs nothing when a value of that polarity survives anyway and one instruction
//! (a compare or a negation) otherwise. The root is replaced when the formula costs fewer
//! instructions than the cone nodes that die with it; `dce` removes those.
//!
//! Formula search: all truth tables of `n <= 3` variables (256 at most), by increasing formula
//! size: a table of cost `k` is an operation on two tables whose costs add up to `k - 1`, or the
//! negation of one of cost `k - 1`; literals and the constants start at their own cost. Done
//! once per distinct literal-cost pattern of the function (at most 64), O(256^2) each.
//!
//! Needs: nothing cached. Keeps the CFG (new instructions go right before each root). Cost:
//! O(logic instructions * cone size) plus the searches.

use crate::analysis::{FuncAnalyses, Preserved};
use crate::ir::{mk, Block, CmpCond, Function, Inst, ModuleCx, Opcode, Type, Value};
use rustc_hash::FxHashMap;

/// Most atoms a cone may have (truth tables fit in a `u8`).
const MAX_ATOMS: usize = 3;
/// Most logic instructions in one cone.
const MAX_CONE: usize = 24;

pub fn run(f: &mut Function, _cx: &ModuleCx, _am: &mut FuncAnalyses) -> Preserved {
    let mut searches: FxHashMap<(usize, [u8; 2 * MAX_ATOMS]), Search> = FxHashMap::default();
    let mut changed = false;
    let blocks: Vec<Block> = f.layout().blocks().collect();
    for b in blocks {
        // First root first: a node other roots share is simplified before the cones above it
        // are read (they see the simpler node); a node a later cone kills is left for `dce`.
        let insts: Vec<Inst> = f.layout().block_insts(b).collect();
        for &i in &insts {
            if f.layout().inst_block(i).is_none() || logic(f, f.result(i), b).is_none() {
                continue;
            }
            if !f.has_uses(f.res(i)) {
                continue;
            }
            changed |= minimise(f, b, i, &mut searches);
        }
    }
    Preserved::cfg_kept(changed)
}

/// A leaf of a cone: an integer compare (`(cond, a, b)` with `cond` the lower-numbered of the
/// condition and its inverse) or any other `i1` value.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Atom {
    Cmp(CmpCond, Value, Value),
    Value(Value),
}

/// `v` as an atom and the polarity `v` has (true: `v` is the atom).
fn atom_of(f: &Function, v: Value) -> (Atom, bool) {
    if let Some(i) = f.def_inst(v) {
        if f.op(i) == Opcode::Icmp {
            let c = f.data(i).cond();
            let (a, b) = (f.arg(i, 0), f.arg(i, 1));
            // `zext x != 0` is `x`, `zext x == 0` is `!x`.
            if let Some(z) = f.def_inst(a).filter(|&z| f.op(z) == Opcode::Zext) {
                let x = f.arg(z, 0);
                if f.ty(x) == Type::I1 && f.as_iconst(b) == Some(0) {
                    let (atom, pos) = atom_of(f, x);
                    match c {
                        CmpCond::Ne => return (atom, pos),
                        CmpCond::Eq => return (atom, !pos),
                        _ => {}
                    }
                }
            }
            let inv = c.invert();
            return if (c as u8) <= (inv as u8) {
                (Atom::Cmp(c, a, b), true)
            } else {
                (Atom::Cmp(inv, a, b), false)
            };
        }
    }
    (Atom::Value(v), true)
}

/// The logic operation defining `v` in block `b`: `and`, `or`, `xor` of `i1` values.
fn logic(f: &Function, v: Option<Value>, b: Block) -> Option<(Inst, Opcode)> {
    let v = v?;
    if f.ty(v) != Type::I1 {
        return None;
    }
    let i = f.def_inst(v)?;
    if f.layout().inst_block(i) != Some(b) {
        return None;
    }
    let op = f.op(i);
    matches!(op, Opcode::And | Opcode::Or | Opcode::Xor).then_some((i, op))
}

/// A cone node: an operation on two nodes, or a literal of atom `k`.
#[derive(Clone, Copy, Debug)]
enum Node {
    Op(Opcode, usize, usize),
    Lit(usize, bool),
    Const(bool),
}

/// A cone under construction.
struct Cone {
    atoms: Vec<Atom>,
    nodes: Vec<Node>,
    /// The logic instructions expanded (the root first).
    insts: Vec<Inst>,
    /// Existing values per atom and polarity.
    lits: Vec<[Vec<Value>; 2]>,
    /// The node each expanded instruction became.
    expanded: Vec<(Inst, usize)>,
}

impl Cone {
    fn atom(&mut self, f: &Function, v: Value) -> Option<(usize, bool)> {
        let (a, pos) = atom_of(f, v);
        let k = match self.atoms.iter().position(|&x| x == a) {
            Some(k) => k,
            None if self.atoms.len() < MAX_ATOMS => {
                self.atoms.push(a);
                self.lits.push([Vec::new(), Vec::new()]);
                self.atoms.len() - 1
            }
            None => return None,
        };
        if !self.lits[k][pos as usize].contains(&v) {
            self.lits[k][pos as usize].push(v);
        }
        Some((k, pos))
    }

    /// Adds `v` (used inside the cone) as a node: expanded when it is a logic instruction of
    /// `b` and the atoms allow, else a literal. `None` when even a literal does not fit.
    fn add(&mut self, f: &Function, b: Block, v: Value) -> Option<usize> {
        if let Some(k) = f.as_iconst(v) {
            self.nodes.push(Node::Const(k & 1 != 0));
            return Some(self.nodes.len() - 1);
        }
        if let Some((i, op)) = logic(f, Some(v), b) {
            if let Some(&(_, n)) = self.expanded.iter().find(|e| e.0 == i) {
                return Some(n); // reached again by another path
            }
            if self.insts.len() < MAX_CONE {
                let saved = (self.atoms.len(), self.nodes.len(), self.insts.len());
                let lits = self.lits.clone();
                let expanded = self.expanded.len();
                self.insts.push(i);
                let (x, y) = (f.arg(i, 0), f.arg(i, 1));
                let l = self.add(f, b, x);
                let r = l.and_then(|_| self.add(f, b, y));
                if let (Some(l), Some(r)) = (l, r) {
                    self.nodes.push(Node::Op(op, l, r));
                    self.expanded.push((i, self.nodes.len() - 1));
                    return Some(self.nodes.len() - 1);
                }
                self.expanded.truncate(expanded);
                // Too many atoms below: `v` itself becomes a leaf.
                self.atoms.truncate(saved.0);
                self.nodes.truncate(saved.1);
                self.insts.truncate(saved.2);
                self.lits = lits;
            }
        }
        let (k, pos) = self.atom(f, v)?;
        self.nodes.push(Node::Lit(k, pos));
        Some(self.nodes.len() - 1)
    }

    /// The truth table of node `n` (bit `m` is its value when atom `k` is bit `k` of `m`).
    fn table(&self, n: usize) -> u8 {
        let rows = 1u32 << self.atoms.len();
        let mut t = 0u8;
        for m in 0..rows {
            if self.eval(n, m) {
                t |= 1 << m;
            }
        }
        t
    }

    fn eval(&self, n: usize, m: u32) -> bool {
        match self.nodes[n] {
            Node::Const(c) => c,
            Node::Lit(k, pos) => ((m >> k) & 1 != 0) == pos,
            Node::Op(op, l, r) => {
                let (x, y) = (self.eval(l, m), self.eval(r, m));
                match op {
                    Opcode::And => x && y,
                    Opcode::Or => x || y,
                    _ => x != y,
                }
            }
        }
    }
}

/// The cheapest formula found for every truth table of `n` variables, given each literal's
/// cost.
struct Search {
    /// Per table: its cost and how it is made.
    best: Vec<Option<(u32, Recipe)>>,
}

#[derive(Clone, Copy, Debug)]
enum Recipe {
    Const(bool),
    Lit(usize, bool),
    Not(u8),
    Op(Opcode, u8, u8),
}

/// Largest formula size searched.
const MAX_COST: u32 = 12;

impl Search {
    fn new(n: usize, lit_cost: &[u8; 2 * MAX_ATOMS]) -> Search {
        let rows = 1u32 << n;
        let mask: u8 = if rows == 8 { 0xff } else { (1u8 << rows) - 1 };
        let mut best: Vec<Option<(u32, Recipe)>> = vec![None; 256];
        let mut by_cost: Vec<Vec<u8>> = vec![Vec::new(); MAX_COST as usize + 1];
        let put = |best: &mut Vec<Option<(u32, Recipe)>>,
                   by_cost: &mut Vec<Vec<u8>>,
                   t: u8,
                   c: u32,
                   r: Recipe| {
            if c <= MAX_COST && best[t as usize].is_none_or(|(old, _)| c < old) {
                best[t as usize] = Some((c, r));
                by_cost[c as usize].push(t);
            }
        };
        put(&mut best, &mut by_cost, 0, 0, Recipe::Const(false));
        put(&mut best, &mut by_cost, mask, 0, Recipe::Const(true));
        for k in 0..n {
            let mut t = 0u8;
            for m in 0..rows {
                if (m >> k) & 1 != 0 {
                    t |= 1 << m;
                }
            }
            for pos in [true, false] {
                let tt = if pos { t } else { !t & mask };
                let c = lit_cost[2 * k + pos as usize] as u32;
                put(&mut best, &mut by_cost, tt, c, Recipe::Lit(k, pos));
            }
        }
        for c in 1..=MAX_COST {
            // Negations of cost c - 1.
            let prev: Vec<u8> = by_cost[c as usize - 1].clone();
            for &t in &prev {
                if best[t as usize].is_some_and(|(k, _)| k == c - 1) {
                    put(&mut best, &mut by_cost, !t & mask, c, Recipe::Not(t));
                }
            }
            // Operations on two tables of costs c1 + c2 = c - 1.
            for c1 in 0..c {
                let c2 = c - 1 - c1;
                if c2 < c1 {
                    break;
                }
                let l1: Vec<u8> = by_cost[c1 as usize].clone();
                let l2: Vec<u8> = by_cost[c2 as usize].clone();
                for &x in &l1 {
                    if best[x as usize].is_none_or(|(k, _)| k != c1) {
                        continue;
                    }
                    for &y in &l2 {
                        if best[y as usize].is_none_or(|(k, _)| k != c2) {
                            continue;
                        }
                        for (op, t) in [
                            (Opcode::And, x & y),
                            (Opcode::Or, x | y),
                            (Opcode::Xor, x ^ y),
                        ] {
                            put(&mut best, &mut by_cost, t, c, Recipe::Op(op, x, y));
                        }
                    }
                }
            }
        }
        Search { best }
    }
}

/// Rebuilds the cone of root `root` (in block `b`) if a cheaper formula exists.
fn minimise(
    f: &mut Function,
    b: Block,
    root: Inst,
    searches: &mut FxHashMap<(usize, [u8; 2 * MAX_ATOMS]), Search>,
) -> bool {
    let mut cone = Cone {
        atoms: Vec::new(),
        nodes: Vec::new(),
        insts: Vec::new(),
        lits: Vec::new(),
        expanded: Vec::new(),
    };
    let Some(top) = cone.add(f, b, f.res(root)) else {
        return false;
    };
    if cone.insts.len() < 2 {
        return false; // one operation is already as small as it gets
    }
    // The instructions that die with the root: cone members (and compares feeding them) all
    // of whose users die too.
    let mut dying: Vec<Inst> = vec![root];
    let mut candidates: Vec<Inst> = cone.insts[1..].to_vec();
    for lits in &cone.lits {
        for v in lits.iter().flatten() {
            if let Some(i) = f.def_inst(*v).filter(|&i| f.op(i) == Opcode::Icmp) {
                candidates.push(i);
            }
        }
    }
    loop {
        let before = dying.len();
        for &i in &candidates {
            if dying.contains(&i) {
                continue;
            }
            let r = f.res(i);
            if f.uses_of(r).all(|u| dying.contains(&f.uses().user[u])) {
                dying.push(i);
            }
        }
        if dying.len() == before {
            break;
        }
    }
    let survives = |v: Value| !f.def_inst(v).is_some_and(|i| dying.contains(&i));
    // Literal costs: free when a value of that polarity survives (or is a plain value).
    let n = cone.atoms.len();
    let mut lit_cost = [1u8; 2 * MAX_ATOMS];
    for k in 0..n {
        for pos in [false, true] {
            let have = cone.lits[k][pos as usize].iter().any(|&v| survives(v));
            let plain = pos && matches!(cone.atoms[k], Atom::Value(_));
            if have || plain {
                lit_cost[2 * k + pos as usize] = 0;
            }
        }
    }
    let table = cone.table(top);
    let search = searches
        .entry((n, lit_cost))
        .or_insert_with(|| Search::new(n, &lit_cost));
    let Some((cost, _)) = search.best[table as usize] else {
        return false;
    };
    if cost as usize >= dying.len() {
        return false;
    }
    let mut memo: FxHashMap<u8, Value> = FxHashMap::default();
    let v = emit(f, root, &cone, search, table, &mut memo);
    f.replace_all_uses(f.res(root), v);
    true
}

/// Emits the formula for `table` right before `at`.
fn emit(
    f: &mut Function,
    at: Inst,
    cone: &Cone,
    search: &Search,
    table: u8,
    memo: &mut FxHashMap<u8, Value>,
) -> Value {
    if let Some(&v) = memo.get(&table) {
        return v;
    }
    let (_, recipe) = search.best[table as usize].unwrap();
    let v = match recipe {
        Recipe::Const(c) => {
            let i = f.insert_new_before(at, mk::iconst(Type::I1, c as i64), &[]);
            f.res(i)
        }
        Recipe::Lit(k, pos) => literal(f, at, cone, k, pos),
        Recipe::Not(t) => {
            let x = emit(f, at, cone, search, t, memo);
            let one = f.insert_new_before(at, mk::iconst(Type::I1, 1), &[]);
            let one = f.res(one);
            let i = f.insert_new_before(at, mk::binary(Opcode::Xor, Type::I1), &[x, one]);
            f.res(i)
        }
        Recipe::Op(op, x, y) => {
            let a = emit(f, at, cone, search, x, memo);
            let b = emit(f, at, cone, search, y, memo);
            let i = f.insert_new_before(at, mk::binary(op, Type::I1), &[a, b]);
            f.res(i)
        }
    };
    memo.insert(table, v);
    v
}

/// Atom `k` in polarity `pos`: an existing value, or a new compare or negation.
fn literal(f: &mut Function, at: Inst, cone: &Cone, k: usize, pos: bool) -> Value {
    if let Some(&v) = cone.lits[k][pos as usize].first() {
        return v;
    }
    match cone.atoms[k] {
        Atom::Cmp(c, a, b) => {
            let c = if pos { c } else { c.invert() };
            let i = f.insert_new_before(at, mk::icmp(c), &[a, b]);
            f.res(i)
        }
        Atom::Value(v) => {
            let one = f.insert_new_before(at, mk::iconst(Type::I1, 1), &[]);
            let one = f.res(one);
            let i = f.insert_new_before(at, mk::binary(Opcode::Xor, Type::I1), &[v, one]);
            f.res(i)
        }
    }
}
