//! RISC-V64 (rv64gc, lp64d) backend: instruction selection, register allocation, frames, emission.
