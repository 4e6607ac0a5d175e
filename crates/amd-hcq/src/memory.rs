//! Buffers: device allocations, sub-buffer views, and the rule that memory a
//! submitted command may still touch is never released.

use std::collections::HashMap;
use std::sync::{Arc, Weak};

use crate::fence::{DeviceId, Fences, Link, Progress, link_key};
use crate::iface::{BufferKind, DeviceInterface, DeviceMemory};
use crate::sym::{Bindings, Var};
use zerocopy::IntoBytes;

use crate::{HcqError, Result};

/// Most bytes the cache of freed allocations keeps.
pub const CACHE_LIMIT: usize = 256 << 20;

/// Freed allocations kept for reuse, by kind and size, up to `limit` bytes.
pub(crate) struct BufferCache<I: DeviceInterface> {
    free: HashMap<(BufferKind, usize), Vec<I::Memory>>,
    bytes: usize,
    limit: usize,
}

impl<I: DeviceInterface> Default for BufferCache<I> {
    fn default() -> Self {
        BufferCache {
            free: HashMap::new(),
            bytes: 0,
            limit: CACHE_LIMIT,
        }
    }
}

impl<I: DeviceInterface> BufferCache<I> {
    /// An allocation of `kind` holding at least `size` bytes, rounded as allocations
    /// are (whole pages).
    pub(crate) fn take(&mut self, kind: BufferKind, size: usize) -> Option<I::Memory> {
        let key = (kind, size.checked_next_multiple_of(4096)?);
        let m = self.free.get_mut(&key)?.pop()?;
        self.bytes -= m.size();
        Some(m)
    }

    /// Keeps `mem` for reuse, or drops (frees) it past the limit.
    pub(crate) fn put(&mut self, kind: BufferKind, mem: I::Memory) {
        if self.bytes + mem.size() > self.limit {
            return;
        }
        self.bytes += mem.size();
        self.free.entry((kind, mem.size())).or_default().push(mem);
    }

    /// Every allocation held, the cache left empty.
    pub(crate) fn take_all(&mut self) -> Vec<I::Memory> {
        self.bytes = 0;
        self.free.drain().flat_map(|(_, v)| v).collect()
    }

    /// Allocations held.
    pub(crate) fn len(&self) -> usize {
        self.free.values().map(Vec::len).sum()
    }
}

/// Memory freed while work may still use it: the fences to wait for, its kind, itself.
pub(crate) type Freed<I> = (Fences<I>, BufferKind, <I as DeviceInterface>::Memory);

/// A device's memory given back: reusable allocations, and those freed while work may
/// still use them, waiting for it (one lock: each is taken briefly, and reclaiming
/// moves allocations from one to the other).
pub(crate) struct Reuse<I: DeviceInterface> {
    pub(crate) cache: BufferCache<I>,
    /// Freed memory waiting for the work submitted when it was freed.
    pub(crate) pending: Vec<Freed<I>>,
}

impl<I: DeviceInterface> Default for Reuse<I> {
    fn default() -> Self {
        Reuse {
            cache: BufferCache::default(),
            pending: Vec::new(),
        }
    }
}

impl<I: DeviceInterface> Reuse<I> {
    /// An empty one; with `keep` false, freed memory goes back to the transport once
    /// no work uses it, none kept for reuse (under a use-after-free watch:
    /// [`DeviceInterface::keeps_freed_memory`]).
    pub(crate) fn new(keep: bool) -> Self {
        let mut r = Self::default();
        if !keep {
            r.cache.limit = 0;
        }
        r
    }

    /// Keeps `mem`, freed while the work `fences` name may still use it.
    pub(crate) fn give_back(&mut self, fences: Fences<I>, kind: BufferKind, mem: I::Memory) {
        if fences.is_empty() {
            self.cache.put(kind, mem);
        } else {
            self.pending.push((fences, kind, mem));
        }
    }
}

/// An allocation and the device it came from. It refers to the device weakly: the
/// device holds allocations of its own (scratch, kernel arguments), and a strong
/// reference would keep both alive forever.
pub(crate) struct Allocation<I: DeviceInterface> {
    mem: Option<I::Memory>,
    kind: BufferKind,
    dev: Link<I>,
    index: usize,
    residency: Arc<Residency>,
}

/// Where an allocation is mapped: the devices (by identity) whose GPU can reach it.
#[derive(Debug)]
pub(crate) struct Residency {
    /// The allocating device's index, for messages.
    pub(crate) owner: usize,
    /// The platform's identity (its signal page).
    pub(crate) platform: usize,
    /// The allocating device's identity (also in `keys`: keys are only ever added).
    owner_key: usize,
    keys: parking_lot::Mutex<Vec<usize>>,
}

impl Residency {
    /// Whether the device `key` can reach the memory (its own device without a lock).
    #[inline]
    pub(crate) fn on(&self, key: usize) -> bool {
        key == self.owner_key || self.keys.lock().contains(&key)
    }

    pub(crate) fn add(&self, key: usize) {
        let mut k = self.keys.lock();
        if !k.contains(&key) {
            k.push(key);
        }
    }
}

impl<I: DeviceInterface> Drop for Allocation<I> {
    fn drop(&mut self) {
        let Some(mem) = self.mem.take() else { return };
        // A device that is gone waited for its work when it closed: free at once.
        let Some(dev) = self.dev.upgrade() else { return };
        // Any command submitted so far may still use it, on this device or on one it is
        // mapped to: release it only once the work submitted until now on each (on the
        // timeline and outside it) is done.
        let on: Vec<_> = dev
            .peers()
            .into_iter()
            .filter(|p| self.residency.on(link_key(p)))
            .filter_map(|p| Weak::upgrade(&p))
            .collect();
        let fences = Progress::of(std::iter::once(dev.clone()).chain(on)).outstanding();
        dev.take_back(fences, self.kind, mem);
    }
}

/// Checks that device `dev` can reach memory of `r`; `what` names it.
pub(crate) fn check_resident(r: &Residency, dev: DeviceId, what: &dyn std::fmt::Display) -> Result<()> {
    if r.on(dev.key) {
        return Ok(());
    }
    let (what, owner, device) = (what.to_string(), r.owner, dev.index);
    Err(if r.platform != dev.platform {
        HcqError::OtherPlatform { what, owner, device }
    } else {
        HcqError::NotMapped { what, owner, device }
    })
}

/// GPU memory, or a view of part of it. Views share the allocation; it is released
/// when the last view is gone and the GPU is done with it.
pub struct Buffer<I: DeviceInterface = crate::AnyIface> {
    alloc: Arc<Allocation<I>>,
    offset: usize,
    size: usize,
}

impl<I: DeviceInterface> Clone for Buffer<I> {
    fn clone(&self) -> Self {
        Buffer {
            alloc: self.alloc.clone(),
            offset: self.offset,
            size: self.size,
        }
    }
}

impl<I: DeviceInterface> std::fmt::Debug for Buffer<I> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Buffer")
            .field("va", &format_args!("{:#x}", self.va()))
            .field("size", &self.size)
            .field("kind", &self.alloc.kind)
            .finish()
    }
}

impl<I: DeviceInterface> Buffer<I> {
    /// `size` bytes of `mem`, allocated by device `id` (`dev`).
    pub(crate) fn new(dev: Link<I>, id: DeviceId, mem: I::Memory, kind: BufferKind, size: usize) -> Self {
        Buffer {
            alloc: Arc::new(Allocation {
                mem: Some(mem),
                kind,
                dev,
                index: id.index,
                residency: Arc::new(Residency {
                    owner: id.index,
                    platform: id.platform,
                    owner_key: id.key,
                    keys: parking_lot::Mutex::new(vec![id.key]),
                }),
            }),
            offset: 0,
            size,
        }
    }

    pub(crate) fn memory(&self) -> &I::Memory {
        // `mem` is only taken in Drop, after the last Buffer is gone.
        match &self.alloc.mem {
            Some(m) => m,
            None => unreachable!("an allocation's memory lives as long as its buffers"),
        }
    }

    /// GPU address of the view's first byte.
    pub fn va(&self) -> u64 {
        self.memory().va() + self.offset as u64
    }

    /// Bytes in the view.
    pub fn size(&self) -> usize {
        self.size
    }

    /// The kind of memory.
    pub fn kind(&self) -> BufferKind {
        self.alloc.kind
    }

    /// Index of the device that allocated it.
    pub fn device_index(&self) -> usize {
        self.alloc.index
    }

    /// Where the buffer is mapped.
    pub(crate) fn residency(&self) -> &Arc<Residency> {
        &self.alloc.residency
    }

    /// Checks that device `dev` can reach the buffer; `what` names the buffer.
    pub(crate) fn check_on(&self, dev: DeviceId, what: &dyn std::fmt::Display) -> Result<()> {
        check_resident(&self.alloc.residency, dev, what)
    }

    /// What a recorded list holds so that the memory outlives it.
    pub(crate) fn keepalive(&self) -> Arc<dyn std::any::Any + Send + Sync> {
        self.alloc.clone()
    }

    /// A view of `size` bytes at `offset` within this one.
    pub fn view(&self, offset: usize, size: usize) -> Result<Self> {
        self.check(offset, size)?;
        Ok(Buffer {
            alloc: self.alloc.clone(),
            offset: self.offset + offset,
            size,
        })
    }

    pub(crate) fn check(&self, offset: usize, len: usize) -> Result<()> {
        crate::error::check_range(self.size, offset, len)
    }

    /// Writes `data` at `offset` from the CPU (CPU-visible kinds only).
    pub fn write(&self, offset: usize, data: &[u8]) -> Result<()> {
        self.check(offset, data.len())?;
        self.memory().write(self.offset + offset, data)
    }

    /// Writes the low `bytes` (1, 2, 4 or 8) bytes of `v`, little-endian, at `offset`.
    #[inline]
    pub(crate) fn write_le(&self, offset: usize, v: u64, bytes: usize) -> Result<()> {
        self.check(offset, bytes)?;
        self.memory().write_le(self.offset + offset, v, bytes)
    }

    /// For each [`Spread`](crate::Spread) of `values`, stores its value at each offset
    /// of `offsets[from..to]` (offsets in this buffer) as `write_le` does; stops at
    /// the first place outside the buffer.
    pub(crate) fn write_le_spread(&self, values: &[crate::Spread], offsets: &[usize]) -> Result<()> {
        self.memory().write_le_spread(self.offset, self.size, values, offsets)
    }

    /// Writes `data` (plain-old-data values) at byte `offset` from the CPU
    /// (CPU-visible kinds only).
    pub fn write_slice<T: zerocopy::IntoBytes + zerocopy::Immutable>(&self, offset: usize, data: &[T]) -> Result<()> {
        self.write(offset, data.as_bytes())
    }

    /// Reads `n` plain-old-data values at byte `offset` from the CPU (CPU-visible
    /// kinds only).
    pub fn read_vec<T: zerocopy::FromBytes + zerocopy::IntoBytes>(&self, offset: usize, n: usize) -> Result<Vec<T>> {
        let mut out: Vec<T> = (0..n).map(|_| T::new_zeroed()).collect();
        self.read(offset, out.as_mut_bytes())?;
        Ok(out)
    }

    /// Reads at `offset` from the CPU (CPU-visible kinds only).
    pub fn read(&self, offset: usize, out: &mut [u8]) -> Result<()> {
        self.check(offset, out.len())?;
        self.memory().read(self.offset + offset, out)
    }
}

impl Bindings {
    /// Binds `var` to the address of `buf`.
    pub fn buffer<I: DeviceInterface>(&mut self, var: &Var, buf: &Buffer<I>) -> &mut Self {
        self.set(var, buf.va())
    }
}
