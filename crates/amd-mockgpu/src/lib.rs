//! A mock AMD GPU under the `Sys`/`Mmio` boundary: an emulated KFD driver, PM4 and
//! SDMA ring executors, and an RDNA3 interpreter.
//!
//! **Not built yet.** This crate is an empty shell in the workspace (see the README's
//! crate map).
#![deny(unsafe_code)]
