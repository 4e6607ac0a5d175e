//! What a register block sees: the registers' stored values, VRAM, and the trait
//! through which a block gives registers behaviour.

use std::collections::HashMap;
use std::fmt::Debug;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::Arc;

pub use amd_regs::regs::{AmReg, CField, generated};

use super::iv::IvEntry;

/// Interrupts raised and not yet delivered to the IH, at most.
pub(crate) const PENDING_IRQS: usize = 256;

/// Stored register values, as a block sees them.
#[derive(Debug, Default)]
pub struct Values {
    pub(crate) values: HashMap<u32, u32>,
    pub(crate) resets: HashMap<u32, u32>,
    pub(crate) irqs: Vec<IvEntry>,
}

impl Values {
    /// The register's value (its reset value if never written).
    pub fn get(&self, reg: u32) -> u32 {
        self.values
            .get(&reg)
            .or_else(|| self.resets.get(&reg))
            .copied()
            .unwrap_or(0)
    }

    /// Sets the register's value.
    pub fn set(&mut self, reg: u32, value: u32) {
        self.values.insert(reg, value);
    }

    /// Raises an interrupt: `e` goes to the IH once the block returns (dropped if
    /// too many are pending).
    pub fn raise(&mut self, e: IvEntry) {
        if self.irqs.len() < PENDING_IRQS {
            self.irqs.push(e);
        }
    }
}

/// What a block asks of the register file after a write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// Nothing more.
    None,
    /// A mode1 reset of the whole GPU: every register and block back to reset.
    Mode1Reset,
    /// Signal the MSI (the IH re-arming on a read-pointer update).
    Msi,
}

/// The side of a register block: behaviour for the registers in its range.
pub trait RegisterBlock: Debug + Send + std::any::Any {
    /// A write of `value` to `reg` (already stored in `v`).
    fn write(&mut self, v: &mut Values, vram: Option<&Vram>, reg: u32, value: u32) -> Effect;
    /// A read of `reg`: `Some` to answer instead of the stored value.
    fn read(&mut self, _v: &mut Values, _reg: u32) -> Option<u32> {
        None
    }
    /// Back to the state after power-on (a mode1 or function reset).
    fn reset(&mut self, v: &mut Values);
    /// For downcasting in [`RegisterFile::with_block`](super::RegisterFile::with_block).
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any;
}

/// VRAM as the device's blocks see it: byte offsets from the start of VRAM, every
/// access bounds-checked.
#[derive(Debug, Clone)]
pub struct Vram {
    file: Arc<File>,
    size: u64,
    /// Dword address of `MMMC_VM_FB_LOCATION_BASE`, which places VRAM in the memory
    /// controller's address space.
    fb_base_reg: Option<u32>,
}

impl Vram {
    pub(crate) fn new(file: Arc<File>, size: u64, fb_base_reg: Option<u32>) -> Self {
        Vram {
            file,
            size,
            fb_base_reg,
        }
    }

    /// VRAM bytes.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The VRAM offset of memory-controller address `mc` for a range of `len` bytes,
    /// or `None` if the range is not wholly inside VRAM.
    pub fn mc_to_offset(&self, v: &Values, mc: u64, len: u64) -> Option<u64> {
        let base = self.fb_base_reg.map_or(0, |r| u64::from(v.get(r)) << 24);
        let off = mc.checked_sub(base)?;
        (off.checked_add(len)? <= self.size).then_some(off)
    }

    /// Reads `buf.len()` bytes at VRAM offset `off`.
    pub fn read(&self, off: u64, buf: &mut [u8]) -> bool {
        let fits = off.checked_add(buf.len() as u64).is_some_and(|e| e <= self.size);
        fits && self.file.read_exact_at(buf, off).is_ok()
    }

    /// Writes `data` at VRAM offset `off`.
    pub fn write(&self, off: u64, data: &[u8]) -> bool {
        let fits = off.checked_add(data.len() as u64).is_some_and(|e| e <= self.size);
        fits && self.file.write_all_at(data, off).is_ok()
    }

    /// Reads a little-endian dword.
    pub fn read_u32(&self, off: u64) -> Option<u32> {
        let mut b = [0; 4];
        self.read(off, &mut b).then(|| u32::from_le_bytes(b))
    }
}
