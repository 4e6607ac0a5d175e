//! Submitting recorded lists directly: bind the variables, place the kernel arguments
//! in the device's argument ring, write every site, and put the dwords in the ring,
//! ordered on the timeline.

use crate::device::Device;
use crate::iface::DeviceInterface;
use crate::profile::Times;
use crate::queue::{CmdList, ComputeQueue, CopyQueue};
use crate::resources::KernargRing;
use crate::rings::OnRing;
use crate::sym::Bindings;
use crate::timeline::{OpName, Point};
use crate::{HcqError, Result};

thread_local! {
    /// Variable values of a direct submission, reused.
    static RESOLVED: std::cell::RefCell<Vec<u64>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl ComputeQueue {
    /// Submits the list with `vals` bound, ordered after everything submitted before on
    /// `dev`; returns the timeline value that marks its end (see
    /// [`Device::wait_timeline`]). Unbound variables, values that do not fit their
    /// fields and launch sizes the kernel refuses are errors, and nothing is sent.
    pub fn submit<I: DeviceInterface>(&self, dev: &Device<I>, vals: &Bindings) -> Result<u64> {
        dev.run_list(self, vals, OpName::Static("compute list"))
    }
}

impl CopyQueue {
    /// Submits the list with `vals` bound, ordered after everything submitted before on
    /// `dev`; returns the timeline value that marks its end. Unbound variables and
    /// values that do not fit their fields are errors, and nothing is sent.
    pub fn submit<I: DeviceInterface>(&self, dev: &Device<I>, vals: &Bindings) -> Result<u64> {
        dev.run_list(self, vals, OpName::Static("copy list"))
    }
}

impl<I: DeviceInterface> Device<I> {
    fn check_target(&self, target: amd_packets::GfxTarget) -> Result<()> {
        if target != self.props().target {
            return Err(HcqError::ListTarget {
                kernel: None,
                list: target,
                action: "submitted to",
                arch: self.props().arch.to_string(),
                target: self.props().target,
            });
        }
        Ok(())
    }

    /// A user's list submitted with `vals` on the timeline, recorded as `name` when
    /// profiling; the logical value of its point.
    fn run_list<E: OnRing>(&self, q: &CmdList<E>, vals: &Bindings, name: OpName) -> Result<u64> {
        let r = if q.rec.kernargs.is_empty() {
            self.run_in(None, q, vals, name, false, false)
        } else {
            let mut l = self.launcher();
            let ring = l.kernargs.as_mut().ok_or(HcqError::Internal {
                what: "no kernel-argument region on an open device",
            })?;
            self.run_in(Some(ring), q, vals, name, false, false)
        };
        r.map(|(p, _)| p.logical())
    }

    /// Submits `q` with `vals` on the timeline (a memory barrier first with
    /// `barrier`; GPU timestamps around it with `times` or profiling on, recorded as
    /// `name`), with the kernel-argument ring at hand (the device's launcher held;
    /// `None` for a list without kernel arguments).
    #[inline]
    pub(crate) fn run_in<E: OnRing>(
        &self,
        ring: Option<&mut KernargRing<I>>,
        q: &CmdList<E>,
        vals: &Bindings,
        name: OpName,
        barrier: bool,
        times: bool,
    ) -> Result<(Point, Option<Times<I>>)> {
        self.check_target(q.target)?;
        // The thread's vector for the variables' values, or a new one where a
        // submission inside this one (none is made today) has it.
        RESOLVED.with(|cell| {
            let mut borrowed = cell.try_borrow_mut();
            let mut own = Vec::new();
            let resolved: &mut Vec<u64> = match &mut borrowed {
                Ok(v) => v,
                Err(_) => &mut own,
            };
            let rec = &q.rec;
            let ring = match ring {
                Some(r) if !rec.kernargs.is_empty() => r,
                _ => {
                    rec.resolve(vals, &[], resolved)?;
                    return self.submit_timed(name, times, barrier, |out| {
                        let start = out.put_packets(&q.cmds, q);
                        rec.apply_with(resolved, &mut out.cmds[start..], |_, _, _| Ok(()))
                    });
                }
            };
            // The launcher (with the argument ring) is taken before the timeline, as
            // everywhere.
            let len = rec.kernargs.len();
            let off = ring.reserve(
                len,
                rec.karg_align.max(64),
                |p| self.wait_point(p),
                |p| self.inner.is_done(p),
            )?;
            let base = ring.buf.va() + off as u64;
            let internal = rec.karg_base.as_ref().map(|v| (v, base));
            rec.resolve(vals, internal.as_slice(), resolved)?;
            // The argument bytes, then their sites, then the commands: a bad value fails
            // the build before anything reaches the ring (the block is simply not used).
            ring.buf.write(off, &rec.kernargs)?;
            let buf = &ring.buf;
            let (p, t) = self.submit_timed(name, times, barrier, |out| {
                let start = out.put_packets(&q.cmds, q);
                rec.apply_with(resolved, &mut out.cmds[start..], |at, v, n| {
                    buf.write_le(off + at, v, n)
                })
            })?;
            ring.in_use(off, len, p);
            Ok((p, t))
        })
    }
}
