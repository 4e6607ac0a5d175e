//! What the memory layer knows about a program's memory bugs: the sanitizer's
//! shadow of which bytes of device memory something has written
//! ([`crate::MockConfig::sanitize`]), the allocations a GPU had and no longer has,
//! and the words that explain a fault ([`AddressSpace::explain`]).
//!
//! The sanitizer is a mode of this layer, off by default. In it, every VRAM
//! allocation the CPU is not meant to touch (allocated without KFD's `PUBLIC` flag)
//! gets a [`Shadow`], one bit per byte: the engines' writes set bits (a kernel's
//! store or atomic, an SDMA copy or fill, a CP packet's write), a copy carries its
//! source's bits along (copying memory nothing wrote is no error; using it is), and
//! a kernel's load or atomic none of whose bytes has its bit set stops the dispatch
//! with a memory fault that [`AddressSpace::explain`] names as such. (A load that
//! also covers written bytes passes: compilers widen loads — a 12-byte buffer read by
//! one 16-byte scalar load — and what the extra bytes hold is not used.) Host
//! memory, GTT and host-visible VRAM count as written: the CPU's stores into them
//! are invisible here. Out-of-bounds accesses need no shadow: every access must lie inside one
//! mapping already, and the sanitizer's guard gaps between reservations (see
//! [`GUARD_BYTES`]) make an overrun fault instead of landing in a neighbour.

use std::collections::{BTreeMap, VecDeque};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use super::{AddressSpace, MemoryFault};

/// Unmapped address space the sanitizer leaves after each reservation the mock
/// makes for a client (an anonymous mapping at an address the kernel picks), so that
/// an access running off one buffer's end faults rather than reaching the buffer the
/// kernel happened to place next. Address space only: nothing backs it.
pub const GUARD_BYTES: usize = 64 << 10;

/// Address space the sanitizer keeps reserved, inaccessible, after a client unmaps it,
/// at most: so that a dangling pointer into memory that went faults (and is told as
/// such) rather than reaching what the kernel would place there next. Oldest
/// unmappings go first past this many bytes or [`QUARANTINE_RANGES`] ranges (each a
/// mapping of the process: the kernel's mapping count is the scarcer resource).
pub const QUARANTINE_BYTES: usize = 16 << 30;

/// Ranges the sanitizer's quarantine holds at most (see [`QUARANTINE_BYTES`]).
pub const QUARANTINE_RANGES: usize = 1024;

/// The sanitizer's quarantine: address ranges a client unmapped, which the mock holds
/// as inaccessible mappings of its own until they are the oldest past its limits.
/// Disjoint; a range held again, or mapped over by the client (`MAP_FIXED`), is
/// forgotten where it is cut, its other parts held on.
#[derive(Debug)]
pub(crate) struct Quarantine {
    /// Start to end and the number of the unmapping that held it.
    held: BTreeMap<usize, (usize, u64)>,
    next: u64,
    bytes: usize,
    max_bytes: usize,
    max_ranges: usize,
}

impl Default for Quarantine {
    fn default() -> Quarantine {
        Quarantine::new(QUARANTINE_BYTES, QUARANTINE_RANGES)
    }
}

impl Quarantine {
    pub(crate) fn new(max_bytes: usize, max_ranges: usize) -> Quarantine {
        Quarantine {
            held: BTreeMap::new(),
            next: 0,
            bytes: 0,
            max_bytes,
            max_ranges,
        }
    }

    /// Forgets `[start, end)`: the client maps it again (its parts outside stay held).
    /// Returns the held pieces inside it.
    pub(crate) fn take(&mut self, start: usize, end: usize) -> Vec<(usize, usize)> {
        let mut taken = Vec::new();
        let cut: Vec<(usize, usize, u64)> = self
            .held
            .range(..end)
            .filter(|&(_, &(e, _))| e > start)
            .map(|(&s, &(e, n))| (s, e, n))
            .collect();
        for (s, e, n) in cut {
            self.held.remove(&s);
            self.bytes -= e - s;
            taken.push((s.max(start), e.min(end)));
            // What is left of it below and above the cut (it overlaps the cut, so
            // `start < e` and `s < end`: each piece lies inside it).
            for (a, b) in [(s, start), (end, e)] {
                if a < b {
                    self.held.insert(a, (b, n));
                    self.bytes += b - a;
                }
            }
        }
        taken
    }

    /// Holds `[start, end)`, which the mock has just mapped inaccessible in place of
    /// what the client unmapped; returns the ranges that leave the quarantine to stay
    /// within its limits, oldest first (the new one among them where it alone is
    /// past them), for the mock to unmap.
    pub(crate) fn hold(&mut self, start: usize, end: usize) -> Vec<(usize, usize)> {
        if start >= end {
            return Vec::new();
        }
        let _ = self.take(start, end);
        self.held.insert(start, (end, self.next));
        self.next += 1;
        self.bytes += end - start;
        let mut out = Vec::new();
        while self.bytes > self.max_bytes || self.held.len() > self.max_ranges {
            let Some(oldest) = self.held.values().map(|&(_, n)| n).min() else {
                break;
            };
            let gone: Vec<(usize, usize)> = self
                .held
                .iter()
                .filter(|&(_, &(_, n))| n == oldest)
                .map(|(&s, &(e, _))| (s, e))
                .collect();
            for &(s, e) in &gone {
                self.held.remove(&s);
                self.bytes -= e - s;
            }
            out.extend(gone);
        }
        out
    }

    /// Whether any byte of `[start, end)` is held.
    #[cfg(test)]
    pub(crate) fn holds(&self, start: usize, end: usize) -> bool {
        self.held.range(..end).next_back().is_some_and(|(_, &(e, _))| e > start)
    }
}

/// How far from an allocation a fault is still told as "past its end" or "before
/// it".
const NEAR: u64 = 1 << 20;

/// Allocations remembered after they went (for [`AddressSpace::explain`]).
const GONE_KEPT: usize = 1024;

/// Bytes of memory one lazily made chunk of a [`Shadow`] covers.
const CHUNK_BYTES: u64 = 64 << 10;
/// Words of a chunk.
const CHUNK_WORDS: usize = (CHUNK_BYTES / 64) as usize;

/// One bit per byte of an allocation: set once something wrote the byte. Chunks
/// are made on the first write into them, so a large allocation costs only what is
/// written of it. Bits are read and set with relaxed atomics: engines on several
/// threads write one allocation, and a bit only ever says "written".
#[derive(Debug)]
pub(crate) struct Shadow {
    chunks: Box<[OnceLock<Box<[AtomicU64]>>]>,
    len: u64,
}

impl Shadow {
    /// A shadow of `len` bytes, none written; `None` where `len` does not fit this
    /// host's address space.
    pub(crate) fn new(len: u64) -> Option<Shadow> {
        let n = usize::try_from(len.div_ceil(CHUNK_BYTES)).ok()?;
        Some(Shadow {
            chunks: (0..n).map(|_| OnceLock::new()).collect(),
            len,
        })
    }

    /// Word `w` (bits of bytes `64w..64w + 64`); an unmade chunk reads as unwritten.
    fn word(&self, w: u64) -> u64 {
        let (c, i) = ((w / CHUNK_WORDS as u64) as usize, (w % CHUNK_WORDS as u64) as usize);
        self.chunks
            .get(c)
            .and_then(OnceLock::get)
            .and_then(|c| c.get(i))
            .map_or(0, |x| x.load(Ordering::Relaxed))
    }

    /// Sets the bits of `mask` in word `w` to those of `v`.
    fn put_word(&self, w: u64, mask: u64, v: u64) {
        let (c, i) = ((w / CHUNK_WORDS as u64) as usize, (w % CHUNK_WORDS as u64) as usize);
        let Some(chunk) = self.chunks.get(c) else { return };
        if v & mask == 0 && chunk.get().is_none() {
            // Clearing bits of an unmade chunk: they are clear.
            return;
        }
        let chunk = chunk.get_or_init(|| (0..CHUNK_WORDS).map(|_| AtomicU64::new(0)).collect());
        let Some(x) = chunk.get(i) else { return };
        let (set, clear) = (v & mask, mask & !v);
        if mask == u64::MAX {
            x.store(v, Ordering::Relaxed);
        } else {
            if set != 0 {
                x.fetch_or(set, Ordering::Relaxed);
            }
            if clear != 0 {
                x.fetch_and(!clear, Ordering::Relaxed);
            }
        }
    }

    /// The `n` (1 to 64) bits from byte `off` on, the first in bit 0.
    fn bits(&self, off: u64, n: u32) -> u64 {
        let (w, s) = (off / 64, (off % 64) as u32);
        let mut v = self.word(w) >> s;
        if s != 0 && s + n > 64 {
            v |= self.word(w + 1) << (64 - s);
        }
        if n == 64 { v } else { v & ((1u64 << n) - 1) }
    }

    /// Sets the `n` (1 to 64) bits from byte `off` on to `v`'s low bits.
    fn put(&self, off: u64, n: u32, v: u64) {
        let mask = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
        let (w, s) = (off / 64, (off % 64) as u32);
        self.put_word(w, mask << s, (v & mask) << s);
        if s != 0 && s + n > 64 {
            self.put_word(w + 1, mask >> (64 - s), (v & mask) >> (64 - s));
        }
    }

    /// `[off, off + len)` clipped to the shadow, as runs of at most 64 bytes.
    fn runs(&self, off: u64, len: u64, backward: bool) -> impl Iterator<Item = (u64, u32)> {
        let end = off.saturating_add(len).min(self.len);
        let off = off.min(end);
        let n = (end - off).div_ceil(64);
        (0..n).map(move |k| {
            let k = if backward { n - 1 - k } else { k };
            let at = off + k * 64;
            (at, (end - at).min(64) as u32)
        })
    }

    /// Marks `[off, off + len)` written.
    pub(crate) fn mark(&self, off: u64, len: u64) {
        for (at, n) in self.runs(off, len, false) {
            self.put(at, n, u64::MAX);
        }
    }

    /// Whether some byte of `[off, off + len)` was written.
    pub(crate) fn any_written(&self, off: u64, len: u64) -> bool {
        self.runs(off, len, false).any(|(at, n)| self.bits(at, n) != 0)
    }

    /// Whether byte `off` was written.
    pub(crate) fn written(&self, off: u64) -> bool {
        off < self.len && self.bits(off, 1) == 1
    }

    /// Gives `dst`'s `[dst_off, dst_off + len)` the bits of `src`'s range at
    /// `src_off` (a copy moved those bytes); `src` `None` is memory without a shadow,
    /// all written. Overlapping ranges of one shadow move as memmove does.
    pub(crate) fn copy(dst: &Shadow, dst_off: u64, src: Option<&Shadow>, src_off: u64, len: u64) {
        let Some(src) = src else {
            dst.mark(dst_off, len);
            return;
        };
        let backward = std::ptr::eq(dst, src) && dst_off > src_off;
        for (at, n) in dst.runs(dst_off, len, backward) {
            let from = src_off + (at - dst_off);
            let v = if from.saturating_add(u64::from(n)) <= src.len {
                src.bits(from, n)
            } else {
                0
            };
            dst.put(at, n, v);
        }
    }
}

/// An allocation a GPU had: unmapped from it, or freed.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Gone {
    pub(crate) gpu: usize,
    pub(crate) va: u64,
    pub(crate) size: u64,
    pub(crate) kind: &'static str,
    /// Freed (else only unmapped from the GPU).
    pub(crate) freed: bool,
}

/// The last [`GONE_KEPT`] allocations that went, newest last.
#[derive(Debug, Default)]
pub(crate) struct Graveyard(VecDeque<Gone>);

impl Graveyard {
    pub(crate) fn push(&mut self, g: Gone) {
        if self.0.len() == GONE_KEPT {
            self.0.pop_front();
        }
        self.0.push_back(g);
    }

    /// The newest that held `va` on GPU `gpu`.
    fn find(&self, gpu: usize, va: u64) -> Option<&Gone> {
        self.0
            .iter()
            .rev()
            .find(|x| x.gpu == gpu && va >= x.va && va - x.va < x.size)
    }
}

/// "the 4096-byte VRAM allocation at 0x7f00_0000_0000".
fn allocation(size: u64, kind: &str, va: u64) -> String {
    format!("the {size}-byte {kind} allocation at {va:#x}")
}

/// What a fault hit, in words ([`AddressSpace::explain`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Explained {
    /// The sanitizer stopped a read of memory nothing wrote (the fault is no
    /// translation fault at all): which byte of which allocation.
    Unwritten(String),
    /// Where the address lies: past or before an allocation, in one that went.
    Near(String),
}

impl AddressSpace {
    /// Words for what GPU `g`'s fault hit, as a sanitizer report reads: the
    /// allocation it ran off or before (and how far), one freed or unmapped before the
    /// access, memory the sanitizer knows nothing wrote; `None` where there is nothing
    /// to add (a write to read-only memory says all there is).
    pub(crate) fn explain(&self, g: usize, f: &MemoryFault) -> Option<Explained> {
        if f.read_only || f.no_execute {
            return None;
        }
        let gpu = self.gpus.get(g)?;
        let va = f.va;
        if gpu.fault_addrs.contains(&va) {
            return Some(Explained::Near("an injected fault".into()));
        }
        if let Some((&lo, m)) = gpu.mapped.range(..=va).next_back()
            && va - lo < m.size
        {
            let off = va - lo;
            let what = allocation(m.size, m.kind, lo);
            if let Some(s) = &m.shadow
                && !s.written(off)
            {
                return Some(Explained::Unwritten(format!("byte {off:#x} of {what}")));
            }
            let backed = usize::try_from(va)
                .ok()
                .and_then(|a| Some((a, a.checked_add(1)?)))
                .is_some_and(|(a, e)| self.accessible.contains(a, e));
            if !backed {
                return Some(Explained::Near(format!(
                    "byte {off:#x} of {what}, whose host memory the process has unmapped"
                )));
            }
            // An access faults at its first byte past its mapping's end: where that is
            // the next mapping's first byte, the access ran from one into the other.
            let before = gpu.mapped.range(..lo).next_back();
            return match before {
                Some((&plo, p)) if off == 0 && plo.checked_add(p.size) == Some(lo) => Some(Explained::Near(format!(
                    "the first byte after the end of {}, where an access ran on into {what}",
                    allocation(p.size, p.kind, plo)
                ))),
                // Nothing more to say (a write may have landed since).
                _ => None,
            };
        }
        if let Some(x) = self.gone.find(g, va) {
            let how = if x.freed { "freed" } else { "unmapped from this GPU" };
            return Some(Explained::Near(format!(
                "byte {:#x} of {}, {how} before this access",
                va - x.va,
                allocation(x.size, x.kind, x.va)
            )));
        }
        let below = gpu
            .mapped
            .range(..=va)
            .next_back()
            .map(|(&lo, m)| (va - lo.saturating_add(m.size), lo, m));
        let above = gpu.mapped.range(va..).next().map(|(&lo, m)| (lo - va, lo, m));
        let told = match (below, above) {
            (Some(b), Some(a)) if a.0 < b.0 => Some((false, a)),
            (Some(b), _) => Some((true, b)),
            (None, Some(a)) => Some((false, a)),
            (None, None) => None,
        };
        Some(Explained::Near(match told {
            Some((true, (d, lo, m))) if d < NEAR => {
                let what = allocation(m.size, m.kind, lo);
                match d {
                    0 => format!("the first byte after the end of {what}"),
                    d => format!("{d} bytes after the end of {what}"),
                }
            }
            Some((false, (d, lo, m))) if d < NEAR => format!("{d} bytes before {}", allocation(m.size, m.kind, lo)),
            _ => "no allocation of this GPU within 1 MiB of it".into(),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The quarantine holds what went, forgets what the client maps over (keeping the
    /// rest), and lets the oldest unmapping go past its byte or range limit — all of
    /// its pieces at once.
    #[test]
    fn the_quarantine_lets_the_oldest_go_and_forgets_what_is_mapped_over() {
        let mut q = Quarantine::new(0x10_000, 3);
        assert!(q.hold(0x1000, 0x3000).is_empty());
        assert!(q.holds(0x2000, 0x2001) && !q.holds(0x3000, 0x4000));
        // Mapped over in the middle: two pieces left of the first unmapping.
        assert_eq!(q.take(0x1800, 0x2000), vec![(0x1800, 0x2000)]);
        assert!(!q.holds(0x1800, 0x2000) && q.holds(0x1000, 0x1800) && q.holds(0x2000, 0x3000));
        assert!(q.hold(0x8000, 0x9000).is_empty());
        // A third range passes the limit of 3: the first unmapping goes, both pieces.
        assert_eq!(q.hold(0xa000, 0xb000), vec![(0x1000, 0x1800), (0x2000, 0x3000)]);
        assert!(!q.holds(0x1000, 0x3000) && q.holds(0x8000, 0xb000));
        // Held again over an older range: one range, the newer unmapping's.
        assert!(q.hold(0x8000, 0xb000).is_empty());
        assert!(q.holds(0x8000, 0xb000));
        // Past the bytes: the oldest (now the 0x8000 one, alone) goes, then the new one
        // itself where it alone is too large.
        assert_eq!(q.hold(0x20_000, 0x30_000), vec![(0x8000, 0xb000)]);
        assert_eq!(
            q.hold(0x40_000, 0x60_000),
            vec![(0x20_000, 0x30_000), (0x40_000, 0x60_000)]
        );
        assert!(!q.holds(0, usize::MAX));
    }

    /// Marks and copies at every alignment land on exactly their bytes, across
    /// words and chunks; the first unwritten byte is found wherever it is.
    #[test]
    fn shadow_bits_follow_marks_and_copies() {
        let len = 3 * CHUNK_BYTES + 100;
        let s = Shadow::new(len).unwrap();
        let mut want = vec![false; len as usize];
        let check = |s: &Shadow, want: &[bool]| {
            for (i, &w) in want.iter().enumerate() {
                assert_eq!(s.written(i as u64), w, "byte {i}");
            }
        };
        for (off, n) in [
            (3, 1),
            (60, 10),
            (127, 130),
            (CHUNK_BYTES - 5, 11),
            (len - 7, 7),
            (500, 64),
        ] {
            s.mark(off, n);
            want[off as usize..(off + n) as usize].fill(true);
        }
        check(&s, &want);
        assert!(s.any_written(0, 4) && s.any_written(55, 6) && s.any_written(CHUNK_BYTES - 6, 2));
        assert!(!s.any_written(55, 5) && !s.any_written(CHUNK_BYTES - 8, 3));
        assert!(!s.any_written(0, 3) && !s.any_written(70, 57) && !s.any_written(CHUNK_BYTES + 6, 100));
        assert!(s.any_written(len - 7, 100), "clipped at the end");
        assert!(!s.any_written(len, 8), "past the end");
        assert!(!s.written(len), "past the end");

        // A copy from a shadow carries clear bits too; from no shadow, all written.
        let d = Shadow::new(len).unwrap();
        d.mark(0, len);
        Shadow::copy(&d, 1000, Some(&s), 55, 300);
        let mut dw = vec![true; len as usize];
        dw[1000..1300].copy_from_slice(&want[55..355]);
        check(&d, &dw);
        Shadow::copy(&d, 2 * CHUNK_BYTES + 3, None, 0, 70);
        check(&d, &dw);

        // Overlapping copies within one shadow move as memmove.
        let snapshot = want.clone();
        Shadow::copy(&s, 70, Some(&s), 50, 200);
        want[70..270].copy_from_slice(&snapshot[50..250]);
        check(&s, &want);
        let snapshot = want.clone();
        Shadow::copy(&s, 40, Some(&s), 61, 300);
        want[40..340].copy_from_slice(&snapshot[61..361]);
        check(&s, &want);
    }

    /// The graveyard keeps the newest allocations and finds the newest at an address.
    #[test]
    fn graveyard_keeps_the_newest() {
        let mut g = Graveyard::default();
        for i in 0..GONE_KEPT as u64 + 10 {
            g.push(Gone {
                gpu: 0,
                va: 0x1000 * (i % 20),
                size: 0x1000,
                kind: "VRAM",
                freed: i % 2 == 0,
            });
        }
        assert_eq!(g.0.len(), GONE_KEPT);
        let x = g.find(0, 0x1000 * 3 + 5).unwrap();
        assert_eq!((x.va, x.freed), (0x3000, false));
        assert!(g.find(1, 0x3000).is_none());
        assert!(g.find(0, 0x1000 * 20).is_none());
    }
}
