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

use amd_kfd::Spread;
use amd_packets::pm4::IndirectBuffer;
use amd_packets::sdma;

use crate::device::Device;
use crate::iface::{BufferKind, DeviceInterface};
use crate::memory::Buffer;
use crate::queue::{ComputeQueue, CopyQueue, Pm4, Sdma};
use crate::record::{Place, Recording, write_site};
use crate::sym::{Bindings, Expr, Var};
use crate::timeline::{OpName, Point};
use crate::{HcqError, Result};

/// Copies of a bound list kept by [`Device::bind`] and [`Device::bind_copy`].
pub const DEFAULT_COPIES: usize = 4;

/// One copy of a bound list in GPU memory.
pub(crate) struct Image<I: DeviceInterface> {
    /// Commands at 0, kernel arguments at the list's `karg_off`.
    pub(crate) buf: Buffer<I>,
    /// Timeline point of its last run.
    pub(crate) last_run: Point,
    /// The encoded value of each group of dynamic sites as last written (valid once
    /// `written`).
    pub(crate) values: Vec<u64>,
    pub(crate) written: bool,
    /// The INDIRECT_BUFFER packet that runs it (a compute list's), encoded once.
    ib: [u32; IndirectBuffer::DWORDS],
    ib_len: usize,
    /// The SDMA INDIRECT packet that runs it (a copy list's), built once.
    copy_ib: Option<CopyQueue>,
    /// The buffers of its runs.
    scratch: Scratch,
}

impl<I: DeviceInterface> Image<I> {
    /// The packet that runs a compute list's copy from the ring.
    pub(crate) fn indirect(&self) -> &[u32] {
        &self.ib[..self.ib_len]
    }

    /// The list that runs a copy list's copy from the SDMA ring (`None` for a compute
    /// list's).
    pub(crate) fn copy_indirect(&self) -> Option<&CopyQueue> {
        self.copy_ib.as_ref()
    }
}

/// A list in GPU memory, in several copies ([`Image`]s, kept by its owner): the
/// recording, and which of its sites change between runs (the others depend only on
/// where the copy lives and were written when it was bound).
pub(crate) struct BoundList {
    pub(crate) rec: Recording,
    pub(crate) dwords: u32,
    /// Runs on the copy queue (SDMA packets) rather than the compute queue.
    pub(crate) copy: bool,
    pub(crate) karg_off: usize,
    /// How a run evaluates the sites that change.
    pub(crate) plan: Plan,
}

impl BoundList {
    /// Copies `words` and `rec`'s kernel arguments into `copies` allocations of `dev`,
    /// with the sites that depend only on the kernel arguments' address written;
    /// returns the list and its copies.
    pub(crate) fn new<I: DeviceInterface>(
        dev: &Device<I>,
        words: &[u32],
        rec: Recording,
        copy: bool,
        copies: usize,
        runtime: &[Var],
    ) -> Result<(Self, Vec<Image<I>>)> {
        if copies == 0 {
            return Err(HcqError::ZeroCopies);
        }
        let karg = rec
            .karg_base
            .as_ref()
            .and_then(|v| rec.vars.iter().position(|x| x == v));
        let mut dynamic = Vec::new();
        let mut fixed = Vec::new();
        for (k, s) in rec.sites.iter().enumerate() {
            let mut used = Vec::new();
            s.expr.var_indices(&mut used);
            if used.iter().all(|&u| Some(u as usize) == karg) {
                fixed.push(k);
            } else {
                dynamic.push(k);
            }
        }
        let (karg_off, size) = image_layout(words.len(), rec.kernargs.len());
        let mut images = Vec::with_capacity(copies);
        for _ in 0..copies {
            let buf = dev.alloc(size, BufferKind::Uncached)?;
            let mut cmds = words.to_vec();
            let mut kargs = rec.kernargs.clone();
            let mut vals = vec![0u64; rec.vars.len()];
            if let Some(i) = karg {
                vals[i] = buf.va() + karg_off as u64;
            }
            for &k in &fixed {
                let s = &rec.sites[k];
                let v = s.expr.eval(&vals).map_err(|_| HcqError::SymbolOverflow {
                    what: s.what.to_string(),
                })?;
                let bits = s
                    .enc
                    .encode(v)
                    .ok_or_else(|| crate::record::does_not_fit(&s.what, v, s.enc))?;
                write_site(s, bits, &mut cmds, &mut kargs)?;
            }
            buf.write(0, zerocopy::IntoBytes::as_bytes(cmds.as_slice()))?;
            if !kargs.is_empty() {
                buf.write(karg_off, &kargs)?;
            }
            let mut ib = [0; IndirectBuffer::DWORDS];
            let copy_ib = if copy {
                let mut q = CopyQueue::new(dev.props().target);
                q.indirect(buf.va(), words.len() as u32)?;
                Some(q)
            } else {
                None
            };
            let ib_len = if copy {
                0
            } else {
                let mut sink = amd_packets::SliceSink::new(&mut ib);
                IndirectBuffer::new(buf.va(), words.len() as u32)?.encode(dev.props().target, &mut sink);
                sink.finish().ok_or(HcqError::Internal {
                    what: "an INDIRECT_BUFFER packet does not fit its buffer",
                })?
            };
            images.push(Image {
                buf,
                last_run: Point::default(),
                values: Vec::new(),
                written: false,
                ib,
                ib_len,
                copy_ib,
                scratch: Scratch::default(),
            });
        }
        let plan = Plan::new(&rec, &dynamic, karg_off, runtime);
        let list = BoundList {
            rec,
            dwords: words.len() as u32,
            copy,
            karg_off,
            plan,
        };
        Ok((list, images))
    }

    /// Writes the dynamic sites of `img` whose values changed, with `vals` and the
    /// runtime's `runtime` values bound; checks every value before writing any.
    pub(crate) fn update<I: DeviceInterface>(
        &self,
        img: &mut Image<I>,
        vals: &Bindings,
        runtime: &[u64],
    ) -> Result<()> {
        let base = img.buf.va() + self.karg_off as u64;
        let buf = &img.buf;
        let r = update_sites(
            &self.rec,
            &self.plan,
            base,
            (&mut img.values, img.written),
            vals,
            runtime,
            &mut img.scratch,
            |values, places| buf.write_le_spread(values, places),
        );
        img.written |= r.is_ok();
        r
    }
}

/// What a run of a bound list evaluates: a flat program over a table of values (each
/// variable's, then the constants and the distinct subexpressions of the dynamic sites
/// and launch checks, each computed once from earlier entries), the distinct launch
/// checks, then each group of dynamic sites from its entry.
#[derive(Debug, Default)]
pub(crate) struct Plan {
    /// The variables bound by the caller: (entry, variable id), the variables
    /// themselves (for errors) at the same index in `users`.
    user_entries: Vec<(u32, u32)>,
    users: Vec<Var>,
    /// The variables the runtime gives values (graph replay number, timelines):
    /// (entry, index in the run's runtime values).
    runtime_entries: Vec<(u32, usize)>,
    /// The entries of the kernel arguments' address in the copy that runs.
    karg_entries: Vec<u32>,
    /// Every entry before a run: the constants in their places, the rest 0.
    init: Vec<u64>,
    /// The computed entries, in order.
    steps: Vec<Step>,
    /// The last entry of each distinct expression, in order (errors name the
    /// expression of the first root at or after a failing entry).
    roots: Vec<u32>,
    /// What each expression is (for errors).
    what: Vec<crate::record::What>,
    /// The dynamic sites that take one value the same way, in the order of their
    /// first sites.
    groups: Vec<Group>,
    /// Where each group's value goes, group by group: byte offsets in the image.
    targets: Vec<usize>,
    /// The recording's index of each group's first site (for errors).
    group_site: Vec<usize>,
    /// How many dynamic sites the groups hold.
    sites: usize,
    /// The distinct launch checks (errors name the launch from them).
    checks: Vec<PlanCheck>,
    /// The checks evaluated in full at each run (a workgroup size not constant, or a
    /// constant part refused), as indices into `checks`.
    full: Vec<u32>,
    /// What the other checks come down to: each grid size that is not constant must
    /// lie in `1..=max` (it fits 32 bits, and so does its product with the constant
    /// workgroup size).
    limits: Vec<Limit>,
}

/// A grid size's range: `1..=max` at entry `entry`, from the launch check `check`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Limit {
    entry: u32,
    max: u64,
    check: u32,
}

/// A computed entry: `out = op(a, b)`, operands earlier entries.
#[derive(Debug, Clone, Copy)]
struct Step {
    op: crate::sym::Op,
    out: u32,
    a: u32,
    b: u32,
}

/// What shares equal subexpressions while a plan is built.
#[derive(Debug, Clone, Copy, Hash, PartialEq, Eq)]
enum Key {
    Const(u64),
    Op(crate::sym::Op, u32, u32),
}

/// Builds a plan's entries.
struct StepBuilder<'a> {
    plan: &'a mut Plan,
    seen: std::collections::HashMap<Key, u32>,
}

impl StepBuilder<'_> {
    fn entry(&mut self, key: Key) -> u32 {
        if let Some(&e) = self.seen.get(&key) {
            return e;
        }
        let out = self.plan.init.len() as u32;
        match key {
            Key::Const(c) => self.plan.init.push(c),
            Key::Op(op, a, b) => {
                self.plan.init.push(0);
                self.plan.steps.push(Step { op, out, a, b });
            }
        }
        self.seen.insert(key, out);
        out
    }

    /// The entry computing `e` (variables are entries `0..`).
    fn expr(&mut self, e: &Expr) -> u32 {
        match e {
            Expr::Const(c) => self.entry(Key::Const(*c)),
            Expr::Var(i) => *i,
            Expr::VarAdd(i, c) => {
                let c = self.entry(Key::Const(*c));
                self.entry(Key::Op(crate::sym::Op::Add, *i, c))
            }
            Expr::Op(n) => {
                let (a, b) = (self.expr(&n.1), self.expr(&n.2));
                self.entry(Key::Op(n.0, a, b))
            }
        }
    }
}

impl Plan {
    /// The plan of `rec`'s `dynamic` sites in an image with the kernel arguments at
    /// byte `karg_off`; variables in `runtime` take their values from the run's
    /// runtime values (same order).
    pub(crate) fn new(rec: &Recording, dynamic: &[usize], karg_off: usize, runtime: &[Var]) -> Plan {
        let mut p = Plan::default();
        for (entry, v) in rec.vars.iter().enumerate() {
            let entry = entry as u32;
            if Some(v) == rec.karg_base.as_ref() {
                p.karg_entries.push(entry);
            } else if let Some(i) = runtime.iter().position(|r| r == v) {
                p.runtime_entries.push((entry, i));
            } else {
                p.user_entries.push((entry, v.id()));
                p.users.push(v.clone());
            }
            p.init.push(0);
        }
        let mut b = StepBuilder {
            plan: &mut p,
            seen: Default::default(),
        };
        let mut roots: Vec<(u32, crate::record::What)> = Vec::new();
        let mut index = |e: &Expr, what: &crate::record::What, b: &mut StepBuilder<'_>| -> u32 {
            let before = b.plan.init.len();
            let n = b.expr(e);
            if b.plan.init.len() > before {
                roots.push((n, what.clone()));
            }
            n
        };
        /// A group being gathered: entry, encoding, bytes stored, first site, the
        /// sites' offsets.
        struct Draft(u32, crate::record::Enc, u8, usize, Vec<usize>);
        let mut groups: Vec<Draft> = Vec::new();
        for &k in dynamic {
            let s = &rec.sites[k];
            let entry = index(&s.expr, &s.what, &mut b);
            let (at, len) = match s.place {
                Place::Cmd(at) => (at * 4, s.enc.bytes.max(4)),
                Place::Karg(at) => (karg_off + at, s.enc.bytes),
            };
            match groups.iter_mut().find(|g| g.0 == entry && g.1 == s.enc && g.2 == len) {
                Some(g) => g.4.push(at),
                None => groups.push(Draft(entry, s.enc, len, k, vec![at])),
            }
        }
        let mut checks: Vec<PlanCheck> = Vec::new();
        for c in &rec.checks {
            let what = crate::record::What::of(&c.kernel, "launch size", None);
            let g = [0, 1, 2].map(|a| index(&c.global[a], &what, &mut b));
            let l = [0, 1, 2].map(|a| index(&c.local[a], &what, &mut b));
            let check = PlanCheck(g, l, c.max_workgroup, c.kernel.clone());
            if !checks
                .iter()
                .any(|x| x.0 == check.0 && x.1 == check.1 && x.2 == check.2)
            {
                checks.push(check);
            }
        }
        p.sites = dynamic.len();
        for Draft(entry, enc, bytes, site, targets) in groups {
            let start = p.targets.len() as u32;
            p.targets.extend(targets);
            p.groups
                .push(Group::new(entry, enc, bytes, (start, p.targets.len() as u32)));
            p.group_site.push(site);
        }
        p.limits_of(&checks);
        p.checks = checks;
        (p.roots, p.what) = roots.into_iter().unzip();
        p
    }

    /// Splits `checks` into those evaluated in full and the grid sizes' limits (a
    /// check whose workgroup size and maximum are constant and valid only bounds its
    /// grid sizes that are not constant).
    fn limits_of(&mut self, checks: &[PlanCheck]) {
        // The constant entries and their values: the constants, and what is computed
        // from constants only (each run computes the same; what overflows is left to
        // the runs, to report).
        let vars = self.users.len() + self.runtime_entries.len() + self.karg_entries.len();
        let mut known: Vec<Option<u64>> = self.init.iter().map(|&c| Some(c)).collect();
        for k in known.iter_mut().take(vars) {
            *k = None;
        }
        for s in &self.steps {
            let v = match (known[s.a as usize], known[s.b as usize]) {
                (Some(a), Some(b)) => s.op.apply(a, b),
                _ => None,
            };
            known[s.out as usize] = v;
        }
        let max32 = u32::MAX as u64;
        for (i, PlanCheck(g, l, max, _)) in checks.iter().enumerate() {
            let i = i as u32;
            let local = l.map(|e| known[e as usize]);
            let limits = match local {
                [Some(l0), Some(l1), Some(l2)]
                    if [l0, l1, l2].iter().all(|&x| (1..=u16::MAX as u64).contains(&x))
                        && l0 * l1 * l2 <= u64::from(*max) =>
                {
                    let mut out = Vec::new();
                    let ok = g.iter().zip([l0, l1, l2]).all(|(&e, l)| {
                        let most = max32 / l;
                        match known[e as usize] {
                            Some(v) => (1..=most).contains(&v),
                            None => {
                                out.push(Limit {
                                    entry: e,
                                    max: most,
                                    check: i,
                                });
                                true
                            }
                        }
                    });
                    ok.then_some(out)
                }
                _ => None,
            };
            match limits {
                Some(out) => {
                    for l in out {
                        if !self.limits.iter().any(|x| x.entry == l.entry && x.max == l.max) {
                            self.limits.push(l);
                        }
                    }
                }
                None => self.full.push(i),
            }
        }
    }

    /// The error of a run whose grid size at a limit's entry is out of its range: the
    /// launch check's own.
    #[cold]
    fn limit_error(&self, lim: &Limit, values: &[u64]) -> HcqError {
        let value = |i: u32| values.get(i as usize).copied().unwrap_or(0);
        match self.checks.get(lim.check as usize) {
            Some(PlanCheck(g, l, max, kernel)) => {
                match crate::record::check_launch(kernel, g.map(value), l.map(value), *max) {
                    Err(e) => e,
                    Ok(()) => HcqError::Internal {
                        what: "a launch's plan refused sizes its check takes",
                    },
                }
            }
            None => HcqError::Internal {
                what: "a launch limit without its check",
            },
        }
    }

    /// The sites a run evaluates.
    pub(crate) fn len(&self) -> usize {
        self.sites
    }

    /// Every site of `rec` evaluated at each run.
    #[cfg(test)]
    pub(crate) fn all(rec: &Recording) -> Plan {
        Plan::new(rec, &(0..rec.sites.len()).collect::<Vec<_>>(), 0, &[])
    }

    /// The launch checks a run evaluates in full (see `full`), over the entries' values.
    #[inline(never)]
    fn check_in_full(&self, values: &[u64]) -> Result<()> {
        let value = |i: u32| values.get(i as usize).copied().unwrap_or(0);
        for &i in &self.full {
            if let Some(PlanCheck(g, l, max, kernel)) = self.checks.get(i as usize) {
                crate::record::check_launch(kernel, g.map(value), l.map(value), *max)?;
            }
        }
        Ok(())
    }

    /// The error of a run whose entry `k` overflowed (or divided by zero).
    #[cold]
    fn overflow(&self, k: u32) -> HcqError {
        let what = self
            .roots
            .iter()
            .position(|&r| r >= k)
            .and_then(|i| self.what.get(i))
            .map_or_else(|| "a value".to_string(), |w| w.to_string());
        HcqError::SymbolOverflow { what }
    }

    /// The error of a run missing the caller's variable `i`.
    #[cold]
    fn unbound(&self, i: u32) -> HcqError {
        match self.users.get(i as usize) {
            Some(v) => crate::sym::unbound(v),
            None => HcqError::Internal {
                what: "a plan's variable outside its list of variables",
            },
        }
    }

    /// The error of a run whose group `i`'s value does not fit its field (named by the
    /// group's first site, the first in the list to refuse it).
    #[cold]
    fn does_not_fit(&self, rec: &Recording, i: usize, v: u64) -> HcqError {
        match self.group_site.get(i).and_then(|&k| rec.sites.get(k)) {
            Some(s) => crate::record::does_not_fit(&s.what, v, s.enc),
            None => HcqError::Internal {
                what: "a plan's group without its site",
            },
        }
    }
}

/// A launch check: grid and workgroup entries, maximum workgroup, kernel.
#[derive(Debug)]
struct PlanCheck([u32; 3], [u32; 3], u32, std::sync::Arc<str>);

/// Dynamic sites that take one value the same way: a run encodes and compares it
/// once, and stores it at every site when it changed.
#[derive(Debug, Clone, Copy)]
struct Group {
    /// Index into the run's values.
    entry: u32,
    /// Its encoding without branches: a value `v` fits when `v - lo` (wrapping) is
    /// at most `span`, and is written as `(v & mask) - sub` (see
    /// [`crate::record::Enc::encode`], which this agrees with).
    lo: u64,
    span: u64,
    mask: u64,
    sub: u64,
    /// Bytes stored at each site (a command dword takes at least 4).
    bytes: u8,
    /// Its sites' offsets: `Plan::targets[targets.0..targets.1]`.
    targets: (u32, u32),
}

impl Group {
    fn new(entry: u32, enc: crate::record::Enc, bytes: u8, targets: (u32, u32)) -> Group {
        let (lo, span, mask) = if enc.truncate {
            let mask = if enc.bytes >= 8 {
                u64::MAX
            } else {
                (1 << (8 * enc.bytes)) - 1
            };
            (0, u64::MAX, mask)
        } else {
            // Every field a recording makes has `min` 0 or 1 and `max` at least `min`.
            (enc.min, enc.max.saturating_sub(enc.min), u64::MAX)
        };
        Group {
            entry,
            lo,
            span,
            mask,
            sub: u64::from(enc.minus_one),
            bytes,
            targets,
        }
    }

    /// The bits to write for `v`, or `None` when the field cannot hold it.
    #[inline]
    fn encode(&self, v: u64) -> Option<u64> {
        // `sub` (1) only comes with a `min` of at least 1, so the result never wraps.
        (v.wrapping_sub(self.lo) <= self.span).then_some((v & self.mask).wrapping_sub(self.sub))
    }
}

/// Reused buffers of the runs of one plan.
#[derive(Debug, Default)]
pub(crate) struct Scratch {
    /// The value of each plan entry (the constants stay from run to run).
    values: Vec<u64>,
    /// Where each of the caller's variables was in the bindings of the last run.
    hints: Vec<usize>,
    /// The groups whose values changed in a run: each value, its offsets in the
    /// plan's targets and its size.
    changed: Vec<Spread>,
}

impl Scratch {
    /// Sized for `plan` (a copy's first run): every entry from the plan's `init`, a
    /// hint per variable of the caller's.
    #[cold]
    fn prepare(&mut self, plan: &Plan) {
        self.values.clear();
        self.values.extend_from_slice(&plan.init);
        self.hints.clear();
        self.hints.resize(plan.user_entries.len(), 0);
    }
}

/// `last` as `n` groups never written (a copy's first run, or after a failed one).
#[cold]
fn fresh(last: &mut Vec<u64>, n: usize) {
    last.clear();
    last.resize(n, 0);
}

/// The core of a bound replay: resolves the variables (`vals`, the `runtime` values
/// of the run, and the kernel arguments' address `karg_va`), evaluates the plan,
/// and only if every value is valid calls `write(values, offsets)` once: a [`Spread`]
/// for each group of sites whose encoded value differs from `last` (every group when
/// `!written`), its sites' byte offsets being `offsets[from..to]`; keeps
/// the new values in `last` (emptied when a value is refused or the stores fail, so the
/// next run writes every site).
#[allow(clippy::too_many_arguments)]
pub(crate) fn update_sites(
    rec: &Recording,
    plan: &Plan,
    karg_va: u64,
    (last, written): (&mut Vec<u64>, bool),
    vals: &Bindings,
    runtime: &[u64],
    scratch: &mut Scratch,
    write: impl FnOnce(&[Spread], &[usize]) -> Result<()>,
) -> Result<()> {
    if scratch.values.len() != plan.init.len() || scratch.hints.len() != plan.user_entries.len() {
        scratch.prepare(plan);
    }
    let ev = &mut scratch.values;
    // Every entry index is below `init`'s length, as `ev`'s is.
    for (k, (&(e, id), hint)) in plan.user_entries.iter().zip(scratch.hints.iter_mut()).enumerate() {
        ev[e as usize] = vals.get_id(id, hint).ok_or_else(|| plan.unbound(k as u32))?;
    }
    for &(e, i) in &plan.runtime_entries {
        ev[e as usize] = runtime.get(i).copied().unwrap_or(0);
    }
    for &e in &plan.karg_entries {
        ev[e as usize] = karg_va;
    }
    for s in &plan.steps {
        // Operands are earlier entries and every entry is in `ev` (`init`'s length).
        let (a, b) = (ev[s.a as usize], ev[s.b as usize]);
        ev[s.out as usize] = s.op.apply(a, b).ok_or_else(|| plan.overflow(s.out))?;
    }
    let ev = &scratch.values;
    let value = |i: u32| ev[i as usize];
    for lim in &plan.limits {
        let v = value(lim.entry);
        if v == 0 || v > lim.max {
            return Err(plan.limit_error(lim, ev));
        }
    }
    if !plan.full.is_empty() {
        plan.check_in_full(ev)?;
    }
    let n = plan.groups.len();
    // A run whose stores failed left `last` empty: every site is written again.
    let written = written && last.len() == n;
    if !written {
        fresh(last, n);
    }
    let changed = &mut scratch.changed;
    changed.clear();
    for (i, (g, o)) in plan.groups.iter().zip(last.iter_mut()).enumerate() {
        let v = value(g.entry);
        let Some(bits) = g.encode(v) else {
            // Some groups of `last` may hold values never written.
            last.clear();
            return Err(plan.does_not_fit(rec, i, v));
        };
        if !written || *o != bits {
            *o = bits;
            changed.push(Spread {
                value: bits,
                from: g.targets.0,
                to: g.targets.1,
                bytes: g.bytes,
            });
        }
    }
    if let Err(e) = write(changed, &plan.targets) {
        last.clear();
        return Err(e);
    }
    Ok(())
}

/// A compute or copy list living in GPU memory (see [`Device::bind`],
/// [`Device::bind_copy`]).
pub struct BoundQueue<I: DeviceInterface = crate::AnyIface> {
    dev: Device<I>,
    list: BoundList,
    images: Vec<Mutex<Image<I>>>,
    next: std::sync::atomic::AtomicUsize,
}

impl<I: DeviceInterface> std::fmt::Debug for BoundQueue<I> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BoundQueue")
            .field("dwords", &self.list.dwords)
            .field("copy", &self.list.copy)
            .field("copies", &self.images.len())
            .field("vars", &self.list.rec.vars)
            .finish()
    }
}

impl<I: DeviceInterface> BoundQueue<I> {
    /// Dwords in the list.
    pub fn len(&self) -> usize {
        self.list.dwords as usize
    }

    /// Whether it runs on the copy queue.
    pub fn is_copy(&self) -> bool {
        self.list.copy
    }

    /// Whether the list is empty (never: binding refuses empty lists).
    pub fn is_empty(&self) -> bool {
        self.list.dwords == 0
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
        if at
            .checked_add(words.len())
            .is_none_or(|e| e > self.list.dwords as usize)
        {
            return Err(HcqError::PatchRange {
                at,
                len: words.len(),
                dwords: self.list.dwords as usize,
            });
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
        let n = self.images.len();
        let i = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % n;
        let mut img = self.images[i].lock();
        dev.wait_point(img.last_run)?;
        self.list.update(&mut img, vals, &[])?;
        let (va, dwords) = (img.buf.va(), self.list.dwords);
        let p = if self.list.copy {
            dev.submit_point::<Sdma>(OpName::Static("bound list"), |q| q.indirect(va, dwords).map(|_| ()))?
        } else {
            dev.submit_point::<Pm4>(OpName::Static("bound list"), |q| {
                q.cmds.extend_from_slice(img.indirect());
                Ok(())
            })?
        };
        img.last_run = p;
        Ok(p.logical())
    }
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
            return Err(HcqError::ListSize {
                list: "bound list",
                dwords: words.len(),
                max: IndirectBuffer::MAX_DWORDS as usize,
            });
        }
        if q.target != self.props().target {
            return Err(HcqError::ListTarget {
                kernel: None,
                list: q.target,
                action: "bound on",
                arch: self.props().arch.clone(),
                target: self.props().target,
            });
        }
        self.bind_words(words, q.rec.clone(), false, copies)
    }

    /// Copies `q`'s SDMA packets into GPU memory (padded with NOPs to 8 dwords,
    /// [`DEFAULT_COPIES`] copies); [`BoundQueue::submit`] then runs them with one SDMA
    /// INDIRECT packet. A list that itself holds an INDIRECT packet is refused (the
    /// engine does not nest them).
    pub fn bind_copy(&self, q: &CopyQueue) -> Result<BoundQueue<I>> {
        if !q.end_aligned.is_empty() {
            return Err(HcqError::NestedIndirect);
        }
        let mut words = q.dwords().to_vec();
        if words.is_empty() || words.len() > sdma::Indirect::MAX_DWORDS as usize {
            return Err(HcqError::ListSize {
                list: "bound copy list",
                dwords: words.len(),
                max: sdma::Indirect::MAX_DWORDS as usize,
            });
        }
        words.resize(words.len().next_multiple_of(8), 0);
        self.bind_words(&words, q.rec.clone(), true, DEFAULT_COPIES)
    }

    fn bind_words(&self, words: &[u32], rec: Recording, copy: bool, copies: usize) -> Result<BoundQueue<I>> {
        let (list, images) = BoundList::new(self, words, rec, copy, copies, &[])?;
        Ok(BoundQueue {
            dev: self.clone(),
            list,
            images: images.into_iter().map(Mutex::new).collect(),
            next: std::sync::atomic::AtomicUsize::new(0),
        })
    }

    /// Runs a bound list of this device without variables (see [`BoundQueue::submit`]).
    pub fn submit_bound(&self, b: &BoundQueue<I>) -> Result<u64> {
        if !std::sync::Arc::ptr_eq(&b.dev.inner, &self.inner) {
            return Err(HcqError::WrongDevice {
                bound: b.dev.index(),
                device: self.index(),
            });
        }
        b.submit(&Bindings::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Enc;
    use crate::sym::Sym;
    use amd_packets::GfxTarget;
    use proptest::prelude::*;

    /// A field: a constant, or variable `v` times `m` plus `c`.
    #[derive(Clone, Debug)]
    enum F {
        Const(u64),
        Var(usize, u64, u64),
    }

    impl F {
        fn sym(&self, vars: &[Var]) -> Sym {
            match self {
                F::Const(c) => Sym::Const(*c),
                F::Var(v, m, c) => &vars[*v] * *m + *c,
            }
        }
        fn value(&self, vals: &[u64]) -> u64 {
            match self {
                F::Const(c) => *c,
                F::Var(v, m, c) => vals[*v] * m + c,
            }
        }
    }

    #[derive(Clone, Debug)]
    enum Cmd {
        Wait(F, F),
        Signal(F, F),
        Copy(F, F, F),
    }

    fn field(max: u64) -> impl Strategy<Value = F> {
        prop_oneof![
            (0..=max).prop_map(F::Const),
            (0usize..3, 1u64..4, 0..=max / 8).prop_map(|(v, m, c)| F::Var(v, m, c)),
        ]
    }

    fn cmd() -> impl Strategy<Value = Cmd> {
        let addr = || field(1 << 40);
        prop_oneof![
            (addr(), field(1 << 33)).prop_map(|(a, v)| Cmd::Wait(a, v)),
            (addr(), field(1 << 33)).prop_map(|(a, v)| Cmd::Signal(a, v)),
            // Symbolic sizes stay within one packet: at most (1 << 19) * 3 + (1 << 16).
            (
                addr(),
                addr(),
                prop_oneof![
                    (1u64..=12 << 20).prop_map(F::Const),
                    (0usize..3, 1u64..4, 1u64..=1 << 16).prop_map(|(v, m, c)| F::Var(v, m, c))
                ]
            )
                .prop_map(|(d, s, n)| Cmd::Copy(d, s, n)),
        ]
    }

    /// Builds the list with the fields as symbols (`vars`) or as their values.
    fn build(copy: bool, cmds: &[Cmd], vars: &[Var], vals: Option<&[u64]>) -> (Vec<u32>, Recording) {
        let s = |f: &F| match vals {
            Some(v) => Sym::Const(f.value(v)),
            None => f.sym(vars),
        };
        let t = GfxTarget::Gfx11;
        if copy {
            let mut q = CopyQueue::new(t);
            for c in cmds {
                match c {
                    Cmd::Wait(a, v) => {
                        q.wait_addr(s(a), s(v));
                    }
                    Cmd::Signal(a, v) => {
                        q.signal_addr(s(a), s(v), None);
                    }
                    Cmd::Copy(d, src, n) => {
                        q.copy(s(d), s(src), s(n)).unwrap();
                    }
                }
            }
            (q.cmds, q.rec)
        } else {
            let mut q = ComputeQueue::new(t);
            for c in cmds {
                match c {
                    Cmd::Wait(a, v) | Cmd::Copy(a, v, _) => {
                        q.wait_addr(s(a), s(v));
                    }
                    Cmd::Signal(a, v) => {
                        q.signal_addr(s(a), s(v), Some((0x1000, 7)));
                    }
                }
            }
            (q.cmds, q.rec)
        }
    }

    /// Replays the symbolic list into an image with `vals`; returns the dword offsets
    /// written.
    fn replay(
        rec: &Recording,
        image: &mut [u32],
        last: &mut Vec<u64>,
        written: bool,
        vars: &[Var],
        vals: &[u64],
    ) -> Vec<usize> {
        let plan = Plan::all(rec);
        let mut b = Bindings::new();
        for (v, x) in vars.iter().zip(vals) {
            b.set(v, *x);
        }
        let mut wrote = Vec::new();
        let mut scratch = Scratch::default();
        update_sites(
            rec,
            &plan,
            0,
            (last, written),
            &b,
            &[],
            &mut scratch,
            |values, offsets| {
                for s in values {
                    for &off in &offsets[s.from as usize..s.to as usize] {
                        let bytes = &s.value.to_le_bytes()[..usize::from(s.bytes)];
                        for (i, w) in bytes.chunks(4).enumerate() {
                            image[off / 4 + i] = u32::from_le_bytes(w.try_into().unwrap());
                            wrote.push(off / 4 + i);
                        }
                    }
                }
                Ok(())
            },
        )
        .unwrap();
        wrote
    }

    /// Equal subexpressions are computed once, and a value that overflows names the
    /// field whose expression it is, even when an earlier field shares part of it.
    #[test]
    fn a_plan_shares_subexpressions_and_names_what_overflows() {
        let (a, b) = (Var::new("a"), Var::new("b"));
        let mut q = ComputeQueue::new(GfxTarget::Gfx11);
        let shared = Sym::from(&a) * 4u32;
        q.wait_addr(&shared + 0x1000u32, Sym::from(&b));
        q.signal_addr(&shared + 0x2000u32, Sym::from(&b) - 3u32, None);
        let plan = Plan::all(&q.rec);
        let nodes = plan.init.len();
        // a, b, `a * 4` with its 4, the two additions and their constants, `b - 3`
        // and its 3: `a * 4` once.
        let ops = plan.steps.iter().filter(|s| s.op == crate::sym::Op::Mul).count();
        assert_eq!(ops, 1, "{:?}", plan.steps);
        let mut last = Vec::new();
        let mut scratch = Scratch::default();
        let run = |vals: &Bindings, last: &mut Vec<u64>, scratch: &mut Scratch| {
            update_sites(&q.rec, &plan, 0, (last, false), vals, &[], scratch, |_, _| Ok(()))
        };
        run(&Bindings::from([(&a, 1), (&b, 5)]), &mut last, &mut scratch).unwrap();
        assert_eq!(scratch.values.len(), nodes);
        // The same variables bound in another order are still found (each run looks
        // first where the last found it).
        run(&Bindings::from([(&b, 6), (&a, 2)]), &mut last, &mut scratch).unwrap();
        assert_eq!(scratch.values[..2], [2, 6]);
        run(&Bindings::from([(&a, 1), (&b, 5)]), &mut last, &mut scratch).unwrap();
        assert_eq!(scratch.values[..2], [1, 5]);
        let err = run(&Bindings::from([(&a, 1), (&b, 2)]), &mut last, &mut scratch)
            .unwrap_err()
            .to_string();
        assert!(err.contains("signal value") && err.contains("negative"), "{err}");
        // Refused before any site: what the image holds is still what `last` says.
        assert_eq!(last.len(), plan.groups.len());
        let err = run(&Bindings::from([(&a, u64::MAX / 2), (&b, 5)]), &mut last, &mut scratch)
            .unwrap_err()
            .to_string();
        assert!(err.contains("wait address") && err.contains("overflows"), "{err}");
        let err = run(&Bindings::from([(&a, 1)]), &mut last, &mut scratch)
            .unwrap_err()
            .to_string();
        assert!(err.contains("variable b is not bound"), "{err}");
    }

    /// Stores that fail leave no record of what was written: the next run writes every
    /// site again, so an image never keeps a value its record says it does not have.
    #[test]
    fn failed_stores_make_the_next_run_write_every_site() {
        let vars = [Var::new("a"), Var::new("b"), Var::new("c")];
        let cmds = [
            Cmd::Wait(F::Var(0, 1, 0), F::Var(1, 1, 0)),
            Cmd::Signal(F::Var(2, 1, 8), F::Const(5)),
        ];
        let (_, rec) = build(false, &cmds, &vars, None);
        let plan = Plan::all(&rec);
        let b = Bindings::from([(&vars[0], 0x1000), (&vars[1], 2), (&vars[2], 0x2000)]);
        let mut last = Vec::new();
        let mut scratch = Scratch::default();
        let run = |last: &mut Vec<u64>, scratch: &mut Scratch, written: bool, fail: bool| {
            let mut n = 0;
            let r = update_sites(&rec, &plan, 0, (last, written), &b, &[], scratch, |values, _| {
                n = values.iter().map(|s| (s.to - s.from) as usize).sum();
                if fail {
                    Err(HcqError::Internal { what: "store refused" })
                } else {
                    Ok(())
                }
            });
            (r.is_ok(), n)
        };
        let all = run(&mut last, &mut scratch, false, false).1;
        assert!(all >= 3, "{all} sites");
        assert_eq!(run(&mut last, &mut scratch, true, false), (true, 0), "nothing changed");
        assert_eq!(run(&mut last, &mut scratch, false, true), (false, all));
        assert!(last.is_empty());
        assert_eq!(
            run(&mut last, &mut scratch, true, false),
            (true, all),
            "every site again"
        );
    }

    /// A group's branch-free encoding takes and refuses what its field's does, and
    /// writes the same bits, for every kind of field a recording makes.
    #[test]
    fn group_encoding_agrees_with_the_fields() {
        let count = Enc {
            minus_one: true,
            ..Enc::bounded(4, 1, 0x3f_ffff)
        };
        let fields = [
            Enc::U64,
            Enc::U32,
            Enc::LOW32,
            Enc::bounded(4, 1, u32::MAX as u64),
            Enc::bounded(2, 1, u16::MAX as u64),
            Enc::bounded(1, 0, 0xff),
            Enc::bounded(2, 0, 1000),
            count,
            Enc {
                truncate: true,
                ..Enc::U64
            },
        ];
        for enc in fields {
            let g = Group::new(0, enc, enc.bytes, (0, 0));
            let mut values = vec![0, 1, 2, 0xff, 0x100, 1000, 1001, 0xffff, 0x1_0000, 0x3f_ffff, 0x40_0000];
            values.extend([u32::MAX as u64 - 1, u32::MAX as u64, 1 << 32, u64::MAX - 1, u64::MAX]);
            for v in values {
                assert_eq!(g.encode(v), enc.encode(v), "{enc:?} with {v:#x}");
            }
        }
    }

    /// Sites that take one value the same way are one group: the value is checked
    /// once, and every one of its sites is written when it changes (and none when it
    /// does not).
    #[test]
    fn sites_sharing_a_value_are_written_together() {
        let vars = [Var::new("a"), Var::new("b"), Var::new("c")];
        let addr = F::Var(0, 2, 8);
        let cmds = [
            Cmd::Wait(addr.clone(), F::Var(1, 1, 0)),
            Cmd::Wait(addr.clone(), F::Const(3)),
            Cmd::Copy(addr, F::Var(2, 1, 0), F::Const(64)),
        ];
        for copy in [false, true] {
            let (mut image, rec) = build(copy, &cmds, &vars, None);
            let plan = Plan::all(&rec);
            assert!(
                plan.groups.len() < plan.len(),
                "{} groups of {} sites",
                plan.groups.len(),
                plan.len()
            );
            let mut last = Vec::new();
            let (v1, v2, v3) = ([0x1000, 5, 0x8000], [0x2000, 5, 0x8000], [0x2000, 6, 0x8000]);
            replay(&rec, &mut image, &mut last, false, &vars, &v1);
            let fresh1 = build(copy, &cmds, &vars, Some(&v1)).0;
            assert_eq!(image, fresh1);
            let wrote = replay(&rec, &mut image, &mut last, true, &vars, &v2);
            let fresh2 = build(copy, &cmds, &vars, Some(&v2)).0;
            assert_eq!(image, fresh2);
            // Every address site (two dwords each), nothing else.
            let differ: Vec<usize> = (0..image.len()).filter(|&i| fresh1[i] != fresh2[i]).collect();
            assert_eq!(differ.len(), 3, "copy list: {copy}");
            assert!(differ.iter().all(|d| wrote.contains(d)), "{differ:?} {wrote:?}");
            assert_eq!(wrote.len(), 6, "copy list: {copy}");
            // Only b changed: the address group is left alone.
            let wrote = replay(&rec, &mut image, &mut last, true, &vars, &v3);
            assert_eq!(image, build(copy, &cmds, &vars, Some(&v3)).0);
            assert!(wrote.len() <= 1, "{wrote:?}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// A replay with values V leaves exactly the dwords a fresh build with V has,
        /// writing only sites whose values changed, and every dword that changed.
        #[test]
        fn a_replay_writes_what_a_fresh_build_has_and_no_more(
            copy in any::<bool>(),
            cmds in proptest::collection::vec(cmd(), 1..12),
            v1 in proptest::array::uniform3(0u64..1 << 18),
            v2 in proptest::array::uniform3(0u64..1 << 18),
        ) {
            let vars = [Var::new("a"), Var::new("b"), Var::new("c")];
            let (mut image, rec) = build(copy, &cmds, &vars, None);
            let mut last = Vec::new();
            replay(&rec, &mut image, &mut last, false, &vars, &v1);
            let (fresh1, _) = build(copy, &cmds, &vars, Some(&v1));
            prop_assert_eq!(&image, &fresh1);
            let wrote = replay(&rec, &mut image, &mut last, true, &vars, &v2);
            let (fresh2, _) = build(copy, &cmds, &vars, Some(&v2));
            prop_assert_eq!(&image, &fresh2);
            for (i, (a, b)) in fresh1.iter().zip(&fresh2).enumerate() {
                if a != b {
                    prop_assert!(wrote.contains(&i), "dword {} changed but was not written", i);
                }
            }
            // Each write belongs to a site whose value changed.
            for &w in &wrote {
                let site = rec.sites.iter().position(|s| match s.place {
                    Place::Cmd(at) => (at..at + s.enc.bytes.max(4) as usize / 4).contains(&w),
                    Place::Karg(_) => false,
                });
                prop_assert!(site.is_some(), "dword {} is no site", w);
            }
            let changed_sites = rec.sites.iter().filter(|s| {
                let Place::Cmd(at) = s.place else { return false };
                let n = s.enc.bytes.max(4) as usize / 4;
                fresh1[at..at + n] != fresh2[at..at + n]
            }).count();
            let n_writes = wrote.len();
            let site_dwords: usize = rec.sites.iter().filter(|s| {
                let Place::Cmd(at) = s.place else { return false };
                let n = s.enc.bytes.max(4) as usize / 4;
                fresh1[at..at + n] != fresh2[at..at + n]
            }).map(|s| s.enc.bytes.max(4) as usize / 4).sum();
            prop_assert_eq!(n_writes, site_dwords, "{} sites changed", changed_sites);
        }
    }
}
