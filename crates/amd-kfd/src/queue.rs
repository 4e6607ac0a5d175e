//! Hardware queues: a PM4 compute queue or an SDMA queue, with its ring, read/write
//! pointers, EOP buffer and context-save area, and its doorbell.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use crate::abi::*;
use crate::device::{DOORBELL_MAP_SIZE, DeviceShared, Doorbells, KfdDevice};
use crate::memory::{KfdMemory, MemoryKind, PAGE_SIZE};
use crate::raw::RawCell;
use crate::topology::NodeProperties;
use crate::{KfdError, Result, raw};

/// The kind of queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum QueueKind {
    /// PM4 compute (MEC) queue.
    Compute,
    /// SDMA copy queue.
    Sdma,
}

/// EOP buffer size of gfx10.3/gfx11 compute queues (`eop_buffer_size` of kfd_queue.c).
pub const EOP_BUFFER_SIZE: usize = 0x1000;

/// Context-save sizes of a compute queue, as the kernel computes them
/// (`kfd_queue_ctx_save_restore_size`, linux 6.12) and tinygrad 0.10.1 mirrors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CwsrSizes {
    /// Control stack bytes (`ctl_stack_size`).
    pub ctl_stack_size: u32,
    /// Workgroup data bytes.
    pub wg_data_size: u32,
    /// Debugger bytes after the save area.
    pub debug_memory_size: u32,
}

impl CwsrSizes {
    /// The sizes for a GPU with these properties (gfx10.1 and later). An error for
    /// a GPU without compute units, or whose sizes overflow (the message names the
    /// values).
    pub fn for_props(props: &NodeProperties) -> Result<Self> {
        match Self::compute(props) {
            Ok(Some(s)) => Ok(s),
            Ok(None) => Err(KfdError::InvalidArgument(format!(
                "{} has no compute units",
                props.arch()
            ))),
            Err(msg) => Err(props.invalid(msg)),
        }
    }

    /// [`CwsrSizes::for_props`] with the error as text (`None`: no compute units).
    /// Every step is checked: the properties come from sysfs. The kernel computes
    /// these in 32 bits (`u32` fields of `kfd_node_properties`), so a size that
    /// does not fit 32 bits is an error here, not a wrapped number.
    pub(crate) fn compute(props: &NodeProperties) -> std::result::Result<Option<Self>, String> {
        let gfxv = props.gfx_target_version;
        let xcc = props.num_xcc.max(1);
        let cu = props.cu_count() / xcc;
        if cu == 0 {
            return Ok(None);
        }
        let what = || {
            format!(
                "simd_count {} / simd_per_cu {} / num_xcc {xcc} = {cu} CUs",
                props.simd_count, props.simd_per_cu
            )
        };
        let over = |step: &str| format!("{}: {step} overflows 32 bits", what());
        let wave_num = cu.checked_mul(32).ok_or_else(|| over("× 32 waves per CU"))?;
        let vgpr_per_cu: u32 = if matches!(gfxv, 110000 | 110001 | 110501 | 120000 | 120001) {
            0x60000
        } else {
            0x40000
        };
        let page = PAGE_SIZE as u32;
        let wg = (vgpr_per_cu + 0x4000 + 0x10000 + 0x1000)
            .checked_mul(cu)
            .and_then(|v| v.checked_next_multiple_of(page))
            .ok_or_else(|| over("× the workgroup context data per CU"))?;
        let ctl = wave_num
            .checked_mul(12)
            .and_then(|v| v.checked_add(40 + 8))
            .and_then(|v| v.checked_next_multiple_of(page))
            .ok_or_else(|| over("× 12 control-stack bytes per wave"))?;
        let debug = wave_num
            .checked_mul(32)
            .and_then(|v| v.checked_next_multiple_of(64))
            .ok_or_else(|| over("× 32 debugger bytes per wave"))?;
        let sizes = CwsrSizes {
            ctl_stack_size: ctl,
            wg_data_size: wg,
            debug_memory_size: debug,
        };
        // The ioctl's ctx_save_restore_size, and the allocation, must fit too.
        sizes.checked_total().ok_or_else(|| {
            over(&format!(
                "control stack {ctl:#x} + workgroup data {wg:#x} + debugger {debug:#x}"
            ))
        })?;
        Ok(Some(sizes))
    }

    /// (`ctx_save_restore_size`, allocation bytes), if both fit 32 bits.
    fn checked_total(&self) -> Option<(u32, u32)> {
        let save = self.ctl_stack_size.checked_add(self.wg_data_size)?;
        let alloc = save
            .checked_add(self.debug_memory_size)?
            .checked_next_multiple_of(PAGE_SIZE as u32)?;
        Some((save, alloc))
    }

    fn total_error(&self) -> KfdError {
        KfdError::InvalidArgument(format!(
            "context-save sizes {:#x} + {:#x} + {:#x} overflow 32 bits",
            self.ctl_stack_size, self.wg_data_size, self.debug_memory_size
        ))
    }

    /// `ctx_save_restore_size` (control stack + workgroup data); an error if the
    /// sum does not fit 32 bits (never for sizes [`CwsrSizes::for_props`] made).
    pub fn ctx_save_restore_size(&self) -> Result<u32> {
        self.checked_total().map(|t| t.0).ok_or_else(|| self.total_error())
    }

    /// Bytes of the context-save allocation (save area + debugger bytes,
    /// page-rounded); an error if that does not fit 32 bits (never for sizes
    /// [`CwsrSizes::for_props`] made).
    pub fn allocation_size(&self) -> Result<usize> {
        self.checked_total()
            .map(|t| t.1 as usize)
            .ok_or_else(|| self.total_error())
    }
}

/// A hardware queue. Dropping it destroys the queue, then frees its memory.
#[derive(Debug)]
pub struct KfdQueue {
    id: u32,
    kind: QueueKind,
    ring_size: usize,
    doorbell: RawCell,
    write_ptr: RawCell,
    read_ptr: RawCell,
    shared: Arc<DeviceShared>,
    // Freed after the queue is destroyed (Drop runs before fields drop).
    ring: KfdMemory,
    gart: KfdMemory,
    _eop: Option<KfdMemory>,
    _cwsr: Option<KfdMemory>,
}

impl KfdQueue {
    pub(crate) fn create(
        dev: &KfdDevice,
        shared: &Arc<DeviceShared>,
        kind: QueueKind,
        ring_size: usize,
    ) -> Result<Self> {
        if ring_size < KFD_MIN_QUEUE_RING_SIZE as usize || !ring_size.is_power_of_two() || ring_size > 1 << 31 {
            return Err(KfdError::InvalidArgument(format!(
                "ring size {ring_size:#x}: a power of two from {KFD_MIN_QUEUE_RING_SIZE} bytes to 2 GiB"
            )));
        }
        let ring = dev.alloc(ring_size, MemoryKind::UNCACHED)?;
        let gart = dev.alloc(PAGE_SIZE, MemoryKind::UNCACHED)?;
        let (eop, cwsr, sizes): (_, _, Option<(CwsrSizes, u32)>) = match kind {
            QueueKind::Compute => {
                let node = dev.node();
                let sizes = match CwsrSizes::compute(&node.props) {
                    Ok(Some(s)) => s,
                    Ok(None) => CwsrSizes::for_props(&node.props)?,
                    // Parsed properties always fit; these were changed after parsing.
                    Err(msg) => {
                        return Err(KfdError::Topology {
                            path: node.path.join("properties"),
                            line: None,
                            msg,
                        });
                    }
                };
                let eop = dev.alloc(EOP_BUFFER_SIZE, MemoryKind::DEVICE)?;
                let cwsr = dev.alloc(sizes.allocation_size()?, MemoryKind::DEVICE)?;
                (Some(eop), Some(cwsr), Some((sizes, sizes.ctx_save_restore_size()?)))
            }
            QueueKind::Sdma => (None, None, None),
        };
        let mut a = kfd_ioctl_create_queue_args {
            ring_base_address: ring.va() as u64,
            write_pointer_address: gart.va() as u64,
            read_pointer_address: gart.va() as u64 + 8,
            ring_size: ring_size as u32,
            gpu_id: shared.gpu_id,
            queue_type: match kind {
                QueueKind::Compute => KFD_IOC_QUEUE_TYPE_COMPUTE,
                QueueKind::Sdma => KFD_IOC_QUEUE_TYPE_SDMA,
            },
            queue_percentage: KFD_MAX_QUEUE_PERCENTAGE,
            queue_priority: KFD_MAX_QUEUE_PRIORITY,
            eop_buffer_address: eop.as_ref().map_or(0, |m| m.va() as u64),
            eop_buffer_size: eop.as_ref().map_or(0, |m| m.size() as u64),
            ctx_save_restore_address: cwsr.as_ref().map_or(0, |m| m.va() as u64),
            ctx_save_restore_size: sizes.map_or(0, |s| s.1),
            ctl_stack_size: sizes.map_or(0, |s| s.0.ctl_stack_size),
            ..Default::default()
        };
        let process = &shared.process;
        raw::ioctl(process.sys.as_ref(), process.kfd_fd, AMDKFD_IOC_CREATE_QUEUE, &mut a)?;
        let id = a.queue_id;
        // From here on a failure must destroy the queue: build the owner first.
        let destroy = |e: KfdError| {
            let mut d = kfd_ioctl_destroy_queue_args { queue_id: id, pad: 0 };
            if let Err(e2) = raw::ioctl(process.sys.as_ref(), process.kfd_fd, AMDKFD_IOC_DESTROY_QUEUE, &mut d) {
                process.defer(e2.into());
            }
            e
        };
        let doorbell = Self::map_doorbell(shared, a.doorbell_offset).map_err(destroy)?;
        let cell = |addr: u64, what: &str| {
            RawCell::new(addr as usize).ok_or_else(|| KfdError::BadReply(format!("{what} at {addr:#x} is misaligned")))
        };
        let doorbell = cell(doorbell as u64, "doorbell").map_err(destroy)?;
        let write_ptr = cell(gart.va() as u64, "write pointer").map_err(destroy)?;
        let read_ptr = cell(gart.va() as u64 + 8, "read pointer").map_err(destroy)?;
        Ok(KfdQueue {
            id,
            kind,
            ring_size,
            doorbell,
            write_ptr,
            read_ptr,
            shared: shared.clone(),
            ring,
            gart,
            _eop: eop,
            _cwsr: cwsr,
        })
    }

    /// Maps the device's doorbell pages on first use and returns the address of the
    /// doorbell at `offset`.
    fn map_doorbell(shared: &Arc<DeviceShared>, offset: u64) -> Result<usize> {
        let mut db = shared.doorbells.lock();
        let base_offset = offset & !(DOORBELL_MAP_SIZE as u64 - 1);
        let pages = match *db {
            Some(d) => d,
            None => {
                let p = &shared.process;
                let addr = raw::map_file(p.sys.as_ref(), p.kfd_fd, DOORBELL_MAP_SIZE, base_offset)?;
                *db.insert(Doorbells { base_offset, addr })
            }
        };
        // Every queue of a GPU rings a doorbell in the same two pages.
        if base_offset != pages.base_offset || offset % 8 != 0 {
            return Err(KfdError::BadReply(format!(
                "doorbell offset {offset:#x} outside the doorbell pages at {:#x}",
                pages.base_offset
            )));
        }
        Ok(pages.addr + (offset - base_offset) as usize)
    }

    /// KFD's queue id.
    pub fn id(&self) -> u32 {
        self.id
    }
    /// The kind of queue.
    pub fn kind(&self) -> QueueKind {
        self.kind
    }
    /// Ring length in bytes (its buffer may be longer: allocations are whole pages).
    pub fn ring_size(&self) -> usize {
        self.ring_size
    }

    /// The ring buffer.
    pub fn ring(&self) -> &KfdMemory {
        &self.ring
    }
    /// The page holding the write pointer (offset 0) and read pointer (offset 8).
    pub fn pointers(&self) -> &KfdMemory {
        &self.gart
    }
    /// Address of the doorbell.
    pub fn doorbell_addr(&self) -> usize {
        self.doorbell.addr()
    }

    /// The read pointer the engine publishes (dwords for PM4, bytes for SDMA).
    pub fn read_ptr(&self) -> u64 {
        // Acquire: ring slots before the read pointer are free once it is seen.
        self.read_ptr.load(Ordering::Acquire)
    }

    /// Publishes the write pointer and rings the doorbell with it.
    pub fn submit(&self, write_ptr: u64) {
        // Release: the packets written to the ring before this call are visible to the
        // engine before the new write pointer and the doorbell.
        self.write_ptr.store(write_ptr, Ordering::Release);
        self.doorbell.store(write_ptr, Ordering::Release);
        self.shared.process.sys.doorbell_written(self.doorbell.addr());
    }
}

impl Drop for KfdQueue {
    fn drop(&mut self) {
        let p = &self.shared.process;
        let mut d = kfd_ioctl_destroy_queue_args {
            queue_id: self.id,
            pad: 0,
        };
        if let Err(e) = raw::ioctl(p.sys.as_ref(), p.kfd_fd, AMDKFD_IOC_DESTROY_QUEUE, &mut d) {
            p.defer(e.into());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn cwsr_sizes_match_tinygrad_for_a_7900_xtx() {
        let text = "gfx_target_version 110000\nsimd_count 192\nsimd_per_cu 2\nmax_waves_per_simd 16\n\
            lds_size_in_kb 64\nmax_slots_scratch_cu 32\narray_count 12\nsimd_arrays_per_engine 2\n\
            drm_render_minor 128\n";
        let props = NodeProperties::parse(text, Path::new("p")).unwrap();
        let s = CwsrSizes::for_props(&props).unwrap();
        // The seed: max_cu_id + 1 = 96 CUs, max_wave_id + 1 = 32 waves per CU.
        let round = |v: u32| v.next_multiple_of(4096);
        assert_eq!(s.wg_data_size, round((0x60000 + 0x4000 + 0x10000 + 0x1000) * 96));
        assert_eq!(s.ctl_stack_size, round(12 * 96 * 32 + 8 + 40));
        assert_eq!(s.debug_memory_size, (96 * 32 * 32u32).next_multiple_of(64));
        assert_eq!(s.allocation_size().unwrap() % 4096, 0);
    }
}
