//! Bulk copies and fills the way a DMA engine makes them: large transfers write the
//! destination with non-temporal (streaming) stores, which go to memory without first
//! reading each destination line into the host's caches and without evicting what the
//! host's cores have cached — as an SDMA engine's writes over the memory fabric do.
//!
//! A copy through ordinary stores reads every destination line before it writes it
//! (the read for ownership), so it moves three bytes over the memory bus for every two
//! a streaming copy moves; on the 2-core machines the project is tested on that is
//! 8–10 GB/s for `memmove` against 14–20 GB/s streamed.
//!
//! Small, overlapping or non-x86 transfers use `ptr::copy` / plain stores. Every
//! streamed transfer ends with a store fence, so the stores that follow it (the
//! fence or signal packet that says the copy is done) are not seen before its data.
//!
//! The memory large copies move is asked to be huge pages ([`collapse`]), as the
//! kernel's khugepaged would make it in time.

#![allow(unsafe_code)]

/// Transfers (a whole copy or fill, however it is cut into pieces) shorter than this
/// use plain stores: the destination of a transfer that fits in a core's share of the
/// last-level cache is likely read soon, and from the cache (the CPU reading a staging
/// buffer the engine just filled: with streaming stores a 64 MiB copy-out through 2 MiB
/// staging buffers ran at 0.75-0.84 x memcpy, with plain ones 0.91-1.09 x). A whole
/// SDMA copy packet (4 MiB, the most one moves) streams.
#[cfg(not(miri))]
pub(crate) const STREAM_MIN: usize = 4 << 20;
/// Under Miri, small enough that the tests run in minutes, large enough for a head, a
/// body of several steps and a tail.
#[cfg(miri)]
pub(crate) const STREAM_MIN: usize = 1 << 10;

/// Copies `len` bytes from `src` to `dst`, which may overlap (memmove semantics): a
/// piece of a transfer of `whole` bytes, which decides the stores ([`STREAM_MIN`]).
///
/// # Safety
/// `src..src+len` must be readable and `dst..dst+len` writable for the whole call, and
/// no reference to either range may be alive.
pub(crate) unsafe fn copy(dst: *mut u8, src: *const u8, len: usize, whole: u64) {
    // SAFETY: the caller's contract.
    unsafe { copy_with(dst, src, len, whole >= STREAM_MIN as u64) }
}

/// [`copy`], with streaming stores if `stream` (and the ranges do not overlap).
///
/// # Safety
/// As [`copy`].
unsafe fn copy_with(dst: *mut u8, src: *const u8, len: usize, stream: bool) {
    let (d, s) = (dst as usize, src as usize);
    let overlap = d.abs_diff(s) < len;
    if !stream || overlap || !imp::AVAILABLE {
        // SAFETY: the caller's contract; `ptr::copy` allows overlap.
        unsafe { std::ptr::copy(src, dst, len) };
        return;
    }
    // SAFETY: the ranges do not overlap (checked), and the caller's contract holds.
    unsafe { imp::copy_streaming(dst, src, len) }
}

/// Fills `len` bytes at `dst` with `pattern`'s little-endian bytes repeated, the first
/// byte at `dst` being byte 0 of the pattern: a piece of a fill of `whole` bytes.
///
/// # Safety
/// `dst..dst+len` must be writable for the whole call, and no reference to it alive.
pub(crate) unsafe fn fill(dst: *mut u8, pattern: u32, len: usize, whole: u64) {
    // SAFETY: the caller's contract.
    unsafe { fill_with(dst, pattern, len, whole >= STREAM_MIN as u64) }
}

/// [`fill`], with streaming stores if `stream`.
///
/// # Safety
/// As [`fill`].
unsafe fn fill_with(dst: *mut u8, pattern: u32, len: usize, stream: bool) {
    if !stream || !imp::AVAILABLE {
        // SAFETY: the caller's contract: `len` writable bytes, not otherwise borrowed.
        let out = unsafe { std::slice::from_raw_parts_mut(dst, len) };
        fill_plain(out, pattern);
        return;
    }
    // SAFETY: the caller's contract.
    unsafe { imp::fill_streaming(dst, pattern, len) }
}

/// Bytes of a huge page.
pub(crate) use amd_kfd::sys::HUGE_PAGE as HUGE;

/// The 2 MiB host regions [`collapse`] has asked for, by their first byte
/// (process-wide, as the kernel's own collapsing is); [`forget_collapsed`] drops a
/// range's when its memory goes, so that new memory there is asked for again.
static COLLAPSED: parking_lot::Mutex<std::collections::BTreeSet<usize>> =
    parking_lot::Mutex::new(std::collections::BTreeSet::new());

/// Has the kernel asked, once per region, to back each 2 MiB region `p..p + len`
/// touches with a huge page (`MADV_COLLAPSE`, Linux 6.1: for shared memory too,
/// whatever the machine's `shmem_enabled`; the contents stay as they are): the memory
/// large copies move — a PCI GPU's VRAM, the client's staging buffers — is then walked
/// with one TLB entry a region rather than 512, as the kernel's khugepaged would leave
/// it in time. Called after a piece of a copy (an empty region is refused). The asking
/// is done by a thread of its own ([`collapser`]), as khugepaged's is: a collapse
/// copies the region again and may wait for the kernel to compact memory (made on the
/// copy's own thread, the first 8 MiB copy into fresh VRAM took 1–2 ms longer, once
/// over 20). A failure (an older kernel, a region a mapping does not cover whole or
/// that is empty, no huge page free, memory unmapped meanwhile) leaves the pages as
/// they were.
pub(crate) fn collapse(p: usize, len: usize) {
    let first = p / HUGE * HUGE;
    let end = p.saturating_add(len).saturating_add(HUGE - 1) / HUGE * HUGE;
    let mut at = first;
    while at < end {
        if COLLAPSED.lock().insert(at)
            && let Some(c) = collapser()
        {
            // A send fails only when the thread is gone: nothing is asked then.
            let _ = c.send(at);
        }
        at += HUGE;
    }
}

/// The thread that asks for huge pages ([`collapse`]), started at the first request;
/// `None` where it could not be started.
fn collapser() -> Option<&'static std::sync::mpsc::Sender<usize>> {
    static COLLAPSER: std::sync::OnceLock<Option<std::sync::mpsc::Sender<usize>>> = std::sync::OnceLock::new();
    COLLAPSER
        .get_or_init(|| {
            let (tx, rx) = std::sync::mpsc::channel::<usize>();
            std::thread::Builder::new()
                .name("mockgpu-collapse".into())
                .spawn(move || rx.into_iter().for_each(ask_huge))
                .ok()
                .map(|_| tx)
        })
        .as_ref()
}

/// Forgets the regions [`collapse`] asked for inside `start..end` (its memory
/// unmapped).
pub(crate) fn forget_collapsed(start: usize, end: usize) {
    COLLAPSED.lock().retain(|&r| r < start / HUGE * HUGE || r >= end);
}

/// Whether [`collapse`] has asked for the region at `at` (and not forgotten it).
#[cfg(test)]
pub(crate) fn collapse_asked(at: usize) -> bool {
    COLLAPSED.lock().contains(&at)
}

/// `MADV_COLLAPSE` on the 2 MiB region at `at` (Linux only; its result is a hint's).
pub(crate) fn ask_huge(at: usize) {
    #[cfg(target_os = "linux")]
    {
        const MADV_COLLAPSE: nix::libc::c_int = 25;
        // SAFETY: MADV_COLLAPSE moves a region's contents into a huge page and maps it
        // in place: no address, contents or permission changes; on a range that is not
        // mapped, or not wholly inside one mapping, it fails, which is ignored.
        let _ = unsafe { nix::libc::madvise(at as *mut nix::libc::c_void, HUGE, MADV_COLLAPSE) };
    }
    #[cfg(not(target_os = "linux"))]
    let _ = at;
}

/// The pattern, phase-aligned to the start of `out`, with plain stores.
fn fill_plain(out: &mut [u8], pattern: u32) {
    let bytes = pattern.to_le_bytes();
    if bytes.iter().all(|&b| b == bytes[0]) {
        out.fill(bytes[0]);
        return;
    }
    let mut chunks = out.chunks_exact_mut(4);
    for c in &mut chunks {
        c.copy_from_slice(&bytes);
    }
    let rest = chunks.into_remainder();
    let n = rest.len();
    rest.copy_from_slice(&bytes[..n]);
}

#[cfg(target_arch = "x86_64")]
mod imp {
    #[cfg(not(miri))]
    use std::arch::x86_64::_mm_sfence;
    use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_set_epi32};

    /// Orders the streaming stores before every later store of this thread.
    #[inline(always)]
    fn store_fence() {
        // SAFETY: SSE is baseline on x86-64.
        #[cfg(not(miri))]
        unsafe {
            _mm_sfence()
        };
        // Miri runs the stores as plain ones (see `stream`), which a release fence orders.
        #[cfg(miri)]
        std::sync::atomic::fence(std::sync::atomic::Ordering::Release);
    }

    /// A streaming store of `v` at `d`.
    ///
    /// # Safety
    /// `d` is 16-aligned and its 16 bytes writable, not otherwise borrowed.
    #[inline(always)]
    unsafe fn stream(d: *mut __m128i, v: __m128i) {
        // SAFETY: the caller's contract, which is also what `movntdq` requires.
        #[cfg(not(miri))]
        unsafe {
            std::arch::x86_64::_mm_stream_si128(d, v)
        };
        // Miri cannot run `movntdq` (inline assembly): an aligned plain store, which it
        // checks for the same alignment and bounds.
        // SAFETY: the caller's contract.
        #[cfg(miri)]
        unsafe {
            d.write(v)
        };
    }

    /// SSE2 is part of x86-64, so the streaming stores are always there.
    pub(super) const AVAILABLE: bool = true;

    /// Bytes per step of the streaming loop: eight 16-byte stores, two cache lines.
    const STEP: usize = 128;

    /// # Safety
    /// As [`super::copy`], and the ranges do not overlap.
    pub(super) unsafe fn copy_streaming(dst: *mut u8, src: *const u8, len: usize) {
        // The head up to 16-byte destination alignment, with plain stores.
        let head = dst.align_offset(16).min(len);
        // SAFETY: `head <= len` bytes of both ranges; they do not overlap.
        unsafe { std::ptr::copy_nonoverlapping(src, dst, head) };
        let body = (len - head) / STEP * STEP;
        let mut i = head;
        while i < head + body {
            // SAFETY: `i + STEP <= len`, so the 128 bytes at `i` lie in both ranges;
            // `dst + i` is 16-aligned (the head made it so, and STEP keeps it), as the
            // streaming store requires; the source loads are unaligned loads.
            unsafe {
                let s = src.add(i) as *const __m128i;
                let d = dst.add(i) as *mut __m128i;
                let v = [
                    _mm_loadu_si128(s),
                    _mm_loadu_si128(s.add(1)),
                    _mm_loadu_si128(s.add(2)),
                    _mm_loadu_si128(s.add(3)),
                    _mm_loadu_si128(s.add(4)),
                    _mm_loadu_si128(s.add(5)),
                    _mm_loadu_si128(s.add(6)),
                    _mm_loadu_si128(s.add(7)),
                ];
                for (k, v) in v.into_iter().enumerate() {
                    stream(d.add(k), v);
                }
            }
            i += STEP;
        }
        // SAFETY: the tail `i..len` lies in both ranges; they do not overlap.
        unsafe {
            std::ptr::copy_nonoverlapping(src.add(i), dst.add(i), len - i);
        }
        // The streaming stores before every later store of this thread.
        store_fence();
    }

    /// # Safety
    /// As [`super::fill`].
    pub(super) unsafe fn fill_streaming(dst: *mut u8, pattern: u32, len: usize) {
        let head = dst.align_offset(16).min(len);
        // SAFETY: the first `head <= len` bytes of the caller's range.
        super::fill_plain(unsafe { std::slice::from_raw_parts_mut(dst, head) }, pattern);
        // The pattern as it falls from the first aligned byte on.
        let p = pattern.rotate_right(8 * (head % 4) as u32) as i32;
        // SAFETY: SSE2 is baseline on x86-64.
        let v = unsafe { _mm_set_epi32(p, p, p, p) };
        let body = (len - head) / STEP * STEP;
        let mut i = head;
        while i < head + body {
            // SAFETY: `i + STEP <= len` and `dst + i` is 16-aligned, as in `copy_streaming`.
            unsafe {
                let d = dst.add(i) as *mut __m128i;
                for k in 0..STEP / 16 {
                    stream(d.add(k), v);
                }
            }
            i += STEP;
        }
        let p = pattern.rotate_right(8 * (i % 4) as u32);
        // SAFETY: the tail of the caller's range.
        unsafe {
            super::fill_plain(std::slice::from_raw_parts_mut(dst.add(i), len - i), p);
        }
        // As in `copy_streaming`.
        store_fence();
    }
}

#[cfg(not(target_arch = "x86_64"))]
mod imp {
    pub(super) const AVAILABLE: bool = false;

    pub(super) unsafe fn copy_streaming(dst: *mut u8, src: *const u8, len: usize) {
        // SAFETY: the caller's contract.
        unsafe { std::ptr::copy_nonoverlapping(src, dst, len) }
    }

    pub(super) unsafe fn fill_streaming(dst: *mut u8, pattern: u32, len: usize) {
        // SAFETY: the caller's contract.
        super::fill_plain(unsafe { std::slice::from_raw_parts_mut(dst, len) }, pattern)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tests' threshold: both paths, on buffers small enough to check quickly.
    const STREAM_MIN: usize = if cfg!(miri) { 1 << 10 } else { 64 << 10 };

    /// [`super::copy`] of a whole transfer, at the tests' threshold.
    unsafe fn copy(dst: *mut u8, src: *const u8, len: usize) {
        // SAFETY: the caller's contract.
        unsafe { copy_with(dst, src, len, len >= STREAM_MIN) }
    }

    /// [`super::fill`] of a whole fill, at the tests' threshold.
    unsafe fn fill(dst: *mut u8, pattern: u32, len: usize) {
        // SAFETY: the caller's contract.
        unsafe { fill_with(dst, pattern, len, len >= STREAM_MIN) }
    }

    fn pattern(n: usize, seed: u8) -> Vec<u8> {
        (0..n).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed)).collect()
    }

    #[test]
    fn copies_every_byte_at_every_alignment() {
        let n = STREAM_MIN * 2 + 333;
        for (so, d_off) in [(0, 0), (1, 0), (0, 7), (5, 13), (15, 1)] {
            for len in [0, 1, 15, 100, STREAM_MIN - 1, STREAM_MIN, STREAM_MIN + 129, n - 16] {
                let src = pattern(n, 3);
                let mut dst = vec![0xeeu8; n + 32];
                // SAFETY: `len <= n - 16`, both ranges inside their vectors, distinct.
                unsafe { copy(dst.as_mut_ptr().add(d_off), src.as_ptr().add(so), len) };
                assert_eq!(
                    &dst[d_off..d_off + len],
                    &src[so..so + len],
                    "so {so} do {d_off} len {len}"
                );
                assert!(dst[..d_off].iter().all(|&b| b == 0xee));
                assert!(dst[d_off + len..].iter().all(|&b| b == 0xee), "past the end, len {len}");
            }
        }
    }

    #[test]
    fn overlapping_copies_are_memmoves() {
        let n = STREAM_MIN * 3 + 4096;
        for shift in [1isize, 64, -1, -4096] {
            let mut buf = pattern(n, 9);
            let want = {
                let mut w = buf.clone();
                let (from, to) = if shift > 0 {
                    (0, shift as usize)
                } else {
                    ((-shift) as usize, 0)
                };
                w.copy_within(from..from + STREAM_MIN * 2, to);
                w
            };
            let (from, to) = if shift > 0 {
                (0, shift as usize)
            } else {
                ((-shift) as usize, 0)
            };
            // SAFETY: both ranges inside `buf`; `copy` allows overlap.
            unsafe { copy(buf.as_mut_ptr().add(to), buf.as_ptr().add(from), STREAM_MIN * 2) };
            assert_eq!(buf, want, "shift {shift}");
        }
    }

    #[test]
    fn fills_keep_the_pattern_in_phase() {
        let n = STREAM_MIN * 2 + 77;
        for off in [0usize, 1, 2, 3, 6, 15] {
            for len in [0, 3, 17, STREAM_MIN + 5, n - 16] {
                for pat in [0x1122_3344u32, 0xabab_abab] {
                    let mut buf = vec![0u8; n];
                    // SAFETY: inside `buf`.
                    unsafe { fill(buf.as_mut_ptr().add(off), pat, len) };
                    let b = pat.to_le_bytes();
                    for (i, &x) in buf[off..off + len].iter().enumerate() {
                        assert_eq!(x, b[i % 4], "off {off} len {len} byte {i}");
                    }
                    assert!(buf[off + len..].iter().all(|&x| x == 0));
                    assert!(buf[..off].iter().all(|&x| x == 0));
                }
            }
        }
    }
}
