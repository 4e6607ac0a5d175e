//! The register file behind BAR 5: what the driverless transport's register reads and
//! writes reach under the mock, through [`Mmio`].
//!
//! It stores values (sparse: a register never written reads its reset value, 0
//! unless stated) and records every write in order, for tests. It has no side effects
//! yet: the PSP, SMU, interrupt handler, TLB invalidation and ring registers are the
//! next step, and will be modelled here — a write runs the block's model, a read may
//! be computed.

use std::collections::HashMap;

use amd_kfd::mmio::Mmio;
use parking_lot::Mutex;

/// `RCC_DEV0_EPF0_RCC_CONFIG_MEMSIZE` at its fixed dword offset (NBIO segment 2 base
/// 0xd20 + 0xc3): VRAM size in MiB. A driver reads it before it knows any IP base, to
/// find the discovery table at the top of VRAM (tinygrad's `_run_discovery`).
pub const RCC_CONFIG_MEMSIZE: u32 = 0xde3;

/// One recorded register write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegWrite {
    /// Dword offset.
    pub reg: u32,
    /// Value written.
    pub value: u32,
}

#[derive(Debug, Default)]
struct Regs {
    values: HashMap<u32, u32>,
    writes: Vec<RegWrite>,
}

/// A GPU's registers (BAR 5), implementing [`Mmio`].
#[derive(Debug)]
pub struct RegisterFile {
    size_dwords: u32,
    resets: HashMap<u32, u32>,
    regs: Mutex<Regs>,
}

impl RegisterFile {
    /// A register file of `size_dwords` registers, all reading 0 except those in
    /// `resets` (dword offset, reset value).
    pub fn new(size_dwords: u32, resets: &[(u32, u32)]) -> Self {
        RegisterFile {
            size_dwords,
            resets: resets.iter().copied().collect(),
            regs: Mutex::new(Regs::default()),
        }
    }

    /// Every write since the last [`take_writes`](Self::take_writes), in order.
    pub fn writes(&self) -> Vec<RegWrite> {
        self.regs.lock().writes.clone()
    }

    /// Every write since the last call, in order; forgets them.
    pub fn take_writes(&self) -> Vec<RegWrite> {
        std::mem::take(&mut self.regs.lock().writes)
    }

    /// Sets a register's value without recording a write (as the hardware or
    /// firmware would change it).
    pub fn set(&self, reg: u32, value: u32) {
        if reg < self.size_dwords {
            self.regs.lock().values.insert(reg, value);
        }
    }

    /// Back to the reset values; the write log is kept.
    pub fn reset(&self) {
        self.regs.lock().values.clear();
    }
}

impl Mmio for RegisterFile {
    fn read32(&self, reg: u32) -> u32 {
        if reg >= self.size_dwords {
            return u32::MAX;
        }
        let r = self.regs.lock();
        r.values
            .get(&reg)
            .or_else(|| self.resets.get(&reg))
            .copied()
            .unwrap_or(0)
    }

    fn write32(&self, reg: u32, value: u32) {
        if reg >= self.size_dwords {
            return;
        }
        let mut r = self.regs.lock();
        r.values.insert(reg, value);
        r.writes.push(RegWrite { reg, value });
    }

    fn size_dwords(&self) -> u32 {
        self.size_dwords
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stores_records_and_resets() {
        let f = RegisterFile::new(16, &[(3, 0x200)]);
        assert_eq!(f.read32(3), 0x200);
        assert_eq!(f.read32(4), 0);
        f.write32(4, 7);
        f.write32(3, 1);
        assert_eq!((f.read32(4), f.read32(3)), (7, 1));
        assert_eq!(f.read32(16), u32::MAX);
        f.write32(99, 1);
        assert_eq!(
            f.take_writes(),
            [RegWrite { reg: 4, value: 7 }, RegWrite { reg: 3, value: 1 }]
        );
        f.reset();
        assert_eq!((f.read32(4), f.read32(3)), (0, 0x200));
        assert!(f.writes().is_empty());
    }
}
