//! Instruction selection: IR function -> machine IR over virtual registers.
//!
//! Phases:
//! 1. Number the reachable blocks (layout order) and give every non-rematerializable IR value a
//!    virtual register; collect allocas as stack objects.
//! 2. Walk the blocks; for each IR instruction emit machine instructions. Constants, global and
//!    stack addresses and stack-passed parameters are *rematerialized*: emitted right before
//!    each use instead of occupying a register from their definition on. Immediate forms,
//!    `x0` for zero, address offsets folded into loads/stores, and compares fused into branches.
//! 3. Block arguments become parallel copies (see `phi`): before a `jump`, or in a new edge
//!    block for each `brif` edge that passes arguments (this splits every critical edge that
//!    needs copies; the edge block is placed right after its source block).
//! 4. Calls follow lp64d: see `classify_args`. Arguments move into fixed registers right before
//!    the call, results out of `a0`/`fa0` right after it, parameters out of their registers at
//!    the top of the entry block; so physical registers are live only inside one block.
//! 5. Dead machine instructions (pure, result unused: e.g. an `offset` folded into every load)
//!    are swept.
//!
//! Cost: O(instructions + operands) plus the O(n^2) copy sequencing per edge.

use super::isa::Isa;
use super::minst::*;
use super::phi;
use crate::analysis::alias::{self, Base};
use crate::analysis::{Cfg, DomTree, Loop, LoopForest};
use crate::ir::entity::IdVec;
use crate::ir::pattern::{abs_select, is_negation_of, sign_test};
use crate::ir::{
    func_symbol, global_symbol, Block, CmpCond, FuncId, Function, GlobalId, Inst, ModuleCx, Opcode,
    Type, Value,
};
use rustc_hash::{FxHashMap, FxHashSet};

/// Where an argument travels under lp64d.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgLoc {
    /// Integer register `a{n}`.
    Int(u32),
    /// Float register `fa{n}`.
    Float(u32),
    /// A float in integer register `a{n}` (float registers exhausted, or variadic).
    FloatInInt(u32),
    /// Stack slot `n` (8 bytes each) of the outgoing area.
    Stack(u32),
}

/// Assigns argument locations under lp64d: floating-point arguments go in `fa0-fa7` while
/// available, then in `a0-a7` like integers, then on the stack; integers in `a0-a7`, then on
/// the stack; each stack argument takes 8 bytes in order. Variadic arguments (index >=
/// `fixed`) always follow the integer convention.
pub fn classify_args(tys: &[Type], fixed: usize) -> Vec<ArgLoc> {
    let (mut ni, mut nf, mut ns) = (0u32, 0u32, 0u32);
    tys.iter()
        .enumerate()
        .map(|(k, &ty)| {
            if ty.is_float() && k < fixed && nf < 8 {
                nf += 1;
                ArgLoc::Float(nf - 1)
            } else if ni < 8 {
                ni += 1;
                if ty.is_float() {
                    ArgLoc::FloatInInt(ni - 1)
                } else {
                    ArgLoc::Int(ni - 1)
                }
            } else {
                ns += 1;
                ArgLoc::Stack(ns - 1)
            }
        })
        .collect()
}

/// A value that is recomputed at each use instead of living in a register.
#[derive(Clone, Copy, Debug)]
enum Remat {
    Iconst(i64),
    Fconst(Type, u64),
    Gaddr(u32),
    Object(u32),
    /// Stack parameter: byte offset in the incoming area, type.
    Incoming(i64, Type),
}

/// The buffers of `Isel::copies`: register copies, rematerialized sources, the moves in order.
#[derive(Default)]
struct CopyBufs {
    regs: Vec<(Reg, Reg)>,
    remats: Vec<(Reg, Value)>,
    seq: Vec<(Reg, Reg)>,
}

struct Isel<'a> {
    f: &'a Function,
    cx: &'a ModuleCx,
    mf: MFunc,
    vmap: Vec<Reg>,
    remat: Vec<Option<Remat>>,
    /// The machine block of each reachable IR block.
    block_map: IdVec<Block, Option<MBlock>>,
    sym_ids: FxHashMap<String, u32>,
    /// The interned symbol of each global whose address was taken so far.
    global_syms: FxHashMap<GlobalId, u32>,
    /// Compares fused into the branch that reads them (not emitted on their own).
    fused: Vec<bool>,
    /// Conversions that share their operand's register (no instruction): see `share_registers`.
    shared: Vec<bool>,
    /// Edge blocks waiting to be emitted after the current block: (id, copies, target).
    pending_edges: Vec<(MBlock, Block, &'a [Value])>,
    /// The buffers of `copies`, reused by every branch.
    copy_bufs: CopyBufs,
    cur_depth: u32,
    /// Rematerialized values already computed in the current block.
    local: FxHashMap<Value, Reg>,
    /// Costly constants and addresses (`costly`) computed so far, by `const_key`: each
    /// register and the IR block computing it, reused wherever that block dominates.
    shared_consts: FxHashMap<(u8, i64), Vec<(Reg, Block)>>,
    /// Emitting the copies of an edge block (which runs on one edge only: nothing computed
    /// there is shared).
    in_edge: bool,
    /// Sign masks (`x >> 31`) of selects already computed in the current block.
    sign_masks: FxHashMap<Value, Reg>,
    /// Address offsets too large for an immediate that loops add: each lives in a register
    /// loaded once at the entry (rematerialized by the allocator if it spills).
    big_offsets: Vec<(i64, Reg)>,
    /// Constants and addresses needed in a register inside loops (see `number_values`):
    /// computed at the end of the block listed with them, into the register given.
    preheader_consts: FxHashMap<Block, Vec<(Value, Reg)>>,
    /// The loop tree: each block's innermost loop, each loop's parent, and the block where
    /// constants computed for a loop go (the header's immediate dominator, when it lies in
    /// the parent loop, or outside all loops for an outermost loop).
    loop_of: IdVec<Block, Option<Loop>>,
    loop_parent: IdVec<Loop, Option<Loop>>,
    loop_place: IdVec<Loop, Option<Block>>,
    /// `(value, loop) -> register` holding a constant or address inside `loop`, computed before it.
    nest_regs: FxHashMap<(Value, Loop), Reg>,
    /// `(base, large offset) -> register` computed earlier in the current block, so that
    /// `base + 8000` can be `(base + 4000) + r4000` (unrolled column walks).
    block_offsets: FxHashMap<(Value, i64), Reg>,
    /// Large offsets of this block its loads and stores read relative to a nearby entry of
    /// `block_offsets` (`offset_folds`), so they have no instruction.
    folded_offsets: FxHashSet<Value>,
    /// `(index, stride) -> (scaled index register, IR block computing it)`: `a[i]`, `b[i]` and
    /// `c[i]` share one `slli` wherever its block dominates.
    scaled: FxHashMap<(Value, i64), (Reg, Block)>,
    dom: DomTree,
    cfg: Cfg,
    /// Per pointer value: its packed `MemClass`, once computed.
    mem_class: Vec<Option<u32>>,
    cur_block: Block,
    /// Extensions beyond rv64gc that may be selected.
    isa: Isa,
}

/// Whether computing `rm` takes more than one instruction (or a float register).
fn costly(rm: Remat) -> bool {
    match rm {
        Remat::Iconst(c) => {
            let lui_only = c & 0xfff == 0 && c == c as i32 as i64;
            !fits12(c) && !lui_only
        }
        Remat::Fconst(..) | Remat::Gaddr(_) => true,
        Remat::Object(_) | Remat::Incoming(..) => false,
    }
}

/// What identifies a costly constant or address across IR values (`Isel::shared_consts`).
fn const_key(rm: Remat) -> Option<(u8, i64)> {
    if !costly(rm) {
        return None;
    }
    match rm {
        Remat::Iconst(c) => Some((0, c)),
        Remat::Fconst(Type::F32, bits) => Some((1, bits as i64)),
        Remat::Fconst(_, bits) => Some((2, bits as i64)),
        Remat::Gaddr(sym) => Some((3, sym as i64)),
        Remat::Object(_) | Remat::Incoming(..) => None,
    }
}

/// The innermost loop containing both `a` and `b` (of the same nest).
fn common_loop(loops: &LoopForest, mut a: Loop, mut b: Loop) -> Loop {
    while a != b {
        let (da, db) = (loops.loops[a].depth, loops.loops[b].depth);
        if da >= db {
            a = loops.loops[a].parent.unwrap();
        }
        if db >= da {
            b = loops.loops[b].parent.unwrap();
        }
    }
    a
}

/// At most this many large loop offsets get a register of their own.
const MAX_BIG_OFFSETS: usize = 4;

fn class_of(ty: Type) -> RegClass {
    if ty.is_float() {
        RegClass::Float
    } else {
        RegClass::Int
    }
}

/// Selects machine instructions for a defined function.
pub fn select(f: &Function, cx: &ModuleCx, isa: Isa) -> MFunc {
    let decl = &cx.decls[f.id];
    let sym = func_symbol(decl);
    let cfg = Cfg::compute(f);
    let dt = DomTree::compute(f, &cfg);
    let loops = LoopForest::compute(&cfg, &dt);
    let nb = f.num_blocks();
    let mut s = Isel {
        f,
        cx,
        mf: MFunc {
            label: sym.replace('.', "_"),
            sym,
            // Most IR instructions select to one or two machine instructions and one register.
            insts: Vec::with_capacity(2 * f.num_insts()),
            vclass: IdVec::with_capacity(f.num_values()),
            remat: IdVec::with_capacity(f.num_values()),
            ..Default::default()
        },
        vmap: vec![Reg::NONE; f.num_values()],
        remat: vec![None; f.num_values()],
        block_map: IdVec::filled(nb, None),
        sym_ids: FxHashMap::default(),
        global_syms: FxHashMap::default(),
        fused: vec![false; f.num_insts()],
        shared: vec![false; f.num_insts()],
        pending_edges: Vec::new(),
        copy_bufs: Default::default(),
        shared_consts: FxHashMap::default(),
        in_edge: false,
        cur_depth: 0,
        local: FxHashMap::default(),
        sign_masks: FxHashMap::default(),
        big_offsets: Vec::new(),
        preheader_consts: FxHashMap::default(),
        loop_of: IdVec::new(),
        loop_parent: IdVec::new(),
        loop_place: IdVec::new(),
        nest_regs: FxHashMap::default(),
        block_offsets: FxHashMap::default(),
        folded_offsets: FxHashSet::default(),
        scaled: FxHashMap::default(),
        dom: DomTree::default(),
        cfg: Cfg::default(),
        mem_class: vec![None; f.num_values()],
        cur_block: f.entry(),
        isa,
    };
    s.dom = dt;
    // Phase 1: blocks, registers, stack objects.
    let blocks: Vec<Block> = f
        .layout()
        .blocks()
        .filter(|&b| cfg.is_reachable(b))
        .collect();
    for &b in &blocks {
        let mb = s.mf.blocks.push(MBlockData {
            depth: loops.depth(b),
            ..Default::default()
        });
        s.block_map[b] = Some(mb);
    }
    s.number_values(&blocks, &cfg, &loops);
    s.cfg = cfg;
    // Phase 2-4.
    for &b in &blocks {
        s.cur_depth = loops.depth(b);
        s.cur_block = b;
        s.start_block(s.mblock(b));
        if b == f.entry() {
            s.entry_params();
            s.load_big_offsets(&blocks, &loops);
        }
        let term = f.terminator(b);
        for i in f.layout().block_insts(b) {
            if Some(i) == term {
                s.hoisted_constants(b);
            }
            s.inst(i);
        }
        s.finish_block();
        let edges = std::mem::take(&mut s.pending_edges);
        s.in_edge = true;
        for (id, target, args) in edges {
            s.start_block(id);
            s.copies(target, args);
            s.push(MInst::jump(s.mblock(target).label()));
            s.finish_block();
        }
        s.in_edge = false;
    }
    sweep_dead(&mut s.mf);
    s.mf
}

impl<'a> Isel<'a> {
    fn number_values(&mut self, blocks: &[Block], cfg: &Cfg, loops: &LoopForest) {
        let f = self.f;
        // Per value, the operand whose register it takes (see `share_registers`).
        let mut from: Vec<Option<Value>> = vec![None; f.num_values()];
        for &b in blocks {
            for &p in &f.blocks.params[b] {
                self.vmap[p.index()] = self.mf.new_vreg(class_of(f.ty(p)));
            }
            for i in f.layout().block_insts(b) {
                if f.op(i) == Opcode::Select {
                    self.fuse_select_operands(i);
                }
                let Some(v) = f.result(i) else { continue };
                let d = f.data(i);
                let rm = match d.op {
                    Opcode::Iconst => Some(Remat::Iconst(d.imm)),
                    Opcode::Fconst => Some(Remat::Fconst(d.ty, d.imm as u64)),
                    Opcode::Gaddr => Some(Remat::Gaddr(self.global_sym(f.global(i)))),
                    Opcode::Alloca => {
                        let obj = self.mf.objects.len() as u32;
                        self.mf.objects.push(StackObject {
                            size: d.imm as u64,
                            align: (d.aux as u64).max(1),
                        });
                        Some(Remat::Object(obj))
                    }
                    _ => None,
                };
                match rm {
                    Some(r) => self.remat[v.index()] = Some(r),
                    None => self.vmap[v.index()] = self.mf.new_vreg(class_of(d.ty)),
                }
                // A sign extension of an i32 (registers hold i32 values sign-extended
                // already) and a truncation of an i64 that is a sign-extended i32
                // (`fits_i32`) leave the bits unchanged.
                let free = match d.op {
                    Opcode::Sext => f.ty(f.arg(i, 0)) == Type::I32,
                    Opcode::Trunc => d.ty == Type::I32 && fits_i32(f, f.arg(i, 0)),
                    _ => false,
                };
                if free && self.vmap[v.index()].is_some() {
                    from[v.index()] = Some(f.arg(i, 0));
                }
            }
        }
        // Stack-passed parameters are reloaded from the caller's frame at each use.
        let entry = f.entry();
        let tys: Vec<Type> = f.params().iter().map(|&p| f.ty(p)).collect();
        for (k, loc) in classify_args(&tys, tys.len()).into_iter().enumerate() {
            if let ArgLoc::Stack(n) = loc {
                let p = f.blocks.params[entry][k];
                self.remat[p.index()] = Some(Remat::Incoming(8 * n as i64, tys[k]));
                self.vmap[p.index()] = Reg::NONE;
            }
        }
        // Compares read only by the branch right after them become compare-and-branch.
        for &b in blocks {
            let Some(t) = f.terminator(b) else { continue };
            if f.op(t) != Opcode::Brif {
                continue;
            }
            let c = f.arg(t, 0);
            if let Some(ci) = f.def_inst(c) {
                if f.op(ci) == Opcode::Icmp
                    && f.has_one_use(c)
                    && f.layout().inst_block(ci) == Some(b)
                {
                    self.fused[ci.index()] = true;
                }
            }
        }
        self.share_registers(blocks, &from);
        // Constants and addresses needed in a register inside loops get one register per
        // loop nest that reads them, computed once before the innermost loop of the nest
        // containing all its reads there (at the end of that loop header's immediate
        // dominator, where loop-invariant code motion would put them), so they live only in
        // the loops that read them; constants wider than 32 bits (up to eight instructions)
        // go before the nest's outermost loop, built once per nest. The allocator may still
        // rematerialize a one-instruction constant if it spills it. Reads outside loops
        // recompute the value at each use. A register is wanted when a use is deeper than
        // the definition, or the value takes more than one instruction and is defined and
        // used inside loops. If a loop has no place in its parent (the header's immediate
        // dominator is in another loop), the value keeps a single register computed at its
        // definition.
        self.loop_of = loops.innermost.clone();
        for l in loops.loops.values() {
            self.loop_parent.push(l.parent);
            let at = self.dom.idom[l.header];
            let at = at.filter(|&p| cfg.is_reachable(p) && loops.innermost[p] == l.parent);
            self.loop_place.push(at);
        }
        // The blocks of the uses of one value that need a register.
        let mut use_blocks: Vec<Block> = Vec::new();
        for &b in blocks {
            let d0 = loops.depth(b);
            for i in f.layout().block_insts(b) {
                let Some(v) = f.result(i) else { continue };
                match self.remat[v.index()] {
                    None | Some(Remat::Iconst(0)) | Some(Remat::Incoming(..)) => continue,
                    Some(_) => {}
                }
                use_blocks.clear();
                use_blocks.extend(f.uses_of(v).filter_map(|u| {
                    let user = f.uses().user[u];
                    let k = u.index() - f.insts.args[user].start as usize;
                    let ub = f.layout().inst_block(user)?;
                    (!self.folds(user, k, v)).then_some(ub)
                }));
                let Some(deepest) = use_blocks.iter().map(|&ub| loops.depth(ub)).max() else {
                    continue;
                };
                let rm = self.remat[v.index()].unwrap();
                if deepest <= d0 && !(d0 > 0 && deepest > 0 && costly(rm)) {
                    continue;
                }
                let wide = matches!(rm, Remat::Iconst(c) if c != c as i32 as i64);
                // Per nest (outermost loop): the loop to compute the value before.
                let mut nests: Vec<(Loop, Loop)> = Vec::new();
                for &ub in &use_blocks {
                    let Some(l) = loops.innermost[ub] else {
                        continue;
                    };
                    let mut root = l;
                    while let Some(p) = loops.loops[root].parent {
                        root = p;
                    }
                    match nests.iter_mut().find(|n| n.0 == root) {
                        Some(n) => n.1 = common_loop(loops, n.1, l),
                        None => nests.push((root, l)),
                    }
                }
                let mut places = Vec::with_capacity(nests.len());
                for &(root, lca) in &nests {
                    let mut l = Some(if wide { root } else { lca });
                    while let Some(x) = l.filter(|&x| self.loop_place[x].is_none()) {
                        l = loops.loops[x].parent;
                    }
                    places.push(l);
                }
                if places.iter().all(|l| l.is_some()) {
                    for l in places.into_iter().flatten() {
                        let r = self.mf.new_vreg(class_of(f.ty(v)));
                        self.nest_regs.insert((v, l), r);
                        let at = self.loop_place[l].unwrap();
                        self.preheader_consts.entry(at).or_default().push((v, r));
                    }
                } else {
                    self.vmap[v.index()] = self.mf.new_vreg(class_of(f.ty(v)));
                }
            }
        }
    }

    /// Compares of a sign read only by select `i` that shifts the sign out itself (see
    /// `select`), and the negation an absolute value reads only there, are fused into it.
    fn fuse_select_operands(&mut self, i: Inst) {
        let f = self.f;
        let (c, a, bv) = (f.arg(i, 0), f.arg(i, 1), f.arg(i, 2));
        let abs = abs_select(f, f.ty(f.res(i)), c, a, bv);
        if f.has_one_use(c) && (abs.is_some() || sign_test(f, c, true).is_some()) {
            self.fused[f.def_inst(c).unwrap().index()] = true;
        }
        for arm in [a, bv] {
            if abs.is_some() && f.has_one_use(arm) && is_negation_of(f, arm, abs.unwrap().0) {
                self.fused[f.def_inst(arm).unwrap().index()] = true;
            }
        }
    }

    /// A value whose bits are those of an operand (`from`, filled by `number_values`: a sign
    /// extension of an i32, a truncation of a sign-extended i32) takes the register of the
    /// root of that chain, so no copy keeps both alive. Sound for SSA values: the operand's
    /// register is only rewritten by the block-argument copies into its own block, and the
    /// result (dominated by that block's entry) is never live there.
    fn share_registers(&mut self, blocks: &[Block], from: &[Option<Value>]) {
        let f = self.f;
        for &b in blocks {
            for i in f.layout().block_insts(b) {
                let Some(v) = f.result(i) else { continue };
                let Some(mut root) = from[v.index()] else {
                    continue;
                };
                while let Some(r) = from[root.index()] {
                    root = r;
                }
                let r = self.vmap[root.index()];
                if r.is_some() {
                    self.vmap[v.index()] = r;
                    self.shared[i.index()] = true;
                }
            }
        }
    }

    /// Whether operand `k` (value `v`) of `user` is folded into an immediate or an sp-relative
    /// address, so it needs no register.
    fn folds(&self, user: Inst, k: usize, v: Value) -> bool {
        let f = self.f;
        let d = f.data(user);
        let c = f.as_iconst(v);
        let is_obj = matches!(self.remat[v.index()], Some(Remat::Object(_)));
        use Opcode::*;
        match (d.op, c) {
            (Load, _) => k == 0 && is_obj,
            (Store, _) => k == 1 && is_obj,
            (Gep, Some(_)) => k == 1,
            (Add | And | Or | Xor, Some(c)) => fits12(c),
            (Sub, Some(c)) => k == 1 && fits12(c.wrapping_neg()),
            (Shl | Ashr | Lshr, Some(_)) => k == 1,
            (Mul, Some(c)) => {
                c > 0 && (c as u64).is_power_of_two() || shift_add(c, self.f.ty(v)).is_some()
            }
            (Icmp, Some(c)) => {
                !self.fused[user.index()]
                    && k == 1
                    && match d.cond() {
                        CmpCond::Eq | CmpCond::Ne => fits12(c.wrapping_neg()),
                        CmpCond::Lt | CmpCond::Ge => fits12(c),
                        _ => false,
                    }
            }
            _ => false,
        }
    }

    /// The interned symbol of global `g`.
    fn global_sym(&mut self, g: GlobalId) -> u32 {
        if let Some(&k) = self.global_syms.get(&g) {
            return k;
        }
        let k = self.intern(global_symbol(&self.cx.globals[g]));
        self.global_syms.insert(g, k);
        k
    }

    fn intern(&mut self, s: String) -> u32 {
        if let Some(&k) = self.sym_ids.get(&s) {
            return k;
        }
        let k = self.mf.syms.len() as u32;
        self.mf.syms.push(s.clone());
        self.sym_ids.insert(s, k);
        k
    }

    /// The machine block of `b` (reachable).
    fn mblock(&self, b: Block) -> MBlock {
        self.block_map[b].expect("a reachable block has a machine block")
    }

    fn start_block(&mut self, id: MBlock) {
        self.local.clear();
        self.sign_masks.clear();
        self.block_offsets.clear();
        self.folded_offsets.clear();
        let start = self.mf.insts.len() as u32;
        self.mf.blocks[id].start = start;
        self.mf.order.push(id);
    }

    fn finish_block(&mut self) {
        let id = *self.mf.order.last().unwrap();
        self.mf.blocks[id].end = self.mf.insts.len() as u32;
        // Successors from the terminating branches.
        let (s, e) = (self.mf.blocks[id].start as usize, self.mf.insts.len());
        let mut succs = Vec::new();
        for mi in &self.mf.insts[s..e] {
            if mi.op.is_branch() || mi.op == MOp::J {
                succs.push(MBlock::target_of(mi));
            }
        }
        self.mf.blocks[id].succs = succs;
    }

    fn new_edge_block(&mut self) -> MBlock {
        self.mf.blocks.push(MBlockData {
            depth: self.cur_depth,
            ..Default::default()
        })
    }

    #[inline]
    fn push(&mut self, mi: MInst) {
        self.mf.insts.push(mi);
    }

    fn vreg(&mut self, c: RegClass) -> Reg {
        self.mf.new_vreg(c)
    }

    /// The register holding `v` here, rematerializing it if needed.
    fn reg(&mut self, v: Value) -> Reg {
        let r = self.held(v);
        if r.is_some() {
            return r;
        }
        match self.remat[v.index()] {
            Some(Remat::Iconst(0)) => Reg::ZERO,
            Some(rm) => {
                if let Some(&d) = self.local.get(&v) {
                    return d;
                }
                let key = const_key(rm);
                let here = self.cur_block;
                let shared = key
                    .and_then(|k| self.shared_consts.get(&k))
                    .and_then(|c| c.iter().find(|&&(_, at)| self.dom.dominates(at, here)));
                if let Some(&(d, _)) = shared {
                    self.local.insert(v, d);
                    return d;
                }
                let d = self.vreg(class_of(self.f.ty(v)));
                match key {
                    Some(k) if !self.in_edge => {
                        self.materialize_once(v, d);
                        self.shared_consts.entry(k).or_default().push((d, here));
                    }
                    _ => self.materialize(rm, d),
                }
                self.local.insert(v, d);
                d
            }
            None => panic!("{}: {v} used but never defined", self.f.name),
        }
    }

    /// The register `v` lives in here: its own, or its loop nest's copy of a constant or
    /// address (`nest_regs`); `Reg::NONE` if it is rematerialized here.
    fn held(&self, v: Value) -> Reg {
        let r = self.vmap[v.index()];
        if r.is_some() || self.nest_regs.is_empty() {
            return r;
        }
        let mut l = self.loop_of[self.cur_block];
        while let Some(x) = l {
            if let Some(&r) = self.nest_regs.get(&(v, x)) {
                return r;
            }
            l = self.loop_parent[x];
        }
        Reg::NONE
    }

    fn materialize(&mut self, rm: Remat, d: Reg) {
        match rm {
            Remat::Iconst(c) => self.push(MInst::li(d, c)),
            Remat::Fconst(ty, bits) => {
                let (op, bits) = if ty == Type::F32 {
                    (MOp::FmvWX, bits as u32 as i32 as i64)
                } else {
                    (MOp::FmvDX, bits as i64)
                };
                let t = if bits == 0 {
                    Reg::ZERO
                } else {
                    let t = self.vreg(RegClass::Int);
                    self.push(MInst::li(t, bits));
                    t
                };
                self.push(MInst::unary(op, d, t));
            }
            Remat::Gaddr(sym) => {
                self.push(MInst::new(MOp::Lla, d, Reg::NONE, Reg::NONE, sym as i64))
            }
            Remat::Object(obj) => {
                self.push(MInst::i(MOp::Addi, d, Reg::SP, 0).with_frame(FrameRef::Object, obj))
            }
            Remat::Incoming(off, ty) => {
                let op = load_op(ty);
                self.push(MInst::load(op, d, Reg::SP, off).with_frame(FrameRef::Incoming, 0))
            }
        }
    }

    /// A register holding `v`, written into `d` (used for fixed registers).
    fn move_into(&mut self, d: Reg, v: Value) {
        if self.held(v).is_none() {
            if let Some(rm) = self.remat[v.index()] {
                if let Remat::Iconst(0) = rm {
                    self.push(MInst::unary(MOp::Mv, d, Reg::ZERO));
                } else {
                    self.materialize(rm, d);
                }
                return;
            }
        }
        let s = self.reg(v);
        self.push(mov(self.mf.class(d), d, s));
    }

    /// Loads the large `offset` immediates used inside loops into registers (see `big_offsets`):
    /// those of the deepest loops first, in block order, and not one within an immediate of an
    /// offset already chosen (an address in the same block reaches it with an `addi` or a
    /// load's immediate, see `near_offset`).
    fn load_big_offsets(&mut self, blocks: &[Block], loops: &LoopForest) {
        let f = self.f;
        let mut cands: Vec<(std::cmp::Reverse<u32>, usize, i64)> = Vec::new();
        for &b in blocks {
            let depth = loops.depth(b);
            if depth == 0 {
                continue;
            }
            for i in f.layout().block_insts(b) {
                let c = f.data(i).imm;
                if f.op(i) == Opcode::Offset && !fits12(c) && f.has_uses(f.res(i)) {
                    cands.push((std::cmp::Reverse(depth), cands.len(), c));
                }
            }
        }
        cands.sort();
        for (_, _, c) in cands {
            if self.big_offsets.len() == MAX_BIG_OFFSETS {
                break;
            }
            if self
                .big_offsets
                .iter()
                .any(|&(x, _)| fits12(c.wrapping_sub(x)))
            {
                continue;
            }
            let r = self.vreg(RegClass::Int);
            let at = self.mf.insts.len();
            self.push(MInst::li(r, c));
            self.mf.remat[r.as_vreg()] = Some(self.mf.insts[at]);
            self.big_offsets.push((c, r));
        }
    }

    /// Computes constant or address `v` into its register, which the allocator may
    /// rematerialize when that is one integer instruction (an `li` of a 32-bit constant,
    /// at most `lui` and `addiw`; wider ones expand to up to eight).
    fn materialize_once(&mut self, v: Value, rd: Reg) {
        let rm = self.remat[v.index()].unwrap();
        let at = self.mf.insts.len();
        self.materialize(rm, rd);
        let short = |m: &MInst| m.op != MOp::Li || m.imm == m.imm as i32 as i64;
        if self.mf.insts.len() == at + 1
            && self.mf.class(rd) == RegClass::Int
            && short(&self.mf.insts[at])
        {
            self.mf.remat[rd.as_vreg()] = Some(self.mf.insts[at]);
        }
    }

    /// Computes the constants and addresses hoisted out of loops to the end of `b`
    /// (`preheader_consts`).
    fn hoisted_constants(&mut self, b: Block) {
        for (v, r) in self.preheader_consts.remove(&b).unwrap_or_default() {
            self.materialize_once(v, r);
        }
    }

    fn entry_params(&mut self) {
        let f = self.f;
        let params = f.params().to_vec();
        let tys: Vec<Type> = params.iter().map(|&p| f.ty(p)).collect();
        for (k, loc) in classify_args(&tys, tys.len()).into_iter().enumerate() {
            let p = params[k];
            let d = self.vmap[p.index()];
            if d.is_none() || !f.has_uses(p) {
                continue;
            }
            match loc {
                ArgLoc::Int(n) => self.push(MInst::unary(MOp::Mv, d, Reg::a(n))),
                ArgLoc::Float(n) => self.push(MInst::unary(MOp::FmvD, d, Reg::fa(n))),
                ArgLoc::FloatInInt(n) => {
                    let op = if tys[k] == Type::F32 {
                        MOp::FmvWX
                    } else {
                        MOp::FmvDX
                    };
                    self.push(MInst::unary(op, d, Reg::a(n)))
                }
                ArgLoc::Stack(_) => unreachable!(),
            }
        }
    }

    /// Memory address of `p` as (base, offset, frame ref, aux).
    ///
    /// `offset(b, c)` folds into the access as `c(b)` when that leaves the offset without other
    /// readers (it is then never computed) or addresses the frame. Otherwise the offset is
    /// computed anyway, and reading `b` here would only keep `b` live past the offset's
    /// definition: the loop `p2 = p + 4; x = load p2; jump(p2)` would need `p` and `p2` at once
    /// and a copy `p := p2` per iteration instead of updating one register in place.
    fn addr(&mut self, p: Value) -> (Reg, i64, FrameRef, u32) {
        let only_addressed = self.f.uses_of(p).all(|u| {
            let user = self.f.uses().user[u];
            let a = self.f.args(user);
            match self.f.op(user) {
                Opcode::Load => true,
                Opcode::Store => a[0] != p,
                _ => false,
            }
        });
        self.addr_folding(p, only_addressed)
    }

    /// The address of a load or store of `p`: `addr`, with the `MemClass` of `p` in `aux` when
    /// the access goes through a register.
    fn access(&mut self, p: Value) -> (Reg, i64, FrameRef, u32) {
        let (base, off, fr, aux) = self.addr(p);
        if fr != FrameRef::None {
            return (base, off, fr, aux);
        }
        let class = *self.mem_class[p.index()].get_or_insert_with(|| {
            let class = match alias::base_of(self.f, &self.cfg, p) {
                Base::Alloca(i) => MemClass::Stack(i.index() as u32),
                Base::Global(g) => MemClass::Global {
                    id: g.to_bits() as u32, // the slot index
                    reachable: !self.cx.is_direct_only(g),
                },
                Base::Param(_) => MemClass::Param,
                Base::Unknown => MemClass::Unknown,
            };
            class.pack()
        });
        (base, off, fr, class)
    }

    /// The address computed earlier in this block from `base` nearest to `base + c`, when
    /// within an immediate of it: `(distance, register)`; ties go to the lower offset, whatever
    /// the map's order.
    fn near_offset(&self, base: Value, c: i64) -> Option<(i64, Reg)> {
        let mut best: Option<(i64, Reg)> = None;
        for (&(v, x), &r) in &self.block_offsets {
            let d = c.wrapping_sub(x);
            if v == base && fits12(d) && best.is_none_or(|(bd, _)| (d.abs(), d) < (bd.abs(), bd)) {
                best = Some((d, r));
            }
        }
        best
    }

    /// Whether `p = offset base, c` (a large `c`) needs no instruction: every use is the address
    /// of a load or store of this block, which reads it as an immediate from an address
    /// computed earlier in the block (`near_offset`).
    fn offset_folds(&self, i: Inst) -> bool {
        let f = self.f;
        let p = f.res(i);
        let c = f.data(i).imm;
        !fits12(c)
            && self.big_offsets.iter().all(|&(x, _)| x != c)
            && self.near_offset(f.arg(i, 0), c).is_some()
            && f.uses_of(p).all(|u| {
                let user = f.uses().user[u];
                let a = f.args(user);
                f.layout().inst_block(user) == Some(self.cur_block)
                    && match f.op(user) {
                        Opcode::Load => true,
                        Opcode::Store => a[0] != p,
                        _ => false,
                    }
            })
    }

    fn addr_folding(&mut self, p: Value, fold_regs: bool) -> (Reg, i64, FrameRef, u32) {
        if let Some(Remat::Object(obj)) = self.remat[p.index()] {
            return (Reg::SP, 0, FrameRef::Object, obj);
        }
        if let Some(i) = self.f.def_inst(p) {
            if self.f.op(i) == Opcode::Offset {
                let c = self.f.data(i).imm;
                let base = self.f.arg(i, 0);
                if self.folded_offsets.contains(&p) {
                    let (d, r) = self.near_offset(base, c).unwrap();
                    return (r, d, FrameRef::None, 0);
                }
                let (b, off, fr, aux) = self.addr_folding(base, true);
                let total = off.wrapping_add(c);
                if fr != FrameRef::None || (fold_regs && fits12(total)) {
                    return (b, total, fr, aux);
                }
            }
        }
        (self.reg(p), 0, FrameRef::None, 0)
    }

    fn inst(&mut self, i: Inst) {
        let f = self.f;
        let d = *f.data(i);
        let args = f.args(i);
        let res = f.result(i);
        // Pure instructions with unused results are skipped.
        if let Some(v) = res {
            if !f.has_uses(v) && d.op != Opcode::Call {
                return;
            }
            if self.vmap[v.index()].is_none() {
                return; // rematerialized at its uses
            }
        }
        if self.fused[i.index()] || self.shared[i.index()] {
            return;
        }
        let rd = res.map(|v| self.vmap[v.index()]).unwrap_or(Reg::NONE);
        use Opcode::*;
        match d.op {
            Iconst | Fconst | Gaddr | Alloca => {
                // A constant or address with a register of its own, computed once here.
                let v = res.unwrap();
                self.materialize_once(v, rd);
            }
            op if op.is_int_binary() => self.int_binary(op, d.ty, rd, args[0], args[1]),
            Fadd | Fsub | Fmul | Fdiv => {
                let dbl = d.ty == Type::F64;
                let mop = match (d.op, dbl) {
                    (Fadd, false) => MOp::FaddS,
                    (Fsub, false) => MOp::FsubS,
                    (Fmul, false) => MOp::FmulS,
                    (Fdiv, false) => MOp::FdivS,
                    (Fadd, true) => MOp::FaddD,
                    (Fsub, true) => MOp::FsubD,
                    (Fmul, true) => MOp::FmulD,
                    _ => MOp::FdivD,
                };
                let (a, b) = (self.reg(args[0]), self.reg(args[1]));
                self.push(MInst::r(mop, rd, a, b));
            }
            Fneg => {
                let a = self.reg(args[0]);
                let op = if d.ty == Type::F64 {
                    MOp::FnegD
                } else {
                    MOp::FnegS
                };
                self.push(MInst::unary(op, rd, a));
            }
            Icmp => self.icmp(d.cond(), rd, args[0], args[1]),
            Fcmp => {
                let dbl = f.ty(args[0]) == Type::F64;
                let (a, b) = (self.reg(args[0]), self.reg(args[1]));
                let (eq, lt, le) = if dbl {
                    (MOp::FeqD, MOp::FltD, MOp::FleD)
                } else {
                    (MOp::FeqS, MOp::FltS, MOp::FleS)
                };
                match d.cond() {
                    CmpCond::Eq => self.push(MInst::r(eq, rd, a, b)),
                    CmpCond::Ne => {
                        let t = self.vreg(RegClass::Int);
                        self.push(MInst::r(eq, t, a, b));
                        self.push(MInst::i(MOp::Xori, rd, t, 1));
                    }
                    CmpCond::Lt => self.push(MInst::r(lt, rd, a, b)),
                    CmpCond::Le => self.push(MInst::r(le, rd, a, b)),
                    CmpCond::Gt => self.push(MInst::r(lt, rd, b, a)),
                    CmpCond::Ge => self.push(MInst::r(le, rd, b, a)),
                }
            }
            Select if self.min_max(d.ty, rd, args[0], args[1], args[2]) => {}
            Select => self.select(d.ty, rd, args[0], args[1], args[2]),
            Zext => {
                let a = self.reg(args[0]);
                let from = f.ty(args[0]);
                if from == Type::I32 && d.ty == Type::I64 && self.isa.zba {
                    self.push(MInst::r(MOp::AddUw, rd, a, Reg::ZERO));
                } else if from == Type::I32 && d.ty == Type::I64 {
                    let t = self.vreg(RegClass::Int);
                    self.push(MInst::i(MOp::Slli, t, a, 32));
                    self.push(MInst::i(MOp::Srli, rd, t, 32));
                } else {
                    self.push(MInst::unary(MOp::Mv, rd, a));
                }
            }
            Sext => {
                let a = self.reg(args[0]);
                if f.ty(args[0]) == Type::I1 {
                    self.push(MInst::unary(MOp::Neg, rd, a));
                } else {
                    self.push(MInst::unary(MOp::Mv, rd, a));
                }
            }
            Trunc => {
                let a = self.reg(args[0]);
                if d.ty == Type::I1 && f.is_zero_one(args[0]) {
                    self.push(MInst::unary(MOp::Mv, rd, a));
                } else if d.ty == Type::I1 {
                    self.push(MInst::i(MOp::Andi, rd, a, 1));
                } else if fits_i32(f, args[0]) {
                    self.push(MInst::unary(MOp::Mv, rd, a));
                } else {
                    self.push(MInst::i(MOp::Addiw, rd, a, 0));
                }
            }
            Sitofp => {
                let a = self.reg(args[0]);
                let op = match (f.ty(args[0]), d.ty) {
                    (Type::I64, Type::F32) => MOp::FcvtSL,
                    (Type::I64, _) => MOp::FcvtDL,
                    (_, Type::F32) => MOp::FcvtSW,
                    _ => MOp::FcvtDW,
                };
                self.push(MInst::unary(op, rd, a));
            }
            Fptosi => {
                let a = self.reg(args[0]);
                let op = match (f.ty(args[0]), d.ty) {
                    (Type::F64, Type::I64) => MOp::FcvtLD,
                    (Type::F64, _) => MOp::FcvtWD,
                    (_, Type::I64) => MOp::FcvtLS,
                    _ => MOp::FcvtWS,
                };
                self.push(MInst::unary(op, rd, a));
            }
            Fpext => {
                let a = self.reg(args[0]);
                self.push(MInst::unary(MOp::FcvtDS, rd, a));
            }
            Bitcast => {
                let a = self.reg(args[0]);
                let op = if d.ty == Type::I32 {
                    MOp::FmvXW
                } else {
                    MOp::FmvWX
                };
                self.push(MInst::unary(op, rd, a));
            }
            Gep => self.gep(rd, args[0], args[1], d.imm),
            Offset if self.offset_folds(i) => {
                self.folded_offsets.insert(res.unwrap());
            }
            Offset if matches!(self.remat[args[0].index()], Some(Remat::Object(_))) => {
                // An address inside a stack object: one `addi` from sp, which the allocator
                // recomputes instead of spilling.
                let Some(Remat::Object(obj)) = self.remat[args[0].index()] else {
                    unreachable!()
                };
                let at = self.mf.insts.len();
                self.push(
                    MInst::i(MOp::Addi, rd, Reg::SP, d.imm).with_frame(FrameRef::Object, obj),
                );
                self.mf.remat[rd.as_vreg()] = Some(self.mf.insts[at]);
            }
            Offset => {
                let base = self.reg(args[0]);
                let c = d.imm;
                let exact = self
                    .big_offsets
                    .iter()
                    .find(|&&(x, _)| x == c)
                    .map(|&(_, r)| (base, r));
                let chained = || {
                    self.big_offsets.iter().find_map(|&(x, r)| {
                        self.block_offsets.get(&(args[0], c - x)).map(|&p| (p, r))
                    })
                };
                // Near an address computed earlier in the block from the same base: one `addi`
                // (the nearest; ties to the lower offset, whatever the map's order).
                let near = || self.near_offset(args[0], c);
                match exact.or_else(chained) {
                    Some((from, r)) => self.push(MInst::r(MOp::Add, rd, from, r)),
                    None if !fits12(c) => match near() {
                        Some((d, from)) => self.push(MInst::i(MOp::Addi, rd, from, d)),
                        None => self.add_imm(rd, base, c),
                    },
                    None => self.add_imm(rd, base, c),
                }
                if !fits12(c) {
                    self.block_offsets.insert((args[0], c), rd);
                }
            }
            Load => {
                let (base, off, fr, aux) = self.access(args[0]);
                self.push(MInst::load(load_op(d.ty), rd, base, off).with_frame(fr, aux));
            }
            Store => {
                let ty = f.ty(args[0]);
                let val = self.reg(args[0]);
                let (base, off, fr, aux) = self.access(args[1]);
                self.push(MInst::store(store_op(ty), val, base, off).with_frame(fr, aux));
            }
            Call => self.call(i, rd),
            Jump => {
                let t = Block::new(d.imm as usize);
                self.copies(t, args);
                self.push(MInst::jump(self.mblock(t).label()));
            }
            Brif => self.brif(i),
            Ret | Unreachable => {
                let mut r = Reg::NONE;
                if let Some(&v) = args.first() {
                    r = if f.ty(v).is_float() {
                        Reg::FA0
                    } else {
                        Reg::A0
                    };
                    self.move_into(r, v);
                }
                self.push(MInst::new(MOp::Ret, Reg::NONE, r, Reg::NONE, 0));
            }
            op => panic!("riscv isel: unhandled opcode {}", op.name()),
        }
    }

    /// `d = a + imm` for 64-bit values (addresses).
    fn add_imm(&mut self, d: Reg, a: Reg, imm: i64) {
        if fits12(imm) {
            self.push(MInst::i(MOp::Addi, d, a, imm));
        } else {
            let t = self.vreg(RegClass::Int);
            self.push(MInst::li(t, imm));
            self.push(MInst::r(MOp::Add, d, a, t));
        }
    }

    fn int_binary(&mut self, op: Opcode, ty: Type, rd: Reg, mut a: Value, mut b: Value) {
        use Opcode::*;
        let f = self.f;
        let w = ty == Type::I32;
        if op.is_commutative() && f.as_iconst(a).is_some() && f.as_iconst(b).is_none() {
            std::mem::swap(&mut a, &mut b);
        }
        if let Some(c) = f.as_iconst(b) {
            let imm: Option<(MOp, i64)> = match op {
                Add if fits12(c) => Some((if w { MOp::Addiw } else { MOp::Addi }, c)),
                Sub if fits12(c.wrapping_neg()) => {
                    Some((if w { MOp::Addiw } else { MOp::Addi }, c.wrapping_neg()))
                }
                And if fits12(c) => Some((MOp::Andi, c)),
                Or if fits12(c) => Some((MOp::Ori, c)),
                Xor if fits12(c) => Some((MOp::Xori, c)),
                Shl => Some(if w {
                    (MOp::Slliw, c & 31)
                } else {
                    (MOp::Slli, c & 63)
                }),
                Ashr => Some(if w {
                    (MOp::Sraiw, c & 31)
                } else {
                    (MOp::Srai, c & 63)
                }),
                Lshr => Some(if w {
                    (MOp::Srliw, c & 31)
                } else {
                    (MOp::Srli, c & 63)
                }),
                Mul if c > 0 && (c as u64).is_power_of_two() => {
                    let k = c.trailing_zeros() as i64;
                    Some(if w { (MOp::Slliw, k) } else { (MOp::Slli, k) })
                }
                _ => None,
            };
            if let Some((mop, imm)) = imm {
                let ra = self.reg(a);
                self.push(MInst::i(mop, rd, ra, imm));
                return;
            }
            if let (Mul, Some((n, plus))) = (op, shift_add(c, ty)) {
                let ra = self.reg(a);
                let t = self.vreg(RegClass::Int);
                self.push(MInst::i(if w { MOp::Slliw } else { MOp::Slli }, t, ra, n));
                let combine = match (plus, w) {
                    (true, true) => MOp::Addw,
                    (true, false) => MOp::Add,
                    (false, true) => MOp::Subw,
                    (false, false) => MOp::Sub,
                };
                self.push(MInst::r(combine, rd, t, ra));
                return;
            }
        }
        if self.bitmanip(op, ty, rd, a, b) || self.bitmanip(op, ty, rd, b, a) {
            return;
        }
        let (ra, rb) = (self.reg(a), self.reg(b));
        let mop = match (op, w) {
            (Add, true) => MOp::Addw,
            (Add, false) => MOp::Add,
            (Sub, true) => MOp::Subw,
            (Sub, false) => MOp::Sub,
            (Mul, true) => MOp::Mulw,
            (Mul, false) => MOp::Mul,
            (Sdiv, true) => MOp::Divw,
            (Sdiv, false) => MOp::Div,
            (Srem, true) => MOp::Remw,
            (Srem, false) => MOp::Rem,
            (Shl, true) => MOp::Sllw,
            (Shl, false) => MOp::Sll,
            (Ashr, true) => MOp::Sraw,
            (Ashr, false) => MOp::Sra,
            (Lshr, true) => MOp::Srlw,
            (Lshr, false) => MOp::Srl,
            (And, _) => MOp::And,
            (Or, _) => MOp::Or,
            (Xor, _) => MOp::Xor,
            (Mulhs, true) => {
                let t = self.vreg(RegClass::Int);
                self.push(MInst::r(MOp::Mul, t, ra, rb));
                self.push(MInst::i(MOp::Srai, rd, t, 32));
                return;
            }
            (Mulhs, false) => MOp::Mulh,
            (Mulhu, true) => {
                // The 32-bit operands zero-extended into the top halves: the high half of
                // that product is the whole 64-bit product, whose top 32 bits are wanted.
                let (ta, tb, t) = (
                    self.vreg(RegClass::Int),
                    self.vreg(RegClass::Int),
                    self.vreg(RegClass::Int),
                );
                self.push(MInst::i(MOp::Slli, ta, ra, 32));
                self.push(MInst::i(MOp::Slli, tb, rb, 32));
                self.push(MInst::r(MOp::Mulhu, t, ta, tb));
                self.push(MInst::i(MOp::Srai, rd, t, 32));
                return;
            }
            (Mulhu, false) => MOp::Mulhu,
            _ => unreachable!(),
        };
        self.push(MInst::r(mop, rd, ra, rb));
    }

    fn icmp(&mut self, c: CmpCond, rd: Reg, a: Value, b: Value) {
        let f = self.f;
        let ra = self.reg(a);
        let bc = f.as_iconst(b);
        match c {
            CmpCond::Eq | CmpCond::Ne => {
                let t = match bc {
                    Some(0) => ra,
                    Some(k) if fits12(k.wrapping_neg()) => {
                        let t = self.vreg(RegClass::Int);
                        self.push(MInst::i(MOp::Addi, t, ra, k.wrapping_neg()));
                        t
                    }
                    _ => {
                        let rb = self.reg(b);
                        let t = self.vreg(RegClass::Int);
                        self.push(MInst::r(MOp::Xor, t, ra, rb));
                        t
                    }
                };
                let op = if c == CmpCond::Eq {
                    MOp::Seqz
                } else {
                    MOp::Snez
                };
                self.push(MInst::unary(op, rd, t));
            }
            CmpCond::Lt => match bc {
                Some(k) if fits12(k) => self.push(MInst::i(MOp::Slti, rd, ra, k)),
                _ => {
                    let rb = self.reg(b);
                    self.push(MInst::r(MOp::Slt, rd, ra, rb));
                }
            },
            CmpCond::Ge => {
                let t = self.vreg(RegClass::Int);
                match bc {
                    Some(k) if fits12(k) => self.push(MInst::i(MOp::Slti, t, ra, k)),
                    _ => {
                        let rb = self.reg(b);
                        self.push(MInst::r(MOp::Slt, t, ra, rb));
                    }
                }
                self.push(MInst::i(MOp::Xori, rd, t, 1));
            }
            CmpCond::Gt => {
                let rb = self.reg(b);
                self.push(MInst::r(MOp::Slt, rd, rb, ra));
            }
            CmpCond::Le => {
                let rb = self.reg(b);
                let t = self.vreg(RegClass::Int);
                self.push(MInst::r(MOp::Slt, t, rb, ra));
                self.push(MInst::i(MOp::Xori, rd, t, 1));
            }
        }
    }

    /// Zba/Zbb forms of `op a, b` where `b` is computed by an instruction that then has no
    /// other reader (it is swept as dead): `a + (x << 1..3)` (i64) is `shNadd x, a`;
    /// `a & ~x`, `a | ~x` and `a ^ ~x` are `andn`, `orn`, `xnor`. Returns false when none applies.
    fn bitmanip(&mut self, op: Opcode, ty: Type, rd: Reg, a: Value, b: Value) -> bool {
        let f = self.f;
        let Some(bi) = f.def_inst(b) else {
            return false;
        };
        if !matches!(f.op(bi), Opcode::Shl | Opcode::Xor)
            || self.vmap[b.index()].is_none()
            || !f.has_one_use(b)
        {
            return false;
        }
        let (x, c) = (f.arg(bi, 0), f.as_iconst(f.arg(bi, 1)));
        let mop = match (op, f.op(bi), c) {
            (Opcode::Add, Opcode::Shl, Some(k)) if self.isa.zba && ty == Type::I64 => match k {
                1 => MOp::Sh1add,
                2 => MOp::Sh2add,
                3 => MOp::Sh3add,
                _ => return false,
            },
            (Opcode::And | Opcode::Or | Opcode::Xor, Opcode::Xor, Some(-1)) if self.isa.zbb => {
                match op {
                    Opcode::And => MOp::Andn,
                    Opcode::Or => MOp::Orn,
                    _ => MOp::Xnor,
                }
            }
            _ => return false,
        };
        let (ra, rx) = (self.reg(a), self.reg(x));
        match mop {
            MOp::Sh1add | MOp::Sh2add | MOp::Sh3add => self.push(MInst::r(mop, rd, rx, ra)),
            _ => self.push(MInst::r(mop, rd, ra, rx)),
        }
        true
    }

    /// Zbb `min`/`max` for `select (x < y), x, y` and its mirrored and swapped forms (signed
    /// compares of integers; i32 values are sign-extended, so the 64-bit compare agrees).
    fn min_max(&mut self, ty: Type, rd: Reg, c: Value, a: Value, b: Value) -> bool {
        let f = self.f;
        if !self.isa.zbb || !matches!(ty, Type::I32 | Type::I64) {
            return false;
        }
        let Some(ci) = f.def_inst(c).filter(|&ci| f.op(ci) == Opcode::Icmp) else {
            return false;
        };
        let (x, y) = (f.arg(ci, 0), f.arg(ci, 1));
        let less = match f.data(ci).cond() {
            CmpCond::Lt | CmpCond::Le => true,
            CmpCond::Gt | CmpCond::Ge => false,
            _ => return false,
        };
        // (x < y ? x : y) is min, (x < y ? y : x) is max; mirrored for > and >=.
        let takes_smaller = if (a, b) == (x, y) {
            less
        } else if (a, b) == (y, x) {
            !less
        } else {
            return false;
        };
        let op = if takes_smaller { MOp::Min } else { MOp::Max };
        let (ra, rb) = (self.reg(a), self.reg(b));
        self.push(MInst::r(op, rd, ra, rb));
        true
    }

    /// Branch-free select: `d = q ^ ((p ^ q) & m)` with `m` all ones where the condition
    /// picks `p` (`-c`, or `c - 1` with the arms swapped); floats go through integer registers.
    /// With a zero arm it is a mask (`a & -c`, `b & (c - 1)`), with two constant arms the
    /// constants fold into immediates. A condition that tests a sign (`x < 0`, `x >= 0`) gives
    /// its mask in one shift of `x` (`x >> 31`), and `x < 0 ? -x : x` is `(x ^ m) - m`.
    fn select(&mut self, ty: Type, rd: Reg, c: Value, a: Value, b: Value) {
        if !ty.is_float() && (self.abs(ty, rd, c, a, b) || self.select_special(rd, c, a, b)) {
            return;
        }
        let sense = self.cheap_sense(c);
        let (a, b) = if sense { (a, b) } else { (b, a) };
        let m = self.mask(c, sense);
        let (mut ra, mut rb) = (self.reg(a), self.reg(b));
        let float = ty.is_float();
        if float {
            let (ia, ib) = (self.vreg(RegClass::Int), self.vreg(RegClass::Int));
            self.push(MInst::unary(MOp::FmvXD, ia, ra));
            self.push(MInst::unary(MOp::FmvXD, ib, rb));
            ra = ia;
            rb = ib;
        }
        let x = self.vreg(RegClass::Int);
        let y = self.vreg(RegClass::Int);
        self.push(MInst::r(MOp::Xor, x, ra, rb));
        self.push(MInst::r(MOp::And, y, x, m));
        if float {
            let z = self.vreg(RegClass::Int);
            self.push(MInst::r(MOp::Xor, z, rb, y));
            self.push(MInst::unary(MOp::FmvDX, rd, z));
        } else {
            self.push(MInst::r(MOp::Xor, rd, rb, y));
        }
    }

    /// Which value of the condition `c` has its mask in one instruction: `true` (`-c`) unless
    /// `c` tests `x >= 0`, whose false side is the sign shift of `x`.
    fn cheap_sense(&self, c: Value) -> bool {
        sign_test(self.f, c, true).is_none_or(|(_, negative)| negative)
    }

    /// All ones where `c == when`, else zero.
    fn mask(&mut self, c: Value, when: bool) -> Reg {
        if let Some((x, negative)) = sign_test(self.f, c, true) {
            let s = self.sign_mask(x);
            if when == negative {
                return s;
            }
            let m = self.vreg(RegClass::Int);
            self.push(MInst::i(MOp::Xori, m, s, -1));
            return m;
        }
        let m = self.vreg(RegClass::Int);
        let rc = self.reg(c);
        if when {
            self.push(MInst::unary(MOp::Neg, m, rc));
        } else {
            self.push(MInst::i(MOp::Addi, m, rc, -1));
        }
        m
    }

    /// `x >> 31` (`x >> 63` for i64): all ones where `x < 0`, computed once per block.
    fn sign_mask(&mut self, x: Value) -> Reg {
        if let Some(&m) = self.sign_masks.get(&x) {
            return m;
        }
        let rx = self.reg(x);
        let (op, k) = if self.f.ty(x) == Type::I64 {
            (MOp::Srai, 63)
        } else {
            (MOp::Sraiw, 31)
        };
        let m = self.vreg(RegClass::Int);
        self.push(MInst::i(op, m, rx, k));
        self.sign_masks.insert(x, m);
        m
    }

    /// `|x|` or `-|x|` as a select on the sign of `x`: `m = x >> 31`, `(x ^ m) - m` or
    /// `m - (x ^ m)` (wrapping: `|INT_MIN| = INT_MIN`, as the negation gives).
    fn abs(&mut self, ty: Type, rd: Reg, c: Value, a: Value, b: Value) -> bool {
        let Some((x, plain)) = abs_select(self.f, ty, c, a, b) else {
            return false;
        };
        let sub = if ty == Type::I64 { MOp::Sub } else { MOp::Subw };
        let m = self.sign_mask(x);
        let rx = self.reg(x);
        let t = self.vreg(RegClass::Int);
        self.push(MInst::r(MOp::Xor, t, rx, m));
        if plain {
            self.push(MInst::r(sub, rd, t, m));
        } else {
            self.push(MInst::r(sub, rd, m, t));
        }
        true
    }

    /// Integer selects cheaper than the general four operations, if `a` or `b` is a constant
    /// that allows it.
    fn select_special(&mut self, rd: Reg, c: Value, a: Value, b: Value) -> bool {
        let f = self.f;
        let (ka, kb) = (f.as_iconst(a), f.as_iconst(b));
        // `x & m`, with an immediate when `x` is a small constant.
        let and_mask = |s: &mut Self, x: Value, kx: Option<i64>, m: Reg| match kx {
            Some(k) if fits12(k) => s.push(MInst::i(MOp::Andi, rd, m, k)),
            _ => {
                let rx = s.reg(x);
                s.push(MInst::r(MOp::And, rd, rx, m));
            }
        };
        match (ka, kb) {
            (_, Some(0)) => {
                let m = self.mask(c, true);
                and_mask(self, a, ka, m);
            }
            (Some(0), _) => {
                let m = self.mask(c, false);
                and_mask(self, b, kb, m);
            }
            (Some(x), Some(y))
                if fits12(x ^ y) && fits12(if self.cheap_sense(c) { y } else { x }) =>
            {
                let sense = self.cheap_sense(c);
                let (p, q) = if sense { (x, y) } else { (y, x) };
                let m = self.mask(c, sense);
                let t = self.vreg(RegClass::Int);
                self.push(MInst::i(MOp::Andi, t, m, p ^ q));
                self.push(MInst::i(MOp::Xori, rd, t, q));
            }
            _ => return false,
        }
        true
    }

    fn gep(&mut self, rd: Reg, base: Value, idx: Value, stride: i64) {
        let rb = self.reg(base);
        if let Some(c) = self.f.as_iconst(idx) {
            self.add_imm(rd, rb, c.wrapping_mul(stride));
            return;
        }
        if let Some(&(t, at)) = self.scaled.get(&(idx, stride)) {
            if self.dom.dominates(at, self.cur_block) {
                self.push(MInst::r(MOp::Add, rd, rb, t));
                return;
            }
        }
        let ri = self.reg(idx);
        if self.isa.zba {
            let op = match stride {
                2 => Some(MOp::Sh1add),
                4 => Some(MOp::Sh2add),
                8 => Some(MOp::Sh3add),
                _ => None,
            };
            if let Some(op) = op {
                self.push(MInst::r(op, rd, ri, rb));
                return;
            }
        }
        // A negative power-of-two stride (bounds computed downwards): shift, then subtract.
        if stride < 0 && stride != i64::MIN && (stride.unsigned_abs()).is_power_of_two() {
            match stride {
                -1 => self.push(MInst::r(MOp::Sub, rd, rb, ri)),
                _ => {
                    let t = self.vreg(RegClass::Int);
                    self.push(MInst::i(
                        MOp::Slli,
                        t,
                        ri,
                        stride.unsigned_abs().trailing_zeros() as i64,
                    ));
                    self.push(MInst::r(MOp::Sub, rd, rb, t));
                }
            }
            return;
        }
        let scaled = if stride == 1 {
            ri
        } else if stride > 0 && (stride as u64).is_power_of_two() {
            let t = self.vreg(RegClass::Int);
            self.push(MInst::i(MOp::Slli, t, ri, stride.trailing_zeros() as i64));
            t
        } else {
            let s = self.vreg(RegClass::Int);
            let t = self.vreg(RegClass::Int);
            self.push(MInst::li(s, stride));
            self.push(MInst::r(MOp::Mul, t, ri, s));
            t
        };
        // Rematerialized indices have no lasting register; others keep the scaled copy.
        if stride != 1 && self.vmap[idx.index()].is_some() {
            self.scaled.insert((idx, stride), (scaled, self.cur_block));
        }
        self.push(MInst::r(MOp::Add, rd, rb, scaled));
    }

    fn call(&mut self, i: Inst, rd: Reg) {
        let f = self.f;
        let callee: FuncId = f.callee(i);
        let decl = &self.cx.decls[callee];
        let args = f.args(i).to_vec();
        let tys: Vec<Type> = args.iter().map(|&a| f.ty(a)).collect();
        let locs = classify_args(&tys, decl.sig.params.len());
        // A call whose result is returned right away becomes `tail` when nothing needs this
        // frame afterwards: no stack arguments, no stack objects whose address could escape.
        let next = f.layout().next_inst(i);
        let tail = next.filter(|&n| {
            f.op(n) == Opcode::Ret
                && f.args(n) == f.result(i).as_slice()
                && decl.sig.ret == self.cx.decls[f.id].sig.ret
                && self.mf.objects.is_empty()
                && !locs.iter().any(|l| matches!(l, ArgLoc::Stack(_)))
        });
        // Stack arguments first: computing them must not disturb argument registers.
        let mut nstack = 0u64;
        for (k, loc) in locs.iter().enumerate() {
            if let ArgLoc::Stack(n) = *loc {
                let r = self.reg(args[k]);
                let op = match tys[k] {
                    Type::F32 => MOp::Fsw,
                    Type::F64 => MOp::Fsd,
                    _ => MOp::Sd,
                };
                self.push(
                    MInst::store(op, r, Reg::SP, 8 * n as i64).with_frame(FrameRef::Outgoing, 0),
                );
                nstack = nstack.max(8 * (n as u64 + 1));
            }
        }
        self.mf.outgoing = self.mf.outgoing.max(nstack);
        let mut regs = Vec::new();
        for (k, loc) in locs.iter().enumerate() {
            match *loc {
                ArgLoc::Int(n) => {
                    self.move_into(Reg::a(n), args[k]);
                    regs.push(Reg::a(n));
                }
                ArgLoc::Float(n) => {
                    self.move_into(Reg::fa(n), args[k]);
                    regs.push(Reg::fa(n));
                }
                ArgLoc::FloatInInt(n) => {
                    let r = self.reg(args[k]);
                    let op = if tys[k] == Type::F32 {
                        MOp::FmvXW
                    } else {
                        MOp::FmvXD
                    };
                    self.push(MInst::unary(op, Reg::a(n), r));
                    regs.push(Reg::a(n));
                }
                ArgLoc::Stack(_) => {}
            }
        }
        let ci = self.mf.calls.len() as i64;
        self.mf.calls.push(CallInfo {
            sym: func_symbol(decl),
            args: regs,
        });
        if let Some(ret) = tail {
            self.push(MInst::new(
                MOp::TailCall,
                Reg::NONE,
                Reg::NONE,
                Reg::NONE,
                ci,
            ));
            self.fused[ret.index()] = true; // the `ret` is done by the callee
            return;
        }
        self.push(MInst::new(MOp::Call, Reg::NONE, Reg::NONE, Reg::NONE, ci));
        if rd.is_some() {
            let ret_ty = decl.sig.ret;
            if ret_ty.is_float() {
                self.push(MInst::unary(MOp::FmvD, rd, Reg::FA0));
            } else {
                self.push(MInst::unary(MOp::Mv, rd, Reg::A0));
            }
        }
    }

    fn brif(&mut self, i: Inst) {
        let f = self.f;
        let targets = f.branch_targets(i);
        let labels: [MBlock; 2] = std::array::from_fn(|k| {
            let t = &targets[k];
            if t.args.is_empty() {
                self.mblock(t.block)
            } else {
                let e = self.new_edge_block();
                self.pending_edges.push((e, t.block, t.args));
                e
            }
        });
        let c = f.arg(i, 0);
        let ci = f.def_inst(c).filter(|ci| self.fused[ci.index()]);
        match ci {
            Some(ci) => {
                let (a, b) = (f.arg(ci, 0), f.arg(ci, 1));
                let (ra, rb) = (self.reg(a), self.reg(b));
                let (op, x, y) = match f.data(ci).cond() {
                    CmpCond::Eq => (MOp::Beq, ra, rb),
                    CmpCond::Ne => (MOp::Bne, ra, rb),
                    CmpCond::Lt => (MOp::Blt, ra, rb),
                    CmpCond::Ge => (MOp::Bge, ra, rb),
                    CmpCond::Gt => (MOp::Blt, rb, ra),
                    CmpCond::Le => (MOp::Bge, rb, ra),
                };
                self.push(MInst::branch(op, x, y, labels[0].label()));
            }
            None => {
                let rc = self.reg(c);
                self.push(MInst::branch(MOp::Bne, rc, Reg::ZERO, labels[0].label()));
            }
        }
        self.push(MInst::jump(labels[1].label()));
    }

    /// Parallel copies of `args` into the parameters of `target`.
    fn copies(&mut self, target: Block, args: &[Value]) {
        let f = self.f;
        let params = &f.blocks.params[target];
        let CopyBufs {
            mut regs,
            mut remats,
            mut seq,
        } = std::mem::take(&mut self.copy_bufs);
        regs.clear();
        remats.clear();
        seq.clear();
        for (&p, &a) in params.iter().zip(args) {
            let d = self.vmap[p.index()];
            let r = self.held(a);
            if r.is_some() {
                regs.push((d, r));
            } else {
                remats.push((d, a));
            }
        }
        let mf = &mut self.mf;
        phi::sequentialize(
            &regs,
            |d| {
                let c = mf.class(d);
                mf.new_vreg(c)
            },
            |d, s| seq.push((d, s)),
        );
        for &(d, s) in &seq {
            let c = self.mf.class(d);
            self.push(mov(c, d, s));
        }
        for &(d, a) in &remats {
            self.move_into(d, a);
        }
        self.copy_bufs = CopyBufs { regs, remats, seq };
    }
}

fn mov(c: RegClass, d: Reg, s: Reg) -> MInst {
    match c {
        RegClass::Int => MInst::unary(MOp::Mv, d, s),
        RegClass::Float => MInst::unary(MOp::FmvD, d, s),
    }
}

/// Whether the i64 value `v` is a sign-extended i32 already, so truncating it is a copy: an
/// arithmetic shift right by 32 or more, or a logical one by 33 or more.
fn fits_i32(f: &Function, v: Value) -> bool {
    let Some(i) = f.def_inst(v) else {
        return false;
    };
    // The high half of a product with a constant below 2^31 is below it.
    if f.op(i) == Opcode::Mulhu {
        let small = |a: Value| f.as_iconst(a).is_some_and(|c| (0..1 << 31).contains(&c));
        return small(f.arg(i, 0)) || small(f.arg(i, 1));
    }
    let k = match f.op(i) {
        Opcode::Ashr | Opcode::Lshr => f.as_iconst(f.arg(i, 1)).map(|k| k & 63),
        _ => None,
    };
    match (f.op(i), k) {
        (Opcode::Ashr, Some(k)) => k >= 32,
        (Opcode::Lshr, Some(k)) => k >= 33,
        _ => false,
    }
}

pub fn load_op(ty: Type) -> MOp {
    match ty {
        Type::I32 => MOp::Lw,
        Type::F32 => MOp::Flw,
        Type::F64 => MOp::Fld,
        _ => MOp::Ld,
    }
}

pub fn store_op(ty: Type) -> MOp {
    match ty {
        Type::I32 => MOp::Sw,
        Type::F32 => MOp::Fsw,
        Type::F64 => MOp::Fsd,
        _ => MOp::Sd,
    }
}

/// A multiplication by `c` as a shift and one addition (`c = 2^n + 1`, `true`) or subtraction
/// (`c = 2^n - 1`, `false`): two one-cycle operations, a cycle less than `mul`'s latency on
/// the path through it and no register for the constant (gcc and LLVM do the same). `ty`
/// bounds `n` (an i32 multiplication wraps in 32 bits either way).
fn shift_add(c: i64, ty: Type) -> Option<(i64, bool)> {
    if c < 3 {
        return None;
    }
    let c = c as u64;
    let (n, plus) = if (c - 1).is_power_of_two() {
        ((c - 1).trailing_zeros(), true)
    } else if (c + 1).is_power_of_two() {
        ((c + 1).trailing_zeros(), false)
    } else {
        return None;
    };
    let bits = if ty == Type::I32 { 31 } else { 63 };
    (n < bits).then_some((i64::from(n), plus))
}

/// Removes pure instructions whose virtual result is never read, transitively.
fn sweep_dead(mf: &mut MFunc) {
    let mut uses = vec![0u32; mf.num_vregs()];
    // Per register, its last definition.
    let mut last_def = vec![0u32; mf.num_vregs()];
    for (k, mi) in mf.insts.iter().enumerate() {
        for r in mi.uses() {
            if r.is_virt() {
                uses[r.vindex()] += 1;
            }
        }
        if mi.rd.is_virt() {
            last_def[mi.rd.vindex()] = k as u32;
        }
    }
    let pure = |mi: &MInst| mi.rd.is_virt() && !mi.op.is_store() && mi.op != MOp::Call;
    let mut dead = vec![false; mf.insts.len()];
    // Backward sweeps until stable; each sweep removes chains defined in order. A sweep finds
    // an instruction dead only if its register lost its last read after the sweep before
    // passed it: when a register loses its last read at `k` and is defined after `k`. So the
    // next sweep starts at the last such definition, and none is needed without one.
    let mut top = mf.insts.len();
    while top > 0 {
        let mut next = 0;
        for k in (0..top).rev() {
            let mi = mf.insts[k];
            if dead[k] || !pure(&mi) || uses[mi.rd.vindex()] != 0 {
                continue;
            }
            dead[k] = true;
            for r in mi.uses() {
                if r.is_virt() {
                    let v = r.vindex();
                    uses[v] -= 1;
                    if uses[v] == 0 && last_def[v] as usize > k {
                        next = next.max(last_def[v] as usize + 1);
                    }
                }
            }
        }
        top = next;
    }
    if !dead.iter().any(|&d| d) {
        return;
    }
    // Compacts in place: `insts[..w]` are the instructions kept so far.
    let mut new_index = vec![0u32; mf.insts.len() + 1];
    let mut w = 0;
    for k in 0..mf.insts.len() {
        new_index[k] = w as u32;
        if !dead[k] {
            mf.insts[w] = mf.insts[k];
            w += 1;
        }
    }
    new_index[mf.insts.len()] = w as u32;
    for b in mf.blocks.as_mut_slice() {
        b.start = new_index[b.start as usize];
        b.end = new_index[b.end as usize];
    }
    mf.insts.truncate(w);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lp64d_argument_classes() {
        use ArgLoc::*;
        let mut tys = vec![Type::F32; 10];
        tys.extend(vec![Type::I32; 10]);
        let l = classify_args(&tys, 20);
        assert_eq!(l[7], Float(7));
        assert_eq!(l[8], FloatInInt(0));
        assert_eq!(l[9], FloatInInt(1));
        assert_eq!(l[10], Int(2));
        assert_eq!(l[15], Int(7));
        assert_eq!(l[16], Stack(0));
        // Variadic doubles use integer registers.
        let l = classify_args(&[Type::Ptr, Type::F64], 1);
        assert_eq!(l[1], FloatInInt(1));
    }
}
