//! Copies: host→device through a ring of pinned staging buffers (the CPU fills one
//! while SDMA drains the others), device→host through the same ring (SDMA fills the
//! next while the CPU reads one out), device→device, and between GPUs.

use zerocopy::IntoBytes;

use crate::device::Device;
use crate::iface::{DeviceInterface, DeviceMemory};
use crate::memory::Buffer;
use crate::queue::Sdma;
use crate::resources::{STAGING_SIZE, Staging};
use crate::timeline::{OpName, Point};
use crate::{HcqError, Result};

impl<I: DeviceInterface> Device<I> {
    /// `size` bytes from GPU address `from` to `to` on the SDMA queue, ordered on the
    /// timeline (profiled as `name`).
    fn copy_on_timeline(&self, name: &'static str, to: u64, from: u64, size: usize) -> Result<Point> {
        let (p, _) = self.submit_timed::<Sdma>(OpName::Static(name), false, false, |q| {
            q.copy(to, from, size as u64).map(|_| ())
        })?;
        Ok(p)
    }

    fn staging(&self) -> Result<parking_lot::MutexGuard<'_, Staging<I>>> {
        // A faulted device allocates nothing: the sticky error, at once.
        self.inner.check()?;
        Ok(self.inner.resources.staging.lock())
    }

    /// Copies `data` into `dst` at `offset`, through the staging buffers; returns once
    /// the data is in staging memory (the copies complete on the timeline).
    pub fn copy_in(&self, dst: &Buffer<I>, offset: usize, data: &[u8]) -> Result<()> {
        dst.check(offset, data.len())?;
        dst.check_on(self.inner.id(), &"the destination")?;
        let mut staging = self.staging()?;
        for (i, chunk) in data.chunks(STAGING_SIZE).enumerate() {
            let slot = staging.next;
            staging.next = (slot + 1) % staging.bufs.len();
            // The slot may still feed an earlier copy.
            self.wait_point(staging.busy_until[slot])?;
            let buf = staging.buf(&self.inner.iface, slot)?;
            buf.write(0, chunk)?;
            let src = buf.va();
            let to = dst.va() + (offset + i * STAGING_SIZE) as u64;
            let p = self.copy_on_timeline("copy_in", to, src, chunk.len())?;
            staging.busy_until[slot] = p;
        }
        Ok(())
    }

    /// Copies `data` (plain-old-data values) into `dst` at byte `offset`, as
    /// [`Device::copy_in`].
    pub fn copy_in_slice<T: zerocopy::IntoBytes + zerocopy::Immutable>(
        &self,
        dst: &Buffer<I>,
        offset: usize,
        data: &[T],
    ) -> Result<()> {
        self.copy_in(dst, offset, data.as_bytes())
    }

    /// Copies `n` plain-old-data values of `src` at byte `offset` to the host, as
    /// [`Device::copy_out`].
    pub fn copy_out_vec<T: zerocopy::FromBytes + zerocopy::IntoBytes>(
        &self,
        src: &Buffer<I>,
        offset: usize,
        n: usize,
    ) -> Result<Vec<T>> {
        let mut out: Vec<T> = (0..n).map(|_| T::new_zeroed()).collect();
        self.copy_out(out.as_mut_bytes(), src, offset)?;
        Ok(out)
    }

    /// Copies `out.len()` bytes of `src` at `offset` to the host; waits for earlier work.
    ///
    /// Pipelined through the staging buffers: SDMA fills the next ones while the CPU
    /// reads out the one whose copy is done.
    pub fn copy_out(&self, out: &mut [u8], src: &Buffer<I>, offset: usize) -> Result<()> {
        src.check(offset, out.len())?;
        src.check_on(self.inner.id(), &"the source")?;
        let mut staging = self.staging()?;
        let slots = staging.bufs.len();
        let mut chunks = out.chunks_mut(STAGING_SIZE).enumerate();
        // The chunks in flight: the host slice, its staging slot, its copy's point.
        let mut pending = std::collections::VecDeque::with_capacity(slots);
        loop {
            while pending.len() < slots {
                let Some((i, chunk)) = chunks.next() else { break };
                let slot = staging.next;
                staging.next = (slot + 1) % slots;
                // The slot may still feed an earlier copy in.
                self.wait_point(staging.busy_until[slot])?;
                let to = staging.buf(&self.inner.iface, slot)?.va();
                let from = src.va() + (offset + i * STAGING_SIZE) as u64;
                let p = self.copy_on_timeline("copy_out", to, from, chunk.len())?;
                staging.busy_until[slot] = p;
                pending.push_back((chunk, slot, p));
            }
            let Some((chunk, slot, p)) = pending.pop_front() else {
                break;
            };
            self.wait_point(p)?;
            staging.buf(&self.inner.iface, slot)?.read(0, chunk)?;
        }
        Ok(())
    }

    /// Copies `size` bytes from `src` to `dst` on this GPU's SDMA queue, ordered on the
    /// timeline. Host buffers are GPU memory too: copying from or to one needs no
    /// staging.
    pub fn copy(
        &self,
        dst: &Buffer<I>,
        dst_offset: usize,
        src: &Buffer<I>,
        src_offset: usize,
        size: usize,
    ) -> Result<u64> {
        dst.check(dst_offset, size)?;
        src.check(src_offset, size)?;
        dst.check_on(self.inner.id(), &"the destination")?;
        src.check_on(self.inner.id(), &"the source")?;
        let (to, from) = (dst.va() + dst_offset as u64, src.va() + src_offset as u64);
        Ok(self.copy_on_timeline("copy", to, from, size)?.logical())
    }

    /// Fills `size` bytes of `dst` at `offset` with the 32-bit `pattern` repeated
    /// (little-endian) on this GPU's SDMA queue, ordered on the timeline: how VRAM the
    /// CPU cannot reach is cleared or set. `offset` and `size` are multiples of 4.
    ///
    /// ```
    /// use amd_hcq::{BufferKind, HcqError, Platform};
    ///
    /// let dev = Platform::mock(amd_hcq::mock::MockConfig::gfx1100s(1))?.device(0)?;
    /// let buf = dev.alloc(64, BufferKind::Device)?;
    /// dev.fill(&buf, 0, 64, 0)?;
    /// dev.fill(&buf, 8, 8, 7)?;
    /// assert_eq!(dev.copy_out_vec::<u32>(&buf, 0, 5)?, [0, 0, 7, 7, 0]);
    /// // Whole dwords inside the buffer, or an error naming the range.
    /// assert_eq!(dev.fill(&buf, 2, 8, 0), Err(HcqError::FillUnaligned { at: 2, size: 8 }));
    /// assert_eq!(dev.fill(&buf, 0, 6, 0), Err(HcqError::FillUnaligned { at: 0, size: 6 }));
    /// assert_eq!(dev.fill(&buf, 60, 8, 0), Err(HcqError::OutOfBounds { offset: 60, len: 8, size: 64 }));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn fill(&self, dst: &Buffer<I>, offset: usize, size: usize, pattern: u32) -> Result<u64> {
        dst.check(offset, size)?;
        dst.check_on(self.inner.id(), &"the destination")?;
        if offset % 4 != 0 || size % 4 != 0 {
            return Err(HcqError::FillUnaligned {
                at: offset as u64,
                size: size as u64,
            });
        }
        let to = dst.va() + offset as u64;
        let (p, _) = self.submit_timed::<Sdma>(OpName::Static("fill"), false, false, |q| {
            q.fill(to, pattern, size as u64).map(|_| ())
        })?;
        Ok(p.logical())
    }

    /// Copies `size` bytes of `src` (on this GPU) to `dst` on GPU `dst_dev`: this
    /// GPU's SDMA copies once both timelines have passed their earlier work, then
    /// `dst_dev`'s timeline waits for the copy.
    pub fn transfer(&self, dst_dev: &Device<I>, dst: &Buffer<I>, src: &Buffer<I>, size: usize) -> Result<()> {
        dst.check(0, size)?;
        src.check(0, size)?;
        src.check_on(self.inner.id(), &"the source")?;
        dst.check_on(dst_dev.inner.id(), &"the destination")?;
        self.map_peer(dst)?;
        let (their_addr, their_last) = dst_dev.timeline_snapshot()?;
        let (to, from) = (dst.va(), src.va());
        let (p, _) = self.submit_timed::<Sdma>(OpName::Static("transfer"), false, false, |q| {
            q.wait_addr(their_addr, their_last);
            q.copy(to, from, size as u64).map(|_| ())
        })?;
        if dst_dev.index() != self.index() {
            let (my_addr, _) = self.timeline_snapshot()?;
            dst_dev.submit_ordered(false, |w| {
                w.compute()?.wait_addr(my_addr, p.value);
                Ok(())
            })?;
        }
        Ok(())
    }
}
