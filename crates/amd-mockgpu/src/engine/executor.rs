//! The kernel executor a dispatch hands its registers to, and the memory it gives
//! the executor: [`GpuMemory`], the checked address space behind `amd_isa::Memory`.

use std::cell::RefCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use parking_lot::{Mutex, RwLock};

use crate::mem::word::Word;
use crate::mem::{AddressSpace, Held, MemoryFault, Vm};

/// Everything a DISPATCH_DIRECT hands to the kernel executor: which GPU and queue,
/// and the dispatch's registers read from the queue's SH registers as the hardware
/// would.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DispatchInfo {
    /// GPU index in the mock: the KFD GPUs first, then the PCI GPUs (PCI GPU `n` is
    /// `n` + the number of KFD GPUs).
    pub gpu: usize,
    /// Queue id.
    pub queue: u32,
    /// The GPU's target: which instruction set its kernels are in.
    pub target: amd_packets::GfxTarget,
    /// The dispatch's registers (entry, RSRC1..3, user data, sizes, scratch).
    pub regs: amd_isa::Dispatch,
    /// The mock's sanitizer is on ([`MockConfig::sanitize`]): the executor checks
    /// what it can (amd-isa's interpreters: every LDS access within the workgroup's
    /// allocation, [`amd_isa::rdna3::Interpreter::check_lds`]; every private access
    /// within each lane's share of COMPUTE_TMPRING_SIZE,
    /// [`amd_isa::rdna3::Interpreter::check_private`]).
    ///
    /// [`MockConfig::sanitize`]: crate::MockConfig::sanitize
    pub sanitize: bool,
}

/// Why a kernel could not run to completion.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KernelError {
    /// A memory access outside the GPU's mappings.
    #[error("memory fault at {:#x}", .0.va)]
    Fault(MemoryFault),
    /// The interpreter stopped: a memory fault with the access and the instruction,
    /// an instruction it refuses, a runaway.
    #[error(transparent)]
    Exec(#[from] amd_isa::ExecError),
    /// The kernel needs something the executor does not do.
    #[error("{0}")]
    Unsupported(String),
    /// The dispatch was stopped from outside: its queue was destroyed or the mock
    /// dropped ([`GpuMemory::checkpoint`] returns it).
    #[error("the dispatch was stopped: its queue was destroyed")]
    Stopped,
}

/// A GPU's memory as threads share it (see [`GpuMemory::share`]).
#[derive(Clone, Copy)]
pub struct SharedMemory<'a> {
    space: &'a RwLock<AddressSpace>,
    vm: &'a Vm,
    stop: &'a AtomicBool,
}

/// Checked access to a GPU's memory, for kernel executors.
///
/// It holds the shared lock on the GPUs' address space, so mappings cannot change
/// (and memory cannot be unmapped) under an access. An executor calls
/// [`GpuMemory::checkpoint`] every few thousand instructions: that lets a waiting
/// `munmap` or (un)map ioctl in, and ends the dispatch when its queue is destroyed.
pub struct GpuMemory<'a> {
    space: RefCell<Held<'a>>,
    vm: &'a Vm,
    stop: &'a AtomicBool,
    /// What other threads open views from (see [`GpuMemory::share`]).
    shared: SharedMemory<'a>,
}

impl<'a> GpuMemory<'a> {
    pub(crate) fn new(space: &'a RwLock<AddressSpace>, vm: &'a Vm, stop: &'a AtomicBool) -> Self {
        GpuMemory {
            space: RefCell::new(Held::new(space.read())),
            vm,
            stop,
            shared: SharedMemory { space, vm, stop },
        }
    }

    /// What another thread needs to open its own view of the same memory
    /// ([`GpuMemory::open`]): views hold a lock guard and stay on their thread.
    pub fn share(&self) -> SharedMemory<'a> {
        self.shared
    }

    /// A view of shared memory for this thread. (A writer of the address space may be
    /// waiting: the sharing thread lets it in at its checkpoints, and waits for its
    /// helpers only inside [`GpuMemory::unlocked`].)
    pub fn open(shared: &SharedMemory<'a>) -> Self {
        GpuMemory {
            space: RefCell::new(Held::new(shared.space.read())),
            vm: shared.vm,
            stop: shared.stop,
            shared: *shared,
        }
    }

    /// Runs `f` with this view's lock released (to wait for threads that hold views of
    /// their own). Memory must not be touched through this view meanwhile.
    pub fn unlocked<T>(&self, f: impl FnOnce() -> T) -> T {
        match self.space.try_borrow_mut() {
            Ok(mut held) => held.unlocked(f),
            Err(_) => f(),
        }
    }

    /// Reads bytes at `addr`.
    pub fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), MemoryFault> {
        self.space.borrow().read(self.vm, addr, out)
    }
    /// Writes bytes at `addr`.
    pub fn write(&self, addr: u64, data: &[u8]) -> Result<(), MemoryFault> {
        self.space.borrow().write(self.vm, addr, data)
    }
    /// [`GpuMemory::read`] for a read the caller repeats in pieces where it fails: a
    /// PCI GPU does not latch its failure.
    #[inline]
    pub fn read_ahead(&self, addr: u64, out: &mut [u8]) -> Result<(), MemoryFault> {
        self.space.borrow().read_as(self.vm, addr, out, true)
    }
    /// [`GpuMemory::write`] for a write the caller repeats in pieces where it fails.
    pub fn write_ahead(&self, addr: u64, data: &[u8]) -> Result<(), MemoryFault> {
        self.space.borrow().write_as(self.vm, addr, data, true)
    }
    /// Loads a dword (a kernel's load: the sanitizer checks that something wrote it).
    pub fn load_u32(&self, addr: u64) -> Result<u32, MemoryFault> {
        let held = self.space.borrow();
        if let Vm::Kfd(g) = *self.vm {
            held.space().gpu_used(g, addr, 4, false)?;
        }
        held.space().vm_load::<u32>(self.vm, addr)
    }
    /// Stores a dword.
    pub fn store_u32(&self, addr: u64, v: u32) -> Result<(), MemoryFault> {
        self.space.borrow().space().vm_store::<u32>(self.vm, addr, v)
    }
    /// Atomically replaces the dword at `addr` with `f(old)`, returning `old` (or
    /// `f`'s error, leaving memory as it was). Atomic against other engines and the
    /// host where aligned.
    pub fn atomic_u32<E>(
        &self,
        addr: u64,
        f: impl FnMut(u32) -> Result<u32, E>,
    ) -> Result<Result<u32, E>, MemoryFault> {
        self.rmw(addr, f)
    }
    /// As [`GpuMemory::atomic_u32`], for a qword.
    pub fn atomic_u64<E>(
        &self,
        addr: u64,
        f: impl FnMut(u64) -> Result<u64, E>,
    ) -> Result<Result<u64, E>, MemoryFault> {
        self.rmw(addr, f)
    }

    /// A kernel's atomic: on a KFD GPU, the sanitizer checks that something wrote the
    /// old value.
    fn rmw<W: Word, E>(&self, addr: u64, f: impl FnMut(W) -> Result<W, E>) -> Result<Result<W, E>, MemoryFault> {
        let held = self.space.borrow();
        match *self.vm {
            Vm::Kfd(g) => held.space().gpu_rmw_as(g, addr, f, true),
            ref vm => held.space().vm_rmw(vm, addr, f),
        }
    }

    /// Ends a slice of the dispatch: lets a waiting writer of the address space (an
    /// unmap) in, and returns [`KernelError::Stopped`] when the queue was destroyed or
    /// the mock is being dropped.
    pub fn checkpoint(&self) -> Result<(), KernelError> {
        // Acquire: pairs with the Release store of DESTROY_QUEUE and of the drop.
        if self.stop.load(Ordering::Acquire) {
            return Err(KernelError::Stopped);
        }
        // No access is in progress here (accesses do not call back), so the borrow
        // is free; were it not, skipping one yield point is harmless.
        if let Ok(mut held) = self.space.try_borrow_mut() {
            held.bump();
        }
        Ok(())
    }
}

impl amd_isa::Memory for GpuMemory<'_> {
    fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), MemoryFault> {
        GpuMemory::read(self, addr, out)
    }
    fn write(&self, addr: u64, data: &[u8]) -> Result<(), MemoryFault> {
        GpuMemory::write(self, addr, data)
    }
    fn read_ahead(&self, addr: u64, out: &mut [u8]) -> Result<(), MemoryFault> {
        GpuMemory::read_ahead(self, addr, out)
    }
    fn prefetch(&self, addr: u64, write: bool) {
        self.space.borrow().prefetch(self.vm, addr, write);
    }
    fn write_ahead(&self, addr: u64, data: &[u8]) -> Result<(), MemoryFault> {
        GpuMemory::write_ahead(self, addr, data)
    }
    fn atomic_u32(&self, addr: u64, f: &mut dyn FnMut(u32) -> Option<u32>) -> Result<Option<u32>, MemoryFault> {
        GpuMemory::atomic_u32(self, addr, |v| f(v).ok_or(())).map(Result::ok)
    }
    fn atomic_u64(&self, addr: u64, f: &mut dyn FnMut(u64) -> Option<u64>) -> Result<Option<u64>, MemoryFault> {
        GpuMemory::atomic_u64(self, addr, |v| f(v).ok_or(())).map(Result::ok)
    }
    fn checkpoint(&self) -> Result<(), amd_isa::Stopped> {
        GpuMemory::checkpoint(self).map_err(|_| amd_isa::Stopped)
    }
    fn share(&self) -> Option<&dyn amd_isa::SharedMemory> {
        Some(&self.shared)
    }
    fn unlocked(&self, f: &mut dyn FnMut()) {
        GpuMemory::unlocked(self, f)
    }
}

impl amd_isa::SharedMemory for SharedMemory<'_> {
    fn open(&self) -> Box<dyn amd_isa::Memory + '_> {
        Box::new(GpuMemory::open(self))
    }
}

/// amd-isa's interpreter, the mock's default kernel executor: a gfx12 GPU's kernels
/// run on [`amd_isa::rdna4::Interpreter`], a gfx9.4 GPU's on
/// [`amd_isa::cdna3::Interpreter`], the others' on [`amd_isa::rdna3::Interpreter`]
/// (whose settings and counters all three use).
pub type Rdna3Executor = amd_isa::rdna3::Interpreter;

impl KernelExecutor for Rdna3Executor {
    fn dispatch(&mut self, mem: &GpuMemory<'_>, d: &DispatchInfo) -> Result<(), KernelError> {
        use amd_packets::GfxTarget;
        // The same settings and counters, and the sanitizer's LDS and private-memory
        // checks where it is on.
        let mut interp = self.clone();
        interp.check_lds |= d.sanitize;
        interp.check_private |= d.sanitize;
        match d.target {
            GfxTarget::Gfx12 => amd_isa::rdna4::Interpreter(interp).dispatch(mem, &d.regs),
            GfxTarget::Gfx94 => amd_isa::cdna3::Interpreter(interp).dispatch(mem, &d.regs),
            _ => interp.dispatch(mem, &d.regs),
        }
        .map_err(KernelError::Exec)
    }

    fn fork(&self) -> Option<Box<dyn KernelExecutor>> {
        // The copy adds to the same counters.
        Some(Box::new(self.clone()))
    }
}

/// Runs the kernels that DISPATCH_DIRECT launches. The mock records every dispatch
/// whatever the executor ([`crate::MockSys::dispatches`]); the default executor does
/// nothing more.
///
/// The engine calls it with the driver lock released: a long dispatch holds up
/// neither ioctls nor other GPUs. An executor should call [`GpuMemory::checkpoint`]
/// every few thousand instructions and return its error, so that destroying the queue
/// or dropping the mock ends the dispatch promptly.
pub trait KernelExecutor: Send {
    /// Runs one dispatch to completion.
    fn dispatch(&mut self, mem: &GpuMemory<'_>, d: &DispatchInfo) -> Result<(), KernelError>;

    /// An executor for another GPU, so that GPUs run kernels at the same time. `None`
    /// (the default) makes every GPU use this one, taking turns.
    fn fork(&self) -> Option<Box<dyn KernelExecutor>> {
        None
    }
}

/// An executor shared by the GPUs' engines.
pub(crate) type SharedExecutor = Arc<Mutex<Box<dyn KernelExecutor>>>;

/// The default executor: accepts every dispatch and runs nothing.
#[derive(Debug, Default)]
pub struct NoKernels;

impl KernelExecutor for NoKernels {
    fn dispatch(&mut self, _mem: &GpuMemory<'_>, _d: &DispatchInfo) -> Result<(), KernelError> {
        Ok(())
    }
    fn fork(&self) -> Option<Box<dyn KernelExecutor>> {
        Some(Box::new(NoKernels))
    }
}
