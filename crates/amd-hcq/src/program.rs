//! Programs (kernels from code objects), their arguments, scratch, and launches.

use std::collections::VecDeque;
use std::time::Duration;

use amd_packets::GfxTarget;
use amd_packets::pm4::DispatchInitiator;
use amd_packets::pm4::recipes::Dispatch;

use crate::codeobj::{ArgKind, CodeObject, KernelDescriptor, KernelInfo};
use crate::device::{Device, Work};
use crate::iface::{BufferKind, DeviceInterface};
use crate::memory::Buffer;
use crate::{HcqError, Result};

/// Bytes of the kernel-argument region of a device.
pub const KERNARG_REGION: usize = 16 << 20;
/// Bytes of an AQL dispatch packet (`hsa_kernel_dispatch_packet_t`).
const DISPATCH_PACKET: usize = 64;
/// The GPU timestamp clock: 100 MHz on gfx10.3 and gfx11 (the seed divides
/// timestamps by 100 for microseconds); the mock follows it.
pub const GPU_CLOCK_HZ: u64 = 100_000_000;
/// Scratch bytes per lane provided before any kernel asks for more (the seed's 128).
pub const DEFAULT_SCRATCH_PER_LANE: u32 = 128;

/// A device's scratch buffer and its COMPUTE_TMPRING_SIZE.
pub(crate) struct Scratch<I: DeviceInterface> {
    pub(crate) buf: Buffer<I>,
    pub(crate) per_lane: u32,
    pub(crate) tmpring_size: u32,
}

/// The kernarg region: a ring of argument blocks; a block is reused only once the
/// launch that read it has completed.
pub(crate) struct KernargRing<I: DeviceInterface> {
    pub(crate) buf: Buffer<I>,
    pub(crate) head: usize,
    /// Blocks in flight: (offset, length, timeline value that frees them).
    pub(crate) live: VecDeque<(usize, usize, u64)>,
}

/// A kernel loaded on a device.
pub struct Program<I: DeviceInterface = crate::KfdIface> {
    dev: Device<I>,
    info: KernelInfo,
    _image: Buffer<I>,
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

impl<I: DeviceInterface> Program<I> {
    /// Loads kernel `name` from the code object `elf` onto `dev`.
    ///
    /// Checks: the kernel exists, is wave32, its LDS fits the device ("Too many
    /// resources requested: group_segment_size"), and its code is 256-byte aligned.
    pub fn load(dev: &Device<I>, elf: &[u8], name: &str) -> Result<Self> {
        let co = CodeObject::parse(elf)?;
        let info = co.kernel(name)?;
        let kd = info.descriptor;
        if !kd.has(KernelDescriptor::WAVEFRONT_SIZE32) {
            return Err(HcqError::InvalidArgument(format!(
                "kernel {name} is wave64; this runtime launches wave32 kernels"
            )));
        }
        let props = dev.props();
        let lds_blocks = kd.group_segment_size.div_ceil(512) & 0x1ff;
        if lds_blocks > props.lds_size / 512 || kd.group_segment_size > props.lds_size {
            return Err(HcqError::InvalidArgument(
                "Too many resources requested: group_segment_size".into(),
            ));
        }
        for unsupported in [
            KernelDescriptor::QUEUE_PTR,
            KernelDescriptor::FLAT_SCRATCH_INIT,
            KernelDescriptor::PRIVATE_SEGMENT_SIZE,
        ] {
            if kd.has(unsupported) {
                return Err(HcqError::InvalidArgument(format!(
                    "kernel {name} asks for user SGPRs ({:#x}) this runtime does not set up",
                    kd.properties
                )));
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
            return Err(HcqError::InvalidArgument(format!(
                "kernel {name}: entry {code_addr:#x} is not 256-byte aligned"
            )));
        }
        dev.ensure_scratch(kd.private_segment_size)?;
        // gfx11: set the privileged bit (a CWSR workaround, as the seed does).
        let rsrc1 = kd.rsrc1 | if props.target == GfxTarget::Gfx11 { 1 << 20 } else { 0 };
        let rsrc2 = kd.rsrc2 | (lds_blocks << 15);
        Ok(Program {
            dev: dev.clone(),
            info,
            _image: image_buf,
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

    /// The kernarg bytes for `bufs` and `vals`, laid out as the metadata says (hidden
    /// arguments filled in for `dims`); checks counts and kinds. `vals` holds one word
    /// per 1-, 2- or 4-byte value argument (which must fit it) and two, low first, per
    /// 8-byte one (`u64`, `i64`, `f64` bits).
    pub fn kernargs(&self, bufs: &[&Buffer<I>], vals: &[u32], dims: LaunchDims) -> Result<Vec<u8>> {
        let kd = &self.info.descriptor;
        let mut out = vec![0u8; kd.kernarg_size as usize];
        let n_bufs = self.info.args.iter().filter(|a| a.kind == ArgKind::Buffer).count();
        // A value argument of 8 bytes takes two words (low, then high); smaller ones one.
        let n_vals: usize = self
            .info
            .args
            .iter()
            .filter(|a| a.kind == ArgKind::Value)
            .map(|a| if a.size == 8 { 2 } else { 1 })
            .sum();
        if n_bufs != bufs.len() || n_vals != vals.len() {
            return Err(HcqError::InvalidArgument(format!(
                "kernel {} takes {n_bufs} buffers and {n_vals} value words, got {} and {}",
                self.info.name,
                bufs.len(),
                vals.len()
            )));
        }
        let (mut bi, mut vi) = (bufs.iter(), vals.iter());
        for a in &self.info.args {
            let at = a.offset as usize;
            let mut put = |bytes: &[u8]| {
                let n = bytes.len().min(a.size as usize);
                out[at..at + n].copy_from_slice(&bytes[..n]);
            };
            match &a.kind {
                ArgKind::Buffer => {
                    if a.size != 8 {
                        return Err(HcqError::InvalidArgument(format!(
                            "buffer argument of {} bytes",
                            a.size
                        )));
                    }
                    // Counted above: there is one buffer per buffer argument.
                    put(&bi.next().map_or(0, |b| b.va()).to_le_bytes());
                }
                ArgKind::Value => {
                    // Counted above: the words are there.
                    let lo = vi.next().copied().unwrap_or(0);
                    match a.size {
                        8 => {
                            let hi = vi.next().copied().unwrap_or(0);
                            put(&(lo as u64 | (hi as u64) << 32).to_le_bytes());
                        }
                        1 | 2 | 4 if a.size == 4 || lo >> (8 * a.size) == 0 => put(&lo.to_le_bytes()),
                        1 | 2 => {
                            return Err(HcqError::InvalidArgument(format!(
                                "value {lo:#x} does not fit argument {:?} of {} ({} bytes)",
                                a.name, self.info.name, a.size
                            )));
                        }
                        n => {
                            return Err(HcqError::InvalidArgument(format!(
                                "argument {:?} of {} is {n} bytes; values of 1, 2, 4 or 8 bytes are supported",
                                a.name, self.info.name
                            )));
                        }
                    }
                }
                ArgKind::Hidden(h) => {
                    let axis = |s: &str| match s.chars().last() {
                        Some('x') => 0,
                        Some('y') => 1,
                        _ => 2,
                    };
                    match h.as_str() {
                        s if s.starts_with("block_count_") => put(&dims.global[axis(s)].to_le_bytes()),
                        s if s.starts_with("group_size_") => put(&(dims.local[axis(s)] as u16).to_le_bytes()),
                        s if s.starts_with("remainder_") => put(&0u16.to_le_bytes()),
                        "grid_dims" => {
                            let d = if dims.global[2] * dims.local[2] > 1 {
                                3
                            } else if dims.global[1] * dims.local[1] > 1 {
                                2
                            } else {
                                1
                            };
                            put(&(d as u16).to_le_bytes())
                        }
                        // Offsets, pointers the runtime does not provide: zero.
                        _ => {}
                    }
                }
            }
        }
        Ok(out)
    }

    /// Launches the kernel with `bufs` and `vals` on `dims`, ordered on the timeline
    /// after everything before it. With `wait`, waits for it and returns its GPU time.
    pub fn launch(&self, bufs: &[&Buffer<I>], vals: &[u32], dims: LaunchDims, wait: bool) -> Result<Option<Duration>> {
        let threads: u64 = dims.local.iter().map(|&l| l as u64).product();
        if dims.global.contains(&0) || dims.local.contains(&0) || threads > self.info.max_workgroup_size as u64 {
            return Err(HcqError::InvalidArgument(format!(
                "launch of {} with grid {:?} and workgroup {:?} (at most {} work-items)",
                self.info.name, dims.global, dims.local, self.info.max_workgroup_size
            )));
        }
        let kd = self.info.descriptor;
        let args = self.kernargs(bufs, vals, dims)?;
        let dispatch_ptr = kd.has(KernelDescriptor::DISPATCH_PTR);
        let block = args.len().next_multiple_of(64) + if dispatch_ptr { DISPATCH_PACKET } else { 0 };
        let dev = &self.dev;
        let scratch = dev.scratch_state()?;
        let mut ring = dev.kernarg_ring()?;
        let align = (self.info.kernarg_align as usize).max(64);
        let off = ring.reserve(dev, block.max(64), align)?;
        let kernarg_va = ring.buf.va() + off as u64;
        ring.buf.write(off, &args)?;
        let mut user = Vec::with_capacity(8);
        if kd.has(KernelDescriptor::PRIVATE_SEGMENT_BUFFER) {
            let [lo, hi] = amd_packets::lo_hi(scratch.0);
            // The private segment buffer descriptor: swizzle on, the seed's dword 3.
            user.extend([lo, hi | 1 << 31, u32::MAX, 0x20c1_4000]);
        }
        if dispatch_ptr {
            let dp_off = off + args.len().next_multiple_of(64);
            let mut p = [0u8; DISPATCH_PACKET];
            for (i, l) in dims.local.iter().enumerate() {
                p[4 + 2 * i..6 + 2 * i].copy_from_slice(&(*l as u16).to_le_bytes());
                let grid = dims.global[i].saturating_mul(*l);
                p[12 + 4 * i..16 + 4 * i].copy_from_slice(&grid.to_le_bytes());
            }
            p[24..28].copy_from_slice(&kd.private_segment_size.to_le_bytes());
            p[28..32].copy_from_slice(&kd.group_segment_size.to_le_bytes());
            p[40..48].copy_from_slice(&kernarg_va.to_le_bytes());
            ring.buf.write(dp_off, &p)?;
            user.extend(amd_packets::lo_hi(ring.buf.va() + dp_off as u64));
        }
        user.extend(amd_packets::lo_hi(kernarg_va));
        if kd.has(KernelDescriptor::DISPATCH_ID) {
            // A 64-bit id unique to the dispatch (the kernarg block's address serves).
            user.extend(amd_packets::lo_hi(kernarg_va ^ 0x8000_0000_0000_0000));
        }
        let d = Dispatch {
            code_addr: self.code_addr,
            rsrc1: self.rsrc1,
            rsrc2: self.rsrc2,
            rsrc3: 0,
            tmpring_size: scratch.1,
            scratch_base: scratch.0,
            user_data: &user,
            block: dims.local,
            grid: dims.global,
            initiator: DispatchInitiator::DEFAULT,
        };
        let (v, times) = dev.submit_timed(false, &self.info.name, wait, true, |w| match w {
            Work::Compute(q) => {
                d.encode(q.target, &mut q.cmds)?;
                Ok(())
            }
            Work::Copy(_) => Err(HcqError::InvalidArgument("launch on the copy queue".into())),
        })?;
        ring.live.push_back((off, block.max(64), v));
        drop(ring);
        match times {
            Some(t) if wait => {
                dev.wait_timeline(v)?;
                Ok(Some(Device::<I>::elapsed(&t)))
            }
            _ => Ok(None),
        }
    }
}

impl<I: DeviceInterface> KernargRing<I> {
    /// Reserves `len` bytes aligned to `align`, waiting for launches still reading the
    /// space it reuses.
    fn reserve(&mut self, dev: &Device<I>, len: usize, align: usize) -> Result<usize> {
        let size = self.buf.size();
        if len > size {
            return Err(HcqError::InvalidArgument(format!("{len} bytes of kernel arguments")));
        }
        let mut off = self.head.next_multiple_of(align);
        if off + len > size {
            off = 0;
        }
        let end = off + len;
        // Blocks are handed out in address order until the ring wraps, so the oldest
        // live blocks are the ones the new block can reach: wait for those it overlaps.
        let done = dev.timeline().0;
        while let Some(&(o, l, v)) = self.live.front() {
            if o < end && off < o + l {
                dev.wait_timeline(v)?;
            } else if v > done {
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
    /// COMPUTE_TMPRING_SIZE) with the seed's formulas.
    pub fn ensure_scratch(&self, per_lane: u32) -> Result<()> {
        let mut s = self.inner.scratch.lock();
        let need = per_lane.max(DEFAULT_SCRATCH_PER_LANE);
        if s.as_ref().is_some_and(|s| s.per_lane >= need) {
            return Ok(());
        }
        let p = self.props();
        let gfx11 = p.target == GfxTarget::Gfx11;
        let waves_per_cu = (p.max_waves_per_simd * p.simd_per_cu) as usize;
        let granule = if gfx11 { 256 } else { 1024 };
        let wave_len = (waves_per_cu * need as usize).next_multiple_of(granule);
        let bytes = p.cu_count as usize * p.scratch_slots_per_cu as usize * wave_len;
        let buf = self.alloc(bytes, BufferKind::Device)?;
        let engines = (p.array_count / p.simd_arrays_per_engine.max(1)).max(1) as usize;
        let waves = wave_len / granule;
        let wavesize = buf.size() / if gfx11 { wave_len * engines } else { wave_len };
        let tmpring_size = ((waves as u32) << 12) | (wavesize as u32 & 0xfff);
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
        self.ensure_scratch(DEFAULT_SCRATCH_PER_LANE)?;
        let s = self.inner.scratch.lock();
        s.as_ref()
            .map(|s| (s.buf.va(), s.tmpring_size))
            .ok_or_else(|| HcqError::InvalidArgument("no scratch".into()))
    }

    /// COMPUTE_TMPRING_SIZE in use.
    pub fn tmpring_size(&self) -> Result<u32> {
        Ok(self.scratch_state()?.1)
    }

    pub(crate) fn kernarg_ring(&self) -> Result<parking_lot::MappedMutexGuard<'_, KernargRing<I>>> {
        let mut k = self.inner.kernargs.lock();
        if k.is_none() {
            let buf = self.alloc(KERNARG_REGION, BufferKind::Uncached)?;
            *k = Some(KernargRing {
                buf,
                head: 0,
                live: VecDeque::new(),
            });
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
