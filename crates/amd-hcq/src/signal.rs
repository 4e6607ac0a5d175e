//! Signals: 16-byte slots (value at +0, GPU timestamp at +8) in a page of uncached
//! host memory that every GPU of the platform maps.

use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::device::DeviceInner;
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
pub(crate) struct SignalPool<I: DeviceInterface> {
    pub(crate) mem: I::Memory,
    free: Mutex<Vec<u32>>,
}

impl<I: DeviceInterface> SignalPool<I> {
    pub(crate) fn new(iface: &I) -> Result<Self> {
        let mem = iface.alloc(SIGNAL_SLOT * SIGNAL_SLOTS, BufferKind::Uncached)?;
        Ok(SignalPool {
            mem,
            free: Mutex::new((0..SIGNAL_SLOTS as u32).rev().collect()),
        })
    }

    fn take(&self) -> Result<u32> {
        self.free
            .lock()
            .pop()
            .ok_or_else(|| HcqError::InvalidArgument(format!("all {SIGNAL_SLOTS} signals are in use")))
    }
}

/// A signal: a 64-bit value the GPU writes (RELEASE_MEM / SDMA FENCE) and the CPU
/// or another queue waits on, with a timestamp slot beside it.
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
    pool: Arc<SignalPool<I>>,
    slot: u32,
    owner: Weak<DeviceInner<I>>,
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
    pub(crate) fn new(dev: &Arc<DeviceInner<I>>, value: u64, timeline: bool) -> Result<Self> {
        let pool = dev.pool.clone();
        let slot = pool.take()?;
        let event = if timeline { dev.iface.queue_event() } else { None };
        let s = Signal {
            pool,
            slot,
            owner: Arc::downgrade(dev),
            event,
        };
        s.set(value)?;
        s.pool.mem.store_u64(s.offset() + 8, 0)?;
        Ok(s)
    }

    fn offset(&self) -> usize {
        self.slot as usize * SIGNAL_SLOT
    }

    /// Address of the value.
    pub fn addr(&self) -> u64 {
        self.pool.mem.va() + self.offset() as u64
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
        self.pool.mem.load_u64(self.offset()).unwrap_or(0)
    }

    /// Sets the value from the CPU.
    pub fn set(&self, value: u64) -> Result<()> {
        self.pool.mem.store_u64(self.offset(), value)
    }

    /// The raw GPU timestamp written by a `timestamp` command (ticks of the GPU clock).
    pub fn timestamp(&self) -> u64 {
        self.pool.mem.load_u64(self.offset() + 8).unwrap_or(0)
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
pub(crate) fn wait_until<I: DeviceInterface>(
    dev: Option<&DeviceInner<I>>,
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
            d.iface.sleep(left.as_millis().max(1) as u32)?;
            next_poll = Duration::ZERO;
        } else {
            std::thread::sleep(Duration::from_micros(200));
        }
    }
}

impl<I: DeviceInterface> Drop for Signal<I> {
    fn drop(&mut self) {
        self.pool.free.lock().push(self.slot);
    }
}
