//! The sysyc IR: typed ids, flat tables, SSA with block parameters.
