//! The mock driver's access to the caller's memory: the arrays an ioctl argument
//! points at (as the kernel's `copy_from_user`/`copy_to_user`), and the host mappings
//! it makes on the caller's behalf.

#![allow(unsafe_code)]

use nix::errno::Errno;
use zerocopy::{FromBytes, Immutable, IntoBytes};

/// Most array elements one ioctl may pass (a bound on what the mock copies).
pub const MAX_ELEMENTS: usize = 1 << 16;

/// Reads `count` `T`s from the caller's pointer `ptr`.
///
/// # Safety
/// `ptr` must be valid for reading `count` `T`s: the contract of
/// [`amd_kfd::sys::Sys::ioctl`], whose caller vouches for the pointers in the argument.
pub unsafe fn read_array<T: FromBytes + IntoBytes + Clone>(ptr: u64, count: usize) -> Result<Vec<T>, Errno> {
    if count == 0 {
        return Ok(Vec::new());
    }
    if ptr == 0 {
        return Err(Errno::EFAULT);
    }
    if count > MAX_ELEMENTS {
        return Err(Errno::EINVAL);
    }
    let mut out = vec![T::new_zeroed(); count];
    let bytes = out.as_mut_slice().as_mut_bytes();
    // SAFETY: the source is valid for `count` elements (this function's contract);
    // the destination is a fresh buffer of exactly that many bytes; unaligned source
    // is fine for a byte copy.
    unsafe { std::ptr::copy_nonoverlapping(ptr as *const u8, bytes.as_mut_ptr(), bytes.len()) };
    Ok(out)
}

/// Writes `items` to the caller's pointer `ptr`.
///
/// # Safety
/// `ptr` must be valid for writing `items.len()` `T`s (the [`amd_kfd::sys::Sys::ioctl`]
/// contract).
pub unsafe fn write_array<T: IntoBytes + Immutable>(ptr: u64, items: &[T]) -> Result<(), Errno> {
    if items.is_empty() {
        return Ok(());
    }
    if ptr == 0 {
        return Err(Errno::EFAULT);
    }
    let bytes = items.as_bytes();
    // SAFETY: the destination is valid for `bytes.len()` bytes (contract) and is the
    // caller's array, distinct from `items`, which the mock owns.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), ptr as *mut u8, bytes.len()) };
    Ok(())
}
