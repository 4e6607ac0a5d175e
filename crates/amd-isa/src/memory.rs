//! How an interpreter reaches a GPU's memory: the [`Memory`] trait its embedder
//! implements (the mock GPU's checked address space, or [`SliceMemory`] for tests
//! and single instructions), and the fault a memory reports.

use std::cell::Cell;
use std::fmt;

/// A memory fault as the GPU's address translation reports it: what KFD's
/// memory-exception event carries (`kfd_hsa_memory_exception_data`), plus whether the
/// access was a write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MemoryFault {
    /// Faulting address (the exact byte; hardware reports its page).
    pub va: u64,
    /// The access was a write. KFD's event data has no such field (only `read_only`
    /// implies a write).
    pub write: bool,
    /// Page not present.
    pub not_present: bool,
    /// Write to a read-only page.
    pub read_only: bool,
    /// Execute of a no-execute page.
    pub no_execute: bool,
    /// Address imprecise.
    pub imprecise: bool,
}

impl MemoryFault {
    /// A fault on an address nothing is mapped at.
    pub fn not_present(va: u64, write: bool) -> Self {
        MemoryFault {
            va,
            write,
            not_present: true,
            ..Default::default()
        }
    }

    /// A write to a page mapped read-only.
    pub fn read_only(va: u64) -> Self {
        MemoryFault {
            va,
            write: true,
            read_only: true,
            ..Default::default()
        }
    }
}

/// What an instruction was doing when memory faulted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccessKind {
    /// Fetching the instruction itself.
    Fetch,
    /// A load (vector, scalar or buffer).
    Load,
    /// A store.
    Store,
    /// A read-modify-write atomic.
    Atomic,
}

/// One access of an instruction: its kind and size in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Access {
    /// Load, store, atomic or instruction fetch.
    pub kind: AccessKind,
    /// Bytes accessed (one lane's part of a vector access).
    pub bytes: usize,
}

impl fmt::Display for Access {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.kind {
            AccessKind::Fetch => "instruction fetch",
            AccessKind::Load => "load",
            AccessKind::Store => "store",
            AccessKind::Atomic => "atomic",
        };
        write!(f, "{}-byte {what}", self.bytes)
    }
}

/// The dispatch was stopped from outside (its queue destroyed, the device dropped):
/// what [`Memory::checkpoint`] returns to end it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stopped;

/// A GPU's memory as an interpreter sees it: checked byte reads and writes at GPU
/// virtual addresses, atomics, and the checkpoints a long dispatch makes.
///
/// Every access is checked by the implementation; a miss is a [`MemoryFault`], never
/// a panic. Implementations use interior mutability (`&self` everywhere): one view
/// belongs to one thread, and [`Memory::share`] gives the handle other threads open
/// views of their own from.
pub trait Memory {
    /// Reads `out.len()` bytes at `addr`.
    fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), MemoryFault>;

    /// Writes `data` at `addr`.
    fn write(&self, addr: u64, data: &[u8]) -> Result<(), MemoryFault>;

    /// [`Memory::read`] for a read the interpreter tries ahead and repeats in smaller
    /// pieces where it fails (a wave's whole span, then each lane): a memory that
    /// records faults (a GPU's fault registers) need not record this failure, since
    /// the repeat records it where it lies. The default is `read`.
    fn read_ahead(&self, addr: u64, out: &mut [u8]) -> Result<(), MemoryFault> {
        self.read(addr, out)
    }

    /// [`Memory::write`] as [`Memory::read_ahead`] is a read. The default is `write`.
    fn write_ahead(&self, addr: u64, data: &[u8]) -> Result<(), MemoryFault> {
        self.write(addr, data)
    }

    /// A hint that `addr` is about to be read (or, `write`, written): a memory that
    /// can, brings it nearer (the host's caches). It must not fault, record anything
    /// or change what any access returns. The default does nothing.
    fn prefetch(&self, addr: u64, write: bool) {
        let _ = (addr, write);
    }

    /// Replaces the dword at `addr` with `f(old)` atomically (against other engines
    /// and the host where aligned), returning `old`. When `f` returns `None` memory is
    /// left as it was and `None` is returned.
    fn atomic_u32(&self, addr: u64, f: &mut dyn FnMut(u32) -> Option<u32>) -> Result<Option<u32>, MemoryFault>;

    /// As [`Memory::atomic_u32`], for a qword.
    fn atomic_u64(&self, addr: u64, f: &mut dyn FnMut(u64) -> Option<u64>) -> Result<Option<u64>, MemoryFault>;

    /// Ends a slice of a dispatch (every few thousand instructions): lets a waiting
    /// writer of the address space in, and returns [`Stopped`] when the dispatch must
    /// end. The default never stops.
    fn checkpoint(&self) -> Result<(), Stopped> {
        Ok(())
    }

    /// A handle other threads open views of this memory from, for running workgroups
    /// on several threads; `None` (the default) keeps a dispatch on one thread.
    fn share(&self) -> Option<&dyn SharedMemory> {
        None
    }

    /// Runs `f` with this view's hold on the memory released (to wait for threads
    /// holding views of their own). Memory must not be touched through this view
    /// meanwhile. The default just runs `f`.
    fn unlocked(&self, f: &mut dyn FnMut()) {
        f()
    }
}

/// What threads share to open views of one memory ([`Memory::share`]).
pub trait SharedMemory: Sync {
    /// A view of the memory for the calling thread.
    fn open(&self) -> Box<dyn Memory + '_>;
}

/// Byte slices mapped at GPU addresses: the [`Memory`] of tests, single-instruction
/// runs and tools. Accesses must fall inside one region; writes to a read-only region
/// fault. It is single-threaded ([`Memory::share`] is `None`).
#[derive(Default)]
pub struct SliceMemory<'a> {
    regions: Vec<Region<'a>>,
}

struct Region<'a> {
    base: u64,
    bytes: Bytes<'a>,
}

enum Bytes<'a> {
    Writable(&'a [Cell<u8>]),
    ReadOnly(&'a [u8]),
}

impl Bytes<'_> {
    fn len(&self) -> usize {
        match self {
            Bytes::Writable(b) => b.len(),
            Bytes::ReadOnly(b) => b.len(),
        }
    }
}

impl<'a> SliceMemory<'a> {
    /// Nothing mapped: every access faults.
    pub fn new() -> Self {
        SliceMemory::default()
    }

    /// Maps `bytes` at `base`, writable.
    pub fn map(&mut self, base: u64, bytes: &'a mut [u8]) -> &mut Self {
        self.regions.push(Region {
            base,
            bytes: Bytes::Writable(Cell::from_mut(bytes).as_slice_of_cells()),
        });
        self
    }

    /// Maps `bytes` at `base`, read-only.
    pub fn map_read_only(&mut self, base: u64, bytes: &'a [u8]) -> &mut Self {
        self.regions.push(Region {
            base,
            bytes: Bytes::ReadOnly(bytes),
        });
        self
    }

    /// The region holding `[addr, addr + len)`, and the offset of `addr` in it.
    fn find(&self, addr: u64, len: usize, write: bool) -> Result<(&Region<'a>, usize), MemoryFault> {
        let inside = |r: &Region<'_>, a: u64, n: usize| {
            let off = usize::try_from(a.checked_sub(r.base)?).ok()?;
            off.checked_add(n).filter(|&end| end <= r.bytes.len()).map(|_| off)
        };
        if let Some((r, off)) = self.regions.iter().find_map(|r| Some((r, inside(r, addr, len)?))) {
            if write && matches!(r.bytes, Bytes::ReadOnly(_)) {
                return Err(MemoryFault::read_only(addr));
            }
            return Ok((r, off));
        }
        // The first byte the access cannot reach.
        let va = (0..len as u64)
            .map(|k| addr.wrapping_add(k))
            .find(|&a| !self.regions.iter().any(|r| inside(r, a, 1).is_some()))
            .unwrap_or(addr);
        Err(MemoryFault::not_present(va, write))
    }
}

impl Memory for SliceMemory<'_> {
    fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), MemoryFault> {
        let (r, off) = self.find(addr, out.len(), false)?;
        match r.bytes {
            Bytes::Writable(b) => out.iter_mut().zip(&b[off..]).for_each(|(o, c)| *o = c.get()),
            Bytes::ReadOnly(b) => out.copy_from_slice(&b[off..off + out.len()]),
        }
        Ok(())
    }

    fn write(&self, addr: u64, data: &[u8]) -> Result<(), MemoryFault> {
        let (r, off) = self.find(addr, data.len(), true)?;
        if let Bytes::Writable(b) = r.bytes {
            b[off..].iter().zip(data).for_each(|(c, &v)| c.set(v));
        }
        Ok(())
    }

    fn atomic_u32(&self, addr: u64, f: &mut dyn FnMut(u32) -> Option<u32>) -> Result<Option<u32>, MemoryFault> {
        let old = self.rmw(addr, |b| f(u32::from_le_bytes(b)).map(u32::to_le_bytes))?;
        Ok(old.map(u32::from_le_bytes))
    }

    fn atomic_u64(&self, addr: u64, f: &mut dyn FnMut(u64) -> Option<u64>) -> Result<Option<u64>, MemoryFault> {
        let old = self.rmw(addr, |b| f(u64::from_le_bytes(b)).map(u64::to_le_bytes))?;
        Ok(old.map(u64::from_le_bytes))
    }
}

impl SliceMemory<'_> {
    /// Replaces the `N` bytes at `addr` by what `f` makes of them (nothing where it
    /// gives `None`); the old bytes where it wrote.
    fn rmw<const N: usize>(
        &self,
        addr: u64,
        f: impl FnOnce([u8; N]) -> Option<[u8; N]>,
    ) -> Result<Option<[u8; N]>, MemoryFault> {
        let mut old = [0u8; N];
        self.read(addr, &mut old)?;
        let Some(new) = f(old) else { return Ok(None) };
        self.write(addr, &new)?;
        Ok(Some(old))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_fault_outside_and_on_read_only_writes() {
        let mut data = [1u8, 2, 3, 4, 5, 6, 7, 8];
        let mut m = SliceMemory::new();
        m.map(0x1000, &mut data);
        let mut out = [0u8; 4];
        m.read(0x1002, &mut out).unwrap();
        assert_eq!(out, [3, 4, 5, 6]);
        // Straddling the end: the first byte past it is the fault.
        assert_eq!(m.read(0x1006, &mut out), Err(MemoryFault::not_present(0x1008, false)));
        m.write(0x1000, &[9]).unwrap();
        assert_eq!(m.atomic_u32(0x1000, &mut |v| Some(v + 1)), Ok(Some(0x0403_0209)));
        assert_eq!(m.atomic_u32(0x1000, &mut |_| None), Ok(None));
        drop(m);
        assert_eq!(data[0], 10);
        let mut ro = SliceMemory::new();
        ro.map_read_only(0x2000, &[0; 4]);
        assert_eq!(ro.write(0x2000, &[1]), Err(MemoryFault::read_only(0x2000)));
    }
}
