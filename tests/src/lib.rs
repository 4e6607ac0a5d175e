//! Whole-stack tests of amd-hcq on the mock GPU live in this package's `tests/`
//! folder. The runtime and the mock are not built yet, so only the packet layer is
//! exercised here for now (see the README's crate map).
