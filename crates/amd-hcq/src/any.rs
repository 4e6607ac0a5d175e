//! [`AnyIface`]: the transport a [`Platform`](crate::Platform) chose at run time —
//! KFD or driverless — behind one type, so the same `Device` code (and the same
//! tests) runs over either. Each call is one `match`; a program that knows its
//! transport can use `Device<KfdIface>` or `Device<AmIface>` directly.

use std::sync::Arc;

use amd_kfd::{KfdMemory, KfdQueue, Spread};

use crate::am::{AmIface, AmMemory, AmQueue};
use crate::iface::{BufferKind, DeviceInterface, DeviceMemory, DeviceProps, HwQueue, KfdIface};
use crate::{HcqError, Result};

/// The transport of one GPU: KFD or driverless.
// One per device: inline (no box) keeps a pointer load off every call.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum AnyIface {
    /// Through `/dev/kfd`.
    Kfd(KfdIface),
    /// Driverless, through the PCI BARs (amd-am).
    Am(AmIface),
}

impl AnyIface {
    /// The KFD transport, if that is this one.
    pub fn kfd(&self) -> Option<&KfdIface> {
        match self {
            AnyIface::Kfd(k) => Some(k),
            AnyIface::Am(_) => None,
        }
    }

    /// The driverless transport, if that is this one.
    pub fn am(&self) -> Option<&AmIface> {
        match self {
            AnyIface::Am(a) => Some(a),
            AnyIface::Kfd(_) => None,
        }
    }
}

/// A buffer of either transport.
#[derive(Debug, Clone)]
pub enum AnyMemory {
    /// KFD memory.
    Kfd(Arc<KfdMemory>),
    /// Driverless memory.
    Am(Arc<AmMemory>),
}

/// A queue of either transport.
// Two per device: inline (no box) keeps a pointer load off every ring write.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum AnyQueue {
    /// A KFD queue.
    Kfd(KfdQueue),
    /// A driverless queue.
    Am(AmQueue),
}

macro_rules! each {
    ($v:expr, $x:ident => $e:expr) => {
        match $v {
            AnyMemory::Kfd($x) => $e,
            AnyMemory::Am($x) => $e,
        }
    };
}

macro_rules! each_q {
    ($v:expr, $x:ident => $e:expr) => {
        match $v {
            AnyQueue::Kfd($x) => $e,
            AnyQueue::Am($x) => $e,
        }
    };
}

impl DeviceMemory for AnyMemory {
    #[inline]
    fn va(&self) -> u64 {
        each!(self, m => m.va())
    }
    #[inline]
    fn size(&self) -> usize {
        each!(self, m => m.size())
    }
    #[inline]
    fn write(&self, offset: usize, data: &[u8]) -> Result<()> {
        each!(self, m => m.write(offset, data))
    }
    #[inline]
    fn read(&self, offset: usize, out: &mut [u8]) -> Result<()> {
        each!(self, m => m.read(offset, out))
    }
    #[inline]
    fn write_le(&self, offset: usize, v: u64, bytes: usize) -> Result<()> {
        each!(self, m => m.write_le(offset, v, bytes))
    }
    #[inline]
    fn write_le_all(&self, base: usize, limit: usize, items: &[(usize, u64, usize)]) -> Result<()> {
        each!(self, m => m.write_le_all(base, limit, items))
    }
    #[inline]
    fn write_le_spread(&self, base: usize, limit: usize, values: &[Spread], offsets: &[usize]) -> Result<()> {
        each!(self, m => m.write_le_spread(base, limit, values, offsets))
    }
    #[inline]
    fn load_u64(&self, offset: usize) -> Result<u64> {
        each!(self, m => m.load_u64(offset))
    }
    #[inline]
    fn store_u64(&self, offset: usize, v: u64) -> Result<()> {
        each!(self, m => m.store_u64(offset, v))
    }
}

impl HwQueue for AnyQueue {
    #[inline]
    fn ring_bytes(&self) -> usize {
        each_q!(self, q => q.ring_bytes())
    }
    #[inline]
    fn write_ring(&self, offset: usize, words: &[u32]) -> Result<()> {
        each_q!(self, q => q.write_ring(offset, words))
    }
    #[inline]
    fn read_ptr(&self) -> u64 {
        each_q!(self, q => HwQueue::read_ptr(q))
    }
    #[inline]
    fn submit(&self, write_ptr: u64) {
        each_q!(self, q => HwQueue::submit(q, write_ptr))
    }
    fn format(&self) -> crate::QueueFormat {
        each_q!(self, q => HwQueue::format(q))
    }
    fn set_aql_scratch(&self, tmpring_size: u32, base: u64, lane_bytes: u32, descriptor: [u32; 4]) -> Result<()> {
        each_q!(self, q => HwQueue::set_aql_scratch(q, tmpring_size, base, lane_bytes, descriptor))
    }
}

impl DeviceInterface for AnyIface {
    type Memory = AnyMemory;
    type Queue = AnyQueue;

    fn props(&self) -> &DeviceProps {
        match self {
            AnyIface::Kfd(k) => k.props(),
            AnyIface::Am(a) => a.props(),
        }
    }
    fn keeps_freed_memory(&self) -> bool {
        match self {
            AnyIface::Kfd(k) => k.keeps_freed_memory(),
            AnyIface::Am(a) => a.keeps_freed_memory(),
        }
    }
    fn alloc(&self, size: usize, kind: BufferKind) -> Result<Self::Memory> {
        Ok(match self {
            AnyIface::Kfd(k) => AnyMemory::Kfd(k.alloc(size, kind)?),
            AnyIface::Am(a) => AnyMemory::Am(a.alloc(size, kind)?),
        })
    }
    fn map(&self, mem: &Self::Memory) -> Result<()> {
        match (self, mem) {
            (AnyIface::Kfd(k), AnyMemory::Kfd(m)) => k.map(m),
            (AnyIface::Am(a), AnyMemory::Am(m)) => a.map(m),
            // One-off: Device::map_peer refuses memory of another platform (so of
            // another transport) as HcqError::OtherPlatform before this trait call.
            _ => Err(HcqError::InvalidArgument(
                "memory of one transport cannot be mapped on a GPU of the other".into(),
            )),
        }
    }
    fn create_queue(&self, sdma: bool, ring_size: usize) -> Result<Self::Queue> {
        Ok(match self {
            AnyIface::Kfd(k) => AnyQueue::Kfd(k.create_queue(sdma, ring_size)?),
            AnyIface::Am(a) => AnyQueue::Am(a.create_queue(sdma, ring_size)?),
        })
    }
    fn create_aql_queue(&self, ring_size: usize) -> Result<Self::Queue> {
        Ok(match self {
            AnyIface::Kfd(k) => AnyQueue::Kfd(k.create_aql_queue(ring_size)?),
            AnyIface::Am(a) => AnyQueue::Am(a.create_aql_queue(ring_size)?),
        })
    }
    fn queue_event(&self) -> Option<(u64, u32)> {
        match self {
            AnyIface::Kfd(k) => k.queue_event(),
            AnyIface::Am(a) => a.queue_event(),
        }
    }
    fn sleep(&self, timeout_ms: u32) -> Result<bool> {
        match self {
            AnyIface::Kfd(k) => k.sleep(timeout_ms),
            AnyIface::Am(a) => a.sleep(timeout_ms),
        }
    }
    fn hang_report(&self) -> Vec<String> {
        match self {
            AnyIface::Kfd(k) => k.hang_report(),
            AnyIface::Am(a) => a.hang_report(),
        }
    }
}
