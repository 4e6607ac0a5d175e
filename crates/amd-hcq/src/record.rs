//! What a command list records besides its constant dwords: the variables, the
//! *sites* where a symbol's value lands (dwords of the list, or bytes of the kernel
//! arguments it carries), the launch-size checks and what the list keeps alive; and
//! how submitting writes each site.

use std::any::Any;
use std::sync::Arc;

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
    pub(crate) fn hold<I: DeviceInterface>(&mut self, sig: &Signal<I>) {
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
