//! What a transport gives the runtime ([`DeviceInterface`]), and the KFD transport.
//!
//! Who validates: the runtime checks what the caller can foresee (sizes, offsets,
//! kinds, value ranges) before calling the transport; the transport reports only what
//! cannot be foreseen (out of memory, a lost device, a rejected ioctl).

use std::sync::Arc;

use amd_kfd::{KfdDevice, KfdMemory, KfdQueue, MemoryKind, QueueKind, Spread};
use amd_packets::GfxTarget;

use crate::Result;

/// The kinds of memory the runtime allocates (tinygrad 0.10.1's buffer options).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BufferKind {
    /// VRAM, GPU only.
    Device,
    /// VRAM the CPU can map (resizable BAR).
    DeviceCpuVisible,
    /// Uncached, coherent system memory visible to GPU and CPU (signals, rings).
    Uncached,
    /// Pinned host memory mapped for the GPU.
    Host,
}

impl BufferKind {
    /// Whether the CPU can read and write it.
    pub fn cpu_visible(self) -> bool {
        !matches!(self, BufferKind::Device)
    }

    pub(crate) fn kfd(self) -> MemoryKind {
        match self {
            BufferKind::Device => MemoryKind::DEVICE,
            BufferKind::DeviceCpuVisible => MemoryKind::DEVICE_CPU_VISIBLE,
            BufferKind::Uncached => MemoryKind::UNCACHED,
            BufferKind::Host => MemoryKind::HOST,
        }
    }
}

/// A GPU's properties, as the runtime needs them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceProps {
    /// LLVM processor name, e.g. `gfx1100`.
    pub arch: String,
    /// Packet family.
    pub target: GfxTarget,
    /// `gfx_target_version`.
    pub gfx_version: u32,
    /// Compute units.
    pub cu_count: u32,
    /// SIMDs per CU.
    pub simd_per_cu: u32,
    /// Wave slots per SIMD.
    pub max_waves_per_simd: u32,
    /// LDS per workgroup, bytes.
    pub lds_size: u32,
    /// Scratch wave slots per CU.
    pub scratch_slots_per_cu: u32,
    /// Shader arrays.
    pub array_count: u32,
    /// Shader arrays per shader engine.
    pub simd_arrays_per_engine: u32,
    /// The transport's id of the GPU.
    pub gpu_id: u32,
}

/// CPU-visible or not, a buffer of GPU memory owned by a transport.
pub trait DeviceMemory: Send + Sync {
    /// GPU (and, where mapped, CPU) address.
    fn va(&self) -> u64;
    /// Size in bytes.
    fn size(&self) -> usize;
    /// Copies `data` in at `offset` (CPU-visible memory only).
    fn write(&self, offset: usize, data: &[u8]) -> Result<()>;
    /// Copies out at `offset` (CPU-visible memory only).
    fn read(&self, offset: usize, out: &mut [u8]) -> Result<()>;
    /// Writes the low `bytes` (1, 2, 4 or 8) bytes of `v`, little-endian, at `offset`
    /// (CPU-visible memory only).
    fn write_le(&self, offset: usize, v: u64, bytes: usize) -> Result<()> {
        let b = v.to_le_bytes();
        self.write(offset, b.get(..bytes).unwrap_or(&b))
    }
    /// Stores each `(offset, value, bytes)` of `items` as [`DeviceMemory::write_le`],
    /// offsets counted from `base`, each inside `base..base + limit`.
    fn write_le_all(&self, base: usize, limit: usize, items: &[(usize, u64, usize)]) -> Result<()> {
        for &(offset, v, bytes) in items {
            crate::error::check_range(limit, offset, bytes)?;
            self.write_le(base + offset, v, bytes)?;
        }
        Ok(())
    }
    /// For each [`Spread`] of `values`, stores the low `bytes` of its value at each
    /// offset of `offsets[from..to]` as [`DeviceMemory::write_le_all`] does (one value
    /// at several places, as a bound list's sites take them).
    fn write_le_spread(&self, base: usize, limit: usize, values: &[Spread], offsets: &[usize]) -> Result<()> {
        for s in values {
            let at = offsets
                .get(s.from as usize..s.to as usize)
                .ok_or(crate::HcqError::Internal {
                    what: "a spread's offsets lie outside the list of offsets",
                })?;
            for &offset in at {
                self.write_le_all(base, limit, &[(offset, s.value, usize::from(s.bytes))])?;
            }
        }
        Ok(())
    }
    /// Loads the 64-bit value at `offset` (8-aligned) with Acquire.
    fn load_u64(&self, offset: usize) -> Result<u64>;
    /// Stores a 64-bit value at `offset` (8-aligned) with Release.
    fn store_u64(&self, offset: usize, v: u64) -> Result<()>;
}

/// A hardware queue of a transport.
pub trait HwQueue: Send + Sync {
    /// Ring length in bytes.
    fn ring_bytes(&self) -> usize;
    /// Writes `words` into the ring at byte `offset` (no wrap; the caller splits).
    fn write_ring(&self, offset: usize, words: &[u32]) -> Result<()>;
    /// The read pointer the engine publishes (dwords for PM4, bytes for SDMA).
    fn read_ptr(&self) -> u64;
    /// Publishes the write pointer and rings the doorbell.
    fn submit(&self, write_ptr: u64);
    /// The queue's format (PM4 unless it is an AQL queue).
    fn format(&self) -> crate::QueueFormat {
        crate::QueueFormat::Pm4
    }
    /// An AQL queue's scratch for its dispatches, in its `amd_queue_t`
    /// (COMPUTE_TMPRING_SIZE, the scratch base, bytes per lane, the private segment
    /// buffer descriptor); nothing for other queues.
    fn set_aql_scratch(&self, _tmpring_size: u32, _base: u64, _lane_bytes: u32, _descriptor: [u32; 4]) -> Result<()> {
        Ok(())
    }
}

/// What a transport gives the runtime.
pub trait DeviceInterface: Send + Sync + 'static {
    /// A buffer of this transport.
    type Memory: DeviceMemory + 'static;
    /// A queue of this transport.
    type Queue: HwQueue + 'static;

    /// The GPU's properties.
    fn props(&self) -> &DeviceProps;
    /// Allocates `size` bytes of `kind`, mapped to this GPU.
    fn alloc(&self, size: usize, kind: BufferKind) -> Result<Self::Memory>;
    /// Maps memory of another GPU of the same transport into this one.
    fn map(&self, mem: &Self::Memory) -> Result<()>;
    /// Creates a compute (`sdma == false`) or SDMA queue with a ring of `ring_size` bytes.
    fn create_queue(&self, sdma: bool, ring_size: usize) -> Result<Self::Queue>;
    /// Creates an AQL compute queue with a ring of `ring_size` bytes (transports
    /// without them refuse: [`HcqError::QueueFormatUnsupported`](crate::HcqError::QueueFormatUnsupported)).
    fn create_aql_queue(&self, _ring_size: usize) -> Result<Self::Queue> {
        Err(crate::HcqError::QueueFormatUnsupported {
            format: crate::QueueFormat::Aql,
            transport: "driverless",
            why: "the driverless transport sets up PM4 rings only; use the KFD transport",
        })
    }
    /// `(mailbox address, event id)` that a timeline signal writes to wake sleepers.
    fn queue_event(&self) -> Option<(u64, u32)>;
    /// Sleeps until the queue event fires or `timeout_ms` passes.
    fn sleep(&self, timeout_ms: u32) -> Result<bool>;
    /// What the transport knows of a hang (fault addresses and reasons).
    fn hang_report(&self) -> Vec<String>;
    /// Whether freed buffers may be kept for reuse ([`crate::CACHE_LIMIT`]): not where
    /// the memory is watched for uses after free (a mock GPU's sanitizer,
    /// `Sys::watches_freed_memory`), whose quarantine only memory given back reaches.
    fn keeps_freed_memory(&self) -> bool {
        true
    }
}

/// The KFD transport of one GPU.
#[derive(Debug)]
pub struct KfdIface {
    dev: KfdDevice,
    props: DeviceProps,
}

impl KfdIface {
    /// Wraps an opened KFD device.
    pub fn new(dev: KfdDevice) -> Result<Self> {
        let p = &dev.node().props;
        if p.num_xcc > 1 {
            return Err(crate::HcqError::MultiXcc {
                arch: p.arch(),
                xccs: p.num_xcc,
            });
        }
        let props = DeviceProps {
            arch: p.arch(),
            target: dev.target(),
            gfx_version: p.gfx_target_version,
            cu_count: p.cu_count(),
            simd_per_cu: p.simd_per_cu,
            max_waves_per_simd: p.max_waves_per_simd,
            lds_size: p.lds_size()?,
            scratch_slots_per_cu: p.max_slots_scratch_cu,
            array_count: p.array_count,
            simd_arrays_per_engine: p.simd_arrays_per_engine,
            gpu_id: dev.gpu_id(),
        };
        Ok(KfdIface { dev, props })
    }

    /// The KFD device.
    pub fn kfd_device(&self) -> &KfdDevice {
        &self.dev
    }
}

impl DeviceMemory for Arc<KfdMemory> {
    #[inline]
    fn va(&self) -> u64 {
        KfdMemory::va(self) as u64
    }
    fn size(&self) -> usize {
        KfdMemory::size(self)
    }
    fn write(&self, offset: usize, data: &[u8]) -> Result<()> {
        Ok(KfdMemory::write(self, offset, data)?)
    }
    #[inline]
    fn write_le(&self, offset: usize, v: u64, bytes: usize) -> Result<()> {
        Ok(KfdMemory::write_le(self, offset, v, bytes)?)
    }
    fn read(&self, offset: usize, out: &mut [u8]) -> Result<()> {
        Ok(KfdMemory::read(self, offset, out)?)
    }
    #[inline]
    fn write_le_all(&self, base: usize, limit: usize, items: &[(usize, u64, usize)]) -> Result<()> {
        Ok(KfdMemory::write_le_all(self, base, limit, items)?)
    }
    #[inline]
    fn write_le_spread(&self, base: usize, limit: usize, values: &[Spread], offsets: &[usize]) -> Result<()> {
        Ok(KfdMemory::write_le_spread(self, base, limit, values, offsets)?)
    }
    fn load_u64(&self, offset: usize) -> Result<u64> {
        // Acquire: what the GPU wrote before the value is visible after it.
        Ok(self.cell(offset)?.load(std::sync::atomic::Ordering::Acquire))
    }
    fn store_u64(&self, offset: usize, v: u64) -> Result<()> {
        // Release: the CPU's writes before the value are visible to whoever sees it.
        self.cell(offset)?.store(v, std::sync::atomic::Ordering::Release);
        Ok(())
    }
}

impl HwQueue for KfdQueue {
    #[inline]
    fn ring_bytes(&self) -> usize {
        self.ring_size()
    }
    #[inline]
    fn write_ring(&self, offset: usize, words: &[u32]) -> Result<()> {
        Ok(self.ring().write(offset, zerocopy::IntoBytes::as_bytes(words))?)
    }
    #[inline]
    fn read_ptr(&self) -> u64 {
        KfdQueue::read_ptr(self)
    }
    #[inline]
    fn submit(&self, write_ptr: u64) {
        KfdQueue::submit(self, write_ptr)
    }
    fn format(&self) -> crate::QueueFormat {
        match self.kind() {
            QueueKind::ComputeAql => crate::QueueFormat::Aql,
            _ => crate::QueueFormat::Pm4,
        }
    }
    fn set_aql_scratch(&self, tmpring_size: u32, base: u64, lane_bytes: u32, descriptor: [u32; 4]) -> Result<()> {
        Ok(KfdQueue::set_aql_scratch(
            self,
            tmpring_size,
            base,
            lane_bytes,
            descriptor,
        )?)
    }
}

impl DeviceInterface for KfdIface {
    type Memory = Arc<KfdMemory>;
    type Queue = KfdQueue;

    fn props(&self) -> &DeviceProps {
        &self.props
    }
    fn alloc(&self, size: usize, kind: BufferKind) -> Result<Self::Memory> {
        Ok(Arc::new(self.dev.alloc(size, kind.kfd())?))
    }
    fn map(&self, mem: &Self::Memory) -> Result<()> {
        Ok(self.dev.map(mem)?)
    }
    fn create_queue(&self, sdma: bool, ring_size: usize) -> Result<Self::Queue> {
        Ok(self
            .dev
            .create_queue(if sdma { QueueKind::Sdma } else { QueueKind::Compute }, ring_size)?)
    }
    fn keeps_freed_memory(&self) -> bool {
        !self.dev.sys().watches_freed_memory()
    }
    fn create_aql_queue(&self, ring_size: usize) -> Result<Self::Queue> {
        Ok(self.dev.create_queue(QueueKind::ComputeAql, ring_size)?)
    }
    fn queue_event(&self) -> Option<(u64, u32)> {
        Some((self.dev.queue_event_mailbox(), self.dev.queue_event().id))
    }
    fn sleep(&self, timeout_ms: u32) -> Result<bool> {
        Ok(self.dev.sleep(timeout_ms)?)
    }
    fn hang_report(&self) -> Vec<String> {
        // Every fault event's data, and (on the mock) the instruction or packet that
        // stopped a queue.
        self.dev
            .fault_report()
            .map(|r| r.lines())
            .unwrap_or_else(|e| vec![format!("(no fault report: {e})")])
    }
}
