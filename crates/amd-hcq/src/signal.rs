//! Signals: 16-byte slots (value at +0, GPU timestamp at +8) in a page of uncached
//! host memory that every GPU of the platform maps.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::fence::{DeviceLink, Fences, Link, Progress};
use crate::iface::{BufferKind, DeviceInterface, DeviceMemory};
use crate::{HcqError, Result};

/// Bytes per signal slot.
pub const SIGNAL_SLOT: usize = 16;
/// Slots in the platform's signal page.
pub const SIGNAL_SLOTS: usize = 65536;
/// How long a wait spins and yields before it sleeps in the transport: long enough
/// that short work completes without a sleep and its wake-up, short enough that a
/// long wait leaves the CPU to others (on the mock, to the GPU's own threads).
pub const SPIN_BEFORE_SLEEP: Duration = Duration::from_millis(1);
/// Default wait timeout (`HCQDEV_WAIT_TIMEOUT_MS` overrides it).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// The wait timeout: `HCQDEV_WAIT_TIMEOUT_MS`, else 30 s.
pub fn default_timeout() -> Duration {
    std::env::var("HCQDEV_WAIT_TIMEOUT_MS")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(Duration::from_millis)
        .unwrap_or(DEFAULT_TIMEOUT)
}

/// The shared page of signal slots.
///
/// A slot whose last holder (its [`Signal`], or a recorded list that writes or waits
/// for it) is gone may still be written by commands already sent to a GPU: it is
/// reused only once every device of the platform has finished the work submitted
/// (on its timeline and outside it) before the slot was given back.
pub(crate) struct SignalPool<I: DeviceInterface> {
    pub(crate) mem: I::Memory,
    free: Mutex<Vec<u32>>,
    /// Slots given back, not yet checked against the devices' work.
    dropped: Mutex<Vec<u32>>,
    /// Slots waiting for the devices' work: each batch's slots are free once every
    /// device listed has done the work its marks name.
    pending: Mutex<std::collections::VecDeque<Pending<I>>>,
    /// Whether `dropped` or `pending` may hold slots (checked without a lock on the
    /// path that takes one).
    deferred: AtomicBool,
    /// The platform's devices (those still open are asked how far their work is).
    devices: Mutex<Vec<Link<I>>>,
}

/// Slots given back together, and how far each device's work must be done before they
/// are free.
struct Pending<I: DeviceInterface> {
    fences: Fences<I>,
    slots: Vec<u32>,
}

impl<I: DeviceInterface> SignalPool<I> {
    pub(crate) fn new(iface: &I) -> Result<Self> {
        let mem = iface.alloc(SIGNAL_SLOT * SIGNAL_SLOTS, BufferKind::Uncached)?;
        Ok(SignalPool {
            mem,
            free: Mutex::new((0..SIGNAL_SLOTS as u32).rev().collect()),
            dropped: Mutex::new(Vec::new()),
            pending: Mutex::new(std::collections::VecDeque::new()),
            deferred: AtomicBool::new(false),
            devices: Mutex::new(Vec::new()),
        })
    }

    /// Adds a device whose work may write the slots.
    pub(crate) fn register(&self, dev: Link<I>) {
        let mut devices = self.devices.lock();
        devices.retain(|d| d.strong_count() > 0);
        devices.push(dev);
    }

    /// The platform's identity: where its pool is.
    pub(crate) fn key(self: &Arc<Self>) -> usize {
        Arc::as_ptr(self) as *const u8 as usize
    }

    /// The platform's devices (some may be closed).
    pub(crate) fn devices(&self) -> Vec<Link<I>> {
        self.devices.lock().clone()
    }

    fn take(&self) -> Result<u32> {
        if self.deferred.load(Ordering::Acquire) {
            self.reclaim();
        }
        if let Some(slot) = self.free.lock().pop() {
            return Ok(slot);
        }
        let waiting: usize = self.pending.lock().iter().map(|p| p.slots.len()).sum();
        Err(HcqError::SignalsExhausted {
            slots: SIGNAL_SLOTS,
            waiting,
        })
    }

    /// Gives `slot` back; it is free again once the work submitted so far is done.
    fn give_back(&self, slot: u32) {
        // No device lock here: a signal may be dropped while its device's timeline is
        // locked (the timeline's own, when the device closes).
        self.dropped.lock().push(slot);
        self.deferred.store(true, Ordering::Release);
    }

    /// Frees the slots given back whose work is done. The pool's locks are never held
    /// while a device's timeline or rings are locked.
    #[cold]
    fn reclaim(&self) {
        self.deferred.store(false, Ordering::Release);
        let dropped = std::mem::take(&mut *self.dropped.lock());
        // Each open device's last submission and work done, read once (a device closed
        // since runs nothing more).
        let devices = self.devices.lock().clone();
        let now = Progress::of(devices.iter().filter_map(Weak::upgrade));
        let mut free = Vec::new();
        let mut pending = self.pending.lock();
        // Batches are in the order they came back, their fences never lower than an
        // earlier batch's: the first not done ends the search.
        while pending.front().is_some_and(|b| now.passed(&b.fences)) {
            if let Some(mut b) = pending.pop_front() {
                free.append(&mut b.slots);
            }
        }
        if !dropped.is_empty() {
            // What was submitted until now covers what was submitted before the slots
            // came back (a later value only waits a little longer).
            let fences = now.outstanding();
            if fences.is_empty() && pending.is_empty() {
                free.extend(dropped);
            } else {
                pending.push_back(Pending { fences, slots: dropped });
            }
        }
        if !pending.is_empty() {
            self.deferred.store(true, Ordering::Release);
        }
        drop(pending);
        if !free.is_empty() {
            self.free.lock().append(&mut free);
        }
    }
}

/// A slot of the pool, given back when its last holder drops it.
struct Slot<I: DeviceInterface> {
    pool: Arc<SignalPool<I>>,
    index: u32,
}

impl<I: DeviceInterface> Drop for Slot<I> {
    fn drop(&mut self) {
        self.pool.give_back(self.index);
    }
}

/// A signal: a 64-bit value the GPU writes (RELEASE_MEM / SDMA FENCE) and the CPU
/// or another queue waits on, with a timestamp slot beside it.
///
/// Dropping a signal does not make its slot reusable at once: a list that waits for or
/// writes it (recorded, bound, or in a graph) keeps the slot while the list lives, and
/// once the last holder is gone the slot is reused only after every device of the
/// platform has finished the work submitted until then (on its timeline, and lists
/// sent outside it with [`crate::Device::submit_compute`] or
/// [`crate::Device::submit_copy`]).
///
/// ```
/// use amd_hcq::Platform;
///
/// let dev = Platform::mock(amd_hcq::mock::MockConfig::gfx1100s(1))?.device(0)?;
/// let (go, done) = (dev.new_signal(0)?, dev.new_signal(0)?);
/// // The compute engine waits for `go` to reach 1, then sets `done` to 5.
/// let mut q = dev.compute_queue();
/// q.wait(&go, 1u64).signal(&done, 5u64);
/// dev.submit_compute(&q)?;
/// assert_eq!(done.value(), 0);
/// go.set(1)?;
/// done.wait(5)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Signal<I: DeviceInterface = crate::AnyIface> {
    /// The pool and the slot's index, at hand for reads and writes of the value.
    pool: Arc<SignalPool<I>>,
    index: u32,
    /// What gives the slot back when the last holder (this, or a list) is gone.
    slot: Arc<Slot<I>>,
    /// The value's GPU address (kept at hand: queues record it often).
    addr: u64,
    owner: Link<I>,
    event: Option<(u64, u32)>,
}

impl<I: DeviceInterface> std::fmt::Debug for Signal<I> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Signal")
            .field("addr", &format_args!("{:#x}", self.addr()))
            .field("value", &self.value())
            .finish()
    }
}

impl<I: DeviceInterface> Signal<I> {
    /// A signal of `pool` set to `value`, owned by `owner` (whose faults end its
    /// waits); writes of it raise `event` (a timeline's).
    pub(crate) fn new(
        pool: &Arc<SignalPool<I>>,
        owner: Link<I>,
        event: Option<(u64, u32)>,
        value: u64,
    ) -> Result<Self> {
        let pool = pool.clone();
        let index = pool.take()?;
        let addr = pool.mem.va() + (index as usize * SIGNAL_SLOT) as u64;
        let s = Signal {
            addr,
            slot: Arc::new(Slot {
                pool: pool.clone(),
                index,
            }),
            pool,
            index,
            owner,
            event,
        };
        s.set(value)?;
        s.mem().store_u64(s.offset() + 8, 0)?;
        Ok(s)
    }

    fn mem(&self) -> &I::Memory {
        &self.pool.mem
    }

    fn offset(&self) -> usize {
        self.index as usize * SIGNAL_SLOT
    }

    /// What a recorded list holds so that the slot is not reused while it may still
    /// write or wait for it.
    pub(crate) fn keepalive(&self) -> Arc<dyn std::any::Any + Send + Sync> {
        self.slot.clone()
    }

    /// Address of the value.
    pub fn addr(&self) -> u64 {
        self.addr
    }

    /// Address of the timestamp.
    pub fn timestamp_addr(&self) -> u64 {
        self.addr() + 8
    }

    /// The KFD event a signal of this value raises, for the device's timeline.
    pub fn event(&self) -> Option<(u64, u32)> {
        self.event
    }

    /// The current value.
    pub fn value(&self) -> u64 {
        // The slot is inside the pool page (slot < SIGNAL_SLOTS) and 8-aligned.
        self.mem().load_u64(self.offset()).unwrap_or(0)
    }

    /// Sets the value from the CPU.
    pub fn set(&self, value: u64) -> Result<()> {
        self.mem().store_u64(self.offset(), value)
    }

    /// The raw GPU timestamp written by a `timestamp` command (ticks of the GPU clock).
    pub fn timestamp(&self) -> u64 {
        self.mem().load_u64(self.offset() + 8).unwrap_or(0)
    }

    /// Waits until the value is at least `value`, up to [`default_timeout`].
    pub fn wait(&self, value: u64) -> Result<()> {
        self.wait_timeout(value, default_timeout())
    }

    /// Waits until the value is at least `value`: spins, then yields, and after 2 s
    /// sleeps in the transport's queue event (timeline signals).
    /// A fault of the signal's device ends the wait at once with
    /// [`HcqError::DeviceFault`]; no value in time is [`HcqError::Timeout`].
    pub fn wait_timeout(&self, value: u64, timeout: Duration) -> Result<()> {
        let owner = self.owner.upgrade();
        wait_until(
            owner.as_deref(),
            self.event.is_some(),
            value,
            timeout,
            "a signal",
            || self.value(),
        )
    }
}

/// How often a wait asks the transport whether the device faulted.
const FAULT_POLL: Duration = Duration::from_millis(1);
/// The longest single sleep in the transport's event (a fault, which does not raise
/// the queue event, is noticed within it).
const SLEEP_SLICE: Duration = Duration::from_millis(20);

/// Waits until `current()` reaches `value`: spins, then yields, and after
/// [`SPIN_BEFORE_SLEEP`] sleeps: in the device's queue event when `in_event` (the
/// value is written by a packet that raises it), else in short sleeps. Every
/// millisecond (every sleep, once sleeping) it asks `dev`'s transport for faults: a
/// fault ends the wait at once with the device's sticky [`HcqError::DeviceFault`].
/// Past `timeout` with the value still short, it is [`HcqError::Timeout`] naming
/// `what`.
pub(crate) fn wait_until<I: DeviceInterface, D: DeviceLink<I> + ?Sized>(
    dev: Option<&D>,
    in_event: bool,
    value: u64,
    timeout: Duration,
    what: &str,
    current: impl Fn() -> u64,
) -> Result<()> {
    if current() >= value {
        return Ok(());
    }
    if let Some(d) = dev {
        d.check()?;
    }
    let start = Instant::now();
    let mut spins = 0u32;
    let mut next_poll = FAULT_POLL;
    loop {
        if current() >= value {
            return Ok(());
        }
        let waited = start.elapsed();
        if let Some(d) = dev
            && waited >= next_poll
        {
            d.poll_fault()?;
            next_poll = waited + FAULT_POLL;
        }
        if waited >= timeout {
            // The value may have come meanwhile; a fault may explain why it did not.
            if current() >= value {
                return Ok(());
            }
            if let Some(d) = dev {
                d.poll_fault()?;
            }
            return Err(HcqError::Timeout {
                what: what.to_string(),
                wanted: value,
                current: current(),
                waited_ms: waited.as_millis() as u64,
            });
        }
        if spins < 256 {
            spins += 1;
            std::hint::spin_loop();
        } else if waited < SPIN_BEFORE_SLEEP {
            std::thread::yield_now();
        } else if let Some(d) = dev.filter(|_| in_event) {
            let left = timeout.saturating_sub(waited).min(SLEEP_SLICE);
            d.sleep(left.as_millis().max(1) as u32)?;
            next_poll = Duration::ZERO;
        } else {
            std::thread::sleep(Duration::from_micros(200));
        }
    }
}
