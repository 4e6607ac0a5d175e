//! A device's health: its sticky fault, and how long its waits last.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::HcqError;

/// The first fault of a device (it does not recover) and its wait timeout.
pub(crate) struct Health {
    /// The kernel or copy running when the device faulted, and the transport's
    /// report; set once (the first report wins).
    fault: OnceLock<(Option<String>, Vec<String>)>,
    /// How long waits last before [`HcqError::Timeout`], in nanoseconds.
    timeout_ns: AtomicU64,
}

impl Health {
    pub(crate) fn new(timeout: Duration) -> Self {
        let h = Health {
            fault: OnceLock::new(),
            timeout_ns: AtomicU64::new(0),
        };
        h.set_timeout(timeout);
        h
    }

    /// Whether the device faulted.
    #[inline]
    pub(crate) fn faulted(&self) -> bool {
        // `OnceLock::get` is an Acquire load: a report found here is complete.
        self.fault.get().is_some()
    }

    /// The sticky fault of device `index` as an error.
    pub(crate) fn error(&self, index: usize) -> HcqError {
        let (kernel, report) = self.fault.get().cloned().unwrap_or_default();
        HcqError::DeviceFault {
            device: index,
            kernel,
            report,
        }
    }

    /// Makes the fault sticky; a later report is dropped.
    pub(crate) fn record(&self, culprit: Option<String>, report: Vec<String>) {
        let _ = self.fault.set((culprit, report));
    }

    /// How long waits last.
    pub(crate) fn timeout(&self) -> Duration {
        // Relaxed: a setting read on its own; nothing else hangs on it.
        Duration::from_nanos(self.timeout_ns.load(Ordering::Relaxed))
    }

    pub(crate) fn set_timeout(&self, timeout: Duration) {
        let ns = u64::try_from(timeout.as_nanos()).unwrap_or(u64::MAX);
        // Relaxed: see `timeout`.
        self.timeout_ns.store(ns, Ordering::Relaxed);
    }
}
