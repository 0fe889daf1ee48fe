//! Calls of pure functions on constant arguments evaluated at compile time (a module pass).
//!
//! A call `mix(187)` of a function whose result depends on its arguments alone (the `pure`
//! effect summary: no memory access, no I/O, only pure callees) computes the same value on
//! every run. Here the callee's IR is run on the constants, instruction by instruction with
//! `ir::fold`, following its branches and running the pure calls it makes in turn; when the run
//! returns, every use of the call's result reads the constant instead, and `dce` deletes the
//! call (a pure call whose result is unread goes). Inlining needs a small callee or a single
//! call site; this needs neither, and also settles recursive callees (`fib(20)`).
//!
//! Pure functions may read constant globals (`const` tables): an address is followed as a
//! global and a byte offset through `offset` and `gep`, and a load from a constant global
//! inside its bounds reads the word its initialiser gives.
//!
//! Nothing is replaced unless the run reaches a `ret` exactly as the machine would: an
//! operation `fold` cannot evaluate exactly (a division by zero, `fptosi` out of range), any
//! other memory access or address, a call of an impure or undefined function, recursion deeper than
//! `MAX_DEPTH`, or more than `CALL_BUDGET` instructions for one call site leave the call as it
//! is. Results are remembered per function and arguments, so a recursion that reaches the same
//! arguments again (`fib(n - 1) + fib(n - 2)`) runs each once; the module as a whole runs at
//! most `MODULE_BUDGET` instructions.
//!
//! Needs: the effect summaries (`effects`). Cost: O(module size + instructions run), the
//! latter bounded by `MODULE_BUDGET`.

use crate::ir::fold::{constant_value, fold, Const};
use crate::ir::{FuncId, Function, GlobalId, IdVec, Inst, Module, ModuleCx, Opcode, Type, Value};
use rustc_hash::FxHashMap;

/// Instructions run for one call site (its callee and everything it calls).
const CALL_BUDGET: u64 = 100_000;
/// Instructions run for the whole module.
const MODULE_BUDGET: u64 = 2_000_000;
/// Deepest chain of nested calls followed.
const MAX_DEPTH: u32 = 200;
/// Values of all the frames of nested calls being run, at most.
const MAX_FRAME_VALUES: usize = 1 << 20;

pub fn run_module(m: &mut Module) -> bool {
    let mut found: Vec<(FuncId, Inst, Const)> = Vec::new();
    {
        let m = &*m;
        let mut ev = Evaluator {
            m,
            memo: FxHashMap::default(),
            steps: 0,
            limit: 0,
            frame_values: 0,
        };
        'funcs: for id in m.defined_funcs() {
            let f = &m.funcs[id];
            for b in f.layout().blocks() {
                for i in f.layout().block_insts(b) {
                    if f.op(i) != Opcode::Call
                        || !evaluable(&m.cx, f.callee(i))
                        || !f.result(i).is_some_and(|r| f.has_uses(r))
                    {
                        continue;
                    }
                    let Some(args) = f
                        .args(i)
                        .iter()
                        .map(|&a| constant_value(f, a))
                        .collect::<Option<Vec<Const>>>()
                    else {
                        continue;
                    };
                    if ev.steps >= MODULE_BUDGET {
                        break 'funcs;
                    }
                    ev.limit = (ev.steps + CALL_BUDGET).min(MODULE_BUDGET);
                    if let Some(c) = ev.call(f.callee(i), args, 0) {
                        found.push((id, i, c));
                    }
                }
            }
        }
    }
    for &(id, call, c) in &found {
        let f = &mut m.funcs[id];
        let k = f.insert_new_before(call, c.to_inst(), &[]);
        let (r, k) = (f.res(call), f.res(k));
        f.replace_all_uses(r, k);
    }
    !found.is_empty()
}

/// Whether calls of `g` may be run here: a defined pure function with a scalar result.
fn evaluable(cx: &ModuleCx, g: FuncId) -> bool {
    let d = cx.decl(g);
    d.defined && d.effects.pure && !d.sig.variadic && matches!(d.sig.ret, Type::I32 | Type::F32)
}

/// A value during a run: a constant, or an address inside a global.
#[derive(Clone, Copy)]
enum Val {
    C(Const),
    Addr(GlobalId, i64),
}

impl Val {
    fn konst(self) -> Option<Const> {
        match self {
            Val::C(c) => Some(c),
            Val::Addr(..) => None,
        }
    }
}

struct Evaluator<'m> {
    m: &'m Module,
    /// Results of finished runs; `None` for runs that could not finish (whatever the budget
    /// left: a retry is not worth the instructions).
    memo: FxHashMap<(FuncId, Vec<Const>), Option<Const>>,
    /// Instructions run so far in the module.
    steps: u64,
    /// Where the current call site's run stops.
    limit: u64,
    /// Values of the frames being run.
    frame_values: usize,
}

impl Evaluator<'_> {
    /// The result of `g(args)`, if the run returns within the budget.
    fn call(&mut self, g: FuncId, args: Vec<Const>, depth: u32) -> Option<Const> {
        if let Some(&r) = self.memo.get(&(g, args.clone())) {
            return r;
        }
        let r = self.run(g, &args, depth);
        self.memo.insert((g, args), r);
        r
    }

    fn run(&mut self, g: FuncId, args: &[Const], depth: u32) -> Option<Const> {
        let m = self.m;
        if depth > MAX_DEPTH || !evaluable(&m.cx, g) {
            return None;
        }
        let f = &m.funcs[g];
        if f.params().len() != args.len() {
            return None;
        }
        // Setting up the frame is charged like running an eighth of its values, so calls of
        // a large function that run little of it still exhaust the budget; nested frames stay
        // within `MAX_FRAME_VALUES` values in all.
        self.steps += f.num_values() as u64 / 8;
        self.frame_values += f.num_values();
        if self.steps > self.limit || self.frame_values > MAX_FRAME_VALUES {
            self.frame_values -= f.num_values();
            return None;
        }
        let r = self.run_frame(f, args, depth);
        self.frame_values -= f.num_values();
        r
    }

    /// Runs `f` on `args` in a frame of its own.
    fn run_frame(&mut self, f: &Function, args: &[Const], depth: u32) -> Option<Const> {
        let m = self.m;
        let mut env: IdVec<Value, Option<Val>> = IdVec::filled(f.num_values(), None);
        for (&p, &c) in f.params().iter().zip(args) {
            env[p] = Some(Val::C(c));
        }
        let value = |env: &IdVec<Value, Option<Val>>, v: Value| {
            env[v].or_else(|| constant_value(f, v).map(Val::C))
        };
        let konst = |env: &IdVec<Value, Option<Val>>, v: Value| value(env, v)?.konst();
        let mut block = f.entry();
        loop {
            let mut next = None;
            for i in f.layout().block_insts(block) {
                self.steps += 1;
                if self.steps > self.limit {
                    return None;
                }
                let d = f.data(i);
                let operands = |env: &IdVec<Value, Option<Val>>| -> Option<Vec<Const>> {
                    f.args(i).iter().map(|&a| konst(env, a)).collect()
                };
                let r = match d.op {
                    Opcode::Ret => return konst(&env, *f.args(i).first()?),
                    Opcode::Jump | Opcode::Brif => {
                        let k = if d.op == Opcode::Brif {
                            usize::from(konst(&env, f.arg(i, 0))?.as_int()? & 1 == 0)
                        } else {
                            0
                        };
                        let targets = f.branch_targets(i);
                        let to = &targets[k];
                        let incoming: Vec<Val> = to
                            .args
                            .iter()
                            .map(|&a| value(&env, a))
                            .collect::<Option<_>>()?;
                        next = Some((to.block, incoming));
                        break;
                    }
                    Opcode::Call => Val::C(self.call(f.callee(i), operands(&env)?, depth + 1)?),
                    Opcode::Gaddr => Val::Addr(f.global(i), 0),
                    Opcode::Offset | Opcode::Gep => {
                        let Val::Addr(gl, at) = value(&env, f.arg(i, 0))? else {
                            return None;
                        };
                        let step = if d.op == Opcode::Gep {
                            konst(&env, f.arg(i, 1))?.as_int()?.checked_mul(d.imm)?
                        } else {
                            d.imm
                        };
                        Val::Addr(gl, at.checked_add(step)?)
                    }
                    Opcode::Load => {
                        let Val::Addr(gl, at) = value(&env, f.arg(i, 0))? else {
                            return None;
                        };
                        Val::C(read_const(&m.cx, gl, at, d.ty)?)
                    }
                    op if op.is_pure() => Val::C(fold(d, &operands(&env)?)?),
                    _ => return None,
                };
                env[f.result(i)?] = Some(r);
            }
            let (to, incoming) = next?;
            for (&p, v) in f.blocks.params[to].iter().zip(incoming) {
                env[p] = Some(v);
            }
            block = to;
        }
    }
}

/// The `ty` word at byte offset `at` of constant global `g`, if it lies inside it.
fn read_const(cx: &ModuleCx, g: GlobalId, at: i64, ty: Type) -> Option<Const> {
    let word = cx.globals.get(g)?.const_word(at)?;
    match ty {
        Type::I32 => Some(Const::int(Type::I32, word as i32 as i64)),
        Type::F32 => Some(Const::F32(word)),
        _ => None,
    }
}
