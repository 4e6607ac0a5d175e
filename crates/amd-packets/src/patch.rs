//! In-place patching of recorded command buffers.
//!
//! Encoders report where replayable values sit (the `*Field::offset` functions and
//! the offset structs of [`crate::pm4::recipes`]); these helpers rewrite them with a
//! bounds check instead of a panic.

use crate::{PacketError, lo_hi};

/// Writes `value` at dword `at`.
#[inline]
pub fn set_u32(buf: &mut [u32], at: usize, value: u32) -> Result<(), PacketError> {
    let buf_len = buf.len();
    let slot = buf.get_mut(at).ok_or(PacketError::PatchOutOfBounds {
        offset: at,
        len: 1,
        buf_len,
    })?;
    *slot = value;
    Ok(())
}

/// Writes `value` as lo, hi dwords at `at`, `at + 1`.
#[inline]
pub fn set_u64(buf: &mut [u32], at: usize, value: u64) -> Result<(), PacketError> {
    let buf_len = buf.len();
    let slot = at
        .checked_add(2)
        .and_then(|end| buf.get_mut(at..end))
        .ok_or(PacketError::PatchOutOfBounds {
            offset: at,
            len: 2,
            buf_len,
        })?;
    slot.copy_from_slice(&lo_hi(value));
    Ok(())
}

/// Writes consecutive dwords starting at `at`.
#[inline]
pub fn set_slice(buf: &mut [u32], at: usize, values: &[u32]) -> Result<(), PacketError> {
    let buf_len = buf.len();
    let slot = at
        .checked_add(values.len())
        .and_then(|end| buf.get_mut(at..end))
        .ok_or(PacketError::PatchOutOfBounds {
            offset: at,
            len: values.len(),
            buf_len,
        })?;
    slot.copy_from_slice(values);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::GfxTarget;
    use crate::pm4::{ReleaseMem, ReleaseMemField};

    #[test]
    fn patching_a_signal_matches_a_fresh_encode() {
        let t = GfxTarget::Gfx11;
        let mut buf = Vec::new();
        let at = ReleaseMem::signal(0x1000, 1).encode(t, &mut buf);
        set_u64(&mut buf, at + ReleaseMemField::Address.offset(t), 0x7f00_0000_2000).unwrap();
        set_u64(&mut buf, at + ReleaseMemField::Data.offset(t), 42).unwrap();
        let mut fresh = Vec::new();
        ReleaseMem::signal(0x7f00_0000_2000, 42).encode(t, &mut fresh);
        assert_eq!(buf, fresh);
    }

    #[test]
    fn out_of_bounds_is_an_error() {
        let mut buf = [0u32; 4];
        assert!(set_u64(&mut buf, 3, 1).is_err());
        assert!(set_u64(&mut buf, usize::MAX, 1).is_err());
        assert!(set_u32(&mut buf, 4, 1).is_err());
        assert!(set_slice(&mut buf, 2, &[1, 2, 3]).is_err());
        assert!(set_slice(&mut buf, 1, &[1, 2, 3]).is_ok());
        assert_eq!(buf, [0, 1, 2, 3]);
    }
}
