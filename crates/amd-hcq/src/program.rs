//! Programs (kernels from code objects) and the scratch and kernel-argument region
//! their launches use.

use std::any::Any;
use std::sync::Arc;

use amd_packets::GfxTarget;

use crate::codeobj::{CodeObject, KernelDescriptor, KernelInfo};
use crate::device::Device;
use crate::error::KernelLimit;
use crate::iface::{BufferKind, DeviceInterface};
use crate::memory::Buffer;
use crate::resources::{KernargRing, Launcher, Scratch};
use crate::{HcqError, Result};

/// Bytes of the kernel-argument region of a device.
pub const KERNARG_REGION: usize = 16 << 20;
/// Scratch bytes per lane provided before any kernel asks for more (tinygrad 0.10.1's 128).
pub const DEFAULT_SCRATCH_PER_LANE: u32 = 128;

/// The error of a scratch size for `per_lane` bytes per lane whose product `what`
/// overflowed, with the device's figures that went into it.
fn scratch_overflow(p: &crate::DeviceProps, per_lane: u32, what: &'static str) -> HcqError {
    HcqError::ScratchOverflow {
        per_lane,
        what,
        cu_count: p.cu_count,
        simd_per_cu: p.simd_per_cu,
        waves_per_simd: p.max_waves_per_simd,
        slots_per_cu: p.scratch_slots_per_cu,
    }
}

/// Scratch bytes and COMPUTE_TMPRING_SIZE for `per_lane` bytes per lane, with
/// tinygrad 0.10.1's formulas; every product is checked (the properties come from
/// sysfs, the size from a code object).
fn scratch_layout(p: &crate::DeviceProps, per_lane: u32) -> Result<(usize, u32)> {
    let over = |what| scratch_overflow(p, per_lane, what);
    let gfx11 = p.target.gfx11_or_later();
    // The lanes a wave's scratch is laid out for: a gfx9 wave's 64; on gfx10 and later
    // tinygrad 0.10.1's factor, the waves per CU (32 on RDNA3 and RDNA4: a wave32's
    // lanes; `Program::load` asks twice a lane's bytes for a wave64 kernel there).
    let lanes = if p.target.is_gfx9() {
        64
    } else {
        (p.max_waves_per_simd as usize)
            .checked_mul(p.simd_per_cu as usize)
            .ok_or_else(|| over("waves per CU"))?
    };
    let granule = if gfx11 { 256 } else { 1024 };
    let wave_len = lanes
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

/// Most VGPRs and AccVGPRs together a wave can have on gfx9.4 (their unified file).
pub const MAX_VGPRS_GFX94: u32 = 512;

/// Most scratch memory a device allocates (64 GiB).
pub const MAX_SCRATCH: usize = 64 << 30;

/// The id of the next program loaded.
static NEXT_PROGRAM_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// A kernel loaded on a device.
pub struct Program<I: DeviceInterface = crate::AnyIface> {
    dev: Device<I>,
    info: KernelInfo,
    name: Arc<str>,
    image: Buffer<I>,
    code_addr: u64,
    /// Waves of 64 lanes (the descriptor has no ENABLE_WAVEFRONT_SIZE32).
    wave64: bool,
    rsrc1: u32,
    rsrc2: u32,
    /// COMPUTE_PGM_RSRC3 as dispatched: the descriptor's on gfx9.4 (ACCUM_OFFSET,
    /// TG_SPLIT), 0 elsewhere (as tinygrad 0.10.1 writes it).
    rsrc3: u32,
    /// Unique among the programs of this process (recorded launches are found by it).
    id: u64,
}

impl<I: DeviceInterface> std::fmt::Debug for Program<I> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Program")
            .field("name", &self.info.name)
            .field("code", &format_args!("{:#x}", self.code_addr))
            .finish()
    }
}

impl<I: DeviceInterface> Program<I> {
    /// Loads kernel `name` from the code object `elf` onto `dev`.
    ///
    /// Checks: the kernel exists, its VGPRs and LDS fit the device ("Too many
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
        let wave64 = !kd.has(KernelDescriptor::WAVEFRONT_SIZE32);
        // COMPUTE_PGM_RSRC1.VGPRS: granules of 8 registers (wave32) or 4 (wave64) on
        // gfx10+; on gfx9.4 granules of 8 of the unified VGPR and AccVGPR file.
        let (granule, max) = match (props.target.is_gfx9(), wave64) {
            (true, _) => (8, MAX_VGPRS_GFX94),
            (false, true) => (4, MAX_VGPRS),
            (false, false) => (8, MAX_VGPRS),
        };
        let vgprs = ((kd.rsrc1 & 0x3f) + 1) * granule;
        if vgprs > max {
            return Err(unsupported(KernelLimit::Vgprs {
                vgprs,
                max,
                device: dev.index(),
                arch: props.arch.clone(),
            }));
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
        // Scratch is laid out per wave32 on gfx10 and later: a wave64 needs twice a
        // lane's bytes there (gfx9's layout is a wave64's already).
        let per_lane = if wave64 && !props.target.is_gfx9() {
            kd.private_segment_size
                .checked_mul(2)
                .ok_or_else(|| scratch_overflow(props, kd.private_segment_size, "a wave64's bytes per wave32 lane"))?
        } else {
            kd.private_segment_size
        };
        dev.ensure_scratch(per_lane)?;
        // An AQL queue dispatches by kernel descriptor: the lane learns this kernel's,
        // and where its PM4 dispatches carry the argument pointer (after the private
        // segment buffer and the dispatch pointer, as `exec` places them).
        dev.inner.submission.engines.lock().aql_kernel(
            code_addr,
            crate::aql::AqlKernel {
                kernel_object: base + info.descriptor_offset,
                group_segment_size: kd.group_segment_size,
                private_segment_size: kd.private_segment_size,
                kernarg_sgpr: 4 * usize::from(kd.has(KernelDescriptor::PRIVATE_SEGMENT_BUFFER))
                    + 2 * usize::from(kd.has(KernelDescriptor::DISPATCH_PTR)),
            },
        );
        // gfx11: set the privileged bit (a CWSR workaround, as tinygrad 0.10.1 does).
        // PRIV, as tinygrad sets it on gfx11 alone (gfx12's RSRC1 has no such bit).
        let rsrc1 = kd.rsrc1 | if props.target == GfxTarget::Gfx11 { 1 << 20 } else { 0 };
        let rsrc2 = kd.rsrc2 | (lds_blocks << 15);
        // gfx9.4's RSRC3 places the AccVGPRs (ACCUM_OFFSET): the kernel's own.
        let rsrc3 = if props.target.is_gfx9() { kd.rsrc3 } else { 0 };
        Ok(Program {
            dev: dev.clone(),
            name: info.name.as_str().into(),
            info,
            image: image_buf,
            code_addr,
            wave64,
            rsrc1,
            rsrc2,
            rsrc3,
            id: NEXT_PROGRAM_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        })
    }

    /// Unique among the programs of this process.
    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// The kernel's metadata and descriptor.
    pub fn info(&self) -> &KernelInfo {
        &self.info
    }

    /// Address of the first instruction.
    pub fn code_addr(&self) -> u64 {
        self.code_addr
    }

    /// Whether the kernel runs in waves of 64 lanes (built with `-mwavefrontsize64`:
    /// its dispatches leave DISPATCH_INITIATOR.CS_W32_EN clear).
    pub fn wave64(&self) -> bool {
        self.wave64
    }

    /// COMPUTE_PGM_RSRC1 and RSRC2 as dispatched.
    pub fn rsrc(&self) -> (u32, u32) {
        (self.rsrc1, self.rsrc2)
    }

    /// COMPUTE_PGM_RSRC3 as dispatched (the descriptor's on gfx9.4, else 0).
    pub fn rsrc3(&self) -> u32 {
        self.rsrc3
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
}

impl<I: DeviceInterface> Device<I> {
    /// The device's launcher (scratch, kernel-argument ring, launch list), locked.
    #[inline]
    pub(crate) fn launcher(&self) -> parking_lot::MutexGuard<'_, Launcher<I>> {
        self.inner.resources.launcher.lock()
    }

    /// Makes sure scratch covers `per_lane` bytes per lane, growing it (and
    /// COMPUTE_TMPRING_SIZE) with tinygrad 0.10.1's formulas: per lane of a wave32 on
    /// gfx10 and later (a wave64 kernel needs twice its private segment there, as
    /// [`Program::load`] asks), of a wave64 on gfx9.
    pub fn ensure_scratch(&self, per_lane: u32) -> Result<()> {
        self.grow_scratch(&mut self.launcher(), per_lane)
    }

    /// [`Device::ensure_scratch`] with the launcher held.
    fn grow_scratch(&self, l: &mut Launcher<I>, per_lane: u32) -> Result<()> {
        let need = per_lane.max(DEFAULT_SCRATCH_PER_LANE);
        if l.scratch.as_ref().is_some_and(|s| s.per_lane >= need) {
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
        // An AQL queue's dispatches take scratch from its amd_queue_t: from now on,
        // this buffer.
        self.inner
            .submission
            .engines
            .lock()
            .aql_scratch(self.props().target, tmpring_size, buf.va(), need)?;
        // Recorded launches name the old buffer.
        l.memos.clear();
        // The old buffer is released once the launches before this point are done.
        l.scratch = Some(Scratch {
            buf,
            per_lane: need,
            tmpring_size,
        });
        Ok(())
    }

    /// The scratch dispatches use (made at the default size if there is none yet).
    #[inline]
    pub(crate) fn scratch_in<'a>(&self, l: &'a mut Launcher<I>) -> Result<&'a Scratch<I>> {
        if l.scratch.is_none() {
            self.grow_scratch(l, DEFAULT_SCRATCH_PER_LANE)?;
        }
        l.scratch.as_ref().ok_or(HcqError::Internal {
            what: "no scratch buffer after Device::ensure_scratch",
        })
    }

    /// COMPUTE_TMPRING_SIZE in use.
    pub fn tmpring_size(&self) -> Result<u32> {
        let mut l = self.launcher();
        Ok(self.scratch_in(&mut l)?.tmpring_size)
    }

    /// How many launches were replayed from a kept recording so far.
    #[doc(hidden)]
    pub fn replayed_launches_for_test(&self) -> u64 {
        self.launcher().replayed
    }

    /// Turns the replay of recorded launches off or on (off, every launch is recorded
    /// and checked anew: the reference a benchmark measures the replay against).
    #[doc(hidden)]
    pub fn set_launch_replay_for_test(&self, on: bool) {
        let mut l = self.launcher();
        l.replay = on;
        l.memos.clear();
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
        let ring = KernargRing::new(self.alloc(bytes, BufferKind::Uncached)?);
        self.launcher().kernargs = Some(ring);
        Ok(())
    }

    /// Makes the kernel-argument region (at open).
    pub(crate) fn make_kernarg_region(&self) -> Result<()> {
        let ring = KernargRing::new(self.alloc(KERNARG_REGION, BufferKind::Uncached)?);
        self.launcher().kernargs = Some(ring);
        Ok(())
    }
}

impl<I: DeviceInterface> Buffer<I> {
    /// The memory behind the buffer (for the transport).
    pub fn transport_memory(&self) -> &I::Memory {
        self.memory()
    }
}
