//! The register boundary: 32-bit register access by dword offset into a device's
//! register BAR.
//!
//! The driverless transport (`amd-am`) reaches a GPU's registers only through [`Mmio`].
//! On hardware the registers are BAR 5 (`resource5`) mapped into the process, and the
//! implementation is a bounds-checked volatile load or store into that mapping. Under
//! the mock GPU they are a register model with side effects (firmware replies, ring
//! pointers, acknowledgements), which a plain memory mapping cannot express: a store
//! must run code. So the mock answers [`Sys::mmio`](crate::sys::Sys::mmio) for the
//! address of a mapped register BAR with its model, and the transport uses that
//! instead of the mapping; the host answers `None`, and the transport falls back to
//! volatile access to the mapping it made (`amd_am::bar::registers` makes that
//! choice).
//!
//! The trait lives here, beside [`Sys`](crate::sys::Sys), because `Sys::mmio` names it
//! and `amd-am` (which re-exports it) and `amd-mockgpu` both depend on this crate:
//! no crate has to depend on the other.

/// 32-bit registers addressed by dword offset from the start of a register BAR.
///
/// Offsets are what the register headers call `reg…` plus the IP block's base from IP
/// discovery (dwords, not bytes). An offset at or past [`Mmio::size_dwords`] reads as
/// all ones and a write to it is dropped, as a PCI read or write of nothing behaves;
/// registers past the BAR are reached indirectly (an index/data register pair), which
/// is the caller's business.
pub trait Mmio: Send + Sync {
    /// Reads the register at dword offset `reg`.
    fn read32(&self, reg: u32) -> u32;
    /// Writes `value` to the register at dword offset `reg`.
    fn write32(&self, reg: u32, value: u32);
    /// The BAR's size in dwords.
    fn size_dwords(&self) -> u32;
}
