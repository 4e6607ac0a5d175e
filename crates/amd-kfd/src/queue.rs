//! Hardware queues: a PM4 compute queue, an AQL compute queue or an SDMA queue, with
//! its ring, read/write pointers, EOP buffer and context-save area, and its doorbell.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use crate::abi::*;
use crate::memory::{KfdMemory, MemoryKind};
use crate::process::{DOORBELL_MAP_SIZE, DeviceShared, Doorbells};
use crate::raw::{PAGE_SIZE, RawCell};
use crate::topology::{CwsrSizes, GpuNode};
use crate::{KfdError, Result, raw};

/// The kind of queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum QueueKind {
    /// PM4 compute (MEC) queue.
    Compute,
    /// AQL compute queue: 64-byte HSA packets, pointers in packets in an `amd_queue_t`
    /// (see [`KfdQueue::pointers`]).
    ComputeAql,
    /// SDMA copy queue.
    Sdma,
}

/// Where an AQL queue's pointers sit in its `amd_queue_t`.
const AQL_WRITE_PTR: usize = amd_packets::aql::queue::WRITE_DISPATCH_ID as usize;
const AQL_READ_PTR: usize = amd_packets::aql::queue::READ_DISPATCH_ID as usize;

/// EOP buffer size of gfx10.3/gfx11 compute queues (`eop_buffer_size` of kfd_queue.c).
pub const EOP_BUFFER_SIZE: usize = 0x1000;

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
        shared: &Arc<DeviceShared>,
        node: &GpuNode,
        kind: QueueKind,
        ring_size: usize,
    ) -> Result<Self> {
        if ring_size < KFD_MIN_QUEUE_RING_SIZE as usize || !ring_size.is_power_of_two() || ring_size > 1 << 31 {
            return Err(KfdError::InvalidArgument(format!(
                "ring size {ring_size:#x}: a power of two from {KFD_MIN_QUEUE_RING_SIZE} bytes to 2 GiB"
            )));
        }
        let ring = KfdMemory::alloc(shared, ring_size, MemoryKind::UNCACHED)?;
        let gart = KfdMemory::alloc(shared, PAGE_SIZE, MemoryKind::UNCACHED)?;
        let (eop, cwsr, sizes): (_, _, Option<(CwsrSizes, u32)>) = match kind {
            QueueKind::Compute | QueueKind::ComputeAql => {
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
                let eop = KfdMemory::alloc(shared, EOP_BUFFER_SIZE, MemoryKind::DEVICE)?;
                let cwsr = KfdMemory::alloc(shared, sizes.allocation_size()?, MemoryKind::DEVICE)?;
                (Some(eop), Some(cwsr), Some((sizes, sizes.ctx_save_restore_size()?)))
            }
            QueueKind::Sdma => (None, None, None),
        };
        // A PM4 or SDMA queue's pointers: the write pointer at 0, the read pointer at 8.
        // An AQL queue's: write_dispatch_id and read_dispatch_id of an amd_queue_t
        // filled in here (the command processor finds the structure's base from the
        // offset stored after the read pointer).
        let (wptr_off, rptr_off) = match kind {
            QueueKind::ComputeAql => {
                Self::init_amd_queue(&gart, &ring, ring_size)?;
                (AQL_WRITE_PTR, AQL_READ_PTR)
            }
            _ => (0, 8),
        };
        let mut a = kfd_ioctl_create_queue_args {
            ring_base_address: ring.va() as u64,
            write_pointer_address: (gart.va() + wptr_off) as u64,
            read_pointer_address: (gart.va() + rptr_off) as u64,
            ring_size: ring_size as u32,
            gpu_id: shared.gpu_id,
            queue_type: match kind {
                QueueKind::Compute => KFD_IOC_QUEUE_TYPE_COMPUTE,
                QueueKind::ComputeAql => KFD_IOC_QUEUE_TYPE_COMPUTE_AQL,
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
        process.ioctl(AMDKFD_IOC_CREATE_QUEUE, &mut a)?;
        let id = a.queue_id;
        // From here on a failure must destroy the queue: build the owner first.
        let destroy = |e: KfdError| {
            let mut d = kfd_ioctl_destroy_queue_args { queue_id: id, pad: 0 };
            if let Err(e2) = process.ioctl(AMDKFD_IOC_DESTROY_QUEUE, &mut d) {
                process.defer(e2.into());
            }
            e
        };
        let doorbell = Self::map_doorbell(shared, a.doorbell_offset).map_err(destroy)?;
        let cell = |addr: u64, what: &str| {
            RawCell::new(addr as usize).ok_or_else(|| KfdError::BadReply(format!("{what} at {addr:#x} is misaligned")))
        };
        let doorbell = cell(doorbell as u64, "doorbell").map_err(destroy)?;
        let write_ptr = cell((gart.va() + wptr_off) as u64, "write pointer").map_err(destroy)?;
        let read_ptr = cell((gart.va() + rptr_off) as u64, "read pointer").map_err(destroy)?;
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

    /// The `amd_queue_t` of an AQL queue at the start of `gart`: the ring's address and
    /// size in packets, 64-bit pointers, profiling timestamps in completion signals,
    /// and the offset of `read_dispatch_id` from the base. No scratch until
    /// [`KfdQueue::set_aql_scratch`].
    fn init_amd_queue(gart: &KfdMemory, ring: &KfdMemory, ring_size: usize) -> Result<()> {
        use amd_packets::aql::{PACKET_BYTES, queue};
        let mut d = [0u8; queue::BYTES as usize];
        let mut put = |off: u64, bytes: &[u8]| d[off as usize..off as usize + bytes.len()].copy_from_slice(bytes);
        // hsa_queue_t: type (1 = HSA_QUEUE_TYPE_SINGLE) at 0, features (1 = kernel
        // dispatch) at 4, base_address at 8, size in packets at 24.
        put(0, &1u32.to_le_bytes());
        put(4, &1u32.to_le_bytes());
        put(8, &(ring.va() as u64).to_le_bytes());
        put(24, &((ring_size / PACKET_BYTES) as u32).to_le_bytes());
        put(
            queue::READ_DISPATCH_ID_FIELD_BASE_BYTE_OFFSET,
            &(AQL_READ_PTR as u32).to_le_bytes(),
        );
        put(
            queue::QUEUE_PROPERTIES,
            &(queue::PROPERTIES_IS_PTR64 | queue::PROPERTIES_ENABLE_PROFILING).to_le_bytes(),
        );
        gart.write(0, &d)
    }

    /// Gives an AQL queue's dispatches scratch: the fields of its `amd_queue_t` the
    /// command processor programs a dispatch's scratch from (`compute_tmpring_size`,
    /// the scratch base, bytes per lane, and the private segment buffer descriptor).
    pub fn set_aql_scratch(&self, tmpring_size: u32, base: u64, lane_bytes: u32, descriptor: [u32; 4]) -> Result<()> {
        use amd_packets::aql::queue;
        if self.kind != QueueKind::ComputeAql {
            return Err(KfdError::InvalidArgument(format!(
                "set_aql_scratch on a {:?} queue: only AQL queues have an amd_queue_t",
                self.kind
            )));
        }
        let g = &self.gart;
        g.write(queue::COMPUTE_TMPRING_SIZE as usize, &tmpring_size.to_le_bytes())?;
        let words: Vec<u8> = descriptor.iter().flat_map(|w| w.to_le_bytes()).collect();
        g.write(queue::SCRATCH_RESOURCE_DESCRIPTOR as usize, &words)?;
        g.write(queue::SCRATCH_BACKING_MEMORY_LOCATION as usize, &base.to_le_bytes())?;
        g.write(queue::SCRATCH_WAVE64_LANE_BYTE_SIZE as usize, &lane_bytes.to_le_bytes())
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
    /// The page holding the write pointer (offset 0) and read pointer (offset 8); for
    /// an AQL queue, its `amd_queue_t` (`write_dispatch_id` at 56, `read_dispatch_id`
    /// at 128: [`amd_packets::aql::queue`]).
    pub fn pointers(&self) -> &KfdMemory {
        &self.gart
    }
    /// Address of the doorbell.
    pub fn doorbell_addr(&self) -> usize {
        self.doorbell.addr()
    }

    /// The read pointer the engine publishes (dwords for PM4, bytes for SDMA, packets
    /// for AQL).
    pub fn read_ptr(&self) -> u64 {
        // Acquire: ring slots before the read pointer are free once it is seen.
        self.read_ptr.load(Ordering::Acquire)
    }

    /// Publishes the write pointer and rings the doorbell with it (an AQL queue's
    /// doorbell takes the index of the last packet written, as HSA's doorbell signal
    /// does).
    pub fn submit(&self, write_ptr: u64) {
        // Release: the packets written to the ring before this call are visible to the
        // engine before the new write pointer and the doorbell.
        self.write_ptr.store(write_ptr, Ordering::Release);
        let doorbell = match self.kind {
            QueueKind::ComputeAql => write_ptr.wrapping_sub(1),
            _ => write_ptr,
        };
        self.doorbell.store(doorbell, Ordering::Release);
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
        if let Err(e) = p.ioctl(AMDKFD_IOC_DESTROY_QUEUE, &mut d) {
            p.defer(e.into());
        }
    }
}
