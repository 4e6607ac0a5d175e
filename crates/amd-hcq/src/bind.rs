//! Bound command lists: packets and kernel arguments copied once into GPU memory and
//! replayed with one indirect-buffer packet (PM4 INDIRECT_BUFFER on the compute
//! queue, SDMA INDIRECT on the copy queue).
//!
//! A bound list keeps several copies of itself ([`DEFAULT_COPIES`] unless asked), each
//! with its own kernel arguments: a replay takes the next copy, waits only if that
//! copy's previous run has not finished, rewrites the sites whose values changed since
//! that copy last ran, and submits. Consecutive replays with different values thus
//! pipeline instead of waiting for each other.

use parking_lot::Mutex;

use amd_packets::pm4::IndirectBuffer;
use amd_packets::sdma;

use crate::device::{Device, Point, Work};
use crate::iface::{BufferKind, DeviceInterface};
use crate::memory::Buffer;
use crate::queue::{ComputeQueue, CopyQueue, Place, Recording};
use crate::sym::Bindings;
use crate::{HcqError, Result};

/// Copies of a bound list kept by [`Device::bind`] and [`Device::bind_copy`].
pub const DEFAULT_COPIES: usize = 4;

/// One copy of a bound list in GPU memory.
pub(crate) struct Image<I: DeviceInterface> {
    /// Commands at 0, kernel arguments at `karg_off`.
    pub(crate) buf: Buffer<I>,
    /// Timeline point of its last run.
    pub(crate) last_run: Point,
    /// The encoded value of each site as last written (valid once `written`).
    pub(crate) values: Vec<u64>,
    pub(crate) written: bool,
}

/// A compute or copy list living in GPU memory (see [`Device::bind`],
/// [`Device::bind_copy`]).
pub struct BoundQueue<I: DeviceInterface = crate::KfdIface> {
    dev: Device<I>,
    rec: Recording,
    dwords: u32,
    /// Runs on the copy queue (SDMA packets) rather than the compute queue.
    copy: bool,
    karg_off: usize,
    images: Vec<Mutex<Image<I>>>,
    next: std::sync::atomic::AtomicUsize,
}

impl<I: DeviceInterface> std::fmt::Debug for BoundQueue<I> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BoundQueue")
            .field("dwords", &self.dwords)
            .field("copy", &self.copy)
            .field("copies", &self.images.len())
            .field("vars", &self.rec.vars)
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

    /// Copies kept for pipelined replays.
    pub fn copies(&self) -> usize {
        self.images.len()
    }

    /// Rewrites dword `at` of the list (every copy, each after its last run). A site
    /// there is rewritten again when its value changes.
    pub fn patch_u32(&self, dev: &Device<I>, at: usize, value: u32) -> Result<()> {
        self.patch(dev, at, &[value])
    }

    /// Rewrites dwords `at`, `at + 1` with `value` (lo, hi), as [`BoundQueue::patch_u32`].
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
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        for img in &self.images {
            let img = img.lock();
            dev.wait_point(img.last_run)?;
            img.buf.write(at * 4, &bytes)?;
        }
        Ok(())
    }

    /// Runs the list with `vals` bound, ordered on the timeline after everything
    /// submitted before on its device; returns the timeline value that marks its end.
    /// Only the sites whose values changed since the copy it runs last ran are
    /// rewritten. Unbound variables, values that do not fit and launch sizes the
    /// kernel refuses are errors, and nothing is sent.
    pub fn submit(&self, vals: &Bindings) -> Result<u64> {
        let dev = &self.dev;
        let i = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % self.images.len();
        let mut img = self.images[i].lock();
        dev.wait_point(img.last_run)?;
        self.update(&mut img, vals)?;
        let (va, dwords) = (img.buf.va(), self.dwords);
        let p = if self.copy {
            dev.submit_point(true, |w| match w {
                Work::Copy(q) => q.indirect(va, dwords).map(|_| ()),
                Work::Compute(_) => Err(HcqError::InvalidArgument("a copy list on the compute queue".into())),
            })?
        } else {
            let ib = IndirectBuffer::new(va, dwords)?;
            dev.submit_point(false, |w| match w {
                Work::Compute(q) => {
                    ib.encode(q.target, &mut q.cmds);
                    Ok(())
                }
                Work::Copy(_) => Err(HcqError::InvalidArgument("a compute list on the copy queue".into())),
            })?
        };
        img.last_run = p;
        Ok(p.value)
    }

    /// Writes the sites of `img` whose values differ from its last ones; checks every
    /// value before writing any.
    pub(crate) fn update(&self, img: &mut Image<I>, vals: &Bindings) -> Result<()> {
        update_image(&self.rec, self.karg_off, img, vals, &[])
    }
}

/// Writes the sites of `img` (a bound copy of `rec`, arguments at `karg_off`) whose
/// values changed, with `vals` and the runtime's `internal` values bound.
pub(crate) fn update_image<I: DeviceInterface>(
    rec: &Recording,
    karg_off: usize,
    img: &mut Image<I>,
    vals: &Bindings,
    internal: &[(&crate::sym::Var, u64)],
) -> Result<()> {
    let mut resolved = Vec::with_capacity(rec.vars.len() + 1);
    let base = img.buf.va() + karg_off as u64;
    let mut all: Vec<(&crate::sym::Var, u64)> = Vec::with_capacity(internal.len() + 1);
    all.extend_from_slice(internal);
    if let Some(v) = &rec.karg_base {
        all.push((v, base));
    }
    rec.resolve(vals, &all, &mut resolved)?;
    let mut fresh = Vec::with_capacity(rec.sites.len());
    for r in rec.site_values(&resolved) {
        fresh.push(r?.1);
    }
    for (k, (s, &bits)) in rec.sites.iter().zip(&fresh).enumerate() {
        if img.written && img.values[k] == bits {
            continue;
        }
        let (off, n) = match s.place {
            Place::Cmd(at) => (at * 4, s.enc.bytes.max(4) as usize),
            Place::Karg(at) => (karg_off + at, s.enc.bytes as usize),
        };
        img.buf.write(off, &bits.to_le_bytes()[..n])?;
    }
    img.values = fresh;
    img.written = true;
    Ok(())
}

/// The bytes of one copy of a list: commands, then (256-aligned) kernel arguments.
pub(crate) fn image_layout(dwords: usize, kernargs: usize) -> (usize, usize) {
    let karg_off = (dwords * 4).next_multiple_of(256);
    (karg_off, karg_off + kernargs.max(1))
}

impl<I: DeviceInterface> Device<I> {
    /// Copies `q`'s packets and kernel arguments into GPU memory ([`DEFAULT_COPIES`]
    /// copies); [`BoundQueue::submit`] then runs them with a four-dword
    /// INDIRECT_BUFFER.
    pub fn bind(&self, q: &ComputeQueue) -> Result<BoundQueue<I>> {
        self.bind_copies(q, DEFAULT_COPIES)
    }

    /// [`Device::bind`] with `copies` copies (at least 1) for pipelined replays.
    pub fn bind_copies(&self, q: &ComputeQueue, copies: usize) -> Result<BoundQueue<I>> {
        let words = q.dwords();
        if words.is_empty() || words.len() > IndirectBuffer::MAX_DWORDS as usize {
            return Err(HcqError::InvalidArgument(format!(
                "a bound list of {} dwords",
                words.len()
            )));
        }
        if q.target != self.props().target {
            return Err(HcqError::InvalidArgument(format!(
                "a list built for {:?} bound on {}",
                q.target,
                self.props().arch
            )));
        }
        self.bind_words(words, q.rec.clone(), false, copies)
    }

    /// Copies `q`'s SDMA packets into GPU memory (padded with NOPs to 8 dwords,
    /// [`DEFAULT_COPIES`] copies); [`BoundQueue::submit`] then runs them with one SDMA
    /// INDIRECT packet. A list that itself holds an INDIRECT packet is refused (the
    /// engine does not nest them).
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
        self.bind_words(&words, q.rec.clone(), true, DEFAULT_COPIES)
    }

    fn bind_words(&self, words: &[u32], rec: Recording, copy: bool, copies: usize) -> Result<BoundQueue<I>> {
        if copies == 0 {
            return Err(HcqError::InvalidArgument("a bound list needs at least one copy".into()));
        }
        let (karg_off, size) = image_layout(words.len(), rec.kernargs.len());
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let mut images = Vec::with_capacity(copies);
        for _ in 0..copies {
            let buf = self.alloc(size, BufferKind::Uncached)?;
            buf.write(0, &bytes)?;
            if !rec.kernargs.is_empty() {
                buf.write(karg_off, &rec.kernargs)?;
            }
            images.push(Mutex::new(Image {
                buf,
                last_run: Point::default(),
                values: Vec::new(),
                written: false,
            }));
        }
        Ok(BoundQueue {
            dev: self.clone(),
            rec,
            dwords: words.len() as u32,
            copy,
            karg_off,
            images,
            next: std::sync::atomic::AtomicUsize::new(0),
        })
    }

    /// Runs a bound list of this device without variables (see [`BoundQueue::submit`]).
    pub fn submit_bound(&self, b: &BoundQueue<I>) -> Result<u64> {
        if !std::sync::Arc::ptr_eq(&b.dev.inner, &self.inner) {
            return Err(HcqError::InvalidArgument(format!(
                "a list bound on GPU {} submitted to GPU {}",
                b.dev.index(),
                self.index()
            )));
        }
        b.submit(&Bindings::new())
    }
}
