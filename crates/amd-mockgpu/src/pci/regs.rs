//! The register file behind BAR 5: what the driverless transport's register reads and
//! writes reach under the mock, through [`Mmio`].
//!
//! It stores values (sparse: a register never written reads its reset value, 0
//! unless stated) and records every write in order, for tests. Registers with
//! behaviour belong to blocks ([`RegisterBlock`]) attached by address range: a write
//! in a block's range is stored, then runs the block (which may change other
//! registers, read or write VRAM, or ask for a mode1 reset); a read may be computed by
//! the block. An index/data pair ([`RegisterFile::set_indirect`]) reaches every
//! register, inside the BAR or past it, by byte address, through the same dispatch.

use std::collections::HashMap;
use std::fmt::Debug;
use std::ops::Range;

use amd_kfd::mmio::Mmio;
use parking_lot::Mutex;

use super::block::Vram;
use super::ih::{Delivery, Ih};
use super::iv::IvEntry;
use crate::engine::{DevicePort, Engine};

/// `RCC_DEV0_EPF0_RCC_CONFIG_MEMSIZE` at its fixed dword offset: VRAM size in MiB. A
/// driver reads it before it knows any IP base, to find the discovery table at the top
/// of VRAM (tinygrad's `_run_discovery`).
pub use amd_regs::regs::RCC_CONFIG_MEMSIZE;

pub use super::block::{AmReg, CField, Effect, RegisterBlock, Values, generated};

/// One recorded register write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegWrite {
    /// Dword offset.
    pub reg: u32,
    /// Value written.
    pub value: u32,
}

/// A block and the register ranges it answers.
type Attached = (Vec<Range<u32>>, Box<dyn RegisterBlock>);

#[derive(Debug)]
struct Regs {
    values: Values,
    writes: Vec<RegWrite>,
    blocks: Vec<Attached>,
    /// Index and data registers of the indirect pair, and the last index.
    indirect: Option<(u32, u32)>,
    vram: Option<Vram>,
    mode1_resets: u32,
    /// The eventfd the MSI signals (the mock's descriptor number, a host one).
    msi_eventfd: Option<i32>,
}

/// A GPU's registers (BAR 5), implementing [`Mmio`].
#[derive(Debug)]
pub struct RegisterFile {
    size_dwords: u32,
    regs: Mutex<Regs>,
}

impl RegisterFile {
    /// A register file of `size_dwords` registers, all reading 0 except those in
    /// `resets` (dword offset, reset value).
    pub fn new(size_dwords: u32, resets: &[(u32, u32)]) -> Self {
        RegisterFile {
            size_dwords,
            regs: Mutex::new(Regs {
                values: Values {
                    values: HashMap::new(),
                    resets: resets.iter().copied().collect(),
                    irqs: Vec::new(),
                },
                writes: Vec::new(),
                blocks: Vec::new(),
                indirect: None,
                vram: None,
                mode1_resets: 0,
                msi_eventfd: None,
            }),
        }
    }

    /// Attaches `block` to the registers in `range` (dword addresses); the first block
    /// attached to a register wins. Its reset runs at once.
    pub fn attach(&self, range: Range<u32>, block: Box<dyn RegisterBlock>) {
        self.attach_ranges(vec![range], block);
    }

    /// Attaches `block` to the registers in each of `ranges` (a block whose
    /// registers sit in several segments); otherwise as [`attach`](Self::attach).
    pub fn attach_ranges(&self, ranges: Vec<Range<u32>>, mut block: Box<dyn RegisterBlock>) {
        let mut r = self.regs.lock();
        block.reset(&mut r.values);
        r.blocks.push((ranges, block));
    }

    /// Makes `index`/`data` an indirect pair: a byte address written to `index`
    /// selects the register `data` reads and writes (RSMU index/data).
    pub fn set_indirect(&self, index: u32, data: u32) {
        self.regs.lock().indirect = Some((index, data));
    }

    /// Gives the blocks the device's VRAM.
    pub fn set_vram(&self, vram: Vram) {
        self.regs.lock().vram = Some(vram);
    }

    /// Sets a reset value (a register reads it until written, and again after a reset).
    pub fn set_reset_value(&self, reg: u32, value: u32) {
        self.regs.lock().values.resets.insert(reg, value);
    }

    /// Runs `f` on the first attached block of type `B`.
    pub fn with_block<B: RegisterBlock, T>(&self, f: impl FnOnce(&mut B) -> T) -> Option<T> {
        let mut r = self.regs.lock();
        r.blocks
            .iter_mut()
            .find_map(|(_, b)| b.as_any_mut().downcast_mut::<B>())
            .map(f)
    }

    /// Runs `f` on the first attached block of type `B` that `pick` accepts, with the
    /// register values and VRAM.
    pub(crate) fn with_block_state<B: RegisterBlock, T>(
        &self,
        pick: impl Fn(&B) -> bool,
        f: impl FnOnce(&mut B, &mut Values, Option<&Vram>) -> T,
    ) -> Option<T> {
        let mut r = self.regs.lock();
        let Regs {
            values, blocks, vram, ..
        } = &mut *r;
        let b = blocks
            .iter_mut()
            .filter_map(|(_, b)| b.as_any_mut().downcast_mut::<B>())
            .find(|b| pick(b))?;
        let out = f(b, values, vram.as_ref());
        Self::deliver_locked(&mut r);
        Some(out)
    }

    /// Sets the eventfd the device's MSI signals (VFIO SET_IRQS), or none.
    pub(crate) fn set_msi_eventfd(&self, fd: Option<i32>) {
        self.regs.lock().msi_eventfd = fd;
    }

    /// Raises an interrupt from outside the register blocks (an engine's end of pipe
    /// or trap): the IH writes `e` to its ring and signals the MSI as it is
    /// programmed. What became of it; [`Delivery::Dropped`] without an IH block.
    pub fn raise_interrupt(&self, e: IvEntry) -> Delivery {
        let mut r = self.regs.lock();
        Self::deliver_locked(&mut r);
        let d = Self::offer(&mut r, &e);
        Self::signal(&r, d);
        d
    }

    fn offer(r: &mut Regs, e: &IvEntry) -> Delivery {
        let Regs {
            values, blocks, vram, ..
        } = r;
        blocks
            .iter_mut()
            .find_map(|(_, b)| b.as_any_mut().downcast_mut::<Ih>())
            .map_or(Delivery::Dropped, |ih| ih.push(values, vram.as_ref(), e))
    }

    fn signal(r: &Regs, d: Delivery) {
        if d == Delivery::Written(true)
            && let Some(fd) = r.msi_eventfd
        {
            // An eventfd write of 1; a failure (the descriptor went away) loses the
            // interrupt, as a disabled MSI would.
            let _ = amd_kfd::sys::Sys::write(&amd_kfd::sys::HostSys, amd_kfd::sys::Fd(fd), &1u64.to_ne_bytes());
        }
    }

    /// Delivers the interrupts blocks raised to the IH.
    fn deliver_locked(r: &mut Regs) {
        let irqs = std::mem::take(&mut r.values.irqs);
        for e in &irqs {
            let d = Self::offer(r, e);
            Self::signal(r, d);
        }
    }

    /// How many mode1 resets the device went through.
    pub fn mode1_resets(&self) -> u32 {
        self.regs.lock().mode1_resets
    }

    /// Every write since the last [`take_writes`](Self::take_writes), in order.
    pub fn writes(&self) -> Vec<RegWrite> {
        self.regs.lock().writes.clone()
    }

    /// Every write since the last call, in order; forgets them.
    pub fn take_writes(&self) -> Vec<RegWrite> {
        std::mem::take(&mut self.regs.lock().writes)
    }

    /// Sets a register's value without recording a write or running a block (as the
    /// hardware or firmware would change it).
    pub fn set(&self, reg: u32, value: u32) {
        if reg < self.size_dwords {
            self.regs.lock().values.set(reg, value);
        }
    }

    /// Back to the reset values, blocks included; the write log is kept.
    pub fn reset(&self) {
        Self::reset_locked(&mut self.regs.lock());
    }

    fn reset_locked(r: &mut Regs) {
        r.values.values.clear();
        r.values.irqs.clear();
        let Regs { values, blocks, .. } = r;
        for (_, b) in blocks.iter_mut() {
            b.reset(values);
        }
    }

    fn read_locked(r: &mut Regs, reg: u32, depth: u32) -> u32 {
        if let Some((index, data)) = r.indirect
            && reg == data
            && depth == 0
        {
            let target = r.values.get(index) / 4;
            return Self::read_locked(r, target, 1);
        }
        let Regs { values, blocks, .. } = r;
        if let Some((_, b)) = blocks
            .iter_mut()
            .find(|(ranges, _)| ranges.iter().any(|r| r.contains(&reg)))
            && let Some(v) = b.read(values, reg)
        {
            return v;
        }
        values.get(reg)
    }

    fn write_locked(r: &mut Regs, reg: u32, value: u32, depth: u32) {
        if let Some((index, data)) = r.indirect
            && reg == data
            && depth == 0
        {
            r.values.set(data, value);
            let target = r.values.get(index) / 4;
            return Self::write_locked(r, target, value, 1);
        }
        r.values.set(reg, value);
        let Regs {
            values, blocks, vram, ..
        } = r;
        let effect = match blocks
            .iter_mut()
            .find(|(ranges, _)| ranges.iter().any(|r| r.contains(&reg)))
        {
            Some((_, b)) => b.write(values, vram.as_ref(), reg, value),
            None => Effect::None,
        };
        if effect == Effect::Msi {
            Self::signal(r, Delivery::Written(true));
        }
        if effect == Effect::Mode1Reset {
            r.mode1_resets = r.mode1_resets.saturating_add(1);
            Self::reset_locked(r);
        }
    }
}

/// The device as its engines reach it: register reads and writes through the same
/// dispatch as BAR 5, and the CP end-of-pipe and SDMA trap interrupts into the IH.
impl DevicePort for RegisterFile {
    fn read_reg(&self, reg: u32) -> u32 {
        Mmio::read32(self, reg)
    }

    fn write_reg(&self, reg: u32, value: u32) {
        Mmio::write32(self, reg, value)
    }

    fn interrupt(&self, engine: Engine, ring_id: u8, ctxid: u32) {
        let e = match engine {
            // An AQL completion signal interrupts as an end-of-pipe event does.
            Engine::Pm4 | Engine::Aql => IvEntry::cp_eop(ring_id, 0, 0, ctxid),
            Engine::Sdma => IvEntry::sdma_trap(ring_id, 0, 0, ctxid),
        };
        self.raise_interrupt(e);
    }
}

impl Mmio for RegisterFile {
    fn read32(&self, reg: u32) -> u32 {
        if reg >= self.size_dwords {
            return u32::MAX;
        }
        Self::read_locked(&mut self.regs.lock(), reg, 0)
    }

    fn write32(&self, reg: u32, value: u32) {
        if reg >= self.size_dwords {
            return;
        }
        let mut r = self.regs.lock();
        r.writes.push(RegWrite { reg, value });
        Self::write_locked(&mut r, reg, value, 0);
        Self::deliver_locked(&mut r);
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
