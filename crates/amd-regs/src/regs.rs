//! Register names, offsets and fields, and the PSP/SMU/firmware constants, generated
//! from the Linux 6.12 amdgpu headers by `cargo xtask gen-am-regs` (never typed by
//! hand): [`generated`]. The transport reaches a register by its IP block, instance
//! and [`AmReg`] through `amd_am::ip::Registers`; the mock PCI GPU's register model
//! uses the same table (`amd_mockgpu::pci::regs` re-exports it).

/// A register named in the Linux headers: its dword offset inside its IP's register
/// segment `seg` (the `_BASE_IDX`); the discovery table's base for that segment plus
/// `offset` is its dword address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AmReg {
    /// Name without the `reg` prefix.
    pub name: &'static str,
    /// Dword offset inside the segment.
    pub offset: u32,
    /// Segment (base index).
    pub seg: u8,
}

impl AmReg {
    /// The dword address given the IP's segment bases, or `None` if the segment is
    /// missing or the sum overflows.
    pub fn addr(&self, bases: &[u32]) -> Option<u32> {
        bases.get(usize::from(self.seg))?.checked_add(self.offset)
    }
}

/// A field of a firmware-interface struct: byte offset, element size, element count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CField {
    /// Byte offset in the struct.
    pub offset: usize,
    /// Bytes per element.
    pub size: usize,
    /// Elements (1 for a scalar).
    pub count: usize,
}

/// Register names, offsets, fields and PSP/SMU constants generated from the Linux
/// 6.12 amdgpu headers by `cargo xtask gen-am-regs`.
#[allow(missing_docs, non_upper_case_globals)]
#[rustfmt::skip]
pub mod generated {
    include!("regs_generated.rs");
}
