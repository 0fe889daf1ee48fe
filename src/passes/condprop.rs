//! Conditions known from dominating branches.
//!
//! Below the edge `brif c, T, E` into a block with that single predecessor, `c` is true (in `T`)
//! or false (in `E`) everywhere that block dominates. So are the comparisons that follow from
//! it: the inverse comparison (`a < b` true means `a >= b` false), the swapped one (`b > a`),
//! the operands of a true `and` or a false `or`. Every use of a known condition in that region
//! becomes a constant; `sccp`/`simplify_cfg` then fold the branches. Inlined bounds checks
//! (`if (i < 0 || i >= n) return -1;` repeated per call) collapse to their first test. An
//! integer known equal to a constant (`x == k` true, `x != k` false) is replaced by it there
//! too (`if (!flag)` bodies, `op == 3` arms), so its arithmetic folds and calls get constant
//! arguments.
//!
//! Walks the dominator tree in pre-order with a scoped fact table (undo log on the way out).
//! Needs: CFG, dominator tree. Cost: O(instructions + operands).

use crate::analysis::{Cfg, FuncAnalyses, Preserved};
use crate::ir::{mk, Block, CmpCond, Function, Inst, ModuleCx, Opcode, Type, Value};
use rustc_hash::FxHashMap;

/// A fact's subject: a value, or a comparison by (opcode, condition, operands).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Subject {
    Value(Value),
    Cmp(Opcode, CmpCond, Value, Value),
}

/// One entry of the undo log: a fact or an equality as it was before the region set it.
enum Undo {
    Fact(Subject, Option<bool>),
    Equal(Value, Option<Value>),
}

struct Facts {
    known: FxHashMap<Subject, bool>,
    /// Integer values known equal to a constant (`x == k` true): the constant's value.
    equal: FxHashMap<Value, Value>,
    undo: Vec<Undo>,
}

impl Facts {
    fn set(&mut self, s: Subject, t: bool) {
        let old = self.known.insert(s, t);
        self.undo.push(Undo::Fact(s, old));
    }

    fn set_equal(&mut self, v: Value, k: Value) {
        let old = self.equal.insert(v, k);
        self.undo.push(Undo::Equal(v, old));
    }

    fn rollback(&mut self, mark: usize) {
        while self.undo.len() > mark {
            match self.undo.pop().unwrap() {
                Undo::Fact(s, Some(t)) => {
                    self.known.insert(s, t);
                }
                Undo::Fact(s, None) => {
                    self.known.remove(&s);
                }
                Undo::Equal(v, Some(k)) => {
                    self.equal.insert(v, k);
                }
                Undo::Equal(v, None) => {
                    self.equal.remove(&v);
                }
            }
        }
    }

    /// Records `c == t` and what follows from it.
    fn assume(&mut self, f: &Function, c: Value, t: bool, depth: u32) {
        self.set(Subject::Value(c), t);
        let Some(i) = f.def_inst(c) else { return };
        let d = f.data(i);
        match d.op {
            Opcode::Icmp | Opcode::Fcmp => {
                let (a, b, cond) = (f.arg(i, 0), f.arg(i, 1), d.cond());
                self.set(Subject::Cmp(d.op, cond, a, b), t);
                self.set(Subject::Cmp(d.op, cond.swap(), b, a), t);
                // For floats only equality inverts exactly (NaN compares false both ways).
                if d.op == Opcode::Icmp || matches!(cond, CmpCond::Eq | CmpCond::Ne) {
                    self.set(Subject::Cmp(d.op, cond.invert(), a, b), !t);
                    self.set(Subject::Cmp(d.op, cond.invert().swap(), b, a), !t);
                }
                // An integer equal to a constant is that constant (floats are not: -0.0 == 0.0).
                // The constant dominates the compare, so it dominates the region.
                let equal = (cond == CmpCond::Eq) == t && matches!(cond, CmpCond::Eq | CmpCond::Ne);
                if d.op == Opcode::Icmp && equal {
                    match (f.as_iconst(a), f.as_iconst(b)) {
                        (None, Some(_)) => self.set_equal(a, b),
                        (Some(_), None) => self.set_equal(b, a),
                        _ => {}
                    }
                }
            }
            Opcode::And if t && depth < 4 => {
                self.assume(f, f.arg(i, 0), true, depth + 1);
                self.assume(f, f.arg(i, 1), true, depth + 1);
            }
            Opcode::Or if !t && depth < 4 => {
                self.assume(f, f.arg(i, 0), false, depth + 1);
                self.assume(f, f.arg(i, 1), false, depth + 1);
            }
            _ => {}
        }
    }

    /// What is known about the i1 value `v`.
    fn lookup(&self, f: &Function, v: Value) -> Option<bool> {
        if let Some(&t) = self.known.get(&Subject::Value(v)) {
            return Some(t);
        }
        let i = f.def_inst(v)?;
        let d = f.data(i);
        if !matches!(d.op, Opcode::Icmp | Opcode::Fcmp) {
            return None;
        }
        self.known
            .get(&Subject::Cmp(d.op, d.cond(), f.arg(i, 0), f.arg(i, 1)))
            .copied()
    }
}

/// The condition `b` learns from its single predecessor's branch, if any.
fn edge_fact(f: &Function, cfg: &Cfg, b: Block) -> Option<(Value, bool)> {
    let [p] = cfg.preds[b][..] else { return None };
    let t = f.terminator(p)?;
    if f.op(t) != Opcode::Brif {
        return None;
    }
    let targets = f.branch_targets(t);
    let (then, els) = (targets[0].block, targets[1].block);
    if then == els {
        return None;
    }
    Some((f.arg(t, 0), b == then))
}

pub fn run(f: &mut Function, _cx: &ModuleCx, am: &mut FuncAnalyses) -> Preserved {
    let (cfg, dt) = am.cfg_domtree(f);
    let mut facts = Facts {
        known: FxHashMap::default(),
        equal: FxHashMap::default(),
        undo: Vec::new(),
    };
    let mut consts: [Option<Value>; 2] = [None, None];
    let mut changed = false;
    // (block, undo mark when leaving; None when entering)
    let mut work: Vec<(Block, Option<usize>)> = vec![(f.entry(), None)];
    while let Some((b, leave)) = work.pop() {
        if let Some(mark) = leave {
            facts.rollback(mark);
            continue;
        }
        work.push((b, Some(facts.undo.len())));
        if let Some((c, t)) = edge_fact(f, cfg, b) {
            facts.assume(f, c, t, 0);
        }
        if !facts.known.is_empty() || !facts.equal.is_empty() {
            let insts: Vec<Inst> = f.layout().block_insts(b).collect();
            for i in insts {
                for u in f.arg_uses(i).collect::<Vec<_>>() {
                    let v = f.uses().value[u];
                    if let Some(&k) = facts.equal.get(&v) {
                        f.set_use(u, k);
                        changed = true;
                        continue;
                    }
                    if f.ty(v) != Type::I1 {
                        continue;
                    }
                    let Some(t) = facts.lookup(f, v) else {
                        continue;
                    };
                    let k = t as usize;
                    let cv = match consts[k] {
                        Some(cv) => cv,
                        None => {
                            let entry = f.entry();
                            let ci = match f.layout().first_inst(entry) {
                                Some(first) => {
                                    f.insert_new_before(first, mk::iconst(Type::I1, k as i64), &[])
                                }
                                None => f.append_new(entry, mk::iconst(Type::I1, k as i64), &[]),
                            };
                            let cv = f.res(ci);
                            consts[k] = Some(cv);
                            cv
                        }
                    };
                    if v != cv {
                        f.set_use(u, cv);
                        changed = true;
                    }
                }
            }
        }
        for &c in dt.children[b].iter().rev() {
            work.push((c, None));
        }
    }
    Preserved::cfg_kept(changed)
}
