//! What every generation's decoder shares: the error, the encoding found by its fixed
//! fields, and the instruction's dwords read from code that may end early (untrusted
//! input: an error, never a panic).

use crate::field::{Fixed, Words};

/// Why an instruction cannot be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// The code ends inside the instruction.
    #[error("truncated instruction")]
    Truncated,
    /// An encoding the interpreter does not know.
    #[error("unknown encoding of {0:#010x}")]
    Unknown(u32),
}

/// The first encoding of `table` whose fixed field the first dword `w0` matches (so a
/// longer ENCODING field must come before a shorter one it begins with), with its
/// length in dwords.
pub(crate) fn encoding<E: Copy>(table: &[(Fixed, E, usize)], w0: u32) -> Result<(E, usize), DecodeError> {
    table
        .iter()
        .find(|(field, ..)| field.matches(&[w0, 0, 0]))
        .map(|&(_, enc, dwords)| (enc, dwords))
        .ok_or(DecodeError::Unknown(w0))
}

/// The code's dword `at`, or [`DecodeError::Truncated`] where the code ends before it.
pub(crate) fn dword(words: &[u32], at: usize) -> Result<u32, DecodeError> {
    words.get(at).copied().ok_or(DecodeError::Truncated)
}

/// The instruction's first `dwords` dwords (at most three) as fields read them, 0 past
/// them.
pub(crate) fn body(words: &[u32], dwords: usize) -> Result<Words, DecodeError> {
    let mut w: Words = [0; 3];
    let n = dwords.min(w.len());
    w[..n].copy_from_slice(words.get(..n).ok_or(DecodeError::Truncated)?);
    Ok(w)
}
