//! Profiling a device: GPU timestamps around its submissions, turned into records on
//! the CPU clock (see [`crate::profile`] for the records and the trace).

use std::sync::Arc;
use std::sync::atomic::Ordering;

use crate::device::Device;
use crate::iface::DeviceInterface;
use crate::profile::{ProfileRecord, Stamps, Times, chrome_trace, cpu_ns, records, ticks_to_ns};
use crate::queue::CmdList;
use crate::rings::OnRing;
use crate::timeline::{OpName, Point};
use crate::{HcqError, Result};

/// Readings [`Device::calibrate_clock`] takes.
const CALIBRATIONS: usize = 5;

impl<I: DeviceInterface> Device<I> {
    /// Turns recording of launch and copy timestamps on or off.
    pub fn set_profiling(&self, on: bool) {
        // The records' clock starts no later than the first profiled work.
        cpu_ns();
        self.inner.profile.on.store(on, Ordering::Relaxed);
    }

    /// Whether profiling is on.
    pub fn profiling(&self) -> bool {
        // Relaxed: a flag read when building a submission; no data hangs on it.
        self.inner.profile.on.load(Ordering::Relaxed)
    }

    /// Submits like [`Device::submit_ordered`] on the engine of `E`, with GPU
    /// timestamps around `build`'s work when `times` is asked or profiling is on (then
    /// also recorded as `name`); a memory barrier first with `barrier`.
    pub(crate) fn submit_timed<E: OnRing>(
        &self,
        name: OpName,
        times: bool,
        barrier: bool,
        build: impl FnOnce(&mut CmdList<E>) -> Result<()>,
    ) -> Result<(Point, Option<Times<I>>)> {
        let profiling = self.profiling();
        if !times && !profiling {
            let p = self.submit_point::<E>(name, |q| {
                if barrier {
                    E::barrier(q);
                }
                build(q)
            })?;
            return Ok((p, None));
        }
        let t: Times<I> = Arc::new((self.timestamp_signal()?, self.timestamp_signal()?));
        let label = profiling.then(|| name.to_string());
        let v = self.submit_point::<E>(name, |q| {
            if barrier {
                E::barrier(q);
            }
            q.stamp(&t.0).map_err(Into::into)?;
            build(q)?;
            q.stamp(&t.1).map_err(Into::into)
        })?;
        if let Some(label) = label {
            let released = self
                .inner
                .profile
                .state
                .lock()
                .log
                .push((label, E::ENGINE, Stamps::Signals(t.clone())));
            // Dropped with the log unlocked.
            drop(released);
        }
        Ok((v, Some(t)))
    }

    /// A signal for a timestamp. Where every signal is taken and profiled operations
    /// the GPU has not finished hold some (their times are read as later ones are
    /// submitted: a long run submitted faster than the GPU works through it), waits
    /// for them to finish and releases theirs, up to the device's wait timeout: the
    /// submission is held back, as by a full ring, rather than refused.
    fn timestamp_signal(&self) -> Result<crate::signal::Signal<I>> {
        let deadline = std::time::Instant::now() + self.inner.health.timeout();
        loop {
            match self.new_signal(0) {
                Err(HcqError::SignalsExhausted { .. })
                    if self.inner.profile.state.lock().log.unsettled() && std::time::Instant::now() < deadline =>
                {
                    self.inner.check()?;
                    let released = self.inner.profile.state.lock().log.settle();
                    if released.is_empty() {
                        std::thread::sleep(std::time::Duration::from_micros(50));
                    }
                    // Dropped with the log unlocked.
                    drop(released);
                }
                r => return r,
            }
        }
    }

    /// The GPU time between a submission's two timestamps.
    pub(crate) fn elapsed(t: &Times<I>) -> std::time::Duration {
        let ticks = t.1.timestamp().saturating_sub(t.0.timestamp());
        std::time::Duration::from_nanos(ticks_to_ns(ticks) as u64)
    }

    /// The offset from GPU ticks (as ns) to the CPU clock: a timestamp is taken between
    /// two CPU readings, five times; each round bounds the offset (the GPU wrote its
    /// timestamp after the first reading and before the second), and the offset is the
    /// middle of what all five bounds leave (no wider than the closest round's
    /// readings, narrower where the rounds' bounds overlap only in part). Clocks whose
    /// rounds leave nothing (drifting apart) take the middle of the closest round.
    pub fn calibrate_clock(&self) -> Result<i128> {
        let sig = self.new_signal(0)?;
        let (mut lo, mut hi) = (i128::MIN, i128::MAX);
        let mut best: Option<(i128, i128)> = None;
        for _ in 0..CALIBRATIONS {
            let before = cpu_ns();
            let v = self.submit_ordered(false, |w| {
                w.compute()?.timestamp(&sig);
                Ok(())
            })?;
            self.wait_timeline(v)?;
            let after = cpu_ns();
            let gpu = ticks_to_ns(sig.timestamp());
            (lo, hi) = (lo.max(before - gpu), hi.min(after - gpu));
            if best.is_none_or(|(window, _)| after - before < window) {
                best = Some((after - before, (before + after) / 2 - gpu));
            }
        }
        let offset = if lo <= hi {
            lo + (hi - lo) / 2
        } else {
            best.map_or(0, |(_, o)| o)
        };
        self.inner.profile.state.lock().clock_offset = Some(offset);
        Ok(offset)
    }

    /// Waits for the profiled work and writes its records to `path` as a Chrome /
    /// Perfetto trace ([`chrome_trace`]); returns how many were written.
    pub fn write_trace(&self, path: impl AsRef<std::path::Path>) -> Result<usize> {
        let recs = self.take_profile()?;
        let path = path.as_ref();
        std::fs::write(path, chrome_trace(&recs)).map_err(|e| HcqError::Io {
            path: path.to_path_buf(),
            kind: e.kind(),
            msg: e.to_string(),
        })?;
        Ok(recs.len())
    }

    /// Waits for the profiled work and returns its records (and forgets them).
    pub fn take_profile(&self) -> Result<Vec<ProfileRecord>> {
        self.synchronize()?;
        let cached = self.inner.profile.state.lock().clock_offset;
        let offset = match cached {
            Some(o) => o,
            None => self.calibrate_clock()?,
        };
        let pending = std::mem::take(&mut self.inner.profile.state.lock().log).entries;
        Ok(records(pending, self.index(), offset))
    }
}
