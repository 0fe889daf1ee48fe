//! A cursor that creates instructions at a position: the end of a block or before an
//! instruction. Lowering appends at the end of the current block; passes insert before a point.

use super::func::{mk, Function};
use super::inst::{CmpCond, InstData, Opcode, Type};
use super::module::{FuncId, GlobalId};
use super::{Block, Inst, Value};

/// Where the builder puts new instructions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pos {
    /// Nowhere: the builder has no current block (code after `return`, say).
    Nowhere,
    /// At the end of a block.
    End(Block),
    /// Right before an instruction.
    Before(Inst),
}

/// Instruction builder over one function.
pub struct Builder<'f> {
    pub f: &'f mut Function,
    pub pos: Pos,
}

impl<'f> Builder<'f> {
    pub fn new(f: &'f mut Function) -> Self {
        Builder {
            f,
            pos: Pos::Nowhere,
        }
    }

    pub fn at_end(f: &'f mut Function, b: Block) -> Self {
        Builder {
            f,
            pos: Pos::End(b),
        }
    }

    pub fn before(f: &'f mut Function, i: Inst) -> Self {
        Builder {
            f,
            pos: Pos::Before(i),
        }
    }

    /// The block new instructions go to.
    pub fn block(&self) -> Option<Block> {
        match self.pos {
            Pos::Nowhere => None,
            Pos::End(b) => Some(b),
            Pos::Before(i) => self.f.layout().inst_block(i),
        }
    }

    pub fn switch_to(&mut self, b: Block) {
        self.pos = Pos::End(b);
    }

    /// Whether the current block already ends in a terminator (or there is none).
    pub fn is_terminated(&self) -> bool {
        match self.pos {
            Pos::Nowhere => true,
            Pos::End(b) => self.f.terminator(b).is_some(),
            Pos::Before(_) => false,
        }
    }

    /// Creates `data(args)` at the cursor and returns the instruction.
    pub fn inst(&mut self, data: InstData, args: &[Value]) -> Inst {
        let i = self.f.make_inst(data, args);
        match self.pos {
            Pos::End(b) => self.f.append_inst(i, b),
            Pos::Before(at) => self.f.insert_inst_before(i, at),
            Pos::Nowhere => panic!("builder has no position"),
        }
        i
    }

    /// Creates `data(args)` and returns its result.
    pub fn value(&mut self, data: InstData, args: &[Value]) -> Value {
        let i = self.inst(data, args);
        self.f.res(i)
    }

    pub fn iconst(&mut self, v: i32) -> Value {
        self.value(mk::iconst(Type::I32, v as i64), &[])
    }
    pub fn iconst_ty(&mut self, ty: Type, v: i64) -> Value {
        self.value(mk::iconst(ty, v), &[])
    }
    pub fn fconst(&mut self, v: f32) -> Value {
        self.value(mk::fconst(v), &[])
    }
    pub fn binary(&mut self, op: Opcode, a: Value, b: Value) -> Value {
        let ty = self.f.ty(a);
        self.value(mk::binary(op, ty), &[a, b])
    }
    pub fn unary(&mut self, op: Opcode, ty: Type, a: Value) -> Value {
        self.value(mk::unary(op, ty), &[a])
    }
    pub fn icmp(&mut self, c: CmpCond, a: Value, b: Value) -> Value {
        self.value(mk::icmp(c), &[a, b])
    }
    pub fn fcmp(&mut self, c: CmpCond, a: Value, b: Value) -> Value {
        self.value(mk::fcmp(c), &[a, b])
    }
    pub fn select(&mut self, c: Value, a: Value, b: Value) -> Value {
        let ty = self.f.ty(a);
        self.value(InstData::new(Opcode::Select, ty), &[c, a, b])
    }
    pub fn alloca(&mut self, size: u64, align: u32) -> Value {
        self.value(mk::alloca(size, align), &[])
    }
    pub fn gaddr(&mut self, g: GlobalId) -> Value {
        self.value(mk::gaddr(g), &[])
    }
    /// `base + sext(index) * stride`.
    pub fn gep(&mut self, base: Value, index: Value, stride: i64) -> Value {
        self.value(mk::gep(stride), &[base, index])
    }
    pub fn offset(&mut self, base: Value, bytes: i64) -> Value {
        self.value(mk::offset(bytes), &[base])
    }
    pub fn load(&mut self, ty: Type, ptr: Value) -> Value {
        self.value(mk::load(ty), &[ptr])
    }
    pub fn store(&mut self, val: Value, ptr: Value) -> Inst {
        self.inst(mk::store(), &[val, ptr])
    }
    /// A call; returns the result value if `ret` is not void.
    pub fn call(&mut self, callee: FuncId, ret: Type, args: &[Value]) -> Option<Value> {
        let i = self.inst(mk::call(callee, ret), args);
        self.f.result(i)
    }
    pub fn jump(&mut self, to: Block, args: &[Value]) -> Inst {
        self.inst(mk::jump(to), args)
    }
    pub fn brif(
        &mut self,
        c: Value,
        then: Block,
        then_args: &[Value],
        els: Block,
        else_args: &[Value],
    ) -> Inst {
        let mut args = Vec::with_capacity(1 + then_args.len() + else_args.len());
        args.push(c);
        args.extend_from_slice(then_args);
        args.extend_from_slice(else_args);
        self.inst(mk::brif(then, els, then_args.len()), &args)
    }
    pub fn ret(&mut self, v: Option<Value>) -> Inst {
        match v {
            Some(v) => self.inst(mk::ret(), &[v]),
            None => self.inst(mk::ret(), &[]),
        }
    }
}
