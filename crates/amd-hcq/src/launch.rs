//! Launches: a dispatch recorded into a compute list ([`ComputeQueue::exec`]: kernel
//! arguments checked against the code object's metadata, scratch, registers), and a
//! program's launches ordered on the timeline ([`Program::launch`], [`Program::enqueue`]).

use std::time::Duration;

use amd_packets::pm4::DispatchInitiator;
use amd_packets::pm4::recipes::Dispatch;

use crate::args::{Arg, KernArgs, Placed, place};
use crate::codeobj::{ArgInfo, ArgKind, KernelDescriptor};
use crate::device::Device;
use crate::fence::DeviceId;
use crate::iface::DeviceInterface;
use crate::memory::{Buffer, check_resident};
use crate::profile::Times;
use crate::program::Program;
use crate::queue::ComputeQueue;
use crate::record::{Enc, LaunchCheck, Place, Recording, What, check_launch};
use crate::resources::{LaunchMemo, Scratch, Slot};
use crate::sym::Expr;
use crate::sym::{Bindings, Op, Sym, Var};
use crate::timeline::{OpName, Point};
use crate::{HcqError, Result};

/// Bytes of an AQL dispatch packet (`hsa_kernel_dispatch_packet_t`), which the runtime
/// places after the arguments of kernels that ask for a dispatch pointer.
pub(crate) const DISPATCH_PACKET: usize = 64;

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

/// Grid and workgroup sizes whose values may be symbols.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SymDims {
    /// Grid in workgroups.
    pub global: [Sym; 3],
    /// Workgroup size in work-items.
    pub local: [Sym; 3],
}

impl SymDims {
    /// Sizes from any mix of constants and symbols.
    pub fn new(global: [impl Into<Sym>; 3], local: [impl Into<Sym>; 3]) -> Self {
        SymDims {
            global: global.map(Into::into),
            local: local.map(Into::into),
        }
    }

    /// The sizes when none is a symbol.
    pub fn as_const(&self) -> Option<LaunchDims> {
        let c = |s: &[Sym; 3]| -> Option<[u32; 3]> {
            let mut o = [0; 3];
            for i in 0..3 {
                o[i] = u32::try_from(s[i].as_const()?).ok()?;
            }
            Some(o)
        };
        Some(LaunchDims {
            global: c(&self.global)?,
            local: c(&self.local)?,
        })
    }
}

impl From<LaunchDims> for SymDims {
    fn from(d: LaunchDims) -> Self {
        SymDims::new(d.global, d.local)
    }
}

impl ComputeQueue {
    /// Records a dispatch of `prg` with `args` on `dims` (grid in workgroups and
    /// workgroup size, constants or symbols): its kernel arguments — checked against
    /// the code object's metadata, hidden ones filled — scratch, and registers, as
    /// [`Program::launch`] sends them. Constant sizes are checked now, symbolic ones at
    /// submit. Nothing is recorded when it fails.
    ///
    /// ```
    /// use amd_hcq::{Bindings, BufferKind, KernArgs, Platform, Program, Sym, SymDims, Var};
    ///
    /// let dev = Platform::mock(amd_hcq::mock::MockConfig::gfx1100s(1))?.device(0)?;
    /// let elf = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/kernels/vadd.hsaco"))?;
    /// let vadd = Program::load(&dev, &elf, "vadd")?;
    /// let (a, out) = (dev.alloc(4096, BufferKind::Host)?, dev.alloc(4096, BufferKind::Host)?);
    /// a.write_slice(0, &[3.0f32; 1024])?;
    /// // out = a + a, on n elements chosen at submit.
    /// let n = Var::new("n");
    /// let args = KernArgs::new().buffer(&a).buffer(&a).buffer(&out).sym_u32(&n);
    /// let grid = (Sym::from(&n) + 255u32) / 256u32;
    /// let mut q = dev.compute_queue();
    /// q.exec(&vadd, &args, SymDims::new([grid, 1.into(), 1.into()], [256, 1, 1]))?;
    /// dev.wait_timeline(q.submit(&dev, &Bindings::from([(&n, 300)]))?)?;
    /// let got: Vec<f32> = out.read_vec(0, 301)?;
    /// assert_eq!((got[299], got[300]), (6.0, 0.0));
    /// // A variable left unbound is an error before anything reaches the GPU.
    /// assert!(q.submit(&dev, &Bindings::new()).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn exec<I: DeviceInterface>(
        &mut self,
        prg: &Program<I>,
        args: &KernArgs,
        dims: impl Into<SymDims>,
    ) -> Result<&mut Self> {
        let dev = prg.device();
        let mut l = dev.launcher();
        let scratch = dev.scratch_in(&mut l)?;
        self.exec_with(prg, args, dims.into(), scratch)
    }

    /// [`ComputeQueue::exec`] with the device's scratch at hand (its launcher held).
    pub(crate) fn exec_with<I: DeviceInterface>(
        &mut self,
        prg: &Program<I>,
        args: &KernArgs,
        dims: SymDims,
        scratch: &Scratch<I>,
    ) -> Result<&mut Self> {
        let (cmds, sites, kargs, checks) = (
            self.cmds.len(),
            self.rec.sites.len(),
            self.rec.kernargs.len(),
            self.rec.checks.len(),
        );
        let r = self.exec_inner(prg, args, dims, scratch);
        if r.is_err() {
            self.cmds.truncate(cmds);
            self.rec.sites.truncate(sites);
            self.rec.kernargs.truncate(kargs);
            self.rec.checks.truncate(checks);
        }
        r.map(|()| self)
    }

    fn exec_inner<I: DeviceInterface>(
        &mut self,
        prg: &Program<I>,
        args: &KernArgs,
        dims: SymDims,
        scratch: &Scratch<I>,
    ) -> Result<()> {
        let dev = prg.device();
        if dev.props().target != self.target {
            return Err(HcqError::ListTarget {
                kernel: Some(prg.info().name.clone()),
                list: self.target,
                action: "launched from",
                arch: dev.props().arch.clone(),
                target: dev.props().target,
            });
        }
        let info = prg.info();
        let kd = info.descriptor;
        let name = prg.name_arc();
        for (i, r) in &args.resident {
            let what = format_args!("kernel {name}, argument {i}");
            check_resident(r, dev.inner.id(), &what)?;
        }
        let konst = dims.as_const();
        match konst {
            Some(d) => check_launch(
                name,
                d.global.map(u64::from),
                d.local.map(u64::from),
                info.max_workgroup_size,
            )?,
            None => {
                let zero = |s: &[Sym; 3]| s.iter().position(|s| s.as_const() == Some(0));
                let at = zero(&dims.global)
                    .map(|i| ("grid", i))
                    .or_else(|| zero(&dims.local).map(|i| ("workgroup", i)));
                if let Some((axis, index)) = at {
                    return Err(HcqError::ZeroLaunchSize {
                        kernel: name.to_string(),
                        axis,
                        index,
                    });
                }
            }
        }

        // Kernel arguments, then the dispatch packet, in this list's argument bytes.
        let align = (info.kernarg_align as usize).max(64);
        let off = self.rec.kernargs.len().next_multiple_of(align);
        let args_len = (kd.kernarg_size as usize).next_multiple_of(64);
        let dispatch_ptr = kd.has(KernelDescriptor::DISPATCH_PTR);
        let block = (args_len + if dispatch_ptr { DISPATCH_PACKET } else { 0 }).max(64);
        self.rec.kernargs.resize(off + block, 0);
        let n = self.layout(prg, args, &dims, off)?;
        if n != args.items.len() {
            return Err(HcqError::ArgumentCount {
                kernel: name.to_string(),
                expected: n,
                given: args.items.len(),
            });
        }
        let karg = self.rec.karg_index();
        let at = |o: usize| Expr::VarAdd(karg, o as u64);

        // User SGPRs: private segment descriptor, dispatch pointer, kernarg pointer,
        // dispatch id, as the descriptor asks; the pointers are sites.
        let scratch_addr = scratch.buf.va();
        let mut user = [0u32; Dispatch::MAX_USER_DATA];
        let mut ptrs: [Option<(usize, Expr)>; 3] = [None, None, None];
        let mut u = 0;
        if kd.has(KernelDescriptor::PRIVATE_SEGMENT_BUFFER) {
            user[..4].copy_from_slice(&crate::resources::private_segment_buffer(self.target, scratch_addr));
            u = 4;
        }
        if dispatch_ptr {
            let dp_off = off + args_len;
            self.dispatch_packet(prg, &dims, dp_off, off)?;
            ptrs[0] = Some((u, at(dp_off)));
            u += 2;
        }
        ptrs[1] = Some((u, at(off)));
        u += 2;
        if kd.has(KernelDescriptor::DISPATCH_ID) {
            // A 64-bit id unique to the dispatch: its argument block's address with
            // the top bit set.
            ptrs[2] = Some((u, Expr::VarAdd(karg, (off as u64) | 1 << 63)));
            u += 2;
        }

        // Constant sizes are encoded now; symbolic ones are sites (0 until submitted).
        let c = |s: &Sym| s.as_const().and_then(|v| u32::try_from(v).ok()).unwrap_or(0);
        let grid = [0, 1, 2].map(|i| c(&dims.global[i]));
        let local = [0, 1, 2].map(|i| c(&dims.local[i]));
        let d = Dispatch {
            code_addr: prg.code_addr(),
            rsrc1: prg.rsrc().0,
            rsrc2: prg.rsrc().1,
            rsrc3: prg.rsrc3(),
            tmpring_size: scratch.tmpring_size,
            scratch_base: scratch_addr,
            user_data: &user[..u],
            block: local,
            grid,
            // A wave64 kernel runs in waves of 64 lanes: CS_W32_EN clear.
            initiator: if prg.wave64() {
                DispatchInitiator(DispatchInitiator::DEFAULT.0 & !DispatchInitiator::CS_W32_EN.0)
            } else {
                DispatchInitiator::DEFAULT
            },
        };
        let o = d.encode(self.target, &mut self.cmds)?;
        for (i, p) in ptrs.into_iter().enumerate() {
            if let Some((k, e)) = p {
                let field = ["dispatch pointer", "kernel argument pointer", "dispatch id"][i];
                self.rec
                    .site(Place::Cmd(o.user_data + k), Enc::U64, e, What::of(name, field, None));
            }
        }
        if konst.is_none() {
            const GRID: [&str; 3] = ["grid x", "grid y", "grid z"];
            const LOCAL: [&str; 3] = ["workgroup x", "workgroup y", "workgroup z"];
            let mut check = LaunchCheck {
                global: [Expr::Const(0), Expr::Const(0), Expr::Const(0)],
                local: [Expr::Const(0), Expr::Const(0), Expr::Const(0)],
                max_workgroup: info.max_workgroup_size,
                kernel: name.clone(),
            };
            let g = Enc::bounded(4, 1, u32::MAX as u64);
            let l = Enc::bounded(4, 1, u16::MAX as u64);
            for i in 0..3 {
                check.global[i] = self.rec.compile(&dims.global[i]);
                check.local[i] = self.rec.compile(&dims.local[i]);
                self.rec.value(&dims.global[i], Place::Cmd(o.grid + i), g, || {
                    What::of(name, GRID[i], None)
                })?;
                self.rec.value(&dims.local[i], Place::Cmd(o.block + i), l, || {
                    What::of(name, LOCAL[i], None)
                })?;
            }
            self.rec.checks.push(check);
        }
        self.rec.karg_align = self.rec.karg_align.max(align);
        if !self.rec.transient {
            self.rec.keep.push(prg.keepalive());
            self.rec.keep.push(scratch.buf.keepalive());
            self.rec.keep.extend(args.keep.iter().cloned());
        }
        Ok(())
    }

    /// Lays `args` out at `off` of the argument bytes as the metadata says; returns how
    /// many arguments the kernel takes.
    fn layout<I: DeviceInterface>(
        &mut self,
        prg: &Program<I>,
        args: &KernArgs,
        dims: &SymDims,
        off: usize,
    ) -> Result<usize> {
        let info = prg.info();
        let name = prg.name_arc();
        let mut given = args.items.iter();
        let mut taken = 0;
        for (i, a) in info.args.iter().enumerate() {
            let at = off + a.offset as usize;
            let size = a.size as usize;
            let put = |rec: &mut Recording, s: &Sym, max: u64, what: &'static str| -> Result<()> {
                if !matches!(size, 1 | 2 | 4 | 8) {
                    return Ok(());
                }
                let enc = Enc::bounded(
                    size as u8,
                    0,
                    max.min(if size == 8 { u64::MAX } else { (1 << (8 * size)) - 1 }),
                );
                let v = rec.value(s, Place::Karg(at), enc, || What::of(name, what, None))?;
                rec.kernargs[at..at + size].copy_from_slice(&v.to_le_bytes()[..size]);
                Ok(())
            };
            match &a.kind {
                ArgKind::Buffer | ArgKind::Value => {
                    taken += 1;
                    let Some(arg) = given.next() else { continue };
                    match place(name, i, a, arg)? {
                        Placed::Small(b, n) => self.rec.kernargs[at..at + n].copy_from_slice(&b[..n]),
                        Placed::Slice(b) => self.rec.kernargs[at..at + b.len()].copy_from_slice(b),
                        Placed::Sym { expr, bytes, max } => {
                            let e = Enc::bounded(bytes as u8, 0, max);
                            let what = || What::of(name, "argument", Some(i as u32));
                            self.rec.value(expr, Place::Karg(at), e, what)?;
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
                        s if s.starts_with("block_count_") => {
                            put(&mut self.rec, &dims.global[axis(s)], u32::MAX as u64, "block count")?
                        }
                        s if s.starts_with("group_size_") => {
                            put(&mut self.rec, &dims.local[axis(s)], u16::MAX as u64, "group size")?
                        }
                        "grid_dims" => {
                            let over = |i: usize| Sym::op(Op::Gt, &dims.global[i] * &dims.local[i], Sym::Const(1));
                            let d = (over(2) * 3u32).max(over(1) * 2u32).max(1u32);
                            put(&mut self.rec, &d, 3, "grid dimensions")?
                        }
                        // Remainders (no partial workgroups), offsets, and pointers the
                        // runtime does not provide: zero.
                        _ => {}
                    }
                }
            }
        }
        Ok(taken)
    }

    /// The AQL dispatch packet at `at` of the argument bytes (for kernels that read
    /// their sizes through the dispatch pointer); its arguments are at `args`.
    fn dispatch_packet<I: DeviceInterface>(
        &mut self,
        prg: &Program<I>,
        dims: &SymDims,
        at: usize,
        args: usize,
    ) -> Result<()> {
        let kd = prg.info().descriptor;
        let name = prg.name_arc();
        let field = |rec: &mut Recording, off: usize, s: &Sym, enc: Enc, what: &'static str| -> Result<()> {
            let v = rec.value(s, Place::Karg(at + off), enc, || What::of(name, what, None))?;
            let n = enc.bytes as usize;
            rec.kernargs[at + off..at + off + n].copy_from_slice(&v.to_le_bytes()[..n]);
            Ok(())
        };
        for i in 0..3 {
            let wg = Enc::bounded(2, 1, u16::MAX as u64);
            field(
                &mut self.rec,
                4 + 2 * i,
                &dims.local[i],
                wg,
                "dispatch packet workgroup size",
            )?;
            let grid = &dims.global[i] * &dims.local[i];
            let g = Enc::bounded(4, 1, u32::MAX as u64);
            field(&mut self.rec, 12 + 4 * i, &grid, g, "dispatch packet grid size")?;
        }
        let sizes = [kd.private_segment_size, kd.group_segment_size];
        self.rec.kernargs[at + 24..at + 32].copy_from_slice(zerocopy::IntoBytes::as_bytes(&sizes));
        let karg = self.rec.karg_index();
        let what = What::of(name, "dispatch packet kernarg address", None);
        self.rec
            .site(Place::Karg(at + 40), Enc::U64, Expr::VarAdd(karg, args as u64), what);
        Ok(())
    }
}

impl<I: DeviceInterface> Program<I> {
    /// The kernel arguments for `bufs` and `vals` in the word form of
    /// [`Program::launch`]: one word per 1-, 2- or 4-byte value argument (which must
    /// fit it), two (low first) per 8-byte one.
    fn word_args(&self, bufs: &[&Buffer<I>], vals: &[u32]) -> Result<KernArgs> {
        let n_bufs = self.info().args.iter().filter(|a| a.kind == ArgKind::Buffer).count();
        let n_vals: usize = self
            .info()
            .args
            .iter()
            .filter(|a| a.kind == ArgKind::Value)
            .map(|a| if a.size == 8 { 2 } else { 1 })
            .sum();
        if n_bufs != bufs.len() || n_vals != vals.len() {
            return Err(HcqError::ArgumentWords {
                kernel: self.info().name.clone(),
                buffers: n_bufs,
                words: n_vals,
                given_buffers: bufs.len(),
                given_words: vals.len(),
            });
        }
        let (mut bi, mut vi) = (bufs.iter(), vals.iter());
        let mut args = KernArgs::with_capacity(n_bufs + n_vals);
        for a in &self.info().args {
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
        let mut q = ComputeQueue::new(self.device().props().target);
        q.exec(self, &args, dims)?;
        let mut resolved = Vec::new();
        let base = q.rec.karg_base.clone();
        let internal: Vec<(&Var, u64)> = base.iter().map(|v| (v, 0)).collect();
        q.rec.resolve(&Bindings::new(), &internal, &mut resolved)?;
        let mut kargs = q.rec.kernargs.clone();
        q.rec.apply(&resolved, &mut q.cmds, &mut kargs)?;
        kargs.truncate(self.info().descriptor.kernarg_size as usize);
        Ok(kargs)
    }

    /// Launches the kernel with typed `args` on `dims`, ordered on the timeline after
    /// everything before it; returns the timeline value that marks its end.
    pub fn enqueue(&self, args: &KernArgs, dims: impl Into<SymDims>) -> Result<u64> {
        self.submit_launch(args, dims.into(), false).map(|(p, _)| p.logical())
    }

    /// [`Program::enqueue`], then waits for it and returns its GPU time (from
    /// timestamps taken around the dispatch).
    pub fn enqueue_timed(&self, args: &KernArgs, dims: impl Into<SymDims>) -> Result<Duration> {
        let (p, times) = self.submit_launch(args, dims.into(), true)?;
        self.device().wait_point(p)?;
        Ok(times.map(|t| Device::<I>::elapsed(&t)).unwrap_or_default())
    }

    /// Launches the kernel with `bufs` and `vals` (the word form: one word per value
    /// argument of up to 4 bytes, two, low first, per 8-byte one) on `dims`, ordered on
    /// the timeline after everything before it; returns the timeline value that marks
    /// its end (wait with [`Device::wait_timeline`]).
    pub fn launch(&self, bufs: &[&Buffer<I>], vals: &[u32], dims: LaunchDims) -> Result<u64> {
        let (p, _) = self.launch_words(bufs, vals, dims, false)?;
        Ok(p.logical())
    }

    /// [`Program::launch`], then waits for it and returns its GPU time (from
    /// timestamps taken around the dispatch).
    pub fn launch_timed(&self, bufs: &[&Buffer<I>], vals: &[u32], dims: LaunchDims) -> Result<Duration> {
        let (p, times) = self.launch_words(bufs, vals, dims, true)?;
        self.device().wait_point(p)?;
        Ok(times.map(|t| Device::<I>::elapsed(&t)).unwrap_or_default())
    }

    /// A launch of the word form ([`Program::launch`]), replayed from its recording
    /// where one is kept.
    fn launch_words(
        &self,
        bufs: &[&Buffer<I>],
        vals: &[u32],
        dims: LaunchDims,
        times: bool,
    ) -> Result<(Point, Option<Times<I>>)> {
        let key = [dims.global, dims.local];
        if let Some(r) = self.replay(key, times, |m, dev| fill_words(m, dev, bufs, vals)) {
            return r;
        }
        let args = self.word_args(bufs, vals)?;
        self.record(&args, dims, times)
    }

    /// A launch with typed arguments ([`Program::enqueue`]). One whose sizes and
    /// arguments are all constants is replayed from its recording where one is kept,
    /// and recorded to be kept otherwise.
    fn submit_launch(&self, args: &KernArgs, dims: SymDims, times: bool) -> Result<(Point, Option<Times<I>>)> {
        if let Some(d) = dims.as_const()
            && args.items.iter().all(Arg::is_const)
        {
            let key = [d.global, d.local];
            let (name, infos) = (self.name_arc(), &self.info().args);
            if let Some(r) = self.replay(key, times, |m, dev| fill_typed(m, dev, name, infos, args)) {
                return r;
            }
            return self.record(args, d, times);
        }
        // The device's launcher, taken once: its scratch, its kernel-argument ring and
        // its list (reused: a launch allocates nothing for it).
        let dev = self.device();
        let mut l = dev.launcher();
        let l = &mut *l;
        let made = dev.scratch_in(l).map(|_| ());
        let q = l
            .list
            .get_or_insert_with(|| ComputeQueue::transient(dev.props().target));
        q.clear();
        let r = made.and_then(|()| match (&l.scratch, &mut l.kernargs) {
            (Some(scratch), Some(ring)) => q.exec_with(self, args, dims, scratch).and_then(|q| {
                let name = OpName::Shared(self.name_arc().clone());
                dev.run_in(Some(ring), q, Bindings::NONE, name, true, times)
            }),
            _ => Err(HcqError::Internal {
                what: "no scratch or kernel-argument region on an open device",
            }),
        });
        q.clear();
        r
    }

    /// Sends the kept recording of this program on `dims`, its arguments written by
    /// `fill`; `None` when none is kept or `fill` refuses (the arguments fail a check:
    /// the caller records the launch anew, which reports why).
    ///
    /// What a replay checks: everything that depends on the arguments (each buffer
    /// reachable from the device; each value of its argument's type, size and range).
    /// The rest was checked when it was recorded (the sizes against the kernel and the
    /// device), and a recording is forgotten when the scratch buffer it names changes.
    fn replay(
        &self,
        dims: [[u32; 3]; 2],
        times: bool,
        fill: impl FnOnce(&mut LaunchMemo, DeviceId) -> bool,
    ) -> Option<Result<(Point, Option<Times<I>>)>> {
        let dev = self.device();
        let mut l = dev.launcher();
        let l = &mut *l;
        if !l.replay {
            return None;
        }
        let m = l.memos.iter_mut().find(|m| m.program == self.id() && m.dims == dims)?;
        let ring = l.kernargs.as_mut()?;
        if !fill(m, dev.inner.id()) {
            return None;
        }
        l.replayed += 1;
        let name = OpName::Shared(self.name_arc().clone());
        Some(dev.run_in(Some(ring), &m.list, Bindings::NONE, name, true, times))
    }

    /// Records a launch of `args` on `dims` into a list of its own, sends it, and keeps
    /// the list for [`Program::replay`] (in place of the oldest kept one when the device
    /// keeps [`LaunchMemo::KEPT`]).
    fn record(&self, args: &KernArgs, dims: LaunchDims, times: bool) -> Result<(Point, Option<Times<I>>)> {
        let dev = self.device();
        let mut l = dev.launcher();
        let l = &mut *l;
        // The list and slots recorded into: the launcher's list with replay off, else
        // those of the recording this one replaces (forgotten first, so that a failed
        // recording leaves none half made), else new ones.
        let reused = if !l.replay {
            l.list.take().map(|list| (list, Vec::new()))
        } else if l.memos.len() >= LaunchMemo::KEPT {
            let old = l.memos.remove(0);
            Some((old.list, old.slots))
        } else {
            None
        };
        let (mut list, mut slots) = reused.unwrap_or_else(|| (ComputeQueue::transient(dev.props().target), Vec::new()));
        list.clear();
        let scratch = dev.scratch_in(l)?;
        list.exec_with(self, args, dims.into(), scratch)?;
        let ring = l.kernargs.as_mut().ok_or(HcqError::Internal {
            what: "no kernel-argument region on an open device",
        })?;
        let name = OpName::Shared(self.name_arc().clone());
        let r = dev.run_in(Some(ring), &list, Bindings::NONE, name, true, times)?;
        if !l.replay {
            l.list = Some(list);
            return Ok(r);
        }
        slots.clear();
        slots.extend(
            (self.info().args.iter().enumerate())
                .filter(|(_, a)| !matches!(a.kind, ArgKind::Hidden(_)))
                .map(|(i, a)| Slot {
                    arg: i,
                    at: a.offset as usize,
                    bytes: a.size,
                    buffer: a.kind == ArgKind::Buffer,
                }),
        );
        l.memos.push(LaunchMemo {
            program: self.id(),
            dims: [dims.global, dims.local],
            list,
            slots,
        });
        Ok(r)
    }
}

/// Writes `bytes` at `at` of `kernargs`; false where they do not fit.
#[inline(always)]
fn put(kernargs: &mut [u8], at: usize, bytes: &[u8]) -> bool {
    match at.checked_add(bytes.len()).and_then(|end| kernargs.get_mut(at..end)) {
        Some(d) => {
            d.copy_from_slice(bytes);
            true
        }
        None => false,
    }
}

/// Writes typed `args` into `m`'s argument bytes, if they pass the checks
/// [`Program::enqueue`] makes of them on device `dev` (the kernel `name`'s arguments
/// `infos`).
fn fill_typed(m: &mut LaunchMemo, dev: DeviceId, name: &str, infos: &[ArgInfo], args: &KernArgs) -> bool {
    if args.items.len() != m.slots.len() || args.resident.iter().any(|(_, r)| !r.on(dev.key)) {
        return false;
    }
    let bytes = &mut m.list.rec.kernargs;
    for (s, a) in m.slots.iter().zip(&args.items) {
        let Some(info) = infos.get(s.arg) else { return false };
        let ok = match place(name, s.arg, info, a) {
            Ok(Placed::Small(b, n)) => put(bytes, s.at, &b[..n]),
            Ok(Placed::Slice(b)) => put(bytes, s.at, b),
            Ok(Placed::Sym { .. }) | Err(_) => false,
        };
        if !ok {
            return false;
        }
    }
    true
}

/// Writes `bufs` and `vals` into `m`'s argument bytes, if they pass the checks
/// [`Program::launch`] makes of them on device `dev`.
fn fill_words<I: DeviceInterface>(m: &mut LaunchMemo, dev: DeviceId, bufs: &[&Buffer<I>], vals: &[u32]) -> bool {
    let (mut b, mut v) = (bufs.iter(), vals.iter());
    let bytes = &mut m.list.rec.kernargs;
    for s in &m.slots {
        let x = if s.buffer {
            match b.next() {
                Some(b) if b.residency().on(dev.key) => b.va(),
                _ => return false,
            }
        } else {
            let Some(&lo) = v.next() else { return false };
            match s.bytes {
                8 => match v.next() {
                    Some(&hi) => u64::from(lo) | u64::from(hi) << 32,
                    None => return false,
                },
                4 => u64::from(lo),
                1 | 2 if lo >> (8 * s.bytes) == 0 => u64::from(lo),
                _ => return false,
            }
        };
        // Fixed sizes: each a plain store, not a copy of a length known at run time.
        let ok = match (s.buffer, s.bytes) {
            (true, _) | (false, 8) => put(bytes, s.at, &x.to_le_bytes()),
            (false, 4) => put(bytes, s.at, &(x as u32).to_le_bytes()),
            (false, 2) => put(bytes, s.at, &(x as u16).to_le_bytes()),
            (false, _) => put(bytes, s.at, &[x as u8]),
        };
        if !ok {
            return false;
        }
    }
    // Every buffer and word taken: none left over.
    b.next().is_none() && v.next().is_none()
}
