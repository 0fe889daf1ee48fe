//! Analyses of a function: dense tables indexed by block id, and the manager that computes them
//! on first request and keeps them until a pass says they changed.
//!
//! - `cfg`: predecessors, successors, reverse post-order.
//! - `constants`: values proven constant and blocks that may run (given known parameters).
//! - `domtree`: the dominator tree, dominance queries and frontiers.
//! - `loops`: the natural-loop forest.
//! - `alias`: the base object of a pointer, whether two bases may alias, escapes.
//! - `depend`: dependence of two accesses to one object in a loop (linear offsets).
//! - `effects`: what each function may do (module pass writing `ModuleCx` summaries).
//! - `ivrange`: the range an induction variable stays in.
//! - `loop_shape`: a latch's counter and exit test; loops with one latch and a preheader.
//! - `manager`: `FuncAnalyses` (the per-function cache) and `Preserved` (what a pass kept).
//! - `recursion`: where a function calls itself, and whether on `param ± constant` arguments.
//! - `range`: a signed interval per integer value, narrowed by dominating branch conditions
//!   (`Ranges::is_nonneg`, `range_at`, `decide_icmp`); cached by the manager until anything
//!   changes, or computed by a pass that needs them for a function it is editing.
//!
//! Analyses read `ir` and nothing else; passes read analyses.

pub mod alias;
pub mod cfg;
pub mod constants;
pub mod depend;
pub mod domtree;
pub mod effects;
pub mod ivrange;
pub mod loop_shape;
pub mod loops;
pub mod manager;
pub mod range;
pub mod recursion;
pub mod retrange;

pub use cfg::Cfg;
pub use domtree::DomTree;
pub use loops::{Loop, LoopForest};
pub use manager::{FuncAnalyses, Preserved};
pub use range::{Interval, Ranges};
