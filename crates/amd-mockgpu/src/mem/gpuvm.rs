//! The language of a PCI GPU's address translation: which hub, what access, where an
//! address lands and why a translation failed; and [`Translate`], through which the
//! memory layer asks the device's GMC (`crate::pci::gmc`, the page-table walker
//! behind its registers) to translate.

use std::fmt::Debug;
use std::sync::atomic::AtomicBool;

/// Which hub a translation goes through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hub {
    /// The GC hub (GFX, compute).
    Gc,
    /// The MM hub (SDMA, multimedia).
    Mm,
}

/// The kind of access a translation is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// A read: needs `AMDGPU_PTE_READABLE`.
    Read,
    /// A write: needs `AMDGPU_PTE_WRITEABLE`.
    Write,
    /// An instruction fetch: needs `AMDGPU_PTE_EXECUTABLE`.
    Exec,
}

/// Where a virtual address lands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// A byte offset in VRAM.
    Vram(u64),
    /// A system physical address (an `AMDGPU_PTE_SYSTEM` page) the caller resolves
    /// through the pagemap (`MockSys::pci_translate`).
    System(u64),
    /// A host address: a system page the mock's pagemap handed out.
    Host(usize),
}

/// Why a translation failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultKind {
    /// `CONTEXT0_CNTL.ENABLE_CONTEXT` is 0.
    ContextDisabled,
    /// `PAGE_TABLE_BASE_ADDR` lacks its valid bit.
    NoRoot,
    /// The address is outside `PAGE_TABLE_START_ADDR..=END_ADDR` (or the root's reach).
    OutOfRange,
    /// The entry at `level` is not valid.
    Invalid {
        /// `AMDGPU_VM_PDB2` (0) to `AMDGPU_VM_PTB` (3).
        level: u8,
    },
    /// The leaf denies the access.
    Permission,
    /// An entry could not be read (outside VRAM, or a table in system memory), or a
    /// VRAM leaf points past the end of VRAM.
    Walker,
}

/// A translation fault, as recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VmFault {
    /// The hub.
    pub hub: Hub,
    /// The virtual address.
    pub va: u64,
    /// The access.
    pub access: Access,
    /// Why.
    pub kind: FaultKind,
}

/// A GPU's address translation, as the memory layer needs it.
pub trait Translate: Debug + Send + Sync {
    /// Translates `va` for `access` through `hub`, latching a failure in the
    /// translator's fault registers, unless `stop` is set (read under the lock that
    /// the unbinding or reset setting it holds): then `Err(None)`, nothing latched.
    fn translate_unless(
        &self,
        hub: Hub,
        va: u64,
        access: Access,
        stop: Option<&AtomicBool>,
    ) -> Result<Target, Option<VmFault>> {
        self.translate_run_unless(hub, va, access, stop).map(|(t, _)| t)
    }

    /// [`Translate::translate_unless`], with the bytes from `va` to the end of the
    /// page or fragment the translation maps (at least to the end of `va`'s 4 KiB
    /// page): the same translation, shifted, holds for all of them.
    fn translate_run_unless(
        &self,
        hub: Hub,
        va: u64,
        access: Access,
        stop: Option<&AtomicBool>,
    ) -> Result<(Target, u64), Option<VmFault>>;

    /// [`Translate::translate_run_unless`] for an access its engine tries ahead and
    /// repeats in smaller pieces where it fails (a wave's whole span before each
    /// lane): a failure is not latched (`Err(None)`), since the repeat latches it where
    /// it lies. The default latches, as `translate_run_unless`.
    fn translate_run_ahead(
        &self,
        hub: Hub,
        va: u64,
        access: Access,
        stop: Option<&AtomicBool>,
    ) -> Result<(Target, u64), Option<VmFault>> {
        self.translate_run_unless(hub, va, access, stop)
    }
}
