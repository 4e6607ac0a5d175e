//! Why an interpreter stopped: [`ExecError`], typed, with the instruction.

use crate::memory::{Access, MemoryFault};

/// Where in a kernel something happened: the instruction's address and its text as
/// `llvm-objdump` prints it, followed by its dwords (`s_trap 2 [bf900002]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct At {
    /// Address of the instruction.
    pub pc: u64,
    /// The instruction, disassembled, with its dwords.
    pub inst: String,
}

impl std::fmt::Display for At {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "at {:#x}: {}", self.pc, self.inst)
    }
}

/// Why a dispatch (or one instruction) could not run to completion.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ExecError {
    /// An instruction's access to memory faulted.
    #[error("memory fault at {:#x} ({access}) {at}", fault.va)]
    Fault {
        /// What the memory reported.
        fault: MemoryFault,
        /// The access that faulted.
        access: Access,
        /// The instruction that made it.
        at: At,
    },
    /// An LDS access outside the workgroup's allocation, stopped by the sanitizer
    /// ([`crate::rdna3::Interpreter::check_lds`]); without it the access reads 0 or
    /// writes nothing, as the hardware's range check does.
    #[error(
        "the sanitizer stopped an LDS {access} at byte {offset:#x}, outside the workgroup's {lds_bytes} bytes of LDS {at}"
    )]
    LdsOutside {
        /// The first byte of the access, from the start of the workgroup's LDS.
        offset: u64,
        /// Its kind and size.
        access: Access,
        /// The workgroup's LDS allocation (RSRC2.LDS_SIZE's blocks).
        lds_bytes: usize,
        /// The instruction that made it.
        at: At,
    },
    /// An access to a lane's private memory past what the dispatch gives each lane
    /// (COMPUTE_TMPRING_SIZE), stopped by the sanitizer
    /// ([`crate::rdna3::Interpreter::check_private`]).
    #[error(
        "the sanitizer stopped a private (scratch) {access} at byte {offset:#x} of a lane's private memory, past the {lane_bytes} bytes the dispatch gives each lane (COMPUTE_TMPRING_SIZE) {at}"
    )]
    PrivateOutside {
        /// The first byte of the access, from the start of the lane's private memory.
        offset: u64,
        /// Its kind and size.
        access: Access,
        /// What the dispatch gives each lane.
        lane_bytes: usize,
        /// The instruction that made it.
        at: At,
    },
    /// The instruction could not be fetched: its address is not mapped.
    #[error("memory fault at {:#x} fetching the instruction at {pc:#x}", fault.va)]
    Fetch {
        /// What the memory reported.
        fault: MemoryFault,
        /// Where the wave was.
        pc: u64,
    },
    /// The dwords at `pc` are no instruction this decoder knows (or are truncated).
    #[error("at {pc:#x} {words:08x?}: {reason}")]
    Decode {
        /// Where the wave was.
        pc: u64,
        /// The dwords read there (up to two).
        words: Vec<u32>,
        /// What the decoder said.
        reason: String,
    },
    /// The instruction is one the interpreter refuses (not implemented, or an operand
    /// or mode it does not do), with the reason.
    #[error("{at}: {reason}")]
    Unsupported {
        /// The instruction.
        at: At,
        /// Why it cannot run.
        reason: String,
    },
    /// A workgroup of more threads than a GPU runs (COMPUTE_NUM_THREAD_X/Y/Z).
    #[error("a workgroup of {}×{}×{} threads (COMPUTE_NUM_THREAD_X/Y/Z): more than {max}", block[0], block[1], block[2])]
    WorkgroupTooLarge {
        /// The workgroup's size.
        block: [u32; 3],
        /// The most threads a workgroup may have.
        max: usize,
    },
    /// A grid of more than 2^64 workgroups (COMPUTE_DIM_X/Y/Z).
    #[error("a grid of {}×{}×{} workgroups (COMPUTE_DIM_X/Y/Z): more than 2^64 in all", grid[0], grid[1], grid[2])]
    GridTooLarge {
        /// The grid, in workgroups.
        grid: [u32; 3],
    },
    /// The dispatch ran past its instruction budget (a runaway kernel).
    #[error("the dispatch ran past its instruction budget of {budget} instructions")]
    Budget {
        /// The budget.
        budget: u64,
    },
    /// The dispatch was stopped from outside ([`crate::Memory::checkpoint`]).
    #[error("the dispatch was stopped: its queue was destroyed")]
    Stopped,
    /// A thread running the dispatch's workgroups panicked (a bug of the interpreter).
    #[error("a dispatch thread panicked")]
    Panicked,
}

impl ExecError {
    /// The memory fault, where the error is one.
    pub fn fault(&self) -> Option<MemoryFault> {
        match self {
            ExecError::Fault { fault, .. } | ExecError::Fetch { fault, .. } => Some(*fault),
            _ => None,
        }
    }
}

/// Why one instruction stopped, before the dispatch names the instruction (boxed: every
/// instruction returns a `Result` with this as its error, and a pointer-sized error
/// keeps those results in registers on the common path, where the whole value would be
/// returned through memory and read back).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Trap(Box<TrapKind>);

/// What a [`Trap`] is: a memory access that faulted, or a refusal with its reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TrapKind {
    /// The memory reported a fault on this access.
    Fault(MemoryFault, Access),
    /// An LDS access outside the allocation (its offset, the access, the allocation's
    /// bytes), where the interpreter checks them.
    LdsOutside(u64, Access, usize),
    /// A private access past each lane's share (offset, access, the share's bytes).
    PrivateOutside(u64, Access, usize),
    /// The instruction's opcode (or a VOPD operation) is not implemented.
    Missing(String),
    /// The interpreter does not run this form or operand (the reason, for the user).
    Refused(String),
}

impl Trap {
    /// A memory fault on `access`.
    #[cold]
    pub(crate) fn fault(fault: MemoryFault, access: Access) -> Trap {
        Trap(Box::new(TrapKind::Fault(fault, access)))
    }
    /// An LDS access of `access` at `offset`, outside `lds_bytes` of LDS.
    #[cold]
    pub(crate) fn lds_outside(offset: u64, access: Access, lds_bytes: usize) -> Trap {
        Trap(Box::new(TrapKind::LdsOutside(offset, access, lds_bytes)))
    }
    /// A private access of `access` at `offset`, past each lane's `lane_bytes`.
    #[cold]
    pub(crate) fn private_outside(offset: u64, access: Access, lane_bytes: usize) -> Trap {
        Trap(Box::new(TrapKind::PrivateOutside(offset, access, lane_bytes)))
    }
    /// An opcode (or form) that is not implemented.
    #[cold]
    pub(crate) fn missing(why: String) -> Trap {
        Trap(Box::new(TrapKind::Missing(why)))
    }
    /// A form or operand the interpreter does not run, and why.
    #[cold]
    pub(crate) fn refused(why: String) -> Trap {
        Trap(Box::new(TrapKind::Refused(why)))
    }
    /// What it is.
    pub(crate) fn kind(&self) -> &TrapKind {
        &self.0
    }
    /// What it is, taken out.
    pub(crate) fn into_kind(self) -> TrapKind {
        *self.0
    }
    /// A fault of a load of `bytes`.
    pub(crate) fn load(bytes: usize) -> impl FnOnce(MemoryFault) -> Trap {
        move |f| {
            Trap::fault(
                f,
                Access {
                    kind: crate::AccessKind::Load,
                    bytes,
                },
            )
        }
    }
    /// A fault of a store of `bytes`.
    pub(crate) fn store(bytes: usize) -> impl FnOnce(MemoryFault) -> Trap {
        move |f| {
            Trap::fault(
                f,
                Access {
                    kind: crate::AccessKind::Store,
                    bytes,
                },
            )
        }
    }
    /// A fault of an atomic of `bytes`.
    pub(crate) fn atomic(bytes: usize) -> impl FnOnce(MemoryFault) -> Trap {
        move |f| {
            Trap::fault(
                f,
                Access {
                    kind: crate::AccessKind::Atomic,
                    bytes,
                },
            )
        }
    }
}

impl From<String> for Trap {
    #[cold]
    fn from(s: String) -> Self {
        Trap::refused(s)
    }
}

impl From<&str> for Trap {
    #[cold]
    fn from(s: &str) -> Self {
        Trap::refused(s.to_owned())
    }
}

impl std::fmt::Display for Trap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.kind() {
            TrapKind::Fault(fault, access) => write!(f, "memory fault at {:#x} ({access})", fault.va),
            TrapKind::LdsOutside(offset, access, bytes) => {
                write!(
                    f,
                    "LDS {access} at byte {offset:#x}, outside the workgroup's {bytes} bytes"
                )
            }
            TrapKind::PrivateOutside(offset, access, bytes) => {
                write!(
                    f,
                    "private {access} at byte {offset:#x}, past each lane's {bytes} bytes"
                )
            }
            TrapKind::Missing(s) | TrapKind::Refused(s) => f.write_str(s),
        }
    }
}
