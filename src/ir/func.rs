//! A function body as a set of columns.
//!
//! `Insts`, `Values`, `Uses` and `Blocks` are struct-of-arrays tables; `Layout` orders blocks and
//! instructions. Operands are ranges of `Use` ids (contiguous in the use table), and every value
//! has a doubly linked list of its uses, so `uses_of(v)` and `replace_all_uses` cost O(uses of v).
//!
//! Invariants kept by the editing methods here (and checked by `verify`):
//! - each live use (one in the operand range of an instruction) is in the list of its value;
//! - a use not in any live operand range is unlinked;
//! - `values.def` names where each value is defined: an instruction result or a block parameter
//!   at its current index.
//!
//! Nothing is freed: removed instructions are unlinked from the layout and their uses unlinked.
//! SSA uses block parameters instead of phi instructions; function parameters are the entry
//! block's parameters.

use super::entity::IdVec;
use super::inst::{CmpCond, InstData, Opcode, Type};
use super::layout::Layout;
use super::module::{FuncId, GlobalId};
use super::{Block, Inst, Use, Value};

/// Where a value comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueDef {
    Result(Inst),
    Param(Block, u32),
}

/// `ValueDef` in 8 bytes (the enum takes 12): a block parameter as (block, index), an
/// instruction result as (`RESULT`, instruction). No block id is `RESULT`: ids are indices
/// below `u32::MAX`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PackedDef {
    block: u32,
    index: u32,
}

impl PackedDef {
    const RESULT: u32 = u32::MAX;

    #[inline]
    pub fn get(self) -> ValueDef {
        if self.block == Self::RESULT {
            ValueDef::Result(Inst::new(self.index as usize))
        } else {
            ValueDef::Param(Block::new(self.block as usize), self.index)
        }
    }
}

impl From<ValueDef> for PackedDef {
    #[inline]
    fn from(d: ValueDef) -> PackedDef {
        match d {
            ValueDef::Result(i) => PackedDef {
                block: Self::RESULT,
                index: i.index() as u32,
            },
            ValueDef::Param(b, n) => PackedDef {
                block: b.index() as u32,
                index: n,
            },
        }
    }
}

/// A contiguous range of operand slots.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UseRange {
    pub start: u32,
    pub len: u32,
}

impl UseRange {
    pub fn iter(self) -> impl DoubleEndedIterator<Item = Use> + ExactSizeIterator {
        (self.start..self.start + self.len).map(|i| Use::new(i as usize))
    }
    pub fn get(self, n: usize) -> Use {
        assert!(n < self.len as usize);
        Use::new(self.start as usize + n)
    }
}

/// Instruction columns.
#[derive(Clone, Default, Debug)]
pub struct Insts {
    pub data: IdVec<Inst, InstData>,
    pub args: IdVec<Inst, UseRange>,
    pub result: IdVec<Inst, Option<Value>>,
}

/// Value columns.
#[derive(Clone, Default, Debug)]
pub struct Values {
    pub ty: IdVec<Value, Type>,
    /// Where each value is defined (read with `Function::value_def`).
    pub def: IdVec<Value, PackedDef>,
}

/// Use columns: per operand slot the value it reads, the instruction reading it and the links of
/// its value's use list; per value the head of that list. A slot in no list is its own
/// predecessor (`prev[u] == Some(u)`, which no listed slot is).
#[derive(Clone, Default, Debug)]
pub struct Uses {
    pub value: IdVec<Use, Value>,
    pub user: IdVec<Use, Inst>,
    prev: IdVec<Use, Option<Use>>,
    pub next: IdVec<Use, Option<Use>>,
    pub first: IdVec<Value, Option<Use>>,
}

impl Uses {
    /// Whether slot `u` is in its value's use list.
    #[inline]
    pub fn is_linked(&self, u: Use) -> bool {
        self.prev[u] != Some(u)
    }
}

/// Block columns.
#[derive(Clone, Default, Debug)]
pub struct Blocks {
    pub params: BlockParams,
}

/// Where one block's parameters sit in `BlockParams::pool`: `len` of them from `start`, in a
/// region of `cap` slots.
#[derive(Clone, Copy, Default, Debug)]
struct ParamRange {
    start: u32,
    len: u32,
    cap: u32,
}

/// The parameters of every block, in one pool instead of a vector per block (most blocks have
/// none, and a vector header costs 24 bytes). `params[b]` reads block `b`'s as a slice. A block
/// that outgrows its region moves to a region twice as large at the end of the pool; the region
/// it leaves stays unused until `Function::compact` rebuilds the pool.
#[derive(Clone, Default, Debug)]
pub struct BlockParams {
    range: IdVec<Block, ParamRange>,
    pool: Vec<Value>,
}

impl BlockParams {
    /// The number of blocks.
    pub fn len(&self) -> usize {
        self.range.len()
    }

    pub fn is_empty(&self) -> bool {
        self.range.len() == 0
    }

    /// Every block with its parameters, in block id order.
    pub fn iter(&self) -> impl Iterator<Item = (Block, &[Value])> + '_ {
        self.range
            .iter()
            .map(|(b, r)| (b, &self.pool[r.start as usize..(r.start + r.len) as usize]))
    }

    /// A new block without parameters.
    fn push_block(&mut self) -> Block {
        self.range.push(ParamRange::default())
    }

    /// Appends `v` to the parameters of `b`.
    fn push(&mut self, b: Block, v: Value) {
        let r = self.range[b];
        if r.len == r.cap {
            // The region is full: move to a new one at the end of the pool.
            let start = self.pool.len();
            let cap = (r.cap * 2).max(2);
            self.pool
                .extend_from_within(r.start as usize..(r.start + r.len) as usize);
            self.pool.resize(start + cap as usize, v);
            self.range[b] = ParamRange {
                start: start as u32,
                len: r.len,
                cap,
            };
        }
        let r = &mut self.range[b];
        self.pool[(r.start + r.len) as usize] = v;
        r.len += 1;
    }

    /// The parameters of `b`, to edit in place (their number stays).
    fn slice_mut(&mut self, b: Block) -> &mut [Value] {
        let r = self.range[b];
        &mut self.pool[r.start as usize..(r.start + r.len) as usize]
    }

    /// Keeps the first `n` parameters of `b`.
    fn truncate(&mut self, b: Block, n: usize) {
        let r = &mut self.range[b];
        r.len = r.len.min(n as u32);
    }

    /// Makes `params` the parameters of `b`, in a region of their own at the end of the pool.
    pub fn set(&mut self, b: Block, params: &[Value]) {
        let start = self.pool.len() as u32;
        self.pool.extend_from_slice(params);
        let len = params.len() as u32;
        self.range[b] = ParamRange {
            start,
            len,
            cap: len,
        };
    }

    /// Rebuilds the pool without unused slots, each block's parameters mapped through `map`.
    fn rebuild(&mut self, mut map: impl FnMut(Value) -> Value) {
        let mut pool = Vec::with_capacity(self.range.values().map(|r| r.len as usize).sum());
        for r in self.range.as_mut_slice() {
            let start = pool.len() as u32;
            pool.extend(
                self.pool[r.start as usize..(r.start + r.len) as usize]
                    .iter()
                    .map(|&v| map(v)),
            );
            *r = ParamRange {
                start,
                len: r.len,
                cap: r.len,
            };
        }
        self.pool = pool;
    }

    fn shrink_to_fit(&mut self) {
        self.range.shrink_to_fit();
        self.pool.shrink_to_fit();
    }
}

impl std::ops::Index<Block> for BlockParams {
    type Output = [Value];
    #[inline]
    fn index(&self, b: Block) -> &[Value] {
        let r = self.range[b];
        &self.pool[r.start as usize..(r.start + r.len) as usize]
    }
}

/// A branch target with its arguments, as returned by `Function::branch_targets`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockCall<'a> {
    pub block: Block,
    pub args: &'a [Value],
}

/// The targets of one branch (none, one or two), held in place: reads as a slice of
/// `BlockCall`s and iterates by value.
#[derive(Clone, Copy, Debug)]
pub struct Targets<'a> {
    calls: [BlockCall<'a>; 2],
    len: u8,
}

impl<'a> Targets<'a> {
    fn new(calls: [BlockCall<'a>; 2], len: u8) -> Targets<'a> {
        Targets { calls, len }
    }
}

impl<'a> std::ops::Deref for Targets<'a> {
    type Target = [BlockCall<'a>];
    fn deref(&self) -> &[BlockCall<'a>] {
        &self.calls[..self.len as usize]
    }
}

impl<'a> IntoIterator for Targets<'a> {
    type Item = BlockCall<'a>;
    type IntoIter = std::iter::Take<std::array::IntoIter<BlockCall<'a>, 2>>;
    fn into_iter(self) -> Self::IntoIter {
        self.calls.into_iter().take(self.len as usize)
    }
}

impl<'a, 'b> IntoIterator for &'b Targets<'a> {
    type Item = &'b BlockCall<'a>;
    type IntoIter = std::slice::Iter<'b, BlockCall<'a>>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

/// One function body.
#[derive(Clone, Debug)]
pub struct Function {
    pub id: FuncId,
    pub name: String,
    pub insts: Insts,
    pub values: Values,
    uses: Uses,
    pub blocks: Blocks,
    layout: Layout,
}

impl Function {
    pub fn new(id: FuncId, name: impl Into<String>) -> Self {
        Function {
            id,
            name: name.into(),
            insts: Insts::default(),
            values: Values::default(),
            uses: Uses::default(),
            blocks: Blocks::default(),
            layout: Layout::default(),
        }
    }

    // ---- reading -------------------------------------------------------------------------

    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    pub fn uses(&self) -> &Uses {
        &self.uses
    }

    /// The calls in the layout, in order.
    pub fn calls(&self) -> Vec<Inst> {
        self.layout
            .blocks()
            .flat_map(|b| self.layout.block_insts(b))
            .filter(|&i| self.op(i) == Opcode::Call)
            .collect()
    }

    /// Instructions in the layout (the body's size).
    pub fn inst_count(&self) -> usize {
        self.layout
            .blocks()
            .map(|b| self.layout.block_insts(b).count())
            .sum()
    }

    pub fn entry(&self) -> Block {
        self.layout
            .entry_block()
            .expect("function has no entry block")
    }

    /// The entry block's parameters: the function's arguments.
    pub fn params(&self) -> &[Value] {
        &self.blocks.params[self.entry()]
    }

    pub fn num_blocks(&self) -> usize {
        self.blocks.params.len()
    }
    pub fn num_insts(&self) -> usize {
        self.insts.data.len()
    }
    pub fn num_values(&self) -> usize {
        self.values.ty.len()
    }

    #[inline]
    pub fn data(&self, i: Inst) -> &InstData {
        &self.insts.data[i]
    }
    #[inline]
    pub fn op(&self, i: Inst) -> Opcode {
        self.insts.data[i].op
    }

    /// The values `i` reads, in operand order.
    #[inline]
    pub fn args(&self, i: Inst) -> &[Value] {
        let r = self.insts.args[i];
        &self.uses.value.as_slice()[r.start as usize..(r.start + r.len) as usize]
    }

    #[inline]
    pub fn arg(&self, i: Inst, n: usize) -> Value {
        self.args(i)[n]
    }

    pub fn arg_uses(&self, i: Inst) -> impl DoubleEndedIterator<Item = Use> + ExactSizeIterator {
        self.insts.args[i].iter()
    }

    #[inline]
    pub fn result(&self, i: Inst) -> Option<Value> {
        self.insts.result[i]
    }

    /// The result of `i`, which must have one.
    #[inline]
    pub fn res(&self, i: Inst) -> Value {
        self.insts.result[i].unwrap_or_else(|| panic!("{i} has no result"))
    }

    #[inline]
    pub fn ty(&self, v: Value) -> Type {
        self.values.ty[v]
    }

    /// Where `v` is defined.
    #[inline]
    pub fn value_def(&self, v: Value) -> ValueDef {
        self.values.def[v].get()
    }

    /// The instruction defining `v`, if it is an instruction result.
    #[inline]
    pub fn def_inst(&self, v: Value) -> Option<Inst> {
        match self.value_def(v) {
            ValueDef::Result(i) => Some(i),
            ValueDef::Param(..) => None,
        }
    }

    /// The block where `v` is defined, if it is live in the layout.
    pub fn def_block(&self, v: Value) -> Option<Block> {
        match self.value_def(v) {
            ValueDef::Result(i) => self.layout.inst_block(i),
            ValueDef::Param(b, _) => Some(b),
        }
    }

    /// `Some(c)` if `v` is an `iconst c`.
    pub fn as_iconst(&self, v: Value) -> Option<i64> {
        let i = self.def_inst(v)?;
        let d = &self.insts.data[i];
        (d.op == Opcode::Iconst).then_some(d.imm)
    }

    /// Whether integer `v` is always 0 or 1 by its definition: an `i1`, a constant 0 or 1, a
    /// zero-extended `i1`, `x & 1`, or the sign bit shifted down (`x >>> (width - 1)`).
    pub fn is_zero_one(&self, v: Value) -> bool {
        let ty = self.ty(v);
        if ty == Type::I1 {
            return true;
        }
        let Some(i) = self.def_inst(v) else {
            return false;
        };
        let d = &self.insts.data[i];
        let args = self.args(i);
        let width = if ty == Type::I64 { 64 } else { 32 };
        match d.op {
            Opcode::Iconst => matches!(d.imm, 0 | 1),
            Opcode::Zext => self.ty(args[0]) == Type::I1,
            Opcode::And => args.iter().any(|&a| self.as_iconst(a) == Some(1)),
            Opcode::Lshr => self.as_iconst(args[1]) == Some(width - 1),
            _ => false,
        }
    }

    /// `Some(x)` if `v` is an `fconst.f32 x`.
    pub fn as_fconst(&self, v: Value) -> Option<f32> {
        let i = self.def_inst(v)?;
        let d = &self.insts.data[i];
        (d.op == Opcode::Fconst && d.ty == Type::F32).then(|| d.f32())
    }

    /// The uses of `v`, each one operand slot of a live instruction.
    pub fn uses_of(&self, v: Value) -> UsesOf<'_> {
        UsesOf {
            uses: &self.uses,
            next: self.uses.first.get(v).copied().flatten(),
        }
    }

    /// The uses of `v` by instructions in blocks `inside` rejects (a loop's outside uses).
    pub fn uses_outside(&self, v: Value, inside: impl Fn(Block) -> bool) -> Vec<Use> {
        self.uses_of(v)
            .filter(|&u| {
                let user = self.uses.user[u];
                self.layout.inst_block(user).is_some_and(|b| !inside(b))
            })
            .collect()
    }

    pub fn has_uses(&self, v: Value) -> bool {
        self.uses.first.get(v).copied().flatten().is_some()
    }

    pub fn num_uses(&self, v: Value) -> usize {
        self.uses_of(v).count()
    }

    /// Whether `v` has exactly one use (`num_uses(v) == 1` without walking a long list).
    pub fn has_one_use(&self, v: Value) -> bool {
        self.uses
            .first
            .get(v)
            .copied()
            .flatten()
            .is_some_and(|u| self.uses.next[u].is_none())
    }

    /// The terminator of `b`, if the block ends in one.
    pub fn terminator(&self, b: Block) -> Option<Inst> {
        let i = self.layout.last_inst(b)?;
        self.op(i).is_terminator().then_some(i)
    }

    /// Targets of a branch instruction with their arguments (empty for `ret`).
    pub fn branch_targets(&self, i: Inst) -> Targets<'_> {
        let d = &self.insts.data[i];
        let args = self.args(i);
        let none = BlockCall {
            block: Block::new(0),
            args: &[],
        };
        match d.op {
            Opcode::Jump => Targets::new(
                [
                    BlockCall {
                        block: Block::new(d.imm as usize),
                        args,
                    },
                    none,
                ],
                1,
            ),
            Opcode::Brif => {
                let (t, e) = brif_targets(d);
                let n = d.aux as usize;
                Targets::new(
                    [
                        BlockCall {
                            block: t,
                            args: &args[1..1 + n],
                        },
                        BlockCall {
                            block: e,
                            args: &args[1 + n..],
                        },
                    ],
                    2,
                )
            }
            _ => Targets::new([none, none], 0),
        }
    }

    /// Successor blocks of `b` (in terminator order; may repeat a block).
    pub fn succs(&self, b: Block) -> impl Iterator<Item = Block> + '_ {
        let t = self.terminator(b);
        let (d, n) = match t {
            Some(i) => (self.insts.data[i], self.insts.data[i].op),
            None => (
                InstData::new(Opcode::Unreachable, Type::Void),
                Opcode::Unreachable,
            ),
        };
        let (a, c) = match n {
            Opcode::Jump => (Some(Block::new(d.imm as usize)), None),
            Opcode::Brif => {
                let (t, e) = brif_targets(&d);
                (Some(t), Some(e))
            }
            _ => (None, None),
        };
        a.into_iter().chain(c)
    }

    pub fn callee(&self, i: Inst) -> FuncId {
        debug_assert_eq!(self.op(i), Opcode::Call);
        FuncId::new(self.insts.data[i].imm as usize)
    }

    pub fn global(&self, i: Inst) -> GlobalId {
        debug_assert_eq!(self.op(i), Opcode::Gaddr);
        GlobalId::from_bits(self.insts.data[i].imm as u64)
    }

    // ---- creating ------------------------------------------------------------------------

    /// Creates a block (not yet in the layout).
    pub fn make_block(&mut self) -> Block {
        self.blocks.params.push_block()
    }

    /// Appends a parameter of type `ty` to `b`.
    pub fn append_block_param(&mut self, b: Block, ty: Type) -> Value {
        let n = self.blocks.params[b].len() as u32;
        let v = self.make_value(ty, ValueDef::Param(b, n));
        self.blocks.params.push(b, v);
        v
    }

    /// Removes parameter `n` of `b`; later parameters shift down. The caller fixes the branch
    /// arguments and the parameter's uses.
    pub fn remove_block_param(&mut self, b: Block, n: usize) -> Value {
        let params = self.blocks.params.slice_mut(b);
        let v = params[n];
        params.copy_within(n + 1.., n);
        let len = params.len() - 1;
        self.blocks.params.truncate(b, len);
        for (k, &p) in self.blocks.params[b].iter().enumerate().skip(n) {
            self.values.def[p] = ValueDef::Param(b, k as u32).into();
        }
        v
    }

    /// Keeps the parameters of `b` that `keep` accepts, in order (as `remove_block_param` on
    /// each of the others). The caller fixes the branch arguments and the removed parameters'
    /// uses.
    pub fn retain_block_params(&mut self, b: Block, mut keep: impl FnMut(Value) -> bool) {
        let params = self.blocks.params.slice_mut(b);
        let mut n = 0;
        for k in 0..params.len() {
            let p = params[k];
            if !keep(p) {
                continue;
            }
            if n != k {
                params[n] = p;
                self.values.def[p] = ValueDef::Param(b, n as u32).into();
            }
            n += 1;
        }
        self.blocks.params.truncate(b, n);
    }

    fn make_value(&mut self, ty: Type, def: ValueDef) -> Value {
        let v = self.values.ty.push(ty);
        self.values.def.push(def.into());
        self.uses.first.push(None);
        v
    }

    /// Creates an instruction (not yet in the layout) reading `args`; it gets a result value
    /// when `data.ty` is not `Void`.
    pub fn make_inst(&mut self, data: InstData, args: &[Value]) -> Inst {
        let i = self.insts.data.push(data);
        let range = self.alloc_uses(i, args);
        self.insts.args.push(range);
        let res = (data.ty != Type::Void).then(|| self.make_value(data.ty, ValueDef::Result(i)));
        self.insts.result.push(res);
        i
    }

    fn alloc_uses(&mut self, user: Inst, args: &[Value]) -> UseRange {
        let start = self.uses.value.len() as u32;
        for &v in args {
            let u = self.uses.value.push(v);
            self.uses.user.push(user);
            self.uses.prev.push(Some(u));
            self.uses.next.push(None);
            self.link_use(u);
        }
        UseRange {
            start,
            len: args.len() as u32,
        }
    }

    fn link_use(&mut self, u: Use) {
        debug_assert!(!self.uses.is_linked(u));
        let v = self.uses.value[u];
        let head = self.uses.first[v];
        self.uses.prev[u] = None;
        self.uses.next[u] = head;
        if let Some(h) = head {
            self.uses.prev[h] = Some(u);
        }
        self.uses.first[v] = Some(u);
    }

    fn unlink_use(&mut self, u: Use) {
        if !self.uses.is_linked(u) {
            return;
        }
        let v = self.uses.value[u];
        let (p, n) = (self.uses.prev[u], self.uses.next[u]);
        match p {
            Some(p) => self.uses.next[p] = n,
            None => self.uses.first[v] = n,
        }
        if let Some(n) = n {
            self.uses.prev[n] = p;
        }
        self.uses.prev[u] = Some(u);
        self.uses.next[u] = None;
    }

    // ---- editing operands ----------------------------------------------------------------

    /// Points operand slot `u` at `v`.
    pub fn set_use(&mut self, u: Use, v: Value) {
        if self.uses.value[u] == v && self.uses.is_linked(u) {
            return;
        }
        self.unlink_use(u);
        self.uses.value[u] = v;
        self.link_use(u);
    }

    /// Sets operand `n` of `i`.
    pub fn set_arg(&mut self, i: Inst, n: usize, v: Value) {
        let u = self.insts.args[i].get(n);
        self.set_use(u, v);
    }

    /// Replaces every use of `old` by `new`. O(uses of old), no allocation.
    pub fn replace_all_uses(&mut self, old: Value, new: Value) {
        if old == new {
            return;
        }
        while let Some(u) = self.uses.first[old] {
            self.unlink_use(u);
            self.uses.value[u] = new;
            self.link_use(u);
        }
    }

    /// Replaces the whole operand list of `i`. Reuses the slots when the count is unchanged,
    /// otherwise takes a fresh range at the end (old slots are unlinked).
    pub fn set_args(&mut self, i: Inst, args: &[Value]) {
        let r = self.insts.args[i];
        if r.len as usize == args.len() {
            for (u, &v) in r.iter().zip(args) {
                self.set_use(u, v);
            }
            return;
        }
        for u in r.iter() {
            self.unlink_use(u);
        }
        let nr = self.alloc_uses(i, args);
        self.insts.args[i] = nr;
    }

    /// Replaces the instruction row of `i`, keeping its operands and result.
    pub fn set_data(&mut self, i: Inst, data: InstData) {
        debug_assert_eq!(
            self.insts.data[i].ty == Type::Void,
            data.ty == Type::Void,
            "set_data cannot add or drop a result"
        );
        if let Some(r) = self.insts.result[i] {
            self.values.ty[r] = data.ty;
        }
        self.insts.data[i] = data;
    }

    /// Rewrites `i` in place to `data(args)`, keeping its result value (so its users stay).
    pub fn replace_inst(&mut self, i: Inst, data: InstData, args: &[Value]) {
        self.set_data(i, data);
        self.set_args(i, args);
    }

    // ---- branches ------------------------------------------------------------------------

    /// The positions among branch `i`'s targets (as `branch_targets` lists them) that go to `b`.
    pub fn edges_to(&self, i: Inst, b: Block) -> Vec<usize> {
        self.branch_targets(i)
            .iter()
            .enumerate()
            .filter(|(_, c)| c.block == b)
            .map(|(k, _)| k)
            .collect()
    }

    /// Arguments passed to target `which` (0 = jump target / brif then, 1 = brif else).
    pub fn branch_args(&self, i: Inst, which: usize) -> &[Value] {
        self.branch_targets(i)[which].args
    }

    /// Sets target `which` of branch `i` to `to(args)`.
    pub fn set_branch_target(&mut self, i: Inst, which: usize, to: Block, args: &[Value]) {
        let d = self.insts.data[i];
        match d.op {
            Opcode::Jump => {
                assert_eq!(which, 0);
                self.insts.data[i].imm = to.index() as i64;
                self.set_args(i, args);
            }
            Opcode::Brif => {
                let (t, e) = brif_targets(&d);
                let all = self.args(i).to_vec();
                let n = d.aux as usize;
                let (cond, targs, eargs) = (all[0], &all[1..1 + n], &all[1 + n..]);
                let mut new = vec![cond];
                let (nt, ne) = if which == 0 {
                    new.extend_from_slice(args);
                    new.extend_from_slice(eargs);
                    (to, e)
                } else {
                    new.extend_from_slice(targs);
                    new.extend_from_slice(args);
                    (t, to)
                };
                let aux = if which == 0 {
                    args.len() as u32
                } else {
                    n as u32
                };
                self.insts.data[i].aux = aux;
                self.insts.data[i].imm = pack_targets(nt, ne);
                self.set_args(i, &new);
            }
            op => panic!("{i}: {} is not a branch", op.name()),
        }
    }

    /// Rewrites every edge of terminator `i` that goes to `from` so that it goes to `to`,
    /// keeping the arguments.
    pub fn retarget(&mut self, i: Inst, from: Block, to: Block) {
        let targets: Vec<(Block, Vec<Value>)> = self
            .branch_targets(i)
            .iter()
            .map(|c| (c.block, c.args.to_vec()))
            .collect();
        for (k, (b, args)) in targets.iter().enumerate() {
            if *b == from {
                self.set_branch_target(i, k, to, args);
            }
        }
    }

    /// Appends `v` to the arguments of every edge of branch `i` into a block `into` accepts.
    pub fn push_branch_arg(&mut self, i: Inst, v: Value, into: impl Fn(Block) -> bool) {
        if !self.branch_targets(i).iter().any(|c| into(c.block)) {
            return;
        }
        let targets: Vec<(Block, Vec<Value>)> = self
            .branch_targets(i)
            .iter()
            .map(|c| (c.block, c.args.to_vec()))
            .collect();
        for (k, (b, mut args)) in targets.into_iter().enumerate() {
            if into(b) {
                args.push(v);
                self.set_branch_target(i, k, b, &args);
            }
        }
    }

    // ---- layout edits --------------------------------------------------------------------

    pub fn append_block(&mut self, b: Block) {
        self.layout.append_block(b);
    }

    pub fn insert_block_after(&mut self, b: Block, after: Block) {
        self.layout.insert_block_after(b, after);
    }

    /// Moves `b` (with its instructions) right after `after` in the block order.
    pub fn move_block_after(&mut self, b: Block, after: Block) {
        self.layout.remove_block(b);
        self.layout.insert_block_after(b, after);
    }

    /// Removes `b` and all its instructions (their uses are unlinked). The caller makes sure no
    /// branch targets it and its values are unused.
    pub fn remove_block(&mut self, b: Block) {
        let mut cur = self.layout.first_inst(b);
        while let Some(i) = cur {
            cur = self.layout.next_inst(i);
            self.remove_inst(i);
        }
        self.layout.remove_block(b);
    }

    pub fn append_inst(&mut self, i: Inst, b: Block) {
        self.layout.append_inst(i, b);
    }

    pub fn insert_inst_before(&mut self, i: Inst, before: Inst) {
        self.layout.insert_inst_before(i, before);
    }

    pub fn insert_inst_after(&mut self, i: Inst, after: Inst) {
        self.layout.insert_inst_after(i, after);
    }

    /// Unlinks `i` from the layout and its operands from their use lists. Its result must be
    /// unused (or its uses replaced first).
    pub fn remove_inst(&mut self, i: Inst) {
        for u in self.insts.args[i].iter() {
            self.unlink_use(u);
        }
        self.layout.remove_inst(i);
    }

    /// Moves `i` (already in the layout) to right before `before`.
    pub fn move_inst_before(&mut self, i: Inst, before: Inst) {
        self.layout.remove_inst(i);
        self.layout.insert_inst_before(i, before);
    }

    /// Moves `i` to the end of `b` (before nothing: callers move before the terminator).
    pub fn move_inst_to_end(&mut self, i: Inst, b: Block) {
        self.layout.remove_inst(i);
        self.layout.append_inst(i, b);
    }

    /// Moves the instructions from `i` to the end of its block into `to` (at its end).
    pub fn split_tail(&mut self, i: Inst, to: Block) {
        self.layout.split_tail(i, to);
    }

    /// Creates and appends `data(args)` to the end of `b`; returns the instruction.
    pub fn append_new(&mut self, b: Block, data: InstData, args: &[Value]) -> Inst {
        let i = self.make_inst(data, args);
        self.layout.append_inst(i, b);
        i
    }

    /// Creates `data(args)` right before `before`; returns the instruction.
    pub fn insert_new_before(&mut self, before: Inst, data: InstData, args: &[Value]) -> Inst {
        let i = self.make_inst(data, args);
        self.layout.insert_inst_before(i, before);
        i
    }

    /// Makes room in the tables for at least `insts` more instructions, `values` more values and
    /// `uses` more operand slots (a body about to be built whose size is guessed: the tables
    /// then grow without copying).
    pub fn reserve(&mut self, insts: usize, values: usize, uses: usize) {
        let Insts { data, args, result } = &mut self.insts;
        data.reserve(insts);
        args.reserve(insts);
        result.reserve(insts);
        self.values.ty.reserve(values);
        self.values.def.reserve(values);
        let Uses {
            value,
            user,
            prev,
            next,
            first,
        } = &mut self.uses;
        value.reserve(uses);
        user.reserve(uses);
        prev.reserve(uses);
        next.reserve(uses);
        first.reserve(values);
        self.layout.reserve_insts(insts);
    }

    /// Gives back the capacity of every table beyond its length (the tables grow by doubling
    /// while passes edit; nothing is renumbered).
    pub fn shrink_to_fit(&mut self) {
        let Insts { data, args, result } = &mut self.insts;
        data.shrink_to_fit();
        args.shrink_to_fit();
        result.shrink_to_fit();
        self.values.ty.shrink_to_fit();
        self.values.def.shrink_to_fit();
        let Uses {
            value,
            user,
            prev,
            next,
            first,
        } = &mut self.uses;
        value.shrink_to_fit();
        user.shrink_to_fit();
        prev.shrink_to_fit();
        next.shrink_to_fit();
        first.shrink_to_fit();
        self.blocks.params.shrink_to_fit();
        self.layout.shrink_to_fit();
    }

    /// Drops the rows of removed instructions, of values nothing defines any more (results of
    /// removed instructions, removed block parameters) and of unlinked operand slots, and
    /// renumbers the rest in their old order: ids change, relative order does not, and every
    /// value's use list keeps its order. Blocks keep their ids (branch rows and labels name
    /// them). Cached analyses of `self` are stale afterwards.
    ///
    /// An instruction stays if it is in the layout, reads through a linked slot or defines a
    /// value still read; a value stays if a remaining instruction or a block parameter defines
    /// it. Cost: O(rows).
    pub fn compact(&mut self) {
        let ni = self.insts.data.len();
        let nv = self.values.ty.len();
        let nu = self.uses.value.len();
        // Instructions that stay, with their new ids; the values they define and the operand
        // slots they read stay with them.
        let mut new_inst: Vec<Option<Inst>> = Vec::with_capacity(ni);
        let mut keep_value = vec![false; nv];
        let mut keep_use = vec![false; nu];
        let mut kept_insts = 0usize;
        let mut kept_uses = 0usize;
        {
            let uses = &self.uses;
            let first = self.uses.first.as_slice();
            let results = self.insts.result.as_slice();
            for (k, (&args, &result)) in self.insts.args.as_slice().iter().zip(results).enumerate()
            {
                let slots = args.start as usize..(args.start + args.len) as usize;
                let keep = self.layout.inst_block(Inst::new(k)).is_some()
                    || slots.clone().any(|u| uses.is_linked(Use::new(u)))
                    || result.is_some_and(|v| first[v.index()].is_some());
                if !keep {
                    new_inst.push(None);
                    continue;
                }
                new_inst.push(Some(Inst::new(kept_insts)));
                kept_insts += 1;
                if let Some(v) = result {
                    keep_value[v.index()] = true;
                }
                kept_uses += slots.len();
                keep_use[slots].fill(true);
            }
        }
        // Values that stay: current block parameters and results of remaining instructions.
        for (_, params) in self.blocks.params.iter() {
            for &p in params {
                keep_value[p.index()] = true;
            }
        }
        let mut new_value: Vec<Option<Value>> = Vec::with_capacity(nv);
        let mut kept_values = 0usize;
        for &k in &keep_value {
            if k {
                new_value.push(Some(Value::new(kept_values)));
                kept_values += 1;
            } else {
                new_value.push(None);
            }
        }
        if kept_insts == ni && kept_values == nv && kept_uses == nu {
            // Every row stays, so every id stays: only the parameter pool may hold unused slots.
            self.blocks.params.rebuild(|v| v);
            return;
        }
        let value_of = |v: Value| new_value[v.index()].expect("a value read or defined is kept");
        // Operand slots of remaining instructions, in their old order (ranges stay contiguous),
        // with the value and the instruction of each.
        let old_uses = std::mem::take(&mut self.uses);
        let mut new_use: Vec<Option<Use>> = Vec::with_capacity(nu);
        let mut value: Vec<Value> = Vec::with_capacity(kept_uses);
        let mut user: Vec<Inst> = Vec::with_capacity(kept_uses);
        for ((&k, &v), &i) in keep_use
            .iter()
            .zip(old_uses.value.as_slice())
            .zip(old_uses.user.as_slice())
        {
            if k {
                new_use.push(Some(Use::new(value.len())));
                value.push(value_of(v));
                user.push(new_inst[i.index()].expect("user kept"));
            } else {
                new_use.push(None);
            }
        }
        drop(keep_use);
        let n = value.len();
        // Every slot starts in no list (its own predecessor).
        let mut prev: Vec<Option<Use>> = (0..n).map(|u| Some(Use::new(u))).collect();
        let mut next: Vec<Option<Use>> = vec![None; n];
        let mut first: Vec<Option<Use>> = vec![None; kept_values];
        // Use lists in their old order, through kept slots only.
        let (old_first, old_next) = (old_uses.first.as_slice(), old_uses.next.as_slice());
        for (&head, &nv) in old_first.iter().zip(&new_value) {
            let Some(nv) = nv else { continue };
            let mut last: Option<Use> = None;
            let mut cur = head;
            while let Some(u) = cur {
                cur = old_next[u.index()];
                let Some(nu) = new_use[u.index()] else {
                    continue;
                };
                prev[nu.index()] = last;
                match last {
                    Some(l) => next[l.index()] = Some(nu),
                    None => first[nv.index()] = Some(nu),
                }
                last = Some(nu);
            }
        }
        drop(old_uses);
        self.uses = Uses {
            value: IdVec::from_vec(value),
            user: IdVec::from_vec(user),
            prev: IdVec::from_vec(prev),
            next: IdVec::from_vec(next),
            first: IdVec::from_vec(first),
        };
        // Instruction and value columns.
        let old = std::mem::take(&mut self.insts);
        let mut data = Vec::with_capacity(kept_insts);
        let mut args = Vec::with_capacity(kept_insts);
        let mut result = Vec::with_capacity(kept_insts);
        for (((k, &d), &r), &res) in new_inst
            .iter()
            .zip(old.data.as_slice())
            .zip(old.args.as_slice())
            .zip(old.result.as_slice())
        {
            if k.is_none() {
                continue;
            }
            let start = match r.len {
                0 => n as u32,
                _ => new_use[r.start as usize].expect("operand kept").index() as u32,
            };
            data.push(d);
            args.push(UseRange { start, len: r.len });
            result.push(res.map(value_of));
        }
        drop(old);
        self.insts = Insts {
            data: IdVec::from_vec(data),
            args: IdVec::from_vec(args),
            result: IdVec::from_vec(result),
        };
        let old = std::mem::take(&mut self.values);
        let mut ty = Vec::with_capacity(kept_values);
        let mut def = Vec::with_capacity(kept_values);
        for ((&k, &t), &d) in keep_value
            .iter()
            .zip(old.ty.as_slice())
            .zip(old.def.as_slice())
        {
            if !k {
                continue;
            }
            ty.push(t);
            def.push(match d.get() {
                ValueDef::Result(i) => {
                    ValueDef::Result(new_inst[i.index()].expect("def kept")).into()
                }
                ValueDef::Param(..) => d,
            });
        }
        self.values = Values {
            ty: IdVec::from_vec(ty),
            def: IdVec::from_vec(def),
        };
        self.blocks.params.rebuild(value_of);
        self.layout.renumber_insts(&new_inst, kept_insts);
    }

    /// Compacts the use table: drops unlinked slots and renumbers operand ranges. Values,
    /// instructions and blocks keep their ids.
    pub fn compact_uses(&mut self) {
        let new = Uses {
            first: IdVec::filled(self.values.ty.len(), None),
            ..Default::default()
        };
        let old = std::mem::take(&mut self.uses);
        self.uses = new;
        let blocks: Vec<Block> = self.layout.blocks().collect();
        let mut ranges =
            IdVec::<Inst, UseRange>::filled(self.insts.data.len(), UseRange::default());
        for b in blocks {
            let insts: Vec<Inst> = self.layout.block_insts(b).collect();
            for i in insts {
                let r = self.insts.args[i];
                let args: Vec<Value> = r.iter().map(|u| old.value[u]).collect();
                ranges[i] = self.alloc_uses(i, &args);
            }
        }
        self.insts.args = ranges;
    }
}

/// The two targets of a `brif` row.
pub fn brif_targets(d: &InstData) -> (Block, Block) {
    let bits = d.imm as u64;
    (
        Block::new((bits & 0xffff_ffff) as usize),
        Block::new((bits >> 32) as usize),
    )
}

/// Rewrites the targets of a branch row (`jump`, `brif`) through `m`; other rows are unchanged.
pub fn map_targets(d: &mut InstData, m: impl Fn(Block) -> Block) {
    match d.op {
        Opcode::Jump => d.imm = m(Block::new(d.imm as usize)).index() as i64,
        Opcode::Brif => {
            let (t, e) = brif_targets(d);
            d.imm = pack_targets(m(t), m(e));
        }
        _ => {}
    }
}

/// Packs two `brif` targets into an `imm`.
pub fn pack_targets(then: Block, els: Block) -> i64 {
    ((then.index() as u64) | ((els.index() as u64) << 32)) as i64
}

/// Iterator over the uses of one value.
pub struct UsesOf<'a> {
    uses: &'a Uses,
    next: Option<Use>,
}

impl Iterator for UsesOf<'_> {
    type Item = Use;
    fn next(&mut self) -> Option<Use> {
        let u = self.next?;
        self.next = self.uses.next[u];
        Some(u)
    }
}

/// Row constructors for the common instructions.
pub mod mk {
    use super::*;

    pub fn iconst(ty: Type, v: i64) -> InstData {
        InstData::with_imm(Opcode::Iconst, ty, v)
    }
    pub fn fconst(v: f32) -> InstData {
        InstData::with_imm(Opcode::Fconst, Type::F32, v.to_bits() as i64)
    }
    pub fn binary(op: Opcode, ty: Type) -> InstData {
        InstData::new(op, ty)
    }
    pub fn icmp(c: CmpCond) -> InstData {
        InstData {
            op: Opcode::Icmp,
            ty: Type::I1,
            aux: c as u32,
            imm: 0,
        }
    }
    pub fn fcmp(c: CmpCond) -> InstData {
        InstData {
            op: Opcode::Fcmp,
            ty: Type::I1,
            aux: c as u32,
            imm: 0,
        }
    }
    pub fn alloca(size: u64, align: u32) -> InstData {
        InstData {
            op: Opcode::Alloca,
            ty: Type::Ptr,
            aux: align,
            imm: size as i64,
        }
    }
    pub fn gaddr(g: GlobalId) -> InstData {
        InstData::with_imm(Opcode::Gaddr, Type::Ptr, g.to_bits() as i64)
    }
    pub fn gep(stride: i64) -> InstData {
        InstData::with_imm(Opcode::Gep, Type::Ptr, stride)
    }
    pub fn offset(bytes: i64) -> InstData {
        InstData::with_imm(Opcode::Offset, Type::Ptr, bytes)
    }
    pub fn load(ty: Type) -> InstData {
        InstData::new(Opcode::Load, ty)
    }
    pub fn store() -> InstData {
        InstData::new(Opcode::Store, Type::Void)
    }
    pub fn call(callee: FuncId, ret: Type) -> InstData {
        InstData::with_imm(Opcode::Call, ret, callee.index() as i64)
    }
    pub fn jump(to: Block) -> InstData {
        InstData::with_imm(Opcode::Jump, Type::Void, to.index() as i64)
    }
    /// `brif cond, then(then_args..), else(..)` where `then_args` has `n_then` values.
    pub fn brif(then: Block, els: Block, n_then: usize) -> InstData {
        InstData {
            op: Opcode::Brif,
            ty: Type::Void,
            aux: n_then as u32,
            imm: pack_targets(then, els),
        }
    }
    pub fn ret() -> InstData {
        InstData::new(Opcode::Ret, Type::Void)
    }
    pub fn unreachable() -> InstData {
        InstData::new(Opcode::Unreachable, Type::Void)
    }
    pub fn unary(op: Opcode, ty: Type) -> InstData {
        InstData::new(op, ty)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> (Function, Block, Value, Value, Inst) {
        let mut f = Function::new(FuncId::new(0), "f");
        let b = f.make_block();
        f.append_block(b);
        let x = f.append_block_param(b, Type::I32);
        let c = f.append_new(b, mk::iconst(Type::I32, 2), &[]);
        let c = f.res(c);
        let add = f.append_new(b, mk::binary(Opcode::Add, Type::I32), &[x, c]);
        (f, b, x, c, add)
    }

    #[test]
    fn block_params_grow_shrink_and_compact_in_the_pool() {
        let mut f = Function::new(FuncId::new(0), "f");
        let (a, b) = (f.make_block(), f.make_block());
        f.append_block(a);
        f.append_block(b);
        // Interleaved appends move each block's parameters to larger regions.
        let mut pa = Vec::new();
        let mut pb = Vec::new();
        for _ in 0..5 {
            pa.push(f.append_block_param(a, Type::I32));
            pb.push(f.append_block_param(b, Type::F32));
        }
        assert_eq!(&f.blocks.params[a], &pa[..]);
        assert_eq!(&f.blocks.params[b], &pb[..]);
        assert_eq!(f.remove_block_param(a, 1), pa.remove(1));
        let gone = [pb[0], pb[3]];
        f.retain_block_params(b, |v| !gone.contains(&v));
        pb.retain(|v| !gone.contains(v));
        // Shrunk regions take new parameters in place.
        pa.push(f.append_block_param(a, Type::I32));
        assert_eq!(&f.blocks.params[a], &pa[..]);
        assert_eq!(&f.blocks.params[b], &pb[..]);
        for (blk, ps) in [(a, &pa), (b, &pb)] {
            for (k, &p) in ps.iter().enumerate() {
                assert_eq!(f.value_def(p), ValueDef::Param(blk, k as u32));
            }
        }
        f.append_new(a, mk::jump(b), &[pa[0]; 3]);
        f.append_new(b, mk::ret(), &[]);
        // Compacting renumbers the values (the removed ones go) and packs the pool.
        f.compact();
        let (na, nb) = (f.blocks.params[a].len(), f.blocks.params[b].len());
        assert_eq!((na, nb), (5, 3));
        for blk in [a, b] {
            for (k, &p) in f.blocks.params[blk].iter().enumerate() {
                assert_eq!(f.value_def(p), ValueDef::Param(blk, k as u32));
            }
        }
        assert_eq!(f.blocks.params[a][0], Value::new(0));
    }

    #[test]
    fn use_lists_follow_edits() {
        let (mut f, b, x, c, add) = sample();
        assert_eq!(f.num_uses(x), 1);
        assert_eq!(f.args(add), &[x, c]);
        f.set_arg(add, 1, x);
        assert_eq!(f.num_uses(x), 2);
        assert_eq!(f.num_uses(c), 0);
        let y = f.append_block_param(b, Type::I32);
        f.replace_all_uses(x, y);
        assert_eq!(f.num_uses(x), 0);
        assert_eq!(f.num_uses(y), 2);
        assert_eq!(f.args(add), &[y, y]);
        f.set_args(add, &[c, y, x]);
        assert_eq!(f.args(add), &[c, y, x]);
        assert_eq!(f.num_uses(y), 1);
        f.remove_inst(add);
        assert!(!f.has_uses(y) && !f.has_uses(c) && !f.has_uses(x));
    }

    #[test]
    fn compact_keeps_operands() {
        let (mut f, _b, x, c, add) = sample();
        f.set_args(add, &[c, x, x]);
        f.set_args(add, &[x, c]);
        f.compact_uses();
        assert_eq!(f.args(add), &[x, c]);
        assert_eq!(f.uses().value.len(), 2);
        assert_eq!(f.num_uses(x), 1);
    }

    #[test]
    fn compact_drops_removed_rows_and_keeps_order() {
        let (mut f, b, x, c, add) = sample();
        let sum = f.res(add);
        let dead = f.append_new(b, mk::binary(Opcode::Mul, Type::I32), &[x, x]);
        let mul = f.append_new(b, mk::binary(Opcode::Mul, Type::I32), &[sum, x]);
        f.remove_inst(dead);
        f.set_args(add, &[x, c]); // a fresh operand range; the old slots are unlinked
        let users = |f: &Function, v: Value| -> Vec<Inst> {
            f.uses_of(v).map(|u| f.uses().user[u]).collect()
        };
        assert_eq!(users(&f, x), vec![mul, add]); // newest use first
        f.compact();
        // Rows: iconst, add, mul; values x, c, sum, the product; four operand slots.
        assert_eq!((f.num_insts(), f.num_values()), (3, 4));
        assert_eq!(f.uses().value.len(), 4);
        let insts: Vec<Inst> = f.layout().block_insts(b).collect();
        assert_eq!(insts, vec![Inst::new(0), Inst::new(1), Inst::new(2)]);
        let (add, mul) = (insts[1], insts[2]);
        assert_eq!(f.args(add), &[x, c]);
        assert_eq!(f.args(mul), &[sum, x]);
        assert_eq!(f.res(mul), Value::new(3));
        assert_eq!(f.value_def(Value::new(3)), ValueDef::Result(mul));
        assert_eq!(users(&f, x), vec![mul, add]);
        assert_eq!(users(&f, sum), vec![mul]);
        assert_eq!(f.params(), &[x]);
    }

    #[test]
    fn brif_edits_keep_argument_split() {
        let mut f = Function::new(FuncId::new(0), "f");
        let (b0, b1, b2, b3) = (
            f.make_block(),
            f.make_block(),
            f.make_block(),
            f.make_block(),
        );
        for b in [b0, b1, b2, b3] {
            f.append_block(b);
        }
        let p = f.append_block_param(b0, Type::I1);
        let x = f.append_block_param(b0, Type::I32);
        let br = f.append_new(b0, mk::brif(b1, b2, 1), &[p, x, x, x]);
        assert_eq!(f.branch_args(br, 0), &[x]);
        assert_eq!(f.branch_args(br, 1), &[x, x]);
        f.set_branch_target(br, 0, b3, &[x, x, x]);
        let t = f.branch_targets(br);
        assert_eq!((t[0].block, t[0].args.len()), (b3, 3));
        assert_eq!((t[1].block, t[1].args.len()), (b2, 2));
        assert_eq!(f.succs(b0).collect::<Vec<_>>(), vec![b3, b2]);
        f.retarget(br, b2, b1);
        assert_eq!(f.succs(b0).collect::<Vec<_>>(), vec![b3, b1]);
        assert_eq!(f.num_uses(x), 5);
    }
}
