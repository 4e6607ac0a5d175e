//! Submitting recorded lists directly: bind the variables, place the kernel arguments
//! in the device's argument ring, write every site, and put the dwords in the ring,
//! ordered on the timeline.

use crate::device::{Device, Point, Work};
use crate::iface::DeviceInterface;
use crate::profile::Times;
use crate::queue::{ComputeQueue, CopyQueue};
use crate::sym::Bindings;
use crate::{HcqError, Result};

impl ComputeQueue {
    /// Submits the list with `vals` bound, ordered after everything submitted before on
    /// `dev`; returns the timeline value that marks its end (see
    /// [`Device::wait_timeline`]). Unbound variables, values that do not fit their
    /// fields and launch sizes the kernel refuses are errors, and nothing is sent.
    pub fn submit<I: DeviceInterface>(&self, dev: &Device<I>, vals: &Bindings) -> Result<u64> {
        dev.run_compute(self, vals, "compute list", false, false)
            .map(|(p, _)| p.value)
    }
}

impl CopyQueue {
    /// Submits the list with `vals` bound, ordered after everything submitted before on
    /// `dev`; returns the timeline value that marks its end.
    pub fn submit<I: DeviceInterface>(&self, dev: &Device<I>, vals: &Bindings) -> Result<u64> {
        dev.run_copy(self, vals).map(|p| p.value)
    }
}

impl<I: DeviceInterface> Device<I> {
    fn check_target(&self, target: amd_packets::GfxTarget) -> Result<()> {
        if target != self.props().target {
            return Err(HcqError::InvalidArgument(format!(
                "a list built for {target:?} submitted to {} ({:?})",
                self.props().arch,
                self.props().target
            )));
        }
        Ok(())
    }

    /// Submits `q` with `vals` on the timeline (a memory barrier first with
    /// `barrier`; GPU timestamps around it with `times` or profiling on, recorded as
    /// `name`).
    pub(crate) fn run_compute(
        &self,
        q: &ComputeQueue,
        vals: &Bindings,
        name: &str,
        barrier: bool,
        times: bool,
    ) -> Result<(Point, Option<Times<I>>)> {
        self.check_target(q.target)?;
        let rec = &q.rec;
        let mut resolved = Vec::with_capacity(rec.vars.len());
        if rec.kernargs.is_empty() {
            rec.resolve(vals, &[], &mut resolved)?;
            let mut cmds = q.cmds.clone();
            rec.apply(&resolved, &mut cmds, &mut [])?;
            return self.submit_timed(false, name, times, barrier, |w| push_compute(w, &cmds));
        }
        // The argument ring's lock is taken before the timeline's, as everywhere.
        let mut ring = self.kernarg_ring()?;
        let len = rec.kernargs.len();
        let off = ring.reserve(self, len, rec.karg_align.max(256))?;
        let base = ring.buf.va() + off as u64;
        let internal = rec.karg_base.as_ref().map(|v| (v, base));
        rec.resolve(vals, internal.as_slice(), &mut resolved)?;
        let mut cmds = q.cmds.clone();
        let mut kargs = rec.kernargs.clone();
        rec.apply(&resolved, &mut cmds, &mut kargs)?;
        ring.buf.write(off, &kargs)?;
        let (p, t) = self.submit_timed(false, name, times, barrier, |w| push_compute(w, &cmds))?;
        ring.live.push_back((off, len, p));
        Ok((p, t))
    }

    /// Submits copy list `q` with `vals` on the timeline.
    pub(crate) fn run_copy(&self, q: &CopyQueue, vals: &Bindings) -> Result<Point> {
        self.check_target(q.target)?;
        let mut resolved = Vec::with_capacity(q.rec.vars.len());
        q.rec.resolve(vals, &[], &mut resolved)?;
        let mut cmds = q.cmds.clone();
        q.rec.apply(&resolved, &mut cmds, &mut [])?;
        let (p, _) = self.submit_timed(true, "copy list", false, false, |w| match w {
            Work::Copy(out) => {
                out.append_packets(&cmds, &q.sizes, &q.end_aligned);
                Ok(())
            }
            Work::Compute(_) => Err(HcqError::InvalidArgument("a copy list on the compute queue".into())),
        })?;
        Ok(p)
    }
}

fn push_compute(w: &mut Work<'_>, cmds: &[u32]) -> Result<()> {
    match w {
        Work::Compute(out) => {
            out.cmds.extend_from_slice(cmds);
            Ok(())
        }
        Work::Copy(_) => Err(HcqError::InvalidArgument("a compute list on the copy queue".into())),
    }
}

impl CopyQueue {
    /// Appends packets (`sizes` in dwords; `end_aligned` indexes into `sizes`).
    pub(crate) fn append_packets(&mut self, cmds: &[u32], sizes: &[u32], end_aligned: &[usize]) {
        let first = self.sizes.len();
        self.cmds.extend_from_slice(cmds);
        self.sizes.extend_from_slice(sizes);
        self.end_aligned.extend(end_aligned.iter().map(|k| k + first));
    }
}
