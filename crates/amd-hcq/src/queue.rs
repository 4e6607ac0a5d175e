//! Command builders for the compute (PM4) and copy (SDMA) queues.
//!
//! A builder collects dwords and, for every value given as a [`Sym`] rather than a
//! constant, records where it lands (a *site*): dwords of the command list, or bytes
//! of the kernel arguments the list carries. Submitting binds the variables and writes
//! each site; a bound list (see [`crate::BoundQueue`]) rewrites only the sites whose
//! values changed since that copy of the list last ran.

use std::any::Any;
use std::sync::Arc;

use amd_packets::pm4::recipes::{self, Signal as SignalPkt};
use amd_packets::pm4::{ReleaseMem, ReleaseMemField, WaitRegMem, WaitRegMemField};
use amd_packets::sdma::{
    self, CopyLinear, CopyLinearField, Fence, FenceField, PollRegmem, PollRegmemField, Timestamp, Trap,
};
use amd_packets::{CmdSink, GfxTarget};

use crate::error::LaunchLimit;
use crate::iface::DeviceInterface;
use crate::signal::Signal;
use crate::sym::{Bindings, Expr, Op, Sym, Var, unbound};
use crate::{HcqError, Result};

/// Where a site's value goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Place {
    /// Dword of the command list.
    Cmd(usize),
    /// Byte of the list's kernel arguments.
    Karg(usize),
}

/// How a value is encoded, and which values its field holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Enc {
    /// Little-endian bytes written (4 or 8 in the command list).
    pub(crate) bytes: u8,
    /// Smallest and largest value accepted.
    pub(crate) min: u64,
    pub(crate) max: u64,
    /// Keep only the low `8 * bytes` bits instead of refusing larger values (signal
    /// values, compared and written in 32 bits by the packets).
    pub(crate) truncate: bool,
    /// Write the value minus one (SDMA byte counts).
    pub(crate) minus_one: bool,
}

impl Enc {
    pub(crate) const U64: Enc = Enc::bounded(8, 0, u64::MAX);
    pub(crate) const U32: Enc = Enc::bounded(4, 0, u32::MAX as u64);
    pub(crate) const LOW32: Enc = Enc {
        truncate: true,
        ..Enc::U32
    };

    pub(crate) const fn bounded(bytes: u8, min: u64, max: u64) -> Enc {
        Enc {
            bytes,
            min,
            max,
            truncate: false,
            minus_one: false,
        }
    }

    /// The bits to write for `v`, or `None` when the field cannot hold it.
    #[inline]
    pub(crate) fn encode(self, v: u64) -> Option<u64> {
        let v = if self.truncate {
            if self.bytes >= 8 {
                v
            } else {
                v & ((1 << (8 * self.bytes)) - 1)
            }
        } else if v < self.min || v > self.max {
            return None;
        } else {
            v
        };
        Some(if self.minus_one { v - 1 } else { v })
    }
}

/// What a site or a value is, for errors: `kernel saxpy, argument 2`, `copy size`.
/// Cheap to make (no formatting until an error needs it).
#[derive(Clone, Debug)]
pub(crate) struct What {
    pub(crate) kernel: Option<Arc<str>>,
    pub(crate) field: &'static str,
    pub(crate) index: Option<u32>,
}

impl What {
    pub(crate) const fn field(field: &'static str) -> What {
        What {
            kernel: None,
            field,
            index: None,
        }
    }

    pub(crate) fn of(kernel: &Arc<str>, field: &'static str, index: Option<u32>) -> What {
        What {
            kernel: Some(kernel.clone()),
            field,
            index,
        }
    }
}

impl std::fmt::Display for What {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(k) = &self.kernel {
            write!(f, "kernel {k}, ")?;
        }
        f.write_str(self.field)?;
        match self.index {
            Some(i) => write!(f, " {i}"),
            None => Ok(()),
        }
    }
}

/// A value recorded as a symbol: where it lands, how, and what it is (for errors).
#[derive(Clone, Debug)]
pub(crate) struct Site {
    pub(crate) place: Place,
    pub(crate) enc: Enc,
    pub(crate) expr: Expr,
    pub(crate) what: What,
}

/// A launch's sizes, checked at submit when they are symbols.
#[derive(Clone, Debug)]
pub(crate) struct LaunchCheck {
    pub(crate) global: [Expr; 3],
    pub(crate) local: [Expr; 3],
    pub(crate) max_workgroup: u32,
    pub(crate) kernel: Arc<str>,
}

/// Everything a list carries besides its constant dwords: variables, sites, launch
/// checks, kernel arguments, and what must outlive it.
#[derive(Clone, Default)]
pub(crate) struct Recording {
    /// The variables, numbered by position.
    pub(crate) vars: Vec<Var>,
    pub(crate) sites: Vec<Site>,
    pub(crate) checks: Vec<LaunchCheck>,
    /// Kernel-argument bytes of every dispatch, each block at its offset.
    pub(crate) kernargs: Vec<u8>,
    /// Alignment the kernel-argument bytes need.
    pub(crate) karg_align: usize,
    /// The variable standing for the kernel arguments' GPU address.
    pub(crate) karg_base: Option<Var>,
    /// Buffers, programs and scratch the list refers to by address.
    pub(crate) keep: Vec<Arc<dyn Any + Send + Sync>>,
    /// The list is submitted once, right away, and never bound: it needs no `keep`
    /// (memory freed meanwhile waits for the timeline anyway).
    pub(crate) transient: bool,
}

impl std::fmt::Debug for Recording {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recording")
            .field("vars", &self.vars)
            .field("sites", &self.sites.len())
            .field("kernarg_bytes", &self.kernargs.len())
            .finish()
    }
}

impl Recording {
    /// Empties the recording, keeping its capacity and its kernel-argument variable.
    pub(crate) fn clear(&mut self) {
        self.vars.clear();
        self.sites.clear();
        self.checks.clear();
        self.kernargs.clear();
        self.karg_align = 0;
        self.keep.clear();
    }

    fn index(&mut self, v: &Var) -> u32 {
        match self.vars.iter().position(|x| x == v) {
            Some(i) => i as u32,
            None => {
                self.vars.push(v.clone());
                self.vars.len() as u32 - 1
            }
        }
    }

    pub(crate) fn compile(&mut self, s: &Sym) -> Expr {
        Expr::compile(s, &mut |v| self.index(v))
    }

    /// Records `s` at `place` for a field that holds any value of its width; returns
    /// the constant to encode now (0 for a symbol).
    pub(crate) fn any(&mut self, s: &Sym, place: Place, enc: Enc, what: &'static str) -> u64 {
        debug_assert!(enc.truncate || enc.max == u64::MAX);
        // `enc` accepts every value, so only a symbol is recorded and nothing fails.
        self.value(s, place, enc, || What::field(what)).unwrap_or(0)
    }

    /// Records `s` at `place` when it is a symbol; returns the constant to encode now
    /// (0 for a symbol, written at submit).
    pub(crate) fn value(&mut self, s: &Sym, place: Place, enc: Enc, what: impl FnOnce() -> What) -> Result<u64> {
        match s.as_const() {
            Some(v) => enc.encode(v).map(|_| v).ok_or_else(|| does_not_fit(&what(), v, enc)),
            None => {
                let expr = self.compile(s);
                self.sites.push(Site {
                    place,
                    enc,
                    expr,
                    what: what(),
                });
                Ok(0)
            }
        }
    }

    /// Records the site `expr` (already compiled) at `place`.
    pub(crate) fn site(&mut self, place: Place, enc: Enc, expr: Expr, what: What) {
        self.sites.push(Site { place, enc, expr, what });
    }

    /// Reserves an 8-byte slot (zeroed) in the kernel arguments for a GPU timestamp;
    /// returns its offset and the site expression of its address.
    pub(crate) fn stamp_slot(&mut self) -> (usize, Expr) {
        let off = self.kernargs.len().next_multiple_of(8);
        self.kernargs.resize(off + 8, 0);
        self.karg_align = self.karg_align.max(8);
        let k = self.karg_index();
        (off, Expr::VarAdd(k, off as u64))
    }

    /// The index of the kernel arguments' address variable (made on first use).
    pub(crate) fn karg_index(&mut self) -> u32 {
        let v = self
            .karg_base
            .get_or_insert_with(|| Var::internal("(kernel arguments)"));
        match self.vars.iter().position(|x| x == v) {
            Some(i) => i as u32,
            None => {
                self.vars.push(v.clone());
                self.vars.len() as u32 - 1
            }
        }
    }

    /// Keeps `sig`'s slot from being reused while the list may still write or wait
    /// for it (a transient list's work is covered by the timeline instead).
    fn hold<I: DeviceInterface>(&mut self, sig: &Signal<I>) {
        if !self.transient {
            self.keep.push(sig.keepalive());
        }
    }

    /// Whether submitting needs anything but the dwords.
    pub(crate) fn is_plain(&self) -> bool {
        self.sites.is_empty() && self.kernargs.is_empty()
    }

    /// The values of the variables, from `vals` and the runtime's own `internal` ones.
    pub(crate) fn resolve(&self, vals: &Bindings, internal: &[(&Var, u64)], out: &mut Vec<u64>) -> Result<()> {
        out.clear();
        for v in &self.vars {
            let x = match internal.iter().find(|(iv, _)| *iv == v) {
                Some(&(_, x)) => x,
                None => vals.get(v).ok_or_else(|| unbound(v))?,
            };
            out.push(x);
        }
        for c in &self.checks {
            let ev = |e: &Expr, what: &str| e.eval(out).map_err(|_| overflow_err(&c.kernel, what));
            let mut g = [0u64; 3];
            let mut l = [0u64; 3];
            for i in 0..3 {
                g[i] = ev(&c.global[i], "grid")?;
                l[i] = ev(&c.local[i], "workgroup")?;
            }
            check_launch(&c.kernel, g, l, c.max_workgroup)?;
        }
        Ok(())
    }

    /// The encoded value of every site for the resolved variables `vals`, in order.
    #[inline]
    pub(crate) fn site_values<'a>(&'a self, vals: &'a [u64]) -> impl Iterator<Item = Result<(&'a Site, u64)>> + 'a {
        self.sites.iter().map(move |s| {
            let v = s.expr.eval(vals).map_err(|_| HcqError::SymbolOverflow {
                what: s.what.to_string(),
            })?;
            let bits = s.enc.encode(v).ok_or_else(|| does_not_fit(&s.what, v, s.enc))?;
            Ok((s, bits))
        })
    }

    /// Appends another list's recording whose command dwords now start at `cmd_base`:
    /// its kernel arguments go after ours (aligned), its variables join ours, and its
    /// kernel-argument address becomes ours plus their offset.
    pub(crate) fn append(&mut self, other: &Recording, cmd_base: usize) {
        let karg_off = if other.kernargs.is_empty() {
            self.kernargs.len()
        } else {
            self.kernargs.len().next_multiple_of(other.karg_align.max(1))
        };
        let mut map = Vec::with_capacity(other.vars.len());
        for v in &other.vars {
            if Some(v) == other.karg_base.as_ref() {
                let base = match &self.karg_base {
                    Some(b) => b.clone(),
                    None => {
                        let b = Var::new("(kernel arguments)");
                        self.karg_base = Some(b.clone());
                        b
                    }
                };
                let i = self.index(&base);
                map.push(Expr::Op(Box::new((
                    Op::Add,
                    Expr::Var(i),
                    Expr::Const(karg_off as u64),
                ))));
            } else {
                map.push(Expr::Var(self.index(v)));
            }
        }
        for s in &other.sites {
            self.sites.push(Site {
                place: match s.place {
                    Place::Cmd(at) => Place::Cmd(cmd_base + at),
                    Place::Karg(at) => Place::Karg(karg_off + at),
                },
                enc: s.enc,
                expr: s.expr.substitute(&map),
                what: s.what.clone(),
            });
        }
        for c in &other.checks {
            self.checks.push(LaunchCheck {
                global: c.global.clone().map(|e| e.substitute(&map)),
                local: c.local.clone().map(|e| e.substitute(&map)),
                max_workgroup: c.max_workgroup,
                kernel: c.kernel.clone(),
            });
        }
        if !other.kernargs.is_empty() {
            self.kernargs.resize(karg_off, 0);
            self.kernargs.extend_from_slice(&other.kernargs);
            self.karg_align = self.karg_align.max(other.karg_align);
        }
        if !self.transient {
            self.keep.extend(other.keep.iter().cloned());
        }
    }

    /// Writes every site into `cmds` and `kargs` for the resolved `vals`.
    pub(crate) fn apply(&self, vals: &[u64], cmds: &mut [u32], kargs: &mut [u8]) -> Result<()> {
        for r in self.site_values(vals) {
            let (s, bits) = r?;
            write_site(s, bits, cmds, kargs)?;
        }
        Ok(())
    }

    /// Writes every site for the resolved `vals`: command sites into `cmds`, argument
    /// sites through `karg(byte offset, bits, bytes)`. Every value is checked before
    /// anything is written.
    pub(crate) fn apply_with(
        &self,
        vals: &[u64],
        cmds: &mut [u32],
        mut karg: impl FnMut(usize, u64, usize) -> Result<()>,
    ) -> Result<()> {
        for r in self.site_values(vals) {
            r?;
        }
        for r in self.site_values(vals) {
            let (s, bits) = r?;
            match s.place {
                Place::Cmd(_) => write_site(s, bits, cmds, &mut [])?,
                Place::Karg(at) => karg(at, bits, s.enc.bytes as usize)?,
            }
        }
        Ok(())
    }
}

/// Writes a site's encoded bits.
#[inline]
pub(crate) fn write_site(s: &Site, bits: u64, cmds: &mut [u32], kargs: &mut [u8]) -> Result<()> {
    let out_of_range = || HcqError::Internal {
        what: "a symbol's site lies outside its list",
    };
    match s.place {
        Place::Cmd(at) => {
            let n = s.enc.bytes.div_ceil(4) as usize;
            let d = cmds.get_mut(at..at + n).ok_or_else(out_of_range)?;
            d[0] = bits as u32;
            if n == 2 {
                d[1] = (bits >> 32) as u32;
            }
        }
        Place::Karg(at) => {
            let n = s.enc.bytes as usize;
            let d = kargs.get_mut(at..at + n).ok_or_else(out_of_range)?;
            d.copy_from_slice(&bits.to_le_bytes()[..n]);
        }
    }
    Ok(())
}

pub(crate) fn does_not_fit(what: &dyn std::fmt::Display, v: u64, enc: Enc) -> HcqError {
    HcqError::FieldRange {
        what: what.to_string(),
        value: v,
        min: enc.min,
        max: enc.max,
    }
}

fn overflow_err(kernel: &str, what: &str) -> HcqError {
    HcqError::SymbolOverflow {
        what: format!("kernel {kernel}: a {what} size"),
    }
}

/// The checks of a launch's sizes: every size at least 1, a grid of 32-bit counts, a
/// workgroup of 16-bit sizes within the kernel's maximum, and grid × workgroup within
/// 32 bits on each axis (the dispatch packet's and the hidden arguments' width).
#[inline]
pub(crate) fn check_launch(kernel: &str, g: [u64; 3], l: [u64; 3], max_workgroup: u32) -> Result<()> {
    // The common case in a few branch-free tests; the error says which one failed.
    let [g0, g1, g2] = g;
    let [l0, l1, l2] = l;
    let max32 = u32::MAX as u64;
    let ok = (g0 | g1 | g2) <= max32
        && (l0 | l1 | l2) <= u16::MAX as u64
        && g0 != 0
        && g1 != 0
        && g2 != 0
        && l0 != 0
        && l1 != 0
        && l2 != 0
        && l0 * l1 * l2 <= max_workgroup as u64
        && g0 * l0 <= max32
        && g1 * l1 <= max32
        && g2 * l2 <= max32;
    if ok {
        Ok(())
    } else {
        launch_error(kernel, g, l, max_workgroup)
    }
}

/// Why a launch's sizes are refused (see [`check_launch`]).
#[cold]
fn launch_error(kernel: &str, g: [u64; 3], l: [u64; 3], max_workgroup: u32) -> Result<()> {
    let bad = |limit| HcqError::LaunchDims {
        kernel: kernel.to_string(),
        grid: g,
        workgroup: l,
        limit,
    };
    if g.contains(&0) || l.contains(&0) {
        return Err(bad(LaunchLimit::ZeroSize));
    }
    if g.iter().any(|&x| x > u32::MAX as u64) {
        return Err(bad(LaunchLimit::Grid32));
    }
    if l.iter().any(|&x| x > u16::MAX as u64) {
        return Err(bad(LaunchLimit::Workgroup16));
    }
    let threads = l[0] * l[1] * l[2];
    if threads > max_workgroup as u64 {
        return Err(bad(LaunchLimit::WorkgroupSize {
            work_items: threads,
            max: max_workgroup,
        }));
    }
    if (0..3).any(|i| g[i] * l[i] > u32::MAX as u64) {
        return Err(bad(LaunchLimit::Total32));
    }
    Ok(())
}

/// A PM4 command list for the compute queue.
#[derive(Debug, Clone)]
pub struct ComputeQueue {
    pub(crate) target: GfxTarget,
    pub(crate) cmds: Vec<u32>,
    pub(crate) rec: Recording,
}

impl ComputeQueue {
    /// An empty list for `target`.
    pub fn new(target: GfxTarget) -> Self {
        ComputeQueue {
            target,
            cmds: Vec::with_capacity(128),
            rec: Recording::default(),
        }
    }

    /// The dwords so far (sites hold 0 until submitted).
    pub fn dwords(&self) -> &[u32] {
        &self.cmds
    }

    /// Empties the list for reuse (its buffers keep their capacity).
    pub fn clear(&mut self) {
        self.cmds.clear();
        self.rec.clear();
    }

    /// Dwords so far: the offset the next command starts at.
    pub fn len(&self) -> usize {
        self.cmds.len()
    }

    /// Whether nothing was added.
    pub fn is_empty(&self) -> bool {
        self.cmds.is_empty()
    }

    /// The variables its symbols use (the runtime's own excluded).
    pub fn vars(&self) -> Vec<Var> {
        self.rec
            .vars
            .iter()
            .filter(|v| Some(*v) != self.rec.karg_base.as_ref())
            .cloned()
            .collect()
    }

    /// Bytes of kernel arguments the list carries.
    pub fn kernarg_bytes(&self) -> usize {
        self.rec.kernargs.len()
    }

    /// Stalls the queue until `sig` is at least `value` (compared in 32 bits, as
    /// WAIT_REG_MEM does).
    pub fn wait<I: DeviceInterface>(&mut self, sig: &Signal<I>, value: impl Into<Sym>) -> &mut Self {
        self.rec.hold(sig);
        self.wait_addr(sig.addr(), value)
    }

    /// Stalls the queue until the signal value at `addr` is at least `value`; either
    /// may be a symbol.
    pub fn wait_addr(&mut self, addr: impl Into<Sym>, value: impl Into<Sym>) -> &mut Self {
        let at = self.cmds.len();
        let (addr, value) = (addr.into(), value.into());
        let t = self.target;
        let a = self.rec.any(
            &addr,
            Place::Cmd(at + WaitRegMemField::Address.offset(t)),
            Enc::U64,
            "wait address",
        );
        let v = self.rec.any(
            &value,
            Place::Cmd(at + WaitRegMemField::Reference.offset(t)),
            Enc::LOW32,
            "wait value",
        );
        WaitRegMem::memory_ge(a, v as u32).encode(self.target, &mut self.cmds);
        self
    }

    /// Sets `sig` to `value` once prior work is done (and wakes sleepers of a timeline).
    pub fn signal<I: DeviceInterface>(&mut self, sig: &Signal<I>, value: impl Into<Sym>) -> &mut Self {
        self.rec.hold(sig);
        self.signal_addr(sig.addr(), value, sig.event())
    }

    /// Sets the signal at `addr` to `value` once prior work is done, raising the KFD
    /// `event` (mailbox address, id) when given; address and value may be symbols.
    pub fn signal_addr(&mut self, addr: impl Into<Sym>, value: impl Into<Sym>, event: Option<(u64, u32)>) -> &mut Self {
        let at = self.cmds.len();
        let (addr, value) = (addr.into(), value.into());
        let t = self.target;
        let a = self.rec.any(
            &addr,
            Place::Cmd(at + ReleaseMemField::Address.offset(t)),
            Enc::U64,
            "signal address",
        );
        let v = self.rec.any(
            &value,
            Place::Cmd(at + ReleaseMemField::Data.offset(t)),
            Enc::U64,
            "signal value",
        );
        SignalPkt {
            address: a,
            value: v,
            event,
        }
        .encode(self.target, &mut self.cmds);
        self
    }

    /// Writes the GPU clock into `sig`'s timestamp once prior work is done.
    pub fn timestamp<I: DeviceInterface>(&mut self, sig: &Signal<I>) -> &mut Self {
        self.rec.hold(sig);
        ReleaseMem::timestamp(sig.timestamp_addr()).encode(self.target, &mut self.cmds);
        self
    }

    /// Writes the GPU clock, once prior work is done, into a slot of the list's own
    /// kernel arguments (each bound copy its own); returns the slot's offset there.
    pub(crate) fn timestamp_in_kernargs(&mut self) -> usize {
        let at = self.cmds.len();
        let (off, expr) = self.rec.stamp_slot();
        let place = Place::Cmd(at + ReleaseMemField::Address.offset(self.target));
        self.rec.site(place, Enc::U64, expr, What::field("timestamp address"));
        ReleaseMem::timestamp(0).encode(self.target, &mut self.cmds);
        off
    }

    /// Flushes HDP and invalidates/writes back every cache level.
    pub fn memory_barrier(&mut self) -> &mut Self {
        recipes::memory_barrier(self.target, &mut self.cmds);
        self
    }

    /// Appends raw dwords (already encoded packets).
    pub fn raw(&mut self, dwords: &[u32]) -> &mut Self {
        self.cmds.put(dwords);
        self
    }
}

/// An SDMA command list for the copy queue. Packet boundaries are kept, so that no
/// packet is split across the ring's end.
#[derive(Debug, Clone)]
pub struct CopyQueue {
    pub(crate) target: GfxTarget,
    pub(crate) cmds: Vec<u32>,
    pub(crate) sizes: Vec<u32>,
    /// Indices (into `sizes`) of packets that must end on an 8-dword boundary of the
    /// ring (SDMA INDIRECT); the ring writer pads before them with NOPs.
    pub(crate) end_aligned: Vec<usize>,
    pub(crate) rec: Recording,
}

impl CopyQueue {
    /// An empty list for `target`.
    pub fn new(target: GfxTarget) -> Self {
        CopyQueue {
            target,
            cmds: Vec::with_capacity(64),
            sizes: Vec::with_capacity(8),
            end_aligned: Vec::new(),
            rec: Recording::default(),
        }
    }

    fn mark(&mut self, start: usize) {
        self.sizes.push((self.cmds.len() - start) as u32);
    }

    /// The dwords so far (sites hold 0 until submitted).
    pub fn dwords(&self) -> &[u32] {
        &self.cmds
    }

    /// Empties the list for reuse (its buffers keep their capacity).
    pub fn clear(&mut self) {
        self.cmds.clear();
        self.sizes.clear();
        self.end_aligned.clear();
        self.rec.clear();
    }

    /// The variables its symbols use.
    pub fn vars(&self) -> Vec<Var> {
        self.rec.vars.clone()
    }

    /// Copies `size` bytes from `src` to `dst` (split into packets of at most 4 MiB).
    /// Addresses may be symbols; a symbolic size must be at most 4 MiB at submit (one
    /// packet), a constant one is split.
    ///
    /// ```
    /// use amd_hcq::{Bindings, BufferKind, Platform, Var};
    ///
    /// let dev = Platform::mock(amd_hcq::mock::MockConfig::gfx1100s(1))?.device(0)?;
    /// let src = dev.alloc(4096, BufferKind::Host)?;
    /// let dst = dev.alloc(4096, BufferKind::Host)?;
    /// src.write_slice(0, &[9u8; 4096])?;
    /// let (to, len) = (Var::new("to"), Var::new("len"));
    /// let mut q = dev.copy_queue();
    /// q.copy(&to, src.va(), &len)?;
    /// let mut vals = Bindings::new();
    /// vals.buffer(&to, &dst).set(&len, 100);
    /// dev.wait_timeline(q.submit(&dev, &vals)?)?;
    /// assert_eq!(dst.read_vec::<u8>(99, 2)?, [9, 0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn copy(&mut self, dst: impl Into<Sym>, src: impl Into<Sym>, size: impl Into<Sym>) -> Result<&mut Self> {
        let (dst, src, size) = (dst.into(), src.into(), size.into());
        let t = self.target;
        if let (Some(d), Some(s), Some(n)) = (dst.as_const(), src.as_const(), size.as_const()) {
            for p in CopyLinear::split(d, s, n)? {
                let at = p.encode(t, &mut self.cmds);
                self.mark(at);
            }
            return Ok(self);
        }
        let max = sdma::MAX_BYTES_PER_PACKET as u64;
        let sizes: Vec<(u64, Sym)> = match size.as_const() {
            Some(0) => return Ok(self),
            Some(n) => (0..n.div_ceil(max))
                .map(|k| (k * max, Sym::Const((n - k * max).min(max))))
                .collect(),
            None => vec![(0, size)],
        };
        for (k, (off, len)) in sizes.into_iter().enumerate() {
            let at = self.cmds.len();
            let place = |f: CopyLinearField| Place::Cmd(at + f.offset(t));
            let (d, s) = (&dst + off, &src + off);
            let packet = |field| What {
                index: Some(k as u32),
                ..What::field(field)
            };
            let dv = self.rec.value(&d, place(CopyLinearField::Dst), Enc::U64, || {
                packet("copy destination, packet")
            })?;
            let sv = self.rec.value(&s, place(CopyLinearField::Src), Enc::U64, || {
                packet("copy source, packet")
            })?;
            let count = Enc {
                minus_one: true,
                ..Enc::bounded(4, 1, max)
            };
            let nv = self
                .rec
                .value(&len, place(CopyLinearField::Count), count, || What::field("copy size"))?;
            CopyLinear::new(dv, sv, nv.max(1) as u32)?.encode(t, &mut self.cmds);
            self.mark(at);
        }
        Ok(self)
    }

    /// Stalls the queue until `sig` is at least `value`.
    pub fn wait<I: DeviceInterface>(&mut self, sig: &Signal<I>, value: impl Into<Sym>) -> &mut Self {
        self.rec.hold(sig);
        self.wait_addr(sig.addr(), value)
    }

    /// Stalls the queue until the signal value at `addr` is at least `value` (compared
    /// in 32 bits); either may be a symbol.
    pub fn wait_addr(&mut self, addr: impl Into<Sym>, value: impl Into<Sym>) -> &mut Self {
        let at = self.cmds.len();
        let t = self.target;
        let (addr, value) = (addr.into(), value.into());
        let a = self.rec.any(
            &addr,
            Place::Cmd(at + PollRegmemField::Address.offset(t)),
            Enc::U64,
            "wait address",
        );
        let v = self.rec.any(
            &value,
            Place::Cmd(at + PollRegmemField::Reference.offset(t)),
            Enc::LOW32,
            "wait value",
        );
        let at = PollRegmem::memory_ge(a, v as u32).encode(t, &mut self.cmds);
        self.mark(at);
        self
    }

    /// Sets `sig` to `value` (written in 32 bits) once prior work is done; for a
    /// timeline, also writes its event mailbox and raises the interrupt.
    pub fn signal<I: DeviceInterface>(&mut self, sig: &Signal<I>, value: impl Into<Sym>) -> &mut Self {
        self.rec.hold(sig);
        self.signal_addr(sig.addr(), value, sig.event())
    }

    /// Sets the signal at `addr` to `value` (32 bits) once prior work is done, and
    /// raises the KFD `event` (mailbox address, id) when given.
    pub fn signal_addr(&mut self, addr: impl Into<Sym>, value: impl Into<Sym>, event: Option<(u64, u32)>) -> &mut Self {
        let at = self.cmds.len();
        let t = self.target;
        let (addr, value) = (addr.into(), value.into());
        let a = self.rec.any(
            &addr,
            Place::Cmd(at + FenceField::Address.offset(t)),
            Enc::U64,
            "signal address",
        );
        let v = self.rec.any(
            &value,
            Place::Cmd(at + FenceField::Data.offset(t)),
            Enc::LOW32,
            "signal value",
        );
        let at = Fence::new(a, v as u32).encode(t, &mut self.cmds);
        self.mark(at);
        if let Some((mailbox, id)) = event {
            let at = Fence::new(mailbox, id).encode(t, &mut self.cmds);
            self.mark(at);
            // Event ids are below KFD_SIGNAL_EVENT_LIMIT, far inside 28 bits.
            if let Ok(tr) = Trap::new(id) {
                let at = tr.encode(t, &mut self.cmds);
                self.mark(at);
            }
        }
        self
    }

    /// Writes the GPU clock into `sig`'s timestamp.
    pub fn timestamp<I: DeviceInterface>(&mut self, sig: &Signal<I>) -> Result<&mut Self> {
        let t = Timestamp::new(sig.timestamp_addr())?;
        let at = t.encode(self.target, &mut self.cmds);
        self.mark(at);
        self.rec.hold(sig);
        Ok(self)
    }

    /// Writes the GPU clock into a slot of the list's own kernel arguments (each bound
    /// copy its own); returns the slot's offset there.
    pub(crate) fn timestamp_in_kernargs(&mut self) -> Result<usize> {
        let t = Timestamp::new(0)?;
        let at = self.cmds.len();
        let (off, expr) = self.rec.stamp_slot();
        let place = Place::Cmd(at + sdma::TimestampField::Address.offset(self.target));
        self.rec.site(place, Enc::U64, expr, What::field("timestamp address"));
        let at = t.encode(self.target, &mut self.cmds);
        self.mark(at);
        Ok(off)
    }

    /// Runs the `dwords` dwords of SDMA packets at `addr` (32-byte aligned) as an
    /// indirect buffer. The ring writer places the packet so it ends on an 8-dword
    /// boundary, as the engine requires.
    pub fn indirect(&mut self, addr: u64, dwords: u32) -> Result<&mut Self> {
        let ib = sdma::Indirect::new(addr, dwords)?;
        let at = ib.encode(self.target, &mut self.cmds);
        self.end_aligned.push(self.sizes.len());
        self.mark(at);
        Ok(self)
    }

    /// Largest single copy packet.
    pub const MAX_COPY: u32 = sdma::MAX_BYTES_PER_PACKET;
}

/// The list a [`Device::submit_ordered`](crate::Device::submit_ordered) closure fills.
pub enum Work<'a> {
    /// A compute list.
    Compute(&'a mut ComputeQueue),
    /// A copy list.
    Copy(&'a mut CopyQueue),
}

impl Work<'_> {
    /// The compute list, or an error for a copy list.
    pub(crate) fn compute(&mut self) -> Result<&mut ComputeQueue> {
        match self {
            Work::Compute(q) => Ok(q),
            Work::Copy(_) => Err(HcqError::Internal {
                what: "a compute submission got the copy list",
            }),
        }
    }

    /// The copy list, or an error for a compute list.
    pub(crate) fn copy(&mut self) -> Result<&mut CopyQueue> {
        match self {
            Work::Copy(q) => Ok(q),
            Work::Compute(_) => Err(HcqError::Internal {
                what: "a copy submission got the compute list",
            }),
        }
    }
}
