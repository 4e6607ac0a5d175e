//! [`AmGpu`]: a booted GPU that owns its device, for holders that cannot keep the
//! [`AmDevice`] and the [`Booted`] blocks that borrow it in separate places (the
//! runtime's transport keeps one per GPU for as long as the GPU is open).
//!
//! The one self-reference lives here: the blocks borrow the device inside an `Arc`
//! held by the same value. The borrow never leaves: [`AmGpu::with`] lends the blocks
//! to a closure that must work for any lifetime, so nothing it is given can outlive
//! the call, and nothing it did not get from them can be stored into them.

#![allow(unsafe_code)]

use std::sync::Arc;

use crate::device::{BootOptions, Booted};
use crate::error::Result;
use crate::ip::AmDevice;

/// A booted GPU and its device, in one value. Dropping it runs tinygrad 0.10.1's
/// `AMDev.fini` (SDMA, GFX, clocks; errors ignored), so the next boot is partial.
pub struct AmGpu {
    // Declared before `dev`, so dropped before it: the blocks borrow the device.
    booted: Booted<'static>,
    dev: Arc<AmDevice>,
}

impl std::fmt::Debug for AmGpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AmGpu")
            .field("device", &self.dev.pci().address().to_string())
            .field("kind", &self.booted.kind)
            .finish()
    }
}

impl AmGpu {
    /// Boots `dev` ([`AmDevice::boot`]) and keeps it with its blocks.
    pub fn boot(dev: AmDevice, opts: &BootOptions) -> Result<Self> {
        let dev = Arc::new(dev);
        // SAFETY: the reference points into the `Arc`'s allocation, which does not
        // move and lives as long as `AmGpu::dev` holds it; `booted` (the only holder
        // of the reference) is dropped before `dev` (field order) and never moved out
        // of `self`; the `'static` lifetime is never handed out: `with` lends the
        // blocks under a lifetime chosen by the borrow of `self`.
        let r: &'static AmDevice = unsafe { &*Arc::as_ptr(&dev) };
        let booted = r.boot(opts)?;
        Ok(AmGpu { booted, dev })
    }

    /// The device (shared: BAR access needs no lock on the blocks).
    pub fn device(&self) -> &Arc<AmDevice> {
        &self.dev
    }

    /// Which boot ran.
    pub fn kind(&self) -> crate::device::BootKind {
        self.booted.kind
    }

    /// Lends the blocks to `f`.
    pub fn with<R>(&mut self, f: impl for<'x> FnOnce(&mut Booted<'x>) -> R) -> R {
        let p: *mut Booted<'static> = &mut self.booted;
        // SAFETY: only the lifetime changes (same type, same layout). `f` works for
        // every `'x`, so it can neither keep a reference it finds in the blocks past
        // the call (its result cannot name `'x`) nor store into them a reference to
        // anything but what they already borrow (it has no other `&'x AmDevice`); the
        // device outlives the call because `self` is borrowed for it.
        let b: &mut Booted<'_> = unsafe { &mut *p.cast::<Booted<'_>>() };
        f(b)
    }
}

impl Drop for AmGpu {
    fn drop(&mut self) {
        let _ = self.with(|b| b.fini());
    }
}

// The runtime keeps an `AmGpu` behind a lock shared between threads.
const _: fn() = || {
    fn send<T: Send>() {}
    send::<AmGpu>();
};
