//! Profiling: GPU start/end timestamps of launches and copies, converted to
//! nanoseconds on the CPU clock with the offset calibrated as the seed does (a
//! timestamp taken between two CPU readings is placed at their midpoint).

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use crate::device::{Device, OpName, Point, Work};
use crate::iface::DeviceInterface;
use crate::program::GPU_CLOCK_HZ;
use crate::signal::Signal;
use crate::{HcqError, Result};

/// Which engine ran a profiled operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Engine {
    /// The compute queue (kernel launches).
    Compute,
    /// The SDMA queue (copies).
    Copy,
}

/// One profiled operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileRecord {
    /// Kernel name, or a copy's description (`copy_in`, `copy_out`, `copy`, `transfer`).
    pub name: String,
    /// Device index.
    pub device: usize,
    /// Engine.
    pub engine: Engine,
    /// Start, ns on the CPU clock (nanoseconds since the platform's epoch).
    pub start_ns: i128,
    /// End, ns on the CPU clock.
    pub end_ns: i128,
}

/// Start and end timestamp signals of one submission.
pub(crate) type Times<I> = Arc<(Signal<I>, Signal<I>)>;

fn ticks_to_ns(ticks: u64) -> i128 {
    ticks as i128 * 1_000_000_000 / GPU_CLOCK_HZ as i128
}

/// The CPU clock the records use: nanoseconds since the first call.
pub(crate) fn cpu_ns() -> i128 {
    static EPOCH: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    EPOCH.get_or_init(Instant::now).elapsed().as_nanos() as i128
}

impl<I: DeviceInterface> Device<I> {
    /// Turns recording of launch and copy timestamps on or off.
    pub fn set_profiling(&self, on: bool) {
        self.inner.profiling.store(on, Ordering::Relaxed);
    }

    /// Whether profiling is on.
    pub fn profiling(&self) -> bool {
        // Relaxed: a flag read when building a submission; no data hangs on it.
        self.inner.profiling.load(Ordering::Relaxed)
    }

    /// Submits like [`Device::submit_ordered`], with GPU timestamps around `build`'s
    /// work when `times` is asked or profiling is on (then also recorded as `name`).
    pub(crate) fn submit_timed(
        &self,
        copy: bool,
        name: OpName,
        times: bool,
        barrier: bool,
        build: impl FnOnce(&mut Work<'_>) -> Result<()>,
    ) -> Result<(Point, Option<Times<I>>)> {
        let profiling = self.profiling();
        if !times && !profiling {
            let p = self.submit_point(copy, |w| {
                if let (true, Work::Compute(q)) = (barrier, &mut *w) {
                    q.memory_barrier();
                }
                build(w)
            })?;
            self.inner.note_inflight(p, name);
            return Ok((p, None));
        }
        let t: Times<I> = Arc::new((self.new_signal(0)?, self.new_signal(0)?));
        let v = self.submit_point(copy, |w| {
            match w {
                Work::Compute(q) => {
                    if barrier {
                        q.memory_barrier();
                    }
                    q.timestamp(&t.0);
                }
                Work::Copy(q) => {
                    q.timestamp(&t.0)?;
                }
            }
            build(w)?;
            match w {
                Work::Compute(q) => {
                    q.timestamp(&t.1);
                }
                Work::Copy(q) => {
                    q.timestamp(&t.1)?;
                }
            }
            Ok(())
        })?;
        if profiling {
            let engine = if copy { Engine::Copy } else { Engine::Compute };
            self.inner
                .pending_profile
                .lock()
                .push((name.to_string(), engine, t.clone()));
        }
        self.inner.note_inflight(v, name);
        Ok((v, Some(t)))
    }

    /// The GPU time between a submission's two timestamps.
    pub(crate) fn elapsed(t: &Times<I>) -> std::time::Duration {
        let ticks = t.1.timestamp().saturating_sub(t.0.timestamp());
        std::time::Duration::from_nanos(ticks_to_ns(ticks) as u64)
    }

    /// The offset from GPU ticks (as ns) to the CPU clock: a timestamp is taken between
    /// two CPU readings and placed at their midpoint.
    pub fn calibrate_clock(&self) -> Result<i128> {
        let sig = self.new_signal(0)?;
        let before = cpu_ns();
        let v = self.submit_ordered(false, |w| match w {
            Work::Compute(q) => {
                q.timestamp(&sig);
                Ok(())
            }
            Work::Copy(_) => Err(HcqError::InvalidArgument("calibration on the copy queue".into())),
        })?;
        self.wait_timeline(v)?;
        let after = cpu_ns();
        let offset = (before + after) / 2 - ticks_to_ns(sig.timestamp());
        *self.inner.clock_offset.lock() = Some(offset);
        Ok(offset)
    }

    /// Waits for the profiled work and returns its records (and forgets them).
    pub fn take_profile(&self) -> Result<Vec<ProfileRecord>> {
        self.synchronize()?;
        let cached = *self.inner.clock_offset.lock();
        let offset = match cached {
            Some(o) => o,
            None => self.calibrate_clock()?,
        };
        let pending = std::mem::take(&mut *self.inner.pending_profile.lock());
        Ok(pending
            .into_iter()
            .map(|(name, engine, t)| ProfileRecord {
                name,
                device: self.index(),
                engine,
                start_ns: ticks_to_ns(t.0.timestamp()) + offset,
                end_ns: ticks_to_ns(t.1.timestamp()) + offset,
            })
            .collect())
    }
}
