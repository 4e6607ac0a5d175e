//! [`ForwardSys`]: a [`Sys`] that hands every call to another one, except the calls a
//! test or benchmark replaces (a faked `/proc/self/pagemap`, a timed doorbell hook, a
//! mock that may be dropped while handles still use it).

#![allow(unsafe_code)]

use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};

use nix::errno::Errno;

use super::{Fd, MapFlags, OpenMode, PollFd, Prot, Sys, SysError, SysResult};
use crate::mmio::Mmio;

type OpenHook = Box<dyn Fn(&dyn Sys, &Path, OpenMode) -> SysResult<Fd> + Send + Sync>;
type PreadHook = Box<dyn Fn(&dyn Sys, Fd, &mut [u8], u64) -> SysResult<usize> + Send + Sync>;
type DoorbellHook = Box<dyn Fn(&dyn Sys, usize) + Send + Sync>;

enum Inner {
    Strong(Arc<dyn Sys>),
    /// Calls fail with `ENODEV` once the target is gone.
    Weak(Weak<dyn Sys>),
}

/// Forwards every [`Sys`] call to an inner one; [`ForwardSys::on_open`],
/// [`ForwardSys::on_pread`] and [`ForwardSys::on_doorbell_written`] replace a call
/// (the hook gets the inner [`Sys`] to forward to itself).
pub struct ForwardSys {
    inner: Inner,
    open: Option<OpenHook>,
    pread: Option<PreadHook>,
    doorbell_written: Option<DoorbellHook>,
}

impl ForwardSys {
    /// Forwards to `inner`, keeping it alive.
    pub fn new(inner: Arc<dyn Sys>) -> Self {
        Self::with(Inner::Strong(inner))
    }

    /// Forwards to `inner` without keeping it alive: once it is dropped, calls fail
    /// with `ENODEV`, [`Sys::exists`] answers `false` and the other calls that cannot
    /// fail do nothing.
    pub fn weak(inner: Weak<dyn Sys>) -> Self {
        Self::with(Inner::Weak(inner))
    }

    fn with(inner: Inner) -> Self {
        ForwardSys {
            inner,
            open: None,
            pread: None,
            doorbell_written: None,
        }
    }

    /// Replaces [`Sys::open`].
    pub fn on_open(mut self, f: impl Fn(&dyn Sys, &Path, OpenMode) -> SysResult<Fd> + Send + Sync + 'static) -> Self {
        self.open = Some(Box::new(f));
        self
    }

    /// Replaces [`Sys::pread`].
    pub fn on_pread(
        mut self,
        f: impl Fn(&dyn Sys, Fd, &mut [u8], u64) -> SysResult<usize> + Send + Sync + 'static,
    ) -> Self {
        self.pread = Some(Box::new(f));
        self
    }

    /// Replaces [`Sys::doorbell_written`].
    pub fn on_doorbell_written(mut self, f: impl Fn(&dyn Sys, usize) + Send + Sync + 'static) -> Self {
        self.doorbell_written = Some(Box::new(f));
        self
    }

    /// Runs `f` on the inner [`Sys`], or fails call `op` with `ENODEV` if it is gone.
    fn call<R>(&self, op: &str, f: impl FnOnce(&dyn Sys) -> SysResult<R>) -> SysResult<R> {
        self.live(f).unwrap_or_else(|| Err(SysError::new(op, Errno::ENODEV)))
    }

    /// Runs `f` on the inner [`Sys`] if it is still there.
    fn live<R>(&self, f: impl FnOnce(&dyn Sys) -> R) -> Option<R> {
        match &self.inner {
            Inner::Strong(s) => Some(f(&**s)),
            Inner::Weak(w) => w.upgrade().map(|s| f(&*s)),
        }
    }
}

/// Methods of [`Sys`] handed to the inner one unchanged, failing with `ENODEV` (as
/// operation `$op`) once it is gone.
macro_rules! forward {
    ($($name:ident($($arg:ident: $t:ty),*) -> $r:ty, $op:literal;)*) => {$(
        fn $name(&self, $($arg: $t),*) -> SysResult<$r> {
            self.call($op, |s| s.$name($($arg),*))
        }
    )*};
}

/// The unsafe methods of [`Sys`] handed on as [`forward`] hands on the others.
macro_rules! forward_unsafe {
    ($($name:ident($($arg:ident: $t:ty),*) -> $r:ty, $op:literal;)*) => {$(
        unsafe fn $name(&self, $($arg: $t),*) -> SysResult<$r> {
            // SAFETY: forwarded unchanged: the caller's contract.
            self.call($op, |s| unsafe { s.$name($($arg),*) })
        }
    )*};
}

impl Sys for ForwardSys {
    fn open(&self, path: &Path, mode: OpenMode) -> SysResult<Fd> {
        self.call("open", |s| match &self.open {
            Some(hook) => hook(s, path, mode),
            None => s.open(path, mode),
        })
    }
    fn pread(&self, fd: Fd, buf: &mut [u8], offset: u64) -> SysResult<usize> {
        self.call("pread", |s| match &self.pread {
            Some(hook) => hook(s, fd, buf, offset),
            None => s.pread(fd, buf, offset),
        })
    }
    fn doorbell_written(&self, addr: usize) {
        self.live(|s| match &self.doorbell_written {
            Some(hook) => hook(s, addr),
            None => s.doorbell_written(addr),
        });
    }
    forward! {
        close(fd: Fd) -> (), "close";
        pwrite(fd: Fd, buf: &[u8], offset: u64) -> usize, "pwrite";
        read_file(path: &Path) -> Vec<u8>, "read";
        write_file(path: &Path, data: &[u8]) -> (), "write";
        list_dir(path: &Path) -> Vec<String>, "readdir";
        readlink(path: &Path) -> PathBuf, "readlink";
        eventfd(init: u32) -> Fd, "eventfd";
        read(fd: Fd, buf: &mut [u8]) -> usize, "read";
        write(fd: Fd, buf: &[u8]) -> usize, "write";
        poll(fds: &mut [PollFd], timeout_ms: i32) -> usize, "poll";
    }
    forward_unsafe! {
        ioctl(fd: Fd, request: u64, name: &str, arg: &mut [u8]) -> i32, "ioctl";
        ioctl_value(fd: Fd, request: u64, name: &str, value: u64) -> i32, "ioctl";
        mmap(addr: usize, len: usize, prot: Prot, flags: MapFlags, fd: Option<Fd>, offset: u64) -> usize, "mmap";
        munmap(addr: usize, len: usize) -> (), "munmap";
    }
    fn mmio(&self, addr: usize) -> Option<Arc<dyn Mmio>> {
        self.live(|s| s.mmio(addr)).flatten()
    }
    fn exists(&self, path: &Path) -> bool {
        self.live(|s| s.exists(path)).unwrap_or(false)
    }
    fn stop_reasons(&self, gpu_id: u32) -> Vec<String> {
        self.live(|s| s.stop_reasons(gpu_id)).unwrap_or_default()
    }
    fn pci_stop_reasons(&self, address: &str) -> Vec<String> {
        self.live(|s| s.pci_stop_reasons(address)).unwrap_or_default()
    }
}
