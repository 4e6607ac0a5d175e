//! Programs (kernels from code objects), their arguments, scratch, and launches.

use std::collections::VecDeque;
use std::time::Duration;

use amd_packets::GfxTarget;

use std::any::Any;
use std::sync::Arc;

use crate::args::KernArgs;
use crate::codeobj::{ArgKind, CodeObject, KernelDescriptor, KernelInfo};
use crate::device::Device;
use crate::device::Point;
use crate::error::KernelLimit;
use crate::iface::{BufferKind, DeviceInterface};
use crate::memory::Buffer;
use crate::queue::{ComputeQueue, SymDims};
use crate::sym::Bindings;
use crate::{HcqError, Result};

/// Bytes of the kernel-argument region of a device.
pub const KERNARG_REGION: usize = 16 << 20;
/// The GPU timestamp clock: 100 MHz on gfx10.3 and gfx11 (tinygrad 0.10.1 divides
/// timestamps by 100 for microseconds); the mock follows it.
pub const GPU_CLOCK_HZ: u64 = 100_000_000;
/// Scratch bytes per lane provided before any kernel asks for more (tinygrad 0.10.1's 128).
pub const DEFAULT_SCRATCH_PER_LANE: u32 = 128;

/// A device's scratch buffer and its COMPUTE_TMPRING_SIZE.
pub(crate) struct Scratch<I: DeviceInterface> {
    pub(crate) buf: Buffer<I>,
    pub(crate) per_lane: u32,
    pub(crate) tmpring_size: u32,
}

/// The scratch a dispatch uses.
pub(crate) struct ScratchState {
    pub(crate) addr: u64,
    pub(crate) tmpring_size: u32,
    pub(crate) keep: Arc<dyn Any + Send + Sync>,
}

/// Scratch bytes and COMPUTE_TMPRING_SIZE for `per_lane` bytes per lane, with
/// tinygrad 0.10.1's formulas; every product is checked (the properties come from
/// sysfs, the size from a code object).
fn scratch_layout(p: &crate::DeviceProps, per_lane: u32) -> Result<(usize, u32)> {
    let over = |what: &'static str| HcqError::ScratchOverflow {
        per_lane,
        what,
        cu_count: p.cu_count,
        simd_per_cu: p.simd_per_cu,
        waves_per_simd: p.max_waves_per_simd,
        slots_per_cu: p.scratch_slots_per_cu,
    };
    let gfx11 = p.target == GfxTarget::Gfx11;
    let waves_per_cu = (p.max_waves_per_simd as usize)
        .checked_mul(p.simd_per_cu as usize)
        .ok_or_else(|| over("waves per CU"))?;
    let granule = if gfx11 { 256 } else { 1024 };
    let wave_len = waves_per_cu
        .checked_mul(per_lane as usize)
        .and_then(|v| v.checked_next_multiple_of(granule))
        .ok_or_else(|| over("bytes per wave slot"))?;
    let bytes = (p.cu_count as usize)
        .checked_mul(p.scratch_slots_per_cu as usize)
        .and_then(|v| v.checked_mul(wave_len))
        .filter(|&b| b > 0 && b <= MAX_SCRATCH)
        .ok_or_else(|| over("more than MAX_SCRATCH (64 GiB) in all, or none"))?;
    let engines = (p.array_count / p.simd_arrays_per_engine.max(1)).max(1) as usize;
    let waves = wave_len / granule;
    let wavesize = bytes
        / if gfx11 {
            wave_len.saturating_mul(engines)
        } else {
            wave_len
        };
    let waves = u32::try_from(waves).map_err(|_| over("waves"))?;
    Ok((bytes, (waves << 12) | (wavesize as u32 & 0xfff)))
}

/// Most VGPRs a wave32 wave can have on gfx10.3 and gfx11.
pub const MAX_VGPRS: u32 = 256;

/// Most scratch memory a device allocates (64 GiB).
pub const MAX_SCRATCH: usize = 64 << 30;

/// The kernarg region: a ring of argument blocks; a block is reused only once the
/// launch that read it has completed.
pub(crate) struct KernargRing<I: DeviceInterface> {
    pub(crate) buf: Buffer<I>,
    pub(crate) head: usize,
    /// Blocks in flight: (offset, length, the timeline point that frees them).
    pub(crate) live: VecDeque<(usize, usize, Point)>,
}

/// A kernel loaded on a device.
pub struct Program<I: DeviceInterface = crate::AnyIface> {
    dev: Device<I>,
    info: KernelInfo,
    name: Arc<str>,
    image: Buffer<I>,
    code_addr: u64,
    rsrc1: u32,
    rsrc2: u32,
}

impl<I: DeviceInterface> std::fmt::Debug for Program<I> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Program")
            .field("name", &self.info.name)
            .field("code", &format_args!("{:#x}", self.code_addr))
            .finish()
    }
}

/// What a launch needs besides the program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchDims {
    /// Grid in workgroups.
    pub global: [u32; 3],
    /// Workgroup size in work-items.
    pub local: [u32; 3],
}

impl LaunchDims {
    /// A one-dimensional launch covering `n` work-items in workgroups of `local`
    /// (the last one partial where `n` is not a multiple: the kernel checks its bound).
    pub fn linear(n: u32, local: u32) -> LaunchDims {
        LaunchDims {
            global: [n.div_ceil(local.max(1)).max(1), 1, 1],
            local: [local.max(1), 1, 1],
        }
    }
}

impl<I: DeviceInterface> Program<I> {
    /// Loads kernel `name` from the code object `elf` onto `dev`.
    ///
    /// Checks: the kernel exists, is wave32, its LDS fits the device ("Too many
    /// resources requested: group_segment_size"), and its code is 256-byte aligned.
    pub fn load(dev: &Device<I>, elf: &[u8], name: &str) -> Result<Self> {
        // A faulted device answers at once, before any parsing.
        dev.inner.check()?;
        let co = CodeObject::parse(elf)?;
        let props = dev.props();
        if let Some(t) = co.target.as_deref() {
            // `amdgcn-amd-amdhsa--gfx1100`, perhaps with features (`:xnack-`).
            let processor = t.rsplit("--").next().unwrap_or(t).split(':').next().unwrap_or(t);
            if processor != props.arch {
                return Err(HcqError::CodeObjectTarget {
                    processor: processor.to_string(),
                    target: t.to_string(),
                    device: dev.index(),
                    arch: props.arch.clone(),
                });
            }
        }
        let info = co.kernel(name)?;
        let unsupported = |limit| HcqError::KernelUnsupported {
            kernel: name.to_string(),
            limit,
        };
        let kd = info.descriptor;
        // COMPUTE_PGM_RSRC1.VGPRS: granules of 8 registers (wave32, gfx10+).
        let vgprs = ((kd.rsrc1 & 0x3f) + 1) * 8;
        if vgprs > MAX_VGPRS {
            return Err(unsupported(KernelLimit::Vgprs {
                vgprs,
                max: MAX_VGPRS,
                device: dev.index(),
                arch: props.arch.clone(),
            }));
        }
        if !kd.has(KernelDescriptor::WAVEFRONT_SIZE32) {
            return Err(unsupported(KernelLimit::Wave64));
        }
        let lds_blocks = kd.group_segment_size.div_ceil(512) & 0x1ff;
        if lds_blocks > props.lds_size / 512 || kd.group_segment_size > props.lds_size {
            return Err(unsupported(KernelLimit::Lds {
                bytes: kd.group_segment_size,
                available: props.lds_size,
                device: dev.index(),
            }));
        }
        for sgpr in [
            KernelDescriptor::QUEUE_PTR,
            KernelDescriptor::FLAT_SCRATCH_INIT,
            KernelDescriptor::PRIVATE_SEGMENT_SIZE,
        ] {
            if kd.has(sgpr) {
                return Err(unsupported(KernelLimit::UserSgprs {
                    properties: kd.properties,
                }));
            }
        }
        let mut image = co.image.clone();
        let image_buf = dev.alloc(image.len(), BufferKind::DeviceCpuVisible)?;
        let base = image_buf.va();
        for &(off, addend) in &co.relocs {
            let v = (base as i64).wrapping_add(addend) as u64;
            image[off as usize..off as usize + 8].copy_from_slice(&v.to_le_bytes());
        }
        image_buf.write(0, &image)?;
        let code_addr = (base + info.descriptor_offset).wrapping_add_signed(kd.entry_offset);
        if code_addr % 256 != 0 {
            return Err(unsupported(KernelLimit::EntryAlign { entry: code_addr }));
        }
        dev.ensure_scratch(kd.private_segment_size)?;
        // gfx11: set the privileged bit (a CWSR workaround, as tinygrad 0.10.1 does).
        let rsrc1 = kd.rsrc1 | if props.target == GfxTarget::Gfx11 { 1 << 20 } else { 0 };
        let rsrc2 = kd.rsrc2 | (lds_blocks << 15);
        Ok(Program {
            dev: dev.clone(),
            name: info.name.as_str().into(),
            info,
            image: image_buf,
            code_addr,
            rsrc1,
            rsrc2,
        })
    }

    /// The kernel's metadata and descriptor.
    pub fn info(&self) -> &KernelInfo {
        &self.info
    }

    /// Address of the first instruction.
    pub fn code_addr(&self) -> u64 {
        self.code_addr
    }

    /// COMPUTE_PGM_RSRC1 and RSRC2 as dispatched.
    pub fn rsrc(&self) -> (u32, u32) {
        (self.rsrc1, self.rsrc2)
    }

    /// The device it is loaded on.
    pub fn device(&self) -> &Device<I> {
        &self.dev
    }

    /// The kernel's name, shared.
    pub(crate) fn name_arc(&self) -> &Arc<str> {
        &self.name
    }

    /// What a recorded list holds to keep the program's code alive.
    pub(crate) fn keepalive(&self) -> Arc<dyn Any + Send + Sync> {
        self.image.keepalive()
    }

    /// The kernel arguments for `bufs` and `vals` in the word form of
    /// [`Program::launch`]: one word per 1-, 2- or 4-byte value argument (which must
    /// fit it), two (low first) per 8-byte one.
    fn word_args(&self, bufs: &[&Buffer<I>], vals: &[u32]) -> Result<KernArgs> {
        let n_bufs = self.info.args.iter().filter(|a| a.kind == ArgKind::Buffer).count();
        let n_vals: usize = self
            .info
            .args
            .iter()
            .filter(|a| a.kind == ArgKind::Value)
            .map(|a| if a.size == 8 { 2 } else { 1 })
            .sum();
        if n_bufs != bufs.len() || n_vals != vals.len() {
            return Err(HcqError::ArgumentWords {
                kernel: self.info.name.clone(),
                buffers: n_bufs,
                words: n_vals,
                given_buffers: bufs.len(),
                given_words: vals.len(),
            });
        }
        let (mut bi, mut vi) = (bufs.iter(), vals.iter());
        let mut args = KernArgs::with_capacity(n_bufs + n_vals);
        for a in &self.info.args {
            match a.kind {
                // Counted above: the buffers and words are there.
                // No keepalive: these arguments are submitted once, right away.
                ArgKind::Buffer => {
                    if let Some(b) = bi.next() {
                        args.resident.push((args.items.len(), b.residency().clone()));
                        args = args.buffer_sym(b.va());
                    }
                }
                ArgKind::Value => {
                    let lo = vi.next().copied().unwrap_or(0) as u64;
                    let hi = if a.size == 8 {
                        vi.next().copied().unwrap_or(0) as u64
                    } else {
                        0
                    };
                    args = args.bits(lo | hi << 32);
                }
                ArgKind::Hidden(_) => {}
            }
        }
        Ok(args)
    }

    /// The kernarg bytes for `bufs` and `vals` (the word form of [`Program::launch`]),
    /// laid out as the metadata says, hidden arguments filled in for `dims`; checks
    /// counts, kinds and sizes. Pointers to the runtime's own data (the dispatch
    /// packet) are relative to address 0.
    pub fn kernargs(&self, bufs: &[&Buffer<I>], vals: &[u32], dims: LaunchDims) -> Result<Vec<u8>> {
        let args = self.word_args(bufs, vals)?;
        let mut q = ComputeQueue::new(self.dev.props().target);
        q.exec(self, &args, dims)?;
        let mut resolved = Vec::new();
        let base = q.rec.karg_base.clone();
        let internal: Vec<(&crate::sym::Var, u64)> = base.iter().map(|v| (v, 0)).collect();
        q.rec.resolve(&Bindings::new(), &internal, &mut resolved)?;
        let mut kargs = q.rec.kernargs.clone();
        q.rec.apply(&resolved, &mut q.cmds, &mut kargs)?;
        kargs.truncate(self.info.descriptor.kernarg_size as usize);
        Ok(kargs)
    }

    /// Launches the kernel with typed `args` on `dims`, ordered on the timeline after
    /// everything before it; returns the timeline value that marks its end.
    pub fn enqueue(&self, args: &KernArgs, dims: impl Into<SymDims>) -> Result<u64> {
        self.submit_launch(args, dims.into(), &Bindings::new(), false)
            .map(|(p, _)| p.logical())
    }

    /// [`Program::enqueue`], then waits for it and returns its GPU time (from
    /// timestamps taken around the dispatch).
    pub fn enqueue_timed(&self, args: &KernArgs, dims: impl Into<SymDims>) -> Result<Duration> {
        let (p, times) = self.submit_launch(args, dims.into(), &Bindings::new(), true)?;
        self.dev.wait_point(p)?;
        Ok(times.map(|t| Device::<I>::elapsed(&t)).unwrap_or_default())
    }

    /// Launches the kernel with `bufs` and `vals` (the word form: one word per value
    /// argument of up to 4 bytes, two, low first, per 8-byte one) on `dims`, ordered on
    /// the timeline after everything before it; returns the timeline value that marks
    /// its end (wait with [`Device::wait_timeline`]).
    pub fn launch(&self, bufs: &[&Buffer<I>], vals: &[u32], dims: LaunchDims) -> Result<u64> {
        let args = self.word_args(bufs, vals)?;
        let (p, _) = self.submit_launch(&args, dims.into(), &Bindings::new(), false)?;
        Ok(p.logical())
    }

    /// [`Program::launch`], then waits for it and returns its GPU time (from
    /// timestamps taken around the dispatch).
    pub fn launch_timed(&self, bufs: &[&Buffer<I>], vals: &[u32], dims: LaunchDims) -> Result<Duration> {
        let args = self.word_args(bufs, vals)?;
        let (p, times) = self.submit_launch(&args, dims.into(), &Bindings::new(), true)?;
        self.dev.wait_point(p)?;
        Ok(times.map(|t| Device::<I>::elapsed(&t)).unwrap_or_default())
    }

    fn submit_launch(
        &self,
        args: &KernArgs,
        dims: SymDims,
        vals: &Bindings,
        times: bool,
    ) -> Result<(Point, Option<crate::profile::Times<I>>)> {
        // One list per device, reused: a launch allocates nothing for it.
        let cached = self.dev.inner.launch_list.lock().take();
        let mut q = cached.unwrap_or_else(|| ComputeQueue::new(self.dev.props().target));
        q.clear();
        q.rec.transient = true;
        let r = q.exec(self, args, dims).and_then(|q| {
            let name = crate::device::OpName::Shared(self.name.clone());
            self.dev.run_compute(q, vals, name, true, times)
        });
        q.clear();
        *self.dev.inner.launch_list.lock() = Some(q);
        r
    }
}

impl<I: DeviceInterface> KernargRing<I> {
    /// A ring over `buf` with nothing in flight.
    fn new(buf: Buffer<I>) -> Self {
        KernargRing {
            buf,
            head: 0,
            live: VecDeque::new(),
        }
    }

    /// Reserves `len` bytes aligned to `align`, waiting for launches still reading the
    /// space it reuses.
    pub(crate) fn reserve(&mut self, dev: &Device<I>, len: usize, align: usize) -> Result<usize> {
        let size = self.buf.size();
        if len > size {
            return Err(HcqError::KernargsTooLarge { len, region: size });
        }
        let mut off = self.head.next_multiple_of(align);
        if off + len > size {
            off = 0;
        }
        let end = off + len;
        // Blocks are handed out in address order until the ring wraps, so the oldest
        // live blocks are the ones the new block can reach: wait for those it overlaps.
        while let Some(&(o, l, p)) = self.live.front() {
            if o < end && off < o + l {
                dev.wait_point(p)?;
            } else if !dev.inner.is_done(p) {
                break;
            }
            self.live.pop_front();
        }
        self.head = end;
        Ok(off)
    }
}

impl<I: DeviceInterface> Device<I> {
    /// Makes sure scratch covers `per_lane` bytes per lane, growing it (and
    /// COMPUTE_TMPRING_SIZE) with tinygrad 0.10.1's formulas.
    pub fn ensure_scratch(&self, per_lane: u32) -> Result<()> {
        let mut s = self.inner.scratch.lock();
        let need = per_lane.max(DEFAULT_SCRATCH_PER_LANE);
        if s.as_ref().is_some_and(|s| s.per_lane >= need) {
            return Ok(());
        }
        let (bytes, tmpring_size) = scratch_layout(self.props(), need)?;
        let buf = self.alloc(bytes, BufferKind::Device).map_err(|e| match e {
            HcqError::Transport(source) => HcqError::ScratchAlloc {
                bytes,
                per_lane: need,
                source,
            },
            e => e,
        })?;
        // The old buffer is released once the launches before this point are done.
        *s = Some(Scratch {
            buf,
            per_lane: need,
            tmpring_size,
        });
        Ok(())
    }

    /// Scratch address and COMPUTE_TMPRING_SIZE.
    pub(crate) fn scratch_state(&self) -> Result<(u64, u32)> {
        let s = self.scratch_state_keep()?;
        Ok((s.addr, s.tmpring_size))
    }

    /// The scratch a dispatch records, with what keeps it alive.
    pub(crate) fn scratch_state_keep(&self) -> Result<ScratchState> {
        if let Some(s) = self.inner.scratch.lock().as_ref() {
            return Ok(ScratchState {
                addr: s.buf.va(),
                tmpring_size: s.tmpring_size,
                keep: s.buf.keepalive(),
            });
        }
        self.ensure_scratch(DEFAULT_SCRATCH_PER_LANE)?;
        let s = self.inner.scratch.lock();
        s.as_ref()
            .map(|s| ScratchState {
                addr: s.buf.va(),
                tmpring_size: s.tmpring_size,
                keep: s.buf.keepalive(),
            })
            .ok_or(HcqError::Internal {
                what: "no scratch buffer after Device::ensure_scratch",
            })
    }

    /// COMPUTE_TMPRING_SIZE in use.
    pub fn tmpring_size(&self) -> Result<u32> {
        Ok(self.scratch_state()?.1)
    }

    /// Replaces the kernel-argument region with one of `bytes` (at least 64), after
    /// every launch so far is done (tests of its reuse as it wraps).
    #[doc(hidden)]
    pub fn set_kernarg_region_for_test(&self, bytes: usize) -> Result<()> {
        if bytes < 64 {
            // One-off: a hidden test hook.
            return Err(HcqError::InvalidArgument(format!(
                "a kernel-argument region of {bytes} bytes (at least 64)"
            )));
        }
        self.synchronize()?;
        *self.inner.kernargs.lock() = Some(KernargRing::new(self.alloc(bytes, BufferKind::Uncached)?));
        Ok(())
    }

    pub(crate) fn kernarg_ring(&self) -> Result<parking_lot::MappedMutexGuard<'_, KernargRing<I>>> {
        let mut k = self.inner.kernargs.lock();
        if k.is_none() {
            *k = Some(KernargRing::new(self.alloc(KERNARG_REGION, BufferKind::Uncached)?));
        }
        Ok(parking_lot::MutexGuard::map(k, |k| match k {
            Some(k) => k,
            None => unreachable!("filled above"),
        }))
    }
}

impl<I: DeviceInterface> Buffer<I> {
    /// The memory behind the buffer (for the transport).
    pub fn transport_memory(&self) -> &I::Memory {
        self.memory()
    }
}
