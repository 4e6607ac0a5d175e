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

/// Argument structs up to this size are staged on the stack (`stack_kdata` in
/// `kfd_ioctl()`).
const STACK_KDATA: usize = 128;

/// An ioctl argument staged as the kernel stages it (`kfd_ioctl()` in
/// `kfd_chardev.c`, `drm_ioctl()` in `drm_ioctl.c`): a buffer of the larger of the
/// caller's size (`user_size`, from the request number) and the kernel's struct
/// (`kernel_size`), the caller's bytes copied in when `copy_in`, the rest zero; `f`
/// runs on the kernel's struct; the caller's size is copied back when `copy_out`, also
/// when `f` failed (fields such as KFD MAP's `n_success` report partial work). A size
/// past the caller's buffer is EFAULT, as the kernel's `copy_from_user` fails.
pub fn staged<R>(
    user: &mut [u8],
    user_size: usize,
    kernel_size: usize,
    copy_in: bool,
    copy_out: bool,
    f: impl FnOnce(&mut [u8]) -> R,
) -> Result<R, Errno> {
    let user = user.get_mut(..user_size).ok_or(Errno::EFAULT)?;
    let size = user_size.max(kernel_size);
    let mut stack = [0u8; STACK_KDATA];
    let mut heap = Vec::new();
    let kdata: &mut [u8] = if size <= STACK_KDATA {
        &mut stack[..size]
    } else {
        heap.resize(size, 0);
        &mut heap
    };
    if copy_in {
        kdata[..user_size].copy_from_slice(user);
    }
    let r = f(&mut kdata[..kernel_size]);
    if copy_out {
        user.copy_from_slice(&kdata[..user_size]);
    }
    Ok(r)
}

/// `_IOC_SIZE` of an ioctl request number.
pub use amd_kfd::abi::ioc::size as ioc_size;

/// Decodes an ioctl argument as `T`, runs `f`, and writes `T` back.
pub(crate) fn with_arg<T: FromBytes + IntoBytes + zerocopy::Immutable>(
    arg: &mut [u8],
    f: impl FnOnce(&mut T) -> Result<(), Errno>,
) -> Result<(), Errno> {
    let mut t = T::read_from_bytes(arg).map_err(|_| Errno::EINVAL)?;
    let r = f(&mut t);
    // As the kernel's handlers work in the copied argument itself, what they wrote
    // before failing is copied back too.
    arg.copy_from_slice(t.as_bytes());
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Arrays cross at any alignment of the caller's pointer, exactly their bytes; a
    /// null pointer, an empty array and too many elements are answered before any
    /// access. Runs under Miri (`cargo xtask miri`).
    #[test]
    fn arrays_cross_at_any_alignment_and_no_further() {
        let mut user = [0xeeu8; 24];
        let at = user.as_mut_ptr() as u64 + 1;
        // SAFETY: bytes 1..13 of `user` are writable (three u32s at an odd address).
        unsafe { write_array(at, &[0x0403_0201u32, 0x0807_0605, 0x0c0b_0a09]) }.unwrap();
        assert_eq!(user[0], 0xee);
        assert_eq!(&user[1..13], &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
        assert!(user[13..].iter().all(|&b| b == 0xee));
        // SAFETY: bytes 1..13 of `user` are readable.
        let back: Vec<u32> = unsafe { read_array(at, 3) }.unwrap();
        assert_eq!(back, [0x0403_0201, 0x0807_0605, 0x0c0b_0a09]);
        // SAFETY: bytes 3..19 of `user` are readable (two u64s).
        let wide: Vec<u64> = unsafe { read_array(at + 2, 2) }.unwrap();
        assert_eq!(wide[0], u64::from_le_bytes([3, 4, 5, 6, 7, 8, 9, 10]));
        // SAFETY: none of these reads or writes memory.
        unsafe {
            assert_eq!(read_array::<u32>(0, 1), Err(Errno::EFAULT));
            assert_eq!(write_array(0, &[1u32]), Err(Errno::EFAULT));
            assert_eq!(read_array::<u32>(0, 0), Ok(vec![]));
            assert_eq!(write_array::<u32>(0, &[]), Ok(()));
            assert_eq!(read_array::<u32>(at, MAX_ELEMENTS + 1), Err(Errno::EINVAL));
        }
    }
}
