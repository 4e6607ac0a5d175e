//! The amd-hcq runtime: devices, buffers, signals, compute and copy queues, programs,
//! kernel arguments, copies, profiling and graph replay.
//!
//! **Not built yet.** This crate is an empty shell in the workspace; the packets it
//! will write already exist in `amd-packets` (see the README's crate map).
#![deny(unsafe_code)]
