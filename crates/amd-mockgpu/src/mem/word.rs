//! The words engines and kernels access atomically (dwords and qwords), and the one
//! implementation of their loads, stores and read-modify-writes on memory the caller
//! has checked.
//!
//! Orderings: a load is Acquire, a store Release, and a read-modify-write a
//! compare-exchange loop (Acquire on the load, AcqRel on the exchange), so an access
//! orders the accesses around it as a device-scope atomic does; signals and ring
//! pointers are read and written through these.

#![allow(unsafe_code)]

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// A dword or a qword.
pub(crate) trait Word: Copy + Eq + std::fmt::Debug + Send + 'static {
    /// Its size in bytes (its alignment for the atomic accesses).
    const BYTES: usize;

    /// The word of `b`'s first [`Self::BYTES`] bytes, little-endian (`b` holds at
    /// least that many).
    fn from_le(b: &[u8]) -> Self;

    /// Writes the word little-endian into `out`'s first [`Self::BYTES`] bytes.
    fn to_le(self, out: &mut [u8]);

    /// Loads the word at `p` (Acquire).
    ///
    /// # Safety
    /// `p` is aligned to [`Self::BYTES`] and the word's bytes are live and readable
    /// for the call; other accesses to them meanwhile are atomic or the host's.
    unsafe fn load(p: *const u8) -> Self;

    /// Stores `v` at `p` (Release).
    ///
    /// # Safety
    /// As [`Word::load`], the bytes writable.
    unsafe fn store(p: *mut u8, v: Self);

    /// Replaces the word at `p` by `f(old)` atomically, retrying while another
    /// access changes it; `f`'s error leaves it unchanged. Returns the old word.
    ///
    /// # Safety
    /// As [`Word::store`].
    unsafe fn update<E>(p: *mut u8, f: impl FnMut(Self) -> Result<Self, E>) -> Result<Self, E>;
}

/// The word at `addr` of memory `read` reaches when it is not aligned (no atomicity
/// across the bytes, as on the hardware).
pub(crate) fn read_unaligned<W: Word, F>(read: impl FnOnce(&mut [u8]) -> Result<(), F>) -> Result<W, F> {
    let mut b = [0u8; 8];
    read(&mut b[..W::BYTES])?;
    Ok(W::from_le(&b))
}

/// `v`'s bytes for an unaligned store.
pub(crate) fn bytes_of<W: Word>(v: W) -> ([u8; 8], usize) {
    let mut b = [0u8; 8];
    v.to_le(&mut b);
    (b, W::BYTES)
}

macro_rules! word {
    ($t:ty, $atomic:ty) => {
        impl Word for $t {
            const BYTES: usize = size_of::<$t>();

            fn from_le(b: &[u8]) -> Self {
                let mut a = [0u8; size_of::<$t>()];
                a.copy_from_slice(&b[..size_of::<$t>()]);
                <$t>::from_le_bytes(a)
            }

            fn to_le(self, out: &mut [u8]) {
                out[..size_of::<$t>()].copy_from_slice(&self.to_le_bytes());
            }

            unsafe fn load(p: *const u8) -> Self {
                // SAFETY: the caller's contract: aligned, live, readable; the atomic view
                // makes a concurrent store to the same word well defined.
                unsafe { &*(p as *const $atomic) }.load(Ordering::Acquire)
            }

            unsafe fn store(p: *mut u8, v: Self) {
                // SAFETY: the caller's contract: aligned, live, writable.
                unsafe { &*(p as *const $atomic) }.store(v, Ordering::Release)
            }

            unsafe fn update<E>(p: *mut u8, mut f: impl FnMut(Self) -> Result<Self, E>) -> Result<Self, E> {
                // SAFETY: the caller's contract: aligned, live, writable.
                let cell = unsafe { &*(p as *const $atomic) };
                let mut old = cell.load(Ordering::Acquire);
                loop {
                    let new = f(old)?;
                    match cell.compare_exchange_weak(old, new, Ordering::AcqRel, Ordering::Acquire) {
                        Ok(_) => return Ok(old),
                        Err(now) => old = now,
                    }
                }
            }
        }
    };
}

word!(u32, AtomicU32);
word!(u64, AtomicU64);
