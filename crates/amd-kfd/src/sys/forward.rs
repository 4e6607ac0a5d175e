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

impl Sys for ForwardSys {
    fn open(&self, path: &Path, mode: OpenMode) -> SysResult<Fd> {
        self.call("open", |s| match &self.open {
            Some(hook) => hook(s, path, mode),
            None => s.open(path, mode),
        })
    }
    fn close(&self, fd: Fd) -> SysResult<()> {
        self.call("close", |s| s.close(fd))
    }
    unsafe fn ioctl(&self, fd: Fd, request: u64, name: &str, arg: &mut [u8]) -> SysResult<i32> {
        // SAFETY: forwarded unchanged: the caller's contract.
        self.call("ioctl", |s| unsafe { s.ioctl(fd, request, name, arg) })
    }
    unsafe fn ioctl_value(&self, fd: Fd, request: u64, name: &str, value: u64) -> SysResult<i32> {
        // SAFETY: forwarded unchanged: the caller's contract.
        self.call("ioctl", |s| unsafe { s.ioctl_value(fd, request, name, value) })
    }
    unsafe fn mmap(
        &self,
        addr: usize,
        len: usize,
        prot: Prot,
        flags: MapFlags,
        fd: Option<Fd>,
        offset: u64,
    ) -> SysResult<usize> {
        // SAFETY: forwarded unchanged: the caller's contract.
        self.call("mmap", |s| unsafe { s.mmap(addr, len, prot, flags, fd, offset) })
    }
    unsafe fn munmap(&self, addr: usize, len: usize) -> SysResult<()> {
        // SAFETY: forwarded unchanged: the caller's contract.
        self.call("munmap", |s| unsafe { s.munmap(addr, len) })
    }
    fn pread(&self, fd: Fd, buf: &mut [u8], offset: u64) -> SysResult<usize> {
        self.call("pread", |s| match &self.pread {
            Some(hook) => hook(s, fd, buf, offset),
            None => s.pread(fd, buf, offset),
        })
    }
    fn pwrite(&self, fd: Fd, buf: &[u8], offset: u64) -> SysResult<usize> {
        self.call("pwrite", |s| s.pwrite(fd, buf, offset))
    }
    fn mmio(&self, addr: usize) -> Option<Arc<dyn Mmio>> {
        self.live(|s| s.mmio(addr)).flatten()
    }
    fn read_file(&self, path: &Path) -> SysResult<Vec<u8>> {
        self.call("read", |s| s.read_file(path))
    }
    fn write_file(&self, path: &Path, data: &[u8]) -> SysResult<()> {
        self.call("write", |s| s.write_file(path, data))
    }
    fn list_dir(&self, path: &Path) -> SysResult<Vec<String>> {
        self.call("readdir", |s| s.list_dir(path))
    }
    fn exists(&self, path: &Path) -> bool {
        self.live(|s| s.exists(path)).unwrap_or(false)
    }
    fn readlink(&self, path: &Path) -> SysResult<PathBuf> {
        self.call("readlink", |s| s.readlink(path))
    }
    fn eventfd(&self, init: u32) -> SysResult<Fd> {
        self.call("eventfd", |s| s.eventfd(init))
    }
    fn read(&self, fd: Fd, buf: &mut [u8]) -> SysResult<usize> {
        self.call("read", |s| s.read(fd, buf))
    }
    fn write(&self, fd: Fd, buf: &[u8]) -> SysResult<usize> {
        self.call("write", |s| s.write(fd, buf))
    }
    fn poll(&self, fds: &mut [PollFd], timeout_ms: i32) -> SysResult<usize> {
        self.call("poll", |s| s.poll(fds, timeout_ms))
    }
    fn doorbell_written(&self, addr: usize) {
        self.live(|s| match &self.doorbell_written {
            Some(hook) => hook(s, addr),
            None => s.doorbell_written(addr),
        });
    }
    fn stop_reasons(&self, gpu_id: u32) -> Vec<String> {
        self.live(|s| s.stop_reasons(gpu_id)).unwrap_or_default()
    }
    fn pci_stop_reasons(&self, address: &str) -> Vec<String> {
        self.live(|s| s.pci_stop_reasons(address)).unwrap_or_default()
    }
}
