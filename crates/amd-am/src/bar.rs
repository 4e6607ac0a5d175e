//! Registers of a mapped BAR as an [`Mmio`]: the device's own model where the `Sys`
//! has one (the mock), else volatile loads and stores to the mapping (hardware).

#![allow(unsafe_code)]

use std::sync::Arc;

use amd_kfd::mmio::Mmio;
use amd_kfd::sys::Sys;

/// A register BAR mapped into the process, accessed with bounds-checked volatile
/// 32-bit loads and stores. It does not own the mapping.
#[derive(Debug)]
pub struct VolatileBar {
    addr: usize,
    size_dwords: u32,
}

impl VolatileBar {
    /// Registers at `addr`, `len` bytes (rounded down to whole dwords).
    ///
    /// # Safety
    /// `addr..addr + len` must be a live mapping, readable and writable, 4-byte
    /// aligned, for as long as the value lives, and nothing else may treat it as
    /// ordinary memory (registers change under the program).
    pub unsafe fn new(addr: usize, len: usize) -> Self {
        VolatileBar {
            addr,
            size_dwords: u32::try_from(len / 4).unwrap_or(u32::MAX),
        }
    }

    fn ptr(&self, reg: u32) -> Option<*mut u32> {
        (reg < self.size_dwords).then(|| (self.addr + reg as usize * 4) as *mut u32)
    }
}

impl Mmio for VolatileBar {
    fn read32(&self, reg: u32) -> u32 {
        match self.ptr(reg) {
            // SAFETY: `reg` is inside the mapping, which is live, aligned and readable
            // (constructor contract).
            Some(p) => unsafe { p.read_volatile() },
            None => u32::MAX,
        }
    }

    fn write32(&self, reg: u32, value: u32) {
        if let Some(p) = self.ptr(reg) {
            // SAFETY: as above, and writable.
            unsafe { p.write_volatile(value) }
        }
    }

    fn size_dwords(&self) -> u32 {
        self.size_dwords
    }
}

/// The registers of the register BAR that `sys` mapped at `addr` (`len` bytes): the
/// model [`Sys::mmio`] gives (an emulated device), else volatile access to the
/// mapping.
///
/// # Safety
/// As [`VolatileBar::new`]: `addr..addr + len` is the live mapping `sys.mmap`
/// returned for the register BAR, and outlives the result.
pub unsafe fn registers(sys: &dyn Sys, addr: usize, len: usize) -> Arc<dyn Mmio> {
    match sys.mmio(addr) {
        Some(m) => m,
        // SAFETY: this function's contract.
        None => Arc::new(unsafe { VolatileBar::new(addr, len) }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn volatile_access_is_bounds_checked() {
        let mut mem = vec![0u32; 16];
        {
            // SAFETY: `mem` is a live, aligned, writable buffer of 64 bytes that
            // outlives `bar` (this block) and is not touched while `bar` is used.
            let bar = unsafe { VolatileBar::new(mem.as_mut_ptr() as usize, 64) };
            bar.write32(3, 0x1234_5678);
            assert_eq!(bar.read32(3), 0x1234_5678);
            assert_eq!(bar.read32(16), u32::MAX);
            bar.write32(16, 1);
            assert_eq!(bar.size_dwords(), 16);
        }
        assert_eq!(mem[3], 0x1234_5678);
    }
}
