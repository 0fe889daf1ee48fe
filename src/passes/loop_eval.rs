//! Loops computed at compile time.
//!
//! A loop without effects (no memory access, no call) whose every input is a constant (the
//! values its preheader passes to the header, and every value from outside it the loop reads)
//! computes the same results on every run. They are found here by running the loop on those
//! constants, instruction by instruction with `ir::fold`, for at most `STEP_BUDGET`
//! instructions: the preheader then jumps straight to the exit the run left by, passing the
//! constants it passed, and every value of the loop read after it becomes the constant it last
//! held. The loop is left unreachable and removed. Whole nests go at once (outer loops are
//! tried first); a loop inside one with effects or non-constant inputs is tried alone.
//!
//! Closed forms (`indvars`, `modrec`) cover counted loops with symbolic inputs; this covers any
//! shape, including several exits and breaks out of nested conditions, when the inputs are
//! known. An operation `fold` cannot evaluate exactly as the machine would (a division by zero,
//! `fptosi` out of range, pointer arithmetic) or a run past the budget leaves the loop as it is.
//!
//! Needs: CFG, loop forest, loop-simplified form (a preheader). Cost: O(loop sizes + the
//! instructions run, at most `STEP_BUDGET` per loop tried).

use crate::analysis::{FuncAnalyses, Preserved};
use crate::ir::fold::{constant_value, fold, Const};
use crate::ir::{mk, Block, Function, IdVec, ModuleCx, Opcode, Value};
use crate::rewrite::blocks::remove_unreachable;

/// Instructions run per loop before giving up on it.
const STEP_BUDGET: u32 = 100_000;

pub fn run(f: &mut Function, _cx: &ModuleCx, am: &mut FuncAnalyses) -> Preserved {
    let mut plans: Vec<Plan> = Vec::new();
    {
        let (cfg, _, forest) = am.all(f);
        let mut loops: Vec<_> = forest.loops.keys().collect();
        loops.sort_by_key(|&l| (forest.loops[l].depth, forest.loops[l].header));
        let mut done: Vec<Block> = Vec::new();
        for l in loops {
            let data = &forest.loops[l];
            if done.contains(&data.header) {
                continue;
            }
            let Some(pre) = forest.preheader(l, cfg) else {
                continue;
            };
            let inside = |b: Block| forest.contains(l, b);
            if let Some(p) = evaluate(f, pre, data.header, &data.blocks, inside) {
                done.extend(data.blocks.iter().copied());
                plans.push(p);
            }
        }
    }
    if plans.is_empty() {
        return Preserved::all();
    }
    for p in plans {
        apply(f, p);
    }
    am.invalidate(Preserved::none());
    remove_unreachable(f, am);
    Preserved::cached_kept(true)
}

/// The outcome of running one loop.
struct Plan {
    pre: Block,
    exit: Block,
    exit_args: Vec<Const>,
    /// Values of the loop read outside it, with their last values.
    results: Vec<(Value, Const)>,
}

/// Runs the loop with header `header` and blocks `blocks` from its preheader `pre`; `None` if
/// it has effects, an input that is not constant, an operation that does not fold, or runs
/// past the budget.
fn evaluate(
    f: &Function,
    pre: Block,
    header: Block,
    blocks: &[Block],
    inside: impl Fn(Block) -> bool,
) -> Option<Plan> {
    let pt = f.terminator(pre)?;
    if f.op(pt) != Opcode::Jump {
        return None;
    }
    let is_inside = |v: Value| match f.def_inst(v) {
        Some(i) => f.layout().inst_block(i).is_some_and(&inside),
        None => f.def_block(v).is_some_and(&inside),
    };
    // Effects and inputs.
    for &b in blocks {
        for i in f.layout().block_insts(b) {
            let op = f.op(i);
            if matches!(op, Opcode::Ret | Opcode::Unreachable)
                || !(op.is_pure() || op.is_terminator())
            {
                return None;
            }
            if f.args(i)
                .iter()
                .any(|&a| !is_inside(a) && constant_value(f, a).is_none())
            {
                return None;
            }
        }
    }
    let mut env: IdVec<Value, Option<Const>> = IdVec::filled(f.num_values(), None);
    let mut block = header;
    let mut incoming: Vec<Const> = f
        .args(pt)
        .iter()
        .map(|&a| constant_value(f, a))
        .collect::<Option<_>>()?;
    let value =
        |env: &IdVec<Value, Option<Const>>, v: Value| env[v].or_else(|| constant_value(f, v));
    let mut steps = 0u32;
    let (exit, exit_args) = loop {
        for (&p, &c) in f.blocks.params[block].iter().zip(&incoming) {
            env[p] = Some(c);
        }
        let mut next = None;
        for i in f.layout().block_insts(block) {
            steps += 1;
            if steps > STEP_BUDGET {
                return None;
            }
            let d = f.data(i);
            if d.op.is_terminator() {
                let targets = f.branch_targets(i);
                let k = match d.op {
                    Opcode::Jump => 0,
                    Opcode::Brif => {
                        let c = value(&env, f.arg(i, 0))?.as_int()?;
                        if c & 1 != 0 {
                            0
                        } else {
                            1
                        }
                    }
                    _ => return None,
                };
                let call = &targets[k];
                let args: Vec<Const> = call
                    .args
                    .iter()
                    .map(|&a| value(&env, a))
                    .collect::<Option<_>>()?;
                next = Some((call.block, args));
                break;
            }
            let args: Vec<Const> = f
                .args(i)
                .iter()
                .map(|&a| value(&env, a))
                .collect::<Option<_>>()?;
            let r = fold(d, &args)?;
            env[f.result(i)?] = Some(r);
        }
        let (to, args) = next?;
        if !inside(to) {
            break (to, args);
        }
        block = to;
        incoming = args;
    };
    // Values of the loop read after it take their last values (a value read outside is
    // defined in a block dominating the reader, so it ran).
    let mut results = Vec::new();
    for &b in blocks {
        let defs = f.blocks.params[b]
            .iter()
            .copied()
            .chain(f.layout().block_insts(b).filter_map(|i| f.result(i)));
        for v in defs {
            let outside = f.uses_of(v).any(|u| {
                f.layout()
                    .inst_block(f.uses().user[u])
                    .is_none_or(|ub| !inside(ub))
            });
            if outside {
                results.push((v, env[v]?));
            }
        }
    }
    Some(Plan {
        pre,
        exit,
        exit_args,
        results,
    })
}

/// Sends the preheader to the exit with the run's constants; the loop's values read after it
/// become constants (placed in the preheader, which dominates every reader).
fn apply(f: &mut Function, p: Plan) {
    let pt = f.terminator(p.pre).expect("a preheader ends in its jump");
    let materialize = |f: &mut Function, c: Const| {
        let i = f.insert_new_before(pt, c.to_inst(), &[]);
        f.res(i)
    };
    for (v, c) in p.results {
        let k = materialize(f, c);
        f.replace_all_uses(v, k);
    }
    let args: Vec<Value> = p.exit_args.iter().map(|&c| materialize(f, c)).collect();
    f.replace_inst(pt, mk::jump(p.exit), &args);
}
