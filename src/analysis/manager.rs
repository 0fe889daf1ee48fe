//! The analysis manager of one function: analyses computed on first request and cached until a
//! pass says it did not preserve them.
//!
//! A function pass asks `FuncAnalyses` for what it needs (`am.cfg(f)`, `am.domtree(f)`,
//! `am.loops(f)`, `am.ranges(f, cx)`, or several at once with `cfg_domtree` / `all`) and returns
//! the set it left valid (`Preserved`); the runner drops the rest (`invalidate`). A pass that
//! edits the CFG in the middle of its work and needs an analysis again calls `invalidate` itself
//! first.
//!
//! Dependencies form one chain: the dominator tree is computed from the CFG and the loop forest
//! from both, so dropping the CFG drops the other two, and dropping the dominator tree drops the
//! loops. Value ranges are computed from the CFG, the dominator tree and the instructions, so
//! they go with the dominator tree and with any change at all (`INSTS`).
//!
//! "Preserved" means equal to a fresh computation, order included: the CFG's predecessor lists
//! follow the layout's block order and its tables are sized by the number of blocks, so moving a
//! block, or making one (even one never inserted), does not preserve the CFG. `check` compares
//! the cached analyses with fresh ones; the pass runner calls it after every pass under
//! `verify_each`, so a wrong claim is reported naming the pass, and debug builds (and managers
//! made `checking`, as the runner makes them under `verify_each`) call it on every request, so a
//! pass that forgets to `invalidate` after its own edit is caught too.

use super::{Cfg, DomTree, LoopForest, Ranges};
use crate::ir::{Function, ModuleCx};

/// A set of analyses a pass left valid (a small bit set). `INSTS` stands for the instructions
/// themselves: a pass that keeps it changed nothing at all, which is how fixed-point groups of
/// passes know to stop.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Preserved(u8);

impl Preserved {
    pub const CFG: Preserved = Preserved(1);
    pub const DOMTREE: Preserved = Preserved(2);
    pub const LOOPS: Preserved = Preserved(4);
    pub const INSTS: Preserved = Preserved(8);
    /// Loop-simplified form (every loop entered from outside has a preheader), not an analysis
    /// but a property the manager tracks so that it is established once and kept.
    pub const LOOP_SIMPLIFIED: Preserved = Preserved(16);

    /// Everything: the pass changed nothing.
    pub const fn all() -> Preserved {
        Preserved(0b11111)
    }

    /// No analysis.
    pub const fn none() -> Preserved {
        Preserved(0)
    }

    /// The CFG and everything computed from it alone (dominator tree, loops, loop-simplified
    /// form): for passes that edit instructions but no branch target, block or block order.
    pub const fn block_graph() -> Preserved {
        Preserved(Self::CFG.0 | Self::DOMTREE.0 | Self::LOOPS.0 | Self::LOOP_SIMPLIFIED.0)
    }

    /// `all()` when nothing changed, `block_graph()` otherwise: for passes that edit
    /// instructions only.
    pub const fn cfg_kept(changed: bool) -> Preserved {
        if changed {
            Self::block_graph()
        } else {
            Self::all()
        }
    }

    /// `all()` when nothing changed, otherwise whatever is still cached: for a pass that drops
    /// the analyses (`FuncAnalyses::invalidate`) right after each edit of the block graph, so
    /// that what it asks for afterwards describes the function it leaves (its later edits touch
    /// instructions only). The loop-simplified flag stays as such a pass left it.
    pub const fn cached_kept(changed: bool) -> Preserved {
        Self::cfg_kept(changed)
    }

    /// `all()` when nothing changed, `none()` otherwise: for passes that do not say more.
    pub const fn unless(changed: bool) -> Preserved {
        if changed {
            Self::none()
        } else {
            Self::all()
        }
    }

    pub const fn contains(self, other: Preserved) -> bool {
        self.0 & other.0 == other.0
    }

    pub const fn union(self, other: Preserved) -> Preserved {
        Preserved(self.0 | other.0)
    }

    /// What both keep: the result of running two passes in a row.
    pub const fn intersect(self, other: Preserved) -> Preserved {
        Preserved(self.0 & other.0)
    }

    /// Whether nothing is preserved.
    pub const fn is_none(self) -> bool {
        self.0 == 0
    }

    /// Whether the pass changed nothing.
    pub const fn is_unchanged(self) -> bool {
        self.0 == Self::all().0
    }
}

/// The CFG of `f`, in the tables of the spare one if there is one.
fn fresh_cfg(f: &Function, spare: &mut Spare) -> Cfg {
    let mut cfg = spare.cfg.take().unwrap_or_default();
    cfg.recompute(f);
    cfg
}

/// The dominator tree of `f`, in the tables of the spare one if there is one.
fn fresh_domtree(f: &Function, cfg: &Cfg, spare: &mut Spare) -> DomTree {
    let mut dt = spare.domtree.take().unwrap_or_default();
    dt.recompute(f, cfg);
    dt
}

/// The loop forest of `cfg` and `dt`, in the tables of the spare one if there is one.
fn fresh_loops(cfg: &Cfg, dt: &DomTree, spare: &mut Spare) -> LoopForest {
    let mut forest = spare.loops.take().unwrap_or_default();
    forest.recompute(cfg, dt);
    forest
}

/// The cached analyses of one function.
#[derive(Default)]
pub struct FuncAnalyses {
    cfg: Option<Cfg>,
    domtree: Option<DomTree>,
    loops: Option<LoopForest>,
    ranges: Option<Ranges>,
    /// Loop-simplified form holds (established by `loop_simplify`, kept since).
    loop_simplified: bool,
    /// Every request first checks the cached analyses against fresh ones (as debug builds
    /// always do): set under `verify_each`.
    check_requests: bool,
    /// Dropped analyses whose tables the next computation of the same analysis refills:
    /// passes that edit the block graph and ask again recompute without allocating anew.
    spare: Spare,
}

/// The tables of dropped analyses (see `FuncAnalyses::spare`).
#[derive(Default)]
struct Spare {
    cfg: Option<Cfg>,
    domtree: Option<DomTree>,
    loops: Option<LoopForest>,
}

impl FuncAnalyses {
    pub fn new() -> FuncAnalyses {
        FuncAnalyses::default()
    }

    /// A manager that checks every request against fresh analyses when `on` (the pass runner
    /// under `verify_each`), as debug builds always do.
    pub fn checking(on: bool) -> FuncAnalyses {
        FuncAnalyses {
            check_requests: on,
            ..FuncAnalyses::default()
        }
    }

    pub fn cfg(&mut self, f: &Function) -> &Cfg {
        self.debug_check(f);
        let spare = &mut self.spare;
        self.cfg.get_or_insert_with(|| fresh_cfg(f, spare))
    }

    pub fn domtree(&mut self, f: &Function) -> &DomTree {
        self.cfg_domtree(f).1
    }

    pub fn loops(&mut self, f: &Function) -> &LoopForest {
        self.all(f).2
    }

    /// The CFG and the dominator tree, borrowed together.
    pub fn cfg_domtree(&mut self, f: &Function) -> (&Cfg, &DomTree) {
        self.debug_check(f);
        let spare = &mut self.spare;
        let cfg = self.cfg.get_or_insert_with(|| fresh_cfg(f, spare));
        let dt = self
            .domtree
            .get_or_insert_with(|| fresh_domtree(f, cfg, spare));
        (cfg, dt)
    }

    /// The CFG, the dominator tree and the loop forest, borrowed together.
    pub fn all(&mut self, f: &Function) -> (&Cfg, &DomTree, &LoopForest) {
        self.debug_check(f);
        let spare = &mut self.spare;
        let cfg = self.cfg.get_or_insert_with(|| fresh_cfg(f, spare));
        let dt = self
            .domtree
            .get_or_insert_with(|| fresh_domtree(f, cfg, spare));
        let loops = self
            .loops
            .get_or_insert_with(|| fresh_loops(cfg, dt, spare));
        (cfg, dt, loops)
    }

    /// The CFG, the dominator tree and the value ranges, borrowed together. The ranges read
    /// the module context only for what a segment of function passes does not change (callees'
    /// result bounds, constant globals).
    pub fn ranges(&mut self, f: &Function, cx: &ModuleCx) -> (&Cfg, &DomTree, &Ranges) {
        self.debug_check(f);
        let spare = &mut self.spare;
        let cfg = self.cfg.get_or_insert_with(|| fresh_cfg(f, spare));
        let dt = self
            .domtree
            .get_or_insert_with(|| fresh_domtree(f, cfg, spare));
        let ranges = self
            .ranges
            .get_or_insert_with(|| Ranges::compute(f, cx, cfg, dt));
        (cfg, dt, ranges)
    }

    /// The CFG, the dominator tree, the loop forest and the value ranges, borrowed together.
    pub fn all_ranges(
        &mut self,
        f: &Function,
        cx: &ModuleCx,
    ) -> (&Cfg, &DomTree, &LoopForest, &Ranges) {
        self.all(f);
        self.ranges(f, cx);
        // All four were just computed (or were cached).
        (
            self.cfg.as_ref().unwrap(),
            self.domtree.as_ref().unwrap(),
            self.loops.as_ref().unwrap(),
            self.ranges.as_ref().unwrap(),
        )
    }

    /// In debug builds and under `checking`, every request first checks that what is cached is
    /// still true: a pass that edits the CFG and asks again without `invalidate` is caught where
    /// it asks.
    fn debug_check(&self, f: &Function) {
        if cfg!(debug_assertions) || self.check_requests {
            if let Err(e) = self.check(f) {
                panic!("stale analysis requested in @{}: {e}", f.name);
            }
        }
    }

    /// Whether loop-simplified form is known to hold.
    pub fn is_loop_simplified(&self) -> bool {
        self.loop_simplified
    }

    /// Records that loop-simplified form holds (after `rewrite::loops::ensure_preheaders`).
    pub fn set_loop_simplified(&mut self) {
        self.loop_simplified = true;
    }

    /// Records that the blocks unreachable from the entry left the layout: the cached CFG loses
    /// their edges; the dominator tree and the loops, which only describe reachable blocks,
    /// stay as they are, and so does loop-simplified form (no header had an unreachable
    /// predecessor where it held).
    pub fn unreachable_removed(&mut self) {
        if let Some(cfg) = &mut self.cfg {
            cfg.drop_unreachable();
        }
        self.ranges = None;
    }

    /// Drops every cached analysis not in `keep`, and those computed from a dropped one.
    pub fn invalidate(&mut self, keep: Preserved) {
        if !keep.contains(Preserved::LOOP_SIMPLIFIED) {
            self.loop_simplified = false;
        }
        if !keep.contains(Preserved::CFG) {
            if let Some(cfg) = self.cfg.take() {
                self.spare.cfg = Some(cfg);
            }
        }
        if self.cfg.is_none() || !keep.contains(Preserved::DOMTREE) {
            if let Some(dt) = self.domtree.take() {
                self.spare.domtree = Some(dt);
            }
        }
        if self.domtree.is_none() || !keep.contains(Preserved::LOOPS) {
            if let Some(loops) = self.loops.take() {
                self.spare.loops = Some(loops);
            }
        }
        if self.domtree.is_none() || !keep.contains(Preserved::INSTS) {
            self.ranges = None;
        }
    }

    /// Compares every cached analysis but the ranges with a fresh computation; `Err` names the
    /// first that differs. (Cached ranges outlive only passes that changed nothing.)
    pub fn check(&self, f: &Function) -> Result<(), String> {
        let cfg = Cfg::compute(f);
        if self.loop_simplified {
            let dt = DomTree::compute(f, &cfg);
            if !LoopForest::compute(&cfg, &dt).is_loop_simplified(&cfg) {
                return Err("a loop has no preheader (loop-simplified form is lost)".into());
            }
        }
        let Some(cached_cfg) = &self.cfg else {
            return Ok(());
        };
        if *cached_cfg != cfg {
            return Err("the cached CFG differs from a fresh one".into());
        }
        let Some(cached_dt) = &self.domtree else {
            return Ok(());
        };
        let dt = DomTree::compute(f, &cfg);
        if *cached_dt != dt {
            return Err("the cached dominator tree differs from a fresh one".into());
        }
        match &self.loops {
            Some(cached) if *cached != LoopForest::compute(&cfg, &dt) => {
                Err("the cached loop forest differs from a fresh one".into())
            }
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOOP: &str = "func @f() -> i32 {
bb0:
    v0 = iconst.i32 0
    jump bb1(v0)
bb1(v1: i32):
    v2 = iconst.i32 10
    v3 = icmp.lt v1, v2
    brif v3, bb2, bb3
bb2:
    v4 = iconst.i32 1
    v5 = add.i32 v1, v4
    jump bb1(v5)
bb3:
    ret v1
}
";

    #[test]
    fn cached_until_invalidated_and_dependents_go_with_the_cfg() {
        let mut m = crate::ir::parse::module(LOOP).unwrap();
        let f = m.funcs.iter_mut().next().unwrap().1;
        let mut am = FuncAnalyses::new();
        assert_eq!(am.loops(f).loops.len(), 1);
        assert!(am.check(f).is_ok());
        // Keeping the CFG but not the dominator tree drops the loops too.
        am.invalidate(Preserved::CFG);
        assert!(am.cfg.is_some() && am.domtree.is_none() && am.loops.is_none());
        am.all(f);
        // A new block makes the cached CFG stale; `check` sees it.
        f.make_block();
        assert!(am.check(f).is_err());
        am.invalidate(Preserved::LOOPS);
        assert!(am.cfg.is_none() && am.domtree.is_none() && am.loops.is_none());
        am.all(f);
        assert!(am.check(f).is_ok());
    }

    #[test]
    #[should_panic(expected = "stale analysis requested in @f")]
    fn a_checking_manager_refuses_a_stale_request() {
        let mut m = crate::ir::parse::module(LOOP).unwrap();
        let f = m.funcs.iter_mut().next().unwrap().1;
        let mut am = FuncAnalyses::checking(true);
        am.all(f);
        // An edit of the block graph without `invalidate`, then a request.
        f.make_block();
        am.cfg(f);
    }

    #[test]
    fn ranges_outlive_only_passes_that_changed_nothing() {
        let mut m = crate::ir::parse::module(LOOP).unwrap();
        let crate::ir::Module { cx, funcs } = &mut m;
        let f = funcs.iter_mut().next().unwrap().1;
        let mut am = FuncAnalyses::new();
        am.ranges(f, cx);
        am.invalidate(Preserved::all());
        assert!(am.ranges.is_some());
        // Instructions changed, the block graph did not: the CFG stays, the ranges go.
        am.invalidate(Preserved::block_graph());
        assert!(am.cfg.is_some() && am.domtree.is_some() && am.ranges.is_none());
    }

    #[test]
    fn preserved_sets() {
        assert!(Preserved::all().contains(Preserved::LOOPS));
        assert!(Preserved::none().is_none());
        assert_eq!(Preserved::unless(true), Preserved::none());
        assert_eq!(Preserved::unless(false), Preserved::all());
        assert_eq!(
            Preserved::block_graph().intersect(Preserved::CFG),
            Preserved::CFG
        );
        assert!(!Preserved::cfg_kept(true).is_unchanged());
        assert!(Preserved::cfg_kept(false).is_unchanged());
        assert!(Preserved::cfg_kept(true).contains(Preserved::LOOPS));
    }
}
