//! Persistent helper threads for the other workgroups of a dispatch.
//! Starting a thread costs 40 µs to almost a millisecond on the virtual machines the
//! project runs on, which a small dispatch cannot carry; the threads here are started
//! once (when a mock is made) and parked between jobs. (Long copies stay on their
//! engine's thread: split over two, they lost to a client's thread spinning on the
//! other core.)
//!
//! `scope` works like `std::thread::scope`: jobs may borrow from the caller, and the
//! scope returns only once every job it spawned has finished (also when the caller's
//! closure panics). A job never waits for a free thread: when none is parked, a new
//! one starts, so one engine's long job cannot hold up another's; and a job no thread
//! has taken yet when its caller joins it runs on the caller.

#![allow(unsafe_code)]

use std::marker::PhantomData;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use parking_lot::{Condvar, Mutex};

type Job = Box<dyn FnOnce() + Send + 'static>;

/// A parked thread and the job handed to it.
struct Worker {
    /// The job handed over, with its number (see `reclaim`).
    job: Mutex<Option<(u64, Job)>>,
    ready: Condvar,
}

/// Threads waiting for work.
static IDLE: Mutex<Vec<Arc<Worker>>> = Mutex::new(Vec::new());

fn worker_loop(me: Arc<Worker>) {
    IN_POOL.with(|p| p.set(true));
    loop {
        let job = {
            let mut slot = me.job.lock();
            loop {
                if let Some((_, j)) = slot.take() {
                    break j;
                }
                me.ready.wait(&mut slot);
            }
        };
        // The job catches its own panics (see `Scope::spawn`).
        job();
        IDLE.lock().push(me.clone());
    }
}

/// Hands `job` to a parked thread, or to a new one when none is parked; the thread
/// it went to (`None`: it ran here, no thread could be started).
fn run(id: u64, job: Job) -> Option<Arc<Worker>> {
    let parked = IDLE.lock().pop();
    let Some(w) = parked.or_else(start_worker) else {
        // No thread to be had: the job runs here (the caller then does both halves
        // of its work one after the other).
        job();
        return None;
    };
    *w.job.lock() = Some((id, job));
    w.ready.notify_one();
    Some(w)
}

/// A new thread waiting for its first job (`None` if the system refuses one).
fn start_worker() -> Option<Arc<Worker>> {
    let w = Arc::new(Worker {
        job: Mutex::new(None),
        ready: Condvar::new(),
    });
    let me = w.clone();
    std::thread::Builder::new()
        .name("mockgpu pool".into())
        .spawn(move || worker_loop(me))
        .ok()?;
    Some(w)
}

/// Starts threads until `n` are parked (fewer if the system refuses more), so that
/// the first jobs do not pay for starting them.
pub fn prestart(n: usize) {
    let mut idle = IDLE.lock();
    while idle.len() < n {
        let Some(w) = start_worker() else { break };
        idle.push(w);
    }
}

/// Runs the job handed to `w` here if its thread has not taken it yet (a parked
/// thread takes tens of microseconds to wake on a busy machine, more than a small
/// job lasts), and parks the thread again.
fn reclaim(w: &Arc<Worker>, id: u64) {
    let job = {
        let mut slot = w.job.lock();
        // Only this job: the thread may have finished it and taken another's since.
        if slot.as_ref().is_some_and(|(i, _)| *i == id) {
            slot.take()
        } else {
            None
        }
    };
    if let Some((_, job)) = job {
        IDLE.lock().push(w.clone());
        job();
    }
}

/// Jobs of one scope still running, and the condition their ends signal.
struct Pending {
    count: Mutex<usize>,
    done: Condvar,
}

/// A scope in which jobs borrowing `'env` data run on the pool.
pub(crate) struct Scope<'scope, 'env: 'scope> {
    pending: Arc<Pending>,
    /// The threads its jobs went to (for reclaiming the ones not started).
    workers: Mutex<Vec<(Arc<Worker>, u64)>>,
    _scope: PhantomData<&'scope mut &'scope ()>,
    _env: PhantomData<&'env mut &'env ()>,
}

/// A job's result, taken by [`Handle::join`].
pub(crate) struct Handle<'scope, T> {
    result: Arc<(Mutex<Option<std::thread::Result<T>>>, Condvar)>,
    worker: Option<(Arc<Worker>, u64)>,
    _scope: PhantomData<&'scope ()>,
}

impl<'scope, T> Handle<'scope, T> {
    /// Waits for the job; `Err` carries its panic.
    pub(crate) fn join(self) -> std::thread::Result<T> {
        if let Some((w, id)) = &self.worker {
            reclaim(w, *id);
        }
        let (m, cv) = &*self.result;
        let mut r = m.lock();
        loop {
            if let Some(r) = r.take() {
                return r;
            }
            cv.wait(&mut r);
        }
    }
}

impl<'scope, 'env> Scope<'scope, 'env> {
    /// Runs `f` on a pool thread.
    pub(crate) fn spawn<T: Send + 'scope>(&'scope self, f: impl FnOnce() -> T + Send + 'scope) -> Handle<'scope, T> {
        let result = Arc::new((Mutex::new(None), Condvar::new()));
        let (out, pending) = (result.clone(), self.pending.clone());
        *pending.count.lock() += 1;
        let caller = current_cpu();
        let job = move || {
            avoid_cpu(caller);
            let r = catch_unwind(AssertUnwindSafe(f));
            {
                let (m, cv) = &*out;
                *m.lock() = Some(r);
                cv.notify_all();
            }
            // The result may borrow 'scope data: if the handle is gone, it is dropped
            // here, before the count below lets the scope end.
            drop(out);
            let mut n = pending.count.lock();
            *n -= 1;
            if *n == 0 {
                pending.done.notify_all();
            }
        };
        let job: Box<dyn FnOnce() + Send + 'scope> = Box::new(job);
        // SAFETY: the job borrows data that lives for 'scope at least; `scope` does not
        // return, nor unwind past its frame, before the count of its unfinished jobs
        // is zero (`WaitAll` below), and a job decrements the count after its last use
        // of anything it borrows (its closure ran, its result was handed over or
        // dropped). So no borrowed data is used after 'scope ends,
        // though the box's type says 'static.
        let job: Job = unsafe { std::mem::transmute::<Box<dyn FnOnce() + Send + 'scope>, Job>(job) };
        static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let id = NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let worker = run(id, job).map(|w| (w, id));
        if let Some((w, id)) = &worker {
            self.workers.lock().push((w.clone(), *id));
        }
        Handle {
            result,
            worker,
            _scope: PhantomData,
        }
    }
}

/// The CPU this thread runs on, if the system says.
fn current_cpu() -> Option<usize> {
    // Miri has no `sched_getcpu`: the system does not say there.
    if cfg!(miri) {
        return None;
    }
    // SAFETY: sched_getcpu takes nothing and returns a CPU number or -1.
    let c = unsafe { libc::sched_getcpu() };
    usize::try_from(c).ok()
}

/// The CPUs a thread may run on, as `sched_getaffinity` says.
fn affinity() -> Option<libc::cpu_set_t> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set, filled by the call.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        (libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) == 0).then_some(set)
    }
}

thread_local! {
    /// A pool thread's CPUs as it started, before any job narrowed them.
    static STARTED_ON: Option<libc::cpu_set_t> = affinity();
    /// Whether this thread is one of the pool's (a job reclaimed by its caller runs
    /// on the caller's thread, whose CPUs are not the pool's to narrow).
    static IN_POOL: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Keeps this (pool) thread off CPU `cpu`, where the thread that handed it the job
/// runs: woken by that thread, the scheduler would otherwise often put it on the
/// waker's CPU, and the two halves of a job would share one core while another idles
/// or runs the client. Nothing changes when `cpu` is unknown or the only one allowed.
fn avoid_cpu(cpu: Option<usize>) {
    if !IN_POOL.with(|p| p.get()) {
        return;
    }
    let (Some(cpu), Some(base)) = (cpu, STARTED_ON.with(|s| *s)) else {
        return;
    };
    let size = std::mem::size_of::<libc::cpu_set_t>();
    // SAFETY: CPU_ISSET/CPU_SET touch bits below CPU_SETSIZE only (`i` is), inside
    // sets that are valid (from sched_getaffinity, or zeroed).
    unsafe {
        let mut allowed: libc::cpu_set_t = std::mem::zeroed();
        let mut any = false;
        for i in (0..libc::CPU_SETSIZE as usize).filter(|&i| i != cpu) {
            if libc::CPU_ISSET(i, &base) {
                libc::CPU_SET(i, &mut allowed);
                any = true;
            }
        }
        libc::sched_setaffinity(0, size, if any { &allowed } else { &base });
    }
}

/// Waits for every job of a scope when dropped (on return and on unwind alike),
/// running here those no thread has taken yet.
struct WaitAll<'a>(Arc<Pending>, &'a Mutex<Vec<(Arc<Worker>, u64)>>);

impl Drop for WaitAll<'_> {
    fn drop(&mut self) {
        let unjoined: Vec<_> = self.1.lock().drain(..).collect();
        for (w, id) in unjoined {
            reclaim(&w, id);
        }
        let mut n = self.0.count.lock();
        while *n > 0 {
            self.0.done.wait(&mut n);
        }
    }
}

/// Runs `f` with a scope whose jobs may borrow what outlives the call; returns once
/// all of them have finished.
pub(crate) fn scope<'env, R>(f: impl for<'scope> FnOnce(&'scope Scope<'scope, 'env>) -> R) -> R {
    let s = Scope {
        pending: Arc::new(Pending {
            count: Mutex::new(0),
            done: Condvar::new(),
        }),
        workers: Mutex::new(Vec::new()),
        _scope: PhantomData,
        _env: PhantomData,
    };
    let _wait = WaitAll(s.pending.clone(), &s.workers);
    f(&s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    #[test]
    fn jobs_borrow_and_finish_before_the_scope_returns() {
        let mut data = vec![0u64; 64];
        let (lo, hi) = data.split_at_mut(32);
        scope(|s| {
            let h = s.spawn(|| {
                std::thread::sleep(Duration::from_millis(20));
                hi.iter_mut().for_each(|x| *x = 2);
                7
            });
            lo.iter_mut().for_each(|x| *x = 1);
            assert_eq!(h.join().unwrap(), 7);
        });
        assert!(data[..32].iter().all(|&x| x == 1) && data[32..].iter().all(|&x| x == 2));
    }

    #[test]
    fn an_unjoined_job_is_waited_for_and_a_panic_is_its_result() {
        let done = AtomicUsize::new(0);
        scope(|s| {
            s.spawn(|| {
                std::thread::sleep(Duration::from_millis(20));
                done.fetch_add(1, Ordering::SeqCst);
            });
        });
        assert_eq!(done.load(Ordering::SeqCst), 1, "the scope waited");
        let r = scope(|s| s.spawn(|| -> u32 { panic!("in a job") }).join());
        assert!(r.is_err());
        // The pool survives a panicking job.
        assert_eq!(scope(|s| s.spawn(|| 5).join().unwrap()), 5);
    }

    #[test]
    fn a_job_run_by_its_caller_leaves_the_callers_cpus_alone() {
        let cpus = |s: libc::cpu_set_t| {
            (0..64)
                // SAFETY: bit tests below CPU_SETSIZE of a valid set.
                .filter(|&i| unsafe { libc::CPU_ISSET(i, &s) })
                .count()
        };
        let before = affinity().map(cpus);
        for _ in 0..50 {
            // Joined at once: often reclaimed and run here.
            assert_eq!(scope(|s| s.spawn(|| 1).join().unwrap()), 1);
        }
        let after = affinity().map(cpus);
        assert_eq!(before, after);
    }

    #[test]
    fn a_busy_thread_does_not_hold_up_another_job() {
        let release = Arc::new((Mutex::new(false), Condvar::new()));
        let r2 = release.clone();
        let slow = std::thread::spawn(move || {
            scope(|s| {
                s.spawn(|| {
                    let (m, cv) = &*r2;
                    let mut go = m.lock();
                    while !*go {
                        cv.wait(&mut go);
                    }
                });
            })
        });
        std::thread::sleep(Duration::from_millis(10));
        // Another scope's job runs while the first job still waits.
        assert_eq!(scope(|s| s.spawn(|| 3).join().unwrap()), 3);
        *release.0.lock() = true;
        release.1.notify_all();
        slow.join().unwrap();
    }
}
