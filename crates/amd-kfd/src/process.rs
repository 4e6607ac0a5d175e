//! What the handles of one process share: the process's `/dev/kfd` and its GPUs
//! ([`ProcessShared`]), and per GPU the render node and doorbell page
//! ([`DeviceShared`]) that its memory, queues and events hold alive.

use std::sync::Arc;

use parking_lot::Mutex;

use zerocopy::{FromBytes, IntoBytes};

use crate::abi::{Ioctl, NoUserPointers};
use crate::sys::{Fd, Sys, SysResult};
use crate::topology::GpuNode;
use crate::{KfdError, raw};

/// The process's `/dev/kfd`, its visible GPUs, and the errors of releases made in
/// `Drop` (reported by [`crate::Kfd::take_deferred_errors`]).
#[derive(Debug)]
pub(crate) struct ProcessShared {
    pub(crate) sys: Arc<dyn Sys>,
    pub(crate) kfd_fd: Fd,
    pub(crate) gpus: Vec<GpuNode>,
    pub(crate) deferred: Mutex<Vec<KfdError>>,
}

impl ProcessShared {
    /// Records an error that happened where it could not be returned (in `Drop`).
    pub(crate) fn defer(&self, e: KfdError) {
        self.deferred.lock().push(e);
    }

    /// [`raw::ioctl`] on the process's `/dev/kfd`.
    pub(crate) fn ioctl<T: IntoBytes + FromBytes + NoUserPointers>(
        &self,
        req: Ioctl<T>,
        arg: &mut T,
    ) -> SysResult<i32> {
        raw::ioctl(self.sys.as_ref(), self.kfd_fd, req, arg)
    }
}

impl Drop for ProcessShared {
    fn drop(&mut self) {
        // Nothing is left to report to: the last handle is gone.
        let _ = self.sys.close(self.kfd_fd);
    }
}

impl std::fmt::Debug for dyn Sys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("dyn Sys")
    }
}

/// What memory, queues and events of one GPU share: the render node (and with it the
/// GPU VM), the doorbell page, and the process handle.
#[derive(Debug)]
pub(crate) struct DeviceShared {
    pub(crate) process: Arc<ProcessShared>,
    pub(crate) gpu_id: u32,
    pub(crate) drm_fd: Fd,
    pub(crate) doorbells: Mutex<Option<Doorbells>>,
}

/// The two doorbell pages of a GPU, mapped from `/dev/kfd` once.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Doorbells {
    pub(crate) base_offset: u64,
    pub(crate) addr: usize,
}

/// Bytes of the doorbell mapping (two pages).
pub const DOORBELL_MAP_SIZE: usize = 0x2000;

impl Drop for DeviceShared {
    fn drop(&mut self) {
        let sys = self.process.sys.as_ref();
        if let Some(db) = self.doorbells.get_mut().take()
            && let Err(e) = raw::unmap(sys, db.addr, DOORBELL_MAP_SIZE)
        {
            self.process.defer(e.into());
        }
        // Closing the render node releases the GPU VM; all memory is gone by now (each
        // buffer holds this struct alive).
        if let Err(e) = sys.close(self.drm_fd) {
            self.process.defer(e.into());
        }
    }
}
