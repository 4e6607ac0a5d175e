//! How far a device's work is, and the device as the parts below it see it.
//!
//! Signals and buffers are given back while commands already sent may still use them;
//! they wait for the [`Marks`] of the work submitted when they came back. They reach
//! their device (and the platform's other devices) only through [`DeviceLink`], which
//! the device implements, so that neither depends on the device's own module.

use std::sync::{Arc, Weak};

use crate::Result;
use crate::iface::{BufferKind, DeviceInterface};

/// How far a device's work goes: its timeline (a logical value) and the count of lists
/// sent outside the timeline on each ring (compute, copy). Taken when something is
/// freed (what was submitted), it is the point past which nothing can still use it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Marks {
    pub(crate) timeline: u64,
    pub(crate) plain: [u64; 2],
}

impl Marks {
    /// Whether work done up to `self` covers everything up to `f`.
    pub(crate) fn covers(&self, f: &Marks) -> bool {
        self.timeline >= f.timeline && self.plain[0] >= f.plain[0] && self.plain[1] >= f.plain[1]
    }
}

/// A device as signals, buffers and waits reach it.
pub(crate) trait DeviceLink<I: DeviceInterface>: Send + Sync {
    /// What was submitted so far and what is done.
    fn marks(&self) -> (Marks, Marks);
    /// The device's sticky fault, if it has one (no transport call).
    fn check(&self) -> Result<()>;
    /// Asks the transport (without waiting) whether the device faulted; records it.
    fn poll_fault(&self) -> Result<()>;
    /// Sleeps in the transport's queue event for up to `ms` milliseconds.
    fn sleep(&self, ms: u32) -> Result<()>;
    /// How long waits last before a timeout.
    fn timeout(&self) -> std::time::Duration;
    /// The platform's devices (some may be closed).
    fn peers(&self) -> Vec<Link<I>>;
    /// Takes back freed memory: reused once the work `fences` name is done.
    fn take_back(&self, fences: Fences<I>, kind: BufferKind, mem: I::Memory);
}

/// A device, held weakly (buffers and signals do not keep their device alive).
pub(crate) type Link<I> = Weak<dyn DeviceLink<I>>;

/// A device's identity, index and platform, for checks that memory is reachable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct DeviceId {
    /// The device's identity (the address of its shared state).
    pub(crate) key: usize,
    /// Index among the platform's GPUs, for messages.
    pub(crate) index: usize,
    /// The platform's identity (the address of its signal page's pool).
    pub(crate) platform: usize,
}

/// The identity of a linked device, as [`DeviceId::key`].
pub(crate) fn link_key<I: DeviceInterface>(w: &Link<I>) -> usize {
    Weak::as_ptr(w) as *const () as usize
}

/// The devices whose work may still use something freed, each with how far its work
/// must be done first.
pub(crate) type Fences<I> = Vec<(Link<I>, Marks)>;

/// How far some devices' work is, each device asked once: what was submitted and what
/// is done. A device that is closed is left out: it runs nothing more.
pub(crate) struct Progress<I: DeviceInterface>(Vec<(Link<I>, Marks, Marks)>);

impl<I: DeviceInterface> Progress<I> {
    pub(crate) fn of(devices: impl IntoIterator<Item = Arc<dyn DeviceLink<I>>>) -> Self {
        let mut asked: Vec<(Link<I>, Marks, Marks)> = Vec::new();
        for d in devices {
            let w = Arc::downgrade(&d);
            if asked.iter().any(|(x, ..)| x.ptr_eq(&w)) {
                continue;
            }
            let (sent, done) = d.marks();
            asked.push((w, sent, done));
        }
        Progress(asked)
    }

    /// Whether the work every fence names is done.
    pub(crate) fn passed(&self, fences: &Fences<I>) -> bool {
        fences.iter().all(|(w, f)| {
            self.0
                .iter()
                .find(|(d, ..)| d.ptr_eq(w))
                .is_none_or(|(_, _, done)| done.covers(f))
        })
    }

    /// The fences of the work submitted so far and not yet done: what something given
    /// back now waits for.
    pub(crate) fn outstanding(&self) -> Fences<I> {
        self.0
            .iter()
            .filter(|(_, sent, done)| !done.covers(sent))
            .map(|(w, sent, _)| (w.clone(), *sent))
            .collect()
    }
}
