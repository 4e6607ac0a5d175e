//! A device's timeline: the signal every ordered submission waits for (its previous
//! value) and writes (its next), the value it is at, and the submissions not known to
//! be done. [`Timeline::advance`] is the one place the value moves on.

use std::collections::VecDeque;
use std::sync::Arc;

use crate::Result;
use crate::iface::DeviceInterface;
use crate::signal::Signal;

/// The timeline restarts at 1 past this value.
pub const TIMELINE_WRAP: u64 = 1 << 31;

/// A point of a device's timeline: a value within an epoch (the timeline restarts at
/// 1 past [`TIMELINE_WRAP`], after all work before is done, so a point of an earlier
/// epoch is complete).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Point {
    /// Restarts of the timeline before it.
    pub epoch: u64,
    /// The timeline value on the GPU (what its signal holds; at most
    /// [`TIMELINE_WRAP`] + 1).
    pub value: u64,
}

impl Point {
    /// The point as one number that only grows: the epoch in the high 32 bits, the
    /// GPU value in the low ones. The runtime's operations return these, and
    /// [`Device::wait_timeline`](crate::Device::wait_timeline) takes them.
    pub const fn logical(self) -> u64 {
        self.epoch << 32 | self.value
    }

    /// The point of a [`Point::logical`] number.
    pub const fn from_logical(v: u64) -> Point {
        Point {
            epoch: v >> 32,
            value: v & 0xffff_ffff,
        }
    }
}

/// A device's timeline as other queues see it (see
/// [`Device::timeline_handle`](crate::Device::timeline_handle)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimelineHandle {
    /// Address of the timeline signal (in the platform's signal page, which every GPU
    /// of the platform maps).
    pub addr: u64,
    /// The KFD event (mailbox address, id) a write of the timeline raises.
    pub event: Option<(u64, u32)>,
    /// The point the last submission signals.
    pub last: Point,
}

/// The name of a submission, for profiles and fault reports (cheap to clone).
#[derive(Clone, Debug)]
pub(crate) enum OpName {
    Static(&'static str),
    Shared(Arc<str>),
}

impl std::fmt::Display for OpName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OpName::Static(s) => f.write_str(s),
            OpName::Shared(s) => f.write_str(s),
        }
    }
}

/// The timeline of a device: kept with its rings, under the lock submitters hold
/// from the value they take to the doorbell, so that ring order and value order agree.
pub(crate) struct Timeline<I: DeviceInterface> {
    signal: Signal<I>,
    /// The signal swapped in when the timeline restarts.
    shadow: Signal<I>,
    /// The value the next submission signals.
    next: u64,
    /// How many times the timeline restarted at 1.
    epoch: u64,
    /// Named submissions not known to be complete (timeline point, name), oldest
    /// first: the culprit of a fault is the oldest one not done.
    inflight: VecDeque<(Point, OpName)>,
}

impl<I: DeviceInterface> Timeline<I> {
    /// A timeline at 0 over `signal` (and `shadow`, for its restarts).
    pub(crate) fn new(signal: Signal<I>, shadow: Signal<I>) -> Self {
        Timeline {
            signal,
            shadow,
            next: 1,
            epoch: 0,
            inflight: VecDeque::new(),
        }
    }

    /// The signal the timeline's values are written to.
    #[inline]
    pub(crate) fn signal(&self) -> &Signal<I> {
        &self.signal
    }

    /// The point the next submission signals.
    #[inline]
    pub(crate) fn next(&self) -> Point {
        Point {
            epoch: self.epoch,
            value: self.next,
        }
    }

    /// The point the last submission signals.
    #[inline]
    pub(crate) fn last(&self) -> Point {
        Point {
            epoch: self.epoch,
            value: self.next - 1,
        }
    }

    /// The point the GPU has reached.
    #[inline]
    pub(crate) fn done(&self) -> Point {
        Point {
            epoch: self.epoch,
            value: self.signal.value(),
        }
    }

    /// Whether the work up to `p` is done.
    pub(crate) fn is_done(&self, p: Point) -> bool {
        p.epoch < self.epoch || self.signal.value() >= p.value
    }

    /// Whether the values are used up: it must restart before the next submission.
    #[inline]
    pub(crate) fn must_restart(&self) -> bool {
        self.next > TIMELINE_WRAP
    }

    /// Takes the next point for the submission `name`, which waits for the point
    /// before and signals this one: the timeline advances here and nowhere else. The
    /// submission is noted (for naming the culprit of a fault), and those up to `done`
    /// (a [`Point::logical`] known complete) forgotten once 32 are noted. A submitter
    /// advances before it unlocks the timeline.
    #[inline]
    pub(crate) fn advance(&mut self, name: OpName, done: u64) -> Point {
        let p = self.next();
        if self.inflight.len() >= 32 {
            self.prune(done);
        }
        self.inflight.push_back((p, name));
        self.next += 1;
        p
    }

    /// Forgets the submissions up to `done`, and the oldest once 4,096 are noted (a
    /// short list stays in a few cache lines).
    #[cold]
    fn prune(&mut self, done: u64) {
        while self.inflight.front().is_some_and(|(q, _)| q.logical() <= done) {
            self.inflight.pop_front();
        }
        if self.inflight.len() >= 4096 {
            self.inflight.pop_front();
        }
    }

    /// Restarts at 1 on the shadow signal, in the next epoch (all work before done).
    pub(crate) fn restart(&mut self) -> Result<()> {
        std::mem::swap(&mut self.signal, &mut self.shadow);
        self.signal.set(0)?;
        self.next = 1;
        self.epoch += 1;
        Ok(())
    }

    /// Makes `next` the next value (all work before done; tests of the restart).
    pub(crate) fn set_next_for_test(&mut self, next: u64) -> Result<()> {
        self.signal.set(next - 1)?;
        self.next = next;
        Ok(())
    }

    /// The oldest named submission not done.
    pub(crate) fn culprit(&self) -> Option<String> {
        let done = self.signal.value();
        self.inflight
            .iter()
            .find(|(p, _)| p.epoch == self.epoch && p.value > done)
            .map(|(_, n)| n.to_string())
    }

    /// The timeline as other queues see it.
    pub(crate) fn handle(&self) -> TimelineHandle {
        TimelineHandle {
            addr: self.signal.addr(),
            event: self.signal.event(),
            last: self.last(),
        }
    }
}
