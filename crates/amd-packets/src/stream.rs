//! Iterating over the packets of a stream, shared by the PM4 and SDMA decoders.

use crate::{GfxTarget, PacketError};

/// A packet type that decodes from the start of a dword slice.
pub trait Decode<'a>: Sized {
    /// Decodes the packet at the start of `words`; returns it and the dwords it spans.
    fn decode_one(target: GfxTarget, words: &'a [u32]) -> Result<(Self, usize), PacketError>;
}

/// Iterator over the packets of a stream: yields `(dword offset, packet)`, or one
/// error (with the offset in the whole stream) after which it ends.
#[derive(Clone, Debug)]
pub struct Stream<'a, P> {
    target: GfxTarget,
    words: &'a [u32],
    pos: usize,
    failed: bool,
    _packet: std::marker::PhantomData<P>,
}

impl<'a, P> Stream<'a, P> {
    pub(crate) fn new(target: GfxTarget, words: &'a [u32]) -> Self {
        Stream {
            target,
            words,
            pos: 0,
            failed: false,
            _packet: std::marker::PhantomData,
        }
    }
}

impl<'a, P: Decode<'a>> Iterator for Stream<'a, P> {
    type Item = Result<(usize, P), PacketError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        let rest = self.words.get(self.pos..).filter(|r| !r.is_empty())?;
        match P::decode_one(self.target, rest) {
            Ok((pkt, len)) => {
                let at = self.pos;
                self.pos += len;
                Some(Ok((at, pkt)))
            }
            Err(e) => {
                self.failed = true;
                Some(Err(e.rebased(self.pos)))
            }
        }
    }
}
