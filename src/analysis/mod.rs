//! Analyses of a function: dense tables indexed by block id, and the manager that computes them
//! on first request and keeps them until a pass says they changed.
//!
//! - `cfg`: predecessors, successors, reverse post-order.
//! - `domtree`: the dominator tree, dominance queries and frontiers.
//! - `loops`: the natural-loop forest.
//! - `manager`: `FuncAnalyses` (the per-function cache) and `Preserved` (what a pass kept).
//! - `range`: a signed interval per integer value, narrowed by dominating branch conditions
//!   (`Ranges::is_nonneg`, `range_at`, `decide_icmp`); computed by the pass that asks.
//!
//! Analyses read `ir` and nothing else; passes read analyses.

pub mod cfg;
pub mod domtree;
pub mod loops;
pub mod manager;
pub mod range;

pub use cfg::Cfg;
pub use domtree::DomTree;
pub use loops::{Loop, LoopForest};
pub use manager::{FuncAnalyses, Preserved};
pub use range::{Interval, Ranges};
