//! Whole-stack tests and the main job (`cargo run --release --example vadd`) of amd-hcq.
