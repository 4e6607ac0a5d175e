//! AMD GPU instruction sets: opcode tables generated from AMD's machine-readable ISA,
//! a decoder into typed fields, a disassembler whose text is `llvm-objdump`'s, and an
//! interpreter that runs whole dispatches.
//!
//! One module per generation ([`rdna3`]: gfx11, wave32 and wave64; [`rdna4`]: gfx12;
//! [`cdna3`]: gfx940–gfx942); what generations share sits beside
//! them: the decoders' [`DecodeError`] and steps, [`Memory`] (how an interpreter
//! reaches a GPU's memory: the embedder implements it, as the mock GPU does over its
//! checked address space, and [`SliceMemory`] maps byte slices for tests and tools), [`ExecError`] (why a dispatch
//! stopped: a memory fault with the access and the instruction, an instruction
//! refused with the reason, a runaway), [`Dispatch`] (the dispatch's registers) and
//! the workgroup scheduler, the exact floating-point arithmetic (`float`), and the
//! helper threads of [`pool`]. This crate knows nothing of queues, drivers or the
//! runtime.
//!
//! ```
//! use amd_isa::rdna3::{Inst, WaveState, execute};
//!
//! // Instructions print as llvm-objdump-19 prints them.
//! let add = [0xd727_0002, 0x0000_1008];
//! assert_eq!(Inst::decode(&add)?.llvm().to_string(), "v_add_f64 v[2:3], s[8:9], s[8:9]");
//! // And run on a wave given whole: v_add_nc_u32 v1, s2, v0.
//! let mut w = WaveState::new(8);
//! w.sgpr[2] = 40;
//! w.vgpr[0] = [2; 32];
//! execute(&[0x4a02_0002], &mut w)?;
//! assert_eq!(w.vgpr[1][0], 42);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(unsafe_code)]

pub mod cdna3;
mod decode;
pub mod dispatch;
pub mod error;
pub mod field;
mod float;
mod fp8_ops;
pub mod memory;
pub mod pool;
pub mod rdna3;
pub mod rdna4;
mod text;

pub use decode::DecodeError;
pub use dispatch::{Counters, Dispatch};
pub use error::{At, ExecError};
pub use memory::{Access, AccessKind, Memory, MemoryFault, SharedMemory, SliceMemory, Stopped};

/// The README's example, run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctest;
