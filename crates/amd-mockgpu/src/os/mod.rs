//! The OS boundary: [`MockSys`], the `Sys` and `Mmio` the transports call, the
//! device threads that run the engines, and the inspection and fault-injection API
//! tests use.

mod config;
mod kfd;
mod pci;
mod sys;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::driver::bus::PciBus;
use crate::driver::{Driver, FIRST_RENDER_MINOR, QueueInfo};
use crate::engine::executor::{DispatchInfo, KernelExecutor, Rdna3Executor};
use crate::engine::{GpuRun, QueueState, Stop, run_long};
use crate::mem::MemoryFault;
use crate::pci::FirmwareCatalogue;
use amd_kfd::abi::*;
use amd_kfd::sys::{HostSys, SysError, SysResult};
use nix::errno::Errno;
use parking_lot::{Condvar, Mutex, MutexGuard};

pub use config::{DEFAULT_IDLE_POLL, MockConfig};
pub use pci::PciFault;

/// KFD's topology directory and its nodes' directory, which the mock serves.
pub(crate) use amd_kfd::topology::{TOPOLOGY, TOPOLOGY_NODES as NODES};

/// Counts of what the mock driver holds for the caller, to find leaks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MockStats {
    /// Open descriptors (virtual and passed-through).
    pub open_fds: usize,
    /// Live memory handles.
    pub memory_handles: usize,
    /// GPU mappings of memory, summed over GPUs.
    pub gpu_mappings: usize,
    /// Host mappings made through the mock (reservations, render-node and doorbell
    /// maps), as disjoint ranges.
    pub host_mappings: usize,
    /// Live events.
    pub events: usize,
    /// Live queues.
    pub queues: usize,
    /// VRAM bytes allocated, per GPU.
    pub vram_used: Vec<u64>,
}

/// The mock driver, implementing [`Sys`](amd_kfd::sys::Sys).
#[derive(Debug)]
pub struct MockSys {
    shared: Arc<Shared>,
    workers: Mutex<Vec<std::thread::JoinHandle<()>>>,
}

/// How the engines run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ExecMode {
    /// A device thread per GPU consumes its queues, woken by doorbells (realistic,
    /// concurrent).
    #[default]
    Threaded,
    /// Queues run in the thread that rings the doorbell, and in event waits
    /// (deterministic).
    Inline,
}

/// What the driver and the engines share.
#[derive(Debug)]
pub struct Shared {
    pub(crate) driver: Mutex<Driver>,
    pub(crate) events_changed: Condvar,
    /// Notified when a long operation ends (DESTROY_QUEUE waits for its queue's).
    pub(crate) long_done: Condvar,
    pub(crate) gpu_wake: Vec<Condvar>,
    /// Per GPU: work arrived since the device thread last looked (doorbells, other
    /// engines' writes).
    pub(crate) kicks: Vec<AtomicBool>,
    /// Per GPU: the device thread is about to wait, or waits, on `gpu_wake`.
    pub(crate) sleeping: Vec<AtomicBool>,
    /// Per GPU: the address of its mapped doorbell page (0: none), readable without
    /// the driver lock so that a doorbell to a running engine takes no lock.
    pub(crate) doorbell_pages: Vec<AtomicU64>,
    /// Threads in [`MockSys::wait_for_sleeping_gpu`], and what they wait on: a device
    /// thread about to sleep notifies them only when there are some.
    pub(crate) sleep_waiters: AtomicUsize,
    pub(crate) sleep_lock: Mutex<()>,
    pub(crate) gpu_slept: Condvar,
    /// Mappings of PCI GPUs' doorbell BARs: (start, length, engine slot). Read
    /// without the driver lock by `Sys::doorbell_written`; written under it.
    pub(crate) pci_doorbells: parking_lot::RwLock<Vec<(usize, usize, usize)>>,
    pub(crate) host: HostSys,
    pub(crate) mode: ExecMode,
    /// [`MockConfig::idle_poll`].
    pub(crate) idle_poll: Duration,
}

impl std::ops::Deref for MockSys {
    type Target = Shared;
    fn deref(&self) -> &Shared {
        &self.shared
    }
}

impl Drop for MockSys {
    fn drop(&mut self) {
        {
            let mut d = self.shared.driver.lock();
            d.shutdown = true;
            for (_, stop) in d.engines.running.values() {
                // Release: pairs with the engine's Acquire load between slices.
                stop.store(true, std::sync::atomic::Ordering::Release);
            }
        }
        // SeqCst: as every kick (a polling device thread sees it and stops).
        for k in &self.shared.kicks {
            k.store(true, std::sync::atomic::Ordering::SeqCst);
        }
        for cv in &self.shared.gpu_wake {
            cv.notify_all();
        }
        for w in self.workers.get_mut().drain(..) {
            // A device thread that panicked has nothing left to report here.
            let _ = w.join();
        }
    }
}

/// Longest a device thread sleeps between looks at a queue blocked on memory that
/// only the host may change (host stores do not ring anything).
pub const BLOCKED_POLL_MAX: Duration = Duration::from_millis(1);
const BLOCKED_POLL_MIN: Duration = Duration::from_micros(20);

/// How long an idle device thread spins before it starts yielding its core between
/// looks at its doorbells: a doorbell right after the last one (back-to-back
/// submissions) is seen within a few cache misses.
const POLL_SPIN: Duration = Duration::from_micros(20);

/// Rounds of looks (64 each, about 1.6 µs on the machines measured) between yields
/// once past [`POLL_SPIN`]: a yield costs about 0.5 µs there, during which a doorbell
/// goes unseen (a yield every round put a submission to an engine idle 50 µs at
/// 0.42–1.10 µs, one every eighth at 0.30–0.86). Another thread waiting for the core
/// gets it at the next yield, within about 13 µs, or when the scheduler preempts.
const YIELD_EVERY: u32 = 8;

impl Shared {
    /// Runs GPU `g`'s queues with the driver locked, and the long operation it
    /// starts (a dispatch, a long copy) with the lock released; then wakes whoever
    /// that concerns.
    pub(crate) fn run_locked(&self, d: &mut MutexGuard<'_, Driver>, g: usize) -> GpuRun {
        let mut run = d.run_gpu(g);
        if let Some(s) = run.started.take() {
            let space = d.engines.space.clone();
            let kernels = d.engines.kernels.get(g).cloned();
            let result = MutexGuard::unlocked(d, || match &kernels {
                Some(k) => run_long(&space, k, &s),
                None => Err(Stop::Error("no kernel executor for this GPU".into())),
            });
            d.finish_long(&s, result);
            self.long_done.notify_all();
            run.progressed = true;
        }
        if run.progressed {
            // This GPU's writes may release waits of the others.
            for i in (0..d.engine_slots()).filter(|&i| i != g) {
                // SeqCst: see `device_thread` (a kick and a sleeping flag, each side
                // storing one and loading the other).
                self.kicks[i].store(true, Ordering::SeqCst);
                self.gpu_wake[i].notify_one();
            }
        }
        if std::mem::take(&mut d.events_dirty) {
            self.events_changed.notify_all();
        }
        run
    }

    /// Inline mode: runs every GPU until nothing moves.
    pub(crate) fn run_all_inline(&self, d: &mut MutexGuard<'_, Driver>) {
        loop {
            let mut progressed = false;
            for g in 0..d.engine_slots() {
                progressed |= self.run_locked(d, g).progressed;
            }
            if !progressed {
                break;
            }
        }
    }

    /// Watches GPU `g`'s kick for [`Shared::idle_poll`] with the driver unlocked,
    /// yielding the core every [`YIELD_EVERY`] rounds of looks after [`POLL_SPIN`];
    /// whether a kick came (the mock's drop kicks too).
    fn poll_idle(&self, d: &mut MutexGuard<'_, Driver>, g: usize) -> bool {
        if self.idle_poll.is_zero() {
            return false;
        }
        MutexGuard::unlocked(d, || {
            let start = Instant::now();
            let mut round = 0u32;
            loop {
                round = round.wrapping_add(1);
                for _ in 0..64 {
                    // SeqCst: as the kick's other loads (see `device_thread`).
                    if self.kicks[g].load(Ordering::SeqCst) {
                        return true;
                    }
                    std::hint::spin_loop();
                }
                let waited = start.elapsed();
                if waited >= self.idle_poll {
                    return false;
                }
                // Past the first moments, other threads (the submitter's, the other
                // engines') come first.
                if waited >= POLL_SPIN && round % YIELD_EVERY == 0 {
                    std::thread::yield_now();
                }
            }
        })
    }

    fn device_thread(self: Arc<Self>, g: usize) {
        let mut d = self.driver.lock();
        let mut backoff = BLOCKED_POLL_MIN;
        while !d.shutdown {
            self.kicks[g].store(false, Ordering::SeqCst);
            let run = self.run_locked(&mut d, g);
            if run.progressed {
                backoff = BLOCKED_POLL_MIN;
                continue;
            }
            // Nothing to run and no time to wake at: watch for a doorbell a while (the
            // driver unlocked), as a command processor polls its rings, so that one
            // arriving soon costs its writer no wake-up.
            if !run.blocked && run.wake_at.is_none() && self.poll_idle(&mut d, g) {
                continue;
            }
            // Announce the sleep, then look for a kick, both SeqCst; a doorbell stores
            // its kick, then looks at `sleeping`. One of the two sees the other's store:
            // either this thread finds the kick, or the doorbell notifies, taking the
            // driver lock that this thread holds until it waits.
            self.sleeping[g].store(true, Ordering::SeqCst);
            // SeqCst against the waiter's count: see `wait_for_sleeping_gpu`.
            if self.sleep_waiters.load(Ordering::SeqCst) > 0 {
                let _g = self.sleep_lock.lock();
                self.gpu_slept.notify_all();
            }
            if self.kicks[g].load(Ordering::SeqCst) || d.shutdown {
                self.sleeping[g].store(false, Ordering::SeqCst);
                continue;
            }
            let mut wait = if run.blocked { Some(backoff) } else { None };
            if let Some(t) = run.wake_at {
                let until = t.saturating_duration_since(Instant::now());
                wait = Some(wait.map_or(until, |w| w.min(until)));
            }
            match wait {
                Some(w) => {
                    self.gpu_wake[g].wait_for(&mut d, w);
                    if run.blocked {
                        backoff = (backoff * 2).min(BLOCKED_POLL_MAX);
                    }
                }
                None => self.gpu_wake[g].wait(&mut d),
            }
            self.sleeping[g].store(false, Ordering::SeqCst);
        }
    }
}

impl Default for MockSys {
    fn default() -> Self {
        MockSys::new(MockConfig::default())
    }
}

pub(crate) fn err(op: &str, errno: Errno) -> SysError {
    SysError::new(op, errno)
}

impl MockSys {
    /// A mock with the GPUs of `config`.
    ///
    /// # Panics
    /// If a PCI profile is invalid (VRAM not a whole number of MiB, a BAR size not a
    /// power of two, a discovery table too large for its format), the firmware
    /// directory of [`crate::PciFirmware::Dir`] cannot be listed, or the host refuses the
    /// memory behind a PCI GPU's BARs (`memfd_create`).
    pub fn new(config: MockConfig) -> Self {
        let n_kfd = config.gpus.len();
        let mut driver = Driver::new(config.gpus, config.cpu_node);
        driver.kernel_log = config.kernel_log;
        driver.sanitize = config.sanitize;
        driver.engines.sanitize = config.sanitize;
        let invalid = |e: String| -> PciBus { panic!("MockSys::new: the PCI configuration is invalid: {e}") };
        let firmware = if config.pci.is_empty() {
            Ok(FirmwareCatalogue::default())
        } else {
            config.pci_firmware.catalogue()
        };
        driver.pci = firmware
            .and_then(|f| PciBus::new(config.pci, config.vfio, Arc::new(f)))
            .unwrap_or_else(invalid);
        // Engine slots: the KFD GPUs, then the PCI GPUs, each with its executor.
        let n = driver.engine_slots();
        for _ in n_kfd..n {
            let exec: Box<dyn KernelExecutor> = Box::new(Rdna3Executor::default());
            driver.engines.kernels.push(Arc::new(Mutex::new(exec)));
        }
        let shared = Arc::new(Shared {
            driver: Mutex::new(driver),
            events_changed: Condvar::new(),
            long_done: Condvar::new(),
            gpu_wake: (0..n).map(|_| Condvar::new()).collect(),
            kicks: (0..n).map(|_| AtomicBool::new(false)).collect(),
            sleeping: (0..n).map(|_| AtomicBool::new(false)).collect(),
            doorbell_pages: (0..n_kfd).map(|_| AtomicU64::new(0)).collect(),
            sleep_waiters: AtomicUsize::new(0),
            sleep_lock: Mutex::new(()),
            gpu_slept: Condvar::new(),
            pci_doorbells: parking_lot::RwLock::new(Vec::new()),
            host: HostSys,
            mode: config.mode,
            idle_poll: config.idle_poll,
        });
        // The helper threads of dispatches, started now rather than at the first
        // dispatch that wants one.
        amd_isa::pool::prestart(
            std::thread::available_parallelism()
                .map_or(1, |n| n.get())
                .saturating_sub(1),
        );
        let workers = match config.mode {
            ExecMode::Threaded => (0..n)
                .map(|g| {
                    let s = shared.clone();
                    std::thread::Builder::new()
                        .name(format!("mockgpu{g}"))
                        .spawn(move || s.device_thread(g))
                        .expect("spawning a device thread (the process is out of threads)")
                })
                .collect(),
            ExecMode::Inline => Vec::new(),
        };
        MockSys {
            shared,
            workers: Mutex::new(workers),
        }
    }

    /// The execution mode.
    pub fn mode(&self) -> ExecMode {
        self.shared.mode
    }

    /// Replaces the kernel executor (the default is the RDNA3 interpreter,
    /// [`Rdna3Executor`]; [`NoKernels`](crate::NoKernels) records dispatches and runs nothing). Each GPU
    /// gets its own copy where the executor can [`KernelExecutor::fork`] one (GPUs then
    /// run kernels at the same time), else they share it. A dispatch already running
    /// finishes on the executor it started with.
    pub fn set_kernel_executor(&self, exec: Box<dyn KernelExecutor>) {
        let mut d = self.driver.lock();
        let n = d.engines.kernels.len();
        let mut forks: Vec<Box<dyn KernelExecutor>> = (1..n).map_while(|_| exec.fork()).collect();
        let shared: crate::engine::executor::SharedExecutor = Arc::new(Mutex::new(exec));
        d.engines.kernels = (0..n)
            .map(|g| match g {
                0 => shared.clone(),
                _ if forks.len() == n - 1 => Arc::new(Mutex::new(forks.remove(0))),
                _ => shared.clone(),
            })
            .collect();
    }

    /// Every dispatch so far (the most recent 65536), oldest first.
    pub fn dispatches(&self) -> Vec<DispatchInfo> {
        self.driver.lock().engines.dispatch_log.iter().cloned().collect()
    }

    /// The engine's view of queue `id`.
    pub fn queue_state(&self, id: u32) -> Option<QueueState> {
        self.driver.lock().engines.execs.get(&id).map(|q| q.state())
    }

    /// Why the stopped queues of GPU `index` stopped, one line per queue, in queue
    /// order: `queue 3 stopped: memory fault writing 0x7f0000000000 (page not
    /// present) in kernel at 0x7f…: global_store_b32 […], DISPATCH_DIRECT at ring
    /// dword 0x2c`. `amd-kfd` reads them through `Sys::stop_reasons` into
    /// `KfdDevice::fault_report`.
    pub fn stop_reasons(&self, index: usize) -> Vec<String> {
        let mut d = self.driver.lock();
        // What the engines reported and the driver has not taken yet (an engine run
        // takes it when it ends) becomes events now. A stop's reason is set before its
        // reports are made, and both under the driver's lock: a reader that saw a
        // stop's events and then asks here is given its reason.
        d.take_reports();
        d.engines
            .execs
            .values()
            .filter(|q| q.gpu == index)
            .filter_map(|q| q.stop_reason.clone())
            .collect()
    }

    /// Stops (`true`) or resumes (`false`) consumption of queue `id`, as a hung engine.
    pub fn hang_queue(&self, id: u32, hung: bool) -> bool {
        let mut d = self.driver.lock();
        let Some(q) = d.engines.execs.get_mut(&id) else {
            return false;
        };
        q.hung = hung;
        let g = q.gpu;
        drop(d);
        self.wake(g);
        true
    }

    /// Delays consumption of queue `id`: new work waits `delay` after it is seen.
    pub fn delay_queue(&self, id: u32, delay: Duration) -> bool {
        let mut d = self.driver.lock();
        let Some(q) = d.engines.execs.get_mut(&id) else {
            return false;
        };
        q.delay = delay;
        q.not_before = (!delay.is_zero()).then(|| Instant::now() + delay);
        true
    }

    /// Makes every access by GPU `index` that touches `addr` fault.
    pub fn fault_address(&self, index: usize, addr: u64) {
        let d = self.driver.lock();
        if let Some(g) = d.engines.space.write().gpus.get_mut(index) {
            g.fault_addrs.insert(addr);
        }
    }

    /// Forgets the addresses [`MockSys::fault_address`] made fault on GPU `index`.
    pub fn clear_fault_addresses(&self, index: usize) {
        let d = self.driver.lock();
        if let Some(g) = d.engines.space.write().gpus.get_mut(index) {
            g.fault_addrs.clear();
        }
    }

    /// Wakes every engine, as after host writes to memory a queue waits on (inline
    /// mode: runs them now).
    pub fn kick(&self) {
        let n = self.gpu_wake.len();
        for g in 0..n {
            self.wake(g);
        }
    }

    /// Where KFD GPU `gpu`'s doorbell page is mapped in this process (address and
    /// bytes), once a client mapped it. A client that stores doorbells with plain
    /// stores, never calling [`Sys::doorbell_written`](amd_kfd::sys::Sys::doorbell_written)
    /// (an unmodified program under an interposer), has them noticed by whoever
    /// watches these pages and calls it.
    pub fn doorbell_page(&self, gpu: usize) -> Option<(usize, usize)> {
        // Acquire: pairs with the Release store of the page's address at mmap.
        let a = self.doorbell_pages.get(gpu)?.load(Ordering::Acquire);
        (a != 0).then_some((a as usize, crate::driver::DOORBELL_PAGE_BYTES as usize))
    }

    /// How many GPUs the mock's KFD shows (indices for [`MockSys::doorbell_page`]).
    pub fn kfd_gpu_count(&self) -> usize {
        self.doorbell_pages.len()
    }

    /// Whether a doorbell stored now into GPU `gpu`'s page needs telling the mock about
    /// promptly ([`Sys::doorbell_written`](amd_kfd::sys::Sys::doorbell_written)): the
    /// GPU's device thread sleeps, or is about to. An awake device thread reads every
    /// queue's write pointer before it sleeps again, so new work for a busy GPU is
    /// found without a doorbell. Always true in inline mode (no device threads).
    pub fn waits_for_doorbells(&self, gpu: usize) -> bool {
        match self.mode {
            ExecMode::Inline => true,
            // SeqCst: pairs with the device thread's announcement of its sleep.
            ExecMode::Threaded => self.sleeping.get(gpu).is_some_and(|s| s.load(Ordering::SeqCst)),
        }
    }

    /// Blocks until one of `gpus` waits for doorbells ([`MockSys::waits_for_doorbells`])
    /// or `timeout` passes; whether one does. For a watcher of doorbell pages, which has
    /// nothing to watch while every GPU it serves is busy.
    pub fn wait_for_sleeping_gpu(&self, gpus: &[usize], timeout: Duration) -> bool {
        let any = || gpus.iter().any(|&g| self.waits_for_doorbells(g));
        if any() {
            return true;
        }
        let mut guard = self.sleep_lock.lock();
        // Counted before the second look, both SeqCst: a device thread stores its
        // sleeping flag and then loads the count. Either this look sees the flag, or
        // the device thread sees the count and notifies under `sleep_lock`, which it
        // can take only once this thread waits.
        self.sleep_waiters.fetch_add(1, Ordering::SeqCst);
        let deadline = Instant::now() + timeout;
        let mut found = any();
        while !found && !self.gpu_slept.wait_until(&mut guard, deadline).timed_out() {
            found = any();
        }
        self.sleep_waiters.fetch_sub(1, Ordering::SeqCst);
        found || any()
    }

    /// Marks host memory mapped by other means than [`Sys::mmap`](amd_kfd::sys::Sys::mmap)
    /// (a client's own `mmap`, seen by an interposer) as memory the GPU may reach, as
    /// the kernel's user-pointer allocations pin it. The caller answers for it staying
    /// mapped while the GPU may use it.
    pub fn note_host_memory(&self, addr: usize, len: usize) {
        if addr.checked_add(len).is_none() {
            return;
        }
        let d = self.driver.lock();
        // The kernel pins whole pages: the last one's tail is reachable too.
        let end = sys::page_end(addr, len);
        d.engines.space.write().accessible.insert(addr, end);
    }

    /// The GPU clock now (ticks of [`GPU_CLOCK_HZ`](crate::GPU_CLOCK_HZ)), as packets write it.
    pub fn gpu_clock(&self) -> u64 {
        self.driver.lock().gpu_clock()
    }

    pub(crate) fn wake(&self, g: usize) {
        let d = self.driver.lock();
        self.wake_locked(g, d);
    }

    /// [`MockSys::wake`] with the driver already locked (the guard is released).
    pub(crate) fn wake_locked(&self, g: usize, mut d: MutexGuard<'_, Driver>) {
        match self.mode {
            ExecMode::Inline => self.run_all_inline(&mut d),
            ExecMode::Threaded => {
                if let Some(k) = self.kicks.get(g) {
                    k.store(true, Ordering::SeqCst);
                }
                drop(d);
                if let Some(cv) = self.gpu_wake.get(g) {
                    cv.notify_one();
                }
            }
        }
    }

    /// What the driver holds now.
    pub fn stats(&self) -> MockStats {
        let d = self.driver.lock();
        MockStats {
            open_fds: d.fds.len(),
            memory_handles: d.handles.len(),
            gpu_mappings: d.engines.space.read().gpus.iter().map(|g| g.mapped.len()).sum(),
            host_mappings: d.host_maps.len(),
            events: d.events.len(),
            queues: d.queues.len(),
            vram_used: d.gpus.iter().map(|g| g.vram_used).collect(),
        }
    }

    /// The queues created so far, as the hardware half will consume them.
    pub fn queues(&self) -> Vec<QueueInfo> {
        self.driver.lock().queues.values().cloned().collect()
    }

    /// KFD's id of GPU `index`.
    pub fn gpu_id(&self, index: usize) -> Option<u32> {
        self.driver.lock().gpus.get(index).map(|g| g.gpu_id)
    }

    /// Whether `[addr, addr + len)` is mapped to GPU `index`.
    pub fn is_gpu_mapped(&self, index: usize, addr: u64, len: u64) -> bool {
        let d = self.driver.lock();
        index < d.gpus.len() && d.gpu_mapped(index, addr, len)
    }

    /// Whether `[addr, addr + len)` lies in one host mapping made through the mock.
    pub fn is_host_mapped(&self, addr: usize, len: usize) -> bool {
        addr.checked_add(len)
            .is_some_and(|end| self.driver.lock().host_maps.contains(addr, end))
    }

    /// Address of the event page, once registered.
    pub fn event_page(&self) -> Option<u64> {
        self.driver.lock().event_page.map(|(va, _)| va)
    }

    /// Makes the next `n` memory allocations fail with `errno`.
    pub fn fail_next_allocs(&self, n: usize, errno: Errno) {
        self.driver
            .lock()
            .inject
            .alloc
            .extend(std::iter::repeat_n(Some(errno), n));
    }

    /// Lets the next `k` allocations succeed and makes the one after fail with
    /// `errno` (fault-injection sweeps).
    pub fn fail_alloc_after(&self, k: usize, errno: Errno) {
        let mut d = self.driver.lock();
        d.inject.alloc.clear();
        d.inject.alloc.extend(std::iter::repeat_n(None, k));
        d.inject.alloc.push_back(Some(errno));
    }

    /// Lets the next `k` queue creations succeed and makes the one after fail with
    /// `errno`.
    pub fn fail_queue_creation_after(&self, k: usize, errno: Errno) {
        let mut d = self.driver.lock();
        d.inject.create_queue.clear();
        d.inject.create_queue.extend(std::iter::repeat_n(None, k));
        d.inject.create_queue.push_back(Some(errno));
    }

    /// Forgets every injected failure not yet reached (the PCI GPUs' too, see
    /// [`MockSys::pci_inject`]); returns whether one was left.
    pub fn clear_injections(&self) -> bool {
        let left = {
            let mut d = self.driver.lock();
            let left = d.inject.alloc.iter().chain(&d.inject.create_queue).any(Option::is_some);
            d.inject.alloc.clear();
            d.inject.create_queue.clear();
            left
        };
        self.clear_pci_injections() | left
    }

    /// Makes the next queue creation fail with `errno`.
    pub fn fail_next_queue_creation(&self, errno: Errno) {
        self.driver.lock().inject.create_queue.push_back(Some(errno));
    }

    /// Records a memory fault on GPU `index` and fires the memory events.
    pub fn inject_memory_fault(&self, index: usize, fault: MemoryFault) {
        self.driver.lock().memory_fault(index, fault);
        self.events_changed.notify_all();
    }

    /// Fires the hardware-exception events for GPU `index` (a GPU hang reset).
    pub fn inject_hw_exception(&self, index: usize) {
        self.driver.lock().hw_exception(index, KFD_HW_EXCEPTION_GPU_HANG);
        self.events_changed.notify_all();
    }

    /// Signals event `id`, as an interrupt from the GPU would.
    pub fn signal_event(&self, id: u32) -> bool {
        let ok = self.driver.lock().set_event(id, true).is_ok();
        self.events_changed.notify_all();
        ok
    }

    pub(crate) fn virtual_text(&self, path: &Path) -> Option<SysResult<Vec<u8>>> {
        let d = self.driver.lock();
        let missing = || Some(Err(SysError::at("read", path, Errno::ENOENT)));
        // The kernel's module state: a loaded module reads "live" (ROCm's rocminfo
        // checks it before anything else: "ROCk module is NOT loaded").
        if path == Path::new("/sys/module/amdgpu/initstate") {
            return Some(Ok(b"live\n".to_vec()));
        }
        if let Ok(rel) = path.strip_prefix(TOPOLOGY) {
            match rel.to_str() {
                // What the thunk (libhsakmt) reads before the nodes.
                Some("system_properties") => {
                    return Some(Ok(b"platform_oem 0\nplatform_id 0\nplatform_rev 0\n".to_vec()));
                }
                Some("generation_id") => return Some(Ok(b"1\n".to_vec())),
                _ => {}
            }
        }
        let rel = path.strip_prefix(NODES).ok()?;
        let parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
        let node: usize = parts.first()?.parse().ok()?;
        let first_gpu = d.cpu_node as usize;
        let gpu = node.checked_sub(first_gpu).and_then(|i| d.gpus.get(i).map(|g| (i, g)));
        if !(d.cpu_node && node == 0) && gpu.is_none() {
            return missing();
        }
        let counts = |key: &str| -> usize {
            match gpu {
                Some((_, g)) => g.profile.prop(key).unwrap_or(0) as usize,
                None => usize::from(key == "mem_banks_count"),
            }
        };
        let text = match parts.iter().map(String::as_str).collect::<Vec<_>>()[1..] {
            ["gpu_id"] => format!("{}\n", gpu.map_or(0, |(_, g)| g.gpu_id)),
            ["name"] => format!("{}\n", gpu.map_or("", |(_, g)| g.profile.name)),
            ["properties"] => match gpu {
                Some((i, g)) => g.profile.properties_text(FIRST_RENDER_MINOR + i as u32),
                None => "cpu_cores_count 16\nsimd_count 0\nmem_banks_count 1\ngfx_target_version 0\n\
                         drm_render_minor 0\n"
                    .to_string(),
            },
            // One heap per node: the GPU's VRAM, the host's memory. The VRAM is a public
            // frame buffer (1) where the CPU sees all of it (large BAR), else a private
            // one (2), as kfd_crat.c sets it.
            ["mem_banks", b, "properties"] if b.parse::<usize>().is_ok_and(|b| b < counts("mem_banks_count")) => {
                match gpu {
                    Some((_, g)) => format!(
                        "heap_type {}\nsize_in_bytes {}\nflags 0\nwidth 2048\nmem_clk_max 1250\n",
                        if g.profile.large_bar { 1 } else { 2 },
                        g.profile.vram_size
                    ),
                    None => "heap_type 0\nsize_in_bytes 17179869184\nflags 0\nwidth 64\nmem_clk_max 3200\n".to_string(),
                }
            }
            // The GPU's PCIe link to the CPU node.
            ["io_links", l, "properties"] if l.parse::<usize>().is_ok_and(|l| l < counts("io_links_count")) => format!(
                "type 2\nversion_major 0\nversion_minor 0\nnode_from {node}\nnode_to 0\nweight 20\n\
                 min_latency 0\nmax_latency 0\nmin_bandwidth 312\nmax_bandwidth 64000\n\
                 recommended_transfer_size 0\nflags 1\n"
            ),
            // Caches as many as the properties count, each a 16 KiB L1 data cache of the GPU
            // (type 9: HSA_CACHE_TYPE_DATA | HSA_CACHE_TYPE_HSACU, as KFD lists a GPU's caches).
            ["caches", c, "properties"] if c.parse::<usize>().is_ok_and(|c| c < counts("caches_count")) => format!(
                "processor_id_low {}\nlevel 1\nsize 16\ncache_line_size 128\ncache_lines_per_tag 1\n\
                 association 4\nlatency 1\ntype 9\nsibling_map 1\n",
                gpu.map_or(0, |(_, g)| g.profile.prop("simd_id_base").unwrap_or(0))
            ),
            _ => return missing(),
        };
        Some(Ok(text.into_bytes()))
    }

    /// The entries of a node's sub-directory (`mem_banks`, `caches`, `io_links` and
    /// their numbered entries), or `None` if `path` is not one.
    pub(crate) fn virtual_dir(&self, path: &Path) -> Option<Vec<String>> {
        let d = self.driver.lock();
        let rel = path.strip_prefix(NODES).ok()?;
        let parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
        let node: usize = parts.first()?.parse().ok()?;
        let first_gpu = d.cpu_node as usize;
        let gpu = node.checked_sub(first_gpu).and_then(|i| d.gpus.get(i));
        if !(d.cpu_node && node == 0) && gpu.is_none() {
            return None;
        }
        let count = |key: &str| -> usize {
            match gpu {
                Some(g) => g.profile.prop(key).unwrap_or(0) as usize,
                None => usize::from(key == "mem_banks_count"),
            }
        };
        let key = |dir: &str| match dir {
            "mem_banks" => Some("mem_banks_count"),
            "caches" => Some("caches_count"),
            "io_links" => Some("io_links_count"),
            _ => None,
        };
        match parts.iter().map(String::as_str).collect::<Vec<_>>()[1..] {
            [] => Some(
                ["gpu_id", "properties", "name", "mem_banks", "caches", "io_links"]
                    .map(String::from)
                    .to_vec(),
            ),
            [dir] => key(dir).map(|k| (0..count(k)).map(|i| i.to_string()).collect()),
            [dir, i] if key(dir).is_some_and(|k| i.parse::<usize>().is_ok_and(|i| i < count(k))) => {
                Some(vec!["properties".into()])
            }
            _ => None,
        }
    }

    pub(crate) fn is_virtual(path: &Path) -> bool {
        path.starts_with("/dev") || path.starts_with("/sys")
    }

    /// The character device (major, minor) that device node `path` is: a render node
    /// of one of the mock's GPUs (DRM's major 226). For a client's `stat`.
    pub fn device_number(&self, path: &Path) -> Option<(u32, u32)> {
        let i = Self::render_index(path).filter(|&i| i < self.driver.lock().gpus.len())?;
        Some((crate::driver::drm::DRM_MAJOR, FIRST_RENDER_MINOR + i as u32))
    }

    /// [`MockSys::device_number`] of the node mock descriptor `fd` is open on.
    pub fn fd_device_number(&self, fd: amd_kfd::sys::Fd) -> Option<(u32, u32)> {
        match self.driver.lock().fds.get(&fd.0) {
            Some(&crate::driver::FdKind::Render(g)) => {
                Some((crate::driver::drm::DRM_MAJOR, FIRST_RENDER_MINOR + g as u32))
            }
            _ => None,
        }
    }

    pub(crate) fn render_index(path: &Path) -> Option<usize> {
        let name = path.strip_prefix("/dev/dri").ok()?.to_str()?;
        let minor: u32 = name.strip_prefix("renderD")?.parse().ok()?;
        minor.checked_sub(FIRST_RENDER_MINOR).map(|i| i as usize)
    }
}
