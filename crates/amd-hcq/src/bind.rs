//! Bound command lists: packets copied once into GPU memory and replayed with one
//! indirect-buffer packet (PM4 INDIRECT_BUFFER on the compute queue, SDMA INDIRECT on
//! the copy queue), patchable in place between runs.

use std::sync::atomic::{AtomicU64, Ordering};

use amd_packets::pm4::IndirectBuffer;
use amd_packets::sdma;

use crate::device::{Device, Work};
use crate::iface::{BufferKind, DeviceInterface};
use crate::memory::Buffer;
use crate::queue::{ComputeQueue, CopyQueue};
use crate::{HcqError, Result};

/// A compute or copy list living in GPU memory (see [`Device::bind`],
/// [`Device::bind_copy`]).
pub struct BoundQueue<I: DeviceInterface = crate::KfdIface> {
    buf: Buffer<I>,
    dwords: u32,
    /// Runs on the copy queue (SDMA packets) rather than the compute queue.
    copy: bool,
    /// Timeline value of the last run (0: never run).
    last: AtomicU64,
}

impl<I: DeviceInterface> std::fmt::Debug for BoundQueue<I> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BoundQueue")
            .field("va", &format_args!("{:#x}", self.buf.va()))
            .field("dwords", &self.dwords)
            .field("copy", &self.copy)
            .finish()
    }
}

impl<I: DeviceInterface> BoundQueue<I> {
    /// Dwords in the list.
    pub fn len(&self) -> usize {
        self.dwords as usize
    }

    /// Whether it runs on the copy queue.
    pub fn is_copy(&self) -> bool {
        self.copy
    }

    /// Whether the list is empty (never: binding refuses empty lists).
    pub fn is_empty(&self) -> bool {
        self.dwords == 0
    }

    /// Rewrites dword `at` of the list, after its last run has finished.
    pub fn patch_u32(&self, dev: &Device<I>, at: usize, value: u32) -> Result<()> {
        self.patch(dev, at, &[value])
    }

    /// Rewrites dwords `at`, `at + 1` with `value` (lo, hi), after its last run.
    pub fn patch_u64(&self, dev: &Device<I>, at: usize, value: u64) -> Result<()> {
        self.patch(dev, at, &amd_packets::lo_hi(value))
    }

    fn patch(&self, dev: &Device<I>, at: usize, words: &[u32]) -> Result<()> {
        if at.checked_add(words.len()).is_none_or(|e| e > self.dwords as usize) {
            return Err(HcqError::InvalidArgument(format!(
                "patch at dword {at} outside a list of {}",
                self.dwords
            )));
        }
        // Acquire: pairs with the Release store of the run's value.
        dev.wait_timeline(self.last.load(Ordering::Acquire))?;
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        self.buf.write(at * 4, &bytes)
    }
}

impl<I: DeviceInterface> Device<I> {
    /// Copies `q`'s packets into GPU memory once; [`Device::submit_bound`] then runs
    /// them with a four-dword INDIRECT_BUFFER.
    pub fn bind(&self, q: &ComputeQueue) -> Result<BoundQueue<I>> {
        let words = q.dwords();
        if words.is_empty() || words.len() > IndirectBuffer::MAX_DWORDS as usize {
            return Err(HcqError::InvalidArgument(format!(
                "a bound list of {} dwords",
                words.len()
            )));
        }
        self.bind_words(words, false)
    }

    /// Copies `q`'s SDMA packets into GPU memory once (padded with NOPs to 8 dwords);
    /// [`Device::submit_bound`] then runs them with one SDMA INDIRECT packet. A list
    /// that itself holds an INDIRECT packet is refused (the engine does not nest them).
    pub fn bind_copy(&self, q: &CopyQueue) -> Result<BoundQueue<I>> {
        if !q.end_aligned.is_empty() {
            return Err(HcqError::InvalidArgument(
                "a bound copy list cannot hold an INDIRECT packet".into(),
            ));
        }
        let mut words = q.dwords().to_vec();
        if words.is_empty() || words.len() > sdma::Indirect::MAX_DWORDS as usize {
            return Err(HcqError::InvalidArgument(format!(
                "a bound copy list of {} dwords",
                words.len()
            )));
        }
        words.resize(words.len().next_multiple_of(8), 0);
        self.bind_words(&words, true)
    }

    fn bind_words(&self, words: &[u32], copy: bool) -> Result<BoundQueue<I>> {
        let buf = self.alloc(words.len() * 4, BufferKind::Uncached)?;
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        buf.write(0, &bytes)?;
        Ok(BoundQueue {
            buf,
            dwords: words.len() as u32,
            copy,
            last: AtomicU64::new(0),
        })
    }

    /// Runs a bound list, ordered on the timeline; returns the timeline value that
    /// marks its end.
    pub fn submit_bound(&self, b: &BoundQueue<I>) -> Result<u64> {
        let v = if b.copy {
            self.submit_ordered(true, |w| match w {
                Work::Copy(q) => q.indirect(b.buf.va(), b.dwords).map(|_| ()),
                Work::Compute(_) => Err(HcqError::InvalidArgument("a copy list on the compute queue".into())),
            })?
        } else {
            let ib = IndirectBuffer::new(b.buf.va(), b.dwords)?;
            self.submit_ordered(false, |w| match w {
                Work::Compute(q) => {
                    ib.encode(q.target, &mut q.cmds);
                    Ok(())
                }
                Work::Copy(_) => Err(HcqError::InvalidArgument("a compute list on the copy queue".into())),
            })?
        };
        // Release: a patch that sees this value waits for this run.
        b.last.store(v, Ordering::Release);
        Ok(v)
    }
}
