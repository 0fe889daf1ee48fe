//! Constants by sparse conditional propagation (Wegman and Zadeck): which blocks can run and
//! which values are constants, given what is known of the parameters.
//!
//! Two worklists: blocks that became executable, and values whose lattice cell dropped. A block
//! parameter's cell is the meet of the arguments on its executable incoming edges; a `brif` on a
//! known condition makes only one edge executable. `sccp` rewrites a function by the cells it
//! gets with unknown parameters; call specialisation asks what a body would fold to with some
//! parameters constant. Cost: O(instructions + uses) times lattice height (3).

use crate::ir::fold::{fold, Const};
use crate::ir::{Block, Function, IdSet, IdVec, Inst, Opcode, Value};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cell {
    /// No information yet (unreachable or undefined).
    Top,
    Const(Const),
    /// Not a constant.
    Bottom,
}

fn meet(a: Cell, b: Cell) -> Cell {
    match (a, b) {
        (Cell::Top, x) | (x, Cell::Top) => x,
        (Cell::Const(x), Cell::Const(y)) if x == y => a,
        _ => Cell::Bottom,
    }
}

struct Solver<'a> {
    f: &'a Function,
    cells: IdVec<Value, Cell>,
    exec_block: IdSet<Block>,
    /// Executable edges, per source block: its successors reached so far (at most two, as a
    /// block ends in one `jump` or `brif`), so an edge test is O(1) however many predecessors
    /// the target has.
    exec_succs: IdVec<Block, [Option<Block>; 2]>,
    block_work: Vec<Block>,
    value_work: Vec<Value>,
    /// Scratch: the constant operands of the instruction being visited.
    consts: Vec<Const>,
}

impl Solver<'_> {
    fn lower(&mut self, v: Value, c: Cell) {
        let old = self.cells[v];
        let new = meet(old, c);
        if new != old {
            self.cells[v] = new;
            self.value_work.push(v);
        }
    }

    fn is_exec_edge(&self, from: Block, to: Block) -> bool {
        self.exec_succs[from].contains(&Some(to))
    }

    fn mark_edge(&mut self, from: Block, to: Block) {
        if self.is_exec_edge(from, to) {
            return;
        }
        let slot = self.exec_succs[from]
            .iter_mut()
            .find(|s| s.is_none())
            .expect("a block has at most two successors");
        *slot = Some(to);
        if self.exec_block.insert(to) {
            self.block_work.push(to);
        }
        self.meet_edge_args(from, to);
    }

    /// Meets the arguments that the executable edge `from -> to` passes into `to`'s parameters.
    ///
    /// A parameter's cell is the meet over its executable incoming edges, and cells only fall,
    /// so meeting in one edge's arguments whenever the edge becomes executable or one of its
    /// arguments falls keeps it exact: O(arguments) per event instead of O(predecessors).
    fn meet_edge_args(&mut self, from: Block, to: Block) {
        let f = self.f;
        let params = &f.blocks.params[to];
        if params.is_empty() {
            return;
        }
        let t = f.terminator(from).unwrap();
        for call in f.branch_targets(t) {
            if call.block == to {
                for (&p, &a) in params.iter().zip(call.args) {
                    self.lower(p, self.cells[a]);
                }
            }
        }
    }

    fn visit_inst(&mut self, i: Inst) {
        let f = self.f;
        let d = *f.data(i);
        match d.op {
            Opcode::Jump => {
                let b = f.layout().inst_block(i).unwrap();
                self.mark_edge(b, crate::ir::Block::new(d.imm as usize));
            }
            Opcode::Brif => {
                let b = f.layout().inst_block(i).unwrap();
                let t = f.branch_targets(i);
                let (tb, eb) = (t[0].block, t[1].block);
                match self.cells[f.arg(i, 0)] {
                    Cell::Top => {}
                    Cell::Const(c) => {
                        let to = if c.as_int() != Some(0) { tb } else { eb };
                        self.mark_edge(b, to);
                    }
                    Cell::Bottom => {
                        self.mark_edge(b, tb);
                        self.mark_edge(b, eb);
                    }
                }
            }
            _ => {
                let Some(r) = f.result(i) else { return };
                if self.cells[r] == Cell::Bottom {
                    // The cell cannot fall further: whatever the operands are, nothing changes.
                    return;
                }
                let cell = if d.op == Opcode::Call || d.op == Opcode::Load || d.op == Opcode::Alloca
                {
                    Cell::Bottom
                } else {
                    let mut consts = std::mem::take(&mut self.consts);
                    consts.clear();
                    let mut any_top = false;
                    let mut any_bottom = false;
                    for &a in f.args(i) {
                        match self.cells[a] {
                            Cell::Top => any_top = true,
                            Cell::Bottom => any_bottom = true,
                            Cell::Const(c) => consts.push(c),
                        }
                    }
                    if d.op == Opcode::Select && !any_top {
                        // A known condition picks one side even if the other is not constant.
                        self.consts = consts;
                        let args = f.args(i);
                        match self.cells[args[0]] {
                            Cell::Const(c) => {
                                let pick = if c.as_int() != Some(0) {
                                    args[1]
                                } else {
                                    args[2]
                                };
                                self.lower(r, self.cells[pick]);
                                return;
                            }
                            _ => {
                                self.lower(r, meet(self.cells[args[1]], self.cells[args[2]]));
                                return;
                            }
                        }
                    }
                    let cell = if any_bottom {
                        match absorbed(&d, f.args(i), &self.cells) {
                            Some(c) => Cell::Const(c),
                            None => Cell::Bottom,
                        }
                    } else if any_top {
                        Cell::Top
                    } else {
                        match fold(&d, &consts) {
                            Some(c) => Cell::Const(c),
                            None => Cell::Bottom,
                        }
                    };
                    self.consts = consts;
                    cell
                };
                self.lower(r, cell);
            }
        }
    }
}

/// The result of an integer operation one constant operand decides whatever the other is:
/// `x * 0`, `x & 0`, `x | -1`, and `0 / x`, `0 % x`, `x % 1`, `x % -1`, `0 << x`, `0 >> x`
/// (a division by zero is undefined). So a loop value that starts at 0 and only ever gets
/// `s + s % n` stays the constant 0.
fn absorbed(d: &crate::ir::InstData, args: &[Value], cells: &IdVec<Value, Cell>) -> Option<Const> {
    if !d.ty.is_int() || args.len() != 2 {
        return None;
    }
    let k = |v: Value| match cells[v] {
        Cell::Const(c) => c.as_int(),
        _ => None,
    };
    let (a, b) = (k(args[0]), k(args[1]));
    let zero = Const::int(d.ty, 0);
    let is = |x: Option<i64>, v: i64| x.is_some_and(|x| Const::int(d.ty, x) == Const::int(d.ty, v));
    match d.op {
        Opcode::Mul | Opcode::And if is(a, 0) || is(b, 0) => Some(zero),
        Opcode::Or if is(a, -1) || is(b, -1) => Some(Const::int(d.ty, -1)),
        Opcode::Sdiv | Opcode::Shl | Opcode::Ashr | Opcode::Lshr if is(a, 0) => Some(zero),
        Opcode::Srem if is(a, 0) || is(b, 1) || is(b, -1) => Some(zero),
        _ => None,
    }
}

/// The solution: a cell per value and the blocks that may run.
pub struct Constants {
    cells: IdVec<Value, Cell>,
    exec_block: IdSet<Block>,
}

impl Constants {
    /// Solves `f` with `params[k]` known of its `k`-th parameter (`Cell::Bottom`: anything).
    pub fn solve(f: &Function, params: &[Cell]) -> Constants {
        let n = f.num_blocks();
        let mut s = Solver {
            f,
            cells: IdVec::filled(f.num_values(), Cell::Top),
            exec_block: IdSet::with_capacity(n),
            exec_succs: IdVec::filled(n, [None; 2]),
            block_work: Vec::new(),
            value_work: Vec::new(),
            consts: Vec::new(),
        };
        let entry = f.entry();
        for (&p, &c) in f.params().iter().zip(params) {
            s.cells[p] = c;
        }
        s.exec_block.insert(entry);
        s.block_work.push(entry);
        loop {
            if let Some(b) = s.block_work.pop() {
                for i in f.layout().block_insts(b) {
                    s.visit_inst(i);
                }
            } else if let Some(v) = s.value_work.pop() {
                for u in f.uses_of(v) {
                    let user = f.uses().user[u];
                    let Some(ub) = f.layout().inst_block(user) else {
                        continue;
                    };
                    if !s.exec_block.contains(ub) {
                        continue;
                    }
                    if f.op(user).is_branch() {
                        // Branch arguments flow into the targets' parameters.
                        s.visit_inst(user);
                        for call in f.branch_targets(user) {
                            if s.is_exec_edge(ub, call.block) {
                                s.meet_edge_args(ub, call.block);
                            }
                        }
                    } else {
                        s.visit_inst(user);
                    }
                }
            } else {
                break;
            }
        }
        Constants {
            cells: s.cells,
            exec_block: s.exec_block,
        }
    }

    /// What `v` is: `Top` if its definition never runs (or `v` is newer than the solution).
    pub fn cell(&self, v: Value) -> Cell {
        self.cells.get(v).copied().unwrap_or(Cell::Top)
    }

    /// Whether `b` may run.
    pub fn is_executable(&self, b: Block) -> bool {
        self.exec_block.contains(b)
    }
}
