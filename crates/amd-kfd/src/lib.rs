//! The KFD transport of amd-hcq: `/dev/kfd` ioctls, sysfs topology, doorbells and
//! events, reached only through the `Sys` trait.
//!
//! **Not built yet.** This crate is an empty shell in the workspace; its contents
//! arrive with the KFD transport work (see the README's crate map).
#![deny(unsafe_code)]
