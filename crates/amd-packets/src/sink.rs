//! Where encoders write.

/// A growable or fixed dword buffer that encoders append to.
///
/// Encoders return the index at which their packet starts (`len()` before writing),
/// so callers can record patch offsets.
pub trait CmdSink {
    /// Dwords written so far.
    fn len(&self) -> usize;
    /// Whether nothing has been written.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Appends dwords.
    fn put(&mut self, dwords: &[u32]);
}

impl CmdSink for Vec<u32> {
    #[inline(always)]
    fn len(&self) -> usize {
        Vec::len(self)
    }
    #[inline(always)]
    fn put(&mut self, dwords: &[u32]) {
        self.extend_from_slice(dwords);
    }
}

/// A sink over a fixed slice, such as a mapped ring segment.
///
/// Writing past the end stores nothing further and marks the sink overflowed; check
/// [`SliceSink::finish`] before publishing what was written.
#[derive(Debug)]
pub struct SliceSink<'a> {
    buf: &'a mut [u32],
    pos: usize,
    overflow: bool,
}

impl<'a> SliceSink<'a> {
    /// A sink that writes from the start of `buf`.
    #[inline]
    pub fn new(buf: &'a mut [u32]) -> Self {
        SliceSink {
            buf,
            pos: 0,
            overflow: false,
        }
    }

    /// Dwords written, or `None` if some packet did not fit.
    #[inline]
    pub fn finish(self) -> Option<usize> {
        (!self.overflow).then_some(self.pos)
    }
}

impl CmdSink for SliceSink<'_> {
    #[inline(always)]
    fn len(&self) -> usize {
        self.pos
    }
    #[inline(always)]
    fn put(&mut self, dwords: &[u32]) {
        let end = self.pos.checked_add(dwords.len());
        match end.and_then(|end| self.buf.get_mut(self.pos..end)) {
            Some(dst) if !self.overflow => {
                dst.copy_from_slice(dwords);
                self.pos += dwords.len();
            }
            _ => self.overflow = true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slice_sink_overflow_is_reported() {
        let mut buf = [0u32; 3];
        let mut s = SliceSink::new(&mut buf);
        s.put(&[1, 2]);
        s.put(&[3, 4]);
        s.put(&[5]);
        assert_eq!(s.finish(), None);
        assert_eq!(buf, [1, 2, 0]);

        let mut buf = [0u32; 3];
        let mut s = SliceSink::new(&mut buf);
        s.put(&[1, 2, 3]);
        assert_eq!(s.finish(), Some(3));
    }
}
