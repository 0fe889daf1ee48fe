//! Optimization passes and the pass manager.
