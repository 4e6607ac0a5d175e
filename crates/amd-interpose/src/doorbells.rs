//! The doorbell watcher: a client stores a queue's write pointer into its doorbell
//! page with a plain store, as on hardware; nothing calls the mock. One thread reads
//! the watched pages and tells the mock which slots changed
//! ([`Sys::doorbell_written`]): each page every 20 µs while it changed in the last
//! 50 ms, every 250 µs while it changed in the last second, else every millisecond (the
//! first doorbell after a quiet spell waits up to that long).
//!
//! The page of a busy GPU is not read: its device thread reads every write pointer
//! before it sleeps ([`MockSys::waits_for_doorbells`]). While every GPU is busy the
//! thread sleeps until one of them is about to wait for a doorbell
//! ([`MockSys::wait_for_sleeping_gpu`]). On a 2-core machine a streaming copy loop ran
//! at 17 GB/s beside a spinning thread and at 11 GB/s once a third thread slept 20 µs
//! at a time beside them.

#![allow(unsafe_code)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use amd_kfd::sys::Sys;
use amd_mockgpu::MockSys;
use parking_lot::Mutex;

/// How long the watcher sleeps when no doorbell changed lately.
const POLL: Duration = Duration::from_micros(20);
/// How long it sleeps once none changed for [`IDLE_AFTER`] (the first doorbell after a
/// quiet spell waits up to this long).
const POLL_IDLE: Duration = Duration::from_micros(250);
/// Quiet time (no change in a page) after which the watcher polls it less often.
const IDLE_AFTER: Duration = Duration::from_millis(50);
/// How long it sleeps once none changed for [`QUIET_AFTER`].
const POLL_QUIET: Duration = Duration::from_millis(1);
/// Quiet time after which a page is polled least often.
const QUIET_AFTER: Duration = Duration::from_secs(1);

/// Longest sleep while every watched GPU is busy (a safety net: the mock wakes the
/// watcher when one of them is about to sleep).
const BUSY_WAIT: Duration = Duration::from_millis(5);

/// A watched page, the GPU it belongs to, and the values last seen in it.
struct Page {
    addr: usize,
    gpu: Option<usize>,
    seen: Vec<u64>,
    /// When a slot of the page last changed (or the page was mapped).
    last_change: Instant,
}

/// The watched pages and their thread.
#[derive(Default)]
pub struct Watcher {
    pages: Arc<Mutex<Vec<Page>>>,
    started: AtomicBool,
}

/// The 64-bit slots of the page at `addr`.
///
/// # Safety
/// `addr..addr + 8 * n` must be mapped and readable, and 8-aligned.
unsafe fn read_slots(addr: usize, n: usize, out: &mut Vec<u64>) {
    out.clear();
    for i in 0..n {
        // SAFETY: inside the mapped, aligned page (the caller's contract); the client
        // and the engines write it concurrently, so the read is volatile.
        out.push(unsafe { ((addr + i * 8) as *const u64).read_volatile() });
    }
}

impl Watcher {
    /// Watches the doorbell page at `addr` (`len` bytes, just mapped by the mock).
    pub fn watch(&self, mock: &Arc<MockSys>, addr: usize, len: usize) {
        let mut seen = Vec::new();
        // SAFETY: the mock just mapped this page for the client, page-aligned; it stays
        // mapped until `forget` takes it out of the list (munmap calls `forget` first,
        // under the same lock the watcher holds while it reads).
        unsafe { read_slots(addr, len / 8, &mut seen) };
        let gpu = (0..mock.kfd_gpu_count()).find(|&g| mock.doorbell_page(g).is_some_and(|(a, _)| a == addr));
        self.pages.lock().push(Page {
            addr,
            gpu,
            seen,
            last_change: Instant::now(),
        });
        if !self.started.swap(true, Ordering::AcqRel) {
            let (pages, mock) = (self.pages.clone(), mock.clone());
            let _ = std::thread::Builder::new()
                .name("amd-interpose doorbells".into())
                .spawn(move || crate::within(|| run(&pages, &mock)));
        }
    }

    /// Takes the value in the slot at `slot` as seen: a slot the mock just set for a
    /// new queue, which no client can have rung yet.
    pub fn resync(&self, slot: usize) {
        let mut pages = self.pages.lock();
        let Some(p) = pages
            .iter_mut()
            .find(|p| slot >= p.addr && slot < p.addr + p.seen.len() * 8 && slot % 8 == 0)
        else {
            return;
        };
        let i = (slot - p.addr) / 8;
        let mut now = Vec::new();
        // SAFETY: a listed page is mapped (see `Watcher::watch`), and the lock that
        // `forget` takes first is held.
        unsafe { read_slots(p.addr, p.seen.len(), &mut now) };
        if let (Some(s), Some(&v)) = (p.seen.get_mut(i), now.get(i)) {
            *s = v;
        }
    }

    /// Stops watching pages inside `[start, end)` (they are being unmapped).
    pub fn forget(&self, start: usize, end: usize) {
        self.pages.lock().retain(|p| p.addr < start || p.addr >= end);
    }
}

fn run(pages: &Mutex<Vec<Page>>, mock: &MockSys) -> ! {
    let (mut now, mut changed, mut busy) = (Vec::new(), Vec::new(), Vec::new());
    loop {
        changed.clear();
        busy.clear();
        let mut nap = None::<Duration>;
        {
            let mut pages = pages.lock();
            for p in pages.iter_mut() {
                // A busy GPU's device thread reads every write pointer before it
                // sleeps: its page needs no look until then.
                if let Some(g) = p.gpu
                    && !mock.waits_for_doorbells(g)
                {
                    busy.push(g);
                    continue;
                }
                // SAFETY: a listed page is mapped (see `Watcher::watch`).
                unsafe { read_slots(p.addr, p.seen.len(), &mut now) };
                for (i, (s, &v)) in p.seen.iter_mut().zip(&now).enumerate() {
                    if *s != v {
                        *s = v;
                        changed.push(p.addr + i * 8);
                        p.last_change = Instant::now();
                    }
                }
                let quiet = p.last_change.elapsed();
                let poll = if quiet < IDLE_AFTER {
                    POLL
                } else if quiet < QUIET_AFTER {
                    POLL_IDLE
                } else {
                    POLL_QUIET
                };
                nap = Some(nap.map_or(poll, |n| n.min(poll)));
            }
        }
        for &a in &changed {
            mock.doorbell_written(a);
        }
        if !changed.is_empty() {
            continue;
        }
        match nap {
            Some(d) => std::thread::sleep(d),
            // Every page belongs to a busy GPU (or there is none yet).
            None if busy.is_empty() => std::thread::sleep(POLL_QUIET),
            None => {
                mock.wait_for_sleeping_gpu(&busy, BUSY_WAIT);
            }
        }
    }
}
