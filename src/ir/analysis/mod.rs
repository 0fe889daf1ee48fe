//! Analyses over a function: dense tables indexed by block id, computed on demand and dropped
//! when the IR they describe changes (passes recompute them explicitly).

pub mod cfg;
pub mod domtree;
pub mod loops;

pub use cfg::Cfg;
pub use domtree::DomTree;
pub use loops::LoopForest;
