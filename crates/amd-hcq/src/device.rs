//! A GPU: its transport, and its state split by concern — submission (the timeline
//! and the rings), health, memory given back, the resources of the runtime's own
//! operations, profiling. See "Locks" in `docs/runtime.md` for the locks they hold.

use std::cell::RefCell;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::time::Duration;

use parking_lot::Mutex;

use crate::fence::{DeviceId, DeviceLink, Fences, Link, Marks, Progress};
use crate::health::Health;
use crate::iface::{BufferKind, DeviceInterface, DeviceMemory, DeviceProps};
use crate::memory::{Buffer, Reuse};
use crate::profile::Profiling;
use crate::queue::{CmdList, ComputeQueue, CopyQueue, Pm4, Sdma, Work};
use crate::record::Recording;
use crate::resources::{Launcher, Staging};
use crate::rings::{Engines, Lane, OnRing, RING_SIZE, Ring, Submission};
use crate::signal::{Signal, SignalPool};
use crate::timeline::{OpName, Point, Timeline, TimelineHandle};
use crate::{HcqError, Result};

/// The state of an open GPU, shared by its handles, split by concern.
pub(crate) struct DeviceInner<I: DeviceInterface> {
    // Fields drop in order: the queues first (destroying a queue stops its work), then
    // the memory the work used.
    /// The timeline and the rings.
    pub(crate) submission: Submission<I>,
    pub(crate) iface: I,
    pub(crate) index: usize,
    /// The platform's signal page (and its list of devices).
    pub(crate) pool: Arc<SignalPool<I>>,
    /// The sticky fault and the wait timeout.
    pub(crate) health: Health,
    /// What the runtime's own operations use: scratch, kernel arguments, staging.
    pub(crate) resources: Resources<I>,
    pub(crate) profile: Profiling<I>,
    /// Memory given back: reusable, or waiting for the work that may use it.
    pub(crate) memory: Mutex<Reuse<I>>,
}

/// The device's resources for its own operations.
pub(crate) struct Resources<I: DeviceInterface> {
    /// Scratch, the kernel-argument ring and the launch list: a launch takes all three.
    pub(crate) launcher: Mutex<Launcher<I>>,
    /// Held for a whole host copy (each chunk waits for its staging buffer).
    pub(crate) staging: Mutex<Staging<I>>,
}

/// A GPU opened by the runtime. Cheap to clone; the last clone releases everything
/// (work still running is abandoned: [`Device::synchronize`] first to finish it).
pub struct Device<I: DeviceInterface = crate::AnyIface> {
    pub(crate) inner: Arc<DeviceInner<I>>,
}

impl<I: DeviceInterface> Clone for Device<I> {
    fn clone(&self) -> Self {
        Device {
            inner: self.inner.clone(),
        }
    }
}

impl<I: DeviceInterface> std::fmt::Debug for Device<I> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Device")
            .field("index", &self.inner.index)
            .field("arch", &self.props().arch)
            .finish()
    }
}

impl<I: DeviceInterface> DeviceInner<I> {
    /// The device as signals and buffers hold it.
    pub(crate) fn link(self: &Arc<Self>) -> Link<I> {
        let w: Weak<Self> = Arc::downgrade(self);
        w
    }

    /// The device's identity, index and platform.
    #[inline]
    pub(crate) fn id(self: &Arc<Self>) -> DeviceId {
        DeviceId {
            key: Arc::as_ptr(self) as *const () as usize,
            index: self.index,
            platform: self.pool.key(),
        }
    }

    /// The timeline and the rings, locked.
    #[inline]
    pub(crate) fn engines(&self) -> parking_lot::MutexGuard<'_, Engines<I>> {
        self.submission.engines.lock()
    }

    /// Completed timeline value.
    pub(crate) fn completed(&self) -> u64 {
        let done = self.engines().timeline.done().logical();
        // Release: a thread that finds a value here (Acquire) sees what the GPU wrote
        // before it, as this thread does after its read of the signal.
        self.submission.done_seen.fetch_max(done, Ordering::AcqRel);
        done
    }

    /// The device's sticky fault, if it has one (no transport call).
    #[inline]
    pub(crate) fn check(&self) -> Result<()> {
        if self.health.faulted() {
            return Err(self.health.error(self.index));
        }
        Ok(())
    }

    /// Asks the transport (without waiting) whether the device faulted; records it.
    pub(crate) fn poll_fault(&self) -> Result<()> {
        self.check()?;
        let report = self.iface.hang_report();
        if report.is_empty() {
            return Ok(());
        }
        self.record_fault(report);
        Err(self.health.error(self.index))
    }

    /// Makes the device's fault sticky (the first report wins).
    pub(crate) fn record_fault(&self, report: Vec<String>) {
        // The oldest named submission not done (unknown while a submitter holds the
        // timeline: this may run under it).
        let culprit = self.submission.engines.try_lock().and_then(|e| e.timeline.culprit());
        self.health.record(culprit, report);
    }

    /// What the last wait saw complete, as a [`Point::logical`] number.
    #[inline]
    pub(crate) fn seen_done(&self) -> u64 {
        // Acquire: pairs with `completed`.
        self.submission.done_seen.load(Ordering::Acquire)
    }

    /// Whether the work up to `p` is done.
    pub(crate) fn is_done(&self, p: Point) -> bool {
        self.engines().timeline.is_done(p)
    }

    /// The value the last submission signals.
    pub(crate) fn last_submitted(&self) -> u64 {
        self.engines().timeline.last().logical()
    }

    /// Releases freed memory the GPU is done with into the cache. No lock of this
    /// device's is held while other devices are asked how far their work is.
    pub(crate) fn reclaim(&self) {
        // Notes the timeline's progress for later waits.
        self.completed();
        let pending = std::mem::take(&mut self.memory.lock().pending);
        if pending.is_empty() {
            return;
        }
        let now = Progress::of(
            pending
                .iter()
                .flat_map(|(fences, ..)| fences.iter().filter_map(|(w, _)| w.upgrade())),
        );
        let mut m = self.memory.lock();
        for (fences, kind, mem) in pending {
            if now.passed(&fences) {
                m.cache.put(kind, mem);
            } else {
                m.pending.push((fences, kind, mem));
            }
        }
    }
}

impl<I: DeviceInterface> DeviceLink<I> for DeviceInner<I> {
    fn marks(&self) -> (Marks, Marks) {
        self.engines().marks()
    }

    fn check(&self) -> Result<()> {
        DeviceInner::check(self)
    }

    fn poll_fault(&self) -> Result<()> {
        DeviceInner::poll_fault(self)
    }

    fn sleep(&self, ms: u32) -> Result<()> {
        self.iface.sleep(ms).map(|_| ())
    }

    fn timeout(&self) -> Duration {
        self.health.timeout()
    }

    fn peers(&self) -> Vec<Link<I>> {
        self.pool.devices()
    }

    fn take_back(&self, fences: Fences<I>, kind: BufferKind, mem: I::Memory) {
        self.memory.lock().give_back(fences, kind, mem);
    }
}

/// A thread's spare lists for [`Device::submit_ordered`].
type Spare = (Option<ComputeQueue>, Option<CopyQueue>);

thread_local! {
    /// The lists [`Device::submit_ordered`] builds are recorded into, reused by each
    /// thread (a build that submits again, from its closure, gets a fresh one).
    static SPARE: RefCell<Spare> = const { RefCell::new((None, None)) };
}

/// Whether a list built for [`Device::submit_ordered`] can go out as built (no symbol
/// to bind, no kernel arguments to place).
fn sent_as_built(rec: &Recording) -> Result<()> {
    not_plain(rec, "Device::submit_ordered")
}

/// [`HcqError::NotSentAsBuilt`] for a list `call` sends as built, unless it holds no
/// symbol and no kernel arguments.
fn not_plain(rec: &Recording, call: &'static str) -> Result<()> {
    if rec.is_plain() {
        return Ok(());
    }
    let launch = !rec.kernargs.is_empty();
    Err(HcqError::NotSentAsBuilt {
        call,
        // A launch's own variables (its kernel-argument address) are not the caller's.
        variable: if launch {
            None
        } else {
            rec.vars.first().map(|v| v.name().to_string())
        },
        launch,
    })
}

impl<I: DeviceInterface> Device<I> {
    /// Opens a device over `iface` with a compute queue of `format`, sharing `pool`
    /// (the platform's signal page) or creating it.
    pub(crate) fn with_iface(
        iface: I,
        index: usize,
        pool: Option<Arc<SignalPool<I>>>,
        format: crate::QueueFormat,
    ) -> Result<Self> {
        let pool = match pool {
            Some(p) => {
                iface.map(&p.mem)?;
                p
            }
            None => Arc::new(SignalPool::new(&iface)?),
        };
        let target = iface.props().target;
        let keep_freed = iface.keeps_freed_memory();
        // The timeline's and the fences' signals belong to the device; no wait goes
        // through them as signals (waits for the timeline go through the device).
        let none = || -> Link<I> { Weak::<DeviceInner<I>>::new() };
        let fence = || Signal::new(&pool, none(), None, 0);
        let compute = match format {
            crate::QueueFormat::Pm4 => {
                Lane::new(Ring::new(iface.create_queue(false, RING_SIZE)?), fence()?, target, None)
            }
            crate::QueueFormat::Aql => {
                let ib = iface.alloc(crate::aql::IB_BYTES, BufferKind::Uncached)?;
                let aql = crate::aql::AqlLane::new(ib, target);
                Lane::new(
                    Ring::new(iface.create_aql_queue(RING_SIZE)?),
                    fence()?,
                    target,
                    Some(aql),
                )
            }
        };
        let sdma = Lane::new(Ring::new(iface.create_queue(true, RING_SIZE)?), fence()?, target, None);
        let event = iface.queue_event();
        let timeline = Timeline::new(
            Signal::new(&pool, none(), event, 0)?,
            Signal::new(&pool, none(), event, 0)?,
        );
        let inner = Arc::new(DeviceInner {
            submission: Submission {
                engines: Mutex::new(Engines::new(compute, sdma, timeline)),
                restart: Mutex::new(()),
                done_seen: std::sync::atomic::AtomicU64::new(0),
            },
            iface,
            index,
            pool,
            health: Health::new(crate::signal::default_timeout()),
            resources: Resources {
                launcher: Mutex::new(Launcher::default()),
                staging: Mutex::new(Staging::default()),
            },
            profile: Profiling::new(index),
            memory: Mutex::new(Reuse::new(keep_freed)),
        });
        inner.pool.register(inner.link());
        let dev = Device { inner };
        // The kernel-argument region is made now, as tinygrad 0.10.1 makes it when it
        // opens a device: the first launch does not pay for allocating and pinning
        // 16 MiB, and a device that cannot have it fails to open rather than at its
        // first launch.
        dev.make_kernarg_region()?;
        if dev.inner.profile.trace_path.is_some() {
            dev.set_profiling(true);
            dev.calibrate_clock()?;
        }
        Ok(dev)
    }

    pub(crate) fn pool(&self) -> Arc<SignalPool<I>> {
        self.inner.pool.clone()
    }

    /// The format of the device's compute queue.
    pub fn queue_format(&self) -> crate::QueueFormat {
        self.inner.submission.engines.lock().compute_format()
    }

    /// The GPU's properties.
    pub fn props(&self) -> &DeviceProps {
        self.inner.iface.props()
    }

    /// The transport.
    pub fn iface(&self) -> &I {
        &self.inner.iface
    }

    /// Index among the platform's GPUs.
    pub fn index(&self) -> usize {
        self.inner.index
    }

    /// A new signal with `value`, owned by this device (its hang report is this
    /// device's).
    pub fn new_signal(&self, value: u64) -> Result<Signal<I>> {
        Signal::new(&self.inner.pool, self.inner.link(), None, value)
    }

    /// A compute command list for this device's family.
    pub fn compute_queue(&self) -> ComputeQueue {
        ComputeQueue::new(self.props().target)
    }

    /// A copy command list for this device's family.
    pub fn copy_queue(&self) -> CopyQueue {
        CopyQueue::new(self.props().target)
    }

    /// Submits a compute list as built, not ordered on the timeline (the caller orders
    /// it with its own signals). A fence after it counts it done, so the buffers and
    /// signals it uses are not reused before. A list with symbols or kernel arguments
    /// goes through [`ComputeQueue::submit`] instead.
    pub fn submit_compute(&self, q: &ComputeQueue) -> Result<()> {
        self.inner.check()?;
        not_plain(&q.rec, "Device::submit_compute")?;
        self.inner.engines().push_plain(q, &*self.inner)
    }

    /// Submits a copy list as built, not ordered on the timeline (followed by a fence, as
    /// [`Device::submit_compute`]). A list with symbols goes through
    /// [`CopyQueue::submit`] instead.
    pub fn submit_copy(&self, q: &CopyQueue) -> Result<()> {
        self.inner.check()?;
        not_plain(&q.rec, "Device::submit_copy")?;
        self.inner.engines().push_plain(q, &*self.inner)
    }

    /// Submits work ordered on the device timeline: waits for everything submitted
    /// before, runs `build`, then signals the next timeline value, which it returns.
    /// `build` records into the list it is given and runs before any of the runtime's
    /// locks is taken, so it may allocate, wait or submit other work; the list is then
    /// sent with the timeline held, so ring order and value order are the same,
    /// whatever thread submits. The list goes out as built: a symbol or a kernel launch
    /// in it is an error and nothing is sent (submit those with
    /// [`ComputeQueue::submit`], [`CopyQueue::submit`] or [`Program::enqueue`]), and
    /// the memory it names by address must outlive the work, as with any list.
    ///
    /// [`Program::enqueue`]: crate::Program::enqueue
    pub fn submit_ordered(&self, copy: bool, build: impl FnOnce(&mut Work<'_>) -> Result<()>) -> Result<u64> {
        self.inner.check()?;
        let p = if copy {
            self.submit_built::<Sdma>(|s| &mut s.1, build)?
        } else {
            self.submit_built::<Pm4>(|s| &mut s.0, build)?
        };
        Ok(p.logical())
    }

    /// [`Device::submit_ordered`] on the engine of `E`. This thread's list (in `slot`)
    /// is reused: no allocation per submit. Lists hold the signals they name until
    /// sent (what is freed before waits for the timeline only from then), and are
    /// emptied with no lock of the device held (what they kept may be freed then).
    fn submit_built<E: OnRing>(
        &self,
        slot: fn(&mut Spare) -> &mut Option<CmdList<E>>,
        build: impl FnOnce(&mut Work<'_>) -> Result<()>,
    ) -> Result<Point> {
        let target = self.props().target;
        let mut q = SPARE
            .with_borrow_mut(|s| slot(s).take())
            .unwrap_or_else(|| CmdList::new(target));
        q.clear();
        q.target = target;
        let r = build(&mut E::work(&mut q)).and_then(|()| {
            sent_as_built(&q.rec)?;
            self.submit_point::<E>(OpName::Static("submission"), |w| {
                w.put_packets(&q.cmds, &q);
                Ok(())
            })
        });
        q.clear();
        SPARE.with_borrow_mut(|s| *slot(s) = Some(q));
        r
    }

    /// The runtime's own ordered submissions: `build` records into the timeline's list,
    /// with the timeline locked, between the wait for its last value and the signal of
    /// its next (which it returns), and the list goes to the ring in one write. Only
    /// the runtime's code runs there (it takes no lock of the device and frees
    /// nothing): a user's list is built first, by [`Device::submit_ordered`].
    #[inline]
    pub(crate) fn submit_point<E: OnRing>(
        &self,
        name: OpName,
        build: impl FnOnce(&mut CmdList<E>) -> Result<()>,
    ) -> Result<Point> {
        self.inner.check()?;
        let mut e = self.lock_engines()?;
        e.ordered(name, self.inner.seen_done(), &*self.inner, build)
    }

    /// The timeline and the rings, locked with room for one more timeline value
    /// (restarting the timeline first when it passed [`TIMELINE_WRAP`]).
    ///
    /// [`TIMELINE_WRAP`]: crate::TIMELINE_WRAP
    #[inline]
    pub(crate) fn lock_engines(&self) -> Result<parking_lot::MutexGuard<'_, Engines<I>>> {
        loop {
            let e = self.inner.engines();
            if !e.timeline.must_restart() {
                return Ok(e);
            }
            drop(e);
            self.restart_timeline()?;
        }
    }

    /// Waits for the work up to timeline point `p`.
    #[inline]
    pub fn wait_point(&self, p: Point) -> Result<()> {
        self.wait_timeline(p.logical())
    }

    /// The timeline as other queues see it: its signal's address, the event a write
    /// of it raises, and the point the last submission signals. A list that waits for
    /// `addr` to reach `last.value` runs after everything submitted so far; a list
    /// submitted with [`ComputeQueue::submit`] or [`CopyQueue::submit`] gets its own
    /// point. The address changes when the timeline restarts (past
    /// [`TIMELINE_WRAP`](crate::TIMELINE_WRAP) values): take a new handle for each list.
    pub fn timeline_handle(&self) -> Result<TimelineHandle> {
        Ok(self.inner.engines().timeline.handle())
    }

    /// Address of the timeline signal and the value the last submission signals.
    pub fn timeline_snapshot(&self) -> Result<(u64, u64)> {
        let e = self.inner.engines();
        Ok((e.timeline.signal().addr(), e.timeline.last().value))
    }

    /// The timeline's completed point and the point the last submission will
    /// signal, as [`Point::logical`] numbers.
    pub fn timeline(&self) -> (u64, u64) {
        (self.inner.completed(), self.inner.last_submitted())
    }

    /// Waits for timeline `value`: spins, yields, and after 2 s sleeps in the
    /// transport's queue event. A fault of the device ends it at once with
    /// [`HcqError::DeviceFault`]; the value not coming in time is
    /// [`HcqError::Timeout`].
    #[inline]
    pub fn wait_timeline(&self, value: u64) -> Result<()> {
        if value <= self.inner.seen_done() {
            return Ok(());
        }
        self.wait_timeline_slow(value)
    }

    /// [`Device::wait_timeline`] for a value the last wait did not see done.
    #[cold]
    fn wait_timeline_slow(&self, value: u64) -> Result<()> {
        let timeout = self.inner.health.timeout();
        // Logical values only grow, across restarts of the GPU's value too.
        crate::signal::wait_until(Some(&*self.inner), true, value, timeout, "the timeline", || {
            self.inner.completed()
        })
    }

    /// The device's state, without waiting: `Ok` while healthy, else the sticky
    /// [`HcqError::DeviceFault`] every operation returns until the device is dropped
    /// and opened again.
    pub fn health(&self) -> Result<()> {
        self.inner.poll_fault()
    }

    /// Waits until everything submitted so far is done, then releases memory freed
    /// meanwhile.
    pub fn synchronize(&self) -> Result<()> {
        let last = self.inner.last_submitted();
        self.wait_timeline(last)?;
        self.inner.reclaim();
        Ok(())
    }

    /// Restarts the timeline at 1 (values are 32 bits on the GPU): waits for all work
    /// and swaps in the shadow signal. One thread restarts; the others wait for it and
    /// find nothing left to do.
    fn restart_timeline(&self) -> Result<()> {
        let _restarting = self.inner.submission.restart.lock();
        let last = {
            let e = self.inner.engines();
            if !e.timeline.must_restart() {
                return Ok(());
            }
            e.timeline.last().logical()
        };
        // Every submitter now waits for this lock, so `last` stays the last value.
        self.wait_timeline(last)?;
        self.inner.reclaim();
        self.inner.engines().timeline.restart()
    }

    /// Sets the timeline's next value (tests of the wrap).
    #[doc(hidden)]
    pub fn set_timeline_next_for_test(&self, next: u64) -> Result<()> {
        self.synchronize()?;
        self.inner.engines().timeline.set_next_for_test(next)
    }

    /// Invalidates and writes back every GPU cache (HDP flush + ACQUIRE_MEM), ordered
    /// on the timeline, and waits for it.
    pub fn invalidate_caches(&self) -> Result<()> {
        let v = self.submit_ordered(false, |w| {
            w.compute()?.memory_barrier();
            Ok(())
        })?;
        self.wait_timeline(v)
    }

    /// Sets how long waits last before [`HcqError::Timeout`] (default: 30 s or
    /// `HCQDEV_WAIT_TIMEOUT_MS`).
    pub fn set_timeout(&self, timeout: Duration) {
        self.inner.health.set_timeout(timeout);
    }

    /// Allocations held in the reuse cache, and freed ones waiting for the GPU.
    pub fn memory_stats(&self) -> (usize, usize) {
        self.inner.reclaim();
        let m = self.inner.memory.lock();
        (m.cache.len(), m.pending.len())
    }

    /// Frees the allocations the reuse cache holds (memory freed while work used it
    /// stays until that work is done); returns how many bytes went back to the
    /// transport. Dropped buffers are kept for reuse, up to
    /// [`CACHE_LIMIT`](crate::CACHE_LIMIT) bytes: this returns them, for
    /// another user of the GPU or to make a freed buffer's address fault again.
    ///
    /// ```
    /// use amd_hcq::{BufferKind, Platform};
    ///
    /// let dev = Platform::mock(amd_hcq::mock::MockConfig::gfx1100s(1))?.device(0)?;
    /// drop(dev.alloc(4096, BufferKind::Device)?);
    /// assert_eq!(dev.memory_stats(), (1, 0));
    /// assert_eq!(dev.release_cached_memory(), 4096);
    /// assert_eq!(dev.memory_stats(), (0, 0));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn release_cached_memory(&self) -> usize {
        self.inner.reclaim();
        let cached = self.inner.memory.lock().cache.take_all();
        // Freed outside the lock: each is a call to the transport.
        cached.iter().map(DeviceMemory::size).sum()
    }

    /// Allocates `size` bytes of `kind` (reusing a cached allocation of that size).
    ///
    /// ```
    /// use amd_hcq::{BufferKind, Platform};
    ///
    /// let dev = Platform::mock(amd_hcq::mock::MockConfig::gfx1100s(1))?.device(0)?;
    /// let vram = dev.alloc(4096, BufferKind::Device)?; // not CPU-visible: copy through the GPU
    /// dev.copy_in_slice(&vram, 0, &[1u32, 2, 3])?;
    /// let host = dev.alloc(4096, BufferKind::Host)?; // CPU-visible: read and write directly
    /// dev.wait_timeline(dev.copy(&host, 0, &vram, 0, 12)?)?;
    /// assert_eq!(host.read_vec::<u32>(0, 3)?, [1, 2, 3]);
    /// // Sizes the transport cannot give are errors that say what was asked for.
    /// let e = dev.alloc(1 << 50, BufferKind::Device).unwrap_err();
    /// assert!(e.to_string().contains("1125899906842624"), "{e}");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn alloc(&self, size: usize, kind: BufferKind) -> Result<Buffer<I>> {
        self.inner.check()?;
        if size == 0 || size > isize::MAX as usize {
            return Err(HcqError::BufferSize {
                size,
                max: isize::MAX as usize,
            });
        }
        self.inner.reclaim();
        let cached = self.inner.memory.lock().cache.take(kind, size);
        let mem = match cached {
            Some(m) => m,
            None => self.inner.iface.alloc(size, kind)?,
        };
        Ok(Buffer::new(self.inner.link(), self.inner.id(), mem, kind, size))
    }

    /// Maps `buf` (of another device of the same platform) into this GPU, for peer
    /// access.
    pub fn map_peer(&self, buf: &Buffer<I>) -> Result<()> {
        let r = buf.residency();
        let id = self.inner.id();
        if r.on(id.key) {
            return Ok(());
        }
        if r.platform != id.platform {
            return Err(HcqError::OtherPlatform {
                what: "a buffer".into(),
                owner: r.owner,
                device: self.index(),
            });
        }
        self.inner.iface.map(buf.memory())?;
        r.add(id.key);
        Ok(())
    }
}

impl<I: DeviceInterface> Drop for DeviceInner<I> {
    fn drop(&mut self) {
        self.profile.write_env_trace(self.index);
        // Nothing waits here: work still running when the last handle goes is
        // abandoned. The fields drop in declaration order, so the queues are destroyed
        // (the driver preempts them; the mock ends their dispatches) before any memory
        // their packets or kernels use is freed.
    }
}
