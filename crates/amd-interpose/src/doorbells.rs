//! The doorbell watcher: a client stores a queue's write pointer into its doorbell
//! page with a plain store, as on hardware; nothing calls the mock. One thread reads
//! the watched pages every 20 µs (every 250 µs after 50 ms without a change) and tells
//! the mock which slots changed ([`Sys::doorbell_written`]).
//!
//! While every GPU it watches is busy the thread sleeps until one of them is about to
//! wait for a doorbell ([`MockSys::wait_for_sleeping_gpu`]): a busy GPU's device
//! thread reads every write pointer before it sleeps, and a watcher waking every
//! 20 µs beside a long copy or dispatch takes a third of the copy's speed on a
//! 2-core machine (the timer interrupts and switches land on its core).

#![allow(unsafe_code)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use amd_kfd::sys::Sys;
use amd_mockgpu::MockSys;
use parking_lot::Mutex;

/// How long the watcher sleeps when no doorbell changed lately.
const POLL: Duration = Duration::from_micros(20);
/// How long it sleeps once none changed for [`IDLE_AFTER`] (the first doorbell after a
/// quiet spell waits up to this long).
const POLL_IDLE: Duration = Duration::from_micros(250);
/// Quiet time after which the watcher polls less often.
const IDLE_AFTER: Duration = Duration::from_millis(50);

/// Longest sleep while every watched GPU is busy (a safety net: the mock wakes the
/// watcher when one of them is about to sleep).
const BUSY_WAIT: Duration = Duration::from_millis(5);

/// A watched page, the GPU it belongs to, and the values last seen in it.
struct Page {
    addr: usize,
    gpu: Option<usize>,
    seen: Vec<u64>,
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
        self.pages.lock().push(Page { addr, gpu, seen });
        if !self.started.swap(true, Ordering::AcqRel) {
            let (pages, mock) = (self.pages.clone(), mock.clone());
            let _ = std::thread::Builder::new()
                .name("amd-interpose doorbells".into())
                .spawn(move || crate::within(|| run(&pages, &mock)));
        }
    }

    /// Stops watching pages inside `[start, end)` (they are being unmapped).
    pub fn forget(&self, start: usize, end: usize) {
        self.pages.lock().retain(|p| p.addr < start || p.addr >= end);
    }
}

fn run(pages: &Mutex<Vec<Page>>, mock: &MockSys) -> ! {
    let (mut now, mut changed, mut gpus) = (Vec::new(), Vec::new(), Vec::new());
    let mut last_change = std::time::Instant::now();
    loop {
        changed.clear();
        {
            gpus.clear();
            // A page of no known GPU is always read.
            let pages_now = pages.lock();
            let all_known = pages_now.iter().all(|p| p.gpu.is_some());
            gpus.extend(pages_now.iter().filter_map(|p| p.gpu));
            drop(pages_now);
            if all_known && !gpus.is_empty() && !mock.wait_for_sleeping_gpu(&gpus, BUSY_WAIT) {
                continue;
            }
            let mut pages = pages.lock();
            for p in pages.iter_mut() {
                // SAFETY: a listed page is mapped (see `Watcher::watch`).
                unsafe { read_slots(p.addr, p.seen.len(), &mut now) };
                for (i, (s, &v)) in p.seen.iter_mut().zip(&now).enumerate() {
                    if *s != v {
                        *s = v;
                        changed.push(p.addr + i * 8);
                    }
                }
            }
        }
        for &a in &changed {
            mock.doorbell_written(a);
        }
        if changed.is_empty() {
            let quiet = last_change.elapsed() >= IDLE_AFTER;
            std::thread::sleep(if quiet { POLL_IDLE } else { POLL });
        } else {
            last_change = std::time::Instant::now();
        }
    }
}
